// Package sim runs workloads on simulated systems and compares patch
// variants: the same workload, the same seed, every variant, with timing
// (ns/op, ops/s, allocs/op) from runs that count nothing and deterministic
// event counts (allocations, atomics on shared cache lines, crypto requests,
// dirents scanned...) from a separate counting run, so counting never
// perturbs the timing it sits beside.
//
// Workloads are registered in this package (one file each), each with the
// headline figures of the seeds it reproduces beside it, and run by Run,
// which the CLI's `vfslab ab` drives (and Headline.Run, `vfslab report`).
// Every machine is a kernel.Kernel made with the variant set under test:
// workloads read it (Env.K.Patches) and cannot change it.
package sim

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/patch"
)

// Workload describes a benchmarkable operation.
type Workload struct {
	// Name is the workload's stable ID ("open1", "create", ...).
	Name string
	// Summary says in one line what an operation does.
	Summary string
	// Patch is the patch whose variants the workload is meant to compare;
	// Run compares its variants unless told otherwise.
	Patch *patch.Patch
	// Params lists the workload's parameters with their defaults and help.
	Params []Param
	// DefaultThreads is the thread counts run when none are given (nil: 1).
	DefaultThreads []int
	// Setup builds one system for env and returns it. It runs once per
	// variant and thread count, outside the timed region.
	Setup func(env *Env) (Instance, error)
	// Headlines are the figures of the seeds this workload reproduces:
	// what `vfslab report` runs for their patches (see Headline). Every
	// registered patch has exactly one, on some workload.
	Headlines []*Headline
}

// Param is a workload parameter.
type Param struct {
	Name    string
	Default string
	Help    string
	// Patch, when not nil, makes the parameter's value a variant of Patch
	// that the run selects in its kernels' patch set (Run does it, so
	// that the report says what ran): a value given for the parameter
	// and a different variant given for Patch in Config.Base are an
	// error; with no value given, a non-base variant in Config.Base wins
	// over Default.
	Patch *patch.Patch
}

// Env is what a workload's Setup gets: the machine (whose patch set,
// K.Patches(), every layer's code runs: a workload cannot change it), the
// seed, the number of worker threads and the parameter values.
type Env struct {
	K       *kernel.Kernel
	Seed    uint64
	Threads int
	Params  map[string]string
}

// Param returns the value of the parameter named name (its default when
// not set).
func (e *Env) Param(name string) string { return e.Params[name] }

// Sizer is implemented by instances whose operations move data; the report
// then shows throughput in MB/s.
type Sizer interface {
	// BytesPerOp is the number of bytes one operation reads or writes.
	BytesPerOp() int64
}

// Instance is a system set up for a workload.
type Instance interface {
	// Worker prepares worker w (0 <= w < Threads) to run as task t and
	// returns the operation it runs; op(i) performs the worker's i-th
	// operation. Worker runs outside the timed region. Tasks the instance
	// starts on its own (with Env.K.NewTask) count in a counting run as
	// the workers do; when op returns they must have finished counting
	// for it (its completions synchronised with op).
	Worker(w int, t *kernel.Task) (op func(i int) error, err error)
	// Close releases the system.
	Close() error
}

// Resetter is implemented by instances whose operations leave state behind
// that later operations do not need (the files of the create workload's
// runs). The runner calls Reset between timed runs, when no operation is
// running and outside the timed region (after a timed or calibration run
// has been measured, before the next one starts), so that a comparison
// holds one timed run's state at a time instead of every run's. The
// counting run is not reset.
type Resetter interface {
	// Reset releases what the operations run so far left behind.
	Reset() error
}

var workloads = map[string]*Workload{}

// Register adds w to the workload table, and its Headlines to the
// headline table; it is called from package-level var declarations. A
// duplicate name, or a headline that breaks Headline's rules, panics.
func Register(w *Workload) *Workload {
	if _, dup := workloads[w.Name]; dup {
		panic("sim: duplicate workload " + w.Name)
	}
	registerHeadlines(w)
	workloads[w.Name] = w
	return w
}

// Lookup returns the workload named name; the error lists the valid names.
func Lookup(name string) (*Workload, error) {
	if w, ok := workloads[name]; ok {
		return w, nil
	}
	return nil, fmt.Errorf("unknown workload %q; valid: %s", name, strings.Join(Names(), ", "))
}

// Names returns the registered workload names, sorted.
func Names() []string {
	var n []string
	for k := range workloads {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Workloads returns the registered workloads sorted by name.
func Workloads() []*Workload {
	var ws []*Workload
	for _, n := range Names() {
		ws = append(ws, workloads[n])
	}
	return ws
}

// resolveParams merges values over w's defaults; unknown names are errors
// that list the valid ones.
func (w *Workload) resolveParams(values map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range w.Params {
		out[p.Name] = p.Default
	}
	for k, v := range values {
		if _, ok := out[k]; !ok {
			var valid []string
			for _, p := range w.Params {
				valid = append(valid, p.Name)
			}
			if len(valid) == 0 {
				return nil, fmt.Errorf("workload %s takes no parameters (got %q)", w.Name, k)
			}
			return nil, fmt.Errorf("workload %s has no parameter %q; valid: %s", w.Name, k, strings.Join(valid, ", "))
		}
		out[k] = v
	}
	return out, nil
}

// applyPatchParams makes the patch set and the parameters that choose a
// patch's variant (Param.Patch) agree, and returns the set the run's
// kernels get. given are the values the caller set, params the resolved
// ones (updated to the variant that runs); compared is the patch whose
// variants the run compares, which no parameter may choose.
func (w *Workload) applyPatchParams(given, params map[string]string, base patch.Set, compared *patch.Patch) (patch.Set, error) {
	for _, p := range w.Params {
		if p.Patch == nil {
			continue
		}
		v, explicit := given[p.Name]
		if p.Patch == compared {
			if explicit {
				return base, fmt.Errorf("workload %s: parameter %s chooses the variant of %s, whose variants this run compares", w.Name, p.Name, p.Patch.ID)
			}
			params[p.Name] = "compared"
			continue
		}
		if base.Get(p.Patch) != 0 {
			chosen := base.Variant(p.Patch)
			if i, ok := p.Patch.VariantIndex(v); explicit && (!ok || i != base.Get(p.Patch)) {
				return base, fmt.Errorf("workload %s: %s=%s conflicts with %s=%s", w.Name, p.Name, v, p.Patch.ID, chosen)
			}
			params[p.Name] = chosen
			continue
		}
		set, err := base.With(p.Patch, params[p.Name])
		if err != nil {
			return base, fmt.Errorf("workload %s: bad %s: %w", w.Name, p.Name, err)
		}
		base = set
	}
	return base, nil
}
