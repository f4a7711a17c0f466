package hctr2

import (
	"bytes"
	"crypto/aes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"syscall"
	"testing"

	"pgregory.net/rapid"
)

const maxPropertyLen = 4096 + 600

var keySizes = []int{16, 24, 32}

func genKey(t *rapid.T) []byte {
	n := rapid.SampledFrom(keySizes).Draw(t, "keySize")
	return rapid.SliceOfN(rapid.Byte(), n, n).Draw(t, "key")
}

func genTweak(t *rapid.T) []byte {
	return rapid.SliceOfN(rapid.Byte(), TweakSize, TweakSize).Draw(t, "tweak")
}

// genBytes draws a length in [lo, hi] and fills that many bytes from a seeded
// PRNG, so that long inputs are as cheap to draw as short ones.
func genBytes(t *rapid.T, label string, lo, hi int) []byte {
	n := rapid.IntRange(lo, hi).Draw(t, label+"Len")
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], rapid.Uint64().Draw(t, label+"Seed"))
	b := make([]byte, n)
	_, _ = rand.NewChaCha8(seed).Read(b)
	return b
}

func genMsg(t *rapid.T) []byte { return genBytes(t, "msg", MinMessageSize, maxPropertyLen) }

type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

func mustNew(t fataler, key []byte) *Cipher {
	t.Helper()
	c, err := New(key)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// TestRoundTripEveryLength encrypts and decrypts every message length from 16
// bytes to past a 4 KiB block, for each AES key size.
func TestRoundTripEveryLength(t *testing.T) {
	maxLen := 4096 + 100
	if testing.Short() {
		maxLen = 600
	}
	src := make([]byte, maxLen)
	for i := range src {
		src[i] = byte(i*13 + i>>8)
	}
	ct := make([]byte, maxLen)
	pt := make([]byte, maxLen)
	tweak := bytes.Repeat([]byte{0x3c}, TweakSize)
	for ki, ks := range keySizes {
		c := mustNew(t, bytes.Repeat([]byte{byte(0x11 * (ki + 1))}, ks))
		for n := MinMessageSize; n <= maxLen; n++ {
			if err := c.Encrypt(ct, src[:n], tweak); err != nil {
				t.Fatalf("AES-%d len %d: Encrypt: %v", 8*ks, n, err)
			}
			if bytes.Equal(ct[:n], src[:n]) {
				t.Fatalf("AES-%d len %d: ciphertext equals plaintext", 8*ks, n)
			}
			if err := c.Decrypt(pt, ct[:n], tweak); err != nil {
				t.Fatalf("AES-%d len %d: Decrypt: %v", 8*ks, n, err)
			}
			if !bytes.Equal(pt[:n], src[:n]) {
				t.Fatalf("AES-%d len %d: round trip mismatch", 8*ks, n)
			}
		}
	}
}

func TestRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := mustNew(t, genKey(t))
		tweak, msg := genTweak(t), genMsg(t)
		ct := make([]byte, len(msg))
		if err := c.Encrypt(ct, msg, tweak); err != nil {
			t.Fatal(err)
		}
		pt := make([]byte, len(msg))
		if err := c.Decrypt(pt, ct, tweak); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(pt, msg) {
			t.Fatalf("round trip mismatch")
		}
		if err := c.Decrypt(pt, msg, tweak); err != nil {
			t.Fatal(err)
		}
		if err := c.Encrypt(pt, pt, tweak); err != nil || !bytes.Equal(pt, msg) {
			t.Fatalf("encrypt(decrypt(x)) != x (err %v)", err)
		}
	})
}

func TestInPlaceProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := mustNew(t, genKey(t))
		tweak, msg := genTweak(t), genMsg(t)
		extra := rapid.IntRange(0, 40).Draw(t, "extra")
		out := bytes.Repeat([]byte{0xee}, len(msg)+extra)
		if err := c.Encrypt(out, msg, tweak); err != nil {
			t.Fatal(err)
		}
		for _, b := range out[len(msg):] {
			if b != 0xee {
				t.Fatalf("Encrypt wrote past len(src)")
			}
		}
		buf := bytes.Clone(msg)
		if err := c.Encrypt(buf, buf, tweak); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf, out[:len(msg)]) {
			t.Fatalf("in-place encryption differs from out-of-place")
		}
		if err := c.Decrypt(buf, buf, tweak); err != nil || !bytes.Equal(buf, msg) {
			t.Fatalf("in-place decryption failed (err %v)", err)
		}
	})
}

