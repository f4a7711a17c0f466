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
	// Machine says where the runs ran: CPU, build, load average and the
	// noise probe before and after.
	Machine *Machine `json:"machine,omitempty"`
	// Verdicts are the review verdicts of the variants, by variant name
	// (set by the caller that ran the review; nil: not reviewed).
	Verdicts map[string]*Verdict `json:"verdicts,omitempty"`
	// Review says where the verdicts came from and what a cold cache
	// adds (set with Verdicts).
	Review string `json:"review,omitempty"`
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

// compareP is the U-test's p-value of s against base.
func compareP(base, s *benchmath.Sample) float64 {
	return benchmath.AssumeNothing.Compare(base, s).P
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
// timing medians with their confidence interval and between-run spread,
// the change against the base with its bootstrap interval and benchstat's
// p-value, Go allocations and kmallocs, and each variant's review verdict;
// then per variant the conclusion, the events that moved, where the time
// went (the profiled run) and the kernel costs the model lacks; then the
// events per operation of every variant, and a legend.
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
		fmt.Fprintf(w, "params %s\n", paramText(r.Params))
	}
	if op := opSummary(r.Workload); op != "" {
		fmt.Fprintf(w, "1 op = %s\n", op)
	}
	WrapLine(w, "machine: ", r.Machine.String())
	if r.Review != "" {
		WrapLine(w, "", r.Review)
	}
	for _, warn := range r.Warnings() {
		WrapLine(w, "", warn)
	}
	if r.Interrupted {
		fmt.Fprintln(w, "INTERRUPTED: the figures below are the runs measured before the interrupt; the last thread count may lack runs and events")
	}
	for _, g := range r.Groups {
		fmt.Fprintf(w, "\nthreads (T) = %d  ops/worker/run = %d  runs = %d\n", g.Threads, g.Measurements[0].Ops, len(g.Measurements[0].NsPerOp))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		base := g.Measurements[0]
		hasMB := len(base.MBPerSec) > 0
		// The first variant is the one the others are compared with: the
		// base, unless the run asked for another first (--variants).
		head := "variant\tns/op\t±\tcv\tops/s\t"
		if hasMB {
			head += "MB/s\t"
		}
		head += fmt.Sprintf("vs %s\t95%% CI\tp\tallocs/op\tB/op\tkmalloc/op\t", orBase(base.Variant))
		fmt.Fprintln(tw, head)
		for _, m := range g.Measurements {
			st := m.Stats(base)
			vs, ci, p := "", "", ""
			if m != base {
				rs := CompareRuns(base.OpsPerSec, m.OpsPerSec)
				vs, ci, p = RatioMark(rs, withCounted(r.Verdicts[m.Variant], m).Broken()), CIText(rs), fmt.Sprintf("%.3f", rs.P)
			}
			km := "-" // no counting run (interrupted)
			if m.Events != nil {
				km = FormatNum(m.Kmallocs)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f%%\t%s\t", m.Variant, FormatNum(st.NsPerOp.Median), pct(st.NsPerOp), 100*CV(m.NsPerOp), FormatNum(st.OpsPerSec.Median))
			if hasMB {
				fmt.Fprintf(tw, "%s\t", FormatNum(st.MBPerSec.Median))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", vs, ci, p, FormatNum(st.AllocsPerOp.Median), FormatNum(st.BytesPerOp.Median), km)
		}
		tw.Flush()
		for _, m := range g.Measurements {
			v := withCounted(r.Verdicts[m.Variant], m)
			fmt.Fprintf(w, "%s: verdict %s\n", m.Variant, v.Short())
			if m == base {
				continue
			}
			rs := CompareRuns(base.OpsPerSec, m.OpsPerSec)
			fmt.Fprintf(w, "  => %s\n", Conclusion(m.Variant, orBase(base.Variant), rs, v, m.CorruptFraction()))
			if ds := EventDeltas(base, m, 8); len(ds) > 0 {
				var parts []string
				for _, d := range ds {
					parts = append(parts, d.String())
				}
				WrapLine(w, "  events/op moved: ", strings.Join(parts, "; "))
			}
			if pd := ProfileDeltas(base.Profile, m.Profile, 6); len(pd) > 0 {
				WrapLine(w, "  time/op moved (profiled run): ", profileText(pd))
			}
			for _, c := range MissingCosts(base, m, r.SlubDebug) {
				WrapLine(w, "  not modelled: ", c)
			}
			if m.Errors > 0 {
				fmt.Fprintf(w, "  %d operations failed in the counting run; first: %s\n", m.Errors, m.FirstError)
			}
		}
		for _, m := range g.Measurements {
			if m.Profile != nil {
				WrapLine(w, fmt.Sprintf("%s: profile (%d samples): ", m.Variant, m.Profile.Samples), topShares(m.Profile, 6))
			}
		}
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
			fmt.Fprintln(w, "events per operation (counting run; * differs between variants):")
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprint(tw, "event\t")
			for _, m := range g.Measurements {
				fmt.Fprintf(tw, "%s\t", m.Variant)
			}
			fmt.Fprintln(tw)
			for _, n := range ns {
				mark := ""
				for _, m := range g.Measurements {
					if m.Events[n] != base.Events[n] {
						mark = " *"
					}
				}
				fmt.Fprintf(tw, "%s%s\t", n, mark)
				for _, m := range g.Measurements {
					fmt.Fprintf(tw, "%s\t", FormatNum(m.Events[n]))
				}
				fmt.Fprintln(tw)
			}
			tw.Flush()
		}
		for _, m := range g.Measurements {
			for _, b := range dedupe(m.Bugs) {
				fmt.Fprintf(w, "%s: %s\n", m.Variant, b)
			}
		}
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, abLegend)
	return nil
}

