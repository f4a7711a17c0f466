package sim

import (
	"bytes"
	"fmt"
	"math"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"

	"github.com/vfslab/vfslab/patch"
)

// The profiled run: a fresh system of each variant runs the workload for
// Config.ProfileTime under Go's CPU profiler, apart from the timed runs
// (the profiler's signals and a label's allocations would perturb them)
// and from the counting run. Its samples say where a variant's time goes,
// by model function: the Go functions are named after the kernel's
// (fscrypt.DecryptBio is fscrypt_decrypt_bio), so the shares read as the
// kernel functions' in a perf profile.

// modulePrefix is the import path prefix of the model's packages.
const modulePrefix = "github.com/vfslab/vfslab/"

// FuncShare is one function's share of a profiled run: the samples whose
// innermost model frame is the function (its own time and the Go runtime
// work it calls, such as allocation), as a fraction of all, and that
// share of the run's time per operation.
type FuncShare struct {
	Func    string  `json:"func"`
	Share   float64 `json:"share"`
	NsPerOp float64 `json:"ns_per_op"`
}

// Profile is a variant's profiled run.
type Profile struct {
	// Samples is the number of CPU samples (100 a second per busy CPU);
	// Ops the operations run, all workers together; NsPerOp the run's
	// wall time per operation (the profiler's own cost included).
	Samples int         `json:"samples"`
	Ops     int         `json:"ops"`
	NsPerOp float64     `json:"ns_per_op"`
	Funcs   []FuncShare `json:"funcs"`
}

// Buckets for samples with no model frame.
const (
	FuncGC      = "(Go GC)"
	FuncRuntime = "(Go runtime)"
)

// profileMu serializes profiled runs: Go has one CPU profiler a process.
var profileMu sync.Mutex

// profileRun runs a fresh system of set for about d under the CPU
// profiler and returns its shares; nil when the profiler is busy (another
// profile of the process is running, as under go test -cpuprofile).
func profileRun(cfg Config, w *Workload, params map[string]string, set patch.Set, nt, ops int, d time.Duration) (*Profile, error) {
	profileMu.Lock()
	defer profileMu.Unlock()
	s, err := setup(cfg, w, params, set, nt, false)
	if err != nil {
		return nil, err
	}
	defer s.close()
	chunk := max(1, ops/4)
	s.timed(chunk, 0) // warm up, as the timed runs do
	if err := s.reset(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		return nil, nil
	}
	var run time.Duration
	done := chunk
	total := 0
	for run < d {
		dt, err := s.timed(chunk, done)
		if err != nil {
			if !isBugErr(err) {
				pprof.StopCPUProfile()
				return nil, err
			}
		}
		run += dt
		done += chunk
		total += chunk * nt
		if err := s.reset(); err != nil {
			pprof.StopCPUProfile()
			return nil, err
		}
	}
	pprof.StopCPUProfile()
	p, err := profile.Parse(&buf)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	out := shares(p)
	out.Ops = total
	out.NsPerOp = float64(run.Nanoseconds()) / float64(total)
	for i := range out.Funcs {
		out.Funcs[i].NsPerOp = out.Funcs[i].Share * out.NsPerOp
	}
	return out, nil
}

// shares attributes every sample to its innermost model function (the
// sim package's own frames and the reset between chunks left out).
func shares(p *profile.Profile) *Profile {
	counts := map[string]int64{}
	var all int64
	for _, smp := range p.Sample {
		if len(smp.Value) == 0 {
			continue
		}
		n := int64(1)
		if len(smp.Value) > 0 {
			n = smp.Value[0] // samples
		}
		fn, skip := attribute(smp)
		if skip {
			continue
		}
		counts[fn] += n
		all += n
	}
	out := &Profile{Samples: int(all)}
	for fn, n := range counts {
		out.Funcs = append(out.Funcs, FuncShare{Func: fn, Share: float64(n) / float64(max(all, 1))})
	}
	sort.Slice(out.Funcs, func(i, j int) bool {
		if out.Funcs[i].Share != out.Funcs[j].Share {
			return out.Funcs[i].Share > out.Funcs[j].Share
		}
		return out.Funcs[i].Func < out.Funcs[j].Func
	})
	return out
}

