package fsunicode

import (
	"errors"
	"sort"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/unicode/norm"
)

const hashSalt = 0x0123456789abcdef

// kernelCases are edge cases with the kernel's answers, obtained by running
// each pair through the harness described in kernel_test.go, extended with
// the loops of fs/unicode/utf8-core.c: utf8_validate(a), utf8_strncmp(a, b),
// utf8_strncasecmp(a, b), utf8_casefold(a) into a 255-byte buffer (length or
// -EINVAL, and the folded bytes), utf8_strncasecmp_folded(folded a, b),
// utf8_casefold(a) into an 8-byte buffer, and the utf8_casefold_hash
// computation with salt hashSalt (0 where it fails).
var kernelCases = []struct {
	a, b                 string
	valid                bool
	strncmp, strncasecmp int
	fold255              int
	folded               string
	foldedCmp            int
	fold8                int
	hash                 uint32
}{
	// A name may not start with a continuation byte (utf8ncursor).
	{"\x80abc", "abc", false, -22, -22, -22, "", -22, -22, 0},
	// Elsewhere utf8byte passes a stray continuation byte through, once
	// per scan inside a run of combining marks; only utf8_validate objects.
	{"a\x80b", "A\x80B", false, 1, 0, 3, "a\x80b", 0, 3, 2645431839},
	{"A\xcc\x81\x80", "a\xcc\x81\x80", false, 1, 0, 5, "a\x80\xcc\x81\x80", 0, 5, 3529792117},
	{"a\xcc\x81\x80\xcc\x96", "a\xcc\x96\xcc\x81", false, 1, 1, 8, "a\x80\x80\xcc\x96\xcc\x81\x80", 1, -22, 1658973946},
	{"\xc3\x84\x80", "a\xcc\x88\x80", false, 1, 0, 5, "a\x80\xcc\x88\x80", 0, 5, 967354629},
	// Overlong, surrogate, above U+10FFFF, cut short, bare 0xFF.
	{"\xc0\xaf", "/", false, -22, -22, -22, "", -22, -22, 0},
	{"\xed\xa0\x80", "", false, -22, -22, -22, "", -22, -22, 0},
	{"\xf4\x90\x80\x80", "", false, -22, -22, -22, "", -22, -22, 0},
	{"ab\xe2\x82", "AB", false, 1, -22, -22, "", -22, -22, 0},
	{"\xff", "\xff", false, -22, -22, -22, "", -22, -22, 0},
	// A NUL byte ends the name.
	{"ab\x00\xff", "AB", true, 1, 0, 2, "ab", 0, 2, 91639737},
	// Comparisons stop at the first difference, before a later error...
	{"a\xff", "b\xff", false, 1, 1, -22, "", -22, -22, 0},
	{"a\xff", "A\xff", false, 1, -22, -22, "", -22, -22, 0},
	{"x\xcc\x81\xff", "y", false, 1, 1, -22, "", -22, -22, 0},
	// ...but a run of combining marks is scanned to its end first.
	{"x\xcc\x81\xff", "x\xcc\x81\xff", false, -22, -22, -22, "", -22, -22, 0},
	{"x\xcc\x81\xff", "x\xcc\x80", false, -22, -22, -22, "", -22, -22, 0},
	// Ignorables vanish but still end a run of combining marks.
	{"a\xe2\x80\x8bb", "AB", true, 1, 0, 2, "ab", 0, 2, 91639737},
	{"a\xcc\x81\xe2\x80\x8b\xcc\x96", "a\xcc\x96\xcc\x81", true, 1, 1, 5, "a\xcc\x81\xcc\x96", 1, 5, 713845638},
	// Assigned after 12.1: U+180F (a Default_Ignorable since 14.0) and
	// U+A7CB (folds to U+0264 since 16.0) pass through.
	{"\xe1\xa0\x8f", "\xe1\xa0\x8f", true, 0, 0, 3, "\xe1\xa0\x8f", 0, 3, 3972801295},
	{"\xea\x9f\x8b", "\xc9\xa4", true, 1, 1, 3, "\xea\x9f\x8b", 1, 3, 1934603296},
}

