package hctr2

import (
	"fmt"
	"testing"
)

// benchSizes are file-name sizes (fscrypt pads names to 16/32 bytes and caps
// them at 255) and a 4 KiB block.
var benchSizes = []int{16, 32, 64, 255, 4096}

func BenchmarkEncrypt(b *testing.B) {
	c, _ := New(make([]byte, 32)) // AES-256, as FSCRYPT_MODE_AES_256_HCTR2
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
	c, _ := New(make([]byte, 32))
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

func BenchmarkPolyval(b *testing.B) {
	p, _ := NewPolyval(make([]byte, 16))
	for _, n := range []int{16, 4096} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			msg := make([]byte, n)
			var out [16]byte
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				p.Reset()
				p.Write(msg)
				p.Sum(out[:0])
			}
		})
	}
}

func BenchmarkXCTR(b *testing.B) {
	x, _ := NewXCTR(make([]byte, 32))
	iv := make([]byte, XCTRIVSize)
	for _, n := range []int{16, 4096} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			buf := make([]byte, n)
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				if err := x.Encrypt(buf, buf, iv); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSetKey(b *testing.B) {
	var c Cipher
	key := make([]byte, 32)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.SetKey(key); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFilenamePrimitives splits an HCTR2 filename encryption (16 and
// 32 bytes: the 16-byte block and a bulk part of 0 or 16 bytes) into its
// primitives, to set beside BenchmarkEncrypt and the Crypto API path
// (crypto's BenchmarkFnameWide): the POLYVAL of the tweak (once per
// request), POLYVAL of the bulk (twice), one AES block and XCTR of the bulk.
func BenchmarkFilenamePrimitives(b *testing.B) {
	c, _ := New(make([]byte, 32))
	tweak := make([]byte, TweakSize)
	for _, n := range []int{16, 32} {
		bulk := make([]byte, n-BlockSize)
		b.Run(fmt.Sprintf("%d/polyval-tweak", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.hashTweak(tweak, false)
			}
		})
		b.Run(fmt.Sprintf("%d/polyval-bulk", n), func(b *testing.B) {
			a := c.hashTweak(tweak, false)
			b.ReportAllocs()
			for b.Loop() {
				c.hashMessage(a, bulk)
			}
		})
		b.Run(fmt.Sprintf("%d/aes-block", n), func(b *testing.B) {
			var blk [BlockSize]byte
			b.ReportAllocs()
			for b.Loop() {
				c.blockcipher.Encrypt(blk[:], blk[:])
			}
		})
		b.Run(fmt.Sprintf("%d/xctr", n), func(b *testing.B) {
			var s [BlockSize]byte
			b.ReportAllocs()
			for b.Loop() {
				if err := c.xctr.xor(bulk, bulk, &s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
