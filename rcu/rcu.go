// Package rcu models read-copy-update (kernel/rcu/tree.c, include/linux/rcupdate.h)
// as the dcache uses it: read-side critical sections that cost the reader no
// shared-memory writes, synchronize_rcu that waits for every pre-existing
// reader, and call_rcu callbacks run after a grace period.
//
// The model is an epoch scheme. A Domain holds a grace-period sequence
// number. Each task owns a Reader, a cache line of its own holding 0 when the
// task is outside any read-side section, or the sequence number it saw when
// it entered one. Synchronize advances the sequence and waits until every
// reader is either quiescent or inside a section that began after the
// advance. Loads and stores are sequentially consistent Go atomics, so an
// updater that unpublishes an object before Synchronize is guaranteed that
// no reader it did not wait for can still find it: the same store/load
// argument the kernel's memory barriers make.
package rcu

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/vfslab/vfslab/events"
)

// RCU events.
var (
	EvReadLock    = events.Register("rcu_read_lock", "outermost rcu_read_lock sections entered")
	EvSynchronize = events.Register("synchronize_rcu", "synchronize_rcu calls (grace periods waited for)")
	EvCallRCU     = events.Register("call_rcu", "callbacks queued with call_rcu")
)

// Domain is one RCU flavour's global state: the readers and the callbacks
// waiting for a grace period. The zero value is ready to use.
type Domain struct {
	gp atomic.Uint64 // grace-period sequence; readers record it (starts at 1)

	mu      sync.Mutex
	readers map[*Reader]struct{}

	cbMu    sync.Mutex
	cbCond  sync.Cond
	pending *Head  // callbacks queued, newest first (an intrusive list)
	queued  uint64 // callbacks ever queued
	done    uint64 // callbacks ever run
	running bool   // a grace-period goroutine is working
}

// Default is the domain used when a caller does not make its own.
var Default = &Domain{}

func (d *Domain) seq() uint64 {
	// Sequence 0 is reserved for "quiescent"; start at 1.
	if s := d.gp.Load(); s != 0 {
		return s
	}
	d.gp.CompareAndSwap(0, 1)
	return d.gp.Load()
}

// Reader is a task's read-side state. It is owned by one goroutine; only its
// state word is read by others (Synchronize).
type Reader struct {
	_     [64]byte
	state atomic.Uint64
	nest  int32
	d     *Domain
	ev    *events.Counters
	_     [64]byte
}

// NewReader registers a reader with d. ev, if not nil, counts the reader's
// sections. Close the reader when the task ends.
func (d *Domain) NewReader(ev *events.Counters) *Reader {
	r := &Reader{d: d, ev: ev}
	d.mu.Lock()
	if d.readers == nil {
		d.readers = map[*Reader]struct{}{}
	}
	d.readers[r] = struct{}{}
	d.mu.Unlock()
	return r
}

// Close unregisters r. It must not be inside a read-side section.
func (r *Reader) Close() {
	if r.nest != 0 {
		panic("rcu: Close inside a read-side critical section")
	}
	r.d.mu.Lock()
	delete(r.d.readers, r)
	r.d.mu.Unlock()
}

// ReadLock enters a read-side critical section (rcu_read_lock). Sections
// nest; only the outermost one publishes anything.
func (r *Reader) ReadLock() {
	if r.nest == 0 {
		r.state.Store(r.d.seq())
		r.ev.Inc(EvReadLock)
	}
	r.nest++
}

// ReadUnlock leaves a read-side critical section (rcu_read_unlock).
// Unbalanced unlocks panic: the kernel would splat, and package kernel turns
// the panic into a BUG record.
func (r *Reader) ReadUnlock() {
	r.nest--
	switch {
	case r.nest == 0:
		r.state.Store(0)
	case r.nest < 0:
		r.nest = 0
		panic("rcu: rcu_read_unlock without rcu_read_lock")
	}
}

// Held reports whether r is inside a read-side section
// (rcu_read_lock_held).
func (r *Reader) Held() bool { return r.nest > 0 }

