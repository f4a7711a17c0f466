// Package adiantum implements the Adiantum length-preserving encryption mode
// exactly as Linux's "adiantum(xchacha12,aes)" skcipher (crypto/adiantum.c),
// which fscrypt uses for both file contents and file names
// (FSCRYPT_MODE_ADIANTUM, mode number 9).
//
// Adiantum (Crowley and Biggers, https://eprint.iacr.org/2018/720) is an HBSH
// construction: a message P = P_L || P_R, where P_R is its last 16 bytes, is
// encrypted as
//
//	P_M = P_R + H(T, P_L)             (addition modulo 2^128, little-endian)
//	C_M = AES-256(K_E, P_M)
//	C_L = P_L XOR XChaCha12(K_S, nonce = C_M || 1 || 0^63)
//	C_R = C_M - H(T, C_L)
//
// where H(T, L) = Poly1305_{K_T}(bin128(8·|L|) || T) + NHPoly1305_{K_N}(L) and
// the subkeys K_E || K_T || K_N come from the XChaCha12 keystream of the
// 32-byte user key K_S under the nonce 1 || 0^191 (adiantum_setkey).
//
// Linux fixes the tweak (the skcipher IV) at 32 bytes (TWEAK_SIZE), the key
// at 32 bytes, and accepts any message of at least 16 bytes up to the 32-bit
// limit of skcipher_request.cryptlen; this package enforces the same limits.
//
// The implementation is self-contained apart from the AES block cipher, which
// comes from package crypto/aes of this module: a concrete [aes.Ctx], the
// analogue of the crypto_cipher "blockcipher" child that adiantum_setkey keys
// with K_E. Nothing is called through an interface, so Encrypt and Decrypt
// neither allocate nor let dst, src or the tweak escape to the heap.
//
// lukechampine.com/adiantum computes the same function (it passes the
// kernel's test vectors) but is not used here: it allocates twice per call,
// keeps a scratch buffer in the shared cipher value (so one keyed value
// cannot serve concurrent requests, as a kernel tfm can), panics on messages
// shorter than 16 bytes and accepts any tweak length. Its test suite role
// here is that of an independent oracle.
package adiantum

import (
	"encoding/binary"
	"math"
	"math/bits"
	"syscall"

	"github.com/vfslab/vfslab/crypto/aes"
)

const (
	// Name is the Crypto API algorithm name.
	Name = "adiantum(xchacha12,aes)"
	// KeySize is the Adiantum key length (the XChaCha12 key K_S).
	KeySize = 32
	// TweakSize is the tweak (IV) length Linux uses (TWEAK_SIZE in
	// crypto/adiantum.c).
	TweakSize = 32
	// BlockSize is the size of the right-hand part P_R and of the AES block
	// (BLOCKCIPHER_BLOCK_SIZE); it is also the minimum message length.
	BlockSize = 16
	// MinMessageSize is the shortest message adiantum_crypt accepts.
	MinMessageSize = BlockSize
	// MaxMessageSize is the longest message a skcipher request can carry
	// (cryptlen is an unsigned int).
	MaxMessageSize = math.MaxUint32

	blockCipherKeySize = 32
	derivedKeyBytes    = blockCipherKeySize + poly1305BlockSize + nhpolyKeySize
)

// Cipher is a keyed Adiantum instance, the analogue of a crypto_skcipher tfm
// for "adiantum(xchacha12,aes)". The zero value is unkeyed. After SetKey it may
// be used by concurrent goroutines; SetKey itself must not race with other
// calls.
type Cipher struct {
	keyed       bool
	streamKey   [8]uint32   // K_S
	blockcipher aes.Ctx     // AES-256 expanded from K_E
	headerKey   poly1305Key // K_T
	hashKey     nhpolyKey   // K_N
}

// New returns a Cipher keyed with key (see SetKey).
func New(key []byte) (*Cipher, error) {
	c := new(Cipher)
	if err := c.SetKey(key); err != nil {
		return nil, err
	}
	return c, nil
}

