package main

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"os"
	"runtime"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/vfslab/vfslab/sim"
)

// The HTML report: one self-contained page (inline SVG drawn with
// gonum.org/v1/plot, inline CSS, no script, nothing fetched) with
//   - each patch's measured ratios under the production and the slub_debug
//     allocator on a log axis centred on x1, with their intervals,
//     significance and verdicts, and the seed's figure as a reference mark;
//   - open1's ops/s against the worker count, per variant, when the run
//     measured enough worker counts to show a curve;
//   - every patch's events per operation, per variant;
// each with the vfslab ab command that reproduces it, and the rows with
// their verdicts and conclusions.

// htmlChart is one chart of the page.
type htmlChart struct {
	Title    string
	SVG      template.HTML
	Legend   []htmlKey
	Commands []string
	Note     string
}

// htmlKey is one entry of a chart's legend.
type htmlKey struct {
	Color template.CSS
	Mark  string // "bar", "pale", "broken", "seed", "line"
	Text  string
}

// htmlPage is what the page template renders.
type htmlPage struct {
	Command  string
	Version  string
	Machine  string
	Review   string
	Warnings []string
	Ratios   []htmlChart
	Scaling  []htmlChart
	NoCurve  string
	Events   []htmlChart
	Rows     []sim.ReportRow
}

// writeHTMLFile renders the report as the HTML page into path.
func writeHTMLFile(path string, o *reportOut, cmdPath string, argv []string) error {
	page, err := htmlPageOf(o, cmdPath+" "+strings.Join(argvTail(argv), " "))
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, page); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func htmlPageOf(o *reportOut, command string) (*htmlPage, error) {
	runs := o.runs
	page := &htmlPage{
		Command:  command,
		Version:  version(),
		Machine:  o.machine.String(),
		Review:   o.review,
		Warnings: o.warnings(),
		Rows:     rows(runs),
	}
	var err error
	if page.Ratios, err = ratioCharts(runs); err != nil {
		return nil, err
	}
	if page.Scaling, page.NoCurve, err = scalingCharts(runs); err != nil {
		return nil, err
	}
	if page.Events, err = eventCharts(runs); err != nil {
		return nil, err
	}
	return page, nil
}

// argvTail is the command line after "vfslab report" (the flags), or all
// of it when it does not start so.
func argvTail(argv []string) []string {
	for i, a := range argv {
		if a == "report" {
			return argv[i+1:]
		}
	}
	if len(argv) > 1 {
		return argv[1:]
	}
	return nil
}

// ratioLegend is the key of every ratio chart.
func ratioLegend(hasSeed bool) []htmlKey {
	k := []htmlKey{
		{Color: cssColor(colProd), Mark: "bar", Text: "production allocator"},
		{Color: cssColor(colDebug), Mark: "bar", Text: "slub_debug"},
		{Color: cssColor(lighten(colProd)), Mark: "pale", Text: "pale: not significant (p ≥ 0.05)"},
		{Color: cssColor(colBroken), Mark: "broken", Text: "crossed: broken as posted (review verdict)"},
		{Color: cssColor(colSeed), Mark: "whisker", Text: "whisker: 95% bootstrap interval"},
	}
	if hasSeed {
		k = append(k, htmlKey{Color: cssColor(colSeed), Mark: "seed", Text: "▲ dashed: the seed's figure (○ beside a broken variant: not reproduced)"})
	}
	return k
}

// ratioCharts: per patch, its variants' measured ratios under each
// allocator, with the seed's figure where it gave one.
func ratioCharts(runs []*reportRun) ([]htmlChart, error) {
	var out []htmlChart
	for _, id := range patchOrder(runs) {
		var variants []string
		prod, debug := map[string]*sim.ReportRow{}, map[string]*sim.ReportRow{}
		var cmds []string
		seenV := map[string]bool{}
		hasSeed := false
		for _, r := range runs {
			if r.h.ID() != id {
				continue
			}
			cmds = append(cmds, r.command)
			for _, row := range rows([]*reportRun{r}) {
				if len(r.h.Threads) > 0 && row.Threads != r.h.Threads[0] {
					continue // the seed's thread count only
				}
				if !seenV[row.Variant] {
					seenV[row.Variant] = true
					variants = append(variants, row.Variant)
				}
				row := row
				if row.SlubDebug {
					debug[row.Variant] = &row
				} else {
					prod[row.Variant] = &row
				}
				hasSeed = hasSeed || row.SeedRatio != nil
			}
		}
		if len(variants) == 0 {
			continue
		}
		vs := ""
		for _, r := range prod {
			vs = r.Against
		}
		for _, r := range debug {
			vs = r.Against
		}
		svg, err := ratioChart(id+": speed against "+vs, variants, prod, debug)
		if err != nil {
			return nil, err
		}
		note := "Each bar runs from x1 (the speed of " + vs + ") to the variant's median ratio, on a log axis centred on x1."
		if !hasSeed {
			note += " The seed reports no ratio for these variants."
		}
		out = append(out, htmlChart{Title: id, SVG: svg, Legend: ratioLegend(hasSeed), Commands: cmds, Note: note})
	}
	return out, nil
}

