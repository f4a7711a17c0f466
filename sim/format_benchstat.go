package sim

import (
	"bufio"
	"fmt"
	"io"
	"runtime"
	"strings"
	"unicode"
)

// BenchName is the Go benchmark name of a workload: "Benchmark" and the
// workload's name with its first letter upper-cased ("BenchmarkOpen1").
func BenchName(workload string) string {
	rs := []rune(workload)
	if len(rs) > 0 {
		rs[0] = unicode.ToUpper(rs[0])
	}
	return "Benchmark" + strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '/' {
			return '_'
		}
		return r
	}, string(rs))
}

// WriteBenchstat writes the report in the Go benchmark format that
// golang.org/x/perf/cmd/benchstat reads: configuration lines (goos,
// goarch, cpu, workload, patch, params, allocator; the rest of the
// machine's metadata, the warnings and the verdicts on comment lines,
// which benchstat ignores), unit lines, then one line per timed run named
// BenchmarkWORKLOAD/variant=V/threads=T-GOMAXPROCS, whose iteration count
// is the run's operations (all workers) and whose values are ns/op (wall
// time / operations, as Go's testing counts), ops/s, MB/s for workloads
// that move data, Go allocs/op and B/op (whole numbers, rounded down as
// Go's testing does), and the counting run's events as EVENT/op. Events
// are "assume=exact" only when the model's code counts them the same in
// every run (ScheduleDependent lists those that a run's interleaving
// moves). `benchstat -col /variant FILE`
// compares the variants; `benchstat OLD NEW` compares two saved runs.
func (r *Report) WriteBenchstat(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "goos: %s\ngoarch: %s\npkg: github.com/vfslab/vfslab/sim\n", runtime.GOOS, runtime.GOARCH)
	if m := r.Machine; m != nil {
		// cpu is a configuration line as Go's testing writes it; what
		// differs between two runs on one machine (the load, the probe,
		// the commit) is on comment lines, which benchstat ignores:
		// as configuration they would split 'benchstat OLD NEW' into one
		// table per file.
		fmt.Fprintf(bw, "cpu: %s\n# machine: %s\n", m.CPU, m)
	}
	fmt.Fprintf(bw, "workload: %s\n", r.Workload)
	patch := r.Patch
	if patch == "" {
		patch = "none"
	}
	fmt.Fprintf(bw, "patch: %s\n", patch)
	if r.Base != "" {
		fmt.Fprintf(bw, "other-patches: %s\n", r.Base)
	}
	params := paramText(r.Params)
	if params == "" {
		params = "none"
	}
	fmt.Fprintf(bw, "params: %s\n", params)
	alloc := "production"
	if r.SlubDebug {
		alloc = "slub_debug"
	}
	fmt.Fprintf(bw, "allocator: %s\n", alloc)
	if r.Review != "" {
		fmt.Fprintf(bw, "# %s\n", r.Review)
	}
	for _, warn := range r.Warnings() {
		fmt.Fprintf(bw, "# %s\n", warn)
	}
	for _, g := range r.Groups {
		for _, m := range g.Measurements {
			if v := withCounted(r.Verdicts[m.Variant], m); v.Reviewed || v.Broken() {
				fmt.Fprintf(bw, "# verdict variant=%s threads=%d: %s\n", benchKey(m.Variant), g.Threads, v.Short())
			}
		}
	}
	events := r.eventNames()
	for _, e := range events {
		assume := "exact"
		if ScheduleDependent[e] || r.multiThreaded() && ContentionDependent[e] {
			assume = "nothing"
		}
		fmt.Fprintf(bw, "Unit %s/op assume=%s\n", e, assume)
	}
	fmt.Fprintln(bw, "Unit ops/s better=higher")
	name := BenchName(r.Workload)
	procs := runtime.GOMAXPROCS(0)
	for _, g := range r.Groups {
		for _, m := range g.Measurements {
			// Every event of the report on every line (0 where this
			// variant counted none), so that benchstat compares them all;
			// none for a variant without a counting run (interrupted).
			ev := m.EventsPerOp()
			var evs []string
			if ev != nil {
				for _, k := range events {
					evs = append(evs, fmt.Sprintf("%.6g %s/op", ev[k], k))
				}
			}
			for i := range m.NsPerOp {
				fmt.Fprintf(bw, "%s/variant=%s/threads=%d-%d\t%d\t%.6g ns/op\t%.6g ops/s", name, benchKey(m.Variant), g.Threads, procs,
					m.Ops*g.Threads, m.NsPerOp[i], m.OpsPerSec[i])
				if i < len(m.MBPerSec) {
					fmt.Fprintf(bw, "\t%.6g MB/s", m.MBPerSec[i])
				}
				if i < len(m.AllocsPerOp) && i < len(m.BytesPerOp) {
					// Go's testing reports whole allocations and bytes
					// per operation (mallocs / N, rounded down).
					fmt.Fprintf(bw, "\t%d B/op\t%d allocs/op", int64(m.BytesPerOp[i]), int64(m.AllocsPerOp[i]))
				}
				for _, e := range evs {
					fmt.Fprintf(bw, "\t%s", e)
				}
				fmt.Fprintln(bw)
			}
		}
	}
	return bw.Flush()
}

// multiThreaded reports whether any group ran several workers.
func (r *Report) multiThreaded() bool {
	for _, g := range r.Groups {
		if g.Threads > 1 {
			return true
		}
	}
	return false
}

// ScheduleDependent are the events whose count per operation depends on
// how the run's goroutines interleave, not only on the code: whether a
// queue_work finds its work still pending, whether a kworker was asleep,
// whether an asynchronous driver's queue was full or a waiter had to
// sleep. Two counting runs of the same code may count them differently.
var ScheduleDependent = map[string]bool{
	"queue_work":                  true,
	"workqueue_worker_wake":       true,
	"crypto_wait_sleep":           true,
	"crypto_async_backlog":        true,
	"crypto_async_backlog_notify": true,
	"crypto_async_reject":         true,
	"crypto_async_eagain":         true,
	"lockref_retry":               true,
	"lockref_slowpath":            true,
}

// ContentionDependent are the events that several workers' contention
// moves (cmpxchg attempts count retries).
var ContentionDependent = map[string]bool{
	"lockref_rmw":         true,
	"lockref_rmw_watched": true,
}

// benchKey makes a variant name usable in a benchmark name ("" is
// "none").
func benchKey(v string) string {
	if v == "" {
		return "none"
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '/' || r == '=' {
			return '_'
		}
		return r
	}, v)
}
