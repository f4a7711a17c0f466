package review

import (
	"fmt"
	"strings"
)

// The kinds of finding, as a reviewer's debug kernel reports them.
const (
	KindOOB        = "kasan-out-of-bounds"  // KASAN: slab-out-of-bounds
	KindUAF        = "kasan-use-after-free" // KASAN: slab-use-after-free
	KindDoubleFree = "double-free"          // KASAN: double-free
	KindLeak       = "leak"                 // kmemleak: unreferenced object; a reference never dropped
	KindBug        = "bug"                  // BUG()/BUG_ON(), an oops, a Go panic past the boundary, a hang
	KindWarning    = "warning"              // WARN()/WARN_ON()
	KindDMAStack   = "dma-from-stack"       // DMA-API: device driver maps memory from stack (CONFIG_DMA_API_DEBUG)
	KindData       = "data-mismatch"        // names, contents or directory blocks differ from base
	KindErrno      = "errno-mismatch"       // a syscall's result differs from base (or is not ENOMEM or base's under injection)
	KindRefcount   = "refcount"             // refcount or lockref underflow
	// KindInvariant is the base oracle's: after a step the namespace
	// differs from the reference model (internal/nsmodel) of what the
	// step's result means, a link count is not the number of names, the
	// dentry tree breaks an invariant of the dcache (dcache.CheckTree),
	// or an inode object stays live beyond the cache's steady state. On
	// base it is a model finding: a bug of the simulator, or of the
	// kernel code it models, to be fixed.
	KindInvariant = "invariant"
)

// Kinds lists every kind, in the order of the constants.
var Kinds = []string{KindOOB, KindUAF, KindDoubleFree, KindLeak, KindBug, KindWarning, KindDMAStack, KindData, KindErrno, KindRefcount, KindInvariant}

// Finding is one thing a reviewer's debug kernel or comparison found: its
// kind, the kernel function where it happens (for a leak, the function
// that took the reference and never dropped it, when the reference
// history knows it, else the allocating function), a detail line, and a
// minimal reproducer (a `vfslab sh` script).
//
// One root cause is one finding: findings with the same Key (kind,
// function and allocation stack) are merged, and Occurrences says how
// many times the review saw it.
type Finding struct {
	Kind       string `json:"kind"`
	Function   string `json:"function"`
	Detail     string `json:"detail"`
	Reproducer string `json:"reproducer"`
	// Stack is the allocation stack of the object concerned (a KASAN
	// report's object, a leaked object), as kernel function names,
	// innermost first, the allocator's own frames left out; empty for
	// a result that differs (errno-mismatch, data-mismatch) and for a
	// report without an object.
	Stack []string `json:"stack"`
	// FirstStep is the step of the reproducer (1-based) at which the
	// finding first appeared: the step after which a detector reported
	// it, the step whose result differs, or for a leak the step that
	// allocated the object or took the reference; 0 when it appeared
	// only at teardown.
	FirstStep int `json:"first_step"`
	// Occurrences is how many runs of the review (sequences,
	// environments, injections) showed the finding.
	Occurrences int `json:"occurrences"`
	// Holder is, for a leak, the kernel function that took the
	// reference that was never dropped (from the reference history of
	// dentries, inodes and keys), "" when the leak is an unreferenced
	// allocation or for any other kind.
	Holder string `json:"holder,omitempty"`

	// step is the index of the step it was found after (-1: teardown).
	step int
}

// String is the canonical one-line form: "KIND in FUNCTION: DETAIL".
func (f Finding) String() string {
	return fmt.Sprintf("%s in %s: %s", f.Kind, f.Function, oneLine(f.Detail))
}

// Key identifies a root cause for de-duplication: the kind, the function
// that lost the reference or made the bad access, and the allocation
// stack.
func (f Finding) Key() string { return f.key() + " " + strings.Join(f.Stack, "<") }

// key identifies a finding for comparison with base: its kind and
// function (base's finding of the same kind in the same function, with
// whatever stack, explains the variant's).
func (f Finding) key() string { return f.Kind + " " + f.Function }

// oneLine folds a detail onto one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// VariantVerdict is the verdict on one variant of one patch: what it does
// that its base does not (no findings: clean), and its performance.
type VariantVerdict struct {
	Patch    string    `json:"patch"`
	Variant  string    `json:"variant"`
	Findings []Finding `json:"findings"`
	Perf     *Perf     `json:"perf,omitempty"`
}

// Clean reports whether the verdict has no findings.
func (v VariantVerdict) Clean() bool { return len(v.Findings) == 0 }

// Result is a review: a verdict per variant, the kernel findings (what
// the base kernel does itself, reported once) and the model findings
// (where the base kernel breaks an invariant the oracle checks after
// every step: a bug of the simulator, to be fixed).
type Result struct {
	Variants       []VariantVerdict `json:"variants"`
	KernelFindings []Finding        `json:"kernel_findings"`
	ModelFindings  []Finding        `json:"model_findings"`
}
