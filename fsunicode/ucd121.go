package fsunicode

import (
	"unicode"

	"golang.org/x/text/unicode/rangetable"
)

// unicode121 is UNICODE_AGE(12, 1, 0), the version of the kernel's tables
// (utf8vers in fs/unicode/utf8data.c_shipped, UTF8_LATEST in
// include/linux/unicode.h).
const unicode121 = 12<<16 | 1<<8 // UNICODE_AGE(12, 1, 0)

// reiwa is U+32FF SQUARE ERA NAME REIWA, the only character Unicode 12.1.0
// added to 12.0.0 (DerivedAge.txt: "32FF ; 12.1"). Its decomposition is the
// compatibility mapping <square> 4EE4 548C, which the kernel ignores, so the
// character maps to itself.
const reiwa = 0x32FF

// assigned120 is the set of code points assigned in Unicode 12.0.0, from
// x/text's generated tables (it has no 12.1.0 entry; see assigned121).
var assigned120 = rangetable.Assigned("12.0.0")

// assigned121 reports whether r was assigned (had a General_Category other
// than Cn) in Unicode 12.1.0. Code points that were not have generation 0 in
// the kernel's trie and pass through normalization unchanged.
func assigned121(r rune) bool {
	return r == reiwa || unicode.Is(assigned120, r)
}

// ignorable121 is the Default_Ignorable_Code_Point property of Unicode
// 12.1.0 (DerivedCoreProperties-12.1.0.txt, 4173 code points), which
// mkutf8data.c's ignore_init reads to give these code points an empty
// decomposition. It includes reserved (unassigned) code points.
//
// Generated once from the kernel's 12.1 table: these are exactly the code
// points (other than U+0000) whose nfdi and nfdicf output is empty in
// e2fsprogs' lib/ext2fs/utf8data.h, which is mkutf8data.c's output for
// Unicode 12.1.0 like the kernel's fs/unicode/utf8data.c_shipped, read with a
// throwaway harness around utf8byte that is not part of this project. The
// tests check the list against the kernel digest (kernel_test.go) and
// against the property's definition evaluated with the Go standard library's
// newer Unicode tables, where differences may only be code points assigned
// after 12.1.
var ignorable121 = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x00AD, Hi: 0x00AD, Stride: 1}, // SOFT HYPHEN
		{Lo: 0x034F, Hi: 0x034F, Stride: 1}, // COMBINING GRAPHEME JOINER
		{Lo: 0x061C, Hi: 0x061C, Stride: 1}, // ARABIC LETTER MARK
		{Lo: 0x115F, Hi: 0x1160, Stride: 1}, // HANGUL CHOSEONG/JUNGSEONG FILLER
		{Lo: 0x17B4, Hi: 0x17B5, Stride: 1}, // KHMER VOWEL INHERENT AQ, AA
		{Lo: 0x180B, Hi: 0x180E, Stride: 1}, // MONGOLIAN FVS1..3, VOWEL SEPARATOR
		{Lo: 0x200B, Hi: 0x200F, Stride: 1}, // ZERO WIDTH SPACE..RIGHT-TO-LEFT MARK
		{Lo: 0x202A, Hi: 0x202E, Stride: 1}, // LRE..RLO
		{Lo: 0x2060, Hi: 0x206F, Stride: 1}, // WORD JOINER..NOMINAL DIGIT SHAPES, reserved 2065
		{Lo: 0x3164, Hi: 0x3164, Stride: 1}, // HANGUL FILLER
		{Lo: 0xFE00, Hi: 0xFE0F, Stride: 1}, // VARIATION SELECTOR-1..16
		{Lo: 0xFEFF, Hi: 0xFEFF, Stride: 1}, // ZERO WIDTH NO-BREAK SPACE
		{Lo: 0xFFA0, Hi: 0xFFA0, Stride: 1}, // HALFWIDTH HANGUL FILLER
		{Lo: 0xFFF0, Hi: 0xFFF8, Stride: 1}, // reserved
	},
	R32: []unicode.Range32{
		{Lo: 0x1BCA0, Hi: 0x1BCA3, Stride: 1}, // SHORTHAND FORMAT LETTER OVERLAP..UP STEP
		{Lo: 0x1D173, Hi: 0x1D17A, Stride: 1}, // MUSICAL SYMBOL BEGIN BEAM..END PHRASE
		{Lo: 0xE0000, Hi: 0xE0FFF, Stride: 1}, // tags, VARIATION SELECTOR-17..256, reserved
	},
	LatinOffset: 1,
}

// ignorable121Count is the number of code points in ignorable121.
const ignorable121Count = 4173
