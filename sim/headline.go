package sim

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/patch"
)

// Metrics a headline compares.
const (
	MetricOps = "ops/s" // operations per second
	MetricMB  = "MB/s"  // data throughput (the instance is a Sizer)
)

// Headline is the figure a patch's seed reported and the run of a workload
// that reproduces it: what `vfslab report` runs for the patch. It is
// declared beside its workload, in Workload.Headlines; Register checks it.
type Headline struct {
	// Patch is the patch whose variants are compared; for a headline over
	// several patches (Together), the first of them, which files the row.
	Patch *patch.Patch
	// Together, when not empty, makes the headline one over several
	// patches measured together, as a seed that ran them at once: it
	// compares two machines, every patch at its base and every patch of
	// Together at its variant (Patch must be among them), and gives one
	// row, named by the variants joined with "+" ("v2+v2").
	Together []Choice
	// Params are the workload parameters of the run (the others default).
	Params map[string]string
	// Threads are the worker counts (nil: the workload's default).
	Threads []int
	// Metric is MetricOps or MetricMB: the speed the seed measured.
	Metric string
	// Base is the variant the ratios are against: the code the seed's
	// "before" figure ran. Empty means the patch's base (its first
	// variant); a seed whose "before" is a later kernel's code names that
	// variant (fscrypt-v1-kdf's "~7000 cycles before" is the 6.17 sync
	// code it replaced). Every other variant gets a row against it.
	Base string
	// SeedRatios holds, for each variant the seed gave a figure for, the
	// seed's speed ratio of that variant to Base (higher is faster).
	SeedRatios map[string]float64
	// Seed is the seed's figure in words (machine, workload, numbers).
	Seed string
	// Events names events whose counts per operation each row carries
	// beside its ratio (fscrypt-v1-kdf: the FPU sections per key
	// derivation). An event not registered in this build is left out.
	Events []string
	// Unit, when not nil, says what one operation is made of for the
	// parameters of a run ((1000, "creates") for create with n=1000), so
	// that every row says how much it ran.
	Unit func(params map[string]string) (int, string)
	// Size and DebugSize are how much `vfslab report` runs under the
	// production allocator and under slub_debug: a budget chosen per
	// headline so that the whole report fits its time (docs/CLI.md), and
	// stated in every row.
	Size, DebugSize Size
	// Explain, when set, says from a run's measurements (their event
	// counts and speeds) why the variants come out in the order they do;
	// the report prints it beside the seed's figures (ReportRow.Explain).
	Explain func(g *Group) string

	workload *Workload
}

// ParamUnit is a Headline.Unit for workloads one of whose parameters
// counts what an operation is made of: ParamUnit("n", "creates") says that
// an operation of create with n=1000 is 1000 creates.
func ParamUnit(param, unit string) func(map[string]string) (int, string) {
	return func(params map[string]string) (int, string) {
		n, _ := strconv.Atoi(params[param])
		return n, unit
	}
}

// Choice is one patch at one variant.
type Choice struct {
	Patch   *patch.Patch
	Variant string
}

// Size is how much a report run of a headline does under one allocator.
type Size struct {
	// Params override the headline's Params (a slub_debug run may create
	// fewer files per operation).
	Params map[string]string
	// Ops is the number of operations per worker in one timed run; 0
	// calibrates to the report's --runtime.
	Ops int
	// Count is the number of timed runs per variant; 0 takes the report's
	// --count.
	Count int
	// CountOps is the number of operations per worker in the counting
	// run (0: the runner's default, min(Ops, 2000)).
	CountOps int
}

// ID names the headline: its patch's ID, or for a headline over several
// patches their IDs joined with "+".
func (h *Headline) ID() string {
	if len(h.Together) == 0 {
		return h.Patch.ID
	}
	var ids []string
	for _, c := range h.Together {
		ids = append(ids, c.Patch.ID)
	}
	return strings.Join(ids, "+")
}

