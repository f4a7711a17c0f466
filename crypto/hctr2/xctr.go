package hctr2

import (
	"crypto/subtle"
	"encoding/binary"
	"syscall"

	"github.com/vfslab/vfslab/crypto/aes"
)

// XCTR (Linux crypto/xctr.c, the "xctr(aes)" skcipher): the stream cipher of
// HCTR2. Keystream block i, for i = 1, 2, ..., is E_K(IV XOR le(i)); unlike
// CTR mode the counter is XORed into the IV, little-endian. The kernel XORs a
// 32-bit counter into the first four IV bytes, which equals the HCTR2 paper's
// 128-bit counter for every length a request can have. A trailing partial
// block uses a truncated keystream block.
//
// Like the x86 xctr(aes) drivers that arch/x86/crypto/aesni-intel_glue.c
// registers, the keystream is produced several blocks at a time: counter
// blocks are built in a small on-stack buffer and encrypted with one
// multi-block ECB request of package crypto/aes, whose AES-NI path
// interleaves eight blocks.

// XCTRIVSize is the XCTR IV length (the AES block size).
const XCTRIVSize = aes.BlockSize

// xctrChunkBlocks is the number of keystream blocks produced per ECB
// request: the eight blocks the AES-NI loop interleaves. A larger buffer
// gains nothing measurable on 4 KiB and costs stack zeroing on the short
// requests of file names.
const xctrChunkBlocks = 8

// XCTR is a keyed xctr(aes) instance. The zero value is unkeyed. After SetKey
// it may be used by concurrent goroutines.
type XCTR struct {
	keyed bool
	ecb   aes.ECB // the expanded AES key, used for multi-block encryption
}

// NewXCTR returns an XCTR keyed with an AES-128, AES-192 or AES-256 key.
func NewXCTR(key []byte) (*XCTR, error) {
	x := new(XCTR)
	if err := x.SetKey(key); err != nil {
		return nil, err
	}
	return x, nil
}

// SetKey keys the cipher. A key that is not 16, 24 or 32 bytes yields
// syscall.EINVAL (aes_expandkey) and leaves the cipher unkeyed, with any
// previous key schedule wiped.
func (x *XCTR) SetKey(key []byte) error {
	x.keyed = false
	if err := x.ecb.SetKey(key); err != nil {
		x.wipe()
		return syscall.EINVAL
	}
	x.keyed = true
	return nil
}

// wipe zeroes the key schedule; the XCTR is then unkeyed.
func (x *XCTR) wipe() {
	x.ecb.Wipe()
	x.keyed = false
}

// Encrypt sets dst to src XOR the XCTR keystream for iv (crypto_xctr_crypt).
// Any length, including 0, is accepted up to MaxMessageSize. dst must be at
// least len(src) bytes; dst and src may be the same slice but must not
// otherwise overlap. Errors: syscall.ENOKEY when unkeyed, syscall.EINVAL for
// an IV that is not 16 bytes, a message that is too long, a short dst or
// partially overlapping buffers. It does not allocate, and dst, src and iv
// do not escape.
func (x *XCTR) Encrypt(dst, src, iv []byte) error {
	if !x.keyed {
		return syscall.ENOKEY
	}
	if len(iv) != XCTRIVSize || uint64(len(src)) > MaxMessageSize {
		return syscall.EINVAL
	}
	if len(dst) < len(src) || aes.InexactOverlap(dst[:len(src)], src) {
		return syscall.EINVAL
	}
	var ivb [aes.BlockSize]byte
	copy(ivb[:], iv)
	return x.xor(dst[:len(src)], src, &ivb)
}

// Decrypt is the same operation as Encrypt.
func (x *XCTR) Decrypt(dst, src, iv []byte) error {
	return x.Encrypt(dst, src, iv)
}

// xor sets dst = src XOR the XCTR keystream for iv. The caller has checked
// the key; dst and src have the same length and are equal or disjoint. The
// only error is the ECB request's, which cannot fail for a keyed cipher and
// whole blocks in a private buffer; it is passed on rather than ignored so
// that a broken invariant can never leave dst unencrypted silently.
func (x *XCTR) xor(dst, src []byte, iv *[aes.BlockSize]byte) error {
	ivLo := binary.LittleEndian.Uint64(iv[0:8])
	ivHi := binary.LittleEndian.Uint64(iv[8:16])
	ctr := uint32(1)
	switch {
	case len(src) == 0:
		// A 16-byte HCTR2 message has no XCTR part.
		return nil
	case len(src) <= aes.BlockSize:
		// One block (the XCTR part of a 17..32-byte file name): skip the
		// chunk buffer's zeroing and the loop.
		var one [aes.BlockSize]byte
		binary.LittleEndian.PutUint64(one[0:8], ivLo^uint64(ctr))
		binary.LittleEndian.PutUint64(one[8:16], ivHi)
		if err := x.ecb.Encrypt(one[:], one[:]); err != nil {
			return err
		}
		for i := range src {
			dst[i] = src[i] ^ one[i]
		}
		clear(one[:])
		return nil
	}
	var ks [xctrChunkBlocks * aes.BlockSize]byte
	used := min(roundUp(len(src)), len(ks)) // bytes of ks to wipe at the end
	for len(src) > 0 {
		n := min(len(src), len(ks))
		blocks := ks[:roundUp(n)]
		for i := 0; i < len(blocks); i += aes.BlockSize {
			binary.LittleEndian.PutUint64(blocks[i:i+8], ivLo^uint64(ctr))
			binary.LittleEndian.PutUint64(blocks[i+8:i+16], ivHi)
			ctr++
		}
		if err := x.ecb.Encrypt(blocks, blocks); err != nil {
			return err
		}
		subtle.XORBytes(dst[:n], src[:n], blocks)
		dst = dst[n:]
		src = src[n:]
	}
	clear(ks[:used])
	return nil
}

// roundUp rounds n up to a whole number of AES blocks.
func roundUp(n int) int {
	return (n + aes.BlockSize - 1) &^ (aes.BlockSize - 1)
}
