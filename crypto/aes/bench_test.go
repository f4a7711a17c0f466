package aes

import (
	stdaes "crypto/aes"
	"crypto/cipher"
	"fmt"
	"testing"

	"golang.org/x/crypto/xts"
)

// Benchmarks. The XTS figures are per 4 KiB data unit (fscrypt's usual
// contents unit), encrypted in place. Sub-benchmarks:
//
//	vfslab   this package (AES-NI assembly where available)
//	generic  this package's portable code
//	xcrypto  golang.org/x/crypto/xts over crypto/aes
//	ctr      crypto/aes + crypto/cipher NewCTR: the throughput ceiling of
//	         Go's own AES-NI code (a stream set up once, 4 KiB per op)

func benchKey(n int) []byte {
	k := make([]byte, n)
	for i := range k {
		k[i] = byte(i*13 + 1)
	}
	return k
}

func benchXTS(b *testing.B, decrypt bool) {
	for _, klen := range []int{64, 32} {
		name := fmt.Sprintf("AES%d", klen*4)
		key := benchKey(klen)
		buf := make([]byte, 4096)
		b.Run(name+"/vfslab", func(b *testing.B) {
			x := mustXTS(b, key)
			iv := seqIV(7)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if decrypt {
					err = x.Decrypt(buf, buf, iv)
				} else {
					err = x.Encrypt(buf, buf, iv)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/generic", func(b *testing.B) {
			x := mustXTS(b, key)
			iv := seqIV(7)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				if err := x.crypt(buf, buf, iv, decrypt, XTSGeneric); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/xcrypto", func(b *testing.B) {
			c, err := xts.NewCipher(stdaes.NewCipher, key)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				if decrypt {
					c.Decrypt(buf, buf, 7)
				} else {
					c.Encrypt(buf, buf, 7)
				}
			}
		})
		b.Run(name+"/ctr", func(b *testing.B) {
			blk, err := stdaes.NewCipher(key[:klen/2])
			if err != nil {
				b.Fatal(err)
			}
			stream := cipher.NewCTR(blk, make([]byte, 16))
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				stream.XORKeyStream(buf, buf)
			}
		})
	}
}

// BenchmarkXTSEncrypt4K measures XTS encryption of one 4 KiB data unit.
func BenchmarkXTSEncrypt4K(b *testing.B) { benchXTS(b, false) }

// BenchmarkXTSDecrypt4K measures XTS decryption of one 4 KiB data unit.
func BenchmarkXTSDecrypt4K(b *testing.B) { benchXTS(b, true) }

// BenchmarkExpandKey measures aes_expandkey (both schedules) into a
// caller's Ctx, beside crypto/aes.NewCipher for scale.
func BenchmarkExpandKey(b *testing.B) {
	for _, klen := range []int{16, 32} {
		key := benchKey(klen)
		name := fmt.Sprintf("AES%d", klen*8)
		b.Run(name+"/vfslab", func(b *testing.B) {
			var c Ctx
			b.ReportAllocs()
			for b.Loop() {
				if err := ExpandKey(&c, key); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/generic", func(b *testing.B) {
			var c Ctx
			b.ReportAllocs()
			for b.Loop() {
				expandKey(&c, key, false)
			}
		})
		b.Run(name+"/stdlib-NewCipher", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := stdaes.NewCipher(key); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncryptBlock measures aes_encrypt of one block.
func BenchmarkEncryptBlock(b *testing.B) {
	for _, klen := range []int{16, 32} {
		key := benchKey(klen)
		name := fmt.Sprintf("AES%d", klen*8)
		blk := make([]byte, 16)
		b.Run(name+"/vfslab", func(b *testing.B) {
			var c Ctx
			_ = ExpandKey(&c, key)
			b.SetBytes(16)
			b.ReportAllocs()
			for b.Loop() {
				c.Encrypt(blk, blk)
			}
		})
		b.Run(name+"/generic", func(b *testing.B) {
			var c Ctx
			_ = ExpandKey(&c, key)
			b.SetBytes(16)
			b.ReportAllocs()
			for b.Loop() {
				encryptBlockGeneric(&c, blk, blk)
			}
		})
		b.Run(name+"/stdlib", func(b *testing.B) {
			c, _ := stdaes.NewCipher(key)
			b.SetBytes(16)
			b.ReportAllocs()
			for b.Loop() {
				c.Encrypt(blk, blk)
			}
		})
	}
}

// BenchmarkV1KeyDerivation measures fscrypt's v1 derive_key_aes for an
// AES-256-XTS master key: ExpandKey with the 16-byte nonce, four single-block
// encryptions of the 64-byte master key, Wipe.
func BenchmarkV1KeyDerivation(b *testing.B) {
	nonce := benchKey(16)
	master := benchKey(64)
	derived := make([]byte, 64)
	b.ReportAllocs()
	for b.Loop() {
		var c Ctx
		if err := ExpandKey(&c, nonce); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < len(master); i += 16 {
			c.Encrypt(derived[i:], master[i:])
		}
		c.Wipe()
	}
}

// BenchmarkCTSFilename measures cts(cbc(aes)) over filename-sized inputs
// (fscrypt pads names to 16..255 bytes) with an AES-256 key
// (FSCRYPT_MODE_AES_256_CTS).
func BenchmarkCTSFilename(b *testing.B) {
	c := mustCTS(b, benchKey(32))
	for _, n := range []int{16, 17, 32, 33, 64, 100, 255} {
		name := make([]byte, n)
		for _, decrypt := range []bool{false, true} {
			op := "Encrypt"
			if decrypt {
				op = "Decrypt"
			}
			b.Run(fmt.Sprintf("%s/%d", op, n), func(b *testing.B) {
				var iv [16]byte
				b.SetBytes(int64(n))
				b.ReportAllocs()
				for b.Loop() {
					var err error
					if decrypt {
						err = c.Decrypt(name, name, &iv)
					} else {
						err = c.Encrypt(name, name, &iv)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkCBC4K measures CBC over 4 KiB (serial encryption, eight-way
// decryption) and ECB over the same size.
func BenchmarkCBC4K(b *testing.B) {
	key := benchKey(32)
	buf := make([]byte, 4096)
	var c CBC
	var e ECB
	_ = c.SetKey(key)
	_ = e.SetKey(key)
	var iv [16]byte
	b.Run("CBCEncrypt", func(b *testing.B) {
		b.SetBytes(4096)
		b.ReportAllocs()
		for b.Loop() {
			_ = c.Encrypt(buf, buf, &iv)
		}
	})
	b.Run("CBCDecrypt", func(b *testing.B) {
		b.SetBytes(4096)
		b.ReportAllocs()
		for b.Loop() {
			_ = c.Decrypt(buf, buf, &iv)
		}
	})
	b.Run("ECBEncrypt", func(b *testing.B) {
		b.SetBytes(4096)
		b.ReportAllocs()
		for b.Loop() {
			_ = e.Encrypt(buf, buf)
		}
	})
	b.Run("ECBDecrypt", func(b *testing.B) {
		b.SetBytes(4096)
		b.ReportAllocs()
		for b.Loop() {
			_ = e.Decrypt(buf, buf)
		}
	})
}