// minScalingPoints is the fewest worker counts that draw a curve.
const minScalingPoints = 3

// scalingCharts: ops/s against the worker count (production allocator),
// one line per variant, for runs with enough worker counts; the reason
// when there is none.
func scalingCharts(runs []*reportRun) ([]htmlChart, string, error) {
	var out []htmlChart
	none := ""
	for _, r := range runs {
		if r.slubDebug || len(r.h.Threads) == 0 {
			continue
		}
		if len(r.rep.Groups) < minScalingPoints {
			none = fmt.Sprintf("%s ran %d worker count(s); a curve needs %d or more (vfslab ab %s --threads 1,2,4,8).",
				r.h.ID(), len(r.rep.Groups), minScalingPoints, r.h.Workload().Name)
			continue
		}
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s on %s: throughput against workers", r.h.ID(), r.h.Workload().Name)
		p.Title.TextStyle.Font.Size = 11
		p.X.Label.Text = "workers (threads)"
		p.Y.Label.Text = "operations per second, all workers"
		p.Y.Min = 0
		p.Y.Tick.Marker = numTicks{}
		var ts []int
		for _, g := range r.rep.Groups {
			ts = append(ts, g.Threads)
		}
		p.X.Tick.Marker = threadTicks{ts}
		p.Add(gridLines{})
		var keys []htmlKey
		top := 0.0
		order := r.rep.Groups[0].Measurements
		for i, m0 := range order {
			lp := &linePlot{color: variantColors[i%len(variantColors)], shape: lineShapes[i%len(lineShapes)]}
			for _, g := range r.rep.Groups {
				for _, m := range g.Measurements {
					if m.Variant != m0.Variant {
						continue
					}
					st := m.Stats(nil).OpsPerSec
					lp.xs = append(lp.xs, float64(g.Threads))
					lp.ys = append(lp.ys, finiteOr(st.Median, math.NaN()))
					lp.lo = append(lp.lo, finiteOr(st.Lo, math.NaN()))
					lp.hi = append(lp.hi, finiteOr(st.Hi, math.NaN()))
				}
			}
			p.Add(lp)
			_, _, _, ymax := lp.DataRange()
			top = math.Max(top, ymax)
			keys = append(keys, htmlKey{Color: cssColor(lp.color), Mark: "line", Text: m0.Variant})
		}
		p.X.Min, p.X.Max = 0.5, float64(ts[len(ts)-1])+0.5
		p.Y.Max = top * 1.12 // headroom: no point or whisker on the frame
		svg, err := svgOf(p, chartWidth, 3.3*vg.Inch)
		if err != nil {
			return nil, "", err
		}
		out = append(out, htmlChart{Title: r.h.ID() + " scaling", SVG: svg, Legend: keys, Commands: []string{r.command},
			Note: fmt.Sprintf("Medians of the timed runs with their 95%% intervals. The workers share this machine's %d CPUs (GOMAXPROCS %d): past that many workers, more cannot add throughput.",
				runtime.NumCPU(), runtime.GOMAXPROCS(0))})
	}
	if len(out) > 0 {
		none = ""
	}
	return out, none, nil
}

func finiteOr(v, or float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return or
	}
	return v
}