// errResult turns (result, error) into the kernel's int, checking that the
// two agree.
func errResult(t *testing.T, what string, r int, err error) int {
	t.Helper()
	if (r < 0) != (err != nil) || (err != nil && (r != -22 || !errors.Is(err, syscall.EINVAL))) {
		t.Errorf("%s = %d, %v: result and error disagree", what, r, err)
	}
	return r
}

func TestKernelCases(t *testing.T) {
	um := load(t)
	for _, kc := range kernelCases {
		a, b := []byte(kc.a), []byte(kc.b)
		if got := um.Validate(a) == nil; got != kc.valid {
			t.Errorf("Validate(%q) valid = %v, want %v", a, got, kc.valid)
		}
		r, err := um.Strncmp(a, b)
		if got := errResult(t, "Strncmp", r, err); got != kc.strncmp {
			t.Errorf("Strncmp(%q, %q) = %d, want %d", a, b, got, kc.strncmp)
		}
		r, err = um.Strncasecmp(a, b)
		if got := errResult(t, "Strncasecmp", r, err); got != kc.strncasecmp {
			t.Errorf("Strncasecmp(%q, %q) = %d, want %d", a, b, got, kc.strncasecmp)
		}
		var buf [MaxNameLen]byte
		n, err := um.Casefold(buf[:], a)
		if err != nil {
			n = -22
		}
		if n != kc.fold255 || (n >= 0 && string(buf[:n]) != kc.folded) {
			t.Errorf("Casefold(%q) = %d %q, want %d %q", a, n, buf[:max(n, 0)], kc.fold255, kc.folded)
		}
		if n >= 0 {
			r, err = um.StrncasecmpFolded(buf[:n], b)
			if got := errResult(t, "StrncasecmpFolded", r, err); got != kc.foldedCmp {
				t.Errorf("StrncasecmpFolded(%q, %q) = %d, want %d", buf[:n], b, got, kc.foldedCmp)
			}
		}
		var small [8]byte
		if n, err = um.Casefold(small[:], a); err != nil {
			n = -22
		}
		if n != kc.fold8 {
			t.Errorf("Casefold(%q) into 8 bytes = %d, want %d", a, n, kc.fold8)
		}
		h, err := um.CasefoldHash(hashSalt, a)
		if (err == nil) != (kc.fold255 >= 0) || h != kc.hash {
			t.Errorf("CasefoldHash(%q) = %d, %v; want %d", a, h, err, kc.hash)
		}
	}
}

func TestLoad(t *testing.T) {
	for _, v := range []string{"12.1.0"} {
		um, err := Load(v)
		if err != nil || um.Policy() != IgnorablesFolded {
			t.Errorf("Load(%q) = %v, %v", v, um, err)
		}
	}
	for _, v := range []string{"", "12", "12.1", "12.1.0.0", "12.1.x", "12..0", "13.0.0",
		"12.1.-0", "12.1.+0", "012.1.256", " 12.1.0", "12.1.0\x00"} {
		if _, err := Load(v); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("Load(%q) error = %v, want EINVAL", v, err)
		}
	}
	if age, err := ParseVersion("012.001.000"); err != nil || age != Latest {
		t.Errorf("ParseVersion(012.001.000) = %#x, %v", age, err)
	}
	if _, err := LoadWith("12.1.0", IgnorablePolicy(2)); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("LoadWith(policy 2) error = %v, want EINVAL", err)
	}
	if IgnorablesFolded.String() != "folded" || IgnorablesKept.String() != "kept" {
		t.Errorf("policy names %q %q", IgnorablesFolded, IgnorablesKept)
	}
}

