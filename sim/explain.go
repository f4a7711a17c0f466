package sim

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Explanations of a ratio, as LKP's reports explain a %change: the exact
// per-operation event counts that moved between the two counting runs,
// the time per operation that moved between the two profiled runs, by
// model function, and the costs the kernel has that the model lacks for
// the events that moved.

// EventDelta is one event's count per operation in the counting runs of
// the variant compared with and of the row's variant.
type EventDelta struct {
	Event   string  `json:"event"`
	Against float64 `json:"against"`
	Variant float64 `json:"variant"`
}

// String is the delta as "kmalloc 1.02M -> 516k".
func (d EventDelta) String() string {
	return fmt.Sprintf("%s %s -> %s", d.Event, FormatNum(d.Against), FormatNum(d.Variant))
}

// EventDeltas returns the events whose count per operation differs
// between base and m, the largest relative change first, at most n (all
// when n <= 0).
func EventDeltas(base, m *Measurement, n int) []EventDelta {
	if base == nil || m == nil || base.Events == nil || m.Events == nil {
		return nil
	}
	names := map[string]bool{}
	for k := range base.Events {
		names[k] = true
	}
	for k := range m.Events {
		names[k] = true
	}
	var out []EventDelta
	for k := range names {
		a, b := base.Events[k], m.Events[k]
		if math.Abs(a-b) > 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b))) {
			out = append(out, EventDelta{Event: k, Against: a, Variant: b})
		}
	}
	rel := func(d EventDelta) float64 {
		return math.Abs(math.Log((d.Variant + 1) / (d.Against + 1)))
	}
	sort.Slice(out, func(i, j int) bool {
		if ri, rj := rel(out[i]), rel(out[j]); ri != rj {
			return ri > rj
		}
		return out[i].Event < out[j].Event
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}

// missingCost is a cost the kernel pays for an event that the model's
// code does not: said beside a ratio that the event moved, never added
// to the model's time.
type missingCost struct {
	events []string
	// debugOnly: only under slub_debug; threads: only with several
	// workers.
	debugOnly, threads bool
	text               string
}

var missingCosts = []missingCost{
	{events: []string{"kernel_fpu_begin"},
		text: "kernel_fpu_begin/end costs nothing here; the kernel saves the task's FPU/AVX state (XSAVE) on a section's first use after a context switch and disables preemption, so each section moved is a cost the ratio lacks"},
	{events: []string{"kmalloc", "kfree", "kmem_cache_alloc", "kmem_cache_free", "skcipher_request_alloc"}, debugOnly: true,
		text: "slub_debug's checks are modelled as real work (a stack walk, a poison fill and scan per object), not the kernel's: Go's unwinder costs more per frame than ORC, and the stack depot's storage and the slab's list_lock are not modelled"},
	{events: []string{"lockref_rmw", "lockref_retry", "lockref_slowpath", "dget", "dput"}, threads: true,
		text: "lockref operations on a shared line cost one cache-line transfer between this machine's cores; across sockets (the seed's 2-socket machine) a transfer costs several times more, which the model does not add"},
	{events: []string{"queue_work", "workqueue_worker_wake", "fscrypt_decrypt_work", "loop_request"},
		text: "a queue_work or wake-up here is a Go channel hand-off between goroutines; the kernel's is try_to_wake_up, a context switch and, across CPUs, an IPI, whose costs the model does not reproduce"},
	{events: []string{"copy_to_user_bytes", "loop_read_bytes"},
		text: "copies are Go copy() of this machine's memory; the kernel's copy_to_user adds SMAP toggling (stac/clac) and page-fault handling that the model lacks"},
}

// MissingCosts says, for the events that moved between base and m, what
// the kernel pays that the model does not.
func MissingCosts(base, m *Measurement, slubDebug bool) []string {
	moved := map[string]bool{}
	for _, d := range EventDeltas(base, m, 0) {
		moved[d.Event] = true
	}
	var out []string
	for _, c := range missingCosts {
		if (c.debugOnly && !slubDebug) || (c.threads && m.Threads < 2) {
			continue
		}
		for _, e := range c.events {
			if moved[e] {
				out = append(out, c.text)
				break
			}
		}
	}
	return out
}

// profileText renders the largest moves of time per operation between
// two profiled runs: "fscrypt.FnameEncrypt -1.2µs/op, kmem.Kmalloc -0.8µs/op".
func profileText(ds []FuncShare) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, fmt.Sprintf("%s %s/op", d.Func, SignedDuration(d.NsPerOp)))
	}
	return strings.Join(parts, ", ")
}

// SignedDuration formats nanoseconds with a sign and a unit: "+1.23µs".
func SignedDuration(ns float64) string {
	sign := "+"
	if ns < 0 {
		sign, ns = "-", -ns
	}
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%s%.3gs", sign, ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%s%.3gms", sign, ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%s%.3gµs", sign, ns/1e3)
	}
	return fmt.Sprintf("%s%.3gns", sign, ns)
}

// topShares renders a profile's largest shares: "fscrypt.DecryptBio 41%, (Go GC) 12%".
func topShares(p *Profile, n int) string {
	if p == nil {
		return ""
	}
	var parts []string
	for i, f := range p.Funcs {
		if i == n {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %.0f%%", f.Func, 100*f.Share))
	}
	return strings.Join(parts, ", ")
}
