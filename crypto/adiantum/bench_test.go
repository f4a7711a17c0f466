package adiantum

import (
	"fmt"
	"testing"

	lukechampine "lukechampine.com/adiantum"
)

// benchSizes are file-name sizes (fscrypt pads names to 16/32 bytes and caps
// them at 255) and a 4 KiB contents block.
var benchSizes = []int{16, 32, 64, 255, 4096}

func BenchmarkEncrypt(b *testing.B) {
	c, _ := New(make([]byte, KeySize))
	tweak := make([]byte, TweakSize)
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			buf := make([]byte, n)
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Encrypt(buf, buf, tweak); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecrypt(b *testing.B) {
	c, _ := New(make([]byte, KeySize))
	tweak := make([]byte, TweakSize)
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			buf := make([]byte, n)
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Decrypt(buf, buf, tweak); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLukechampineEncrypt measures lukechampine.com/adiantum on the same
// inputs, for comparison.
func BenchmarkLukechampineEncrypt(b *testing.B) {
	c := lukechampine.New(make([]byte, KeySize))
	tweak := make([]byte, TweakSize)
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			buf := make([]byte, n)
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				c.Encrypt(buf, tweak)
			}
		})
	}
}

func BenchmarkSetKey(b *testing.B) {
	var c Cipher
	key := make([]byte, KeySize)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.SetKey(key); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFilenamePrimitives splits an Adiantum filename encryption (16
// and 32 bytes: a bulk part of 0 or 16 bytes and the 16-byte block) into
// its primitives, to set beside BenchmarkEncrypt/16 and /32 and the Crypto
// API path (crypto's BenchmarkFnameWide): the Poly1305 header hash (once
// per request), NHPoly1305 of the bulk (twice), one AES-256 block and
// XChaCha12 of the bulk (HChaCha12 plus one ChaCha12 block).
func BenchmarkFilenamePrimitives(b *testing.B) {
	c, _ := New(make([]byte, KeySize))
	tweak := make([]byte, TweakSize)
	for _, n := range []int{16, 32} {
		bulk := make([]byte, n-BlockSize)
		b.Run(fmt.Sprintf("%d/header-poly1305", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.headerHash(len(bulk), tweak)
			}
		})
		b.Run(fmt.Sprintf("%d/nhpoly1305", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				nhpoly1305(&c.hashKey, bulk)
			}
		})
		b.Run(fmt.Sprintf("%d/aes-block", n), func(b *testing.B) {
			var blk [BlockSize]byte
			b.ReportAllocs()
			for b.Loop() {
				c.blockcipher.Encrypt(blk[:], blk[:])
			}
		})
		b.Run(fmt.Sprintf("%d/xchacha12", n), func(b *testing.B) {
			var cm [BlockSize]byte
			b.ReportAllocs()
			for b.Loop() {
				c.streamXOR(bulk, bulk, &cm)
			}
		})
	}
}
