package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
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
	noReview   bool
	profile    time.Duration
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
	fs.BoolVar(&f.noReview, "no-review", false, "do not look up the variants' review verdicts (rows then say \"not reviewed\", never \"clean\")")
	durationFlag(fs, &f.profile, "profile", defaultProfileTime, 0, time.Minute, "length of each variant's profiled run (production allocator: where the time goes, apart from the timed runs); 0 skips it")
	cmd.AddCommand(newReportStabilityCmd())
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
				// The scaling chart: the workload's thread counts and
				// twice GOMAXPROCS, enough points for a curve.
				r.threads = scalingThreads(h.Workload().DefaultThreads)
			}
			r.cfg.Threads = r.threads
			r.command = abCommand(h, r.cfg)
			runs = append(runs, r)
		}
	}
	var vs *verdicts
	if f.noReview {
		vs = &verdicts{skipped: true}
	} else {
		var ids []string
		for _, r := range runs {
			for _, p := range r.h.Patches() {
				ids = append(ids, p.ID)
			}
		}
		var prog io.Writer
		if !f.quiet {
			prog = stderr
		}
		if vs, err = loadVerdicts(cmd.Context(), ids, prog); err != nil {
			return err
		}
	}
	machine := sim.NewMachine(true)
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
		cfg.Machine = machine
		if !r.slubDebug {
			cfg.ProfileTime = f.profile
		}
		t0 := time.Now()
		rep, err := sim.RunContext(cmd.Context(), cfg)
		pr.done()
		r.rep, r.took = rep, time.Since(t0)
		if rep != nil {
			rep.Verdicts = map[string]*sim.Verdict{}
			for _, v := range r.h.Variants() {
				rep.Verdicts[v] = vs.forVariant(r.h, v)
			}
			rep.Review = vs.summary()
		}
		if err != nil {
			if rep != nil && errors.Is(err, context.Canceled) {
				stopped = true
				break
			}
			return fmt.Errorf("%s: %w", r.h.ID(), err)
		}
	}
	machine.Finish()
	var done []*reportRun
	for _, r := range runs {
		if r.rep != nil {
			done = append(done, r)
		}
	}
	out := &reportOut{runs: done, machine: machine, review: vs.summary()}
	if err := writeReportAs(stdout, out, format); err != nil {
		return err
	}
	if f.html != "" {
		if err := writeHTMLFile(f.html, out, cmd.CommandPath(), os.Args); err != nil {
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

// scalingThreads are the worker counts of the scaling chart: ts and
// twice GOMAXPROCS, at least minScalingPoints of them.
func scalingThreads(ts []int) []int {
	out := slices.Clone(ts)
	for _, t := range []int{2 * runtime.GOMAXPROCS(0), 4 * runtime.GOMAXPROCS(0)} {
		if len(out) >= minScalingPoints && slices.Contains(out, 2*runtime.GOMAXPROCS(0)) {
			break
		}
		if !slices.Contains(out, t) && t <= sim.MaxThreads {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
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

// reportOut is what a report prints: its runs, the machine they ran on
// (probed before and after all of them) and where the verdicts came
// from.
type reportOut struct {
	runs    []*reportRun
	machine *sim.Machine
	review  string
}

// ReportSchema names the layout of `vfslab report --format json`.
const ReportSchema = "vfslab-report/1"

// reportJSON is `vfslab report --format json`.
type reportJSON struct {
	Schema   string          `json:"schema"`
	Machine  *sim.Machine    `json:"machine"`
	Review   string          `json:"review"`
	Warnings []string        `json:"warnings"`
	Rows     []sim.ReportRow `json:"rows"`
}

// warnings are the report's warnings: the machine's noise, then every
// count that cannot reach p < 0.05.
func (o *reportOut) warnings() []string {
	out := []string{}
	if w := o.machine.NoiseWarning(); w != "" {
		out = append(out, w)
	}
	seen := map[string]bool{}
	for _, r := range rows(o.runs) {
		if r.CountWarning != "" && !seen[r.CountWarning] {
			seen[r.CountWarning] = true
			out = append(out, "WARNING: "+r.Patch+": "+r.CountWarning)
		}
	}
	return out
}

// writeReportAs writes the report in format: the table of ratios under
// each allocator side by side (text), its rows (json, csv: one per
// allocator), or every run's benchmark lines (benchstat).
func writeReportAs(w io.Writer, o *reportOut, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		rs := rows(o.runs)
		if rs == nil {
			rs = []sim.ReportRow{}
		}
		return enc.Encode(reportJSON{Schema: ReportSchema, Machine: o.machine, Review: o.review, Warnings: o.warnings(), Rows: rs})
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write([]string{"patch", "workload", "slub_debug", "threads", "variant", "against", "metric", "base", "value", "ratio",
			"ratio_lo", "ratio_hi", "p", "min_p", "significant", "noisy", "cv_base", "cv_variant", "seed_ratio", "broken", "verdict",
			"conclusion", "kmalloc_per_op", "base_kmalloc_per_op", "runs", "ops_per_run", "per_op", "unit", "total",
			"bugs", "params", "patches", "events", "command",
			"cpu", "cores", "go_version", "commit", "load_before", "load_after", "noise_cv", "machine_quiet"})
		g := sim.CSVNum
		m := o.machine
		mach := []string{m.CPU, strconv.Itoa(m.Cores), m.GoVersion, m.Commit, sim.LoadCSV(m.LoadBefore), sim.LoadCSV(m.LoadAfter), g(m.NoiseCV()), strconv.FormatBool(m.Quiet())}
		for _, r := range rows(o.runs) {
			seed := ""
			if r.SeedRatio != nil {
				seed = g(*r.SeedRatio)
			}
			cw.Write(append([]string{r.Patch, r.Workload, strconv.FormatBool(r.SlubDebug), strconv.Itoa(r.Threads), r.Variant, r.Against, r.Metric,
				g(r.Base), g(r.Value), g(r.Ratio), ptrNum(r.RatioLo), ptrNum(r.RatioHi), g(r.P), g(r.MinP), strconv.FormatBool(r.Significant),
				strconv.FormatBool(r.Noisy), g(r.CVBase), g(r.CVVariant), seed, strconv.FormatBool(r.Broken), r.Verdict.Short(), r.Conclusion,
				g(r.Kmallocs), g(r.BaseKmalloc),
				strconv.Itoa(r.Runs), strconv.Itoa(r.OpsPerRun), strconv.Itoa(r.PerOp), r.Unit, strconv.Itoa(r.Total),
				strconv.Itoa(r.Bugs), r.Params, r.Patches, deltasText(r.Deltas), r.Command}, mach...))
		}
		cw.Flush()
		return cw.Error()
	case "benchstat":
		for _, r := range o.runs {
			if err := r.rep.WriteBenchstat(w); err != nil {
				return err
			}
		}
		return nil
	}
	writeReportText(w, o, rows(o.runs))
	return nil
}

func ptrNum(v *float64) string {
	if v == nil {
		return ""
	}
	return sim.CSVNum(*v)
}

// deltasText renders the events that moved: "kmalloc 2 -> 0; kfree 2 -> 0".
func deltasText(ds []sim.EventDelta) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.String())
	}
	return strings.Join(out, "; ")
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

// ratioMark renders a row's ratio for the table: "x1.73", with "~" when
// not significant, "?" when noisy, "!" when the variant is broken.
func ratioMark(r *sim.ReportRow) string {
	if r == nil {
		return "-"
	}
	s := "-"
	if !math.IsNaN(r.Ratio) {
		s = "x" + ratioNum(r.Ratio)
	}
	if !r.Significant {
		s = "~" + s
	}
	if r.Noisy {
		s += "?"
	}
	if r.Broken {
		s = "!" + s
	}
	return s
}

// ratioNum formats a ratio: 3 significant digits, whole from 100.
func ratioNum(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// ciText renders a row's interval: "x1.21-x1.90".
func ciText(r *sim.ReportRow) string {
	if r == nil || r.RatioLo == nil || r.RatioHi == nil {
		return "-"
	}
	return "x" + ratioNum(*r.RatioLo) + "-x" + ratioNum(*r.RatioHi)
}

func pText(r *sim.ReportRow) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", r.P)
}

// seedText is the seed's figure beside a row: "x2.06", "(x2.06)" beside
// a broken variant (no reproduction of it), "-" when the seed gives none.
func seedText(r *sim.ReportRow) string {
	if r.SeedRatio == nil {
		return ""
	}
	if r.Broken {
		return fmt.Sprintf("(x%.2f)", *r.SeedRatio)
	}
	return fmt.Sprintf("x%.2f", *r.SeedRatio)
}

// verdictCell is a row's verdict in the table: "clean", "BROKEN" or "not
// reviewed" (the findings are spelled out under the row).
func verdictCell(r *sim.ReportRow) string {
	switch {
	case r.Verdict.Broken():
		return "BROKEN"
	case r.Verdict.Clean():
		return "clean"
	}
	return "not reviewed"
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

// reportLegend explains every column and symbol of the text table.
const reportLegend = `legend:
  T = worker threads; vs = the variant the ratio is against (what the seed's "before" ran);
  ratio = the variant's median speed over vs's (x1.50: 50% faster; x0.50: half as fast), per allocator;
  95% CI = bootstrap interval of the ratio over the interleaved timed runs (A B B A ...);
  p = Mann-Whitney U-test p-value (benchstat's test); ~ = not significant (p >= 0.05);
  ? = noisy: the interval, a side's between-run spread or the machine's noise is larger than the effect;
  ! = broken as posted (verdict BROKEN): the review finds the variant leaking, overflowing, corrupting or
      failing where its base does not; its ratio is no speed-up, and the seed's figure beside it is put in
      parentheses: a broken posting does not reproduce it;
  seed = the same ratio from the seed's posted figures (empty: the seed reports none);
  verdict = vfslab review's verdict on the variant (clean, BROKEN, or not reviewed), findings under the row;
  => = what to conclude; events/op = exact counts per operation from the counting run (vs -> variant);
  time/op = where the time moved, by model function, from a separate profiled run (production allocator);
  not modelled = a kernel cost of the events that moved which the simulator lacks (said once a headline, never
      added to a ratio).
`

// writeReportText writes the report as one table, grouped by headline:
// each variant's ratio under the production allocator and under
// slub_debug side by side with its interval and p-value, the seed's
// figure and the verdict; under each row what to conclude, the findings,
// the events that moved, where the time went and what the model lacks;
// under each headline what ran; then a legend. It fits TextWidth columns.
func writeReportText(w io.Writer, o *reportOut, rs []sim.ReportRow) {
	type key struct {
		patch   string
		threads int
		variant string
	}
	var lines []*reportLine
	byKey := map[key]*reportLine{}
	hasProd, hasDebug := false, false
	for i := range rs {
		r := &rs[i]
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
	}
	var allocs []string
	if hasProd {
		allocs = append(allocs, "the production allocator")
	}
	if hasDebug {
		allocs = append(allocs, "slub_debug")
	}
	sim.WrapLine(w, "", fmt.Sprintf("vfslab report: each variant against the variant its seed's \"before\" ran (vs), on the seed's workload, under %s.", strings.Join(allocs, " and under ")))
	sim.WrapLine(w, "machine: ", o.machine.String())
	sim.WrapLine(w, "", o.review)
	for _, warn := range o.warnings() {
		sim.WrapLine(w, "", warn)
	}
	fmt.Fprintln(w)
	t := &sim.Table{Head: []string{"variant", "T", "vs", "production", "95% CI", "p", "slub_debug", "95% CI", "p", "seed", "verdict"},
		Right: []bool{false, true, false, true, true, true, true, true, true, true, false}}
	if !hasProd {
		t.Head[3], t.Head[4], t.Head[5] = "", "", ""
	}
	last := ""
	said := map[string]bool{} // the missing costs said, by headline
	for _, l := range lines {
		r := l.any()
		if r.Patch != last {
			last = r.Patch
			t.Span("", headlineHeading(l, lines))
		}
		t.Row(r.Variant, strconv.Itoa(r.Threads), r.Against,
			ifRow(hasProd, ratioMark(l.prod)), ifRow(hasProd, ciText(l.prod)), ifRow(hasProd, pText(l.prod)),
			ifRow(hasDebug, ratioMark(l.debug)), ifRow(hasDebug, ciText(l.debug)), ifRow(hasDebug, pText(l.debug)),
			seedText(r), verdictCell(r))
		for _, c := range []*sim.ReportRow{l.prod, l.debug} {
			if c == nil {
				continue
			}
			who := "production"
			if c.SlubDebug {
				who = "slub_debug"
			}
			t.Span("  => ", who+": "+c.Conclusion)
		}
		if r.Verdict.Broken() {
			for i, f := range r.Verdict.Findings {
				prefix := "     finding:  "
				if i > 0 {
					prefix = "               "
				}
				t.Span(prefix, shorten(f.Text, sim.TextWidth-len(prefix)))
			}
		}
		if c := l.prod; c != nil {
			if len(c.Deltas) > 0 {
				t.Span("     events/op: ", deltasText(firstDeltas(c.Deltas, 6)))
			}
			if len(c.ProfileDeltas) > 0 {
				t.Span("     time/op: ", profileText(c.ProfileDeltas, c.ProfileSamples))
			}
		}
		// What the model lacks, once per headline.
		for _, c := range []*sim.ReportRow{l.prod, l.debug} {
			if c == nil {
				continue
			}
			for _, m := range c.Missing {
				if said[r.Patch+m] {
					continue
				}
				said[r.Patch+m] = true
				label := "     not modelled: "
				if c.SlubDebug {
					label = "     not modelled (slub_debug): "
				}
				t.Span(label, m)
			}
		}
	}
	t.Write(w)
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
		sim.WrapLine(w, r.Patch+": ", "here "+here+"; seed: "+r.Seed)
		if r.Explain != "" {
			sim.WrapLine(w, "  why this order: ", r.Explain)
		}
	}
	seen = map[string]bool{}
	for _, l := range lines {
		r := l.any()
		if !seen[r.Workload] {
			seen[r.Workload] = true
			if wl, err := sim.Lookup(r.Workload); err == nil {
				sim.WrapLine(w, r.Workload+": 1 op = ", wl.Summary)
			}
		}
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, reportLegend)
	fmt.Fprintln(w, "('vfslab report --format json' has each row's speeds, interval, events, profile and vfslab ab command.)")
}

func ifRow(on bool, s string) string {
	if !on {
		return ""
	}
	return s
}

// headlineHeading is the line that opens a headline's rows: its ID, its
// workload, what one operation is and what each allocator ran.
func headlineHeading(first *reportLine, lines []*reportLine) string {
	r := first.any()
	s := fmt.Sprintf("%s on %s:", r.Patch, r.Workload)
	for _, c := range []*sim.ReportRow{first.prod, first.debug} {
		if c == nil {
			continue
		}
		a := "production"
		if c.SlubDebug {
			a = "slub_debug"
		}
		s += fmt.Sprintf(" %s ran %s;", a, ranText(*c))
	}
	return strings.TrimSuffix(s, ";")
}

func firstDeltas(ds []sim.EventDelta, n int) []sim.EventDelta {
	if len(ds) > n {
		return ds[:n]
	}
	return ds
}

// profileText renders the time per operation that moved: "fscrypt.X
// -1.2µs, kmem.Kmalloc -0.8µs (60 samples)".
func profileText(ds []sim.FuncShare, samples int) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, fmt.Sprintf("%s %s", d.Func, sim.SignedDuration(d.NsPerOp)))
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(" (profiled run, %d samples a side)", samples)
}

// shorten cuts s to at most n runes, with "…".
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