// SetKey keys the cipher with a 32-byte key, deriving the AES-256 key, the
// header-hash Poly1305 key and the NHPoly1305 key from the XChaCha12
// keystream as adiantum_setkey does. A key of any other length yields
// syscall.EINVAL and, as with a kernel tfm whose setkey failed, leaves the
// cipher unkeyed.
func (c *Cipher) SetKey(key []byte) error {
	c.keyed = false
	if len(key) != KeySize {
		return syscall.EINVAL
	}
	for i := range c.streamKey {
		c.streamKey[i] = binary.LittleEndian.Uint32(key[4*i:])
	}

	// K_E || K_T || K_N = XChaCha12(K_S, nonce = 1 || 0^191), taken by
	// encrypting zeros.
	var derived [derivedKeyBytes]byte
	var nonce [xchachaNonceLen]byte
	nonce[0] = 1
	var s xchachaStream
	s.init(&c.streamKey, &nonce, 0, chachaRounds)
	s.xorKeyStream(derived[:], derived[:])

	if err := aes.ExpandKey(&c.blockcipher, derived[:blockCipherKeySize]); err != nil {
		clear(derived[:])
		return err
	}
	rest := derived[blockCipherKeySize:]
	c.headerKey.setKey(rest[:poly1305BlockSize])
	c.hashKey.setKey(rest[poly1305BlockSize:])
	clear(derived[:])
	c.keyed = true
	return nil
}

// Encrypt encrypts src into dst under tweak (Linux: adiantum_encrypt, with
// tweak as the request IV). dst must be at least len(src) bytes; dst and src
// may be the same slice but must not otherwise overlap. Errors:
// syscall.ENOKEY before a successful SetKey, syscall.EINVAL for a tweak that
// is not 32 bytes, a message shorter than 16 bytes or longer than
// MaxMessageSize, a short dst, or partially overlapping buffers. It does not
// allocate, and dst, src and tweak do not escape.
func (c *Cipher) Encrypt(dst, src, tweak []byte) error {
	if err := c.check(dst, src, tweak); err != nil {
		return err
	}
	c.encrypt(dst[:len(src)], src, tweak)
	return nil
}

// Decrypt is the inverse of Encrypt (adiantum_decrypt), with the same
// requirements and errors.
func (c *Cipher) Decrypt(dst, src, tweak []byte) error {
	if err := c.check(dst, src, tweak); err != nil {
		return err
	}
	c.decrypt(dst[:len(src)], src, tweak)
	return nil
}

// check validates a request in the order the kernel does: the key first
// (crypto_skcipher_encrypt returns -ENOKEY), then the lengths.
func (c *Cipher) check(dst, src, tweak []byte) error {
	if !c.keyed {
		return syscall.ENOKEY
	}
	if len(tweak) != TweakSize {
		return syscall.EINVAL
	}
	if len(src) < MinMessageSize || uint64(len(src)) > MaxMessageSize {
		return syscall.EINVAL
	}
	if len(dst) < len(src) || aes.InexactOverlap(dst[:len(src)], src) {
		return syscall.EINVAL
	}
	return nil
}

// hash computes H(T, L) = Poly1305_{K_T}(bin128(8·|L|) || T) + NHPoly1305(L)
// modulo 2^128, given the header hash for this message length and tweak.
func (c *Cipher) hash(headerLo, headerHi uint64, bulk []byte) (lo, hi uint64) {
	mlo, mhi := nhpoly1305(&c.hashKey, bulk)
	lo, carry := bits.Add64(headerLo, mlo, 0)
	hi, _ = bits.Add64(headerHi, mhi, carry)
	return lo, hi
}

// headerHash computes Poly1305_{K_T}(le128(8·bulkLen) || T), the part of the
// Adiantum hash shared by both hash steps (adiantum_hash_header). Tweaks whose
// length is not a multiple of 16 use standard Poly1305 final-block padding;
// Linux only ever passes 32 bytes.
func (c *Cipher) headerHash(bulkLen int, tweak []byte) (lo, hi uint64) {
	var st poly1305State
	st.absorb(&c.headerKey, uint64(bulkLen)*8, 0, 1)
	full := len(tweak) &^ (poly1305BlockSize - 1)
	st.blocks(&c.headerKey, tweak[:full])
	if full < len(tweak) {
		st.partial(&c.headerKey, tweak[full:])
	}
	return st.emit()
}