// TestTweakSensitivity: a tweak differing in one byte changes the first block
// and the rest of the ciphertext.
func TestTweakSensitivity(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := mustNew(t, genKey(t))
		t1, msg := genTweak(t), genMsg(t)
		t2 := bytes.Clone(t1)
		i := rapid.IntRange(0, TweakSize-1).Draw(t, "flipByte")
		t2[i] ^= byte(rapid.IntRange(1, 255).Draw(t, "flipMask"))
		c1 := make([]byte, len(msg))
		c2 := make([]byte, len(msg))
		if err := c.Encrypt(c1, msg, t1); err != nil {
			t.Fatal(err)
		}
		if err := c.Encrypt(c2, msg, t2); err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(c1[:BlockSize], c2[:BlockSize]) {
			t.Fatalf("first block unchanged by the tweak")
		}
		if len(msg) > BlockSize+8 && bytes.Equal(c1[BlockSize:], c2[BlockSize:]) {
			t.Fatalf("bulk unchanged by the tweak")
		}
	})
}

// referenceEncrypt is HCTR2 written directly from the specification with the
// exported Polyval and a naive XCTR, allocating freely; it checks the
// in-place, scratch-reusing implementation at every length.
func referenceEncrypt(key, tweak, pt []byte) []byte {
	b, _ := aes.NewCipher(key)
	enc := func(x []byte) []byte { out := make([]byte, 16); b.Encrypt(out, x); return out }
	xor := func(x, y []byte) []byte {
		out := make([]byte, len(x))
		for i := range x {
			out[i] = x[i] ^ y[i]
		}
		return out
	}
	h := enc(make([]byte, 16))
	l := enc(append([]byte{1}, make([]byte, 15)...))
	hash := func(msg []byte) []byte {
		lenBlock := make([]byte, 16)
		v := uint64(len(tweak))*16 + 2
		if len(msg)%16 != 0 {
			v++
		}
		binary.LittleEndian.PutUint64(lenBlock, v)
		in := append(lenBlock, tweak...)
		in = append(in, make([]byte, (16-len(tweak)%16)%16)...)
		in = append(in, msg...)
		if len(msg)%16 != 0 {
			in = append(in, 1)
			in = append(in, make([]byte, (16-len(in)%16)%16)...)
		}
		p, _ := NewPolyval(h)
		p.Write(in)
		return p.Sum(nil)
	}
	xctr := func(s, msg []byte) []byte {
		ks := make([]byte, 0, len(msg)+16)
		for i := uint64(1); len(ks) < len(msg); i++ {
			ctr := make([]byte, 16)
			binary.LittleEndian.PutUint64(ctr, i)
			ks = append(ks, enc(xor(s, ctr))...)
		}
		return xor(msg, ks[:len(msg)])
	}
	m, n := pt[:16], pt[16:]
	mm := xor(m, hash(n))
	uu := enc(mm)
	s := xor(xor(mm, uu), l)
	v := xctr(s, n)
	u := xor(uu, hash(v))
	return append(u, v...)
}

func TestMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		key, tweak, msg := genKey(t), genTweak(t), genMsg(t)
		got := make([]byte, len(msg))
		if err := mustNew(t, key).Encrypt(got, msg, tweak); err != nil {
			t.Fatal(err)
		}
		if want := referenceEncrypt(key, tweak, msg); !bytes.Equal(got, want) {
			t.Fatalf("len %d: differs from the reference", len(msg))
		}
	})
}

