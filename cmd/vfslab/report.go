package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/vfslab/vfslab/sim"
)

// reportFlags are the flags of `vfslab report`.
type reportFlags struct {
	count     int
	runtime   time.Duration
	only      string
	out       formatFlags
	html      string
	slubDebug bool
	quiet     bool
}

func newReportCmd() *cobra.Command {
	f := &reportFlags{}
	var ids []string
	for _, h := range sim.Headlines() {
		ids = append(ids, h.Patch.ID)
	}
	cmd := &cobra.Command{
		Use:   "report [flags]",
		Short: "run every patch's headline workload and print the measured effect beside the seed's (the default)",
		Long: `Runs, for each modelled patch, the workload that reproduces the figure its
seed reported (vfslab ab with small defaults), and prints each variant's
measured speed ratio to the base beside the seed's. Ratios come from one
run of the simulator on this machine; the seeds' come from their kernels
and CPUs, so the shapes are comparable, the magnitudes are not always:
see 'vfslab ab' for full reports with events and confidence intervals.

A ratio prefixed with "~" is not significant (benchstat's Mann-Whitney
U-test, p >= 0.05). For create, one operation is a whole run of the seed's
program (n creates), so its ops/s are runs per second.

--html FILE also writes one self-contained HTML page with SVG charts:
each patch's ratios beside its seed's under both allocators (production
and slub_debug: the report then runs twice), open1's scaling with threads,
and the events per operation of every variant, each with the vfslab ab
command that reproduces it.`,
		Example: `  vfslab report
  vfslab report --patch fscrypt-v1-kdf --count 3 --format benchstat
  vfslab report --count 3 --runtime 50ms --html report.html`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.only != "" {
				found := false
				for _, id := range ids {
					found = found || id == f.only
				}
				if !found {
					return usagef("--patch %q: unknown patch; valid: %s", f.only, strings.Join(ids, ", "))
				}
			}
			return runReport(cmd, f)
		},
	}
	fs := cmd.Flags()
	intFlag(fs, &f.count, "count", 5, 1, sim.MaxCount, "timed runs per variant")
	durationFlag(fs, &f.runtime, "runtime", 100*time.Millisecond, time.Millisecond, sim.MaxRunTime, "target duration of one timed run")
	fs.StringVar(&f.only, "patch", "", "only this patch ("+strings.Join(ids, ", ")+")")
	f.out.define(fs)
	fs.StringVar(&f.html, "html", "", "also write an HTML report with SVG charts to FILE (runs both allocators)")
	fs.BoolVar(&f.slubDebug, "slub-debug", false, "allocate as a slub_debug=FZPU (debug/userdebug) kernel does, as the seeds' Android kernels did")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "do not print progress to stderr")
	return cmd
}

// reportRun is one headline measured under one allocator.
type reportRun struct {
	h         *sim.Headline
	slubDebug bool
	threads   []int
	rep       *sim.Report
	command   string
}

func runReport(cmd *cobra.Command, f *reportFlags) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	format, err := f.out.resolve(cmd.Flags())
	if err != nil {
		return err
	}
	if f.html != "" {
		if err := checkWritable(f.html); err != nil {
			return usageError{"--html: " + err.Error()}
		}
	}
	allocs := []bool{f.slubDebug}
	if f.html != "" {
		allocs = []bool{false, true}
	}
	var runs []*reportRun
	for _, h := range sim.Headlines() {
		if f.only != "" && h.Patch.ID != f.only {
			continue
		}
		for _, sd := range allocs {
			r := &reportRun{h: h, slubDebug: sd, threads: h.Threads}
			if f.html != "" && len(h.Threads) > 0 && !sd {
				// The scaling chart: the workload's thread counts.
				r.threads = h.Workload().DefaultThreads
			}
			r.command = abCommand(h, r.threads, f.count, f.runtime, sd)
			runs = append(runs, r)
		}
	}
	pr := newProgress(stderr, f.quiet)
	var stopped bool
	for _, r := range runs {
		p, w := r.h.Patch, r.h.Workload()
		pr.label = "vfslab report: " + p.ID
		if r.slubDebug {
			pr.label += " (slub_debug)"
		}
		rep, err := sim.RunContext(cmd.Context(), sim.Config{Workload: w, Patch: p, Threads: r.threads, Count: f.count,
			RunTime: f.runtime, Seed: 1, Params: r.h.Params, SlubDebug: r.slubDebug, OnProgress: pr.event})
		pr.done()
		r.rep = rep
		if err != nil {
			if rep != nil && errors.Is(err, context.Canceled) {
				stopped = true
				break
			}
			return fmt.Errorf("%s: %w", p.ID, err)
		}
	}
	var done []*reportRun
	for _, r := range runs {
		if r.rep != nil {
			done = append(done, r)
		}
	}
	if err := writeReportAs(stdout, done, format, f.slubDebug); err != nil {
		return err
	}
	if f.html != "" {
		if err := writeHTMLFile(f.html, done, cmd.CommandPath(), os.Args); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "vfslab report: wrote %s\n", f.html)
	}
	if stopped {
		return &statusError{status: interrupted, msg: "interrupted: printed the rows measured so far"}
	}
	return nil
}

