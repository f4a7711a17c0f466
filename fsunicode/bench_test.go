package fsunicode

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// benchName returns a name of exactly n bytes: ASCII, or a mix of Latin
// letters with diacritics (precomposed and combining), Greek, German sharp
// s, CJK and Hangul, padded with ASCII to n bytes.
func benchName(n int, ascii bool) []byte {
	unit := "Report-2024_final.TXT "
	if !ascii {
		unit = "Ünïcödé Straße ΚΑΛΗΜΕΡΑ e\u0301\u0323 名前 한글 Å "
	}
	s := strings.Repeat(unit, n/len(unit)+1)
	b := []byte(s)
	for len(b) > n {
		_, size := utf8.DecodeLastRune(b)
		b = b[:len(b)-size]
	}
	for len(b) < n {
		b = append(b, 'x')
	}
	return b
}

var benchSizes = []int{8, 32, 255}

// BenchmarkCasefold folds names into a buffer large enough for the result
// (a 255-byte name does not fit the kernel's 255-byte buffer with its NUL).
func BenchmarkCasefold(b *testing.B) {
	um := load(b)
	for _, ascii := range []bool{true, false} {
		for _, n := range benchSizes {
			name := benchName(n, ascii)
			b.Run(fmt.Sprintf("%s/%d", kind(ascii), n), func(b *testing.B) {
				var buf [4 * MaxNameLen]byte
				b.ReportAllocs()
				b.SetBytes(int64(len(name)))
				for b.Loop() {
					if _, err := um.Casefold(buf[:], name); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkStrncasecmp compares a name with its upper-case form, which
// folds the same, so both names are streamed to their ends.
func BenchmarkStrncasecmp(b *testing.B) {
	um := load(b)
	for _, ascii := range []bool{true, false} {
		for _, n := range benchSizes {
			name := benchName(n, ascii)
			upper := []byte(cases.Upper(language.Und).String(string(name)))
			b.Run(fmt.Sprintf("%s/%d", kind(ascii), n), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(name)))
				for b.Loop() {
					if r, err := um.Strncasecmp(name, upper); r != 0 || err != nil {
						b.Fatal(r, err)
					}
				}
			})
		}
	}
}

// BenchmarkStrncasecmpFolded is the per-dirent comparison of a lookup in a
// casefolded directory: the looked-up name folded once, each entry streamed.
func BenchmarkStrncasecmpFolded(b *testing.B) {
	um := load(b)
	for _, ascii := range []bool{true, false} {
		for _, n := range benchSizes {
			name := benchName(n, ascii)
			var cf [4 * MaxNameLen]byte
			m, err := um.Casefold(cf[:], name)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/%d", kind(ascii), n), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(name)))
				for b.Loop() {
					if r, err := um.StrncasecmpFolded(cf[:m], name); r != 0 || err != nil {
						b.Fatal(r, err)
					}
				}
			})
		}
	}
}

// BenchmarkCasefoldHash is generic_ci_d_hash's work.
func BenchmarkCasefoldHash(b *testing.B) {
	um := load(b)
	for _, ascii := range []bool{true, false} {
		for _, n := range benchSizes {
			name := benchName(n, ascii)
			b.Run(fmt.Sprintf("%s/%d", kind(ascii), n), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(name)))
				for b.Loop() {
					if _, err := um.CasefoldHash(1, name); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkLoad measures deriving the tables, which the first Load of a
// process pays.
func BenchmarkLoad(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		buildTables(IgnorablesFolded)
	}
}

func kind(ascii bool) string {
	if ascii {
		return "ascii"
	}
	return "mixed"
}

func TestBenchNames(t *testing.T) {
	for _, ascii := range []bool{true, false} {
		for _, n := range benchSizes {
			if name := benchName(n, ascii); len(name) != n || !utf8.Valid(name) {
				t.Errorf("benchName(%d, %v) = %d bytes, valid %v", n, ascii, len(name), utf8.Valid(name))
			}
		}
	}
}