// Patches returns the patches whose variants the headline compares.
func (h *Headline) Patches() []*patch.Patch {
	if len(h.Together) == 0 {
		return []*patch.Patch{h.Patch}
	}
	var ps []*patch.Patch
	for _, c := range h.Together {
		ps = append(ps, c.Patch)
	}
	return ps
}

// Workload returns the workload h is declared on.
func (h *Headline) Workload() *Workload { return h.workload }

// BaseVariant is the variant the ratios are against: Base, or the patch's
// base; for a headline over several patches, "base+base...".
func (h *Headline) BaseVariant() string {
	if len(h.Together) > 0 {
		b := make([]string, len(h.Together))
		for i, c := range h.Together {
			b[i] = c.Patch.Variants[0].Name
		}
		return strings.Join(b, "+")
	}
	if h.Base != "" {
		return h.Base
	}
	return h.Patch.Variants[0].Name
}

// Variants are the variants a report run compares, the one the ratios are
// against first: the patch's variants with Base moved to the front, or,
// for a headline over several patches, the two combined names.
func (h *Headline) Variants() []string {
	if len(h.Together) > 0 {
		v := make([]string, len(h.Together))
		for i, c := range h.Together {
			v[i] = c.Variant
		}
		return []string{h.BaseVariant(), strings.Join(v, "+")}
	}
	out := []string{h.BaseVariant()}
	for _, v := range h.Patch.VariantNames() {
		if v != out[0] {
			out = append(out, v)
		}
	}
	return out
}

// sets are the two machines' patch sets of a headline over several
// patches: every patch at its base, then every patch of Together at its
// variant.
func (h *Headline) sets() []patch.Set {
	var with patch.Set
	for _, c := range h.Together {
		with = with.MustWith(c.Patch, c.Variant)
	}
	return []patch.Set{{}, with}
}

// SizeFor returns the size of a report run under the allocator asked for.
func (h *Headline) SizeFor(slubDebug bool) Size {
	if slubDebug {
		return h.DebugSize
	}
	return h.Size
}

// ParamsFor returns the workload parameters of a run under the allocator
// asked for: Params with the size's overrides.
func (h *Headline) ParamsFor(slubDebug bool) map[string]string {
	out := map[string]string{}
	for k, v := range h.Params {
		out[k] = v
	}
	for k, v := range h.SizeFor(slubDebug).Params {
		out[k] = v
	}
	return out
}

var headlines = map[string]*Headline{} // by ID

// registerHeadlines checks w's headlines and records them; errors are
// programming errors, found at start-up.
func registerHeadlines(w *Workload) {
	for _, h := range w.Headlines {
		switch {
		case h.Patch == nil:
			panic("sim: a headline of workload " + w.Name + " has no patch")
		case headlines[h.ID()] != nil:
			panic("sim: two headlines for " + h.ID())
		case h.Metric != MetricOps && h.Metric != MetricMB:
			panic("sim: headline of " + h.ID() + ": bad metric " + h.Metric)
		}
		if len(h.Together) > 0 {
			if h.Base != "" || len(h.Together) < 2 || h.Together[0].Patch != h.Patch {
				panic("sim: headline " + h.ID() + ": Together needs two patches or more, Patch first, and no Base")
			}
			for _, c := range h.Together {
				if i, ok := c.Patch.VariantIndex(c.Variant); !ok || i == 0 || (c.Patch != w.Patch && !w.Exercised(c.Patch)) {
					panic(fmt.Sprintf("sim: headline %s: %s=%q is not a variant that workload %s runs", h.ID(), c.Patch.ID, c.Variant, w.Name))
				}
			}
		} else if _, ok := h.Patch.VariantIndex(h.BaseVariant()); !ok {
			panic(fmt.Sprintf("sim: headline of %s: no variant %q to compare against", h.ID(), h.Base))
		}
		vs := h.Variants()
		for v, r := range h.SeedRatios {
			if i := slices.Index(vs, v); i < 1 || !(r > 0) {
				panic(fmt.Sprintf("sim: headline of %s: seed ratio %v for variant %q", h.ID(), r, v))
			}
		}
		for _, s := range []Size{h.Size, h.DebugSize} {
			if s.Ops < 0 || s.Count < 0 || s.CountOps < 0 || s.Count > MaxCount {
				panic(fmt.Sprintf("sim: headline of %s: bad size %+v", h.ID(), s))
			}
		}
		h.workload = w
		headlines[h.ID()] = h
	}
}

