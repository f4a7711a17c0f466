package sim

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/patch"
)

// Config says what Run measures.
type Config struct {
	// Workload to run.
	Workload *Workload
	// Patch whose variants are compared (default: the workload's).
	Patch *patch.Patch
	// Variants to compare (default: all of Patch's, base first).
	Variants []string
	// Base selects the variants of the other patches. A workload
	// parameter that chooses a patch's variant (Param.Patch) agrees with
	// it or fails the run; it never overrides it.
	Base patch.Set
	// Sets, when not nil, are the machines compared instead of Patch's
	// variants over Base: each a whole patch set, the first the one the
	// others are compared with, labelled by SetNames (Measurement.Variant).
	// A headline over several patches measured together runs so (every
	// patch at its base against the patches at their posted variants);
	// Variants must then be empty, and Patch is only checked to be one the
	// workload runs.
	Sets     []patch.Set
	SetNames []string
	// Threads lists the worker counts to run (default: the workload's, or 1).
	Threads []int
	// Ops is the number of operations per worker in one timed run; 0 means
	// calibrate on the first variant so that a run lasts about RunTime.
	// At most MaxOps (and the workload's MaxOps).
	Ops int
	// RunTime is the calibration target for one timed run (default 200ms,
	// at most MaxRunTime).
	RunTime time.Duration
	// Count is the number of timed runs per variant (default 10, at most
	// MaxCount), run interleaved (A B A B ...) so that drift affects every
	// variant alike.
	Count int
	// CountOps is the number of operations per worker in the counting run
	// (default min(Ops, 2000)).
	CountOps int
	// Seed makes the workload deterministic.
	Seed uint64
	// Params are workload parameter values.
	Params map[string]string
	// Progress, if not nil, receives one line per phase (setup,
	// calibration, each timed run, each counting run).
	Progress io.Writer
	// OnProgress, if not nil, is called as each phase starts and as each
	// timed run ends, from the goroutine that called Run.
	OnProgress func(ProgressEvent)
	// SlubDebug runs every system with the allocator in slub_debug mode
	// (kernel.Kernel.SlubDebug), like the debug kernels the seeds measured.
	SlubDebug bool
	// Machine, when not nil, is the machine record the report carries:
	// a caller that makes several runs (vfslab report) probes the
	// machine once around all of them. When nil, Run reads the machine
	// and runs the noise probe before and after its own runs, unless
	// NoProbe.
	Machine *Machine
	NoProbe bool
	// ProfileTime, when positive, adds a profiled run per variant at the
	// first thread count: a fresh system runs that long under Go's CPU
	// profiler, apart from the timed runs, for Measurement.Profile.
	ProfileTime time.Duration
}

// Measurement is what Run found for one variant at one thread count.
type Measurement struct {
	Variant string
	// Patches is the patch set the variant's systems ran with: their
	// kernels' (kernel.Kernel.Patches), every patch's variant.
	Patches patch.Set `json:"patches"`
	Threads int
	Ops     int // operations per worker per timed run
	// Per timed run:
	NsPerOp     []float64 // wall time / all workers' operations, as Go's testing counts ns/op (1e9 / OpsPerSec)
	OpsPerSec   []float64 // total operations / wall time: throughput
	AllocsPerOp []float64 // Go heap allocations per operation (runtime.MemStats)
	BytesPerOp  []float64 // Go heap bytes per operation
	MBPerSec    []float64 `json:",omitempty"` // data throughput, for workloads that move data (Sizer)
	// DataBytesPerOp is what one operation reads or writes, for
	// workloads that move data (Sizer); 0 otherwise.
	DataBytesPerOp int64 `json:",omitempty"`
	// From the counting run, per operation:
	Events map[string]float64
	// Kmalloc-level accounting per operation from the counting run, over
	// every task of the machine (the workers' and those the workload
	// started itself).
	Kmallocs     float64
	KmallocBytes float64
	// Errors is the number of operations that failed in the counting run;
	// FirstError is the first failure, if any.
	Errors     int
	FirstError string
	// Bugs lists BUG/KASAN reports raised in the counting run.
	Bugs []string
	// Profile is the profiled run's CPU shares by model function (nil
	// without one: Config.ProfileTime, the first thread count only).
	Profile *Profile `json:",omitempty"`
}

