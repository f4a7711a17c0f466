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
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/sim"
)

// headline is the workload that reproduces a seed's reported figure, and
// that figure as a speed ratio (variant over base, higher is faster).
type headline struct {
	patch    string
	workload string
	params   map[string]string
	threads  []int
	metric   string // "ops/s" or "MB/s"
	// compare lists the variants whose ratio to the base the seed reports.
	compare   []string
	seedRatio []float64
	seed      string
}

// headlines are the five seeds' figures (../shared/seeds, patches.md),
// converted to speed ratios against the base variant.
var headlines = []headline{
	{
		patch: "fscrypt-fname-onstack", workload: "create",
		params:  map[string]string{"n": "1000"},
		metric:  "ops/s",
		compare: []string{"v2", "upstream"}, seedRatio: []float64{15.05 / 7.99, math.NaN()},
		seed: "2000 creates, casefolded+encrypted f2fs, Snapdragon 8s Gen4 6.6 userdebug: 15.05 s -> 7.99 s (mean of 3)",
	},
	{
		patch: "f2fs-lookup-prealloc", workload: "create",
		params:  map[string]string{"n": "1000"},
		metric:  "ops/s",
		compare: []string{"v2", "v4"}, seedRatio: []float64{15.05 / 8.16, math.NaN()},
		seed: "2000 creates, casefolded+encrypted f2fs, Snapdragon 8s Gen4 6.16 userdebug: 15.05 s -> 8.16 s (mean of 3)",
	},
	{
		patch: "fscrypt-v1-kdf", workload: "v1kdf",
		metric:  "ops/s",
		compare: []string{"sync", "aeslib"}, seedRatio: []float64{math.NaN(), 7000.0 / 1500},
		seed: "Ryzen 9 9950X: ~7000 -> ~1500 cycles per derived key (HKDF-SHA512 ~3500)",
	},
	{
		patch: "crypto-bio", workload: "read",
		params:  map[string]string{"mib": "64"},
		metric:  "MB/s",
		compare: []string{"inline", "chain", "bio"}, seedRatio: []float64{2.4 / 2.5, 1, 2.4 / 2.1},
		seed: "8 GB file, ext4 on loop on tmpfs, xts-vaes: workqueue 2.4 s, inline 2.5 s, chain ~2.4 s, bio 2.1 s",
	},
	{
		patch: "fscrypt-file-open", workload: "open1",
		params:  map[string]string{"fs": "ext4"},
		threads: []int{2},
		metric:  "ops/s",
		compare: []string{"v1", "v2"}, seedRatio: []float64{math.NaN(), 25575494.0 / 12539898},
		seed: "will-it-scale open1_processes -t 20, Sapphire Rapids: 12,539,898 -> 25,575,494 ops/s",
	},
}

// reportRow is one line of the report: a variant's measured ratio to the
// base beside the seed's.
type reportRow struct {
	Patch       string   `json:"patch"`
	Workload    string   `json:"workload"`
	SlubDebug   bool     `json:"slub_debug"`
	Threads     int      `json:"threads"`
	Variant     string   `json:"variant"`
	Metric      string   `json:"metric"`
	Base        float64  `json:"base"`
	Value       float64  `json:"value"`
	Ratio       float64  `json:"ratio"`
	P           float64  `json:"p"`
	Significant bool     `json:"significant"`
	SeedRatio   *float64 `json:"seed_ratio,omitempty"`
	Seed        string   `json:"seed"`
	Kmallocs    float64  `json:"kmalloc_per_op"`
	BaseKmalloc float64  `json:"base_kmalloc_per_op"`
	Params      string   `json:"params,omitempty"`
	Bugs        int      `json:"bugs,omitempty"`
	Runs        int      `json:"runs"`
	Command     string   `json:"command"`
}

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
	for _, h := range headlines {
		ids = append(ids, h.patch)
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
	h         *headline
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
	for i := range headlines {
		h := &headlines[i]
		if f.only != "" && h.patch != f.only {
			continue
		}
		for _, sd := range allocs {
			r := &reportRun{h: h, slubDebug: sd, threads: h.threads}
			if f.html != "" && h.workload == "open1" && !sd {
				// The scaling chart: the workload's thread counts.
				w, _ := sim.Lookup(h.workload)
				r.threads = w.DefaultThreads
			}
			r.command = abCommand(h, r.threads, f.count, f.runtime, sd)
			runs = append(runs, r)
		}
	}
	pr := newProgress(stderr, f.quiet)
	var stopped bool
	for _, r := range runs {
		p, ok := patch.Lookup(r.h.patch)
		if !ok {
			return fmt.Errorf("patch %s is not registered", r.h.patch)
		}
		w, err := sim.Lookup(r.h.workload)
		if err != nil {
			return err
		}
		pr.label = "vfslab report: " + r.h.patch
		if r.slubDebug {
			pr.label += " (slub_debug)"
		}
		rep, err := sim.RunContext(cmd.Context(), sim.Config{Workload: w, Patch: p, Threads: r.threads, Count: f.count,
			RunTime: f.runtime, Seed: 1, Params: r.h.params, SlubDebug: r.slubDebug, OnProgress: pr.event})
		pr.done()
		r.rep = rep
		if err != nil {
			if rep != nil && errors.Is(err, context.Canceled) {
				stopped = true
				break
			}
			return fmt.Errorf("%s: %w", r.h.patch, err)
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
func abCommand(h *headline, threads []int, count int, rt time.Duration, slubDebug bool) string {
	c := []string{"vfslab", "ab", "--workload", h.workload, "--patch", h.patch}
	var ps []string
	for k, v := range h.params {
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
// at every thread count.
func rows(runs []*reportRun) []reportRow {
	var out []reportRow
	for _, r := range runs {
		h := r.h
		for _, g := range r.rep.Groups {
			base := g.Measurements[0]
			bst := base.Stats(nil)
			for _, m := range g.Measurements[1:] {
				st := m.Stats(base)
				row := reportRow{Patch: h.patch, Workload: h.workload, SlubDebug: r.slubDebug, Threads: g.Threads, Variant: m.Variant,
					Metric: h.metric, Seed: h.seed, Kmallocs: m.Kmallocs, BaseKmalloc: base.Kmallocs, Bugs: len(m.Bugs),
					Params: paramString(r.rep.Params), Runs: len(m.NsPerOp), Command: r.command}
				if h.metric == "MB/s" {
					row.Base, row.Value = bst.MBPerSec.Median, st.MBPerSec.Median
				} else {
					row.Base, row.Value = bst.OpsPerSec.Median, st.OpsPerSec.Median
				}
				row.Ratio, row.P, row.Significant = st.OpsPerSec.Ratio, st.OpsPerSec.P, st.OpsPerSec.Significant
				for i, v := range h.compare {
					if v == m.Variant && !math.IsNaN(h.seedRatio[i]) {
						r := h.seedRatio[i]
						row.SeedRatio = &r
					}
				}
				out = append(out, row)
			}
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
			rs = []reportRow{}
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

func writeReportText(w io.Writer, rows []reportRow, slubDebug bool) {
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

// paramString renders workload parameters as sorted "k=v" pairs.
func paramString(p map[string]string) string {
	var kv []string
	for k, v := range p {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, " ")
}