// naiveDot multiplies in the POLYVAL field bit by bit: schoolbook product
// modulo P, then 128 divisions by x (adding P whenever the constant term is
// set). It shares no code with dot.
func naiveDot(a, b fieldElement) fieldElement {
	// P without its x^128 term.
	const pLo, pHi = 1, 1<<63 | 1<<62 | 1<<57
	var r fieldElement
	x := a
	for i := 0; i < 128; i++ {
		bit := b.lo >> i & 1
		if i >= 64 {
			bit = b.hi >> (i - 64) & 1
		}
		if bit == 1 {
			r.lo ^= x.lo
			r.hi ^= x.hi
		}
		// x *= x mod P
		carry := x.hi >> 63
		x.hi = x.hi<<1 | x.lo>>63
		x.lo <<= 1
		if carry == 1 {
			x.lo ^= pLo
			x.hi ^= pHi
		}
	}
	for i := 0; i < 128; i++ {
		// r /= x mod P: make r divisible by x, then shift right; the x^128
		// term of P becomes bit 127.
		odd := r.lo & 1
		if odd == 1 {
			r.lo ^= pLo
			r.hi ^= pHi
		}
		r.lo = r.lo>>1 | r.hi<<63
		r.hi >>= 1
		if odd == 1 {
			r.hi |= 1 << 63
		}
	}
	return r
}

func TestDotMatchesNaive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := fieldElement{rapid.Uint64().Draw(t, "alo"), rapid.Uint64().Draw(t, "ahi")}
		b := fieldElement{rapid.Uint64().Draw(t, "blo"), rapid.Uint64().Draw(t, "bhi")}
		var k polyvalKey
		k.setKey(b)
		if got, want := k.dot(a), naiveDot(a, b); got != want {
			t.Fatalf("dot(%x, %x) = %x, want %x", a, b, got, want)
		}
	})
}

// TestPolyvalSplitProperty: Sum does not depend on how the data is split
// across Write calls, and Sum does not disturb the state.
func TestPolyvalSplitProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, "key")
		msg := genBytes(t, "msg", 0, 300)
		p, _ := NewPolyval(key)
		p.Write(msg)
		want := p.Sum(nil)
		q, _ := NewPolyval(key)
		for rest := msg; len(rest) > 0; {
			n := rapid.IntRange(1, len(rest)).Draw(t, "piece")
			q.Write(rest[:n])
			_ = q.Sum(nil)
			rest = rest[n:]
		}
		if got := q.Sum(nil); !bytes.Equal(got, want) {
			t.Fatalf("split writes give %x, want %x", got, want)
		}
	})
}

// TestXCTRProperty: XCTR is an involution and agrees with the naive keystream
// for every length, including lengths below one block.
func TestXCTRProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		key := genKey(t)
		iv := rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, "iv")
		msg := genBytes(t, "msg", 0, 700)
		x, err := NewXCTR(key)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(msg))
		if err := x.Encrypt(got, msg, iv); err != nil {
			t.Fatal(err)
		}
		b, _ := aes.NewCipher(key)
		for i := 0; i < len(msg); i += 16 {
			blk := bytes.Clone(iv)
			binary.LittleEndian.PutUint64(blk, binary.LittleEndian.Uint64(blk)^uint64(i/16+1))
			b.Encrypt(blk, blk)
			for j := i; j < min(i+16, len(msg)); j++ {
				if got[j] != msg[j]^blk[j-i] {
					t.Fatalf("len %d: byte %d differs from the naive keystream", len(msg), j)
				}
			}
		}
		if err := x.Decrypt(got, got, iv); err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("XCTR is not an involution (err %v)", err)
		}
	})
}

