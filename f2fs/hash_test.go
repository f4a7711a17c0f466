package f2fs

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"testing"

	"pgregory.net/rapid"

	"github.com/vfslab/vfslab/fsunicode"
	"github.com/vfslab/vfslab/internal/fstestutil"
)

// The known-answer files are read with the shared helpers.
var (
	readVectors = fstestutil.ReadVectors
	mustHex     = fstestutil.MustHex
)

// keyWords turns 16 dirhash key bytes into the two le64 words fscrypt keeps.
func keyWords(t testing.TB, s string) [2]uint64 {
	b := mustHex(t, s)
	if len(b) != 16 {
		t.Fatalf("key %q is not 16 bytes", s)
	}
	return [2]uint64{binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])}
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// TestDentryHashKnownAnswers checks every vector of testdata/hash-vectors.txt. Plain vectors
// go straight to F2fsDentryHash; casefolded ones go through SetupFilename in a casefolded
// directory whose encoding is package fsunicode's Unicode 12.1 map, so the kernel's folding
// step (f2fs_init_casefolded_name: fold into an F2FS_NAME_LEN buffer, raw bytes when folding
// fails or gives nothing) is checked together with the hash.
func TestDentryHashKnownAnswers(t *testing.T) {
	rows := readVectors(t, "testdata/hash-vectors.txt")
	um, err := fsunicode.Load("12.1.0")
	if err != nil {
		t.Fatal(err)
	}
	tk, dir := newTestDir(t, dirOpts{casefold: true, noInline: true})
	dir.SB.Encoding = um
	lengths := map[int]bool{}
	highBytes, casefolded, casefoldHigh, foldRaw, foldChanged := 0, 0, 0, 0, 0
	for i, f := range rows {
		if len(f) != 3 {
			t.Fatalf("bad vector line %q", f)
		}
		name := mustHex(t, f[1])
		want, err := strconv.ParseUint(f[2], 16, 32)
		if err != nil {
			t.Fatal(err)
		}
		var got uint32
		switch f[0] {
		case "0":
			got = F2fsDentryHash(name)
		case "1":
			var fn Filename
			if err := SetupFilename(tk, dir, name, false, &fn); err != nil {
				t.Fatalf("vector %d: SetupFilename(%x): %v", i, name, err)
			}
			got = fn.Hash
			if fn.CfName == nil {
				foldRaw++
			} else if !bytes.Equal(fn.CfName, name) {
				foldChanged++
			}
			FreeFilename(tk, dir, &fn)
			casefolded++
			if !isASCII(name) {
				casefoldHigh++
			}
		default:
			t.Fatalf("bad cf field in %q", f)
		}
		if got != uint32(want) {
			t.Errorf("vector %d (cf %s name %x): got %08x, want %08x", i, f[0], name, got, want)
		}
		lengths[len(name)] = true
		if !isASCII(name) {
			highBytes++
		}
	}
	for n := 1; n <= 255; n++ {
		if !lengths[n] {
			t.Errorf("no vector of length %d", n)
		}
	}
	if highBytes < 100 || casefolded < 100 || casefoldHigh < 50 || foldRaw == 0 || foldChanged < 50 {
		t.Errorf("thin coverage: %d with bytes >= 0x80, %d casefolded (%d with bytes >= 0x80, %d hashed raw, %d changed by folding)",
			highBytes, casefolded, casefoldHigh, foldRaw, foldChanged)
	}
	t.Logf("%d vectors: %d casefolded (%d with bytes >= 0x80, %d hashed raw, %d changed by folding)",
		len(rows), casefolded, casefoldHigh, foldRaw, foldChanged)
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
		if got := fscryptFnameSiphash(&key, msg[:n]); got != want {
			t.Errorf("len %d: got %016x, want %016x", n, got, want)
		}
	}
}

