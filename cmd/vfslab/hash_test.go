package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// hashRun runs `vfslab hash args...` and returns stdout, stderr and the
// exit status.
func hashRun(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	rc := run(append([]string{"hash"}, args...), &out, &errb)
	return out.String(), errb.String(), rc
}

// hashOK runs the command and requires success with one line of output.
func hashOK(t *testing.T, args ...string) string {
	t.Helper()
	out, errs, rc := hashRun(args...)
	if rc != 0 || errs != "" {
		t.Fatalf("vfslab hash %s: exit %d: %s", strings.Join(args, " "), rc, errs)
	}
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
		t.Fatalf("vfslab hash %s: output %q is not one line", strings.Join(args, " "), out)
	}
	return strings.TrimSuffix(out, "\n")
}

// vectorRows returns the fields of every non-comment line of a testdata
// file of another package.
func vectorRows(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 64*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			rows = append(rows, strings.Fields(line))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no vectors", path)
	}
	return rows
}

func hasHighByte(hexName string) bool {
	b, _ := hex.DecodeString(hexName)
	for _, c := range b {
		if c >= 0x80 {
			return true
		}
	}
	return false
}

// eofAdjust is the step of __ext4fs_dirhash that e2fsprogs leaves out: the
// 32-bit htree EOF value moves down by one even step.
func eofAdjust(h string) string {
	v, _ := strconv.ParseUint(h, 16, 32)
	v &^= 1
	if v == 0xfffffffe {
		v = 0xfffffffc
	}
	return fmt.Sprintf("%08x", v)
}

// The version numbers of the vector files, as the command's names; the
// table is written out here rather than taken from the command.
var testVersionNames = []string{"legacy", "half_md4", "tea", "legacy_unsigned", "half_md4_unsigned", "tea_unsigned", "siphash"}

// TestHashExt4Vectors runs every vector of ext4/testdata/hash-vectors.txt
// (debugfs dx_hash and libext2fs ext2fs_dirhash2) through `vfslab hash
// ext4`, casefolded ones with --casefold, each version by its name and the
// first of each by its number.
func TestHashExt4Vectors(t *testing.T) {
	rows := vectorRows(t, "../../ext4/testdata/hash-vectors.txt")
	var cf, cfHigh, high, long, seeded, byNumber int
	numbered := map[string]bool{}
	for i, f := range rows {
		if len(f) != 7 {
			t.Fatalf("bad vector line %q", f)
		}
		ver, err := strconv.Atoi(f[1])
		if err != nil || ver < 0 || ver >= len(testVersionNames) {
			t.Fatalf("bad version in %q", f)
		}
		args := []string{"ext4", "--version", testVersionNames[ver]}
		if !numbered[f[1]] {
			numbered[f[1]] = true
			args[2] = f[1]
			byNumber++
		}
		if f[2] != "-" {
			args = append(args, "--seed", f[2])
			seeded++
		}
		if f[3] == "1" {
			args = append(args, "--casefold")
			cf++
			if hasHighByte(f[4]) {
				cfHigh++
			}
		}
		args = append(args, f[4])
		want := eofAdjust(f[5]) + " " + f[6]
		if got := hashOK(t, args...); got != want {
			t.Errorf("vector %d: vfslab hash %s: %s, want %s", i, strings.Join(args, " "), got, want)
		}
		if hasHighByte(f[4]) {
			high++
		}
		if len(f[4]) == 2*255 {
			long++
		}
	}
	if cf < 1000 || cfHigh < 500 || high < 1000 || long < 10 || seeded < 100 || byNumber != 6 {
		t.Errorf("thin coverage: %d casefolded (%d with bytes >= 0x80), %d with bytes >= 0x80, %d of 255 bytes, %d seeded, %d versions by number",
			cf, cfHigh, high, long, seeded, byNumber)
	}
	t.Logf("%d vectors: %d casefolded (%d with bytes >= 0x80), %d with bytes >= 0x80, %d of 255 bytes",
		len(rows), cf, cfHigh, high, long)
}

// TestHashExt4SiphashVectors runs ext4/testdata/hash-vectors-siphash.txt
// (the SipHash reference implementation) through `vfslab hash ext4
// --version siphash --dirhash-key`: hash = high word with the EOF step,
// minor = low word.
func TestHashExt4SiphashVectors(t *testing.T) {
	rows := vectorRows(t, "../../ext4/testdata/hash-vectors-siphash.txt")
	long := 0
	for i, f := range rows {
		args := []string{"ext4", "--version", "siphash", "--dirhash-key", f[0], f[1]}
		want := eofAdjust(f[2][:8]) + " " + f[2][8:]
		if got := hashOK(t, args...); got != want {
			t.Errorf("vector %d: vfslab hash %s: %s, want %s", i, strings.Join(args, " "), got, want)
		}
		if len(f[1]) == 2*255 {
			long++
		}
	}
	if len(rows) < 100 || long == 0 {
		t.Errorf("thin coverage: %d vectors, %d of 255 bytes", len(rows), long)
	}
}