func TestErrors(t *testing.T) {
	var unkeyed Cipher
	buf := make([]byte, 64)
	tweak := make([]byte, TweakSize)
	if err := unkeyed.Encrypt(buf, buf, tweak); !errors.Is(err, syscall.ENOKEY) {
		t.Errorf("unkeyed Encrypt: got %v, want ENOKEY", err)
	}
	if err := unkeyed.Decrypt(buf, buf, tweak); !errors.Is(err, syscall.ENOKEY) {
		t.Errorf("unkeyed Decrypt: got %v, want ENOKEY", err)
	}
	for _, n := range []int{0, 1, 8, 15, 17, 20, 31, 33, 64} {
		if _, err := New(make([]byte, n)); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("New with %d-byte key: got %v, want EINVAL", n, err)
		}
		if _, err := NewXCTR(make([]byte, n)); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("NewXCTR with %d-byte key: got %v, want EINVAL", n, err)
		}
	}
	c := mustNew(t, make([]byte, 32))
	if err := c.SetKey(make([]byte, 20)); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("SetKey(20 bytes): got %v, want EINVAL", err)
	}
	if err := c.Encrypt(buf, buf, tweak); !errors.Is(err, syscall.ENOKEY) {
		t.Errorf("Encrypt after failed SetKey: got %v, want ENOKEY", err)
	}
	if err := c.SetKey(make([]byte, 32)); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, 15} {
		if err := c.Encrypt(buf, buf[:n], tweak); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("Encrypt of %d bytes: got %v, want EINVAL", n, err)
		}
		if err := c.Decrypt(buf, buf[:n], tweak); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("Decrypt of %d bytes: got %v, want EINVAL", n, err)
		}
	}
	for _, n := range []int{0, 1, 16, 31, 33, 47} {
		if err := c.Encrypt(buf, buf, make([]byte, n)); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("Encrypt with %d-byte tweak: got %v, want EINVAL", n, err)
		}
		if err := c.Decrypt(buf, buf, make([]byte, n)); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("Decrypt with %d-byte tweak: got %v, want EINVAL", n, err)
		}
	}
	if err := c.Encrypt(buf[:31], buf[:32], tweak); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("short dst: got %v, want EINVAL", err)
	}
	if err := c.Encrypt(buf[1:33], buf[:32], tweak); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("overlapping dst: got %v, want EINVAL", err)
	}

	var ux XCTR
	if err := ux.Encrypt(buf, buf, make([]byte, 16)); !errors.Is(err, syscall.ENOKEY) {
		t.Errorf("unkeyed XCTR: got %v, want ENOKEY", err)
	}
	x, _ := NewXCTR(make([]byte, 16))
	for _, n := range []int{0, 8, 15, 17, 32} {
		if err := x.Encrypt(buf, buf, make([]byte, n)); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("XCTR with %d-byte IV: got %v, want EINVAL", n, err)
		}
	}
	if err := x.Encrypt(nil, nil, make([]byte, 16)); err != nil {
		t.Errorf("XCTR of an empty message: %v", err)
	}
	if _, err := NewPolyval(make([]byte, 15)); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("NewPolyval with 15-byte key: got %v, want EINVAL", err)
	}
}

func TestNoAllocations(t *testing.T) {
	tweak := make([]byte, TweakSize)
	for _, ks := range keySizes {
		c := mustNew(t, make([]byte, ks))
		for _, n := range []int{16, 17, 31, 255, 4096, 4097} {
			buf := make([]byte, n)
			if a := testing.AllocsPerRun(20, func() { _ = c.Encrypt(buf, buf, tweak) }); a != 0 {
				t.Errorf("AES-%d: Encrypt of %d bytes: %v allocations", 8*ks, n, a)
			}
			if a := testing.AllocsPerRun(20, func() { _ = c.Decrypt(buf, buf, tweak) }); a != 0 {
				t.Errorf("AES-%d: Decrypt of %d bytes: %v allocations", 8*ks, n, a)
			}
		}
	}
	x, _ := NewXCTR(make([]byte, 32))
	iv := make([]byte, 16)
	for _, n := range []int{1, 16, 31, 4096} {
		buf := make([]byte, n)
		if a := testing.AllocsPerRun(20, func() { _ = x.Encrypt(buf, buf, iv) }); a != 0 {
			t.Errorf("XCTR of %d bytes: %v allocations", n, a)
		}
	}
	p, _ := NewPolyval(make([]byte, 16))
	var out [16]byte
	msg := make([]byte, 100)
	if a := testing.AllocsPerRun(20, func() { p.Reset(); p.Write(msg); p.Sum(out[:0]) }); a != 0 {
		t.Errorf("Polyval: %v allocations", a)
	}
}

func TestConcurrentUse(t *testing.T) {
	c := mustNew(t, bytes.Repeat([]byte{1}, 32))
	tweak := make([]byte, TweakSize)
	want := make([]byte, 300)
	if err := c.Encrypt(want, make([]byte, 300), tweak); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	for g := 0; g < 4; g++ {
		go func() {
			buf := make([]byte, 300)
			for i := 0; i < 50; i++ {
				clear(buf)
				if err := c.Encrypt(buf, buf, tweak); err != nil {
					done <- err
					return
				}
				if !bytes.Equal(buf, want) {
					done <- errors.New("concurrent encryption gave a different result")
					return
				}
			}
			done <- nil
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
