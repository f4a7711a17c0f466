package ext4

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/internal/fstestutil"
)

// The known-answer files are read with the shared helpers.
var (
	readVectors = fstestutil.ReadVectors
	mustHex     = fstestutil.MustHex
)

func mustHex32(t testing.TB, s string) uint32 {
	t.Helper()
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		t.Fatalf("bad hex word %q: %v", s, err)
	}
	return uint32(v)
}

// keyWords turns 16 dirhash key bytes into the two le64 words fscrypt keeps.
func keyWords(t testing.TB, s string) *[2]uint64 {
	b := mustHex(t, s)
	if len(b) != 16 {
		t.Fatalf("key %q is not 16 bytes", s)
	}
	return &[2]uint64{binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])}
}

// kernelEOF applies the step of __ext4fs_dirhash that e2fsprogs lacks: the value reserved
// for the 32-bit htree EOF marker moves down by one even step.
func kernelEOF(h uint32) uint32 {
	h &^= 1
	if h == 0xfffffffe {
		return 0xfffffffc
	}
	return h
}

// isASCII reports whether every byte of b is below 0x80.
func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

type ext4Vector struct {
	src         string
	version     uint8
	seed        *[4]uint32
	casefolded  bool
	name        []byte
	hash, minor uint32
}

func loadExt4Vectors(t testing.TB) []ext4Vector {
	var vs []ext4Vector
	for _, f := range readVectors(t, "testdata/hash-vectors.txt") {
		if len(f) != 7 {
			t.Fatalf("bad vector line %q", f)
		}
		ver, err := strconv.Atoi(f[1])
		if err != nil || ver < 0 || ver > 255 {
			t.Fatalf("bad version in %q", f)
		}
		v := ext4Vector{src: f[0], version: uint8(ver), casefolded: f[3] == "1",
			name: mustHex(t, f[4]), hash: mustHex32(t, f[5]), minor: mustHex32(t, f[6])}
		if f[2] != "-" {
			b := mustHex(t, f[2])
			if len(b) != 16 {
				t.Fatalf("bad seed in %q", f)
			}
			w := HashSeedWords((*[16]byte)(b))
			v.seed = &w
		}
		vs = append(vs, v)
	}
	return vs
}

// TestDirhashKnownAnswers checks every vector of testdata/hash-vectors.txt. Plain vectors go
// straight to Ext4fsDirhash; casefolded ones go through Dirhash in a casefolded directory
// whose encoding is package fsunicode's Unicode 12.1 map, so the kernel's folding step
// (ext4fs_dirhash: fold into a PATH_MAX buffer, raw bytes when folding fails) is checked
// together with the hash.
func TestDirhashKnownAnswers(t *testing.T) {
	vs := loadExt4Vectors(t)
	tk, dir := newTestDir(t, dirOpts{casefold: true})
	dir.SB.Encoding = loadUTF8(t)
	perVersion := map[uint8]int{}
	seeded, highBytes, casefolded, casefoldHigh, foldFailed, foldChanged := 0, 0, 0, 0, 0, 0
	for i, v := range vs {
		hinfo := DxHashInfo{HashVersion: v.version, Seed: v.seed, Hash: 1, MinorHash: 1}
		var err error
		if v.casefolded {
			err = Dirhash(tk, dir, v.name, &hinfo)
			casefolded++
			if !isASCII(v.name) {
				casefoldHigh++
			}
			buf := make([]byte, pathMax)
			if n, ferr := dir.SB.Encoding.Casefold(buf, v.name); ferr != nil {
				foldFailed++
			} else if !bytes.Equal(buf[:n], v.name) {
				foldChanged++
			}
		} else {
			err = Ext4fsDirhash(v.name, &hinfo, nil)
		}
		if err != nil {
			t.Fatalf("vector %d: %v", i, err)
		}
		want := [2]uint32{kernelEOF(v.hash), v.minor}
		if got := [2]uint32{hinfo.Hash, hinfo.MinorHash}; got != want {
			t.Errorf("vector %d (%s v%d seed %v cf %v name %x): got %08x/%08x, want %08x/%08x",
				i, v.src, v.version, v.seed, v.casefolded, v.name, got[0], got[1], want[0], want[1])
		}
		perVersion[v.version]++
		if v.seed != nil && *v.seed != [4]uint32{} {
			seeded++
		}
		if !isASCII(v.name) {
			highBytes++
		}
	}
	for ver := DxHashLegacy; ver <= DxHashTEAUnsigned; ver++ {
		if perVersion[ver] < 100 {
			t.Errorf("only %d vectors for hash version %d", perVersion[ver], ver)
		}
	}
	if seeded < 100 || highBytes < 100 || casefolded < 1000 || casefoldHigh < 500 || foldFailed == 0 || foldChanged < 500 {
		t.Errorf("thin coverage: %d seeded, %d with bytes >= 0x80, %d casefolded (%d with bytes >= 0x80, %d not foldable, %d changed by folding)",
			seeded, highBytes, casefolded, casefoldHigh, foldFailed, foldChanged)
	}
	t.Logf("%d vectors: %d casefolded (%d with bytes >= 0x80, %d not foldable, %d changed by folding)",
		len(vs), casefolded, casefoldHigh, foldFailed, foldChanged)
}

