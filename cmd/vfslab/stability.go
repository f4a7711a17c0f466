package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/vfslab/vfslab/sim"
)

// The stability check of issue-style acceptance: several consecutive
// default `vfslab report` runs, saved with --format json, should keep each
// seed headline row significant or not in the same way, and each
// significant one within StabilityBand of the rows' median, when the
// noise probe found every run's machine quiet.

// StabilityBand is how far a significant ratio may lie from the median of
// its runs.
const stabilityBand = 0.10

// stabilityRows are the seed headline rows the criterion judges, by
// headline ID: the variants each seed's thread is about.
var stabilityRows = map[string][]string{
	"fscrypt-fname-onstack": {"v2", "upstream"},
	"f2fs-lookup-prealloc":  {"v4"},
	"fscrypt-v1-kdf":        {"aeslib"},
	"crypto-bio":            {"bio"},
	"fscrypt-file-open":     {"v2"},
}

func newReportStabilityCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "stability RUN.json RUN.json [RUN.json...]",
		Short: "compare saved report runs (--format json): is each headline row's ratio stable?",
		Long: `Reads two or more reports saved with 'vfslab report --format json' (made one
after the other on one machine: scripts/report-stability.sh makes three)
and prints one line per row: each run's ratio (with ~ when not
significant), their median, each run's distance from it, and whether the
row is stable: significant or not in every run alike, and every
significant ratio within ±10% of the median. The rows marked * are the
seed headline rows the criterion judges (000 v2 and upstream, 001 v4, 002
aeslib, 003 bio, 004 v2, under both allocators).

The criterion holds only for runs whose noise probe found the machine
quiet (CV <= 3%); on a noisy machine the table is printed and the verdict
is "not judged". Exit status: 0 when stable or not judged, 1 when a
judged row is unstable, 2 for a usage error.`,
		Example: `  scripts/report-stability.sh
  vfslab report stability run1.json run2.json run3.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usagef("want two saved reports or more; got %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var runs []*reportJSON
			for _, path := range args {
				b, err := os.ReadFile(path)
				if err != nil {
					return usageError{err.Error()}
				}
				var r reportJSON
				if err := json.Unmarshal(b, &r); err != nil || r.Schema != ReportSchema {
					return usagef("%s: not a 'vfslab report --format json' file (schema %q, want %q)", path, r.Schema, ReportSchema)
				}
				runs = append(runs, &r)
			}
			if !writeStability(cmd.OutOrStdout(), runs) {
				return &statusError{status: 1, msg: "unstable: see the rows marked UNSTABLE"}
			}
			return nil
		},
	}
}

// writeStability prints the stability table of runs and reports whether
// the criterion holds (true also when it cannot be judged).
func writeStability(w io.Writer, runs []*reportJSON) bool {
	type key struct {
		patch, variant string
		slub           bool
		threads        int
	}
	var keys []key
	byRun := map[key][]*sim.ReportRow{}
	for i, r := range runs {
		for j := range r.Rows {
			row := &r.Rows[j]
			k := key{row.Patch, row.Variant, row.SlubDebug, row.Threads}
			if byRun[k] == nil {
				byRun[k] = make([]*sim.ReportRow, len(runs))
				keys = append(keys, k)
			}
			byRun[k][i] = row
		}
	}
	quiet := true
	for i, r := range runs {
		q := r.Machine.Quiet()
		quiet = quiet && q
		sim.WrapLine(w, fmt.Sprintf("run %d: ", i+1), r.Machine.String())
	}
	fmt.Fprintln(w)
	// alloc: prod (the production allocator) or debug (slub_debug).
	head := []string{"patch", "variant", "alloc", "T"}
	for i := range runs {
		head = append(head, "run "+strconv.Itoa(i+1))
	}
	head = append(head, "median", "spread", "stable")
	right := make([]bool, len(head))
	for i := 3; i < len(head)-1; i++ {
		right[i] = true
	}
	t := &sim.Table{Head: head, Right: right}
	ok := true
	for _, k := range keys {
		rs := byRun[k]
		judged := slices.Contains(stabilityRows[k.patch], k.variant)
		mark := ""
		if judged {
			mark = "*"
		}
		alloc := "prod"
		if k.slub {
			alloc = "debug"
		}
		cells := []string{mark + k.patch, k.variant, alloc, strconv.Itoa(k.threads)}
		var ratios []float64
		sigs := map[bool]int{}
		missing := false
		for _, r := range rs {
			if r == nil || math.IsNaN(r.Ratio) {
				cells = append(cells, "-")
				missing = true
				continue
			}
			s := "x" + ratioNum(r.Ratio)
			if !r.Significant {
				s = "~" + s
			}
			cells = append(cells, s)
			ratios = append(ratios, r.Ratio)
			sigs[r.Significant]++
		}
		med := medianOf(ratios)
		spread, anySig := 0.0, false
		for _, r := range rs {
			if r != nil && r.Significant && med > 0 {
				spread, anySig = math.Max(spread, math.Abs(r.Ratio/med-1)), true
			}
		}
		verdict := "yes"
		switch {
		case missing:
			verdict = "incomplete"
		case len(sigs) > 1:
			verdict = "UNSTABLE p"
		case spread > stabilityBand:
			verdict = "UNSTABLE band"
		}
		if judged && verdict != "yes" {
			ok = false
		}
		spreadText := "-" // no significant ratio to hold within the band
		if anySig {
			spreadText = fmt.Sprintf("±%.1f%%", 100*spread)
		}
		cells = append(cells, "x"+ratioNum(med), spreadText, verdict)
		t.Row(cells...)
	}
	t.Write(w)
	fmt.Fprintln(w, "alloc: prod = the production allocator, debug = slub_debug; ~ = not significant; spread = the largest distance")
	fmt.Fprintf(w, "of a significant ratio from the median (-: none significant); * = a seed headline row the criterion judges;\n")
	fmt.Fprintf(w, "UNSTABLE p = significant in some runs only; UNSTABLE band = a significant ratio more than ±%.0f%% from the median\n\n", 100*stabilityBand)
	switch {
	case !quiet:
		fmt.Fprintf(w, "not judged: a run's noise probe found the machine noisy (CV > %.0f%%); rerun on a quiet machine\n", 100*sim.QuietCV)
		return true
	case ok:
		fmt.Fprintf(w, "stable: every * row keeps its significance, each significant ratio within ±%.0f%% of its median\n", 100*stabilityBand)
	default:
		fmt.Fprintln(w, "UNSTABLE: a * row changes significance or moves more than the band")
	}
	return ok
}

func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
