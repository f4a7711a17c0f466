package sim

import (
	"fmt"
	"math"
	"sort"
	"strings"

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
	// Patch is the patch whose variants are compared.
	Patch *patch.Patch
	// Params are the workload parameters of the run (the others default).
	Params map[string]string
	// Threads are the worker counts (nil: the workload's default).
	Threads []int
	// Metric is MetricOps or MetricMB: the speed the seed measured.
	Metric string
	// SeedRatios holds, for each variant the seed gave a figure for, the
	// seed's speed ratio of that variant to the base (higher is faster).
	SeedRatios map[string]float64
	// Seed is the seed's figure in words (machine, workload, numbers).
	Seed string
	// Explain, when set, says from a run's measurements (their event
	// counts and speeds) why the variants come out in the order they do;
	// the report prints it beside the seed's figures (ReportRow.Explain).
	Explain func(g *Group) string

	workload *Workload
}

// Workload returns the workload h is declared on.
func (h *Headline) Workload() *Workload { return h.workload }

var headlines = map[string]*Headline{} // by patch ID

// registerHeadlines checks w's headlines and records them; errors are
// programming errors, found at start-up.
func registerHeadlines(w *Workload) {
	for _, h := range w.Headlines {
		switch {
		case h.Patch == nil:
			panic("sim: a headline of workload " + w.Name + " has no patch")
		case headlines[h.Patch.ID] != nil:
			panic("sim: two headlines for patch " + h.Patch.ID)
		case h.Metric != MetricOps && h.Metric != MetricMB:
			panic("sim: headline of " + h.Patch.ID + ": bad metric " + h.Metric)
		}
		for v, r := range h.SeedRatios {
			if i, ok := h.Patch.VariantIndex(v); !ok || i == 0 || !(r > 0) {
				panic(fmt.Sprintf("sim: headline of %s: seed ratio %v for variant %q", h.Patch.ID, r, v))
			}
		}
		h.workload = w
		headlines[h.Patch.ID] = h
	}
}

// Headlines returns every registered headline, in seed order.
func Headlines() []*Headline {
	var hs []*Headline
	for _, h := range headlines {
		hs = append(hs, h)
	}
	sort.Slice(hs, func(i, j int) bool {
		if hs[i].Patch.Seed != hs[j].Patch.Seed {
			return hs[i].Patch.Seed < hs[j].Patch.Seed
		}
		return hs[i].Patch.ID < hs[j].Patch.ID
	})
	return hs
}

// HeadlineFor returns the headline of patch id; the error lists the patches
// that have one.
func HeadlineFor(id string) (*Headline, error) {
	if h, ok := headlines[id]; ok {
		return h, nil
	}
	var ids []string
	for _, h := range Headlines() {
		ids = append(ids, h.Patch.ID)
	}
	return nil, fmt.Errorf("unknown patch %q; valid: %s", id, strings.Join(ids, ", "))
}

// ReportRow is one line of the headline report: a variant's measured speed
// ratio to the base beside the seed's.
type ReportRow struct {
	Patch       string   `json:"patch"`
	Workload    string   `json:"workload"`
	SlubDebug   bool     `json:"slub_debug"`
	Threads     int      `json:"threads"`
	Variant     string   `json:"variant"`
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
	Runs        int      `json:"runs"`
	// Command is the vfslab ab command line that measures the row, set by
	// the caller that knows how it ran.
	Command string `json:"command"`
	// Explain is the headline's explanation of the order of its variants
	// in this run (Headline.Explain), the same on every row of a group.
	Explain string `json:"explain,omitempty"`
}

// Run runs h's workload on every variant of h's patch, with seed 1 and the
// timing settings of cfg (Count, RunTime, Ops, CountOps, SlubDebug,
// Progress; its Workload, Patch, Threads, Params and Seed are h's), and
// returns one row per variant other than the base at each thread count.
func (h *Headline) Run(cfg Config) ([]ReportRow, error) {
	cfg.Workload, cfg.Patch, cfg.Threads, cfg.Params, cfg.Seed = h.workload, h.Patch, h.Threads, h.Params, 1
	cfg.Variants = nil
	rep, err := Run(cfg)
	if err != nil {
		return nil, err
	}
	return h.Rows(rep, cfg.SlubDebug), nil
}

// Rows turns a report of h's run into the headline's rows: every variant
// but the base at every thread count, with the seed's ratio where it gave
// one.
func (h *Headline) Rows(rep *Report, slubDebug bool) []ReportRow {
	var rows []ReportRow
	for _, g := range rep.Groups {
		base := g.Measurements[0]
		bst := base.Stats(nil)
		explain := ""
		if h.Explain != nil {
			explain = h.Explain(g)
		}
		for _, m := range g.Measurements[1:] {
			st := m.Stats(base)
			row := ReportRow{Patch: h.Patch.ID, Workload: h.workload.Name, SlubDebug: slubDebug, Threads: g.Threads,
				Variant: m.Variant, Metric: h.Metric, Seed: h.Seed, Kmallocs: m.Kmallocs, BaseKmalloc: base.Kmallocs,
				Bugs: len(m.Bugs), Params: paramString(rep.Params), Runs: len(m.NsPerOp), Explain: explain}
			if h.Metric == MetricMB {
				row.Base, row.Value = bst.MBPerSec.Median, st.MBPerSec.Median
			} else {
				row.Base, row.Value = bst.OpsPerSec.Median, st.OpsPerSec.Median
			}
			row.Ratio, row.P, row.Significant = st.OpsPerSec.Ratio, st.OpsPerSec.P, st.OpsPerSec.Significant
			if r, ok := h.SeedRatios[m.Variant]; ok && !math.IsNaN(r) {
				row.SeedRatio = &r
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