// TestDirhashEOFVectors makes sure the data really exercises the EOF adjustment: names whose
// hash before it is 0xfffffffe exist for the legacy, half_md4 and tea versions.
func TestDirhashEOFVectors(t *testing.T) {
	found := map[uint8]bool{}
	for _, v := range loadExt4Vectors(t) {
		if v.hash != 0xfffffffe || v.casefolded {
			continue
		}
		found[v.version] = true
		hinfo := DxHashInfo{HashVersion: v.version, Seed: v.seed}
		if err := Ext4fsDirhash(v.name, &hinfo, nil); err != nil {
			t.Fatal(err)
		}
		if hinfo.Hash != (HtreeEOF32Bit-1)<<1 {
			t.Errorf("%q v%d: hash %08x, want %08x", v.name, v.version, hinfo.Hash, (HtreeEOF32Bit-1)<<1)
		}
	}
	for _, ver := range []uint8{DxHashLegacy, DxHashHalfMD4, DxHashTEA} {
		if !found[ver] {
			t.Errorf("no EOF vector for hash version %d", ver)
		}
	}
}

func TestSiphashReferenceVectors(t *testing.T) {
	key := keyWords(t, "000102030405060708090a0b0c0d0e0f")
	rows := readVectors(t, "testdata/hash-vectors-siphash-ref.txt")
	if len(rows) != 64 {
		t.Fatalf("%d reference vectors, want 64", len(rows))
	}
	msg := make([]byte, 64)
	for i := range msg {
		msg[i] = byte(i)
	}
	for _, f := range rows {
		n, err := strconv.Atoi(f[0])
		if err != nil || n < 0 || n > 63 {
			t.Fatalf("bad line %q", f)
		}
		want := binary.LittleEndian.Uint64(mustHex(t, f[1]))
		if got := fscryptFnameSiphash(key, msg[:n]); got != want {
			t.Errorf("len %d: got %016x, want %016x", n, got, want)
		}
	}
}

func TestDirhashSiphashKnownAnswers(t *testing.T) {
	rows := readVectors(t, "testdata/hash-vectors-siphash.txt")
	eof := 0
	for _, f := range rows {
		key, name := keyWords(t, f[0]), mustHex(t, f[1])
		sip, err := strconv.ParseUint(f[2], 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		if uint32(sip>>32)&^1 == 0xfffffffe {
			eof++
		}
		// The seed plays no part in siphash.
		for _, seed := range []*[4]uint32{nil, {1, 2, 3, 4}} {
			hinfo := DxHashInfo{HashVersion: DxHashSiphash, Seed: seed}
			if err := Ext4fsDirhash(name, &hinfo, key); err != nil {
				t.Fatal(err)
			}
			want := [2]uint32{kernelEOF(uint32(sip >> 32)), uint32(sip)}
			if got := [2]uint32{hinfo.Hash, hinfo.MinorHash}; got != want {
				t.Errorf("key %s name %x: got %08x/%08x, want %08x/%08x", f[0], name,
					got[0], got[1], want[0], want[1])
			}
		}
	}
	if eof == 0 {
		t.Error("no siphash vector exercises the EOF adjustment")
	}
	t.Logf("%d siphash vectors", len(rows))
}

func TestDirhashErrors(t *testing.T) {
	for ver := DxHashLast + 1; ver != 0; ver++ {
		hinfo := DxHashInfo{HashVersion: ver, Hash: 7, MinorHash: 9}
		err := Ext4fsDirhash([]byte("name"), &hinfo, &[2]uint64{1, 2})
		if !errors.Is(err, errno.EINVAL) {
			t.Fatalf("version %d: err %v, want EINVAL", ver, err)
		}
		if hinfo.Hash != 0 || hinfo.MinorHash != 0 {
			t.Fatalf("version %d: hash %x/%x not cleared", ver, hinfo.Hash, hinfo.MinorHash)
		}
	}

	hinfo := DxHashInfo{HashVersion: DxHashSiphash, Hash: 7, MinorHash: 9}
	before := hinfo
	if err := Ext4fsDirhash([]byte("name"), &hinfo, nil); !errors.Is(err, errno.EPERM) {
		t.Fatalf("siphash without key: err %v, want EPERM", err)
	}
	if diff := cmp.Diff(before, hinfo); diff != "" {
		t.Errorf("siphash without key changed hinfo (-before +after):\n%s", diff)
	}

	if err := Ext4fsDirhash([]byte("name"), nil, nil); !errors.Is(err, errno.EINVAL) {
		t.Errorf("nil hinfo: err %v, want EINVAL", err)
	}
}

func TestHashSeedWords(t *testing.T) {
	b := [16]byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0, 0, 0, 0x80, 0xff, 0, 0, 0}
	want := [4]uint32{0x67452301, 0xefcdab89, 0x80000000, 0x000000ff}
	if got := HashSeedWords(&b); got != want {
		t.Errorf("got %08x, want %08x", got, want)
	}
}

