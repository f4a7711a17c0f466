// Package events counts kernel events the way perf counts them: named,
// deterministic counters (allocations, atomic read-modify-writes on shared
// cache lines, crypto requests, dirents scanned, ...) that the A/B runner
// reports beside timings.
//
// Counting must not perturb what it measures. A Counters value is a shard
// owned by one goroutine (one simulated task): increments are plain,
// non-atomic adds to memory no other goroutine touches, so enabling counters
// adds no cache-line contention to a multi-goroutine benchmark. Shards are
// merged after the run. Disabled counting is a nil *Counters, and every
// method on a nil *Counters is a no-op: the cost of a disabled counter is one
// nil check.
//
// Events are registered by the package that counts them (Register, at package
// initialisation), so adding an event is a local change.
package events

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// MaxEvents bounds the number of registered events; it sizes every shard.
const MaxEvents = 192

// Event identifies a registered event; it indexes a shard.
type Event uint16

type info struct {
	name string
	help string
}

var (
	regMu  sync.Mutex
	reg    []info
	byName = map[string]Event{}
)

// Register declares an event named name (lower_snake_case, unique) with a
// one-line description, and returns its handle. It is meant to be called from
// package-level var declarations; registering a name twice or more than
// MaxEvents events panics, since either is a programming error found at
// start-up.
func Register(name, help string) Event {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := byName[name]; dup {
		panic("events: duplicate event " + name)
	}
	if len(reg) >= MaxEvents {
		panic("events: too many events; raise MaxEvents")
	}
	e := Event(len(reg))
	reg = append(reg, info{name, help})
	byName[name] = e
	return e
}

// Name returns the registered name of e.
func (e Event) Name() string {
	regMu.Lock()
	defer regMu.Unlock()
	if int(e) < len(reg) {
		return reg[e].name
	}
	return fmt.Sprintf("event%d", e)
}

// Help returns the description given to Register.
func (e Event) Help() string {
	regMu.Lock()
	defer regMu.Unlock()
	if int(e) < len(reg) {
		return reg[e].help
	}
	return ""
}

// Lookup returns the event registered under name.
func Lookup(name string) (Event, bool) {
	regMu.Lock()
	defer regMu.Unlock()
	e, ok := byName[name]
	return e, ok
}

// All returns every registered event, sorted by name.
func All() []Event {
	regMu.Lock()
	evs := make([]Event, len(reg))
	for i := range evs {
		evs[i] = Event(i)
	}
	names := make([]string, len(reg))
	for i, in := range reg {
		names[i] = in.name
	}
	regMu.Unlock()
	sort.Slice(evs, func(i, j int) bool { return names[evs[i]] < names[evs[j]] })
	return evs
}

// Counters is one shard of event counts, owned by a single goroutine. The
// zero value is ready to use. A nil *Counters counts nothing.
type Counters struct {
	v [MaxEvents]uint64
	// Padding keeps two shards allocated back to back from sharing a cache
	// line at their boundary.
	_ [64]byte
}

// New returns an empty shard.
func New() *Counters { return new(Counters) }

// Inc adds one to e. It is a no-op on a nil shard.
func (c *Counters) Inc(e Event) {
	if c != nil {
		c.v[e]++
	}
}

// Add adds n to e. It is a no-op on a nil shard.
func (c *Counters) Add(e Event, n uint64) {
	if c != nil {
		c.v[e] += n
	}
}

// Get returns the count of e (0 on a nil shard).
func (c *Counters) Get(e Event) uint64 {
	if c == nil {
		return 0
	}
	return c.v[e]
}

// Enabled reports whether c counts anything.
func (c *Counters) Enabled() bool { return c != nil }

// Merge adds every count of o into c. Call it only once the goroutine that
// owns o has stopped counting.
func (c *Counters) Merge(o *Counters) {
	if c == nil || o == nil {
		return
	}
	for i := range c.v {
		c.v[i] += o.v[i]
	}
}

// Reset zeroes every count.
func (c *Counters) Reset() {
	if c != nil {
		c.v = [MaxEvents]uint64{}
	}
}

// Clone returns a copy of c (nil for nil).
func (c *Counters) Clone() *Counters {
	if c == nil {
		return nil
	}
	d := *c
	return &d
}

// Sub returns the counts of c minus those of base: the events that happened
// between a snapshot (base) and now (c).
func (c *Counters) Sub(base *Counters) *Counters {
	d := c.Clone()
	if d == nil {
		d = New()
	}
	if base != nil {
		for i := range d.v {
			d.v[i] -= base.v[i]
		}
	}
	return d
}

// Map returns the non-zero counts by event name, for JSON output.
func (c *Counters) Map() map[string]uint64 {
	m := map[string]uint64{}
	if c == nil {
		return m
	}
	for _, e := range All() {
		if n := c.v[e]; n != 0 {
			m[e.Name()] = n
		}
	}
	return m
}

// String is the canonical one-line dump: "name=count" pairs for every
// non-zero event, sorted by name and separated by spaces; "(none)" when
// nothing was counted.
func (c *Counters) String() string {
	var b strings.Builder
	if c != nil {
		for _, e := range All() {
			if n := c.v[e]; n != 0 {
				if b.Len() > 0 {
					b.WriteByte(' ')
				}
				fmt.Fprintf(&b, "%s=%d", e.Name(), n)
			}
		}
	}
	if b.Len() == 0 {
		return "(none)"
	}
	return b.String()
}

// Shards hands out one shard per worker and merges them afterwards: the way
// a multi-goroutine benchmark counts without sharing cache lines.
type Shards struct {
	mu     sync.Mutex
	shards []*Counters
}

// Shard returns a new shard registered for merging. Each worker must call it
// once and keep the shard to itself.
func (s *Shards) Shard() *Counters {
	c := New()
	s.mu.Lock()
	s.shards = append(s.shards, c)
	s.mu.Unlock()
	return c
}

// Total merges every shard handed out so far into a new Counters. Call it
// after the workers have stopped.
func (s *Shards) Total() *Counters {
	t := New()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.shards {
		t.Merge(c)
	}
	return t
}