// Headlines returns every registered headline, in seed order (a headline
// over several patches after those of its patches).
func Headlines() []*Headline {
	var hs []*Headline
	for _, h := range headlines {
		hs = append(hs, h)
	}
	last := func(h *Headline) string {
		s := ""
		for _, p := range h.Patches() {
			s = max(s, p.Seed)
		}
		return s
	}
	sort.Slice(hs, func(i, j int) bool {
		if a, b := last(hs[i]), last(hs[j]); a != b {
			return a < b
		}
		if a, b := len(hs[i].Together), len(hs[j].Together); a != b {
			return a < b
		}
		return hs[i].ID() < hs[j].ID()
	})
	return hs
}

// HeadlineFor returns the headline of patch id (or of a headline over
// several patches, by its ID); the error lists the patches that have one.
func HeadlineFor(id string) (*Headline, error) {
	if h, ok := headlines[id]; ok {
		return h, nil
	}
	var ids []string
	for _, h := range Headlines() {
		ids = append(ids, h.ID())
	}
	return nil, fmt.Errorf("unknown patch %q; valid: %s", id, strings.Join(ids, ", "))
}

// ReportRow is one line of the headline report: a variant's measured speed
// ratio to the variant the headline compares with (Against) beside the
// seed's, under one allocator, with how much the row ran.
type ReportRow struct {
	// Patch is the headline's ID (a headline over several patches joins
	// them with "+").
	Patch     string `json:"patch"`
	Workload  string `json:"workload"`
	SlubDebug bool   `json:"slub_debug"`
	Threads   int    `json:"threads"`
	Variant   string `json:"variant"`
	// Against is the variant the ratio is against (the patch's base, or
	// the headline's Base).
	Against string `json:"against"`
	// Patches is, for a headline over several patches, the set the
	// variant's machine ran ("fscrypt-fname-onstack=v2,...").
	Patches     string   `json:"patches,omitempty"`
	Metric      string   `json:"metric"`
	Base        float64  `json:"base"`
	Value       float64  `json:"value"`
	Ratio       float64  `json:"ratio"`
	P           float64  `json:"p"`
	Significant bool     `json:"significant"`
	SeedRatio   *float64 `json:"seed_ratio,omitempty"`
	Seed        string   `json:"seed"`
	Kmallocs    float64  `json:"kmalloc_per_op"`
	BaseKmalloc float64  `json:"base_kmalloc_per_op"`
	Params      string   `json:"params,omitempty"`
	Bugs        int      `json:"bugs,omitempty"`
	// Runs is the number of timed runs of each variant, OpsPerRun the
	// operations each worker ran in one.
	Runs      int `json:"runs"`
	OpsPerRun int `json:"ops_per_run"`
	// PerOp and Unit say what one operation is made of (1000 "creates");
	// Total is how many of them each variant's timed runs made, all
	// workers and runs together (runs x ops x threads x PerOp).
	PerOp int    `json:"per_op,omitempty"`
	Unit  string `json:"unit,omitempty"`
	Total int    `json:"total,omitempty"`
	// Events holds, for each of the headline's Events, its count per
	// operation for the variant the ratio is against and for this one.
	Events map[string]EventPair `json:"events,omitempty"`
	// Command is the vfslab ab command line that measures the row, set by
	// the caller that knows how it ran.
	Command string `json:"command"`
	// Explain is the headline's explanation of the order of its variants
	// in this run (Headline.Explain), the same on every row of a group.
	Explain string `json:"explain,omitempty"`

	// RatioLo and RatioHi bound the ratio's bootstrap 95% confidence
	// interval over the interleaved runs (null with too few runs);
	// CVBase and CVVariant are each side's between-run coefficient of
	// variation; MinP is the smallest p-value the runs' counts allow,
	// CountWarning says when it cannot reach 0.05; Noisy is true when
	// the interval or the spread is larger than the effect (RatioStats).
	RatioLo      *float64 `json:"ratio_lo"`
	RatioHi      *float64 `json:"ratio_hi"`
	CVBase       float64  `json:"cv_base"`
	CVVariant    float64  `json:"cv_variant"`
	MinP         float64  `json:"min_p"`
	CountWarning string   `json:"count_warning,omitempty"`
	Noisy        bool     `json:"noisy"`
	// MachineNoisy is true when the noise probe found the machine too
	// noisy (Machine.Quiet), NoiseCV the probe's CV.
	MachineNoisy bool    `json:"machine_noisy"`
	NoiseCV      float64 `json:"machine_noise_cv"`
	// Verdict is the variant's review verdict with what the row's own
	// counting run found; Broken when it has findings, in which case
	// the row's ratio is no reproduction of the seed's figure.
	Verdict *Verdict `json:"verdict"`
	Broken  bool     `json:"broken"`
	// Conclusion is the one line a reader should take from the row.
	Conclusion string `json:"conclusion"`
	// Deltas are the events per operation that moved between the two
	// counting runs (the largest relative change first); Corrupt the
	// share of pages read back wrong (null when not checked).
	Deltas  []EventDelta `json:"event_deltas"`
	Corrupt *float64     `json:"corrupt_fraction"`
	// ProfileDeltas are the largest changes of time per operation by
	// model function between the two profiled runs, ProfileSamples the
	// smaller run's CPU samples (0: no profiled run).
	ProfileDeltas  []FuncShare `json:"profile_deltas,omitempty"`
	ProfileSamples int         `json:"profile_samples,omitempty"`
	// Missing lists the kernel's costs for the events that moved that
	// the model does not have (said, never added to the ratio).
	Missing []string `json:"missing_costs,omitempty"`
}

