package hctr2

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"sync"
	"syscall"
)

// XCTR (Linux crypto/xctr.c, the "xctr(aes)" skcipher): the stream cipher of
// HCTR2. Keystream block i, for i = 1, 2, ..., is E_K(IV XOR le(i)); unlike
// CTR mode the counter is XORed into the IV, little-endian. The kernel XORs a
// 32-bit counter into the first four IV bytes, which equals the HCTR2 paper's
// 128-bit counter for every length a request can have. A trailing partial
// block uses a truncated keystream block.

// XCTRIVSize is the XCTR IV length (the AES block size).
const XCTRIVSize = aes.BlockSize

// xctrXOR sets dst = src XOR XCTR keystream(iv). dst and src have the same
// length and are equal or disjoint. The block cipher always works in place
// on caller memory (a dst block, or scratch for a trailing partial block) so
// that nothing on the stack escapes through the cipher.Block interface;
// scratch must be 16 bytes not overlapping dst or src and is needed only when
// len(src) is not a multiple of 16.
func xctrXOR(b cipher.Block, dst, src []byte, iv *[aes.BlockSize]byte, scratch []byte) {
	ivLo := binary.LittleEndian.Uint64(iv[0:8])
	ivHi := binary.LittleEndian.Uint64(iv[8:16])
	ctr := uint32(1)
	for len(src) >= aes.BlockSize {
		inLo := binary.LittleEndian.Uint64(src[0:8])
		inHi := binary.LittleEndian.Uint64(src[8:16])
		d := dst[:aes.BlockSize]
		binary.LittleEndian.PutUint64(d[0:8], ivLo^uint64(ctr))
		binary.LittleEndian.PutUint64(d[8:16], ivHi)
		b.Encrypt(d, d)
		binary.LittleEndian.PutUint64(d[0:8], binary.LittleEndian.Uint64(d[0:8])^inLo)
		binary.LittleEndian.PutUint64(d[8:16], binary.LittleEndian.Uint64(d[8:16])^inHi)
		ctr++
		dst = dst[aes.BlockSize:]
		src = src[aes.BlockSize:]
	}
	if len(src) > 0 {
		ks := scratch[:aes.BlockSize]
		binary.LittleEndian.PutUint64(ks[0:8], ivLo^uint64(ctr))
		binary.LittleEndian.PutUint64(ks[8:16], ivHi)
		b.Encrypt(ks, ks)
		for i := range src {
			dst[i] = src[i] ^ ks[i]
		}
	}
}

// scratchPool holds 16-byte buffers for XCTR requests that end in a partial
// block and leave no room in dst for a whole keystream block.
var scratchPool = sync.Pool{New: func() any { return new([aes.BlockSize]byte) }}

// XCTR is a keyed xctr(aes) instance. The zero value is unkeyed. After SetKey
// it may be used by concurrent goroutines.
type XCTR struct {
	block cipher.Block
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
// syscall.EINVAL (aes_expandkey) and leaves the cipher unkeyed.
func (x *XCTR) SetKey(key []byte) error {
	x.block = nil
	b, err := newAES(key)
	if err != nil {
		return err
	}
	x.block = b
	return nil
}

// Encrypt sets dst to src XOR the XCTR keystream for iv (crypto_xctr_crypt).
// Any length, including 0, is accepted up to MaxMessageSize. dst must be at
// least len(src) bytes; dst and src may be the same slice but must not
// otherwise overlap. Errors: syscall.ENOKEY when unkeyed, syscall.EINVAL for
// an IV that is not 16 bytes, a message that is too long, a short dst or
// partially overlapping buffers. It allocates nothing (a pooled buffer serves
// a trailing partial block).
func (x *XCTR) Encrypt(dst, src, iv []byte) error {
	if x.block == nil {
		return syscall.ENOKEY
	}
	if len(iv) != XCTRIVSize || uint64(len(src)) > MaxMessageSize {
		return syscall.EINVAL
	}
	if len(dst) < len(src) || inexactOverlap(dst[:len(src)], src) {
		return syscall.EINVAL
	}
	var ivb [aes.BlockSize]byte
	copy(ivb[:], iv)
	if len(src)%aes.BlockSize == 0 {
		xctrXOR(x.block, dst[:len(src)], src, &ivb, nil)
		return nil
	}
	scratch := scratchPool.Get().(*[aes.BlockSize]byte)
	xctrXOR(x.block, dst[:len(src)], src, &ivb, scratch[:])
	clear(scratch[:])
	scratchPool.Put(scratch)
	return nil
}

// Decrypt is the same operation as Encrypt.
func (x *XCTR) Decrypt(dst, src, iv []byte) error {
	return x.Encrypt(dst, src, iv)
}

// newAES keys the standard library's AES, mapping a bad key length to
// syscall.EINVAL as the kernel's AES setkey does.
func newAES(key []byte) (cipher.Block, error) {
	switch len(key) {
	case 16, 24, 32:
	default:
		return nil, syscall.EINVAL
	}
	return aes.NewCipher(key)
}
