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
