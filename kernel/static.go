package kernel

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// Static names one subsystem's global variables above package kernel
// (security/keys' key_serial_tree and key_user_tree, say): the kernel has
// one copy, so the model has one per machine, made on first use. A
// package declares its Static once, at init, with NewStatic.
type Static struct{ id int32 }

var nextStatic atomic.Int32

// NewStatic returns a new slot for a subsystem's per-machine state.
func NewStatic() Static { return Static{id: nextStatic.Add(1)} }

// statics holds the machine's subsystem states, by Static.
type statics struct {
	mu sync.Mutex
	m  map[int32]any
}

// StaticOf returns the machine's state of slot s, made by init on the
// first call. The state lives as long as the machine.
func (k *Kernel) StaticOf(s Static, init func() any) any {
	k.statics.mu.Lock()
	defer k.statics.mu.Unlock()
	if v, ok := k.statics.m[s.id]; ok {
		return v
	}
	if k.statics.m == nil {
		k.statics.m = map[int32]any{}
	}
	v := init()
	k.statics.m[s.id] = v
	return v
}

// RandomStream returns a generator for one subsystem's random choices,
// keyed from the machine's seed and the subsystem's name: draws from it
// never move the machine's own generator (GetRandomBytes), so that, say,
// the serial numbers of the keys a script adds leave the file nonces
// drawn after them as they were. The kernel draws both from one crng,
// whose output no one can reproduce; the model keeps each stream
// reproducible on its own. It is not safe for concurrent use: the
// subsystem serialises its draws.
func (k *Kernel) RandomStream(name string) *rand.ChaCha8 {
	r := &k.random
	r.mu.Lock()
	seed := r.seed
	r.mu.Unlock()
	key := seedKey(seed)
	for i := 0; i < len(name); i++ {
		key[i%len(key)] ^= name[i]
	}
	return rand.NewChaCha8(key)
}

// OnceSite is one printk_once or pr_warn_once call site: the kernel's
// static "__print_once" flag, of which the model keeps one per machine,
// so that a line is logged once per boot.
type OnceSite struct{ s Static }

// NewOnceSite returns a new call site; a package declares each once, at
// init.
func NewOnceSite() *OnceSite { return &OnceSite{s: NewStatic()} }

// PrintkOnce is printk_once: Printk the first time site logs on the
// machine, nothing after.
func (t *Task) PrintkOnce(site *OnceSite, format string, args ...any) {
	done := t.K.StaticOf(site.s, func() any { return new(atomic.Bool) }).(*atomic.Bool)
	if done.Swap(true) {
		return
	}
	t.Printk(format, args...)
}
