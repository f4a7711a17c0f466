package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vfslab/vfslab/review"
)

func init() {
	extraCommands = append(extraCommands, newReviewCmd)
}

// reviewFlags are the flags of `vfslab review`.
type reviewFlags struct {
	patches string
	seed    uint64
	steps   int
	asJSON  bool
	noPerf  bool
	quiet   bool
}

// newReviewCmd is `vfslab review`: a verdict for every variant.
func newReviewCmd() *cobra.Command {
	f := &reviewFlags{}
	cmd := &cobra.Command{
		Use:   "review [--patches ID[=VARIANT],...] [--seed N] [--steps N] [--json] [--no-perf]",
		Short: "a verdict per patch variant: what a reviewer's debug kernel finds, found automatically",
		Long: `Reviews every variant of every modelled patch (or those --patches names) the
way a reviewer with a debug kernel would, and prints a verdict for each:
"clean", or its findings.

For each variant, on every filesystem the patch touches, generated syscall
sequences (create, lookup, rename, link, unlink, getdents, read, write,
truncate, key removal and re-adding; casefolded and encrypted directories;
names up to 255 bytes; reads whose bios cross folios and data units) run on
the variant and on the base kernel with the same seed. After every step the
detectors of a debug kernel run (KASAN out-of-bounds, use-after-free and
double free with their allocation and free stacks, kmemleak at teardown,
BUG and WARN, DMA-API's "maps memory from stack", lockref underflow, an RCU
section left open), and the two kernels' errnos, names, contents and
directory blocks are compared byte for byte. The base oracle checks both
machines after every step: the namespace against a reference model (names,
inodes, types, sizes, link counts), link counts against names, the dentry
tree's invariants and the live inode objects; where base itself fails it,
the row is a model finding (a bug of the simulator). Then each allocation site the
sequences reach is made to fail (the fault-injection model the reliability
campaign uses). A variant's verdict lists only what differs from its base;
what the base kernel does itself is listed once, under "kernel findings".
Each finding has a kind (kasan-out-of-bounds, kasan-use-after-free,
double-free, leak, bug, warning, dma-from-stack, data-mismatch,
errno-mismatch, refcount, invariant), the kernel function, a detail line, and a
minimal reproducer: the shrunk sequence as a 'vfslab sh' script.

The performance verdict is the seed workload's headline ratio with the
production allocator and with slub_debug, and the events per operation that
differ from the base's (--no-perf skips it).

One root cause is one row (its kind, function and allocation stack), with
the step of its reproducer at which it first appeared and how many runs of
the review showed it.

--json prints {"variants":[{"patch","variant","findings":[{"kind",
"function","detail","reproducer","stack","first_step","occurrences",
"holder"}],"perf":{...}}],"kernel_findings":[...],"model_findings":[...]}:
stack is the allocation stack (kernel functions, innermost first), holder
a leak's function that took the reference and never dropped it.

Exit status: 0 when the review ran, findings or not; 1 when it could not
run; 2 for a usage error; 130 when interrupted.`,
		Example: `  vfslab review
  vfslab review --patches f2fs-lookup-prealloc=v2 --no-perf
  vfslab review --patches crypto-bio --steps 480 --json > review.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var sel []string
			for _, s := range strings.Split(f.patches, ",") {
				if s = strings.TrimSpace(s); s != "" {
					sel = append(sel, s)
				}
			}
			if err := review.CheckPatches(sel); err != nil {
				return usagef("--patches: %v", err)
			}
			opts := review.Options{Patches: sel, Seed: f.seed, Steps: f.steps, NoPerf: f.noPerf}
			if !f.quiet {
				opts.Progress = cmd.ErrOrStderr()
			}
			res, err := review.Run(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if f.asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(res)
			}
			writeReview(cmd.OutOrStdout(), res)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.patches, "patches", "", "review only these: ID (every variant) or ID=VARIANT, comma-separated")
	uint64Flag(fs, &f.seed, "seed", 1, 0, 1<<62, "seed of the generated sequences and of the machines' random sources")
	intFlag(fs, &f.steps, "steps", review.DefaultSteps, 1, review.MaxSteps, "syscalls per filesystem configuration (longer campaigns find more)")
	fs.BoolVar(&f.asJSON, "json", false, "print the review as JSON")
	fs.BoolVar(&f.noPerf, "no-perf", false, "skip the performance verdict")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "do not print progress to stderr")
	return cmd
}

// writeReview prints the review as text: one table of variants, each
// "clean" or its findings (one per line) and its performance rows, then
// the kernel findings, then every finding's reproducer.
func writeReview(w io.Writer, res *review.Result) {
	width := len("PATCH=VARIANT")
	for _, v := range res.Variants {
		width = max(width, len(v.Patch)+1+len(v.Variant))
	}
	fmt.Fprintf(w, "%-*s  %s\n", width, "PATCH=VARIANT", "VERDICT")
	for _, v := range res.Variants {
		name := v.Patch + "=" + v.Variant
		if v.Clean() {
			fmt.Fprintf(w, "%-*s  clean\n", width, name)
		}
		for i, f := range v.Findings {
			if i > 0 {
				name = ""
			}
			fmt.Fprintf(w, "%-*s  %s%s\n", width, name, f, findingNote(f))
		}
		if v.Perf != nil {
			for _, r := range v.Perf.Rows {
				alloc := "production allocator"
				if r.SlubDebug {
					alloc = "slub_debug"
				}
				seed := ""
				if r.SeedRatio != nil {
					seed = fmt.Sprintf(", seed %.2fx", *r.SeedRatio)
				}
				sig := ""
				if !r.Significant {
					sig = ", not significant"
				}
				params := ""
				if r.Params != "" {
					params = " " + r.Params
				}
				fmt.Fprintf(w, "%-*s  perf: %s%s %.2fx the base (%s, %d runs%s%s)\n", width, "", v.Perf.Workload, params, r.Ratio, alloc, r.Runs, sig, seed)
			}
			if len(v.Perf.EventDeltas) > 0 {
				var parts []string
				for _, k := range sortedKeys(v.Perf.EventDeltas) {
					parts = append(parts, fmt.Sprintf("%s %+.2f", k, v.Perf.EventDeltas[k]))
				}
				fmt.Fprintf(w, "%-*s  events/op vs base: %s\n", width, "", strings.Join(parts, ", "))
			}
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "kernel findings (what the base kernel does itself):")
	if len(res.KernelFindings) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, f := range res.KernelFindings {
		fmt.Fprintf(w, "  %s%s\n", f, findingNote(f))
	}
	if len(res.ModelFindings) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "model findings (the base kernel breaks an invariant of the oracle: a bug of the simulator):")
		for _, f := range res.ModelFindings {
			fmt.Fprintf(w, "  %s%s\n", f, findingNote(f))
		}
	}
	for _, v := range res.Variants {
		for _, f := range v.Findings {
			fmt.Fprintf(w, "\n# reproducer: %s=%s: %s in %s\n%s", v.Patch, v.Variant, f.Kind, f.Function, f.Reproducer)
		}
	}
	for _, f := range res.KernelFindings {
		fmt.Fprintf(w, "\n# reproducer: kernel: %s in %s\n%s", f.Kind, f.Function, f.Reproducer)
	}
	for _, f := range res.ModelFindings {
		fmt.Fprintf(w, "\n# reproducer: model: %s in %s\n%s", f.Kind, f.Function, f.Reproducer)
	}
}

// findingNote is what a row adds to the finding's one line: the step of
// the reproducer it first appears at and, when more than one run showed
// it, how many did.
func findingNote(f review.Finding) string {
	s := " [teardown"
	if f.FirstStep > 0 {
		s = fmt.Sprintf(" [step %d", f.FirstStep)
	}
	if f.Occurrences > 1 {
		s += fmt.Sprintf(", %d runs", f.Occurrences)
	}
	return s + "]"
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