// Limits of a Config, checked before anything runs.
const (
	MaxThreads = 1024
	MaxCount   = 1000
	MaxOps     = 1 << 30
	MaxRunTime = time.Hour
)

// Run measures every variant of cfg.Patch on cfg.Workload at each thread
// count. It returns the measurements grouped by thread count, variants in
// the order asked. A Config out of range is a *ConfigError, returned
// before any system is set up.
func Run(cfg Config) (*Report, error) { return RunContext(context.Background(), cfg) }

// RunContext is Run stopping between phases once ctx is done: it then
// returns the report of what was measured so far (Interrupted set, timed
// runs only for the interrupted thread count) with ctx's error.
func RunContext(ctx context.Context, cfg Config) (*Report, error) {
	w := cfg.Workload
	if w == nil {
		return nil, fmt.Errorf("sim: no workload")
	}
	p := cfg.Patch
	if p == nil {
		p = w.Patch
	}
	params, err := w.ResolveParams(cfg.Params)
	if err != nil {
		return nil, err
	}
	if err := checkConfig(&cfg, w, p, params); err != nil {
		return nil, err
	}
	if cfg.Base, err = w.applyPatchParams(cfg.Params, params, cfg.Base, p); err != nil {
		return nil, err
	}
	variants := cfg.Variants
	if len(variants) == 0 && p != nil {
		variants = p.VariantNames()
	}
	if len(variants) == 0 {
		variants = []string{""}
	}
	sets := make([]patch.Set, len(variants))
	for i, v := range variants {
		sets[i] = cfg.Base
		if p != nil {
			if sets[i], err = cfg.Base.With(p, v); err != nil {
				return nil, err
			}
		}
	}
	if cfg.Sets != nil {
		if len(cfg.Variants) > 0 || len(cfg.SetNames) != len(cfg.Sets) || len(cfg.Sets) < 2 {
			return nil, &ConfigError{Field: "Sets", Msg: "want two sets or more, one name each, and no Variants"}
		}
		variants, sets = cfg.SetNames, cfg.Sets
	}
	threads := cfg.Threads
	if len(threads) == 0 {
		threads = w.DefaultThreads
	}
	if len(threads) == 0 {
		threads = []int{1}
	}
	rep := &Report{Workload: w.Name, Seed: cfg.Seed, Params: params, Count: cfg.Count}
	if p != nil {
		rep.Patch = p.ID
	}
	rep.Base = cfg.Base.Changed()
	rep.SlubDebug = cfg.SlubDebug
	if prev := debug.SetMemoryLimit(-1); prev == math.MaxInt64 {
		// No limit set (GOMEMLIMIT): bound the untimed phases' heap.
		debug.SetMemoryLimit(setupMemoryLimit)
		defer debug.SetMemoryLimit(prev)
	}
	rep.Machine = cfg.Machine
	if rep.Machine == nil {
		rep.Machine = NewMachine(!cfg.NoProbe)
		defer rep.Machine.Finish()
	}
	pr := &progress{cfg: &cfg, w: w, steps: len(threads) * stepsPerGroup(&cfg, len(variants))}
	if cfg.ProfileTime > 0 {
		pr.steps += len(variants)
	}
	for _, nt := range threads {
		group, err := runThreads(ctx, pr, cfg, w, params, variants, sets, nt)
		if group != nil && len(group.Measurements) > 0 {
			rep.Groups = append(rep.Groups, group)
		}
		if err != nil {
			if ctx.Err() != nil && err == ctx.Err() {
				rep.Interrupted = true
				return rep, err
			}
			return nil, err
		}
	}
	return rep, nil
}

// system is one variant's instance with its workers ready.
type system struct {
	k     *kernel.Kernel
	inst  Instance
	tasks []*kernel.Task
	ops   []func(int) error
}

