package linuxdiff

import (
	"fmt"
	"io"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Verdict is one script's comparison.
type Verdict int

// The verdicts.
const (
	Identical Verdict = iota
	KnownDifference
	Unexplained
)

func (v Verdict) String() string {
	switch v {
	case Identical:
		return "identical"
	case KnownDifference:
		return "known difference"
	}
	return "UNEXPLAINED"
}

// Hunk is one hunk of a script's diff: its unified text, and its changed
// lines ("-" vfslab's, "+" Linux's) that a known difference matches.
type Hunk struct {
	Text    string
	Changed []string
	Known   *Known // nil when nothing explains it
}

// Comparison is one script's result.
type Comparison struct {
	Script  string
	Verdict Verdict
	Hunks   []Hunk
	Note    string // the script assumes another kernel version
}

// contextLines is the unified diff's context.
const contextLines = 3

// Compare diffs the two sides' normalised documents and matches every
// hunk against the known differences for release.
func Compare(spec *Spec, vfslab, linux Output, known []Known, release string) Comparison {
	c := Comparison{Script: spec.Path}
	if spec.Kernel != "" && !strings.HasPrefix(release, spec.Kernel) {
		c.Note = fmt.Sprintf("the script assumes kernel %s; this is %s", spec.Kernel, release)
	}
	a, b := Document(vfslab), Document(linux)
	m := difflib.NewMatcherWithJunk(a, b, false, nil)
	for _, g := range m.GetGroupedOpCodes(contextLines) {
		var h Hunk
		var text strings.Builder
		first, last := g[0], g[len(g)-1]
		fmt.Fprintf(&text, "@@ -%s +%s @@\n", hunkRange(first.I1, last.I2), hunkRange(first.J1, last.J2))
		for _, op := range g {
			if op.Tag == 'e' {
				for _, l := range a[op.I1:op.I2] {
					text.WriteString(" " + l + "\n")
				}
				continue
			}
			if op.Tag == 'r' || op.Tag == 'd' {
				for _, l := range a[op.I1:op.I2] {
					text.WriteString("-" + l + "\n")
					h.Changed = append(h.Changed, "-"+l)
				}
			}
			if op.Tag == 'r' || op.Tag == 'i' {
				for _, l := range b[op.J1:op.J2] {
					text.WriteString("+" + l + "\n")
					h.Changed = append(h.Changed, "+"+l)
				}
			}
		}
		h.Text = text.String()
		for i := range known {
			if known[i].matches(release, spec.Path, h.Changed) {
				h.Known = &known[i]
				break
			}
		}
		c.Hunks = append(c.Hunks, h)
	}
	switch {
	case len(c.Hunks) == 0:
		c.Verdict = Identical
	default:
		c.Verdict = KnownDifference
		for _, h := range c.Hunks {
			if h.Known == nil {
				c.Verdict = Unexplained
			}
		}
	}
	return c
}

// hunkRange is a unified diff's "start,count" (1-based).
func hunkRange(i1, i2 int) string {
	n := i2 - i1
	start := i1 + 1
	if n == 0 {
		start = i1
	}
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// Print writes one script's comparison: its diff (vfslab's lines "-",
// Linux's "+"), each hunk's known difference when one explains it, and
// the verdict.
func (c Comparison) Print(w io.Writer) {
	if c.Note != "" {
		fmt.Fprintf(w, "note: %s: %s\n", c.Script, c.Note)
	}
	if len(c.Hunks) > 0 {
		fmt.Fprintf(w, "--- vfslab %s\n+++ linux %s\n", c.Script, c.Script)
		for _, h := range c.Hunks {
			io.WriteString(w, h.Text)
			if h.Known != nil {
				fmt.Fprintf(w, "    known difference %s (%s is right, %s): %s\n", h.Known.ID, h.Known.Right, h.Known.Cause, h.Known.Why)
			}
		}
	}
	fmt.Fprintf(w, "%s: %s\n", c.Script, c.Verdict)
}

// Summary counts the verdicts.
type Summary struct{ Scripts, Identical, Known, Unexplained int }

// Add counts one comparison.
func (s *Summary) Add(c Comparison) {
	s.Scripts++
	switch c.Verdict {
	case Identical:
		s.Identical++
	case KnownDifference:
		s.Known++
	default:
		s.Unexplained++
	}
}

func (s Summary) String() string {
	return fmt.Sprintf("linux: %d scripts, %d identical, %d known differences, %d unexplained", s.Scripts, s.Identical, s.Known, s.Unexplained)
}

// Unused lists the known differences for release and the given scripts
// that explained no hunk: stale entries.
func Unused(known []Known, release string, scripts []string, cs []Comparison) []Known {
	used := map[string]bool{}
	for _, c := range cs {
		for _, h := range c.Hunks {
			if h.Known != nil {
				used[h.Known.ID] = true
			}
		}
	}
	var out []Known
	for _, k := range known {
		if !strings.HasPrefix(release, k.Kernel) || used[k.ID] {
			continue
		}
		for _, s := range scripts {
			if k.covers(s) {
				out = append(out, k)
				break
			}
		}
	}
	return out
}
