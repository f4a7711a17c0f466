package fsunicode

import (
	"testing"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// TestIgnorable121Definition checks ignorable121 against the definition of
// Default_Ignorable_Code_Point (DerivedCoreProperties.txt: Other_Default_-
// Ignorable_Code_Point + Cf + Variation_Selector - White_Space - FFF9..FFFB
// - 13430..1343F - Prepended_Concatenation_Mark) evaluated with the standard
// library's tables, which are newer than 12.1. The two may differ only in
// code points assigned after 12.1 that newer Unicode made ignorable (such
// as U+180F).
func TestIgnorable121Definition(t *testing.T) {
	derived := func(r rune) bool {
		if !unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Cf, unicode.Variation_Selector) {
			return false
		}
		if unicode.Is(unicode.White_Space, r) || unicode.Is(unicode.Prepended_Concatenation_Mark, r) {
			return false
		}
		return !(r >= 0xFFF9 && r <= 0xFFFB) && !(r >= 0x13430 && r <= 0x1343F)
	}
	count := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		in := unicode.Is(ignorable121, r)
		if in {
			count++
		}
		if in != isIgnorable121(r) {
			t.Fatalf("U+%04X: unicode.Is and the range walk disagree", r)
		}
		if d := derived(r); d != in && (in || assigned121(r)) {
			t.Errorf("U+%04X: ignorable121 %v, derived from Unicode %s %v", r, in, unicode.Version, d)
		}
	}
	if count != ignorable121Count {
		t.Errorf("ignorable121 has %d code points, want %d", count, ignorable121Count)
	}
}

// TestXTextVersion makes sure the x/text data the tables derive from is at
// least Unicode 12.1 and still carries the 12.0.0 assigned table.
func TestXTextVersion(t *testing.T) {
	for _, v := range []string{norm.Version, cases.UnicodeVersion, unicode.Version} {
		age, err := ParseVersion(v)
		if err != nil || age < Latest {
			t.Errorf("Unicode version %q is older than 12.1.0", v)
		}
	}
	if assigned120 == nil {
		t.Fatal(`rangetable.Assigned("12.0.0") is nil`)
	}
	t.Logf("tables derived from Unicode %s (x/text), pinned to 12.1.0", norm.Version)
}

// TestStability checks the shape of the derived tables: code points
// unassigned in 12.1 map to themselves with CCC 0 (or to nothing, if
// ignorable), and every mapping is fully expanded into characters assigned
// in 12.1 that map to themselves, with their own CCC.
func TestStability(t *testing.T) {
	um := load(t)
	for _, f := range []*form{&um.t.nfdi, &um.t.nfdicf} {
		for r := rune(0); r <= unicode.MaxRune; r++ {
			if r >= 0xD800 && r <= 0xDFFF {
				continue
			}
			p := f.lookup(r)
			if !assigned121(r) && p.kind() != kindIgnore && p != passProps(0) {
				t.Fatalf("U+%04X unassigned in 12.1 but has props %#x", r, p)
			}
			if p.kind() != kindMap {
				continue
			}
			for _, e := range f.maps[p.off() : p.off()+p.length()] {
				q := f.lookup(e.rune())
				if q.kind() != kindPass || q.ccc() != e.ccc() || !assigned121(e.rune()) {
					t.Fatalf("U+%04X maps to U+%04X, which is not final (%#x)", r, e.rune(), q)
				}
			}
		}
	}
}