// streamXOR XORs src into dst with XChaCha12(K_S) under the nonce
// C_M || le32(1) || 0^32, starting at stream position 0 (the IV that
// adiantum_crypt builds in rbuf).
func (c *Cipher) streamXOR(dst, src []byte, cm *[BlockSize]byte) {
	if len(src) == 0 {
		return
	}
	var nonce [xchachaNonceLen]byte
	copy(nonce[:BlockSize], cm[:])
	nonce[BlockSize] = 1
	var s xchachaStream
	s.init(&c.streamKey, &nonce, 0, chachaRounds)
	s.xorKeyStream(dst, src)
}

// encrypt runs Adiantum encryption; len(dst) == len(src) >= 16. The block
// cipher works in place on dst's last 16 bytes.
func (c *Cipher) encrypt(dst, src, tweak []byte) {
	bulk := len(src) - BlockSize
	hlo, hhi := c.headerHash(bulk, tweak)

	// P_M = P_R + H(T, P_L)
	lo, hi := c.hash(hlo, hhi, src[:bulk])
	right := dst[bulk:]
	addTo(right, src[bulk:], lo, hi)

	// C_M = E(P_M)
	c.blockcipher.Encrypt(right, right)
	var cm [BlockSize]byte
	copy(cm[:], right)

	// C_L = P_L XOR XChaCha12(C_M)
	c.streamXOR(dst[:bulk], src[:bulk], &cm)

	// C_R = C_M - H(T, C_L)
	lo, hi = c.hash(hlo, hhi, dst[:bulk])
	subFrom(right, cm[:], lo, hi)
}

// decrypt runs Adiantum decryption; len(dst) == len(src) >= 16.
func (c *Cipher) decrypt(dst, src, tweak []byte) {
	bulk := len(src) - BlockSize
	hlo, hhi := c.headerHash(bulk, tweak)

	// C_M = C_R + H(T, C_L)
	lo, hi := c.hash(hlo, hhi, src[:bulk])
	var cm [BlockSize]byte
	addTo(cm[:], src[bulk:], lo, hi)

	// P_L = C_L XOR XChaCha12(C_M)
	c.streamXOR(dst[:bulk], src[:bulk], &cm)

	// P_M = D(C_M)
	right := dst[bulk:]
	copy(right, cm[:])
	c.blockcipher.Decrypt(right, right)

	// P_R = P_M - H(T, P_L)
	lo, hi = c.hash(hlo, hhi, dst[:bulk])
	subFrom(right, right, lo, hi)
}

// addTo sets dst = x + (hi:lo) modulo 2^128, little-endian (le128_add).
func addTo(dst, x []byte, lo, hi uint64) {
	xl := binary.LittleEndian.Uint64(x[0:8])
	xh := binary.LittleEndian.Uint64(x[8:16])
	rl, carry := bits.Add64(xl, lo, 0)
	rh, _ := bits.Add64(xh, hi, carry)
	binary.LittleEndian.PutUint64(dst[0:8], rl)
	binary.LittleEndian.PutUint64(dst[8:16], rh)
}

// subFrom sets dst = x - (hi:lo) modulo 2^128, little-endian (le128_sub).
func subFrom(dst, x []byte, lo, hi uint64) {
	xl := binary.LittleEndian.Uint64(x[0:8])
	xh := binary.LittleEndian.Uint64(x[8:16])
	rl, borrow := bits.Sub64(xl, lo, 0)
	rh, _ := bits.Sub64(xh, hi, borrow)
	binary.LittleEndian.PutUint64(dst[0:8], rl)
	binary.LittleEndian.PutUint64(dst[8:16], rh)
}