// Synchronize waits for a grace period (synchronize_rcu): every read-side
// section that began before the call has ended when it returns. Calling it
// from inside a section deadlocks, as in the kernel.
func (d *Domain) Synchronize() {
	target := d.gp.Add(1)
	if target == 1 { // first use: nobody can be reading sequence 0
		target = d.gp.Add(1)
	}
	d.mu.Lock()
	rs := make([]*Reader, 0, len(d.readers))
	for r := range d.readers {
		rs = append(rs, r)
	}
	d.mu.Unlock()
	for _, r := range rs {
		for {
			s := r.state.Load()
			if s == 0 || s >= target {
				break
			}
			runtime.Gosched()
		}
	}
}

// Head is struct rcu_head: the link and callback of one call_rcu, embedded
// in the object it frees, so that queueing it makes no allocation (the
// kernel's call_rcu allocates nothing either). Once the grace period has
// ended and the callback (if any) has run, Done reports true: an object
// whose Head is done has been freed, which a simulator's poison checks use
// where the kernel would have reused the memory.
type Head struct {
	next *Head
	fn   func(*Head)
	done atomic.Uint32
}

// Done reports whether the callback queued on h has run (its grace period
// ended).
func (h *Head) Done() bool { return h.done.Load() != 0 }

// CallHead queues fn(h) to run after a grace period (call_rcu(h, fn)); fn
// may be nil when all the object needs is to be marked done. h must not be
// queued twice. Callbacks run on a separate goroutine, in the order
// queued.
func (d *Domain) CallHead(h *Head, fn func(*Head)) {
	h.fn = fn
	d.cbMu.Lock()
	if d.cbCond.L == nil {
		d.cbCond.L = &d.cbMu
	}
	h.next = d.pending
	d.pending = h
	d.queued++
	start := !d.running
	d.running = true
	d.cbMu.Unlock()
	if start {
		go d.gpWorker()
	}
}

// Call queues fn to run after a grace period: call_rcu for a caller with
// no rcu_head of its own (it allocates one).
func (d *Domain) Call(fn func()) {
	d.CallHead(new(Head), func(*Head) { fn() })
}

func (d *Domain) gpWorker() {
	for {
		d.cbMu.Lock()
		batch := d.pending
		d.pending = nil
		if batch == nil {
			d.running = false
			d.cbCond.Broadcast()
			d.cbMu.Unlock()
			return
		}
		d.cbMu.Unlock()
		d.Synchronize()
		// The list is newest first: reverse it to run in queue order.
		var prev *Head
		for h := batch; h != nil; {
			next := h.next
			h.next = prev
			prev, h = h, next
		}
		n := uint64(0)
		for h := prev; h != nil; {
			next := h.next
			h.next = nil
			if h.fn != nil {
				h.fn(h)
			}
			h.done.Store(1)
			h, n = next, n+1
		}
		d.cbMu.Lock()
		d.done += n
		d.cbCond.Broadcast()
		d.cbMu.Unlock()
	}
}

// Barrier waits until every callback queued before the call has run
// (rcu_barrier).
func (d *Domain) Barrier() {
	d.cbMu.Lock()
	defer d.cbMu.Unlock()
	if d.cbCond.L == nil {
		d.cbCond.L = &d.cbMu
	}
	target := d.queued
	for d.done < target {
		d.cbCond.Wait()
	}
}

// CallCounted is Call that also counts the callback in ev.
func (d *Domain) CallCounted(ev *events.Counters, fn func()) {
	ev.Inc(EvCallRCU)
	d.Call(fn)
}

// CallHeadCounted is CallHead that also counts the callback in ev.
func (d *Domain) CallHeadCounted(ev *events.Counters, h *Head, fn func(*Head)) {
	ev.Inc(EvCallRCU)
	d.CallHead(h, fn)
}

// SynchronizeCounted is Synchronize that also counts it in ev.
func (d *Domain) SynchronizeCounted(ev *events.Counters) {
	ev.Inc(EvSynchronize)
	d.Synchronize()
}
