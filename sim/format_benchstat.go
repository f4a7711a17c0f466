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
// goarch, workload, patch, params, allocator), then one line per timed run
// named BenchmarkWORKLOAD/variant=V/threads=T-GOMAXPROCS, whose iteration
// count is the run's operations (all workers) and whose values are ns/op
// (wall time / operations, as Go's testing counts), ops/s, MB/s for
// workloads that move data, Go allocs/op and B/op, and the counting run's
// events as EVENT/op (the same on every line: they are deterministic,
// hence "Unit ... assume=exact"). `benchstat -col /variant FILE` compares
// the variants; `benchstat OLD NEW` compares two saved runs.
func (r *Report) WriteBenchstat(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "goos: %s\ngoarch: %s\npkg: github.com/vfslab/vfslab/sim\n", runtime.GOOS, runtime.GOARCH)
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
	events := r.eventNames()
	for _, e := range events {
		fmt.Fprintf(bw, "Unit %s/op assume=exact\n", e)
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
					fmt.Fprintf(bw, "\t%.6g allocs/op\t%.6g B/op", m.AllocsPerOp[i], m.BytesPerOp[i])
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
