package fsunicode

import (
	"bytes"
	"errors"
	"strings"
	"syscall"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"
	"pgregory.net/rapid"
)

// validPieces are corpusPieces that are valid UTF-8 and not NUL.
func validPieces() []string {
	var out []string
	for _, p := range corpusPieces {
		if utf8.ValidString(p) && p != "\x00" {
			out = append(out, p)
		}
	}
	return out
}

// genValidName draws a valid UTF-8 name mixing interesting characters with
// arbitrary scalar values.
func genValidName() *rapid.Generator[[]byte] {
	pieces := validPieces()
	piece := rapid.OneOf(
		rapid.SampledFrom(pieces),
		rapid.Map(rapid.Rune(), func(r rune) string { return string(r) }),
		rapid.Map(rapid.RuneFrom(nil, &rangeAll), func(r rune) string { return string(r) }),
	)
	return rapid.Map(rapid.SliceOfN(piece, 0, 24), func(ps []string) []byte {
		return []byte(strings.Join(ps, ""))
	})
}

// genName draws any byte string, biased towards interesting ones.
func genName() *rapid.Generator[[]byte] {
	piece := rapid.OneOf(
		rapid.SampledFrom(corpusPieces),
		rapid.Map(rapid.Byte(), func(b byte) string { return string([]byte{b}) }),
		rapid.Map(rapid.Rune(), func(r rune) string { return string(r) }),
	)
	return rapid.OneOf(
		rapid.SliceOf(rapid.Byte()),
		rapid.Map(rapid.SliceOfN(piece, 0, 24), func(ps []string) []byte {
			return []byte(strings.Join(ps, ""))
		}),
	)
}

// rangeAll lets rapid.RuneFrom draw from every scalar value.
var rangeAll = unicode.RangeTable{
	R16: []unicode.Range16{{Lo: 0, Hi: 0xD7FF, Stride: 1}, {Lo: 0xE000, Hi: 0xFFFF, Stride: 1}},
	R32: []unicode.Range32{{Lo: 0x10000, Hi: unicode.MaxRune, Stride: 1}},
}

// variant draws a name that should often fold like s: its upper case, NFC,
// NFD, or with ignorables sprinkled in.
func variant(t *rapid.T, s []byte) []byte {
	switch rapid.IntRange(0, 4).Draw(t, "variant") {
	case 0:
		return []byte(cases.Upper(language.Und).String(string(s)))
	case 1:
		return norm.NFC.Bytes(s)
	case 2:
		return norm.NFD.Bytes(s)
	case 3:
		return []byte(strings.ReplaceAll(string(s), "a", "\u200dA\u00ad"))
	}
	return genValidName().Draw(t, "other")
}

