package main

import (
	"encoding/xml"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/font/liberation"

	"github.com/vfslab/vfslab/sim"
)

// The charts' geometry, read back from their SVG: every text box and
// every drawn path inside the picture, no two text boxes overlapping,
// and every bar nearest to its own category's label.

type box struct {
	text           string
	fill           string
	x0, y0, x1, y1 float64
}

func (b box) String() string {
	return fmt.Sprintf("%q [%.1f,%.1f]-[%.1f,%.1f]", b.text, b.x0, b.y0, b.x1, b.y1)
}

// affine is an SVG transform matrix (a b c d e f).
type affine [6]float64

var identity = affine{1, 0, 0, 1, 0, 0}

func (m affine) mul(n affine) affine {
	return affine{m[0]*n[0] + m[2]*n[1], m[1]*n[0] + m[3]*n[1], m[0]*n[2] + m[2]*n[3], m[1]*n[2] + m[3]*n[3],
		m[0]*n[4] + m[2]*n[5] + m[4], m[1]*n[4] + m[3]*n[5] + m[5]}
}

func (m affine) apply(x, y float64) (float64, float64) {
	return m[0]*x + m[2]*y + m[4], m[1]*x + m[3]*y + m[5]
}

var transformRE = regexp.MustCompile(`(\w+)\(([^)]*)\)`)

func parseTransform(s string) affine {
	m := identity
	for _, t := range transformRE.FindAllStringSubmatch(s, -1) {
		var a []float64
		for _, f := range strings.FieldsFunc(t[2], func(r rune) bool { return r == ',' || r == ' ' }) {
			v, _ := strconv.ParseFloat(f, 64)
			a = append(a, v)
		}
		var n affine
		switch t[1] {
		case "scale":
			if len(a) == 1 {
				a = append(a, a[0])
			}
			n = affine{a[0], 0, 0, a[1], 0, 0}
		case "translate":
			if len(a) == 1 {
				a = append(a, 0)
			}
			n = affine{1, 0, 0, 1, a[0], a[1]}
		case "rotate":
			r := a[0] * math.Pi / 180
			n = affine{math.Cos(r), math.Sin(r), -math.Sin(r), math.Cos(r), 0, 0}
		default:
			n = identity
		}
		m = m.mul(n)
	}
	return m
}

var (
	fontSizeRE = regexp.MustCompile(`font-size:([0-9.]+)px`)
	fillRE     = regexp.MustCompile(`fill:(#[0-9A-Fa-f]{6})`)
	numRE      = regexp.MustCompile(`-?[0-9.]+(?:e-?[0-9]+)?`)
)