// casefold folds into a buffer big enough for any test name.
func casefold(t *testing.T, um *Map, s string) (string, error) {
	t.Helper()
	buf := make([]byte, 4*len(s)+1)
	n, err := um.Casefold(buf, []byte(s))
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

func TestIgnorables(t *testing.T) {
	folded, kept := load(t), loadKept(t)
	for _, tc := range []struct {
		in, folded, kept string
	}{
		{"a\u200bB", "ab", "a\u200bb"},
		{"\u00ad", "", "\u00ad"},
		{"x\ufe0fY\U000e0041", "xy", "x\ufe0fy\U000e0041"},
		{"\u2065", "", "\u2065"},         // reserved, ignorable in 12.1
		{"\U000e0fff", "", "\U000e0fff"}, // reserved, ignorable in 12.1
		{"\u180f", "\u180f", "\u180f"},   // ignorable only since 14.0
		{"\u3164\u115f", "", "\u3164\u115f"},
		// The ignorable ends the run: no reordering across it...
		{"a\u0301\u200b\u0316", "a\u0301\u0316", "a\u0301\u200b\u0316"},
		// ...as opposed to:
		{"a\u0301\u0316", "a\u0316\u0301", "a\u0316\u0301"},
	} {
		if got, err := casefold(t, folded, tc.in); got != tc.folded || err != nil {
			t.Errorf("folded Casefold(%+q) = %+q, %v; want %+q", tc.in, got, err, tc.folded)
		}
		if got, err := casefold(t, kept, tc.in); got != tc.kept || err != nil {
			t.Errorf("kept Casefold(%+q) = %+q, %v; want %+q", tc.in, got, err, tc.kept)
		}
	}
	// Under the current rule the casefolded forms, and so the hashes, of
	// names that differ only in ignorables agree.
	h1, _ := folded.CasefoldHash(1, []byte("heart\u2764"))
	h2, _ := folded.CasefoldHash(1, []byte("HEART\u2764\ufe0f"))
	h3, _ := kept.CasefoldHash(1, []byte("HEART\u2764\ufe0f"))
	if h1 != h2 || h1 == h3 {
		t.Errorf("hashes %#x %#x %#x: want the first two equal, the third different", h1, h2, h3)
	}
	// Every ignorable maps to itself under the kept rule, and to nothing
	// under the current one.
	for r := rune(0); r <= 0x10FFFF; r++ {
		if !isIgnorable121(r) {
			continue
		}
		if got, _ := casefold(t, kept, string(r)); got != string(r) {
			t.Fatalf("kept Casefold(%U) = %+q", r, got)
		}
		if got, _ := casefold(t, folded, string(r)); got != "" {
			t.Fatalf("folded Casefold(%U) = %+q", r, got)
		}
	}
}

func isIgnorable121(r rune) bool {
	for _, rg := range ignorable121.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return true
		}
	}
	for _, rg := range ignorable121.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return true
		}
	}
	return false
}

func TestUnicode121(t *testing.T) {
	um := load(t)
	for _, tc := range []struct{ in, want string }{
		{"\u32ff", "\u32ff"},         // SQUARE ERA NAME REIWA (12.1): compatibility mapping only
		{"\ua7cb", "\ua7cb"},         // 16.0, folds to U+0264 in 16.0
		{"\u1c89", "\u1c89"},         // 16.0 CYRILLIC CAPITAL LETTER TJE
		{"\U00010d50", "\U00010d50"}, // 16.0 GARAY CAPITAL LETTER A
		{"\ua7c0", "\ua7c0"},         // 14.0 LATIN CAPITAL LETTER OLD POLISH O
		{"\u0870", "\u0870"},         // 14.0 ARABIC LETTER ALEF WITH ATTACHED FATHA
		{"\U0001e08f", "\U0001e08f"}, // 15.0 combining Cyrillic: CCC 0 in 12.1
		{"a\U0001e08f\u0301", "a\U0001e08f\u0301"},
		{"\u13a0", "\u13a0"}, // Cherokee capitals fold to themselves
		{"\uab70\u13f8", "\u13a0\u13f0"},
		{"\u1e9e", "ss"},
		{"\u0130", "i\u0307"},
		{"\u1f82", "\u03b1\u0313\u0300\u03b9"},
		{"\u0345", "\u03b9"},
		{"\u212b\u2126\u212a", "a\u030a\u03c9k"},
		{"\ud55c\uae00", "\u1112\u1161\u11ab\u1100\u1173\u11af"},
	} {
		if got, err := casefold(t, um, tc.in); got != tc.want || err != nil {
			t.Errorf("Casefold(%+q) = %+q, %v; want %+q", tc.in, got, err, tc.want)
		}
	}
	for _, r := range []rune{reiwa, 0x1F6D5, 0xE01EF} {
		if !assigned121(r) {
			t.Errorf("U+%04X should be assigned in 12.1", r)
		}
	}
	for _, r := range []rune{0x180F, 0xA7CB, 0x1FAE8, 0x0870, 0x2065, 0xFFFE} {
		if assigned121(r) {
			t.Errorf("U+%04X should be unassigned in 12.1", r)
		}
	}
	if assigned120 == nil || unicode121IsIn120() {
		t.Errorf("x/text rangetable.Assigned(12.0.0) unusable or already holds U+32FF")
	}
}