// setup makes one variant's machine: a kernel running set (counting every
// task when counting), the workload's system on it, and nt workers.
func setup(cfg Config, w *Workload, params map[string]string, set patch.Set, nt int, counting bool) (*system, error) {
	k := kernel.NewWith(kernel.Config{Patches: set, SlubDebug: cfg.SlubDebug, Counting: counting})
	env := &Env{K: k, Seed: cfg.Seed, Threads: nt, Params: params}
	inst, err := w.Setup(env)
	if err != nil {
		return nil, fmt.Errorf("%s setup: %w", w.Name, err)
	}
	s := &system{k: k, inst: inst}
	for i := 0; i < nt; i++ {
		t := k.NewTask(fmt.Sprintf("%s/%d", w.Name, i))
		op, err := inst.Worker(i, t)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("%s worker %d: %w", w.Name, i, err)
		}
		s.tasks = append(s.tasks, t)
		s.ops = append(s.ops, op)
	}
	return s, nil
}

func (s *system) close() {
	for _, t := range s.tasks {
		t.Exit()
	}
	s.inst.Close()
}

// timed runs n operations on every worker at once and returns the wall time
// and the first error.
func (s *system) timed(n int, start int) (time.Duration, error) {
	var wg sync.WaitGroup
	errs := make([]error, len(s.ops))
	gate := make(chan struct{})
	for i, op := range s.ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			for j := start; j < start+n; j++ {
				if err := op(j); err != nil && errs[i] == nil {
					errs[i] = err
				}
			}
		}()
	}
	runtime.Gosched()
	t0 := time.Now()
	close(gate)
	wg.Wait()
	d := time.Since(t0)
	for _, e := range errs {
		if e != nil {
			return d, e
		}
	}
	return d, nil
}

func runThreads(ctx context.Context, pr *progress, cfg Config, w *Workload, params map[string]string, variants []string, sets []patch.Set, nt int) (*Group, error) {
	g := &Group{Threads: nt}
	syss := make([]*system, len(variants))
	defer func() {
		for _, s := range syss {
			if s != nil {
				s.close()
			}
		}
	}()
	for i := range variants {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pr.emit(ProgressEvent{Phase: PhaseSetup, Variant: variants[i], Threads: nt})
		s, err := setup(cfg, w, params, sets[i], nt, false)
		if err != nil {
			return nil, err
		}
		syss[i] = s
	}
	ops := cfg.Ops
	if ops <= 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pr.emit(ProgressEvent{Phase: PhaseCalibrate, Variant: variants[0], Threads: nt})
		maxOps := MaxOps
		if w.MaxOps != nil {
			maxOps = w.MaxOps(params, nt)
		}
		var err error
		if ops, err = calibrate(syss[0], cfg.RunTime, maxOps); err != nil {
			return nil, fmt.Errorf("%s %s T=%d: %w", w.Name, variants[0], nt, err)
		}
	}
	ms := make([]*Measurement, len(variants))
	for i, v := range variants {
		ms[i] = &Measurement{Variant: v, Patches: *syss[i].k.Patches(), Threads: nt, Ops: ops}
	}
	next := make([]int, len(variants)) // operation index each system is at
	// Warm-up: every variant runs a quarter of a timed run untimed
	// first, so that no variant's first timed run pays for first touches
	// (the Go heap growing, the model's caches filling) that the others'
	// do not.
	for i, s := range syss {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := max(1, ops/4)
		if _, err := s.timed(n, next[i]); err != nil {
			if _, isBug := kernel.AsBug(err); !isBug {
				return nil, fmt.Errorf("%s %s T=%d: warm-up: %w", w.Name, variants[i], nt, err)
			}
		}
		next[i] += n
		if err := s.reset(); err != nil {
			return nil, fmt.Errorf("%s %s T=%d: reset: %w", w.Name, variants[i], nt, err)
		}
	}
	for r := 0; r < cfg.Count; r++ {
		for _, i := range roundOrder(len(syss), r) {
			s := syss[i]
			if err := ctx.Err(); err != nil {
				g.Measurements = measured(ms)
				return g, err
			}
			var before, after runtime.MemStats
			gc := quietGC()
			runtime.ReadMemStats(&before)
			d, err := s.timed(ops, next[i])
			runtime.ReadMemStats(&after)
			gc.restore()
			next[i] += ops
			if err != nil {
				if _, isBug := kernel.AsBug(err); !isBug {
					return nil, fmt.Errorf("%s %s T=%d: %w", w.Name, variants[i], nt, err)
				}
			}
			if err := s.reset(); err != nil {
				return nil, fmt.Errorf("%s %s T=%d: reset: %w", w.Name, variants[i], nt, err)
			}
			total := float64(ops * nt)
			m := ms[i]
			m.NsPerOp = append(m.NsPerOp, float64(d.Nanoseconds())/total)
			m.OpsPerSec = append(m.OpsPerSec, total/d.Seconds())
			m.AllocsPerOp = append(m.AllocsPerOp, float64(after.Mallocs-before.Mallocs)/total)
			m.BytesPerOp = append(m.BytesPerOp, float64(after.TotalAlloc-before.TotalAlloc)/total)
			if sz, ok := s.inst.(Sizer); ok {
				m.MBPerSec = append(m.MBPerSec, total*float64(sz.BytesPerOp())/d.Seconds()/1e6)
				m.DataBytesPerOp = sz.BytesPerOp()
			}
			pr.emit(ProgressEvent{Phase: PhaseRun, Variant: variants[i], Threads: nt, Run: r + 1, Runs: cfg.Count,
				NsPerOp: m.NsPerOp[r], OpsPerSec: m.OpsPerSec[r]})
		}
	}
	// The timed machines are done: release them before the counting and
	// profiled runs set up fresh ones, so that the peak memory is one
	// phase's, not both (every variant's read workload holds its file).
	for i, s := range syss {
		s.close()
		syss[i] = nil
	}
	debug.FreeOSMemory()
	for i := range variants {
		if err := ctx.Err(); err != nil {
			g.Measurements = ms
			return g, err
		}
		pr.emit(ProgressEvent{Phase: PhaseCount, Variant: variants[i], Threads: nt})
		if err := countingRun(cfg, w, params, sets[i], nt, ops, ms[i]); err != nil {
			return nil, err
		}
	}
	if cfg.ProfileTime > 0 && pr.group == 0 {
		for i := range variants {
			if err := ctx.Err(); err != nil {
				g.Measurements = ms
				return g, err
			}
			pr.emit(ProgressEvent{Phase: PhaseProfile, Variant: variants[i], Threads: nt})
			p, err := profileRun(cfg, w, params, sets[i], nt, ops, cfg.ProfileTime)
			if err != nil {
				return nil, fmt.Errorf("%s %s T=%d: profiled run: %w", w.Name, variants[i], nt, err)
			}
			ms[i].Profile = p
		}
	}
	pr.group++
	g.Measurements = ms
	return g, nil
}

