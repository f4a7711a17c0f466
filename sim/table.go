package sim

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Table lays out a text table within TextWidth columns: cells padded to
// their column's width (numbers right-aligned where Right says so),
// columns that are empty in every row dropped, and span lines (a group's
// heading, a row's explanation) written across the table, wrapped.
type Table struct {
	Head  []string
	Right []bool
	rows  []tableRow
}

type tableRow struct {
	cells  []string
	span   string
	prefix string
}

// Row adds a row of cells.
func (t *Table) Row(cells ...string) { t.rows = append(t.rows, tableRow{cells: cells}) }

// Span adds a line across the table: prefix, then text wrapped at
// TextWidth with continuation lines indented under it.
func (t *Table) Span(prefix, text string) {
	t.rows = append(t.rows, tableRow{span: text, prefix: prefix})
}

// Write writes the table.
func (t *Table) Write(w io.Writer) {
	n := len(t.Head)
	keep := make([]bool, n)
	width := make([]int, n)
	for _, r := range t.rows {
		for i, c := range r.cells {
			if i < n && c != "" {
				keep[i] = true
				width[i] = max(width[i], utf8.RuneCountInString(c))
			}
		}
	}
	for i, h := range t.Head {
		if keep[i] {
			width[i] = max(width[i], utf8.RuneCountInString(h))
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		first := true
		for i := 0; i < n; i++ {
			if !keep[i] {
				continue
			}
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			if !first {
				b.WriteString("  ")
			}
			first = false
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i < len(t.Right) && t.Right[i] {
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line(t.Head)
	for _, r := range t.rows {
		if r.cells == nil {
			WrapLine(w, r.prefix, r.span)
			continue
		}
		line(r.cells)
	}
}