func unicode121IsIn120() bool {
	for _, rg := range assigned120.R16 {
		if reiwa >= rune(rg.Lo) && reiwa <= rune(rg.Hi) && (reiwa-rune(rg.Lo))%rune(rg.Stride) == 0 {
			return true
		}
	}
	return false
}

// TestCasefoldLength checks utf8_casefold's length rules: the result and its
// NUL must fit in dlen bytes, whatever the length of the input.
func TestCasefoldLength(t *testing.T) {
	um := load(t)
	var buf [MaxNameLen]byte
	for _, tc := range []struct {
		name string
		in   string
		n    int // -22 for EINVAL
	}{
		{"254 ASCII bytes fit", strings.Repeat("A", 254), 254},
		{"255 ASCII bytes leave no room for the NUL", strings.Repeat("A", 255), -22},
		{"empty", "", 0},
		{"ß grows", strings.Repeat("ß", 100), 200},
		{"ΐ triples", strings.Repeat("\u0390", 42), 252},
		{"ΐ triples past the buffer", strings.Repeat("\u0390", 43), -22},
		{"LVT Hangul syllables triple", strings.Repeat("\ud4db", 28), 252},
		{"LVT Hangul syllables past the buffer", strings.Repeat("\ud4db", 29), -22},
		{"ignorables shrink", strings.Repeat("\u200b", 84) + strings.Repeat("b", 254), 254},
	} {
		for i := range buf {
			buf[i] = 0xAA
		}
		n, err := um.Casefold(buf[:], []byte(tc.in))
		if err != nil {
			n = -22
			if !errors.Is(err, syscall.EINVAL) {
				t.Errorf("%s: error %v", tc.name, err)
			}
		}
		if n != tc.n {
			t.Errorf("%s: Casefold = %d, want %d", tc.name, n, tc.n)
		}
		if n >= 0 && buf[n] != 0 {
			t.Errorf("%s: no NUL after the folded name", tc.name)
		}
	}
	if _, err := um.Casefold(nil, nil); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("Casefold into no room: %v, want EINVAL", err)
	}
	if n, err := um.Casefold(buf[:1], nil); n != 0 || err != nil || buf[0] != 0 {
		t.Errorf("Casefold of nothing into 1 byte = %d, %v", n, err)
	}
}