func TestDentryHashSiphashKnownAnswers(t *testing.T) {
	rows := readVectors(t, "testdata/hash-vectors-siphash.txt")
	for _, f := range rows {
		key, name := keyWords(t, f[0]), mustHex(t, f[1])
		sip, err := strconv.ParseUint(f[2], 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := F2fsDentryHashSiphash(name, key), uint32(sip); got != want {
			t.Errorf("key %s name %x: got %08x, want %08x", f[0], name, got, want)
		}
	}
	t.Logf("%d siphash vectors", len(rows))
}

// TestDotDotdot: f2fs_hash_filename gives "." and ".." hash 0 in every kind of directory, and
// only those two names are special.
func TestDotDotdot(t *testing.T) {
	key := [2]uint64{0x0706050403020100, 0x0f0e0d0c0b0a0908}
	for _, n := range []string{".", ".."} {
		if h := F2fsDentryHash([]byte(n)); h != DotHash {
			t.Errorf("F2fsDentryHash(%q) = %08x", n, h)
		}
		if h := F2fsDentryHashSiphash([]byte(n), key); h != DotHash {
			t.Errorf("F2fsDentryHashSiphash(%q) = %08x", n, h)
		}
	}
	for _, n := range []string{"", "...", ".a", "a.", ". ", ".\x00", "\x00."} {
		if F2fsDentryHash([]byte(n)) != teaHashName([]byte(n)) {
			t.Errorf("%q treated as a dot entry", n)
		}
		if F2fsDentryHashSiphash([]byte(n), key) != uint32(fscryptFnameSiphash(&key, []byte(n))) {
			t.Errorf("%q treated as a dot entry by the siphash variant", n)
		}
	}
}

func TestPropertyDentryHash(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		name := rapid.SliceOfN(rapid.Byte(), 0, 600).Draw(t, "name")
		key := [2]uint64(rapid.SliceOfN(rapid.Uint64(), 2, 2).Draw(t, "key"))
		h := F2fsDentryHash(name)
		s := F2fsDentryHashSiphash(name, key)
		if isDotDotdot(name) {
			if h != DotHash || s != DotHash {
				t.Fatalf("dot entry %q hashed to %08x/%08x", name, h, s)
			}
			return
		}
		if h != teaHashName(name) {
			t.Fatal("F2fsDentryHash is not TEA_hash_name")
		}
		if s != uint32(fscryptFnameSiphash(&key, name)) {
			t.Fatal("F2fsDentryHashSiphash is not the low half of the siphash")
		}
		// Only the first 16 bytes of each chunk and the remaining length matter: changing a
		// byte must go through the hash input (a cheap check that no byte is skipped).
		if len(name) > 0 {
			i := rapid.IntRange(0, len(name)-1).Draw(t, "i")
			m := bytes.Clone(name)
			m[i] ^= 0x80
			if !isDotDotdot(m) {
				var a, b [4]uint32
				chunk := i / 16 * 16
				str2hashbuf(name[chunk:], &a)
				str2hashbuf(m[chunk:], &b)
				if a == b {
					t.Fatalf("byte %d does not reach the hash input", i)
				}
			}
		}
	})
}

func TestDentryHashAllocs(t *testing.T) {
	name := bytes.Repeat([]byte("n\xe9"), 127)
	key := [2]uint64{1, 2}
	if n := testing.AllocsPerRun(100, func() { _ = F2fsDentryHash(name) }); n != 0 {
		t.Errorf("F2fsDentryHash: %v allocations per call", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = F2fsDentryHashSiphash(name, key) }); n != 0 {
		t.Errorf("F2fsDentryHashSiphash: %v allocations per call", n)
	}
}

var sink uint32

func BenchmarkF2fsDentryHash(b *testing.B) {
	key := [2]uint64{0x0706050403020100, 0x0f0e0d0c0b0a0908}
	for _, n := range []int{8, 32, 255} {
		name := bytes.Repeat([]byte("f\xe4"), n)[:n]
		b.Run(fmt.Sprintf("tea/len=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(n))
			for b.Loop() {
				sink = F2fsDentryHash(name)
			}
		})
		b.Run(fmt.Sprintf("siphash/len=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(n))
			for b.Loop() {
				sink = F2fsDentryHashSiphash(name, key)
			}
		})
	}
}
