package sim

import (
	"fmt"
	"io"
	"math"
	"sort"
	"text/tabwriter"

	"golang.org/x/perf/benchmath"
)

// Compare writes, the way benchstat compares two files, each variant and
// thread count found in both old and new: the median ns/op and ops/s of
// each with its 95% confidence interval, the change, and the Mann-Whitney
// U-test p-value ("~" when the change is not significant at 0.05), then
// the events per operation that differ. It says first what differs
// between the two configurations (workload, patch, parameters,
// allocator), since a comparison across them compares more than one
// thing.
func Compare(w io.Writer, old, new *Report) error {
	for _, d := range Differences(old, new) {
		fmt.Fprintf(w, "note: %s\n", d)
	}
	for i, r := range []*Report{old, new} {
		fmt.Fprintf(w, "%s machine: %s\n", []string{"old", "new"}[i], r.Machine)
		for _, warn := range r.Warnings() {
			fmt.Fprintf(w, "%s: %s\n", []string{"old", "new"}[i], warn)
		}
	}
	type key struct {
		threads int
		variant string
	}
	olds := map[key]*Measurement{}
	for _, g := range old.Groups {
		for _, m := range g.Measurements {
			olds[key{g.Threads, m.Variant}] = m
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "variant\tT\told ns/op\t±\tnew ns/op\t±\tvs old\tp\told ops/s\tnew ops/s\tvs old\tp\t")
	var nsOlds, nsNews, opOlds, opNews []float64
	type evDiff struct {
		who, name string
		old, new  float64
	}
	var diffs []evDiff
	matched := 0
	for _, g := range new.Groups {
		for _, m := range g.Measurements {
			o := olds[key{g.Threads, m.Variant}]
			if o == nil {
				continue
			}
			matched++
			nsOld, nsNew, nsD, nsP := compareSamples(o.NsPerOp, m.NsPerOp)
			opOld, opNew, opD, opP := compareSamples(o.OpsPerSec, m.OpsPerSec)
			nsOlds, nsNews = append(nsOlds, nsOld.Median), append(nsNews, nsNew.Median)
			opOlds, opNews = append(opOlds, opOld.Median), append(opNews, opNew.Median)
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", m.Variant, g.Threads,
				FormatNum(nsOld.Median), pct(nsOld), FormatNum(nsNew.Median), pct(nsNew), nsD, nsP,
				FormatNum(opOld.Median), FormatNum(opNew.Median), opD, opP)
			names := map[string]bool{}
			for n := range o.Events {
				names[n] = true
			}
			for n := range m.Events {
				names[n] = true
			}
			for n := range names {
				if a, b := o.Events[n], m.Events[n]; math.Abs(a-b) > 1e-9*math.Max(math.Abs(a), math.Abs(b)) {
					diffs = append(diffs, evDiff{fmt.Sprintf("%s T=%d", m.Variant, g.Threads), n, a, b})
				}
			}
		}
	}
	if matched == 0 {
		tw.Flush()
		return fmt.Errorf("no variant and thread count in common")
	}
	// benchstat's geomean row: the geometric means of the medians, and
	// their change (no test: the rows are not samples of one thing).
	gno, gnn, gopo, gopn := GeoMean(nsOlds), GeoMean(nsNews), GeoMean(opOlds), GeoMean(opNews)
	fmt.Fprintf(tw, "geomean\t\t%s\t\t%s\t\t%+.1f%%\t\t%s\t%s\t%+.1f%%\t\t\n", FormatNum(gno), FormatNum(gnn), (gnn/gno-1)*100,
		FormatNum(gopo), FormatNum(gopn), (gopn/gopo-1)*100)
	tw.Flush()
	if len(diffs) > 0 {
		sort.Slice(diffs, func(i, j int) bool {
			if diffs[i].who != diffs[j].who {
				return diffs[i].who < diffs[j].who
			}
			return diffs[i].name < diffs[j].name
		})
		fmt.Fprintln(w, "events per operation that differ (counting runs):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "variant\tevent\told\tnew\t")
		for _, d := range diffs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", d.who, d.name, FormatNum(d.old), FormatNum(d.new))
		}
		tw.Flush()
	} else {
		fmt.Fprintln(w, "events per operation: the same")
	}
	return nil
}

// Differences lists what differs between the configurations of two
// reports (workload, patch, other patches, parameters, allocator, seed):
// a comparison across them compares more than one thing.
func Differences(old, new *Report) []string {
	var out []string
	if old.Workload != new.Workload {
		out = append(out, fmt.Sprintf("workloads differ: %s vs %s", old.Workload, new.Workload))
	}
	if old.Patch != new.Patch {
		out = append(out, fmt.Sprintf("patches differ: %q vs %q", old.Patch, new.Patch))
	}
	if old.Base != new.Base {
		out = append(out, fmt.Sprintf("other patches differ: %q vs %q", old.Base, new.Base))
	}
	if po, pn := paramText(old.Params), paramText(new.Params); po != pn {
		out = append(out, fmt.Sprintf("parameters differ: %s vs %s", po, pn))
	}
	if old.SlubDebug != new.SlubDebug {
		out = append(out, fmt.Sprintf("allocators differ: slub_debug=%v vs %v", old.SlubDebug, new.SlubDebug))
	}
	if old.Seed != new.Seed {
		out = append(out, fmt.Sprintf("seeds differ: %d vs %d", old.Seed, new.Seed))
	}
	return out
}

// compareSamples summarizes old and new and returns their change as
// benchstat prints it ("~" when not significant) and the p-value.
func compareSamples(old, new []float64) (so, sn Summary, delta, p string) {
	o, so := summarize(old)
	n, sn := summarize(new)
	c := benchmath.AssumeNothing.Compare(o, n)
	p = fmt.Sprintf("p=%.3f n=%d+%d", c.P, len(old), len(new))
	switch {
	case c.P >= c.Alpha:
		delta = "~"
	case so.Median != 0:
		delta = fmt.Sprintf("%+.1f%%", (sn.Median/so.Median-1)*100)
	default:
		delta = "?"
	}
	return so, sn, delta, p
}
