package review

import (
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/sim"
)

// Perf is a variant's performance verdict: the seed workload's headline
// rows (sim.Headline.Rows: the variant's speed ratio to the base beside
// the seed's, with the production allocator and with slub_debug) and the
// events per operation that differ from the base's.
type Perf struct {
	Workload string          `json:"workload"`
	Rows     []sim.ReportRow `json:"rows"`
	// EventDeltas are the variant's events per operation minus the
	// base's, for every event that differs (production allocator,
	// first thread count).
	EventDeltas map[string]float64 `json:"event_deltas"`
}

// Settings of the review's short headline runs: a verdict, not a
// measurement (vfslab report and vfslab ab measure). The counting run
// does as many operations as a timed run (sim's default), so that a
// workload whose one operation is a whole seed program stays short.
const (
	perfCount   = 2
	perfRunTime = 10 * time.Millisecond
	// perfMaxN caps a workload's "n" (files per operation of create):
	// the rows say the n they ran.
	perfMaxN = 200
)

// perfVerdicts runs p's headline on both allocators and returns the
// verdict of each of variants; none when p has no headline.
func perfVerdicts(p *patch.Patch, variants []string) (map[string]*Perf, error) {
	h, err := sim.HeadlineFor(p.ID)
	if err != nil {
		return nil, nil // no headline: no performance verdict
	}
	out := map[string]*Perf{}
	for _, v := range variants {
		out[v] = &Perf{Workload: h.Workload().Name, Rows: []sim.ReportRow{}, EventDeltas: map[string]float64{}}
	}
	params := map[string]string{}
	for k, v := range h.Params {
		params[k] = v
	}
	if n, err := strconv.Atoi(params["n"]); err == nil && n > perfMaxN {
		params["n"] = strconv.Itoa(perfMaxN)
	}
	for _, slub := range []bool{false, true} {
		cfg := sim.Config{Workload: h.Workload(), Patch: h.Patch, Threads: firstThreads(h.Threads), Params: params, Seed: 1,
			Count: perfCount, RunTime: perfRunTime, SlubDebug: slub}
		rep, err := sim.Run(cfg)
		if err != nil {
			return nil, err
		}
		for _, row := range h.Rows(rep, slub) {
			if pf := out[row.Variant]; pf != nil {
				pf.Rows = append(pf.Rows, row)
			}
		}
		if slub || len(rep.Groups) == 0 {
			continue
		}
		g := rep.Groups[0]
		base := g.Measurements[0]
		for _, m := range g.Measurements[1:] {
			pf := out[m.Variant]
			if pf == nil {
				continue
			}
			for _, name := range eventNames(base.Events, m.Events) {
				if d := m.Events[name] - base.Events[name]; math.Abs(d) > 1e-9 {
					pf.EventDeltas[name] = d
				}
			}
		}
	}
	return out, nil
}

// firstThreads keeps the first thread count of a headline (nil: the
// workload's default): the verdict runs one.
func firstThreads(ts []int) []int {
	if len(ts) == 0 {
		return nil
	}
	return ts[:1]
}

func eventNames(a, b map[string]float64) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]float64{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}
