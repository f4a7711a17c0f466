package fsunicode

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// entry is one character of a normalized string: the code point in bits
// 8..28 and its canonical combining class in bits 0..7, the two things a leaf
// of the kernel's trie gives utf8byte (LEAF_CCC and the UTF-8 bytes).
type entry uint32

func mkEntry(r rune, ccc uint8) entry { return entry(r)<<8 | entry(ccc) }
func (e entry) rune() rune            { return rune(e >> 8) }
func (e entry) ccc() uint8            { return uint8(e) }

// props describes how one code point normalizes in one form. Bits 0..1 are
// the kind, bits 2..9 the code point's own CCC (kindPass), bits 10..26 the
// offset and bits 27..31 the length of its mapping in form.maps (kindMap).
type props uint32

const (
	kindPass   = 0 // maps to itself (also every code point unassigned in 12.1)
	kindMap    = 1 // maps to form.maps[off : off+n]
	kindIgnore = 2 // Default_Ignorable_Code_Point: maps to nothing, ends a run
	kindHangul = 3 // precomposed Hangul syllable, decomposed algorithmically

	propsKindMask = 3
	propsCCCShift = 2
	propsOffShift = 10
	propsOffMax   = 1<<17 - 1
	propsLenShift = 27
	propsLenMax   = 1<<5 - 1
)

func (p props) kind() int     { return int(p & propsKindMask) }
func (p props) ccc() uint8    { return uint8(p >> propsCCCShift) }
func (p props) off() int      { return int(p>>propsOffShift) & propsOffMax }
func (p props) length() int   { return int(p >> propsLenShift) }
func passProps(c uint8) props { return props(c) << propsCCCShift }

// Hangul syllable decomposition (Unicode section 3.12), the algorithm
// utf8hangul in fs/unicode/utf8-norm.c applies instead of storing the
// 11172 decompositions in the trie.
const (
	hangulSBase  = 0xAC00
	hangulLBase  = 0x1100
	hangulVBase  = 0x1161
	hangulTBase  = 0x11A7
	hangulVCount = 21
	hangulTCount = 28
	hangulNCount = hangulVCount * hangulTCount
	hangulSCount = 19 * hangulNCount
)

func isHangulSyllable(r rune) bool { return r >= hangulSBase && r < hangulSBase+hangulSCount }

// hangulDecompose returns the jamo of a precomposed Hangul syllable; t is 0
// for a syllable without a trailing consonant.
func hangulDecompose(r rune) (l, v, t rune) {
	s := r - hangulSBase
	l = hangulLBase + s/hangulNCount
	v = hangulVBase + (s%hangulNCount)/hangulTCount
	if ti := s % hangulTCount; ti != 0 {
		t = hangulTBase + ti
	}
	return l, v, t
}

// form is one of the kernel's two normalizations (enum utf8_normalization:
// UTF8_NFDI, UTF8_NFDICF) as a two-stage lookup table over all code points.
type form struct {
	index  [(unicode.MaxRune + 1) >> 8]uint16 // block of each 256 code points
	blocks []props                            // 256 props per block
	maps   []entry                            // mapping strings
	ascii  [128]byte                          // mapping of each ASCII byte
}

func (f *form) lookup(r rune) props {
	return f.blocks[int(f.index[r>>8])<<8|int(r&0xff)]
}

// tables holds both forms for one IgnorablePolicy.
type tables struct {
	nfdi, nfdicf form
}

// ucd gathers, for one code point, the Unicode data mkutf8data.c reads:
// the canonical decomposition (UnicodeData.txt field 5 without the
// compatibility tags), the C+F case folding (CaseFolding.txt) and the
// Default_Ignorable_Code_Point property, restricted to Unicode 12.1.
type ucd struct {
	policy IgnorablePolicy
	folder cases.Caser
	buf    [64]byte
}

// ignorable reports whether mkutf8data's ignore_init empties r.
func (u *ucd) ignorable(r rune) bool {
	return u.policy == IgnorablesFolded && unicode.Is(ignorable121, r)
}

// ccc is the canonical combining class of r in Unicode 12.1.
func (u *ucd) ccc(r rune) uint8 {
	if !assigned121(r) {
		return 0
	}
	return norm.NFD.PropertiesString(string(r)).CCC()
}

// decomposition is r's canonical decomposition in Unicode 12.1 (one level or
// full, expand recurses anyway), or nil.
func (u *ucd) decomposition(r rune) []rune {
	if !assigned121(r) {
		return nil
	}
	if isHangulSyllable(r) {
		l, v, t := hangulDecompose(r)
		if t == 0 {
			return []rune{l, v}
		}
		return []rune{l, v, t}
	}
	d := norm.NFD.PropertiesString(string(r)).Decomposition()
	if d == nil {
		return nil
	}
	return []rune(string(d))
}