// TestHashF2fsVectors runs every vector of f2fs/testdata/hash-vectors.txt
// (f2fs-tools f2fs_dentry_hash) through `vfslab hash f2fs`, casefolded ones
// with --casefold.
func TestHashF2fsVectors(t *testing.T) {
	rows := vectorRows(t, "../../f2fs/testdata/hash-vectors.txt")
	var cf, cfHigh, high, long int
	for i, f := range rows {
		if len(f) != 3 {
			t.Fatalf("bad vector line %q", f)
		}
		args := []string{"f2fs"}
		if f[0] == "1" {
			args = append(args, "--casefold")
			cf++
			if hasHighByte(f[1]) {
				cfHigh++
			}
		}
		args = append(args, f[1])
		if got := hashOK(t, args...); got != f[2] {
			t.Errorf("vector %d: vfslab hash %s: %s, want %s", i, strings.Join(args, " "), got, f[2])
		}
		if hasHighByte(f[1]) {
			high++
		}
		if len(f[1]) == 2*255 {
			long++
		}
	}
	if cf < 100 || cfHigh < 50 || high < 100 || long < 2 {
		t.Errorf("thin coverage: %d casefolded (%d with bytes >= 0x80), %d with bytes >= 0x80, %d of 255 bytes", cf, cfHigh, high, long)
	}
	t.Logf("%d vectors: %d casefolded (%d with bytes >= 0x80), %d with bytes >= 0x80, %d of 255 bytes",
		len(rows), cf, cfHigh, high, long)
}

// TestHashF2fsSiphashVectors runs f2fs/testdata/hash-vectors-siphash.txt
// through `vfslab hash f2fs --dirhash-key`: the low word.
func TestHashF2fsSiphashVectors(t *testing.T) {
	rows := vectorRows(t, "../../f2fs/testdata/hash-vectors-siphash.txt")
	for i, f := range rows {
		args := []string{"f2fs", "--dirhash-key", f[0], f[1]}
		if got, want := hashOK(t, args...), f[2][8:]; got != want {
			t.Errorf("vector %d: vfslab hash %s: %s, want %s", i, strings.Join(args, " "), got, want)
		}
	}
}

func hexOf(s string) string { return hex.EncodeToString([]byte(s)) }

// TestHashCasefoldEquivalence: with --casefold, names that fold alike hash
// alike, and like their folded form hashed as given; the SipHash forms
// fold too. Folding failures and empty folds follow each filesystem's rule.
func TestHashCasefoldEquivalence(t *testing.T) {
	key := "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf"
	pairs := [][2]string{
		{"Straße", "strasse"},
		{"\u212bngström", "a\u030angstro\u0308m"},
		{"ΩΜΈΓΑ", "ωμε\u0301γα"},
		{"ꭰꭱ", "ᎠᎡ"}, // Cherokee folds to the capitals
		{"a\u200bB", "ab"},
	}
	for _, p := range pairs {
		for _, args := range [][]string{
			{"ext4", "--version", "half_md4"},
			{"ext4", "--version", "tea_unsigned", "--seed", "0123456789abcdef0123456789abcdef"},
			{"ext4", "--version", "siphash", "--dirhash-key", key},
			{"f2fs"},
			{"f2fs", "--dirhash-key", key},
		} {
			folded := hashOK(t, append(append([]string{}, args...), "--casefold", hexOf(p[0]))...)
			plain := hashOK(t, append(append([]string{}, args...), hexOf(p[1]))...)
			raw := hashOK(t, append(append([]string{}, args...), hexOf(p[0]))...)
			if folded != plain {
				t.Errorf("%v: --casefold %q gives %s, %q gives %s", args, p[0], folded, p[1], plain)
			}
			if folded == raw {
				t.Errorf("%v: --casefold made no difference for %q", args, p[0])
			}
		}
	}
	// Invalid UTF-8 does not fold: both filesystems hash the raw bytes.
	for _, fs := range [][]string{{"ext4", "--version", "tea"}, {"f2fs"}} {
		bad := "41ff42"
		if a, b := hashOK(t, append(append([]string{}, fs...), "--casefold", bad)...), hashOK(t, append(append([]string{}, fs...), bad)...); a != b {
			t.Errorf("%v: invalid UTF-8 folded: %s != %s", fs, a, b)
		}
	}
	// A name folding to nothing: ext4 hashes the empty string, f2fs the raw
	// name.
	zwsp := hexOf("\u200b")
	if a, b := hashOK(t, "ext4", "--version", "half_md4", "--casefold", zwsp), hashOK(t, "ext4", "--version", "half_md4", ""); a != b {
		t.Errorf("ext4: U+200B folds to %s, empty name hashes to %s", a, b)
	}
	if a, b := hashOK(t, "f2fs", "--casefold", zwsp), hashOK(t, "f2fs", zwsp); a != b {
		t.Errorf("f2fs: U+200B gives %s, raw %s", a, b)
	}
	// A 200-byte name of "É" (2 bytes) folds to 300 bytes of "e" U+0301:
	// fine in ext4's PATH_MAX buffer, too long for f2fs's 255-byte one.
	long := strings.Repeat("É", 100)
	if a, b := hashOK(t, "ext4", "--version", "tea", "--casefold", hexOf(long)), hashOK(t, "ext4", "--version", "tea", hexOf(strings.Repeat("e\u0301", 100))); a != b {
		t.Errorf("ext4: long fold %s, want %s", a, b)
	}
	if a, b := hashOK(t, "f2fs", "--casefold", hexOf(long)), hashOK(t, "f2fs", hexOf(long)); a != b {
		t.Errorf("f2fs: a fold past 255 bytes gives %s, want the raw hash %s", a, b)
	}
	// "." and ".." hash to 0 in f2fs, folded or not, keyed or not.
	for _, args := range [][]string{{"f2fs", "2e"}, {"f2fs", "--casefold", "2e2e"}, {"f2fs", "--dirhash-key", key, "--casefold", "2e"}} {
		if got := hashOK(t, args...); got != "00000000" {
			t.Errorf("%v: %s", args, got)
		}
	}
}