// eventCharts: per patch (production allocator, the seed's thread
// count), the events per operation that differ between its variants.
func eventCharts(runs []*reportRun) ([]htmlChart, error) {
	var out []htmlChart
	for _, r := range runs {
		if r.slubDebug || len(r.rep.Groups) == 0 {
			continue
		}
		g := r.rep.Groups[0]
		for _, gg := range r.rep.Groups {
			if len(r.h.Threads) > 0 && gg.Threads == r.h.Threads[0] {
				g = gg
			}
		}
		names := differingEvents(g.Measurements, 10)
		if len(names) == 0 {
			continue
		}
		var variants []string
		for _, m := range g.Measurements {
			variants = append(variants, m.Variant)
		}
		counts := make([][]float64, len(names))
		for e, n := range names {
			for _, m := range g.Measurements {
				counts[e] = append(counts[e], m.Events[n])
			}
		}
		svg, _, err := eventChart(fmt.Sprintf("%s on %s (T=%d): events per operation", r.h.ID(), r.h.Workload().Name, g.Threads), names, variants, counts)
		if err != nil {
			return nil, err
		}
		var keys []htmlKey
		for i, v := range variants {
			keys = append(keys, htmlKey{Color: cssColor(variantColors[i%len(variantColors)]), Mark: "bar", Text: v})
		}
		out = append(out, htmlChart{Title: r.h.ID() + " events", SVG: svg, Legend: keys, Commands: []string{r.command},
			Note: "The events whose count per operation differs between the variants (at most 10, largest first; byte counts left out), from the counting run. Each bar is the variant's count over the largest variant's count for that event; the exact count follows it."})
	}
	return out, nil
}

// differingEvents returns up to max event names whose per-operation
// counts differ between ms, the largest first (byte counts left out: they
// would dwarf the rest).
func differingEvents(ms []*sim.Measurement, max int) []string {
	type ev struct {
		name string
		top  float64
	}
	seen := map[string]bool{}
	var evs []ev
	for _, m := range ms {
		for n := range m.Events {
			if seen[n] || strings.HasSuffix(n, "_bytes") {
				continue
			}
			seen[n] = true
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, o := range ms {
				lo, hi = math.Min(lo, o.Events[n]), math.Max(hi, o.Events[n])
			}
			if hi-lo > 1e-9*math.Max(1, hi) {
				evs = append(evs, ev{n, hi})
			}
		}
	}
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].top != evs[j].top {
			return evs[i].top > evs[j].top
		}
		return evs[i].name < evs[j].name
	})
	var out []string
	for i := 0; i < len(evs) && i < max; i++ {
		out = append(out, evs[i].name)
	}
	return out
}

// patchOrder lists the patches of runs in the report's order.
func patchOrder(runs []*reportRun) []string {
	var ids []string
	seen := map[string]bool{}
	for _, r := range runs {
		if !seen[r.h.ID()] {
			seen[r.h.ID()] = true
			ids = append(ids, r.h.ID())
		}
	}
	return ids
}

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"ratio": func(r sim.ReportRow) string { return ratioMark(&r) },
	"ci":    func(r sim.ReportRow) string { return ciText(&r) },
	"seed":  func(r sim.ReportRow) string { return seedText(&r) },
	"verdict": func(r sim.ReportRow) string {
		return r.Verdict.Short()
	},
	"num":    sim.FormatNum,
	"ran":    ranText,
	"events": func(r sim.ReportRow) string { return deltasText(firstDeltas(r.Deltas, 6)) },
	"alloc":  func(b bool) string { return map[bool]string{false: "production", true: "slub_debug"}[b] },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>vfslab report</title>
