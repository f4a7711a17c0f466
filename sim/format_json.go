package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime"
)

// JSONSchema names the layout WriteJSON writes and ReadJSON reads
// (docs/CLI.md describes it). It changes when a field changes meaning.
const JSONSchema = "vfslab-ab/1"

// jsonReport is the JSON form of a Report. Every key is snake_case.
type jsonReport struct {
	Schema       string            `json:"schema"`
	Workload     string            `json:"workload"`
	Op           string            `json:"op"`
	Patch        string            `json:"patch,omitempty"`
	OtherPatches string            `json:"other_patches,omitempty"`
	Seed         uint64            `json:"seed"`
	Params       map[string]string `json:"params,omitempty"`
	Count        int               `json:"count"`
	SlubDebug    bool              `json:"slub_debug"`
	Interrupted  bool              `json:"interrupted,omitempty"`
	Machine      jsonMachine       `json:"machine"`
	Groups       []jsonGroup       `json:"groups"`
}

// jsonMachine says where the figures were measured, for comparisons
// across machines.
type jsonMachine struct {
	GoVersion  string `json:"go_version"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	NumCPU     int    `json:"num_cpu"`
}

type jsonGroup struct {
	Threads  int           `json:"threads"`
	Variants []jsonVariant `json:"variants"`
}

// jsonVariant is one variant's result at one thread count: medians of the
// timed runs, events per operation from the counting run, the summaries
// and the raw runs.
type jsonVariant struct {
	Variant      string             `json:"variant"`
	Threads      int                `json:"threads"`
	OpsPerWorker int                `json:"ops_per_worker"`
	NsPerOp      *float64           `json:"ns_per_op"`
	OpsPerSec    *float64           `json:"ops_per_sec"`
	MBPerSec     *float64           `json:"mb_per_sec,omitempty"`
	AllocsPerOp  *float64           `json:"allocs_per_op"`
	BytesPerOp   *float64           `json:"bytes_per_op"`
	Events       map[string]float64 `json:"events"`
	// KmallocPerOp and KmallocBytesPerOp are the allocator's per-site
	// accounting (every slab allocation) of the counting run.
	KmallocPerOp      float64  `json:"kmalloc_per_op"`
	KmallocBytesPerOp float64  `json:"kmalloc_bytes_per_op"`
	Stats             Stats    `json:"stats"`
	Runs              jsonRuns `json:"runs"`
	Errors            int      `json:"errors,omitempty"`
	FirstError        string   `json:"first_error,omitempty"`
	Bugs              []string `json:"bugs,omitempty"`
}

type jsonRuns struct {
	NsPerOp     []float64 `json:"ns_per_op"`
	OpsPerSec   []float64 `json:"ops_per_sec"`
	AllocsPerOp []float64 `json:"allocs_per_op"`
	BytesPerOp  []float64 `json:"bytes_per_op"`
	MBPerSec    []float64 `json:"mb_per_sec,omitempty"`
}

// finite returns &v, or nil for a NaN or infinity (JSON has neither).
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// opSummary says what one operation of the named workload is.
func opSummary(workload string) string {
	if w, ok := workloads[workload]; ok {
		return w.Summary
	}
	return ""
}

// WriteJSON writes the report as indented JSON (schema JSONSchema): every
// variant's medians, its events per operation (kmalloc and kmalloc_bytes
// among them), its summaries against the group's base, and every raw run,
// so that ReadJSON can compare it with another run later.
func (r *Report) WriteJSON(w io.Writer) error {
	out := jsonReport{Schema: JSONSchema, Workload: r.Workload, Op: opSummary(r.Workload), Patch: r.Patch,
		OtherPatches: r.Base, Seed: r.Seed, Params: r.Params, Count: r.Count, SlubDebug: r.SlubDebug,
		Interrupted: r.Interrupted,
		Machine: jsonMachine{GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
			GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU()},
		Groups: []jsonGroup{}}
	for _, g := range r.Groups {
		jg := jsonGroup{Threads: g.Threads, Variants: []jsonVariant{}}
		for _, m := range g.Measurements {
			st := m.Stats(g.Measurements[0])
			v := jsonVariant{Variant: m.Variant, Threads: m.Threads, OpsPerWorker: m.Ops,
				NsPerOp: finite(st.NsPerOp.Median), OpsPerSec: finite(st.OpsPerSec.Median),
				AllocsPerOp: finite(st.AllocsPerOp.Median), BytesPerOp: finite(st.BytesPerOp.Median),
				Events: m.EventsPerOp(), KmallocPerOp: m.Kmallocs, KmallocBytesPerOp: m.KmallocBytes, Stats: st,
				Runs: jsonRuns{NsPerOp: m.NsPerOp, OpsPerSec: m.OpsPerSec, AllocsPerOp: m.AllocsPerOp,
					BytesPerOp: m.BytesPerOp, MBPerSec: m.MBPerSec},
				Errors: m.Errors, FirstError: m.FirstError, Bugs: m.Bugs}
			if len(m.MBPerSec) > 0 {
				v.MBPerSec = finite(st.MBPerSec.Median)
			}
			jg.Variants = append(jg.Variants, v)
		}
		out.Groups = append(out.Groups, jg)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// EventsPerOp returns the counting run's events per operation, "kmalloc"
// (successful kmalloc/kzalloc calls) always among them, or nil when there
// was no counting run (an interrupted Run).
func (m *Measurement) EventsPerOp() map[string]float64 {
	if m.Events == nil {
		return nil
	}
	ev := make(map[string]float64, len(m.Events)+1)
	for k, v := range m.Events {
		ev[k] = v
	}
	ev["kmalloc"] += 0
	return ev
}

// ReadJSON reads a report WriteJSON wrote (as `vfslab ab --save` does),
// with its raw runs, so that it can be compared with another.
func ReadJSON(rd io.Reader) (*Report, error) {
	var in jsonReport
	dec := json.NewDecoder(rd)
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("not a vfslab ab JSON report: %w", err)
	}
	if in.Schema != JSONSchema {
		return nil, fmt.Errorf("schema %q, want %q (written by vfslab ab --format json)", in.Schema, JSONSchema)
	}
	r := &Report{Workload: in.Workload, Patch: in.Patch, Base: in.OtherPatches, Seed: in.Seed, Params: in.Params,
		Count: in.Count, SlubDebug: in.SlubDebug, Interrupted: in.Interrupted}
	for _, jg := range in.Groups {
		g := &Group{Threads: jg.Threads}
		for _, v := range jg.Variants {
			if len(v.Runs.NsPerOp) == 0 || len(v.Runs.OpsPerSec) != len(v.Runs.NsPerOp) {
				return nil, fmt.Errorf("variant %s T=%d: no runs", v.Variant, jg.Threads)
			}
			m := &Measurement{Variant: v.Variant, Threads: v.Threads, Ops: v.OpsPerWorker,
				NsPerOp: v.Runs.NsPerOp, OpsPerSec: v.Runs.OpsPerSec, AllocsPerOp: v.Runs.AllocsPerOp,
				BytesPerOp: v.Runs.BytesPerOp, MBPerSec: v.Runs.MBPerSec,
				Events: v.Events, Kmallocs: v.KmallocPerOp, KmallocBytes: v.KmallocBytesPerOp,
				Errors: v.Errors, FirstError: v.FirstError, Bugs: v.Bugs}
			g.Measurements = append(g.Measurements, m)
		}
		if len(g.Measurements) > 0 {
			r.Groups = append(r.Groups, g)
		}
	}
	return r, nil
}
