package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/vfslab/vfslab/sim"
)

func init() {
	register(&command{
		name:    "report",
		summary: "run every patch's headline workload and print the measured effect beside the seed's (the default)",
		run:     runReport,
	})
}

func runReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	count := fs.Int("count", 5, "timed runs per variant")
	runtime := fs.Duration("runtime", 100*time.Millisecond, "target duration of one timed run")
	only := fs.String("patch", "", "only this patch")
	asJSON := fs.Bool("json", false, "print the rows as JSON")
	slubDebug := fs.Bool("slub-debug", false, "allocate as a slub_debug=FZPU (debug/userdebug) kernel does, as the seeds' Android kernels did")
	quiet := fs.Bool("quiet", false, "do not print progress to stderr")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: vfslab report [flags]

Runs, for each modelled patch, the workload that reproduces the figure its
seed reported (vfslab ab with small defaults), and prints each variant's
measured speed ratio to the base beside the seed's. Ratios come from one
run of the simulator on this machine; the seeds' come from their kernels
and CPUs, so the shapes are comparable, the magnitudes are not always:
see 'vfslab ab' for full reports with events and confidence intervals.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "vfslab report: unexpected arguments %q\n", fs.Args())
		return 2
	}
	var rows []sim.ReportRow
	ran := false
	for _, h := range sim.Headlines() {
		if *only != "" && h.Patch.ID != *only {
			continue
		}
		ran = true
		if !*quiet {
			fmt.Fprintf(stderr, "vfslab report: %s on %s...\n", h.Patch.ID, h.Workload().Name)
		}
		r, err := h.Run(sim.Config{Count: *count, RunTime: *runtime, SlubDebug: *slubDebug})
		if err != nil {
			fmt.Fprintf(stderr, "vfslab report: %s: %v\n", h.Patch.ID, err)
			return 1
		}
		rows = append(rows, r...)
	}
	if !ran {
		_, err := sim.HeadlineFor(*only)
		fmt.Fprintln(stderr, "vfslab report:", err)
		return 2
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			fmt.Fprintln(stderr, "vfslab report:", err)
			return 1
		}
		return 0
	}
	writeReport(stdout, rows, *slubDebug)
	return 0
}

func writeReport(w io.Writer, rows []sim.ReportRow, slubDebug bool) {
	alloc := "production allocator"
	if slubDebug {
		alloc = "slub_debug allocator"
	}
	fmt.Fprintf(w, "Each variant against its patch's base on the seed's workload (%s).\n", alloc)
	fmt.Fprintln(w, "ratio = variant speed / base speed; seed = the same ratio from the patch's own figures.")
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "patch\tworkload\tT\tvariant\tbase\tvariant\tratio\tp\tseed\tkmalloc/op\t")
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
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s %s\t%s\tx%.2f\t%.3f\t%s\t%.2f%s\t\n", name, r.Workload, r.Threads, r.Variant,
			sim.FormatNum(r.Base), r.Metric, sim.FormatNum(r.Value), r.Ratio, r.P, seed, r.Kmallocs, note)
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
}
