package main

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"os"
	"runtime"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/vfslab/vfslab/sim"
)

// The HTML report: one self-contained page (inline SVG drawn with
// gonum.org/v1/plot, inline CSS, no script, nothing fetched) with
//   - each patch's measured ratios beside its seed's, under the production
//     and the slub_debug allocator;
//   - open1's ops/s against the worker count, per variant;
//   - every patch's events per operation, per variant;
// each with the vfslab ab command that reproduces it.

// htmlChart is one chart of the page.
type htmlChart struct {
	Title    string
	SVG      template.HTML
	Commands []string
	Note     string
}

// htmlPage is what the page template renders.
type htmlPage struct {
	Command  string
	Version  string
	Machine  string
	Ratios   []htmlChart
	Scaling  []htmlChart
	Events   []htmlChart
	Rows     []sim.ReportRow
	Problems []string
}

// writeHTMLFile renders runs as the HTML report into path.
func writeHTMLFile(path string, runs []*reportRun, cmdPath string, argv []string) error {
	page := htmlPage{
		Command: cmdPath + " " + strings.Join(argvTail(argv), " "),
		Version: version(),
		Machine: fmt.Sprintf("%s/%s, GOMAXPROCS %d, %d CPUs", runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU()),
		Rows:    rows(runs),
	}
	var err error
	if page.Ratios, err = ratioCharts(runs); err != nil {
		return err
	}
	if page.Scaling, err = scalingCharts(runs); err != nil {
		return err
	}
	if page.Events, err = eventCharts(runs); err != nil {
		return err
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, page); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
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

// svgOf draws p as inline SVG of w x h.
func svgOf(p *plot.Plot, w, h vg.Length) (template.HTML, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:] // drop the XML declaration and doctype: inline SVG
	}
	return template.HTML(s), nil
}