<style>
body { font-family: sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #222; }
p { overflow-wrap: anywhere; }
h1, h2 { font-weight: 600; }
figure { margin: 1em 0; flex: 1 1 480px; max-width: 540px; min-width: 0; }
figure svg { max-width: 100%; height: auto; display: block; }
figcaption { font-size: 85%; color: #444; }
code, pre { font-family: monospace; font-size: 85%; }
pre { background: #f4f4f4; padding: .5em; white-space: pre-wrap; overflow-wrap: anywhere; }
.grid { display: flex; flex-wrap: wrap; gap: 1.5em; }
.legend { font-size: 80%; margin: .3em 0; }
.legend span.k { display: inline-block; margin-right: 1em; white-space: nowrap; }
.sw { display: inline-block; width: 1.2em; height: .8em; vertical-align: middle; margin-right: .3em; }
.sw.broken { border: 2px solid; background: transparent; }
.sw.whisker, .sw.seed, .sw.line { height: 0; border-top: 2px solid; }
.sw.seed { border-top-style: dashed; }
.warn { background: #fff3cd; border: 1px solid #e0c36c; padding: .5em; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; font-size: 80%; }
td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: right; vertical-align: top; white-space: nowrap; }
td.w { white-space: normal; min-width: 22em; text-align: left; }
td.l, th.l { text-align: left; }
tr.broken td { background: #fdecea; }
</style>
</head>
<body>
<h1>vfslab report</h1>
<p>Each modelled patch's variants on the workload its seed measured, against the variant the seed's "before" ran,
beside the ratio the seed reported. Made by <code>{{.Command}}</code> (vfslab {{.Version}}).</p>
<p>Machine: {{.Machine}}.<br>{{.Review}}.</p>
{{range .Warnings}}<p class="warn">{{.}}</p>
{{end}}
<p>Ratios from the simulator on this machine; the seeds' from their kernels and CPUs: the shapes compare, the magnitudes
not always. A broken variant (its review finds it leaking, overflowing, corrupting or failing as posted) is crossed out:
its ratio is no speed-up, and the seed's figure beside it is not reproduced by it.</p>

<h2>Ratios beside the seeds' (both allocators)</h2>
<div class="grid">
{{range .Ratios}}<figure>{{.SVG}}<div class="legend">{{range .Legend}}<span class="k"><span class="sw {{.Mark}}" style="{{if ne .Mark "broken"}}background-color: {{.Color}}; {{end}}border-color: {{.Color}}"></span>{{.Text}}</span> {{end}}</div><figcaption>{{.Note}} Made by:<pre>{{range .Commands}}{{.}}
{{end}}</pre></figcaption></figure>
{{end}}</div>

<h2>Scaling with threads</h2>
<div class="grid">
{{range .Scaling}}<figure>{{.SVG}}<div class="legend">{{range .Legend}}<span class="k"><span class="sw {{.Mark}}" style="border-color: {{.Color}}"></span>{{.Text}}</span> {{end}}</div><figcaption>{{.Note}} Made by:<pre>{{range .Commands}}{{.}}
{{end}}</pre></figcaption></figure>
{{else}}<p>No scaling chart: {{if .NoCurve}}{{.NoCurve}}{{else}}no run with several thread counts (vfslab report --html runs them).{{end}}</p>
{{end}}</div>

<h2>Events per operation, per variant</h2>
<div class="grid">
{{range .Events}}<figure>{{.SVG}}<div class="legend">{{range .Legend}}<span class="k"><span class="sw {{.Mark}}" style="background-color: {{.Color}}"></span>{{.Text}}</span> {{end}}</div><figcaption>{{.Note}} Made by:<pre>{{range .Commands}}{{.}}
{{end}}</pre></figcaption></figure>
{{end}}</div>

<h2>The rows</h2>
<div class="scroll"><table>
<tr><th class="l">patch</th><th class="l">allocator</th><th>T</th><th class="l">variant</th><th class="l">vs</th><th>vs speed</th><th>variant speed</th><th>ratio</th><th>95% CI</th><th>p</th><th>seed</th><th class="l">verdict</th><th class="l">conclusion</th><th class="l">ran</th><th class="l">events/op that moved</th></tr>
{{range .Rows}}<tr{{if .Broken}} class="broken"{{end}}><td class="l">{{.Patch}}</td><td class="l">{{alloc .SlubDebug}}</td><td>{{.Threads}}</td><td class="l">{{.Variant}}</td><td class="l">{{.Against}}</td><td>{{num .Base}} {{.Metric}}</td><td>{{num .Value}} {{.Metric}}</td><td>{{ratio .}}</td><td>{{ci .}}</td><td>{{printf "%.3f" .P}}</td><td>{{seed .}}</td><td class="l">{{verdict .}}</td><td class="w">{{.Conclusion}}</td><td class="l">{{ran .}}</td><td class="w">{{events .}}</td></tr>
{{end}}</table></div>
<p>~: not significant (Mann-Whitney U-test, p &ge; 0.05). ?: noisy (the interval, the runs' spread or the machine's noise is larger than the effect).
!: broken as posted; its seed figure is in parentheses. vs: the variant the ratio is against (what the seed's "before" ran).
ran: timed runs &times; operations per worker per run (&times; what one operation is); slub_debug rows may run fewer or smaller operations: each says what it ran.
Each row's vfslab ab command is in <code>vfslab report --format json</code>.</p>
</body>
</html>
`))
