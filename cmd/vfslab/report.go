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
	count      int
	runtime    time.Duration
	only       string
	out        formatFlags
	html       string
	allocators string
	slubDebug  bool
	quiet      bool
}

// The allocators a report runs under (--allocators).
const (
	allocBoth       = "both"
	allocProduction = "production"
	allocSlubDebug  = "slub_debug"
)

func newReportCmd() *cobra.Command {
	f := &reportFlags{}
	var ids []string
	for _, h := range sim.Headlines() {
		ids = append(ids, h.ID())
	}
	cmd := &cobra.Command{
		Use:   "report [flags]",
		Short: "run every patch's headline workload and print the measured effect beside the seed's (the default)",
		Long: `Runs, for each modelled patch, the workload that reproduces the figure its
seed reported (vfslab ab with each headline's own operation counts), under
the production allocator and under slub_debug, and prints each variant's
measured speed ratio under both side by side, beside the seed's. The seeds'
Android kernels were userdebug builds (slub_debug on), and their thread
asked whether debug options explain the gain; the production column is a
kernel without them. A headline over several patches (seeds 000 and 001
together) compares every patch at its base with the patches as posted.

Each ratio is against the variant the seed's "before" figure ran (the vs
column): the patch's base, except fscrypt-v1-kdf, whose "~7000 cycles
before" is the 6.17 sync code it replaced. A ratio prefixed with "~" is
not significant (benchstat's Mann-Whitney U-test, p >= 0.05). Every row
says what it ran: timed runs x operations per worker per run, and for
create the files each operation creates (one operation is a whole run of
the seed's program). slub_debug rows may run fewer operations or create
fewer files; they say so. Ratios come from the simulator on this machine;
the seeds' from their kernels and CPUs, so the shapes are comparable, the
magnitudes are not always: see 'vfslab ab' for full reports with events
and confidence intervals.

The default report fits in about a minute on two cores: each headline
fixes its operation counts (docs/CLI.md). --count overrides the timed runs
of every headline; --runtime calibrates every run to that duration instead
of the fixed counts.

--html FILE also writes one self-contained HTML page with SVG charts:
each patch's ratios beside its seed's under both allocators, open1's
scaling with threads, and the events per operation of every variant, each
with the vfslab ab command that reproduces it.`,
		Example: `  vfslab report
  vfslab report --allocators production
  vfslab report --patch fscrypt-v1-kdf --count 3 --format benchstat
  vfslab report --count 3 --runtime 50ms --html report.html`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.only != "" {
				found := false
				for _, h := range sim.Headlines() {
					found = found || selected(h, f.only)
				}
				if !found {
					return usagef("--patch %q: unknown patch; valid: %s", f.only, strings.Join(ids, ", "))
				}
			}
			if f.slubDebug {
				if cmd.Flags().Changed("allocators") && f.allocators != allocSlubDebug {
					return usagef("--slub-debug conflicts with --allocators %s", f.allocators)
				}
				f.allocators = allocSlubDebug
			}
			return runReport(cmd, f)
		},
	}
	fs := cmd.Flags()
	intFlag(fs, &f.count, "count", 0, 1, sim.MaxCount, "timed runs per variant (default: each headline's, stated in its rows)")
	durationFlag(fs, &f.runtime, "runtime", 0, time.Millisecond, sim.MaxRunTime, "calibrate every timed run to this duration instead of each headline's operation count")
	fs.StringVar(&f.only, "patch", "", "only the headlines of this patch ("+strings.Join(ids, ", ")+")")
	f.out.define(fs)
	fs.StringVar(&f.html, "html", "", "also write an HTML report with SVG charts to FILE")
	choiceFlag(fs, &f.allocators, "allocators", allocBoth, []string{allocBoth, allocProduction, allocSlubDebug},
		"the allocators to run under: the production allocator, slub_debug=FZPU (the seeds' userdebug kernels), or both side by side")
	fs.BoolVar(&f.slubDebug, "slub-debug", false, "only slub_debug (--allocators slub_debug)")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "do not print progress to stderr")
	return cmd
}

