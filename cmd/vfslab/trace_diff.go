package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/vfslab/vfslab/patch"
)

// overlayPatches applies the selection text ("id=variant,..." or "base")
// over base, so that --diff's two sides share --patches and differ only
// where they name a patch.
func overlayPatches(base patch.Set, text string) (patch.Set, error) {
	text = strings.TrimSpace(text)
	if text == "" || text == "base" {
		return base, nil
	}
	s := base
	seen := map[string]bool{}
	for _, item := range strings.Split(text, ",") {
		id, name, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok || id == "" || name == "" {
			return s, fmt.Errorf("bad patch selection %q: want id=variant", item)
		}
		if seen[id] {
			return s, fmt.Errorf("patch %s selected twice", id)
		}
		seen[id] = true
		p, err := patch.Find(id)
		if err != nil {
			return s, err
		}
		if s, err = s.With(p, name); err != nil {
			return s, err
		}
	}
	return s, nil
}

// diffOp is one line of an edit script: ' ' kept, '-' only in a, '+' only
// in b.
type diffOp struct {
	kind byte
	line string
	// ai and bi are the line's numbers (from 0) in a and b; -1 where it
	// is not in that side.
	ai, bi int
}

// diffLines is the edit script of a longest common subsequence of a and b
// (the classic O(len(a)·len(b)) table; traces are a few hundred lines).
func diffLines(a, b []string) []diffOp {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []diffOp
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i], i, j})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			// Deletions before insertions, as diff -u orders them.
			ops = append(ops, diffOp{'-', a[i], i, -1})
			i++
		default:
			ops = append(ops, diffOp{'+', b[j], -1, j})
			j++
		}
	}
	return ops
}

// writeUnifiedDiff writes a and b (lines without their newlines) as a
// unified diff (diff -u) with context lines of context around each
// change, under the file names nameA and nameB. It reports whether the
// two differ; when they do not it writes nothing.
func writeUnifiedDiff(w io.Writer, nameA, nameB string, a, b []string, context int) bool {
	ops := diffLines(a, b)
	changed := false
	for _, op := range ops {
		if op.kind != ' ' {
			changed = true
			break
		}
	}
	if !changed {
		return false
	}
	fmt.Fprintf(w, "--- %s\n+++ %s\n", nameA, nameB)
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			k++
			continue
		}
		// A hunk: from context lines before this change to context
		// lines after the last change that lies within 2*context of
		// the one before it.
		start := max(k-context, 0)
		end := k
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*context {
				end = min(end+context, len(ops))
				break
			}
			end = run
		}
		writeHunk(w, ops[start:end])
		k = end
	}
	return true
}

// writeHunk writes one hunk: its @@ -l,s +l,s @@ header (lines counted
// from 1) and its lines.
func writeHunk(w io.Writer, ops []diffOp) {
	aStart, bStart, aLen, bLen := -1, -1, 0, 0
	for _, op := range ops {
		if op.ai >= 0 {
			if aStart < 0 {
				aStart = op.ai
			}
			aLen++
		}
		if op.bi >= 0 {
			if bStart < 0 {
				bStart = op.bi
			}
			bLen++
		}
	}
	fmt.Fprintf(w, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
	for _, op := range ops {
		fmt.Fprintf(w, "%c%s\n", op.kind, op.line)
	}
}

// hunkRange is one side's "l,s" in a hunk header, as GNU diff writes it.
// A side with no lines in the hunk (with context, only an empty side)
// is "0,0".
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return "0,0"
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// writeSideBySide writes a and b in two columns as GNU diff -y -t
// --width=width does (src/side.c): each side cut to the half width, the
// gutter mark ' ' for a common line, '|' for a changed pair, '<' for a
// line only in a and '>' for one only in b, at the columns GNU diff
// computes for that width. A run of deletions followed by a run of
// insertions pairs up line by line, as diff pairs a hunk's lines.
func writeSideBySide(w io.Writer, a, b []string, width int) {
	const gutter = 3 // GUTTER_WIDTH_MINIMUM
	off := (width + 1 + gutter) / 2
	half := max(0, min(off-gutter, width-off))
	col2 := off
	if half == 0 {
		col2 = width
	}
	sepCol := (half + col2 - 1) / 2
	line := func(left *string, sep byte, right *string) {
		var s strings.Builder
		col := 0
		if left != nil {
			col = writeHalf(&s, *left, half)
		}
		if sep != ' ' {
			s.WriteString(strings.Repeat(" ", max(0, sepCol-col)))
			col = max(col, sepCol)
			s.WriteByte(sep)
			col++
		}
		if right != nil && *right != "" {
			s.WriteString(strings.Repeat(" ", max(0, col2-col)))
			writeHalf(&s, *right, half)
		}
		fmt.Fprintln(w, s.String())
	}
	ops := diffLines(a, b)
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			line(&ops[k].line, ' ', &ops[k].line)
			k++
			continue
		}
		var dels, adds []string
		for k < len(ops) && ops[k].kind == '-' {
			dels = append(dels, ops[k].line)
			k++
		}
		for k < len(ops) && ops[k].kind == '+' {
			adds = append(adds, ops[k].line)
			k++
		}
		for i := 0; i < max(len(dels), len(adds)); i++ {
			switch {
			case i < len(dels) && i < len(adds):
				line(&dels[i], '|', &adds[i])
			case i < len(dels):
				line(&dels[i], '<', nil)
			default:
				line(nil, '>', &adds[i])
			}
		}
	}
}

// writeHalf writes the first n columns (runes) of text and returns how
// many it wrote.
func writeHalf(s *strings.Builder, text string, n int) int {
	col := 0
	for _, r := range text {
		if col == n {
			break
		}
		s.WriteRune(r)
		col++
	}
	return col
}