// EventPair is an event's count per operation on the variant compared
// with and on the row's variant (counting runs).
type EventPair struct {
	Against float64 `json:"against"`
	Variant float64 `json:"variant"`
}

// Config returns the run configuration of h under one allocator, with the
// timing settings of cfg (Count, RunTime, Ops, CountOps, Progress,
// OnProgress): the headline's Size fills in Ops, Count and CountOps that
// cfg leaves at 0, unless cfg.RunTime asks for calibration. Workload,
// Patch, Variants (or Sets), Threads, Params and Seed are h's.
func (h *Headline) Config(cfg Config, slubDebug bool) Config {
	size := h.SizeFor(slubDebug)
	if cfg.RunTime == 0 && cfg.Ops == 0 {
		cfg.Ops = size.Ops
	}
	if cfg.Count == 0 {
		cfg.Count = size.Count
	}
	if cfg.CountOps == 0 && cfg.Ops == size.Ops {
		cfg.CountOps = size.CountOps
	}
	cfg.Workload, cfg.Patch, cfg.Threads, cfg.Params, cfg.Seed = h.workload, h.Patch, h.Threads, h.ParamsFor(slubDebug), 1
	cfg.SlubDebug = slubDebug
	cfg.Variants, cfg.Sets, cfg.SetNames = nil, nil, nil
	if len(h.Together) > 0 {
		cfg.Sets, cfg.SetNames = h.sets(), h.Variants()
	} else {
		cfg.Variants = h.Variants()
	}
	return cfg
}

// Run runs h's workload on the variants h compares (Config), and returns
// one row per variant other than the one compared with, at each thread
// count.
func (h *Headline) Run(cfg Config) ([]ReportRow, error) {
	cfg = h.Config(cfg, cfg.SlubDebug)
	rep, err := Run(cfg)
	if err != nil {
		return nil, err
	}
	return h.Rows(rep, cfg.SlubDebug), nil
}

