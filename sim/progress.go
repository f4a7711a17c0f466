package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vfslab/vfslab/patch"
)

// Phase is a step of Run.
type Phase int

// The phases Run reports through Config.OnProgress.
const (
	PhaseSetup     Phase = iota // building one variant's system (Workload.Setup and its workers)
	PhaseCalibrate              // finding the operation count of a timed run
	PhaseRun                    // one timed run of one variant (reported when it ends)
	PhaseCount                  // the counting run of one variant
	PhaseProfile                // the profiled run of one variant (Config.ProfileTime)
)

func (p Phase) String() string {
	switch p {
	case PhaseSetup:
		return "setup"
	case PhaseCalibrate:
		return "calibrate"
	case PhaseRun:
		return "run"
	case PhaseCount:
		return "count"
	case PhaseProfile:
		return "profile"
	}
	return fmt.Sprintf("phase%d", int(p))
}

// ProgressEvent is one step of Run: a phase starting, or a timed run
// ended with its figures.
type ProgressEvent struct {
	Phase    Phase
	Workload string
	Patch    string // the patch whose variants are compared ("" for none)
	Variant  string
	Threads  int
	// Run and Runs number a timed run (PhaseRun only): run Run of Runs.
	Run, Runs int
	// NsPerOp and OpsPerSec are the timed run's figures (PhaseRun only).
	NsPerOp, OpsPerSec float64
	// Step counts the steps of the whole Run started (or, for PhaseRun,
	// ended) so far, this one included; Steps is their total.
	Step, Steps int
}

// String is the event as one line of plain progress.
func (e ProgressEvent) String() string {
	who := fmt.Sprintf("%s %s=%s T=%d", e.Workload, orVariant(e.Patch), e.Variant, e.Threads)
	switch e.Phase {
	case PhaseRun:
		return fmt.Sprintf("%s run %d/%d: %.1f ns/op %.0f ops/s", who, e.Run, e.Runs, e.NsPerOp, e.OpsPerSec)
	case PhaseSetup:
		return who + ": setting up"
	case PhaseCalibrate:
		return who + ": calibrating the operations per run"
	case PhaseCount:
		return who + ": counting run"
	case PhaseProfile:
		return who + ": profiled run"
	}
	return who + ": " + e.Phase.String()
}

func orVariant(id string) string {
	if id == "" {
		return "variant"
	}
	return id
}

// progress numbers Run's steps and hands each event to the Config's
// writer and hook.
type progress struct {
	cfg   *Config
	w     *Workload
	step  int
	steps int
	group int // thread counts done
}

func (p *progress) emit(e ProgressEvent) {
	if p.cfg.Progress == nil && p.cfg.OnProgress == nil {
		return
	}
	p.step++
	e.Workload, e.Step, e.Steps = p.w.Name, p.step, p.steps
	if id := rep(*p.cfg, p.w); id != "variant" {
		e.Patch = id
	}
	if p.cfg.Progress != nil {
		fmt.Fprintln(p.cfg.Progress, e.String())
	}
	if p.cfg.OnProgress != nil {
		p.cfg.OnProgress(e)
	}
}

// stepsPerGroup is the number of progress steps of one thread count:
// every variant's setup, the calibration, every timed run, every counting
// run.
func stepsPerGroup(cfg *Config, variants int) int {
	n := variants + cfg.Count*variants + variants
	if cfg.Ops <= 0 {
		n++
	}
	return n
}

