package draw

import (
	"encoding/xml"
	"fmt"
	"strings"
)

// canvas builds an SVG document by hand: boxes, text, arrows. Every piece
// of text goes through encoding/xml's escaping.
type canvas struct {
	b    strings.Builder
	w, h int
}

func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// Colours: a small palette that stays legible printed in grey.
const (
	colInk    = "#222222"
	colMuted  = "#888888"
	colDir    = "#dbe9f6"
	colFile   = "#f4f4f4"
	colLink   = "#efe3f7"
	colNeg    = "#ffffff"
	colKey    = "#fff1c9"
	colPath   = "#d9534f"
	colPathBg = "#fbe0df"
	colStage  = "#e3f1e3"
	colUnused = "#f7f7f7"
)

func (c *canvas) grow(x, y int) {
	if x > c.w {
		c.w = x
	}
	if y > c.h {
		c.h = y
	}
}

// box draws a rectangle with a class (the element's kind, which tests
// look for) and optional dashes.
func (c *canvas) box(class string, x, y, w, h int, fill, stroke string, dashed bool) {
	dash := ""
	if dashed {
		dash = ` stroke-dasharray="5,3"`
	}
	fmt.Fprintf(&c.b, `<rect class="%s" x="%d" y="%d" width="%d" height="%d" rx="6" fill="%s" stroke="%s" stroke-width="1.5"%s/>`+"\n",
		esc(class), x, y, w, h, fill, stroke, dash)
	c.grow(x+w+20, y+h+20)
}

// text writes one line; anchor is start, middle or end.
func (c *canvas) text(x, y int, anchor string, size int, weight, fill, s string) {
	fmt.Fprintf(&c.b, `<text x="%d" y="%d" text-anchor="%s" font-size="%d" font-weight="%s" fill="%s">%s</text>`+"\n",
		x, y, anchor, size, weight, fill, esc(s))
	// About 0.6 em per character of a sans-serif face.
	wide := len([]rune(s)) * size * 6 / 10
	switch anchor {
	case "middle":
		wide /= 2
	case "end":
		wide = 0
	}
	c.grow(x+wide+20, y+20)
}

// arrow draws a line with an arrowhead at (x2, y2).
func (c *canvas) arrow(class string, x1, y1, x2, y2 int, stroke string, dashed bool) {
	dash := ""
	if dashed {
		dash = ` stroke-dasharray="4,3"`
	}
	marker := "arrow"
	if stroke == colPath {
		marker = "arrowpath"
	}
	fmt.Fprintf(&c.b, `<line class="%s" x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="1.5"%s marker-end="url(#%s)"/>`+"\n",
		esc(class), x1, y1, x2, y2, stroke, dash, marker)
}

// String is the whole document.
func (c *canvas) String(title string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">`+"\n",
		c.w, c.h, c.w, c.h)
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(title))
	b.WriteString(`<defs>
<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555555"/></marker>
<marker id="arrowpath" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="` + colPath + `"/></marker>
</defs>
`)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", c.w, c.h)
	b.WriteString(c.b.String())
	b.WriteString("</svg>\n")
	return b.String()
}

// wrap splits s into lines of at most n characters at spaces.
func wrap(s string, n int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > n {
			lines = append(lines, line)
			line = w
			continue
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
