package main

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/vfslab/vfslab/sim"
)

// The report's charts, drawn with gonum.org/v1/plot: pure Go, its SVG
// deterministic and self-contained (no script, no font fetched), and
// already the project's plotting library; its log scale, tickers and
// canvas cover what the charts need, and the few marks it lacks (bars
// from x1 on a log axis, interval whiskers, reference ticks) are small
// plotters below. Every chart keeps its legend out of the plot (in the
// page's HTML beside it), and one colour means one thing on every chart:
// colProd the production allocator, colDebug slub_debug, colSeed the
// seed's figure, colBroken a broken variant; variants in the events
// charts take colours from variantColors, which holds none of those.

var (
	colProd   = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff} // blue
	colDebug  = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff} // orange
	colSeed   = color.RGBA{A: 0xff}                            // black
	colBroken = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff} // red
	colGrid   = color.Gray{Y: 0xcc}

	variantColors = []color.RGBA{
		{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, // green
		{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, // purple
		{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, // brown
		{R: 0xe3, G: 0x77, B: 0xc2, A: 0xff}, // pink
		{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff}, // cyan
		{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff}, // olive
		{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff}, // grey
	}
)

// cssColor renders c for the page's legends.
func cssColor(c color.Color) template.CSS {
	r, g, b, _ := c.RGBA()
	return template.CSS(fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8))
}

// chartWidth is every chart's width: two fit side by side in the page's
// 1100 px column, and each shrinks with the page (CSS max-width).
const chartWidth = 5.2 * vg.Inch

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

// barMark is one variant's measured ratio under one allocator: a bar
// from x1 to the ratio on the log axis, its interval as a whisker, a
// lighter fill when not significant, and the broken mark.
type barMark struct {
	x                 float64 // the variant's slot (0, 1, ...) plus the allocator's offset
	ratio, lo, hi     float64 // NaN when missing
	significant, bad  bool
	noisy             bool
	color             color.Color
	seed              float64 // the seed's ratio (NaN: none), drawn as a reference tick
	width             vg.Length
	offset            vg.Length
	seedBesideBroken  bool
	showSeedReference bool
}

// ratioBars is a plot.Plotter drawing barMarks.
type ratioBars struct{ marks []barMark }

func (rb *ratioBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	one := trY(1)
	for _, m := range rb.marks {
		if math.IsNaN(m.ratio) || m.ratio <= 0 {
			continue
		}
		x := trX(m.x) + m.offset
		y := trY(m.ratio)
		x0, x1 := x-m.width/2, x+m.width/2
		fill := m.color
		if !m.significant {
			fill = lighten(m.color)
		}
		pts := []vg.Point{{X: x0, Y: one}, {X: x1, Y: one}, {X: x1, Y: y}, {X: x0, Y: y}}
		c.FillPolygon(fill, c.ClipPolygonY(pts))
		if m.bad {
			// A broken variant: a red outline and a cross through the bar.
			ls := draw.LineStyle{Color: colBroken, Width: vg.Points(1.5)}
			c.StrokeLines(ls, c.ClipLinesY(append(pts, pts[0]))...)
			c.StrokeLines(ls, c.ClipLinesY([]vg.Point{{X: x0, Y: one}, {X: x1, Y: y}}, []vg.Point{{X: x1, Y: one}, {X: x0, Y: y}})...)
		}
		if !math.IsNaN(m.lo) && !math.IsNaN(m.hi) && m.lo > 0 {
			ls := draw.LineStyle{Color: colSeed, Width: vg.Points(1)}
			ylo, yhi := trY(m.lo), trY(m.hi)
			cw := m.width / 3
			c.StrokeLines(ls, c.ClipLinesY([]vg.Point{{X: x, Y: ylo}, {X: x, Y: yhi}},
				[]vg.Point{{X: x - cw, Y: ylo}, {X: x + cw, Y: ylo}}, []vg.Point{{X: x - cw, Y: yhi}, {X: x + cw, Y: yhi}})...)
		}
	}
	// The seeds' figures: a black diamond with a horizontal tick across
	// the variant's slot, on top of the bars; hollow beside a broken
	// variant (no reproduction of it).
	for _, m := range rb.marks {
		if !m.showSeedReference || math.IsNaN(m.seed) {
			continue
		}
		x, y := trX(m.x), trY(m.seed)
		ls := draw.LineStyle{Color: colSeed, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
		c.StrokeLine2(ls, x-2*m.width, y, x+2*m.width, y)
		g := draw.GlyphStyle{Color: colSeed, Radius: vg.Points(4), Shape: draw.PyramidGlyph{}}
		if m.seedBesideBroken {
			g.Shape = draw.RingGlyph{}
		}
		c.DrawGlyph(g, vg.Point{X: x, Y: y})
	}
}

func (rb *ratioBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), 1.0, 1.0
	for _, m := range rb.marks {
		xmin, xmax = math.Min(xmin, m.x), math.Max(xmax, m.x)
		for _, v := range []float64{m.ratio, m.lo, m.hi, m.seed} {
			if v > 0 && !math.IsInf(v, 0) {
				ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
			}
		}
	}
	return xmin - 0.5, xmax + 0.5, ymin, ymax
}

func lighten(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8((v>>8)/3 + 2*255/3) }
	return color.RGBA{R: mix(r), G: mix(g), B: mix(b), A: 0xff}
}