// reportRun is one headline measured under one allocator.
type reportRun struct {
	h         *sim.Headline
	slubDebug bool
	threads   []int
	cfg       sim.Config
	rep       *sim.Report
	command   string
	took      time.Duration
}

// allocatorsOf lists the allocators (slub_debug or not) a report runs.
func allocatorsOf(f *reportFlags) []bool {
	switch f.allocators {
	case allocProduction:
		return []bool{false}
	case allocSlubDebug:
		return []bool{true}
	}
	return []bool{false, true}
}

// selected reports whether headline h is one --patch asks for: all when
// empty, else those of that patch (a headline over several patches
// included) or that headline.
func selected(h *sim.Headline, only string) bool {
	if only == "" || h.ID() == only {
		return true
	}
	for _, p := range h.Patches() {
		if p.ID == only {
			return true
		}
	}
	return false
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
	allocs := allocatorsOf(f)
	var runs []*reportRun
	for _, h := range sim.Headlines() {
		if !selected(h, f.only) {
			continue
		}
		for _, sd := range allocs {
			r := &reportRun{h: h, slubDebug: sd, threads: h.Threads}
			r.cfg = h.Config(sim.Config{Count: f.count, RunTime: f.runtime}, sd)
			if r.cfg.Count == 0 {
				r.cfg.Count = 5
			}
			if r.cfg.Ops == 0 && r.cfg.RunTime == 0 {
				r.cfg.RunTime = 100 * time.Millisecond
			}
			if f.html != "" && len(h.Threads) > 0 && !sd {
				// The scaling chart: the workload's thread counts.
				r.threads = h.Workload().DefaultThreads
			}
			r.cfg.Threads = r.threads
			r.command = abCommand(h, r.cfg)
			runs = append(runs, r)
		}
	}
	pr := newProgress(stderr, f.quiet)
	start := time.Now()
	var stopped bool
	for _, r := range runs {
		pr.label = "vfslab report: " + r.h.ID()
		if r.slubDebug {
			pr.label += " (slub_debug)"
		}
		cfg := r.cfg
		cfg.OnProgress = pr.event
		t0 := time.Now()
		rep, err := sim.RunContext(cmd.Context(), cfg)
		pr.done()
		r.rep, r.took = rep, time.Since(t0)
		if err != nil {
			if rep != nil && errors.Is(err, context.Canceled) {
				stopped = true
				break
			}
			return fmt.Errorf("%s: %w", r.h.ID(), err)
		}
	}
	var done []*reportRun
	for _, r := range runs {
		if r.rep != nil {
			done = append(done, r)
		}
	}
	if err := writeReportAs(stdout, done, format); err != nil {
		return err
	}
	if f.html != "" {
		if err := writeHTMLFile(f.html, done, cmd.CommandPath(), os.Args); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "vfslab report: wrote %s\n", f.html)
	}
	if !f.quiet {
		var took []string
		for _, r := range done {
			a := "production"
			if r.slubDebug {
				a = "slub_debug"
			}
			took = append(took, fmt.Sprintf("%s (%s) %.1f s", r.h.ID(), a, r.took.Seconds()))
		}
		fmt.Fprintf(stderr, "vfslab report: %d runs in %.1f s: %s\n", len(done), time.Since(start).Seconds(), strings.Join(took, ", "))
	}
	if stopped {
		return &statusError{status: interrupted, msg: "interrupted: printed the rows measured so far"}
	}
	return nil
}

