package kmem

import (
	"fmt"
	"math/rand/v2"
)

// Failslab injects allocation failures in the spirit of the kernel's
// failslab and fail-nth (mm/failslab.c, lib/fault-inject.c,
// Documentation/fault-injection/fault-injection.rst). A Failslab belongs to
// one task, so a run with a given seed fails the same allocations every time.
//
// Three triggers, any of which fails an allocation:
//   - Nth: the Nth allocation attempt counted from Arm (1-based) fails, once,
//     like writing N to /proc/<pid>/fail-nth;
//   - Sites: every allocation at a named site fails;
//   - Probability: each allocation fails with this probability, drawn from a
//     PCG generator seeded with Seed.
//
// Times bounds the number of failures (0: no bound), as the kernel's "times"
// attribute does. Allocations with GFPNoFail never fail.
type Failslab struct {
	Nth         uint64
	Sites       map[string]bool
	Probability float64
	Seed        uint64
	Times       int

	calls    uint64
	failures int
	rng      *rand.Rand
	// Injected records every failure injected, in order.
	Injected []Injection
}

// Injection records one injected failure.
type Injection struct {
	Call uint64 // allocation attempt number since Arm (1-based)
	Site string
	Size int
}

// String renders an injection as "call#N site size".
func (i Injection) String() string { return fmt.Sprintf("call#%d %s %d", i.Call, i.Site, i.Size) }

// FailNth returns an injector that fails only the nth allocation attempt.
func FailNth(n uint64) *Failslab { return &Failslab{Nth: n} }

// FailSites returns an injector that fails every allocation at the named
// sites.
func FailSites(names ...string) *Failslab {
	f := &Failslab{Sites: map[string]bool{}}
	for _, n := range names {
		f.Sites[n] = true
	}
	return f
}

// FailRandom returns an injector that fails each allocation with probability
// p, deterministically for a given seed.
func FailRandom(p float64, seed uint64) *Failslab {
	return &Failslab{Probability: p, Seed: seed}
}

// Arm restarts counting: the next allocation is call 1 and the failure log
// is emptied.
func (f *Failslab) Arm() {
	f.calls = 0
	f.failures = 0
	f.Injected = nil
	f.rng = nil
}

// Calls returns the number of allocation attempts seen since Arm.
func (f *Failslab) Calls() uint64 { return f.calls }

func (f *Failslab) should(site *Site, size int) bool {
	f.calls++
	if f.Times > 0 && f.failures >= f.Times {
		return false
	}
	fail := false
	if f.Nth != 0 && f.calls == f.Nth {
		fail = true
	}
	if !fail && f.Sites[site.name] {
		fail = true
	}
	if !fail && f.Probability > 0 {
		if f.rng == nil {
			f.rng = rand.New(rand.NewPCG(f.Seed, 0x6661696c736c6162))
		}
		fail = f.rng.Float64() < f.Probability
	}
	if fail {
		f.failures++
		f.Injected = append(f.Injected, Injection{Call: f.calls, Site: site.name, Size: size})
	}
	return fail
}