// TestHashArgs: flags after the name, a seed with the dashes of a UUID, an
// explicit all-zero seed, and help.
func TestHashArgs(t *testing.T) {
	seed := "2d896624-912f-4123-be22-8129ce170271"
	a := hashOK(t, "ext4", "--version", "half_md4", "--seed", seed, "666f6f")
	b := hashOK(t, "ext4", "666f6f", "--seed", strings.ReplaceAll(seed, "-", ""), "--version", "1")
	if a != b {
		t.Errorf("same seed and name: %s vs %s", a, b)
	}
	if c := hashOK(t, "ext4", "--version", "half_md4", "666f6f"); c == a {
		t.Errorf("the seed made no difference: %s", c)
	}
	if z, d := hashOK(t, "ext4", "--version", "tea", "--seed", strings.Repeat("00", 16), "666f6f"), hashOK(t, "ext4", "--version", "tea", "666f6f"); z != d {
		t.Errorf("all-zero seed %s differs from the default %s", z, d)
	}
	for _, args := range [][]string{{"--help"}, {"ext4", "--help"}, {"f2fs", "-h"}} {
		out, errs, rc := hashRun(args...)
		if rc != 0 || !strings.Contains(out, "vfslab hash ext4") || errs != "" {
			t.Errorf("%v: exit %d, output %q", args, rc, out+errs)
		}
	}
	var out, errb bytes.Buffer
	if rc := run([]string{"help", "hash"}, &out, &errb); rc != 0 || !strings.Contains(out.String(), "--casefold") {
		t.Errorf("vfslab help hash: exit %d: %q", rc, out.String())
	}
}

// TestHashErrors: bad input is a usage error (exit 2) with a message on
// stderr and nothing on stdout.
func TestHashErrors(t *testing.T) {
	key := "000102030405060708090a0b0c0d0e0f"
	cases := []struct {
		args []string
		msg  string
	}{
		{nil, "a filesystem is required"},
		{[]string{"xfs", "41"}, "unknown filesystem"},
		{[]string{"ext4", "--version", "tea"}, "want exactly 1 argument(s), NAME_HEX"},
		{[]string{"ext4", "--version", "tea", "41", "42"}, "NAME_HEX"},
		{[]string{"ext4", "--version", "tea", "4g"}, "not hex"},
		{[]string{"ext4", "--version", "tea", "414"}, "not hex"},
		{[]string{"ext4", "41"}, "--version is required"},
		{[]string{"ext4", "--version", "md5", "41"}, "half_md4_unsigned"},
		{[]string{"ext4", "--version", "7", "41"}, "--version"},
		{[]string{"ext4", "--version", "siphash", "41"}, "--dirhash-key"},
		{[]string{"ext4", "--version", "siphash", "--dirhash-key", key[2:], "41"}, "15 bytes, want 16"},
		{[]string{"ext4", "--version", "tea", "--dirhash-key", key, "41"}, "only to --version siphash"},
		{[]string{"ext4", "--version", "tea", "--seed", "0011", "41"}, "2 bytes, want 16"},
		{[]string{"ext4", "--version", "tea", "--seed", "zz", "41"}, "not hex"},
		{[]string{"ext4", "--bogus", "41"}, "unknown flag: --bogus"},
		{[]string{"f2fs", "--version", "tea", "41"}, "unknown flag: --version"},
		{[]string{"f2fs", "--dirhash-key", key + "00", "41"}, "17 bytes, want 16"},
		{[]string{"f2fs", "--dirhash-key", "xyz", "41"}, "not hex"},
		{[]string{"f2fs"}, "NAME_HEX"},
	}
	for _, c := range cases {
		out, errs, rc := hashRun(c.args...)
		if rc != 2 || out != "" || !strings.Contains(errs, c.msg) {
			t.Errorf("vfslab hash %v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, rc, out, errs, c.msg)
		}
	}
}