// svgBoxes parses an SVG drawn by gonum/plot: its size, the boxes of its
// texts (measured with the Liberation Serif metrics the chart used) and
// of its paths, in the picture's coordinates (y down).
func svgBoxes(t *testing.T, svg string) (w, h float64, texts, paths []box) {
	t.Helper()
	face := func(size float64) font.Face {
		cache := font.NewCache(liberation.Collection())
		return cache.Lookup(font.Font{Typeface: "Liberation", Variant: "Serif"}, font.Length(size))
	}
	dec := xml.NewDecoder(strings.NewReader(svg))
	stack := []affine{identity}
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch e := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range e.Attr {
				attr[a.Name.Local] = a.Value
			}
			m := stack[len(stack)-1].mul(parseTransform(attr["transform"]))
			switch e.Name.Local {
			case "svg":
				vb := strings.Fields(attr["viewBox"])
				w, _ = strconv.ParseFloat(vb[2], 64)
				h, _ = strconv.ParseFloat(vb[3], 64)
			case "text":
				var content string
				dec.DecodeElement(&content, &e)
				x, _ := strconv.ParseFloat(attr["x"], 64)
				y, _ := strconv.ParseFloat(attr["y"], 64)
				size := 10.0
				if fs := fontSizeRE.FindStringSubmatch(attr["style"]); fs != nil {
					size, _ = strconv.ParseFloat(fs[1], 64)
				}
				f := face(size)
				tw := f.Width(content).Points()
				asc, desc := f.Extents().Ascent.Points(), f.Extents().Descent.Points()
				// In the text's own frame y grows downwards from the
				// baseline (scale(1,-1)): the box is [x, x+tw] x [y-asc, y+desc].
				var xs, ys []float64
				for _, c := range [][2]float64{{x, y - asc}, {x + tw, y - asc}, {x, y + desc}, {x + tw, y + desc}} {
					px, py := m.apply(c[0], c[1])
					xs, ys = append(xs, px), append(ys, py)
				}
				texts = append(texts, bounds(content, "", xs, ys))
				continue // DecodeElement consumed the end
			case "path":
				var xs, ys []float64
				for _, pt := range pathPoints(attr["d"]) {
					px, py := m.apply(pt[0], pt[1])
					xs, ys = append(xs, px), append(ys, py)
				}
				fill := ""
				if f := fillRE.FindStringSubmatch(attr["style"]); f != nil {
					fill = strings.ToLower(f[1])
				}
				if len(xs) > 0 {
					paths = append(paths, bounds("", fill, xs, ys))
				}
			}
			stack = append(stack, m)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	// The picture's y axis: the SVG is drawn flipped (scale(1,-1)
	// translate(0,-h)), which the matrices undo; y grows downwards.
	return w, h, texts, paths
}

var pathCmdRE = regexp.MustCompile(`[MLAZmlaz][^MLAZmlaz]*`)

// pathPoints returns the end points of a path's M, L and A commands
// (gonum writes absolute commands only); an arc of radius r adds the
// points r around its end, enough for a bounding box of a glyph.
func pathPoints(d string) [][2]float64 {
	var out [][2]float64
	for _, c := range pathCmdRE.FindAllString(d, -1) {
		var n []float64
		for _, f := range numRE.FindAllString(c[1:], -1) {
			v, _ := strconv.ParseFloat(f, 64)
			n = append(n, v)
		}
		switch c[0] {
		case 'M', 'L':
			for i := 0; i+1 < len(n); i += 2 {
				out = append(out, [2]float64{n[i], n[i+1]})
			}
		case 'A':
			for i := 0; i+6 < len(n); i += 7 {
				r, x, y := n[i], n[i+5], n[i+6]
				out = append(out, [2]float64{x, y}, [2]float64{x - 2*r, y - r}, [2]float64{x + 0, y + r})
			}
		}
	}
	return out
}

func bounds(text, fill string, xs, ys []float64) box {
	b := box{text: text, fill: fill, x0: math.Inf(1), y0: math.Inf(1), x1: math.Inf(-1), y1: math.Inf(-1)}
	for i := range xs {
		b.x0, b.x1 = math.Min(b.x0, xs[i]), math.Max(b.x1, xs[i])
		b.y0, b.y1 = math.Min(b.y0, ys[i]), math.Max(b.y1, ys[i])
	}
	return b
}

// checkGeometry fails when a text or a path leaves the picture or two
// texts overlap.
func checkGeometry(t *testing.T, name, svg string) (texts, paths []box) {
	t.Helper()
	w, h, texts, paths := svgBoxes(t, svg)
	// Texts are measured by their font's ascent and descent, which
	// reach past the glyphs by up to a point and a half.
	const tol = 1.5
	for _, b := range append(append([]box(nil), texts...), paths...) {
		if b.x0 < -tol || b.y0 < -tol || b.x1 > w+tol || b.y1 > h+tol {
			t.Errorf("%s: %v leaves the %.0fx%.0f picture", name, b, w, h)
		}
	}
	for i := range texts {
		for j := i + 1; j < len(texts); j++ {
			a, b := texts[i], texts[j]
			if a.x0 < b.x1-tol && b.x0 < a.x1-tol && a.y0 < b.y1-tol && b.y0 < a.y1-tol {
				t.Errorf("%s: texts overlap: %v and %v", name, a, b)
			}
		}
	}
	if len(texts) == 0 || len(paths) == 0 {
		t.Errorf("%s: %d texts, %d paths", name, len(texts), len(paths))
	}
	return texts, paths
}