// TestDirhashEmptyName pins the len == 0 behaviour: no chunk is transformed, so half_md4 and
// tea return the (seed) state words; the legacy hash returns its start word doubled.
func TestDirhashEmptyName(t *testing.T) {
	seed := [4]uint32{0x11111111, 0x22222223, 0x33333333, 0x44444444}
	cases := []struct {
		ver         uint8
		seed        *[4]uint32
		hash, minor uint32
	}{
		{DxHashLegacy, nil, 0x12a3fe2d << 1, 0},
		{DxHashLegacyUnsigned, &seed, 0x12a3fe2d << 1, 0},
		{DxHashHalfMD4, nil, defaultHashSeed[1] &^ 1, defaultHashSeed[2]},
		{DxHashHalfMD4Unsigned, &seed, seed[1] &^ 1, seed[2]},
		{DxHashTEA, nil, defaultHashSeed[0] &^ 1, defaultHashSeed[1]},
		{DxHashTEAUnsigned, &seed, seed[0] &^ 1, seed[1]},
	}
	for _, c := range cases {
		hinfo := DxHashInfo{HashVersion: c.ver, Seed: c.seed}
		if err := Ext4fsDirhash(nil, &hinfo, nil); err != nil {
			t.Fatal(err)
		}
		if hinfo.Hash != c.hash || hinfo.MinorHash != c.minor {
			t.Errorf("v%d: got %08x/%08x, want %08x/%08x", c.ver, hinfo.Hash, hinfo.MinorHash, c.hash, c.minor)
		}
	}
}

func TestPropertyDirhash(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		name := rapid.SliceOfN(rapid.Byte(), 0, 600).Draw(t, "name")
		ver := rapid.Uint8().Draw(t, "version")
		var seed *[4]uint32
		if rapid.Bool().Draw(t, "seeded") {
			s := [4]uint32(rapid.SliceOfN(rapid.Uint32(), 4, 4).Draw(t, "seed"))
			seed = &s
		}
		var key *[2]uint64
		if rapid.Bool().Draw(t, "keyed") {
			k := [2]uint64(rapid.SliceOfN(rapid.Uint64(), 2, 2).Draw(t, "key"))
			key = &k
		}
		hinfo := DxHashInfo{HashVersion: ver, Seed: seed}
		err := Ext4fsDirhash(name, &hinfo, key)
		switch {
		case ver > DxHashLast:
			if !errors.Is(err, errno.EINVAL) {
				t.Fatalf("version %d: err %v", ver, err)
			}
			return
		case ver == DxHashSiphash && key == nil:
			if !errors.Is(err, errno.EPERM) {
				t.Fatalf("siphash without key: err %v", err)
			}
			return
		case err != nil:
			t.Fatalf("version %d: %v", ver, err)
		}
		if hinfo.Hash&1 != 0 || hinfo.Hash == HtreeEOF32Bit<<1 {
			t.Fatalf("hash %08x breaks the EOF rule", hinfo.Hash)
		}
		if (ver == DxHashLegacy || ver == DxHashLegacyUnsigned) && hinfo.MinorHash != 0 {
			t.Fatalf("legacy minor hash %08x", hinfo.MinorHash)
		}
		// An all-zero seed means the default one.
		zero := DxHashInfo{HashVersion: ver, Seed: &[4]uint32{}}
		none := DxHashInfo{HashVersion: ver}
		if err := errors.Join(Ext4fsDirhash(name, &zero, key), Ext4fsDirhash(name, &none, key)); err != nil {
			t.Fatal(err)
		}
		if zero.Hash != none.Hash || zero.MinorHash != none.MinorHash {
			t.Fatalf("zero seed %08x/%08x differs from no seed %08x/%08x", zero.Hash, zero.MinorHash, none.Hash, none.MinorHash)
		}
	})
}

