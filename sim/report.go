package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchmath"
)

// Report is the result of Run: one Group per thread count.
type Report struct {
	Workload string            `json:"workload"`
	Patch    string            `json:"patch,omitempty"`
	Base     string            `json:"other_patches,omitempty"`
	Seed     uint64            `json:"seed"`
	Params   map[string]string `json:"params,omitempty"`
	Count    int               `json:"count"`
	// SlubDebug is true when the allocator ran in slub_debug mode.
	SlubDebug bool `json:"slub_debug,omitempty"`
	// Interrupted is true when Run was stopped (Ctrl-C) before the end:
	// the last group may lack variants, runs and the counting run.
	Interrupted bool     `json:"interrupted,omitempty"`
	Groups      []*Group `json:"groups"`
}

// Group holds the measurements of every variant at one thread count.
type Group struct {
	Threads      int            `json:"threads"`
	Measurements []*Measurement `json:"variants"`
}

// Summary is a sample's median with its 95% confidence interval, and, for a
// variant other than the first, its comparison with the first (the base).
type Summary struct {
	Median float64 `json:"median"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	// Ratio is this variant's median over the base's.
	Ratio float64 `json:"ratio_to_base,omitempty"`
	// P is the Mann-Whitney U-test p-value against the base (benchstat's
	// test); Significant when below 0.05.
	P           float64 `json:"p,omitempty"`
	Significant bool    `json:"significant,omitempty"`
}

// MarshalJSON writes non-finite bounds (too few runs for a 95% interval)
// as null.
func (s Summary) MarshalJSON() ([]byte, error) {
	fin := func(v float64) any {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil
		}
		return v
	}
	type out struct {
		Median      any     `json:"median"`
		Lo          any     `json:"lo"`
		Hi          any     `json:"hi"`
		Ratio       float64 `json:"ratio_to_base,omitempty"`
		P           float64 `json:"p,omitempty"`
		Significant bool    `json:"significant,omitempty"`
	}
	return json.Marshal(out{fin(s.Median), fin(s.Lo), fin(s.Hi), s.Ratio, s.P, s.Significant})
}

var thresholds = benchmath.DefaultThresholds

func summarize(values []float64) (*benchmath.Sample, Summary) {
	s := benchmath.NewSample(append([]float64(nil), values...), &thresholds)
	sum := benchmath.AssumeNothing.Summary(s, 0.95)
	return s, Summary{Median: sum.Center, Lo: sum.Lo, Hi: sum.Hi}
}

func compare(base, s *benchmath.Sample, sb, sv Summary) Summary {
	c := benchmath.AssumeNothing.Compare(base, s)
	sv.P = c.P
	sv.Significant = c.P < c.Alpha
	if sb.Median != 0 {
		sv.Ratio = sv.Median / sb.Median
	}
	return sv
}

// Stats are a measurement's summaries.
type Stats struct {
	NsPerOp     Summary `json:"ns_per_op"`
	OpsPerSec   Summary `json:"ops_per_sec"`
	AllocsPerOp Summary `json:"allocs_per_op"`
	BytesPerOp  Summary `json:"bytes_per_op"`
	MBPerSec    Summary `json:"mb_per_sec"`
}

// Stats summarizes m and compares it with base (nil for the base itself).
func (m *Measurement) Stats(base *Measurement) Stats {
	var st Stats
	var ns, ops *benchmath.Sample
	ns, st.NsPerOp = summarize(m.NsPerOp)
	ops, st.OpsPerSec = summarize(m.OpsPerSec)
	_, st.AllocsPerOp = summarize(m.AllocsPerOp)
	_, st.BytesPerOp = summarize(m.BytesPerOp)
	if len(m.MBPerSec) > 0 {
		_, st.MBPerSec = summarize(m.MBPerSec)
	}
	if base != nil && base != m {
		bns, bs := summarize(base.NsPerOp)
		st.NsPerOp = compare(bns, ns, bs, st.NsPerOp)
		bops, bo := summarize(base.OpsPerSec)
		st.OpsPerSec = compare(bops, ops, bo, st.OpsPerSec)
	}
	return st
}

// Ratio returns the median throughput of variant over that of the group's
// first variant (NaN when either is missing).
func (g *Group) Ratio(variant string) float64 {
	if len(g.Measurements) == 0 {
		return math.NaN()
	}
	base := g.Measurements[0]
	for _, m := range g.Measurements {
		if m.Variant == variant {
			return m.Stats(base).OpsPerSec.Ratio
		}
	}
	return math.NaN()
}

// WriteText writes the report as aligned tables, one per thread count:
// timing medians with their confidence interval, the change against the
// base with benchstat's p-value, and the per-operation event counts.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "workload %s", r.Workload)
	if r.Patch != "" {
		fmt.Fprintf(w, "  patch %s", r.Patch)
	}
	if r.Base != "" {
		fmt.Fprintf(w, "  with %s", r.Base)
	}
	fmt.Fprintf(w, "  seed %d  runs %d", r.Seed, r.Count)
	if r.SlubDebug {
		fmt.Fprint(w, "  slub_debug")
	}
	fmt.Fprintln(w)
	if len(r.Params) > 0 {
		var ps []string
		for k, v := range r.Params {
			ps = append(ps, k+"="+v)
		}
		sort.Strings(ps)
		fmt.Fprintf(w, "params %s\n", strings.Join(ps, " "))
	}
	if op := opSummary(r.Workload); op != "" {
		fmt.Fprintf(w, "1 op = %s\n", op)
	}
	fmt.Fprintln(w, "ns/op = wall time / all workers' ops (Go's convention; one worker's latency is ns/op x threads)")
	if r.Interrupted {
		fmt.Fprintln(w, "INTERRUPTED: the figures below are the runs measured before the interrupt; the last thread count may lack runs and events")
	}
	for _, g := range r.Groups {
		fmt.Fprintf(w, "\nthreads=%d  ops/worker/run=%d  runs=%d\n", g.Threads, g.Measurements[0].Ops, len(g.Measurements[0].NsPerOp))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		base := g.Measurements[0]
		// The first variant is the one the others are compared with: the
		// base, unless the run asked for another first (--variants).
		fmt.Fprintf(tw, "variant\tns/op\t±\tops/s\tMB/s\tvs %s\tp\tallocs/op\tB/op\tkmalloc/op\t\n", orBase(base.Variant))
		for _, m := range g.Measurements {
			st := m.Stats(base)
			vs, p := "", ""
			if m != base {
				vs = fmt.Sprintf("%+.1f%%", (st.OpsPerSec.Ratio-1)*100)
				if st.OpsPerSec.Ratio >= 10 {
					vs = fmt.Sprintf("x%.0f", st.OpsPerSec.Ratio)
				}
				p = fmt.Sprintf("%.3f", st.OpsPerSec.P)
				if !st.OpsPerSec.Significant {
					vs = "~"
				}
			}
			mbs := ""
			if len(m.MBPerSec) > 0 {
				mbs = FormatNum(st.MBPerSec.Median)
			}
			km := "-" // no counting run (interrupted)
			if m.Events != nil {
				km = FormatNum(m.Kmallocs)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.0f\t%s\t\n",
				m.Variant, FormatNum(st.NsPerOp.Median), pct(st.NsPerOp), FormatNum(st.OpsPerSec.Median), mbs,
				vs, p, st.AllocsPerOp.Median, st.BytesPerOp.Median, km)
		}
		tw.Flush()
		names := map[string]bool{}
		for _, m := range g.Measurements {
			for n := range m.Events {
				names[n] = true
			}
		}
		if len(names) > 0 {
			var ns []string
			for n := range names {
				ns = append(ns, n)
			}
			sort.Strings(ns)
			fmt.Fprintln(w, "events per operation (counting run):")
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprint(tw, "event\t")
			for _, m := range g.Measurements {
				fmt.Fprintf(tw, "%s\t", m.Variant)
			}
			fmt.Fprintln(tw)
			for _, n := range ns {
				fmt.Fprintf(tw, "%s\t", n)
				for _, m := range g.Measurements {
					fmt.Fprintf(tw, "%s\t", FormatNum(m.Events[n]))
				}
				fmt.Fprintln(tw)
			}
			tw.Flush()
		}
		for _, m := range g.Measurements {
			if m.Errors > 0 {
				fmt.Fprintf(w, "%s: %d operations failed in the counting run; first: %s\n", m.Variant, m.Errors, m.FirstError)
			}
			for _, b := range dedupe(m.Bugs) {
				fmt.Fprintf(w, "%s: %s\n", m.Variant, b)
			}
		}
	}
	return nil
}

// orBase names the variant compared with in a header ("base" for a run
// that compares no patch).
func orBase(v string) string {
	if v == "" {
		return "base"
	}
	return v
}

func dedupe(s []string) []string {
	seen := map[string]int{}
	var out []string
	for _, x := range s {
		if seen[x] == 0 {
			out = append(out, x)
		}
		seen[x]++
	}
	for i, x := range out {
		if n := seen[x]; n > 1 {
			out[i] = fmt.Sprintf("%s (x%d)", x, n)
		}
	}
	return out
}

// FormatNum formats v for a report: 3 significant digits with an SI suffix
// (k, M, G) from 10000 up, whole numbers from 100 up.
func FormatNum(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 1e9:
		return fmt.Sprintf("%.3gG", v/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.3gk", v/1e3)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

func pct(s Summary) string {
	if s.Median == 0 {
		return ""
	}
	d := math.Max(s.Hi-s.Median, s.Median-s.Lo)
	if math.IsInf(d, 0) || math.IsNaN(d) {
		return "?"
	}
	return fmt.Sprintf("%.0f%%", 100*d/s.Median)
}