// measured drops the measurements that have no timed run yet (Run was
// interrupted before their first).
func measured(ms []*Measurement) []*Measurement {
	var out []*Measurement
	for _, m := range ms {
		if len(m.NsPerOp) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// checkConfig refuses, before anything runs, what Run cannot measure or
// what would not fit: a patch the workload does not run, unknown or
// repeated variants, thread counts out of 1..MaxThreads or repeated, a
// negative or too large count, operation count or run time, and more
// operations per run than the workload's MaxOps. It fills in the defaults
// of Count and RunTime.
func checkConfig(cfg *Config, w *Workload, p *patch.Patch, params map[string]string) error {
	if p != nil && !w.Exercised(p) {
		runs := []string{}
		if w.Patch != nil {
			runs = append(runs, w.Patch.ID)
		}
		for _, x := range w.Exercises {
			runs = append(runs, x.ID)
		}
		msg := fmt.Sprintf("workload %s does not run the code of %s, so its variants would measure the same thing", w.Name, p.ID)
		if len(runs) > 0 {
			msg += "; it runs " + strings.Join(runs, ", ")
		}
		return &ConfigError{Field: "--patch " + p.ID, Msg: msg}
	}
	if p == nil && len(cfg.Variants) > 0 {
		return &ConfigError{Field: "--variants", Msg: fmt.Sprintf("workload %s compares no patch", w.Name)}
	}
	for i, v := range cfg.Variants {
		if _, ok := p.VariantIndex(v); !ok {
			return &ConfigError{Field: "--variants", Msg: fmt.Sprintf("%s has no variant %q; valid: %s", p.ID, v, strings.Join(p.VariantNames(), ", "))}
		}
		if slices.Contains(cfg.Variants[:i], v) {
			return &ConfigError{Field: "--variants", Msg: fmt.Sprintf("variant %q given twice", v)}
		}
	}
	for i, nt := range cfg.Threads {
		if nt < 1 || nt > MaxThreads {
			return &ConfigError{Field: "--threads", Msg: fmt.Sprintf("%d: want 1..%d", nt, MaxThreads)}
		}
		if slices.Contains(cfg.Threads[:i], nt) {
			return &ConfigError{Field: "--threads", Msg: fmt.Sprintf("%d given twice", nt)}
		}
	}
	switch {
	case cfg.Count < 0 || cfg.Count > MaxCount:
		return &ConfigError{Field: "--count", Msg: fmt.Sprintf("%d: want 1..%d", cfg.Count, MaxCount)}
	case cfg.Ops < 0 || cfg.Ops > MaxOps:
		return &ConfigError{Field: "--ops", Msg: fmt.Sprintf("%d: want 0 (calibrate) or 1..%d", cfg.Ops, MaxOps)}
	case cfg.RunTime < 0 || cfg.RunTime > MaxRunTime:
		return &ConfigError{Field: "--runtime", Msg: fmt.Sprintf("%v: want 1ns..%v", cfg.RunTime, MaxRunTime)}
	case cfg.CountOps < 0 || cfg.CountOps > MaxOps:
		return &ConfigError{Field: "CountOps", Msg: fmt.Sprintf("%d: want 0 (default) or 1..%d", cfg.CountOps, MaxOps)}
	}
	if cfg.Count == 0 {
		cfg.Count = 10
	}
	if cfg.RunTime == 0 {
		cfg.RunTime = 200 * time.Millisecond
	}
	if w.MaxOps != nil {
		threads := cfg.Threads
		if len(threads) == 0 {
			threads = w.DefaultThreads
		}
		if len(threads) == 0 {
			threads = []int{1}
		}
		for _, nt := range threads {
			maxOps := w.MaxOps(params, nt)
			if maxOps < 1 {
				return &ConfigError{Field: "--threads " + fmt.Sprint(nt),
					Msg: fmt.Sprintf("one operation of each of %d workers of %s (%s) would not fit in memory; use fewer threads or a smaller parameter", nt, w.Name, paramText(params))}
			}
			if cfg.Ops > maxOps {
				return &ConfigError{Field: "--ops", Msg: fmt.Sprintf("%d: %s at T=%d (%s) holds at most %d operations per worker in one run", cfg.Ops, w.Name, nt, paramText(params), maxOps)}
			}
		}
	}
	return nil
}

// paramText renders parameter values as sorted "k=v" pairs.
func paramText(p map[string]string) string {
	var kv []string
	for k, v := range p {
		kv = append(kv, k+"="+v)
	}
	slices.Sort(kv)
	return strings.Join(kv, " ")
}
