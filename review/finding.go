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
	KindLeak       = "leak"                 // kmemleak: unreferenced object
	KindBug        = "bug"                  // BUG()/BUG_ON(), an oops, a Go panic past the boundary, a hang
	KindWarning    = "warning"              // WARN()/WARN_ON()
	KindDMAStack   = "dma-from-stack"       // DMA-API: device driver maps memory from stack (CONFIG_DMA_API_DEBUG)
	KindData       = "data-mismatch"        // names, contents or directory blocks differ from base
	KindErrno      = "errno-mismatch"       // a syscall's result differs from base (or is not ENOMEM or base's under injection)
	KindRefcount   = "refcount"             // refcount or lockref underflow
)

// Kinds lists every kind, in the order of the constants.
var Kinds = []string{KindOOB, KindUAF, KindDoubleFree, KindLeak, KindBug, KindWarning, KindDMAStack, KindData, KindErrno, KindRefcount}

// Finding is one thing a reviewer's debug kernel or comparison found: its
// kind, the kernel function where it happens, a detail line, and a
// minimal reproducer (a `vfslab sh` script).
type Finding struct {
	Kind       string `json:"kind"`
	Function   string `json:"function"`
	Detail     string `json:"detail"`
	Reproducer string `json:"reproducer"`

	// step is the index of the step it was found after (-1: teardown).
	step int
}

// String is the canonical one-line form: "KIND in FUNCTION: DETAIL".
func (f Finding) String() string {
	return fmt.Sprintf("%s in %s: %s", f.Kind, f.Function, oneLine(f.Detail))
}

// key identifies a finding for comparison with base and for
// de-duplication: its kind and function.
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

// Result is a review: a verdict per variant and the kernel findings,
// what the base kernel itself does, reported once.
type Result struct {
	Variants       []VariantVerdict `json:"variants"`
	KernelFindings []Finding        `json:"kernel_findings"`
}
