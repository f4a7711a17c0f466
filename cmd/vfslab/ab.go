package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/sim"
)

// abFlags are the flags of `vfslab ab`.
type abFlags struct {
	workload, patchID, variants, others string
	threads                             []int
	ops, count                          int
	runtime                             time.Duration
	seed                                uint64
	out                                 formatFlags
	save                                string
	quiet, slubDebug, list, noReview    bool
	params                              paramValue
	profile                             time.Duration
}

func newABCmd() *cobra.Command {
	f := &abFlags{params: paramValue{}}
	cmd := &cobra.Command{
		Use:   "ab [--workload] NAME [flags]",
		Short: "A/B-benchmark the variants of a patch on a workload",
		Long: `Runs the workload on one fresh system per variant, with the same seed:
timed runs (interleaved, counting nothing) give ns/op, ops/s and Go
allocations per operation with 95% confidence intervals and benchstat's
p-value against the base; a separate counting run gives kernel events per
operation (kmalloc, lockref atomics, crypto requests, dirents scanned...).

ns/op follows Go's testing: wall time / all workers' operations, so that
ns/op x ops/s = 1e9 at every thread count; one worker's latency is ns/op x
threads. 'vfslab ab --list' says what one operation of each workload is
(for create, one operation is a whole run of n creates).

Every value is checked before anything runs: --threads, --count, --ops,
--runtime and each --param have the ranges shown; a patch the workload
does not run, an unknown variant and a run that would not fit in memory
are usage errors. Progress goes to stderr (a bar on a terminal, plain
lines otherwise); Ctrl-C stops between runs and prints what was measured.

--format benchstat writes Go benchmark lines for golang.org/x/perf's
benchstat: 'benchstat -col /variant FILE' compares the variants, and
'benchstat OLD NEW' two runs of ab. --save FILE keeps the JSON report
(with every run) for 'vfslab ab compare OLD NEW'. The JSON schema is in
docs/CLI.md.`,
		Example: `  vfslab ab --list
  vfslab ab open1 --threads 1,2 --count 10
  vfslab ab --workload fname --count 5 --runtime 50ms --format benchstat > new.txt
  vfslab ab v1kdf --count 5 --save before.json
  vfslab ab compare before.json after.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("want at most one workload argument; got %q", args)
			}
			return nil
		},
		RunE:              func(cmd *cobra.Command, args []string) error { return runAB(cmd, f, args) },
		ValidArgsFunction: completeWorkloadArg,
	}
	fs := cmd.Flags()
	fs.StringVar(&f.workload, "workload", "", "workload to run (see --list); or give it as the argument")
	fs.StringVar(&f.patchID, "patch", "", "patch whose variants to compare (default: the workload's; must be one the workload runs)")
	fs.StringVar(&f.variants, "variants", "", "comma-separated variants to compare (default: all, base first)")
	fs.StringVar(&f.others, "patches", "", "variants of the other patches, as id=variant,id=variant")
	fs.Var(&threadsValue{p: &f.threads, max: sim.MaxThreads}, "threads", fmt.Sprintf("comma-separated distinct worker counts, each 1..%d (default: the workload's)", sim.MaxThreads))
	f.ops = 0
	fs.Var(&intValue{p: &f.ops, min: 0, max: sim.MaxOps, extra: "0 (calibrate)"}, "ops", fmt.Sprintf("operations per worker per run: 0 calibrates to --runtime, else 1..%d", sim.MaxOps))
	durationFlag(fs, &f.runtime, "runtime", 200*time.Millisecond, time.Millisecond, sim.MaxRunTime, "target duration of one timed run when calibrating")
	intFlag(fs, &f.count, "count", 10, 1, sim.MaxCount, "timed runs per variant, interleaved")
	fs.Uint64Var(&f.seed, "seed", 1, "seed for the workload")
	f.out.define(fs)
	fs.StringVar(&f.save, "save", "", "also write the JSON report (with every run) to FILE, for 'vfslab ab compare'")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "do not print progress to stderr")
	fs.BoolVar(&f.slubDebug, "slub-debug", false, "allocate as a slub_debug=FZPU (debug/userdebug) kernel does")
	fs.BoolVar(&f.list, "list", false, "list the workloads, what one operation is, and their parameters with ranges")
	fs.Var(f.params, "param", "workload parameter name=value (repeatable; see --list for names and ranges)")
	durationFlag(fs, &f.profile, "profile", defaultProfileTime, 0, time.Minute, "length of each variant's profiled run (where the time goes, apart from the timed runs); 0 skips it")
	fs.BoolVar(&f.noReview, "no-review", false, "do not look up the variants' review verdicts (rows then say \"not reviewed\", never \"clean\")")
	cmd.AddCommand(newABCompareCmd())
	return cmd
}

func runAB(cmd *cobra.Command, f *abFlags, args []string) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	format, err := f.out.resolve(cmd.Flags())
	if err != nil {
		return err
	}
	if f.list {
		if len(args) > 0 || f.workload != "" {
			return usagef("--list takes no workload")
		}
		listWorkloads(stdout)
		return nil
	}
	name := f.workload
	if len(args) == 1 {
		if name != "" && name != args[0] {
			return usagef("--workload %s and argument %s: give the workload once", name, args[0])
		}
		name = args[0]
	}
	if name == "" {
		return usagef("a workload is required (--workload NAME or the argument); valid: %s", strings.Join(sim.Names(), ", "))
	}
	w, err := sim.Lookup(name)
	if err != nil {
		return usageError{"--workload: " + err.Error()}
	}
	cfg := sim.Config{Workload: w, Ops: f.ops, RunTime: f.runtime, Count: f.count, Seed: f.seed,
		Params: f.params, SlubDebug: f.slubDebug, Threads: f.threads, ProfileTime: f.profile}
	if f.patchID != "" {
		p, err := patch.Find(f.patchID)
		if err != nil {
			return usageError{"--patch: " + err.Error()}
		}
		cfg.Patch = p
	}
	if cmd.Flags().Changed("variants") {
		for _, v := range strings.Split(f.variants, ",") {
			if v = strings.TrimSpace(v); v == "" {
				return usagef("--variants %q: want a comma-separated list of variant names", f.variants)
			}
			cfg.Variants = append(cfg.Variants, v)
		}
	}
	if cfg.Base, err = patch.Parse(f.others); err != nil {
		return usageError{"--patches: " + err.Error()}
	}
	if f.save != "" {
		// Refuse an unwritable --save before the minutes of measuring.
		if err := checkWritable(f.save); err != nil {
			return usageError{"--save: " + err.Error()}
		}
	}
	var vs *verdicts
	if id := comparedPatch(cfg); id != "" && !f.noReview {
		var prog io.Writer
		if !f.quiet {
			prog = stderr
		}
		if vs, err = loadVerdicts(cmd.Context(), []string{id}, prog); err != nil {
			return err
		}
	}
	pr := newProgress(stderr, f.quiet)
	cfg.OnProgress = pr.event
	rep, err := sim.RunContext(cmd.Context(), cfg)
	pr.done()
	if vs != nil && rep != nil {
		vs.forReport(rep, comparedPatch(cfg))
	}
	stopped := rep != nil && errors.Is(err, context.Canceled)
	if err != nil && !stopped {
		return err
	}
	if f.save != "" {
		if err := saveJSON(f.save, rep); err != nil {
			return err
		}
	}
	if err := writeReport(stdout, rep, format); err != nil {
		return err
	}
	if stopped {
		return &statusError{status: interrupted, msg: "interrupted: printed the runs measured so far"}
	}
	return nil
}

// defaultProfileTime is the default length of a variant's profiled run
// (about 50 CPU samples a worker: the time per operation that moved is
// shown only where it exceeds twice its sampling error).
const defaultProfileTime = 500 * time.Millisecond

// comparedPatch is the ID of the patch whose variants cfg compares ("" for
// none).
func comparedPatch(cfg sim.Config) string {
	if cfg.Patch != nil {
		return cfg.Patch.ID
	}
	if cfg.Workload != nil && cfg.Workload.Patch != nil {
		return cfg.Workload.Patch.ID
	}
	return ""
}

// writeReport writes rep in format.
func writeReport(w io.Writer, rep *sim.Report, format string) error {
	switch format {
	case "json":
		return rep.WriteJSON(w)
	case "csv":
		return rep.WriteCSV(w)
	case "benchstat":
		return rep.WriteBenchstat(w)
	}
	return rep.WriteText(w)
}

// checkWritable reports whether path can be created or overwritten,
// without truncating an existing file.
func checkWritable(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

func saveJSON(path string, rep *sim.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := rep.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// listWorkloads prints every workload: its patch, the other patches it
// runs, what one operation is, and its parameters with defaults and
// ranges.
func listWorkloads(w io.Writer) {
	for _, wl := range sim.Workloads() {
		pid := "-"
		if wl.Patch != nil {
			pid = wl.Patch.ID
		}
		fmt.Fprintf(w, "%s  (patch %s", wl.Name, pid)
		if len(wl.Exercises) > 0 {
			var ids []string
			for _, p := range wl.Exercises {
				ids = append(ids, p.ID)
			}
			fmt.Fprintf(w, "; also runs %s", strings.Join(ids, ", "))
		}
		fmt.Fprintf(w, ")\n    1 op = %s\n", wl.Summary)
		for _, p := range wl.Params {
			fmt.Fprintf(w, "    --param %s=%s  [%s]  %s\n", p.Name, p.Default, p.Range, p.Help)
		}
	}
}

func newABCompareCmd() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "compare OLD.json NEW.json",
		Short: "compare two saved runs of vfslab ab (--save) the way benchstat does",
		Long: `Reads two reports saved with 'vfslab ab --save FILE' (or --format json), for
instance on two commits or two machines, and prints for every variant and
thread count in both the medians of ns/op and ops/s with their 95%
confidence intervals, the change, and the Mann-Whitney U-test p-value
("~": not significant at 0.05), a geomean row (benchstat's: the
geometric mean of the medians), then the events per operation that
differ. Each file's machine and warnings are printed first.

Two reports of different configurations (workload, patch, other
patches, parameters, allocator, seed) compare more than one thing: the
command refuses them (status 2) unless --force, and then notes each
difference.`,
		Example: `  git checkout main && vfslab ab open1 --save old.json
  git checkout topic && vfslab ab open1 --save new.json
  vfslab ab compare old.json new.json`,
		Args: exactArgs(2, "OLD.json and NEW.json"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var reps [2]*sim.Report
			for i, path := range args {
				f, err := os.Open(path)
				if err != nil {
					return usageError{err.Error()}
				}
				reps[i], err = sim.ReadJSON(f)
				f.Close()
				if err != nil {
					return usagef("%s: %v", path, err)
				}
			}
			if d := sim.Differences(reps[0], reps[1]); len(d) > 0 && !force {
				return usagef("%s and %s: %s; --force compares them anyway", args[0], args[1], strings.Join(d, "; "))
			}
			if err := sim.Compare(cmd.OutOrStdout(), reps[0], reps[1]); err != nil {
				return usagef("%s and %s: %v", args[0], args[1], err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "compare reports of different configurations, noting each difference")
	return cmd
}