// TestPropertySignedUnsignedASCII: the signed and unsigned variants agree on names without
// bytes >= 0x80, and the vectors show they do differ on some names with such bytes.
func TestPropertySignedUnsignedASCII(t *testing.T) {
	pairs := [][2]uint8{{DxHashLegacy, DxHashLegacyUnsigned}, {DxHashHalfMD4, DxHashHalfMD4Unsigned},
		{DxHashTEA, DxHashTEAUnsigned}}
	rapid.Check(t, func(t *rapid.T) {
		name := rapid.SliceOfN(rapid.ByteMax(0x7f), 0, 300).Draw(t, "name")
		var seed *[4]uint32
		if rapid.Bool().Draw(t, "seeded") {
			s := [4]uint32(rapid.SliceOfN(rapid.Uint32(), 4, 4).Draw(t, "seed"))
			seed = &s
		}
		for _, p := range pairs {
			s, u := DxHashInfo{HashVersion: p[0], Seed: seed}, DxHashInfo{HashVersion: p[1], Seed: seed}
			if err := errors.Join(Ext4fsDirhash(name, &s, nil), Ext4fsDirhash(name, &u, nil)); err != nil {
				t.Fatal(err)
			}
			if s.Hash != u.Hash || s.MinorHash != u.MinorHash {
				t.Fatalf("v%d %08x/%08x != v%d %08x/%08x", p[0], s.Hash, s.MinorHash, p[1], u.Hash, u.MinorHash)
			}
		}
	})

	differ := map[uint8]bool{}
	for _, v := range loadExt4Vectors(t) {
		if v.casefolded || isASCII(v.name) || v.version > DxHashTEA {
			continue
		}
		s, u := DxHashInfo{HashVersion: v.version, Seed: v.seed}, DxHashInfo{HashVersion: v.version + 3, Seed: v.seed}
		if err := errors.Join(Ext4fsDirhash(v.name, &s, nil), Ext4fsDirhash(v.name, &u, nil)); err != nil {
			t.Fatal(err)
		}
		if s.Hash != u.Hash {
			differ[v.version] = true
		}
	}
	for _, p := range pairs {
		if !differ[p[0]] {
			t.Errorf("v%d and v%d never differ on names with bytes >= 0x80", p[0], p[1])
		}
	}
}

func TestDirhashAllocs(t *testing.T) {
	name := bytes.Repeat([]byte("n\xe9"), 127)
	key := &[2]uint64{1, 2}
	seed := &[4]uint32{5, 6, 7, 8}
	for ver := DxHashLegacy; ver <= DxHashLast; ver++ {
		hinfo := DxHashInfo{HashVersion: ver, Seed: seed}
		if n := testing.AllocsPerRun(100, func() { _ = Ext4fsDirhash(name, &hinfo, key) }); n != 0 {
			t.Errorf("version %d: %v allocations per call", ver, n)
		}
	}
}

func BenchmarkExt4fsDirhash(b *testing.B) {
	names := map[string]uint8{"legacy": DxHashLegacy, "half_md4": DxHashHalfMD4, "tea": DxHashTEA,
		"legacy_unsigned": DxHashLegacyUnsigned, "half_md4_unsigned": DxHashHalfMD4Unsigned,
		"tea_unsigned": DxHashTEAUnsigned, "siphash": DxHashSiphash}
	order := []string{"legacy", "half_md4", "tea", "legacy_unsigned", "half_md4_unsigned",
		"tea_unsigned", "siphash"}
	key := &[2]uint64{0x0706050403020100, 0x0f0e0d0c0b0a0908}
	seed := &[4]uint32{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476}
	for _, alg := range order {
		for _, n := range []int{8, 32, 255} {
			name := bytes.Repeat([]byte("f\xe4"), n)[:n]
			b.Run(fmt.Sprintf("%s/len=%d", alg, n), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(n))
				hinfo := DxHashInfo{HashVersion: names[alg], Seed: seed}
				for b.Loop() {
					if err := Ext4fsDirhash(name, &hinfo, key); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