// abCommand is the vfslab ab command line that measures what one report
// run measures.
func abCommand(h *sim.Headline, threads []int, count int, rt time.Duration, slubDebug bool) string {
	c := []string{"vfslab", "ab", "--workload", h.Workload().Name, "--patch", h.Patch.ID}
	var ps []string
	for k, v := range h.Params {
		ps = append(ps, "--param "+k+"="+v)
	}
	sort.Strings(ps)
	c = append(c, ps...)
	if len(threads) > 0 {
		var ts []string
		for _, t := range threads {
			ts = append(ts, strconv.Itoa(t))
		}
		c = append(c, "--threads", strings.Join(ts, ","))
	}
	c = append(c, "--count", strconv.Itoa(count), "--runtime", rt.String(), "--seed", "1")
	if slubDebug {
		c = append(c, "--slub-debug")
	}
	return strings.Join(c, " ")
}

// rows turns the runs into the report's rows: every variant but the base
// at every thread count, each with the vfslab ab command that measures it.
func rows(runs []*reportRun) []sim.ReportRow {
	var out []sim.ReportRow
	for _, r := range runs {
		for _, row := range r.h.Rows(r.rep, r.slubDebug) {
			row.Command = r.command
			out = append(out, row)
		}
	}
	return out
}

// writeReportAs writes the runs in format: the table of ratios (text),
// its rows (json, csv), or every run's benchmark lines (benchstat).
func writeReportAs(w io.Writer, runs []*reportRun, format string, slubDebug bool) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		rs := rows(runs)
		if rs == nil {
			rs = []sim.ReportRow{}
		}
		return enc.Encode(rs)
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write([]string{"patch", "workload", "slub_debug", "threads", "variant", "metric", "base", "value", "ratio", "p",
			"significant", "seed_ratio", "kmalloc_per_op", "base_kmalloc_per_op", "runs", "bugs", "params", "command"})
		g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
		for _, r := range rows(runs) {
			seed := ""
			if r.SeedRatio != nil {
				seed = g(*r.SeedRatio)
			}
			cw.Write([]string{r.Patch, r.Workload, strconv.FormatBool(r.SlubDebug), strconv.Itoa(r.Threads), r.Variant, r.Metric,
				g(r.Base), g(r.Value), g(r.Ratio), g(r.P), strconv.FormatBool(r.Significant), seed, g(r.Kmallocs), g(r.BaseKmalloc),
				strconv.Itoa(r.Runs), strconv.Itoa(r.Bugs), r.Params, r.Command})
		}
		cw.Flush()
		return cw.Error()
	case "benchstat":
		for _, r := range runs {
			if err := r.rep.WriteBenchstat(w); err != nil {
				return err
			}
		}
		return nil
	}
	// Text: the allocator the command line asked for (--html runs both;
	// the table shows the one asked for).
	var sel []*reportRun
	for _, r := range runs {
		if r.slubDebug == slubDebug {
			sel = append(sel, r)
		}
	}
	writeReportText(w, rows(sel), slubDebug)
	return nil
}

func writeReportText(w io.Writer, rows []sim.ReportRow, slubDebug bool) {
	alloc := "production allocator"
	if slubDebug {
		alloc = "slub_debug allocator"
	}
	fmt.Fprintf(w, "Each variant against its patch's base on the seed's workload (%s).\n", alloc)
	fmt.Fprintln(w, "ratio = variant speed / base speed (~: not significant, p >= 0.05); seed = the same ratio from the patch's own figures.")
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "patch\tworkload\tT\tvariant\tbase speed\tvariant speed\tratio\tp\tseed\tkmalloc/op (base -> variant)\t")
	last := ""
	for _, r := range rows {
		seed := "-"
		if r.SeedRatio != nil {
			seed = fmt.Sprintf("x%.2f", *r.SeedRatio)
		}
		name := r.Patch
		if name == last {
			name = ""
		}
		last = r.Patch
		note := ""
		if r.Bugs > 0 {
			note = fmt.Sprintf(" (%d BUG reports)", r.Bugs)
		}
		ratio := fmt.Sprintf("x%.2f", r.Ratio)
		if !r.Significant {
			ratio = "~" + ratio
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s %s\t%s %s\t%s\t%.3f\t%s\t%s -> %s%s\t\n", name, r.Workload, r.Threads, r.Variant,
			sim.FormatNum(r.Base), r.Metric, sim.FormatNum(r.Value), r.Metric, ratio, r.P, seed,
			sim.FormatNum(r.BaseKmalloc), sim.FormatNum(r.Kmallocs), note)
	}
	tw.Flush()
	fmt.Fprintln(w)
	seen := map[string]bool{}
	for _, r := range rows {
		if !seen[r.Patch] {
			seen[r.Patch] = true
			fmt.Fprintf(w, "%s: here %s (%s); seed: %s\n", r.Patch, r.Workload, r.Params, r.Seed)
			if r.Explain != "" {
				fmt.Fprintf(w, "  why this order: %s\n", r.Explain)
			}
		}
	}
	seen = map[string]bool{}
	for _, r := range rows {
		if !seen[r.Workload] {
			seen[r.Workload] = true
			if wl, err := sim.Lookup(r.Workload); err == nil {
				fmt.Fprintf(w, "%s: 1 op = %s\n", r.Workload, wl.Summary)
			}
		}
	}
	fmt.Fprintf(w, "(GOMAXPROCS %d; 'vfslab report --format json' has each row's vfslab ab command)\n", runtime.GOMAXPROCS(0))
}