// Rows turns a report of h's run into the headline's rows: every variant
// but the first (the one compared with) at every thread count, with the
// seed's ratio where it gave one.
func (h *Headline) Rows(rep *Report, slubDebug bool) []ReportRow {
	var rows []ReportRow
	perOp, unit := 0, ""
	if h.Unit != nil {
		perOp, unit = h.Unit(rep.Params)
	}
	var evs []string
	for _, e := range h.Events {
		if _, ok := events.Lookup(e); ok {
			evs = append(evs, e)
		}
	}
	for _, g := range rep.Groups {
		base := g.Measurements[0]
		bst := base.Stats(nil)
		explain := ""
		if h.Explain != nil {
			explain = h.Explain(g)
		}
		for _, m := range g.Measurements[1:] {
			st := m.Stats(base)
			row := ReportRow{Patch: h.ID(), Workload: h.workload.Name, SlubDebug: slubDebug, Threads: g.Threads,
				Variant: m.Variant, Against: base.Variant, Metric: h.Metric, Seed: h.Seed, Kmallocs: m.Kmallocs, BaseKmalloc: base.Kmallocs,
				Bugs: len(m.Bugs), Params: paramString(rep.Params), Runs: len(m.NsPerOp), OpsPerRun: m.Ops, PerOp: perOp, Unit: unit, Explain: explain}
			if len(h.Together) > 0 {
				row.Patches = m.Patches.Changed()
			}
			if perOp > 0 {
				row.Total = row.Runs * m.Ops * g.Threads * perOp
			}
			if h.Metric == MetricMB {
				row.Base, row.Value = bst.MBPerSec.Median, st.MBPerSec.Median
			} else {
				row.Base, row.Value = bst.OpsPerSec.Median, st.OpsPerSec.Median
			}
			rs := CompareRuns(base.OpsPerSec, m.OpsPerSec)
			row.Ratio, row.P, row.Significant = rs.Ratio, rs.P, rs.Significant
			row.RatioLo, row.RatioHi = finite(rs.Lo), finite(rs.Hi)
			row.CVBase, row.CVVariant, row.MinP, row.Noisy = rs.CVBase, rs.CVVariant, rs.MinP, rs.Noisy
			row.CountWarning = CountWarning(len(base.OpsPerSec), len(m.OpsPerSec))
			if rep.Machine.Probed() {
				row.NoiseCV, row.MachineNoisy = rep.Machine.NoiseCV(), !rep.Machine.Quiet()
				// The machine's own noise larger than the effect.
				row.Noisy = row.Noisy || row.MachineNoisy && row.NoiseCV > math.Abs(rs.Ratio-1)
			}
			row.Verdict = withCounted(rep.Verdicts[m.Variant], m)
			row.Broken = row.Verdict.Broken()
			row.Corrupt = finite(m.CorruptFraction())
			row.Conclusion = Conclusion(m.Variant, base.Variant, rs, row.Verdict, m.CorruptFraction())
			row.Deltas = EventDeltas(base, m, 0)
			if row.Deltas == nil {
				row.Deltas = []EventDelta{}
			}
			if base.Profile != nil && m.Profile != nil {
				row.ProfileDeltas = ProfileDeltas(base.Profile, m.Profile, 6)
				row.ProfileSamples = min(base.Profile.Samples, m.Profile.Samples)
			}
			row.Missing = MissingCosts(base, m, slubDebug)
			if r, ok := h.SeedRatios[m.Variant]; ok && !math.IsNaN(r) {
				row.SeedRatio = &r
			}
			for _, e := range evs {
				if row.Events == nil {
					row.Events = map[string]EventPair{}
				}
				row.Events[e] = EventPair{Against: base.Events[e], Variant: m.Events[e]}
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// paramString renders workload parameters as sorted "k=v" pairs.
func paramString(p map[string]string) string {
	var kv []string
	for k, v := range p {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, " ")
}