// fold casefolds into a buffer with room for any result.
func fold(t *rapid.T, um *Map, s []byte) ([]byte, error) {
	buf := make([]byte, 4*len(s)+1)
	n, err := um.Casefold(buf, s)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

func hasIgnorable(s []byte) bool {
	for _, r := range string(s) {
		if isIgnorable121(r) {
			return true
		}
	}
	return false
}

// TestPropCasefoldIdempotent: folding a folded name changes nothing. This
// holds for valid names without ignorables, and for all valid names when
// ignorables are kept. (It does not hold in general under the current rule:
// an ignorable between two combining marks stops their reordering and then
// vanishes, so folding again reorders them; see TestIgnorables.)
func TestPropCasefoldIdempotent(t *testing.T) {
	um, kept := load(t), loadKept(t)
	rapid.Check(t, func(t *rapid.T) {
		s := genValidName().Draw(t, "s")
		for _, m := range []*Map{um, kept} {
			if m == um && hasIgnorable(s) {
				continue
			}
			once, err := fold(t, m, s)
			if err != nil {
				t.Fatalf("%s: Casefold(%+q): %v", m.Policy(), s, err)
			}
			twice, err := fold(t, m, once)
			if err != nil || !bytes.Equal(once, twice) {
				t.Fatalf("%s: Casefold(%+q) = %+q, again %+q, %v", m.Policy(), s, once, twice, err)
			}
		}
	})
}

// TestPropCompareMatchesFold: for valid names, Strncasecmp says equal
// exactly when the casefolded forms are equal (Strncmp and Normalize
// likewise), StrncasecmpFolded agrees with Strncasecmp, and equal folds hash
// alike.
func TestPropCompareMatchesFold(t *testing.T) {
	um := load(t)
	rapid.Check(t, func(t *rapid.T) {
		a := genValidName().Draw(t, "a")
		b := variant(t, a)
		fa, err1 := fold(t, um, a)
		fb, err2 := fold(t, um, b)
		if err1 != nil || err2 != nil {
			t.Fatalf("Casefold: %v, %v", err1, err2)
		}
		r, err := um.Strncasecmp(a, b)
		if err != nil || (r == 0) != bytes.Equal(fa, fb) {
			t.Fatalf("Strncasecmp(%+q, %+q) = %d, %v; folds %+q %+q", a, b, r, err, fa, fb)
		}
		if rf, err := um.StrncasecmpFolded(fa, b); rf != r || err != nil {
			t.Fatalf("StrncasecmpFolded = %d, %v; Strncasecmp = %d", rf, err, r)
		}
		ha, _ := um.CasefoldHash(42, a)
		hb, _ := um.CasefoldHash(42, b)
		if r == 0 && ha != hb {
			t.Fatalf("equal folds, hashes %#x %#x", ha, hb)
		}
		na := make([]byte, 4*len(a)+1)
		nb := make([]byte, 4*len(b)+1)
		la, _ := um.Normalize(na, a)
		lb, _ := um.Normalize(nb, b)
		if r, err := um.Strncmp(a, b); err != nil || (r == 0) != bytes.Equal(na[:la], nb[:lb]) {
			t.Fatalf("Strncmp(%+q, %+q) = %d, %v", a, b, r, err)
		}
	})
}

// kernelRejects is the rule by which utf8byte fails on a name: its first
// byte is a continuation byte, or before its end or NUL there is a byte
// sequence that starts with a non-continuation byte and is not the UTF-8
// form of a scalar value. Stray continuation bytes elsewhere pass.
func kernelRejects(s []byte) bool {
	if i := bytes.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	if len(s) > 0 && s[0]&0xC0 == 0x80 {
		return true
	}
	for len(s) > 0 {
		if s[0]&0xC0 == 0x80 {
			s = s[1:]
			continue
		}
		r, n := utf8.DecodeRune(s)
		if r == utf8.RuneError && n == 1 {
			return true
		}
		s = s[n:]
	}
	return false
}

// TestPropInvalid: Validate rejects exactly what is not valid UTF-8 before
// the first NUL; the normalizing functions reject exactly kernelRejects,
// with EINVAL; and nothing panics, whatever the bytes and buffer sizes.
func TestPropInvalid(t *testing.T) {
	um := load(t)
	rapid.Check(t, func(t *rapid.T) {
		s := genName().Draw(t, "s")
		prefix := s
		if i := bytes.IndexByte(s, 0); i >= 0 {
			prefix = s[:i]
		}
		if err := um.Validate(s); (err != nil) == utf8.Valid(prefix) {
			t.Fatalf("Validate(%q) = %v", s, err)
		}
		bad := kernelRejects(s)
		cf, err := fold(t, um, s)
		if (err != nil) != bad || (err != nil && !errors.Is(err, syscall.EINVAL)) {
			t.Fatalf("Casefold(%q) = %q, %v; kernel rejects: %v", s, cf, err, bad)
		}
		if err == nil && utf8.Valid(prefix) && !utf8.Valid(cf) {
			t.Fatalf("Casefold(%q) = %q is not valid UTF-8", s, cf)
		}
		if _, err := um.CasefoldHash(1, s); (err != nil) != bad {
			t.Fatalf("CasefoldHash(%q): %v; kernel rejects: %v", s, err, bad)
		}
		if r, _ := um.Strncasecmp(s, s); (r == 0) == bad || (r != 0 && r != -22) {
			t.Fatalf("Strncasecmp(%q, itself) = %d; kernel rejects: %v", s, r, bad)
		}
		if r, _ := um.Strncmp(s, s); (r == 0) == bad {
			t.Fatalf("Strncmp(%q, itself) = %d; kernel rejects: %v", s, r, bad)
		}
		// Any buffer size: a result fits with its NUL, or EINVAL.
		dst := make([]byte, rapid.IntRange(0, 80).Draw(t, "dlen"))
		n, err := um.Casefold(dst, s)
		if err == nil && (n >= len(dst) || dst[n] != 0 || !bytes.Equal(dst[:n], cf)) {
			t.Fatalf("Casefold(%q) into %d bytes = %d %q", s, len(dst), n, dst[:n])
		}
		if err != nil && !bad && len(cf) < len(dst) {
			t.Fatalf("Casefold(%q) into %d bytes failed: %v", s, len(dst), err)
		}
		// The comparisons are symmetric.
		o := genName().Draw(t, "o")
		r1, _ := um.Strncasecmp(s, o)
		r2, _ := um.Strncasecmp(o, s)
		if r1 != r2 {
			t.Fatalf("Strncasecmp(%q, %q) = %d, reversed %d", s, o, r1, r2)
		}
		um.StrncasecmpFolded(o, s)
		um.Normalize(dst, s)
	})
}

// TestPropPoliciesAgree: without ignorables, both policies give the same
// results.
func TestPropPoliciesAgree(t *testing.T) {
	um, kept := load(t), loadKept(t)
	rapid.Check(t, func(t *rapid.T) {
		s := genName().Draw(t, "s")
		if hasIgnorable(s) {
			return
		}
		var b1, b2 [MaxNameLen]byte
		n1, err1 := um.Casefold(b1[:], s)
		n2, err2 := kept.Casefold(b2[:], s)
		if n1 != n2 || (err1 == nil) != (err2 == nil) || !bytes.Equal(b1[:max(n1, 0)], b2[:max(n2, 0)]) {
			t.Fatalf("Casefold(%q): folded %d %v, kept %d %v", s, n1, err1, n2, err2)
		}
	})
}