// abLegend explains every column and symbol of WriteText's tables.
const abLegend = `legend: ns/op = wall time / all workers' operations (Go's convention; one worker's latency is ns/op x T);
  ± = half the 95% confidence interval of the median ns/op, in % of it ("-": fewer than 6 runs give none);
  cv = between-run coefficient of variation of ns/op; ops/s = all workers' operations per second;
  vs = the variant's median ops/s over the first variant's: +x% faster, -x% slower, xN for 10 times or more;
  ~ = not significant (Mann-Whitney U-test p >= 0.05, benchstat's test); ? = noisy: the interval or the
  spread is wider than the effect; ! = broken: the review (or the counting run) finds the variant leaking,
  overflowing, corrupting or failing as posted, so its speed is not one to take;
  95% CI = bootstrap interval of the ratio over the interleaved runs (A B B A ...);
  allocs/op, B/op = Go heap allocations and bytes per operation; kmalloc/op = the model's slab allocations
  per operation (counting run).
`

// Warnings are the lines every format carries about what the report's
// figures can show: the machine's noise and counts that cannot reach
// p < 0.05.
func (r *Report) Warnings() []string {
	var out []string
	if w := r.Machine.NoiseWarning(); w != "" {
		out = append(out, w)
	}
	seen := map[string]bool{}
	for _, g := range r.Groups {
		if len(g.Measurements) < 2 {
			continue
		}
		base := g.Measurements[0]
		for _, m := range g.Measurements[1:] {
			if w := CountWarning(len(base.OpsPerSec), len(m.OpsPerSec)); w != "" && !seen[w] {
				seen[w] = true
				out = append(out, "WARNING: "+w)
			}
		}
	}
	return out
}

// RatioMark renders a ratio for a table: "+6.3%", "x13.7", with "~" when
// not significant, "?" when noisy and "!" when the variant is broken.
func RatioMark(rs RatioStats, broken bool) string {
	s := ""
	switch {
	case math.IsNaN(rs.Ratio):
		s = "-"
	case rs.Ratio >= 10:
		s = fmt.Sprintf("x%.1f", rs.Ratio)
	default:
		s = fmt.Sprintf("%+.1f%%", (rs.Ratio-1)*100)
	}
	if !rs.Significant {
		s = "~" + s
	}
	if rs.Noisy {
		s += "?"
	}
	if broken {
		s = "!" + s
	}
	return s
}

// CIText renders a ratio's bootstrap interval: "x1.02-x1.10", "-" when
// there is none.
func CIText(rs RatioStats) string {
	if math.IsNaN(rs.Lo) || math.IsNaN(rs.Hi) {
		return "-"
	}
	return fmt.Sprintf("x%s-x%s", ratioNum(rs.Lo), ratioNum(rs.Hi))
}

// ratioNum formats a ratio with 3 significant digits.
func ratioNum(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// WrapLine writes prefix and text, wrapped at TextWidth columns, the
// continuation lines indented two columns past the prefix's own
// indentation.
func WrapLine(w io.Writer, prefix, text string) {
	lead := len(prefix) - len(strings.TrimLeft(prefix, " "))
	indent := strings.Repeat(" ", lead+2)
	line := prefix
	first := true
	for _, word := range strings.Fields(text) {
		if !first && len([]rune(line))+1+len([]rune(word)) > TextWidth {
			fmt.Fprintln(w, line)
			line = indent + word
			continue
		}
		if first {
			line += word
			first = false
		} else {
			line += " " + word
		}
	}
	fmt.Fprintln(w, line)
}

// TextWidth is the width the text formats fit (a 120-column terminal).
const TextWidth = 120

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
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*d/s.Median)
}
