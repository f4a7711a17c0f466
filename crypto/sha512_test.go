package crypto

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// FIPS 180-4 examples (csrc.nist.gov SHA512.pdf): "abc", the empty string
// and the two-block message.
func TestSHA512KnownAnswers(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"abc", "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"},
		{"", "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"},
		{"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
			"8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"},
	} {
		got := SHA512Sum([]byte(c.in))
		if hex.EncodeToString(got[:]) != c.want {
			t.Errorf("SHA512(%q) = %x, want %s", c.in, got, c.want)
		}
	}
}

// TestSHA512MatchesStdlib feeds random messages in random pieces, across
// every padding boundary, and compares with crypto/sha512.
func TestSHA512MatchesStdlib(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		msg := rapid.SliceOfN(rapid.Byte(), 0, 400).Draw(t, "msg")
		var ctx SHA512Ctx
		SHA512Init(&ctx)
		rest := msg
		for len(rest) > 0 {
			n := rapid.IntRange(0, len(rest)).Draw(t, "piece")
			SHA512Update(&ctx, rest[:n])
			rest = rest[n:]
		}
		var got [SHA512DigestSize]byte
		SHA512Final(&ctx, &got)
		if want := sha512.Sum512(msg); got != want {
			t.Fatalf("len %d: %x, want %x", len(msg), got, want)
		}
		if ctx != (SHA512Ctx{}) {
			t.Fatal("SHA512Final left state in the context")
		}
		key := rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(t, "key")
		m := hmac.New(sha512.New, key)
		m.Write(msg)
		if mac := HMACSHA512(key, msg); !bytes.Equal(mac[:], m.Sum(nil)) {
			t.Fatalf("HMAC key %d msg %d differs from crypto/hmac", len(key), len(msg))
		}
	})
}

// TestHMACSHA512WipeZeroes checks that every byte of a prepared key and
// of a finished context is zero after Wipe and Final.
func TestHMACSHA512WipeZeroes(t *testing.T) {
	var k HMACSHA512Key
	HMACSHA512PrepareKey(&k, []byte(strings.Repeat("k", 64)))
	if k == (HMACSHA512Key{}) {
		t.Fatal("prepared key is all zero")
	}
	var ctx HMACSHA512Ctx
	HMACSHA512Init(&ctx, &k)
	HMACSHA512Update(&ctx, []byte("data"))
	var out [SHA512DigestSize]byte
	HMACSHA512Final(&ctx, &out)
	if ctx != (HMACSHA512Ctx{}) {
		t.Fatal("HMACSHA512Final left keyed state in the context")
	}
	k.Wipe()
	if k != (HMACSHA512Key{}) {
		t.Fatal("Wipe left bytes of the key")
	}
}

func TestHKDFExpandPreparedAllocatesNothing(t *testing.T) {
	var k HMACSHA512Key
	HMACSHA512PrepareKey(&k, make([]byte, 64))
	info := []byte("fscrypt\x00\x02nonce-nonce-nonc")
	okm := make([]byte, 64)
	if n := testing.AllocsPerRun(100, func() { HKDFExpandPrepared(&k, info, okm) }); n != 0 {
		t.Fatalf("%v allocations per expansion", n)
	}
}

// BenchmarkHKDFExpand compares one fscrypt per-file key expansion (64
// bytes, one HMAC) with the project's HMAC and with crypto/hmac.
func BenchmarkHKDFExpand(b *testing.B) {
	prk := make([]byte, 64)
	info := []byte("fscrypt\x00\x02nonce-nonce-nonc")
	okm := make([]byte, 64)
	b.Run("own", func(b *testing.B) {
		var k HMACSHA512Key
		HMACSHA512PrepareKey(&k, prk)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			HKDFExpandPrepared(&k, info, okm)
		}
	})
	b.Run("crypto-hmac", func(b *testing.B) {
		m := hmac.New(sha512.New, prk)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			m.Reset()
			m.Write(info)
			m.Write([]byte{1})
			m.Sum(okm[:0])
		}
	})
	b.Run("sha512-block", func(b *testing.B) {
		var s sha512BlockState
		blk := make([]byte, SHA512BlockSize)
		b.SetBytes(SHA512BlockSize)
		for i := 0; i < b.N; i++ {
			sha512Blocks(&s, blk)
		}
	})
}

func BenchmarkSHA512Block(b *testing.B) {
	blk := make([]byte, 8*SHA512BlockSize)
	b.Run("own", func(b *testing.B) {
		var s sha512BlockState
		b.SetBytes(int64(len(blk)))
		for i := 0; i < b.N; i++ {
			sha512Blocks(&s, blk)
		}
	})
	b.Run("stdlib", func(b *testing.B) {
		h := sha512.New()
		b.SetBytes(int64(len(blk)))
		for i := 0; i < b.N; i++ {
			h.Write(blk)
		}
	})
}