func TestCasefoldHash(t *testing.T) {
	um := load(t)
	// end_name_hash(init_name_hash(salt)) for the empty name.
	salt := uint64(hashSalt)
	if h, err := um.CasefoldHash(salt, nil); err != nil || h != uint32(salt)*0x61C88647 {
		t.Errorf("CasefoldHash(empty) = %#x, %v", h, err)
	}
	// "A" folds to "a" = 0x61: (0 + 0x610 + 0x6) * 11 = 0x42f2, times
	// GOLDEN_RATIO_32 modulo 2^32, worked out by hand.
	if h, _ := um.CasefoldHash(0, []byte("A")); h != 0x222d3d1e {
		t.Errorf("CasefoldHash(0, A) = %#x, want 0x222d3d1e", h)
	}
	pairs := [][2]string{{"Makefile", "MAKEFILE"}, {"Straße", "STRASSE"}, {"\u212bngstr\u00f6m", "\u00e5NGSTRO\u0308M"}}
	for _, p := range pairs {
		h1, err1 := um.CasefoldHash(7, []byte(p[0]))
		h2, err2 := um.CasefoldHash(7, []byte(p[1]))
		if h1 != h2 || err1 != nil || err2 != nil {
			t.Errorf("CasefoldHash(%q) = %#x, CasefoldHash(%q) = %#x", p[0], h1, p[1], h2)
		}
		if h3, _ := um.CasefoldHash(8, []byte(p[0])); h3 == h1 {
			t.Errorf("CasefoldHash(%q) does not depend on the salt", p[0])
		}
	}
	if _, err := um.CasefoldHash(0, []byte("a\xff")); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("CasefoldHash of invalid UTF-8: %v, want EINVAL", err)
	}
}

func TestStrncasecmpFoldedEnd(t *testing.T) {
	um := load(t)
	for _, tc := range []struct {
		cf, name string
		want     int
	}{
		{"abc", "ABC", 0},
		{"abc\x00junk", "ABC", 0}, // cf is read up to its NUL
		{"ab", "ABC", 1},
		{"abc", "AB", 1},
		{"", "", 0},
		{"", "\u200b", 0},
		{"stra\u00dfe", "STRASSE", 1}, // cf must already be folded
		{"strasse", "STRA\u00dfE", 0},
	} {
		r, err := um.StrncasecmpFolded([]byte(tc.cf), []byte(tc.name))
		if r != tc.want || err != nil {
			t.Errorf("StrncasecmpFolded(%q, %q) = %d, %v; want %d", tc.cf, tc.name, r, err, tc.want)
		}
	}
}

// TestLongRun exercises runs of combining marks longer than the cursor's
// inline buffer: the result must be the run stably sorted by CCC (taken
// from x/text here), and an error after the run must still be found.
func TestLongRun(t *testing.T) {
	um := load(t)
	marks := []rune{0x0301, 0x0316, 0x0328, 0x05B0, 0x0F71, 0x0F72, 0x1DCE, 0x093C, 0x0300}
	var run []rune
	for i := range 3 * runInline {
		run = append(run, marks[(i*7)%len(marks)])
	}
	in := "Q" + string(run) + "z"
	sorted := append([]rune(nil), run...)
	ccc := func(r rune) uint8 { return norm.NFD.PropertiesString(string(r)).CCC() }
	sort.SliceStable(sorted, func(i, j int) bool { return ccc(sorted[i]) < ccc(sorted[j]) })
	want := "q" + string(sorted) + "z"
	got, err := casefold(t, um, in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("long run (-want +got):\n%s", diff)
	}
	if r, err := um.Strncasecmp([]byte(in), []byte(want)); r != 0 || err != nil {
		t.Errorf("Strncasecmp(long run, sorted) = %d, %v", r, err)
	}
	bad := []byte("Q" + string(run) + "\xff")
	if r, err := um.Strncasecmp(bad, []byte("q"+string(sorted))); r != -22 || err == nil {
		t.Errorf("Strncasecmp(long run + 0xFF) = %d, %v; want -EINVAL", r, err)
	}
	if !utf8.ValidString(got) {
		t.Errorf("bad output %+q", got)
	}
}

// TestConcurrentUse loads and uses Maps from several goroutines at once (run
// with -race).
func TestConcurrentUse(t *testing.T) {
	done := make(chan error)
	for g := range 4 {
		go func() {
			policy := IgnorablePolicy(g % 2)
			um, err := LoadWith("12.1.0", policy)
			if err != nil {
				done <- err
				return
			}
			var buf [MaxNameLen]byte
			for i := range 200 {
				name := []byte(strings.Repeat("Ä\u200b", i%7))
				if _, err := um.Casefold(buf[:], name); err != nil {
					done <- err
					return
				}
				um.Strncasecmp(name, name)
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