func cssHex(c interface{ RGBA() (r, g, b, a uint32) }) string {
	return strings.ToLower(string(cssColor(c)))
}

// nearestLabel returns the index of the label whose centre is nearest to
// v along the axis (x when horizontal).
func nearestLabel(labels []box, v float64, horizontal bool) int {
	best, bd := -1, math.Inf(1)
	for i, l := range labels {
		c := (l.y0 + l.y1) / 2
		if horizontal {
			c = (l.x0 + l.x1) / 2
		}
		if d := math.Abs(c - v); d < bd {
			best, bd = i, d
		}
	}
	return best
}

func findTexts(texts []box, names []string) []box {
	var out []box
	for _, n := range names {
		for _, t := range texts {
			if t.text == n {
				out = append(out, t)
				break
			}
		}
	}
	return out
}

func ptr(v float64) *float64 { return &v }

// TestRatioChartGeometry: a ratio chart with every mark (both
// allocators, intervals, a broken variant, seed figures, a ratio far from
// x1) keeps everything inside, no text over another, and every bar
// nearest to its variant's label.
func TestRatioChartGeometry(t *testing.T) {
	variants := []string{"v2", "upstream", "bio", "aeslib"}
	prod, debug := map[string]*sim.ReportRow{}, map[string]*sim.ReportRow{}
	for i, v := range variants {
		r := 1.2 + float64(i)
		if v == "aeslib" {
			r = 180
		}
		prod[v] = &sim.ReportRow{Variant: v, Ratio: r, RatioLo: ptr(r * 0.8), RatioHi: ptr(r * 1.3), Significant: i%2 == 0, Broken: v == "bio", SeedRatio: ptr(2.06)}
		debug[v] = &sim.ReportRow{Variant: v, SlubDebug: true, Ratio: 1 / r, RatioLo: ptr(0.7 / r), RatioHi: ptr(1.2 / r), Significant: true}
	}
	svg, err := ratioChart("speed against base", variants, prod, debug)
	if err != nil {
		t.Fatal(err)
	}
	texts, paths := checkGeometry(t, "ratio chart", string(svg))
	labels := findTexts(texts, variants)
	if len(labels) != len(variants) {
		t.Fatalf("labels %v among %v", labels, texts)
	}
	colors := map[string]bool{cssHex(colProd): true, cssHex(colDebug): true, cssHex(lighten(colProd)): true, cssHex(lighten(colDebug)): true}
	k := 0
	for _, p := range paths {
		if !colors[p.fill] {
			continue
		}
		want := k / 2 // drawn variant by variant, production then slub_debug
		if got := nearestLabel(labels, (p.x0+p.x1)/2, true); got != want {
			t.Errorf("bar %d (%v) lies nearest label %q, want %q", k, p, labels[got].text, variants[want])
		}
		k++
	}
	if k != 2*len(variants) {
		t.Errorf("%d bars, want %d", k, 2*len(variants))
	}
	for _, want := range []string{"x1", "x10", "x100"} {
		if len(findTexts(texts, []string{want})) == 0 {
			t.Errorf("no tick %q on the log axis: %v", want, texts)
		}
	}
}