// roundOrder is the order the variants run in round r: forwards in even
// rounds and backwards in odd ones (A B B A A B ...), so that a drift of
// the machine over the runs (its clock, its load, the Go heap) weighs on
// every variant alike instead of always on the one that runs last.
func roundOrder(n, r int) []int {
	o := make([]int, n)
	for i := range o {
		o[i] = i
		if r%2 == 1 {
			o[i] = n - 1 - i
		}
	}
	return o
}

// gcHeadroom is the heap growth a timed run may make before the Go
// collector runs: enough that a run sees few collections, each for
// the bytes it allocated itself.
const gcHeadroom = 64 << 20

// setupMemoryLimit is the Go memory limit of a run's untimed phases
// (setup, counting and profiled runs) when the user set none: the
// collector then works harder near it instead of letting the heap double
// (a comparison sets every variant's machine up at once: the read
// workload's four machines hold their 64 MiB files). Timed runs get
// their own setting (quietGC).
const setupMemoryLimit = 900 << 20

// gcState is the collector's setting before a timed run.
type gcState struct {
	percent int
	limit   int64
}

// quietGC collects the garbage of earlier runs (every variant's and the
// setup's), then lets the next timed run grow the heap by gcHeadroom
// before the collector runs again. With the default GOGC the collector
// would start every time the heap doubled: a run of a variant that
// allocates would pay a collection per live heap's worth of bytes, so
// that its cost depended on how much else the process holds (the other
// variants' machines, a 64 MiB file) and on how many collections the
// machine's load stretched, not on what the variant allocates. The
// kernel frees at once; a fixed headroom makes each variant's
// collections a function of its own allocations.
func quietGC() gcState {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	st := gcState{percent: debug.SetGCPercent(-1), limit: debug.SetMemoryLimit(-1)}
	debug.SetMemoryLimit(int64(ms.Sys-ms.HeapReleased) + gcHeadroom)
	return st
}

