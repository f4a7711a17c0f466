package fsunicode

import (
	"bytes"
	"errors"
	"syscall"
	"testing"
)

// The vectors of the kernel's KUnit suite, fs/unicode/tests/utf8_kunit.c
// (formerly fs/unicode/utf8-selftest.c): nfdi_test_data and
// nfdicf_test_data, transcribed as data. In the kernel each string sits in a
// fixed-size, NUL-padded array (10 bytes for nfdi, 30 for nfdicf), and
// check_utf8_comparisons passes the whole array, NULs included, as the qstr.

var kunitNFDI = []struct {
	name     string
	str, dec []byte
}{
	{"ABba decomposes to itself", []byte("aBba"), []byte("aBba")},
	{"VULGAR FRACTION ONE QUARTER has no canonical decomposition",
		[]byte{0xc2, 0xbc}, []byte{0xc2, 0xbc}},
	{"LATIN SMALL LETTER A WITH DIAERESIS", []byte{0xc3, 0xa4}, []byte{0x61, 0xcc, 0x88}},
	{"LATIN SMALL LETTER LJ has no canonical decomposition",
		[]byte{0xc7, 0x89}, []byte{0xc7, 0x89}},
	{"GREEK ANO TELEIA decomposes to MIDDLE DOT", []byte{0xce, 0x87}, []byte{0xc2, 0xb7}},
	{"A + ACUTE + OGONEK reorders to A + OGONEK + ACUTE",
		[]byte{0x41, 0xcc, 0x81, 0xcc, 0xa8}, []byte{0x41, 0xcc, 0xa8, 0xcc, 0x81}},
	{"A WITH DIAERESIS + OGONEK",
		[]byte{0xc3, 0xa4, 0xcc, 0xa8}, []byte{0x61, 0xcc, 0xa8, 0xcc, 0x88}},
}

var kunitNFDICF = []struct {
	name     string
	str, ncf []byte
}{
	{"ABba folds to lower case", []byte{0x41, 0x42, 0x62, 0x61}, []byte{0x61, 0x62, 0x62, 0x61}},
	{"all ASCII folds to lower case",
		[]byte("ABCDEFGHIJKLMNOPQRSTUVWXYZ0.1"), []byte("abcdefghijklmnopqrstuvwxyz0.1")},
	{"LATIN SMALL LETTER SHARP S folds to ss", []byte{0xc3, 0x9f}, []byte{0x73, 0x73}},
	{"LATIN CAPITAL LETTER A WITH RING ABOVE", []byte{0xc3, 0x85}, []byte{0x61, 0xcc, 0x8a}},
	// Unicode 8.0: Cherokee small letters fold to the (older) capitals.
	{"CHEROKEE SMALL LETTER A", []byte{0xea, 0xad, 0xb0}, []byte{0xe1, 0x8e, 0xa0}},
	{"CHEROKEE SMALL LETTER YE", []byte{0xe1, 0x8f, 0xb8}, []byte{0xe1, 0x8f, 0xb0}},
	{"OLD HUNGARIAN CAPITAL LETTER AMB",
		[]byte{0xf0, 0x90, 0xb2, 0x83}, []byte{0xf0, 0x90, 0xb3, 0x83}},
	// Unicode 9.0.
	{"OSAGE CAPITAL LETTER CHA",
		[]byte{0xf0, 0x90, 0x92, 0xb5}, []byte{0xf0, 0x90, 0x93, 0x9d}},
	{"LATIN CAPITAL LETTER SMALL CAPITAL I", []byte{0xea, 0x9e, 0xae}, []byte{0xc9, 0xaa}},
	// Unicode 11.0: GEORGIAN MTAVRULI CAPITAL LETTER AN folds to GEORGIAN
	// LETTER AN (the kernel's comment names the two the other way round).
	{"GEORGIAN MTAVRULI CAPITAL LETTER AN", []byte{0xe1, 0xb2, 0x90}, []byte{0xe1, 0x83, 0x90}},
}

// padded returns s in a NUL-padded array of n bytes, as the kernel's vectors
// are stored.
func padded(s []byte, n int) []byte {
	p := make([]byte, n)
	copy(p, s)
	return p
}

// checkForm mirrors check_utf8_nfdi and check_utf8_nfdicf: the length of the
// normalization, then its bytes.
func checkForm(t *testing.T, apply func(dst, name []byte) (int, error), str, want []byte) {
	t.Helper()
	var buf [64]byte
	n, err := apply(buf[:], str)
	if err != nil {
		t.Fatalf("%q: %v", str, err)
	}
	if n != len(want) {
		t.Errorf("%q: length %d, want %d", str, n, len(want))
	}
	if !bytes.Equal(buf[:n], want) {
		t.Errorf("%q -> %q, want %q", str, buf[:n], want)
	}
	if buf[n] != 0 {
		t.Errorf("%q: output not NUL-terminated", str)
	}
}

func TestKUnitNFDI(t *testing.T) {
	um := load(t)
	for _, v := range kunitNFDI {
		t.Run(v.name, func(t *testing.T) { checkForm(t, um.Normalize, v.str, v.dec) })
	}
}

func TestKUnitNFDICF(t *testing.T) {
	um := load(t)
	for _, v := range kunitNFDICF {
		t.Run(v.name, func(t *testing.T) { checkForm(t, um.Casefold, v.str, v.ncf) })
	}
}

// TestKUnitComparisons is check_utf8_comparisons: utf8_strncmp of each nfdi
// pair and utf8_strncasecmp of each nfdicf pair, passed as their whole
// NUL-padded arrays, compare equal.
func TestKUnitComparisons(t *testing.T) {
	um := load(t)
	for _, v := range kunitNFDI {
		if r, err := um.Strncmp(padded(v.str, 10), padded(v.dec, 10)); r != 0 || err != nil {
			t.Errorf("Strncmp(%q, %q) = %d, %v; want 0", v.str, v.dec, r, err)
		}
	}
	for _, v := range kunitNFDICF {
		if r, err := um.Strncasecmp(padded(v.str, 30), padded(v.ncf, 30)); r != 0 || err != nil {
			t.Errorf("Strncasecmp(%q, %q) = %d, %v; want 0", v.str, v.ncf, r, err)
		}
	}
}

// TestKUnitSupportedVersions follows check_supported_versions: the latest
// version (12.1.0) loads and 13.0.0, 0.0.0 and UNICODE_AGE(-1, -1, -1) do
// not. The kernel's utf8version_is_supported also accepts the older ages its
// tables carry, such as 7.0.0 and 9.0.0; this model loads only 12.1.0, the
// version every filesystem encoding uses, and rejects those too.
func TestKUnitSupportedVersions(t *testing.T) {
	um := load(t)
	if um.Version() != Latest || Latest != UnicodeAge(12, 1, 0) || Latest != 0x0c0100 {
		t.Errorf("Version() = %#x, Latest = %#x", um.Version(), Latest)
	}
	if um.VersionString() != "12.1.0" {
		t.Errorf("VersionString() = %q", um.VersionString())
	}
	for _, age := range []uint32{
		UnicodeAge(13, 0, 0), UnicodeAge(0, 0, 0), UnicodeAge(255, 255, 255),
		UnicodeAge(7, 0, 0), UnicodeAge(9, 0, 0), UnicodeAge(12, 0, 0),
	} {
		if _, err := LoadAge(age, IgnorablesFolded); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("LoadAge(%#x) error = %v, want EINVAL", age, err)
		}
	}
}
