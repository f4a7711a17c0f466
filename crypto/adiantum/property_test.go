package adiantum

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"syscall"
	"testing"

	lukechampine "lukechampine.com/adiantum"
	"pgregory.net/rapid"
)

// maxPropertyLen bounds random message lengths: several NH chunks and a full
// page plus change.
const maxPropertyLen = 3*nhMessageBytes + 1000

func genKey(t *rapid.T) []byte { return rapid.SliceOfN(rapid.Byte(), KeySize, KeySize).Draw(t, "key") }
func genTweak(t *rapid.T) []byte {
	return rapid.SliceOfN(rapid.Byte(), TweakSize, TweakSize).Draw(t, "tweak")
}

// genMsg draws a message length and fills the message from a seeded PRNG, so
// that long messages are as cheap to draw as short ones.
func genMsg(t *rapid.T) []byte {
	n := rapid.IntRange(MinMessageSize, maxPropertyLen).Draw(t, "len")
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], rapid.Uint64().Draw(t, "seed"))
	msg := make([]byte, n)
	_, _ = rand.NewChaCha8(seed).Read(msg)
	return msg
}

// fataler is the part of testing.TB and *rapid.T that mustNew needs.
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
// bytes to past four NH chunks, in place and out of place.
func TestRoundTripEveryLength(t *testing.T) {
	key := bytes.Repeat([]byte{0x5a}, KeySize)
	tweak := bytes.Repeat([]byte{0xa5}, TweakSize)
	c := mustNew(t, key)
	maxLen := 4*nhMessageBytes + 100
	if testing.Short() {
		maxLen = nhMessageBytes + 100
	}
	src := make([]byte, maxLen)
	for i := range src {
		src[i] = byte(i*7 + i>>8)
	}
	ct := make([]byte, maxLen)
	pt := make([]byte, maxLen)
	for n := MinMessageSize; n <= maxLen; n++ {
		if err := c.Encrypt(ct, src[:n], tweak); err != nil {
			t.Fatalf("len %d: Encrypt: %v", n, err)
		}
		if bytes.Equal(ct[:n], src[:n]) {
			t.Fatalf("len %d: ciphertext equals plaintext", n)
		}
		if err := c.Decrypt(pt, ct[:n], tweak); err != nil {
			t.Fatalf("len %d: Decrypt: %v", n, err)
		}
		if !bytes.Equal(pt[:n], src[:n]) {
			t.Fatalf("len %d: round trip mismatch", n)
		}
		copy(pt, src[:n])
		if err := c.Encrypt(pt[:n], pt[:n], tweak); err != nil || !bytes.Equal(pt[:n], ct[:n]) {
			t.Fatalf("len %d: in-place encryption differs (err %v)", n, err)
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
		// Decryption is also a permutation: decrypt-then-encrypt is the identity.
		if err := c.Decrypt(pt, msg, tweak); err != nil {
			t.Fatal(err)
		}
		if err := c.Encrypt(pt, pt, tweak); err != nil || !bytes.Equal(pt, msg) {
			t.Fatalf("encrypt(decrypt(x)) != x (err %v)", err)
		}
	})
}

// TestInPlaceProperty checks that dst == src gives the same result as
// separate buffers, and that a longer dst is written only up to len(src).
func TestInPlaceProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := mustNew(t, genKey(t))
		tweak, msg := genTweak(t), genMsg(t)
		extra := rapid.IntRange(0, 40).Draw(t, "extra")
		out := make([]byte, len(msg)+extra)
		for i := range out {
			out[i] = 0xee
		}
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

// TestTweakSensitivity: a tweak differing in one byte changes the ciphertext,
// both its last 16 bytes and the bulk before them.
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
		if bytes.Equal(c1, c2) {
			t.Fatalf("tweaks %x and %x give the same ciphertext", t1, t2)
		}
		// A wide-block cipher: the last 16 bytes always change, and so does
		// the bulk, since its keystream depends on C_M.
		n := len(msg)
		if bytes.Equal(c1[n-BlockSize:], c2[n-BlockSize:]) {
			t.Fatalf("right-hand block unchanged by the tweak")
		}
		if n > BlockSize+8 && bytes.Equal(c1[:n-BlockSize], c2[:n-BlockSize]) {
			t.Fatalf("bulk unchanged by the tweak")
		}
	})
}

// TestMatchesLukechampine compares against lukechampine.com/adiantum, an
// independent implementation that passes the reference vectors, for random
// keys, tweaks and lengths (which the fixed vectors cannot cover).
func TestMatchesLukechampine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		key, tweak, msg := genKey(t), genTweak(t), genMsg(t)
		c := mustNew(t, key)
		got := make([]byte, len(msg))
		if err := c.Encrypt(got, msg, tweak); err != nil {
			t.Fatal(err)
		}
		want := lukechampine.New(key).Encrypt(bytes.Clone(msg), tweak)
		if !bytes.Equal(got, want) {
			t.Fatalf("len %d: ciphertext differs from lukechampine.com/adiantum", len(msg))
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
	for _, n := range []int{0, 1, 16, 31, 33, 64} {
		if _, err := New(make([]byte, n)); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("New with %d-byte key: got %v, want EINVAL", n, err)
		}
	}

	c := mustNew(t, make([]byte, KeySize))
	// A failed SetKey leaves the cipher unkeyed, as CRYPTO_TFM_NEED_KEY does.
	if err := c.SetKey(make([]byte, 16)); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("SetKey(16 bytes): got %v, want EINVAL", err)
	}
	if err := c.Encrypt(buf, buf, tweak); !errors.Is(err, syscall.ENOKEY) {
		t.Errorf("Encrypt after failed SetKey: got %v, want ENOKEY", err)
	}
	if err := c.SetKey(make([]byte, KeySize)); err != nil {
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
	for _, n := range []int{0, 16, 24, 31, 33} {
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
	// Failed calls leave dst untouched.
	orig := bytes.Repeat([]byte{7}, 40)
	dst := bytes.Clone(orig)
	_ = c.Encrypt(dst, orig[:15], tweak)
	if !bytes.Equal(dst, orig) {
		t.Errorf("a rejected request modified dst")
	}
}

func TestNoAllocations(t *testing.T) {
	c := mustNew(t, make([]byte, KeySize))
	tweak := make([]byte, TweakSize)
	for _, n := range []int{16, 17, 255, 4096, 5000} {
		buf := make([]byte, n)
		if a := testing.AllocsPerRun(20, func() { _ = c.Encrypt(buf, buf, tweak) }); a != 0 {
			t.Errorf("Encrypt of %d bytes: %v allocations", n, a)
		}
		if a := testing.AllocsPerRun(20, func() { _ = c.Decrypt(buf, buf, tweak) }); a != 0 {
			t.Errorf("Decrypt of %d bytes: %v allocations", n, a)
		}
	}
}

// TestConcurrentUse runs one keyed Cipher from several goroutines; with -race
// it checks that Encrypt and Decrypt share no mutable state.
func TestConcurrentUse(t *testing.T) {
	c := mustNew(t, bytes.Repeat([]byte{1}, KeySize))
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
