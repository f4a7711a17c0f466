package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
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
	// Machine says where the figures were measured (CPU, cores, Go,
	// commit, load average and noise probe before and after), for
	// comparisons across machines.
	Machine *Machine `json:"machine"`
	// Warnings are the lines every format carries: a machine too noisy
	// for its figures, counts that cannot reach p < 0.05.
	Warnings []string    `json:"warnings"`
	Review   string      `json:"review,omitempty"`
	Groups   []jsonGroup `json:"groups"`
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
	DataBytes    int64              `json:"data_bytes_per_op,omitempty"`
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
	// Comparison is the variant's ratio of ops/s to the group's first
	// variant with its interval and spread (absent for the first).
	Comparison *jsonRatio `json:"comparison,omitempty"`
	// Verdict is the review verdict with what the counting run found.
	Verdict *Verdict     `json:"verdict"`
	Deltas  []EventDelta `json:"event_deltas,omitempty"`
	Profile *Profile     `json:"profile,omitempty"`
	Missing []string     `json:"missing_costs,omitempty"`
}

// jsonRatio is RatioStats with missing values as null.
type jsonRatio struct {
	Ratio       *float64 `json:"ratio"`
	Lo          *float64 `json:"lo"`
	Hi          *float64 `json:"hi"`
	CVBase      float64  `json:"cv_base"`
	CVVariant   float64  `json:"cv_variant"`
	P           float64  `json:"p"`
	MinP        float64  `json:"min_p"`
	Significant bool     `json:"significant"`
	Noisy       bool     `json:"noisy"`
	Conclusion  string   `json:"conclusion"`
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
		Interrupted: r.Interrupted, Machine: r.Machine, Warnings: r.Warnings(), Review: r.Review,
		Groups: []jsonGroup{}}
	if out.Machine == nil {
		out.Machine = NewMachine(false)
	}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
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
			v.DataBytes = m.DataBytesPerOp
			v.Verdict = withCounted(r.Verdicts[m.Variant], m)
			v.Profile = m.Profile
			if base := g.Measurements[0]; m != base {
				rs := CompareRuns(base.OpsPerSec, m.OpsPerSec)
				v.Comparison = &jsonRatio{Ratio: finite(rs.Ratio), Lo: finite(rs.Lo), Hi: finite(rs.Hi), CVBase: rs.CVBase, CVVariant: rs.CVVariant,
					P: rs.P, MinP: rs.MinP, Significant: rs.Significant, Noisy: rs.Noisy,
					Conclusion: Conclusion(m.Variant, orBase(base.Variant), rs, v.Verdict, m.CorruptFraction())}
				v.Deltas = EventDeltas(base, m, 0)
				v.Missing = MissingCosts(base, m, r.SlubDebug)
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
		Count: in.Count, SlubDebug: in.SlubDebug, Interrupted: in.Interrupted, Machine: in.Machine, Review: in.Review}
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
				Errors: v.Errors, FirstError: v.FirstError, Bugs: v.Bugs, Profile: v.Profile, DataBytesPerOp: v.DataBytes}
			if v.Verdict != nil && v.Verdict.Reviewed {
				if r.Verdicts == nil {
					r.Verdicts = map[string]*Verdict{}
				}
				r.Verdicts[v.Variant] = v.Verdict
			}
			g.Measurements = append(g.Measurements, m)
		}
		if len(g.Measurements) > 0 {
			r.Groups = append(r.Groups, g)
		}
	}
	return r, nil
}