// abCommand is the vfslab ab command line that measures what one report
// run measures. A headline over several patches is two machines that one
// vfslab ab run cannot name; the line then gives the two runs that measure
// each (the report interleaves them).
func abCommand(h *sim.Headline, cfg sim.Config) string {
	c := []string{"vfslab", "ab", "--workload", h.Workload().Name, "--patch", h.Patch.ID}
	var ps []string
	for k, v := range cfg.Params {
		ps = append(ps, "--param "+k+"="+v)
	}
	sort.Strings(ps)
	c = append(c, ps...)
	if len(cfg.Threads) > 0 {
		var ts []string
		for _, t := range cfg.Threads {
			ts = append(ts, strconv.Itoa(t))
		}
		c = append(c, "--threads", strings.Join(ts, ","))
	}
	if cfg.Ops > 0 {
		c = append(c, "--ops", strconv.Itoa(cfg.Ops))
	} else {
		c = append(c, "--runtime", cfg.RunTime.String())
	}
	c = append(c, "--count", strconv.Itoa(cfg.Count), "--seed", "1")
	if cfg.SlubDebug {
		c = append(c, "--slub-debug")
	}
	if len(h.Together) == 0 {
		if vs := h.Variants(); vs[0] != h.Patch.Variants[0].Name {
			c = append(c, "--variants", strings.Join(vs, ","))
		}
		return strings.Join(c, " ")
	}
	// base+base, then the patches as posted.
	one := strings.Join(c, " ")
	var others []string
	for _, ch := range h.Together[1:] {
		others = append(others, ch.Patch.ID+"="+ch.Variant)
	}
	return one + " --variants " + h.Patch.Variants[0].Name + " ; " + one + " --variants " + h.Together[0].Variant +
		" --patches " + strings.Join(others, ",")
}

// rows turns the runs into the report's rows: every variant but the one
// compared with at every thread count, each with the vfslab ab command
// that measures it.
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