// restore puts the collector's setting back.
func (g gcState) restore() {
	debug.SetMemoryLimit(g.limit)
	debug.SetGCPercent(g.percent)
}

func rep(cfg Config, w *Workload) string {
	if cfg.Patch != nil {
		return cfg.Patch.ID
	}
	if w.Patch != nil {
		return w.Patch.ID
	}
	return "variant"
}

func isBugErr(err error) bool {
	_, ok := kernel.AsBug(err)
	return ok
}

// reset calls the instance's Reset between timed runs, if it has one.
func (s *system) reset() error {
	if r, ok := s.inst.(Resetter); ok {
		return r.Reset()
	}
	return nil
}

// calibrate finds an operation count per worker that makes a timed run last
// about target, as testing.B does, and at most maxOps. Only a failing Reset
// is an error.
func calibrate(s *system, target time.Duration, maxOps int) (int, error) {
	n, done := 1, 0
	for {
		d, _ := s.timed(n, done)
		done += n
		if err := s.reset(); err != nil {
			return 0, fmt.Errorf("reset: %w", err)
		}
		if d >= target || n >= maxOps {
			return n, nil
		}
		// Aim 20% past the target, growing at most 100x per step.
		next := n * 100
		if d > 0 {
			if est := int(float64(n) * 1.2 * float64(target) / float64(d)); est < next {
				next = est
			}
		}
		if next <= n {
			next = n + 1
		}
		n = min(next, maxOps)
	}
}

// countedBase is what a task had counted before the counting run's
// operations.
type countedBase struct {
	ev  *events.Counters
	mem *kmem.Stats
}

// countingRun runs a fresh system on a counting kernel and records events
// and allocation counts per operation, summed over every task of the
// machine: the workers and whatever tasks the workload runs on its own
// (a read path's block device and workqueue workers, a crypto engine's
// threads), less what each had counted during setup.
func countingRun(cfg Config, w *Workload, params map[string]string, set patch.Set, nt, ops int, m *Measurement) error {
	n := cfg.CountOps
	if n <= 0 {
		n = min(ops, 2000)
	}
	s, err := setup(cfg, w, params, set, nt, true)
	if err != nil {
		return err
	}
	defer s.close()
	if *s.k.Patches() != m.Patches {
		return fmt.Errorf("%s %s: counting run on %v, timed runs on %v", w.Name, m.Variant, s.k.Patches(), m.Patches)
	}
	base := map[*kernel.Task]countedBase{}
	for _, t := range s.k.CountedTasks() {
		base[t] = countedBase{t.Ev.Clone(), t.Stats.Clone()}
	}
	var wg sync.WaitGroup
	errs := make([]int, nt)
	first := make([]string, nt)
	for i, op := range s.ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < n; j++ {
				if err := op(j); err != nil {
					errs[i]++
					if first[i] == "" {
						first[i] = err.Error()
					}
				}
			}
		}()
	}
	wg.Wait()
	total := events.New()
	var kmallocs, kbytes uint64
	for _, t := range s.k.CountedTasks() {
		tot := t.Stats.Totals()
		if b, ok := base[t]; ok {
			total.Merge(t.Ev.Sub(b.ev))
			bt := b.mem.Totals()
			tot.Allocs -= bt.Allocs
			tot.Bytes -= bt.Bytes
		} else {
			total.Merge(t.Ev)
		}
		kmallocs += tot.Allocs
		kbytes += tot.Bytes
	}
	for i := range s.tasks {
		m.Errors += errs[i]
		if m.FirstError == "" {
			m.FirstError = first[i]
		}
	}
	totalOps := float64(n * nt)
	m.Events = map[string]float64{}
	for name, v := range total.Map() {
		m.Events[name] = float64(v) / totalOps
	}
	m.Kmallocs = float64(kmallocs) / totalOps
	m.KmallocBytes = float64(kbytes) / totalOps
	for _, b := range s.k.Bugs.All() {
		m.Bugs = append(m.Bugs, b.Error())
	}
	return nil
}