// ratioTicks are the log axis's ticks: x1 and the powers and halves
// around it within range, labelled "x2", "x0.5".
type ratioTicks struct{}

func (ratioTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	vals := []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}
	if max/min > 400 {
		// A wide range: powers of ten only, so that labels never crowd.
		vals = []float64{0.001, 0.01, 0.1, 1, 10, 100, 1000}
	}
	for _, v := range vals {
		if v >= min*0.999 && v <= max*1.001 {
			out = append(out, plot.Tick{Value: v, Label: "x" + trimFloat(v)})
		}
	}
	return out
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%g", v)
	return s
}

// symmetricRange returns a log axis range centred on x1 that holds every
// value with a margin: [1/r, r].
func symmetricRange(lo, hi float64) (float64, float64) {
	r := math.Max(hi, 1/lo)
	r = math.Max(r*1.25, 1.25)
	return 1 / r, r
}

// ratioChart draws one headline's ratios: per variant, a bar from x1 per
// allocator on a log axis centred on x1, its bootstrap interval, its
// significance (pale: not significant) and its verdict (red cross:
// broken), and the seed's figure as a reference mark.
func ratioChart(title string, variants []string, prod, debug map[string]*sim.ReportRow) (template.HTML, error) {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = font.Length(11)
	p.Y.Label.Text = "speed / vs speed (log)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = ratioTicks{}
	p.NominalX(variants...)
	rb := &ratioBars{}
	w := vg.Points(16)
	for i, v := range variants {
		for j, row := range []*sim.ReportRow{prod[v], debug[v]} {
			if row == nil {
				continue
			}
			m := barMark{x: float64(i), ratio: row.Ratio, lo: math.NaN(), hi: math.NaN(), significant: row.Significant, bad: row.Broken,
				noisy: row.Noisy, color: []color.Color{colProd, colDebug}[j], seed: math.NaN(), width: w, offset: vg.Length(float64(j)-0.5) * w}
			if prod[v] == nil || debug[v] == nil {
				m.offset = 0
			}
			if row.RatioLo != nil && row.RatioHi != nil {
				m.lo, m.hi = *row.RatioLo, *row.RatioHi
			}
			if row.SeedRatio != nil && (j == 0 || prod[v] == nil) {
				m.seed, m.showSeedReference, m.seedBesideBroken = *row.SeedRatio, true, row.Broken
			}
			rb.marks = append(rb.marks, m)
		}
	}
	p.Add(rb)
	_, _, ymin, ymax := rb.DataRange()
	p.Y.Min, p.Y.Max = symmetricRange(ymin, ymax)
	p.X.Min, p.X.Max = -0.6, float64(len(variants))-0.4
	p.Add(hline{y: 1, style: draw.LineStyle{Color: color.Gray{Y: 90}, Width: vg.Points(1)}})
	return svgOf(p, chartWidth, 3.3*vg.Inch)
}

// hline is a horizontal reference line across the plot.
type hline struct {
	y     float64
	style draw.LineStyle
}

func (h hline) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	c.StrokeLine2(h.style, c.Min.X, trY(h.y), c.Max.X, trY(h.y))
}

// eventBars draws, per event, one horizontal bar per variant, its length
// the variant's count over the largest variant's count for that event,
// with the exact count written after it.
type eventBars struct {
	names    []string
	variants []string
	counts   [][]float64 // [event][variant]
	colors   []color.Color
	barH     vg.Length
	font     font.Font
}