// writeReportAs writes the runs in format: the table of ratios under each
// allocator side by side (text), its rows (json, csv: one per allocator),
// or every run's benchmark lines (benchstat).
func writeReportAs(w io.Writer, runs []*reportRun, format string) error {
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
		cw.Write([]string{"patch", "workload", "slub_debug", "threads", "variant", "against", "metric", "base", "value", "ratio", "p",
			"significant", "seed_ratio", "kmalloc_per_op", "base_kmalloc_per_op", "runs", "ops_per_run", "per_op", "unit", "total",
			"bugs", "params", "patches", "events", "command"})
		g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
		for _, r := range rows(runs) {
			seed := ""
			if r.SeedRatio != nil {
				seed = g(*r.SeedRatio)
			}
			cw.Write([]string{r.Patch, r.Workload, strconv.FormatBool(r.SlubDebug), strconv.Itoa(r.Threads), r.Variant, r.Against, r.Metric,
				g(r.Base), g(r.Value), g(r.Ratio), g(r.P), strconv.FormatBool(r.Significant), seed, g(r.Kmallocs), g(r.BaseKmalloc),
				strconv.Itoa(r.Runs), strconv.Itoa(r.OpsPerRun), strconv.Itoa(r.PerOp), r.Unit, strconv.Itoa(r.Total),
				strconv.Itoa(r.Bugs), r.Params, r.Patches, eventsText(r), r.Command})
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
	writeReportText(w, rows(runs))
	return nil
}

// ranText says what a row ran: "5x1x1000 creates" (timed runs x
// operations per worker per run x units per operation) or "5x30000".
func ranText(r sim.ReportRow) string {
	s := fmt.Sprintf("%dx%d", r.Runs, r.OpsPerRun)
	if r.PerOp > 0 {
		s += fmt.Sprintf("x%d %s", r.PerOp, r.Unit)
	}
	return s
}

// eventsText renders a row's events: "kernel_fpu_begin 2 -> 4".
func eventsText(r sim.ReportRow) string {
	var names []string
	for n := range r.Events {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		e := r.Events[n]
		out = append(out, fmt.Sprintf("%s %s -> %s", n, sim.FormatNum(e.Against), sim.FormatNum(e.Variant)))
	}
	return strings.Join(out, "; ")
}

// ratioText is a row's ratio with its p-value: "x1.73 p=0.008", "~x1.10
// p=0.690", with the BUG reports of its counting run.
func ratioText(r sim.ReportRow) string {
	s := fmt.Sprintf("x%.2f p=%.3f", r.Ratio, r.P)
	if !r.Significant {
		s = "~" + s
	}
	if r.Bugs > 0 {
		s += fmt.Sprintf(" (%d BUG reports)", r.Bugs)
	}
	return s
}

// reportLine is one line of the text table: a variant of a headline at a
// thread count, under each allocator it ran.
type reportLine struct {
	prod, debug *sim.ReportRow
}

func (l reportLine) any() *sim.ReportRow {
	if l.prod != nil {
		return l.prod
	}
	return l.debug
}

// writeReportText writes the rows as one table, each variant's ratio under
// the production allocator and under slub_debug side by side, each with
// what it ran.
func writeReportText(w io.Writer, rows []sim.ReportRow) {
	type key struct {
		patch   string
		threads int
		variant string
	}
	var lines []*reportLine
	byKey := map[key]*reportLine{}
	hasProd, hasDebug, hasEvents := false, false, false
	for i := range rows {
		r := &rows[i]
		k := key{r.Patch, r.Threads, r.Variant}
		l := byKey[k]
		if l == nil {
			l = &reportLine{}
			byKey[k] = l
			lines = append(lines, l)
		}
		if r.SlubDebug {
			l.debug, hasDebug = r, true
		} else {
			l.prod, hasProd = r, true
		}
		hasEvents = hasEvents || len(r.Events) > 0
	}
	var allocs []string
	if hasProd {
		allocs = append(allocs, "the production allocator")
	}
	if hasDebug {
		allocs = append(allocs, "slub_debug")
	}
	fmt.Fprintf(w, "Each variant against the variant its seed's \"before\" ran (vs), on the seed's workload, under %s.\n", strings.Join(allocs, " and under "))
	fmt.Fprintln(w, "ratio = variant speed / vs speed (~: not significant, p >= 0.05); seed = the same ratio from the seed's figures;")
	fmt.Fprintln(w, "ran = timed runs x operations per worker per run (x what one operation is: files created, MiB read), for each variant.")
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "patch\tworkload\tT\tvariant\tvs\t"
	if hasProd {
		head += "production ratio\tran\tkmalloc/op\t"
	}
	if hasDebug {
		head += "slub_debug ratio\tslub_debug ran\tslub_debug kmalloc/op\t"
	}
	head += "seed\t"
	if hasEvents {
		head += "events/op (vs -> variant, production)\t"
	}
	fmt.Fprintln(tw, head)
	last := ""
	for _, l := range lines {
		r := l.any()
		name := r.Patch
		if name == last {
			name = ""
		}
		last = r.Patch
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t", name, r.Workload, r.Threads, r.Variant, r.Against)
		for _, c := range []struct {
			on  bool
			row *sim.ReportRow
		}{{hasProd, l.prod}, {hasDebug, l.debug}} {
			if !c.on {
				continue
			}
			if c.row == nil {
				fmt.Fprint(tw, "-\t-\t-\t")
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s -> %s\t", ratioText(*c.row), ranText(*c.row), sim.FormatNum(c.row.BaseKmalloc), sim.FormatNum(c.row.Kmallocs))
		}
		seed := "-"
		if r.SeedRatio != nil {
			seed = fmt.Sprintf("x%.2f", *r.SeedRatio)
		}
		fmt.Fprintf(tw, "%s\t", seed)
		if hasEvents {
			fmt.Fprintf(tw, "%s\t", eventsText(*r))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintln(w)
	seen := map[string]bool{}
	for _, l := range lines {
		r := l.any()
		if seen[r.Patch] {
			continue
		}
		seen[r.Patch] = true
		here := fmt.Sprintf("%s (%s)", r.Workload, r.Params)
		if l.prod != nil && l.debug != nil && l.prod.Params != l.debug.Params {
			here = fmt.Sprintf("%s (%s; slub_debug: %s)", r.Workload, l.prod.Params, l.debug.Params)
		}
		if r.Patches != "" {
			here += ", variant = " + r.Patches
		}
		fmt.Fprintf(w, "%s: here %s; seed: %s\n", r.Patch, here, r.Seed)
		if r.Explain != "" {
			fmt.Fprintf(w, "  why this order: %s\n", r.Explain)
		}
	}
	seen = map[string]bool{}
	for _, l := range lines {
		r := l.any()
		if !seen[r.Workload] {
			seen[r.Workload] = true
			if wl, err := sim.Lookup(r.Workload); err == nil {
				fmt.Fprintf(w, "%s: 1 op = %s\n", r.Workload, wl.Summary)
			}
		}
	}
	fmt.Fprintf(w, "(GOMAXPROCS %d; 'vfslab report --format json' has each row's speeds and vfslab ab command)\n", runtime.GOMAXPROCS(0))
}