// finiteOr0 keeps a chart drawable when a value is missing.
func finiteOr0(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// ratioCharts: per patch, its variants' measured ratios under each
// allocator beside the seed's.
func ratioCharts(runs []*reportRun) ([]htmlChart, error) {
	var out []htmlChart
	for _, id := range patchOrder(runs) {
		var variants []string
		prod, debug, seed := map[string]float64{}, map[string]float64{}, map[string]float64{}
		var cmds []string
		seenV := map[string]bool{}
		for _, r := range runs {
			if r.h.ID() != id {
				continue
			}
			cmds = append(cmds, r.command)
			for _, row := range rows([]*reportRun{r}) {
				if r.h.Workload().Name == "open1" && len(r.h.Threads) > 0 && row.Threads != r.h.Threads[0] {
					continue // the seed's thread count only
				}
				key := row.Variant
				if !seenV[key] {
					seenV[key] = true
					variants = append(variants, key)
				}
				if row.SlubDebug {
					debug[key] = finiteOr0(row.Ratio)
				} else {
					prod[key] = finiteOr0(row.Ratio)
				}
				if row.SeedRatio != nil {
					seed[key] = *row.SeedRatio
				}
			}
		}
		if len(variants) == 0 {
			continue
		}
		p := plot.New()
		p.Title.Text = id + ": speed ratio"
		p.Y.Label.Text = "variant speed / vs speed"
		p.Y.Min = 0
		series := []struct {
			name string
			m    map[string]float64
		}{{"measured, production", prod}, {"measured, slub_debug", debug}, {"seed's figure", seed}}
		top := 1.0
		for _, s := range series {
			for _, v := range s.m {
				top = math.Max(top, v)
			}
		}
		p.Y.Max = top * 1.45 // room for the legend above the bars
		w := vg.Points(14)
		for i, s := range series {
			vs := make(plotter.Values, len(variants))
			for j, v := range variants {
				vs[j] = s.m[v] // 0 where absent (the seed gives no figure)
			}
			bc, err := plotter.NewBarChart(vs, w)
			if err != nil {
				return nil, err
			}
			bc.Color = plotutil.Color(i)
			bc.LineStyle.Width = 0
			bc.Offset = vg.Length(i-1) * w
			p.Add(bc)
			p.Legend.Add(s.name, bc)
		}
		one := plotter.NewFunction(func(float64) float64 { return 1 })
		one.Color = color.Gray{Y: 100}
		one.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
		p.Add(one)
		p.Legend.Top = true
		p.Legend.Left = true
		p.NominalX(variants...)
		svg, err := svgOf(p, 5*vg.Inch, 3.2*vg.Inch)
		if err != nil {
			return nil, err
		}
		out = append(out, htmlChart{Title: id, SVG: svg, Commands: cmds,
			Note: "A bar of 0 for the seed: the seed reports no figure for that variant. The dashed line is the variant compared with (x1: the patch's base, or the headline's vs)."})
	}
	return out, nil
}

// scalingCharts: open1's ops/s against the worker count (production
// allocator), one line per variant.
func scalingCharts(runs []*reportRun) ([]htmlChart, error) {
	var out []htmlChart
	for _, r := range runs {
		if r.slubDebug || len(r.rep.Groups) < 2 {
			continue
		}
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s on %s: throughput against workers", r.h.ID(), r.h.Workload().Name)
		p.X.Label.Text = "workers (threads)"
		p.Y.Label.Text = "ops/s (all workers)"
		p.Y.Min = 0
		byVariant := map[string]plotter.XYs{}
		var order []string
		for _, g := range r.rep.Groups {
			for _, m := range g.Measurements {
				if _, ok := byVariant[m.Variant]; !ok {
					order = append(order, m.Variant)
				}
				byVariant[m.Variant] = append(byVariant[m.Variant], plotter.XY{X: float64(g.Threads), Y: finiteOr0(m.Stats(nil).OpsPerSec.Median)})
			}
		}
		for i, v := range order {
			l, pts, err := plotter.NewLinePoints(byVariant[v])
			if err != nil {
				return nil, err
			}
			l.Color = plotutil.Color(i)
			pts.Color = plotutil.Color(i)
			pts.Shape = plotutil.Shape(i)
			p.Add(l, pts)
			p.Legend.Add(v, l, pts)
		}
		top := 0.0
		for _, xys := range byVariant {
			for _, xy := range xys {
				top = math.Max(top, xy.Y)
			}
		}
		p.Y.Max = top * 1.35
		p.Legend.Top = true
		p.Legend.Left = true
		svg, err := svgOf(p, 5*vg.Inch, 3.2*vg.Inch)
		if err != nil {
			return nil, err
		}
		out = append(out, htmlChart{Title: r.h.ID() + " scaling", SVG: svg, Commands: []string{r.command},
			Note: "Medians of the timed runs; the simulator's workers share this machine's CPUs, so the curve flattens at GOMAXPROCS."})
	}
	return out, nil
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
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s on %s (T=%d): events per operation", r.h.ID(), r.h.Workload().Name, g.Threads)
		p.Y.Label.Text = "count per operation (counting run)"
		n := len(g.Measurements)
		w := vg.Points(math.Max(3, 48/float64(n)))
		for i, m := range g.Measurements {
			vs := make(plotter.Values, len(names))
			for j, e := range names {
				vs[j] = m.Events[e]
			}
			bc, err := plotter.NewBarChart(vs, w)
			if err != nil {
				return nil, err
			}
			bc.Color = plotutil.Color(i)
			bc.LineStyle.Width = 0
			bc.Offset = vg.Length(float64(i)-float64(n-1)/2) * w
			p.Add(bc)
			p.Legend.Add(m.Variant, bc)
		}
		top := 0.0
		for _, m := range g.Measurements {
			for _, e := range names {
				top = math.Max(top, m.Events[e])
			}
		}
		p.Y.Max = top * 1.3 // room for the legend above the bars
		p.Legend.Top = true
		p.NominalX(names...)
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YTop
		svg, err := svgOf(p, 7*vg.Inch, 3.6*vg.Inch)
		if err != nil {
			return nil, err
		}
		out = append(out, htmlChart{Title: r.h.ID() + " events", SVG: svg, Commands: []string{r.command},
			Note: "The events whose count per operation differs between the variants (at most 10, largest first); counts in bytes are left out."})
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
	"ratio": func(r sim.ReportRow) string {
		s := fmt.Sprintf("x%.2f", r.Ratio)
		if !r.Significant {
			s = "~" + s
		}
		return s
	},
	"seed": func(r sim.ReportRow) string {
		if r.SeedRatio == nil {
			return "-"
		}
		return fmt.Sprintf("x%.2f", *r.SeedRatio)
	},
	"num":    sim.FormatNum,
	"ran":    ranText,
	"events": eventsText,
	"alloc":  func(b bool) string { return map[bool]string{false: "production", true: "slub_debug"}[b] },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>vfslab report</title>
<style>
body { font-family: sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }
h1, h2 { font-weight: 600; }
figure { margin: 1.5em 0; }
figcaption { font-size: 90%; color: #444; }
code, pre { font-family: monospace; font-size: 90%; }
pre { background: #f4f4f4; padding: .5em; overflow-x: auto; }
table { border-collapse: collapse; font-size: 85%; }
td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: right; }
td.l, th.l { text-align: left; }
.grid { display: flex; flex-wrap: wrap; gap: 1em; }
</style>
</head>
<body>
<h1>vfslab report</h1>
<p>Each modelled patch's variants on the workload its seed measured, against the patch's base,
beside the ratio the seed reported. Made by <code>{{.Command}}</code>
(vfslab {{.Version}}; {{.Machine}}).
Ratios from the simulator on this machine; the seeds' from their kernels and CPUs:
the shapes compare, the magnitudes not always.</p>

<h2>Ratios beside the seeds' (both allocators)</h2>
<div class="grid">
{{range .Ratios}}<figure>{{.SVG}}<figcaption>{{.Note}} Made by:<pre>{{range .Commands}}{{.}}
{{end}}</pre></figcaption></figure>
{{end}}</div>

<h2>Scaling with threads</h2>
{{range .Scaling}}<figure>{{.SVG}}<figcaption>{{.Note}} Made by:<pre>{{range .Commands}}{{.}}
{{end}}</pre></figcaption></figure>
{{else}}<p>No run with several thread counts.</p>
{{end}}

<h2>Events per operation, per variant</h2>
{{range .Events}}<figure>{{.SVG}}<figcaption>{{.Note}} Made by:<pre>{{range .Commands}}{{.}}
{{end}}</pre></figcaption></figure>
{{end}}

<h2>The rows</h2>
<table>
<tr><th class="l">patch</th><th class="l">allocator</th><th>T</th><th class="l">variant</th><th class="l">vs</th><th>vs speed</th><th>variant speed</th><th>ratio</th><th>p</th><th>seed</th><th class="l">ran</th><th>kmalloc/op</th><th class="l">events/op</th><th class="l">command</th></tr>
{{range .Rows}}<tr><td class="l">{{.Patch}}</td><td class="l">{{alloc .SlubDebug}}</td><td>{{.Threads}}</td><td class="l">{{.Variant}}</td><td class="l">{{.Against}}</td><td>{{num .Base}} {{.Metric}}</td><td>{{num .Value}} {{.Metric}}</td><td>{{ratio .}}</td><td>{{printf "%.3f" .P}}</td><td>{{seed .}}</td><td class="l">{{ran .}}</td><td>{{num .BaseKmalloc}} &rarr; {{num .Kmallocs}}</td><td class="l">{{events .}}</td><td class="l"><code>{{.Command}}</code></td></tr>
{{end}}</table>
<p>~: not significant (Mann-Whitney U-test, p &ge; 0.05). vs: the variant the ratio is against (what the seed's "before" ran).
ran: timed runs &times; operations per worker per run (&times; what one operation is); for create, one operation is a whole run of n creates.
slub_debug rows may run fewer or smaller operations: each says what it ran.</p>
</body>
</html>
`))