func (eb *eventBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	n := len(eb.variants)
	sty := draw.TextStyle{Color: colSeed, Font: eb.font, Handler: p.Title.TextStyle.Handler, XAlign: draw.XLeft, YAlign: draw.YCenter}
	for e := range eb.names {
		top := 0.0
		for _, v := range eb.counts[e] {
			top = math.Max(top, v)
		}
		for i := range eb.variants {
			v := eb.counts[e][i]
			frac := 0.0
			if top > 0 {
				frac = v / top
			}
			yc := trY(float64(e)) + vg.Length(float64(n-1)/2-float64(i))*eb.barH
			x0, x1 := trX(0), trX(frac)
			c.FillPolygon(eb.colors[i], []vg.Point{{X: x0, Y: yc - eb.barH*0.45}, {X: x1, Y: yc - eb.barH*0.45}, {X: x1, Y: yc + eb.barH*0.45}, {X: x0, Y: yc + eb.barH*0.45}})
			c.FillText(sty, vg.Point{X: x1 + vg.Points(3), Y: yc}, sim.FormatNum(v))
		}
	}
}

func (eb *eventBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	return 0, 1, -0.5, float64(len(eb.names)) - 0.5
}

// eventChart draws the events that differ between a headline's variants.
func eventChart(title string, names, variants []string, counts [][]float64) (template.HTML, vg.Length, error) {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = font.Length(11)
	p.X.Label.Text = "share of the largest variant's count"
	p.X.Min, p.X.Max = 0, 1.3 // room for the counts after the longest bar
	p.X.Tick.Marker = shareTicks{}
	p.NominalY(names...)
	barH := vg.Points(7)
	h := vg.Length(len(names)*len(variants))*barH + vg.Length(len(names))*vg.Points(8) + vg.Points(90)
	eb := &eventBars{names: names, variants: variants, counts: counts, barH: barH, font: p.X.Tick.Label.Font}
	eb.font.Size = font.Length(7)
	for i := range variants {
		eb.colors = append(eb.colors, variantColors[i%len(variantColors)])
	}
	p.Add(eb)
	p.Y.Min, p.Y.Max = -0.5, float64(len(names))-0.5
	svg, err := svgOf(p, chartWidth, h)
	return svg, h, err
}

// shareTicks label 0, 50% and 100% of the largest count.
type shareTicks struct{}

func (shareTicks) Ticks(min, max float64) []plot.Tick {
	return []plot.Tick{{Value: 0, Label: "0"}, {Value: 0.5, Label: "50%"}, {Value: 1, Label: "100%"}}
}

// numTicks label a linear axis with FormatNum ("800k", not "800000").
type numTicks struct{}

func (numTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(min, max) {
		if t.Label != "" {
			t.Label = sim.FormatNum(t.Value)
		}
		out = append(out, t)
	}
	return out
}

// threadTicks label the worker counts measured.
type threadTicks struct{ ts []int }

func (tt threadTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range tt.ts {
		out = append(out, plot.Tick{Value: float64(t), Label: fmt.Sprint(t)})
	}
	return out
}

// linePlot draws one variant's throughput against workers with its
// interval.
type linePlot struct {
	xs, ys, lo, hi []float64
	color          color.Color
	shape          draw.GlyphDrawer
}

func (lp *linePlot) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	var pts []vg.Point
	for i := range lp.xs {
		pts = append(pts, vg.Point{X: trX(lp.xs[i]), Y: trY(lp.ys[i])})
	}
	c.StrokeLines(draw.LineStyle{Color: lp.color, Width: vg.Points(1.5)}, pts)
	for i, pt := range pts {
		c.DrawGlyph(draw.GlyphStyle{Color: lp.color, Radius: vg.Points(3), Shape: lp.shape}, pt)
		if !math.IsNaN(lp.lo[i]) && !math.IsNaN(lp.hi[i]) {
			ls := draw.LineStyle{Color: lp.color, Width: vg.Points(1)}
			c.StrokeLines(ls, []vg.Point{{X: pt.X, Y: trY(lp.lo[i])}, {X: pt.X, Y: trY(lp.hi[i])}})
		}
	}
}

func (lp *linePlot) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), 0, math.Inf(-1)
	for i := range lp.xs {
		xmin, xmax = math.Min(xmin, lp.xs[i]), math.Max(xmax, lp.xs[i])
		for _, v := range []float64{lp.ys[i], lp.hi[i]} {
			if !math.IsNaN(v) {
				ymax = math.Max(ymax, v)
			}
		}
	}
	return
}

var lineShapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}, draw.PyramidGlyph{}, draw.RingGlyph{}}

// gridLines are the horizontal grid of a chart.
type gridLines struct{}

func (gridLines) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	for _, t := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		if t.Label == "" {
			continue
		}
		y := trY(t.Value)
		c.StrokeLine2(draw.LineStyle{Color: colGrid, Width: vg.Points(0.5)}, c.Min.X, y, c.Max.X, y)
	}
}