// fold is r's full case folding (statuses C and F) in Unicode 12.1, or nil
// when r folds to itself.
//
// x/text's cases.Fold gets one family wrong (golang/go#46101): it folds the
// Cherokee capitals (U+13A0..U+13F5) to the small letters, while
// CaseFolding.txt folds the small letters to the capitals and leaves the
// capitals alone, as Unicode 8.0 had to for stability. Its folding of the
// small letters is right, so the two map to each other; such a two-cycle is
// broken by keeping the upper-case member as it is. The kernel digest in the
// tests covers every other code point.
func (u *ucd) fold(r rune) []rune {
	if !assigned121(r) {
		return nil
	}
	f := u.xfold(r)
	if len(f) == 1 && f[0] == r {
		return nil
	}
	if len(f) == 1 && unicode.IsUpper(r) {
		if g := u.xfold(f[0]); len(g) == 1 && g[0] == r {
			return nil
		}
	}
	return f
}

// xfold is x/text's full case folding of r.
func (u *ucd) xfold(r rune) []rune {
	n := utf8.EncodeRune(u.buf[:4], r)
	u.folder.Reset()
	m, _, err := u.folder.Transform(u.buf[4:], u.buf[:n], true)
	if err != nil {
		panic(fmt.Sprintf("fsunicode: folding U+%04X: %v", r, err))
	}
	return []rune(string(u.buf[4 : 4+m]))
}

// mapping is the entry mkutf8data.c leaves for r in one table before its
// *_decompose passes expand it: empty for an ignorable, the case folding in
// nfdicf if there is one, else the canonical decomposition; ok is false when
// r has no entry.
func (u *ucd) mapping(r rune, casefold bool) (m []rune, ok bool) {
	if u.ignorable(r) {
		return nil, true
	}
	if casefold {
		if f := u.fold(r); f != nil {
			return f, true
		}
	}
	if d := u.decomposition(r); d != nil {
		return d, true
	}
	return nil, false
}

// expand replaces every character that has an entry by its entry until none
// has (nfdi_decompose, nfdicf_decompose) and appends the result to dst.
func (u *ucd) expand(dst []entry, r rune, casefold bool, depth int) []entry {
	if depth > 8 {
		panic(fmt.Sprintf("fsunicode: mapping of U+%04X does not terminate", r))
	}
	m, ok := u.mapping(r, casefold)
	if !ok {
		return append(dst, mkEntry(r, u.ccc(r)))
	}
	for _, x := range m {
		dst = append(dst, u.expand(nil, x, casefold, depth+1)...)
	}
	return dst
}

// props computes the props of r in one form, appending any mapping to maps.
func (u *ucd) props(r rune, casefold bool, maps *[]entry) props {
	if u.ignorable(r) {
		return kindIgnore
	}
	if !assigned121(r) {
		return passProps(0)
	}
	if isHangulSyllable(r) {
		return kindHangul
	}
	m := u.expand(nil, r, casefold, 0)
	if len(m) == 1 && m[0].rune() == r {
		return passProps(m[0].ccc())
	}
	if len(m) == 0 || len(m) > propsLenMax || len(*maps) > propsOffMax {
		panic(fmt.Sprintf("fsunicode: mapping of U+%04X has %d characters", r, len(m)))
	}
	p := props(kindMap) | props(len(*maps))<<propsOffShift | props(len(m))<<propsLenShift
	*maps = append(*maps, m...)
	return p
}

// buildForm builds one normalization table.
func buildForm(f *form, policy IgnorablePolicy, casefold bool) {
	u := &ucd{policy: policy, folder: cases.Fold()}
	seen := make(map[[256]props]uint16)
	var blk [256]props
	for hi := range f.index {
		for lo := range blk {
			r := rune(hi<<8 | lo)
			if r >= 0xD800 && r <= 0xDFFF {
				blk[lo] = 0 // never looked up: surrogates are invalid UTF-8
				continue
			}
			blk[lo] = u.props(r, casefold, &f.maps)
		}
		n, ok := seen[blk]
		if !ok {
			n = uint16(len(seen))
			seen[blk] = n
			f.blocks = append(f.blocks, blk[:]...)
		}
		f.index[hi] = n
	}
	for b := range f.ascii {
		f.ascii[b] = byte(b)
		if p := f.lookup(rune(b)); p.kind() == kindMap {
			f.ascii[b] = byte(f.maps[p.off()].rune())
		}
	}
}

func buildTables(policy IgnorablePolicy) *tables {
	t := new(tables)
	buildForm(&t.nfdi, policy, false)
	buildForm(&t.nfdicf, policy, true)
	return t
}
