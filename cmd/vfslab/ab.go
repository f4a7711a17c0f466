package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/sim"
)

func init() {
	register(&command{
		name:    "ab",
		summary: "A/B-benchmark the variants of a patch on a workload",
		run:     runAB,
	})
}

// paramFlags collects repeated --param name=value flags.
type paramFlags map[string]string

func (p paramFlags) String() string { return "" }

func (p paramFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want name=value, got %q", s)
	}
	p[k] = v
	return nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad thread count %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func runAB(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ab", flag.ContinueOnError)
	fs.SetOutput(stderr)
	workload := fs.String("workload", "", "workload to run (see --list)")
	patchID := fs.String("patch", "", "patch whose variants to compare (default: the workload's)")
	variants := fs.String("variants", "", "comma-separated variants to compare (default: all, base first)")
	others := fs.String("patches", "", "variants of the other patches, as id=variant,id=variant")
	threads := fs.String("threads", "", "comma-separated worker counts (default: the workload's)")
	ops := fs.Int("ops", 0, "operations per worker per run (0: calibrate to --runtime)")
	runtime := fs.Duration("runtime", 200*time.Millisecond, "target duration of one timed run when calibrating")
	count := fs.Int("count", 10, "timed runs per variant, interleaved")
	seed := fs.Uint64("seed", 1, "seed for the workload")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	quiet := fs.Bool("quiet", false, "do not print progress to stderr")
	slubDebug := fs.Bool("slub-debug", false, "allocate as a slub_debug=FZPU (debug/userdebug) kernel does")
	list := fs.Bool("list", false, "list the workloads and their parameters")
	params := paramFlags{}
	fs.Var(params, "param", "workload parameter name=value (repeatable)")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: vfslab ab --workload NAME [flags]

Runs the workload on one fresh system per variant, with the same seed:
timed runs (interleaved, counting nothing) give ns/op, ops/s and Go
allocations per operation with 95% confidence intervals and benchstat's
p-value against the base; a separate counting run gives kernel events per
operation (kmalloc, lockref atomics, crypto requests, dirents scanned...).

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
	if *list {
		for _, w := range sim.Workloads() {
			pid := "-"
			if w.Patch != nil {
				pid = w.Patch.ID
			}
			fmt.Fprintf(stdout, "%-14s %-24s %s\n", w.Name, pid, w.Summary)
			for _, p := range w.Params {
				fmt.Fprintf(stdout, "    --param %s=%s  %s\n", p.Name, p.Default, p.Help)
			}
		}
		return 0
	}
	if *workload == "" && fs.NArg() == 1 {
		*workload = fs.Arg(0)
	} else if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "vfslab ab: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *workload == "" {
		fmt.Fprintln(stderr, "vfslab ab: --workload is required; valid:", strings.Join(sim.Names(), ", "))
		return 2
	}
	w, err := sim.Lookup(*workload)
	if err != nil {
		fmt.Fprintln(stderr, "vfslab ab:", err)
		return 2
	}
	cfg := sim.Config{Workload: w, Ops: *ops, RunTime: *runtime, Count: *count, Seed: *seed, Params: params, SlubDebug: *slubDebug}
	if *patchID != "" {
		p, err := patch.Find(*patchID)
		if err != nil {
			fmt.Fprintln(stderr, "vfslab ab:", err)
			return 2
		}
		cfg.Patch = p
	}
	if *variants != "" {
		cfg.Variants = strings.Split(*variants, ",")
	}
	if cfg.Base, err = patch.Parse(*others); err != nil {
		fmt.Fprintln(stderr, "vfslab ab:", err)
		return 2
	}
	if *threads != "" {
		if cfg.Threads, err = parseInts(*threads); err != nil {
			fmt.Fprintln(stderr, "vfslab ab:", err)
			return 2
		}
	}
	if !*quiet {
		cfg.Progress = stderr
	}
	rep, err := sim.Run(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "vfslab ab:", err)
		return 1
	}
	if *asJSON {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "vfslab ab:", err)
		return 1
	}
	return 0
}