// attribute returns the function a sample counts for, or skip for a
// sample taken in the runner's reset between chunks.
func attribute(smp *profile.Sample) (fn string, skip bool) {
	gc := false
	for _, loc := range smp.Location {
		// A location's lines run innermost first (inlined calls).
		for _, ln := range loc.Line {
			if ln.Function == nil {
				continue
			}
			name := ln.Function.Name
			if strings.Contains(name, "sim.(*system).reset") {
				return "", true
			}
			if fn == "" {
				if m, ok := modelFunc(name); ok {
					fn = m
				}
			}
			if strings.HasPrefix(name, "runtime.gcBgMarkWorker") || strings.HasPrefix(name, "runtime.gcAssist") || strings.HasPrefix(name, "runtime.bgsweep") || strings.HasPrefix(name, "runtime.bgscavenge") {
				gc = true
			}
		}
	}
	switch {
	case fn != "":
		return fn, false
	case gc:
		return FuncGC, false
	}
	return FuncRuntime, false
}

// modelFunc shortens a model function's symbol ("github.com/vfslab/
// vfslab/fscrypt.DecryptBio.func1" is "fscrypt.DecryptBio"); ok is false
// for a function outside the model (the runtime, the standard library,
// the runner itself).
func modelFunc(sym string) (string, bool) {
	rest, ok := strings.CutPrefix(sym, modulePrefix)
	if !ok || strings.HasPrefix(rest, "sim.") || strings.HasPrefix(rest, "sim/") {
		return "", false
	}
	// Drop closures' and generic instances' suffixes.
	if i := strings.Index(rest, "[...]"); i >= 0 {
		rest = rest[:i] + rest[i+5:]
	}
	for {
		i := strings.LastIndex(rest, ".func")
		if i < 0 {
			break
		}
		rest = rest[:i]
	}
	return rest, true
}

// ProfileDeltas compares two profiled runs: per function, the change of
// its time per operation (variant's minus base's), the largest changes
// first, at most n of them, keeping only changes larger than twice their
// sampling error (a share s of N samples is off by sqrt(s(1-s)/N)), so
// that a few samples more or less never read as a cause.
func ProfileDeltas(base, variant *Profile, n int) []FuncShare {
	if base == nil || variant == nil || base.Samples == 0 || variant.Samples == 0 {
		return nil
	}
	type side struct{ ns, varNs float64 }
	sides := map[string][2]side{}
	add := func(i int, p *Profile) {
		for _, f := range p.Funcs {
			sd := sides[f.Func]
			se := p.NsPerOp * math.Sqrt(f.Share*(1-f.Share)/float64(p.Samples))
			sd[i] = side{f.NsPerOp, se * se}
			sides[f.Func] = sd
		}
	}
	add(0, base)
	add(1, variant)
	var out []FuncShare
	for fn, sd := range sides {
		d := sd[1].ns - sd[0].ns
		// A function absent from one side has a share below 1/N there.
		v0, v1 := sd[0].varNs, sd[1].varNs
		if sd[0].ns == 0 {
			v0 = sq(base.NsPerOp / float64(base.Samples))
		}
		if sd[1].ns == 0 {
			v1 = sq(variant.NsPerOp / float64(variant.Samples))
		}
		if math.Abs(d) > 2*math.Sqrt(v0+v1) {
			out = append(out, FuncShare{Func: fn, NsPerOp: d})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := math.Abs(out[i].NsPerOp), math.Abs(out[j].NsPerOp)
		if a != b {
			return a > b
		}
		return out[i].Func < out[j].Func
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

func sq(x float64) float64 { return x * x }
