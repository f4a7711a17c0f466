package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/sim"
)

func init() {
	register(&command{
		name:    "report",
		summary: "run every patch's headline workload and print the measured effect beside the seed's (the default)",
		run:     runReport,
	})
}

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
	Patch     string   `json:"patch"`
	Workload  string   `json:"workload"`
	Threads   int      `json:"threads"`
	Variant   string   `json:"variant"`
	Metric    string   `json:"metric"`
	Base      float64  `json:"base"`
	Value     float64  `json:"value"`
	Ratio     float64  `json:"ratio"`
	P         float64  `json:"p"`
	SeedRatio *float64 `json:"seed_ratio,omitempty"`
	Seed      string   `json:"seed"`
	Kmallocs  float64  `json:"kmallocs_per_op"`
	Params    string   `json:"params,omitempty"`
	Bugs      int      `json:"bugs,omitempty"`
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
	var rows []reportRow
	ran := false
	for _, h := range headlines {
		if *only != "" && h.patch != *only {
			continue
		}
		ran = true
		p, ok := patch.Lookup(h.patch)
		if !ok {
			fmt.Fprintf(stderr, "vfslab report: patch %s is not registered\n", h.patch)
			return 1
		}
		w, err := sim.Lookup(h.workload)
		if err != nil {
			fmt.Fprintln(stderr, "vfslab report:", err)
			return 1
		}
		if !*quiet {
			fmt.Fprintf(stderr, "vfslab report: %s on %s...\n", h.patch, h.workload)
		}
		rep, err := sim.Run(sim.Config{Workload: w, Patch: p, Threads: h.threads, Count: *count,
			RunTime: *runtime, Seed: 1, Params: h.params, SlubDebug: *slubDebug})
		if err != nil {
			fmt.Fprintf(stderr, "vfslab report: %s: %v\n", h.patch, err)
			return 1
		}
		for _, g := range rep.Groups {
			base := g.Measurements[0]
			bst := base.Stats(nil)
			for _, m := range g.Measurements[1:] {
				st := m.Stats(base)
				row := reportRow{Patch: h.patch, Workload: h.workload, Threads: g.Threads, Variant: m.Variant,
					Metric: h.metric, Seed: h.seed, Kmallocs: m.Kmallocs, Bugs: len(m.Bugs), Params: paramString(rep.Params)}
				if h.metric == "MB/s" {
					row.Base, row.Value = bst.MBPerSec.Median, st.MBPerSec.Median
				} else {
					row.Base, row.Value = bst.OpsPerSec.Median, st.OpsPerSec.Median
				}
				row.Ratio, row.P = st.OpsPerSec.Ratio, st.OpsPerSec.P
				for i, v := range h.compare {
					if v == m.Variant && !math.IsNaN(h.seedRatio[i]) {
						r := h.seedRatio[i]
						row.SeedRatio = &r
					}
				}
				rows = append(rows, row)
			}
		}
	}
	if !ran {
		var ids []string
		for _, h := range headlines {
			ids = append(ids, h.patch)
		}
		fmt.Fprintf(stderr, "vfslab report: unknown patch %q; valid: %s\n", *only, strings.Join(ids, ", "))
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

func writeReport(w io.Writer, rows []reportRow, slubDebug bool) {
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

// paramString renders workload parameters as sorted "k=v" pairs.
func paramString(p map[string]string) string {
	var kv []string
	for k, v := range p {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, " ")
}