// TestEventChartGeometry: grouped horizontal bars of events whose
// counts differ by orders of magnitude stay inside, with the counts
// written after them not overlapping anything, each bar nearest its
// event's label.
func TestEventChartGeometry(t *testing.T) {
	names := []string{"skcipher_request_on_stack", "kmalloc", "kfree", "queue_work", "kernel_fpu_begin", "readahead_pages"}
	variants := []string{"workqueue", "inline", "chain", "bio"}
	counts := make([][]float64, len(names))
	for e := range names {
		for v := range variants {
			counts[e] = append(counts[e], math.Pow(10, float64(e))*float64(v+1)/3)
		}
	}
	svg, _, err := eventChart("events per operation", names, variants, counts)
	if err != nil {
		t.Fatal(err)
	}
	texts, paths := checkGeometry(t, "event chart", string(svg))
	labels := findTexts(texts, names)
	if len(labels) != len(names) {
		t.Fatalf("labels %v", labels)
	}
	colors := map[string]bool{}
	for _, c := range variantColors {
		colors[cssHex(c)] = true
	}
	k := 0
	for _, p := range paths {
		if !colors[p.fill] {
			continue
		}
		want := k / len(variants)
		if got := nearestLabel(labels, (p.y0+p.y1)/2, false); got != want {
			t.Errorf("bar %d (%v) lies nearest label %q, want %q", k, p, labels[got].text, names[want])
		}
		k++
	}
	if k != len(names)*len(variants) {
		t.Errorf("%d bars, want %d", k, len(names)*len(variants))
	}
}

// TestReportPageInChromium renders the HTML report in headless Chromium:
// the page fits a 1000-pixel window without scrolling sideways, and every
// chart lies within it. It skips without Chromium.
func TestReportPageInChromium(t *testing.T) {
	bin := ""
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(b); err == nil {
			bin = p
			break
		}
	}
	if bin == "" || testing.Short() {
		t.Skip("no Chromium (apt-get install chromium), or -short")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "r.html")
	if _, errs, status := cli(t, "", "report", "--patch", "fscrypt-v1-kdf", "--count", "2", "--runtime", "2ms", "--profile", "0", "-q", "--html", page); status != 0 {
		t.Fatalf("report --html: %s", errs)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	// The page has no script; the test adds one that measures it.
	probe := `<script>var w=innerWidth,o=[];document.querySelectorAll('svg').forEach(function(s,i){var r=s.getBoundingClientRect();if(r.right>w+1||r.left<-1)o.push(i+':'+r.left+'-'+r.right)});document.body.setAttribute('data-fit',document.documentElement.scrollWidth+' '+w+' '+o.join(','))</script></body>`
	probed := filepath.Join(dir, "probed.html")
	os.WriteFile(probed, []byte(strings.Replace(string(b), "</body>", probe, 1)), 0o644)
	out, err := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--no-first-run", "--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1000,800", "--dump-dom", "file://"+probed).Output()
	if err != nil {
		t.Skipf("chromium: %v", err)
	}
	m := regexp.MustCompile(`data-fit="(\d+) (\d+) ([^"]*)"`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("no measurement in the dumped page")
	}
	sw, _ := strconv.Atoi(m[1])
	w, _ := strconv.Atoi(m[2])
	if sw > w || m[3] != "" {
		t.Errorf("page %d px wide in a %d px window; charts outside: %q", sw, w, m[3])
	}
}

// TestGeometryCheckFails: the checker finds overlapping texts and a
// text past the edge (a check that cannot fail checks nothing).
func TestGeometryCheckFails(t *testing.T) {
	svg := `<svg width="100pt" height="50pt" viewBox="0 0 100 50"><g transform="scale(1, -1) translate(0, -50)">` +
		`<text x="10" y="-20" transform="scale(1, -1)" style="font-size:10px">overlapping</text>` +
		`<text x="14" y="-21" transform="scale(1, -1)" style="font-size:10px">texts</text>` +
		`<text x="90" y="-40" transform="scale(1, -1)" style="font-size:10px">past the edge</text>` +
		`<path d="M0,0L10,10" style="fill:none" /></g></svg>`
	ft := &testing.T{}
	_, _, texts, _ := svgBoxes(ft, svg)
	var overlap, outside bool
	for i := range texts {
		if texts[i].x1 > 100 {
			outside = true
		}
		for j := i + 1; j < len(texts); j++ {
			a, b := texts[i], texts[j]
			if a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1 {
				overlap = true
			}
		}
	}
	if !overlap || !outside || len(texts) != 3 {
		t.Fatalf("texts %v: overlap %v outside %v", texts, overlap, outside)
	}
}
