// Package hctr2 implements the HCTR2 length-preserving encryption mode exactly
// as Linux's "hctr2(aes)" skcipher (crypto/hctr2.c), which fscrypt uses for
// file names (FSCRYPT_MODE_AES_256_HCTR2, mode number 10), together with its
// two building blocks, POLYVAL (crypto/polyval-generic.c) and XCTR
// (crypto/xctr.c).
//
// HCTR2 (Crowley, Huckleberry and Biggers, https://eprint.iacr.org/2021/1441)
// splits a message into its first 16 bytes M and the rest N and computes
//
//	MM = M XOR H(T, N)
//	UU = AES_K(MM)
//	S  = MM XOR UU XOR L
//	V  = N XOR XCTR_K(S)
//	U  = UU XOR H(T, V)
//
// giving U || V. The hash key is h = AES_K(0^128), L = AES_K(1 || 0^120) and
//
//	H(T, X) = POLYVAL(h, le128(2·8|T| + 2 + [16 ∤ |X|]) || pad0(T) || pad1(X))
//
// where pad0 zero-pads to a block boundary and pad1 appends a 0x01 byte and
// zeros when X is not a whole number of blocks (hctr2_hash_tweaklen,
// hctr2_hash_message). Decryption runs the same steps backwards with AES
// decryption.
//
// Linux fixes the tweak (the skcipher IV) at 32 bytes (TWEAK_SIZE), takes
// AES-128, AES-192 or AES-256 keys, and accepts messages of at least 16 bytes;
// this package enforces the same limits, plus the 32-bit limit of
// skcipher_request.cryptlen.
//
// AES comes from package crypto/aes of this module: a concrete [aes.Ctx] for
// the single block in the middle of the construction (the kernel's
// crypto_cipher "blockcipher") and an [XCTR] over its multi-block ECB for
// the stream part (the kernel's "xctr(aes)" child skcipher). Each is keyed
// separately, as hctr2_setkey keys both children. Nothing is called through
// an interface, so Encrypt and Decrypt neither allocate nor let dst, src or
// the tweak escape to the heap.
package hctr2

import (
	"math"
	"syscall"

	"github.com/vfslab/vfslab/crypto/aes"
)

const (
	// Name is the Crypto API algorithm name.
	Name = "hctr2(aes)"
	// TweakSize is the tweak (IV) length Linux uses (TWEAK_SIZE in
	// crypto/hctr2.c).
	TweakSize = 32
	// BlockSize is the block size of AES and of POLYVAL
	// (BLOCKCIPHER_BLOCK_SIZE); it is also the minimum message length.
	BlockSize = 16
	// MinMessageSize is the shortest message hctr2_crypt accepts.
	MinMessageSize = BlockSize
	// MaxMessageSize is the longest message a skcipher request can carry
	// (cryptlen is an unsigned int).
	MaxMessageSize = math.MaxUint32
)

// Cipher is a keyed HCTR2 instance, the analogue of a crypto_skcipher tfm for
// "hctr2(aes)". The zero value is unkeyed. After SetKey it may be used by
// concurrent goroutines; SetKey itself must not race with other calls.
type Cipher struct {
	keyed       bool
	blockcipher aes.Ctx    // single-block AES (hctr2's "blockcipher" child)
	xctr        XCTR       // the "xctr(aes)" child
	hashKey     polyvalKey // h = E_K(0)
	l           [BlockSize]byte
	// tweakLen holds the POLYVAL states after the length block for a 32-byte
	// tweak, for messages that are (index 0) and are not (index 1) a whole
	// number of blocks, as hctr2_setkey precomputes them.
	tweakLen [2]polyvalAcc
}

// New returns a Cipher keyed with key (see SetKey).
func New(key []byte) (*Cipher, error) {
	c := new(Cipher)
	if err := c.SetKey(key); err != nil {
		return nil, err
	}
	return c, nil
}

// SetKey keys the cipher with a 16-, 24- or 32-byte AES key and derives the
// POLYVAL key h = E_K(0^128) and L = E_K(1 || 0^120) (hctr2_setkey). Any other
// key length yields syscall.EINVAL and leaves the cipher unkeyed, with any
// previous key schedules wiped.
func (c *Cipher) SetKey(key []byte) error {
	c.keyed = false
	if aes.ExpandKey(&c.blockcipher, key) != nil || c.xctr.SetKey(key) != nil {
		c.blockcipher.Wipe()
		c.xctr.wipe()
		return syscall.EINVAL
	}
	var hbar [BlockSize]byte
	c.blockcipher.Encrypt(hbar[:], hbar[:])
	c.hashKey.setKey(loadElement(hbar[:]))
	clear(hbar[:])
	c.l = [BlockSize]byte{1}
	c.blockcipher.Encrypt(c.l[:], c.l[:])
	for rem := range c.tweakLen {
		c.tweakLen[rem] = lengthBlockState(&c.hashKey, TweakSize, rem == 1)
	}
	c.keyed = true
	return nil
}

// lengthBlockState returns the POLYVAL state after the initial block
// le128(2·8·tweakLen + 2 + hasRemainder).
func lengthBlockState(k *polyvalKey, tweakLen int, hasRemainder bool) polyvalAcc {
	v := uint64(tweakLen)*8*2 + 2
	if hasRemainder {
		v++
	}
	var a polyvalAcc
	a.block(k, fieldElement{lo: v})
	return a
}

// Encrypt encrypts src into dst under tweak (hctr2_encrypt, with tweak as the
// request IV). dst must be at least len(src) bytes; dst and src may be the
// same slice but must not otherwise overlap. Errors: syscall.ENOKEY before a
// successful SetKey, syscall.EINVAL for a tweak that is not 32 bytes, a
// message shorter than 16 bytes or longer than MaxMessageSize, a short dst or
// partially overlapping buffers. It does not allocate, and dst, src and
// tweak do not escape.
func (c *Cipher) Encrypt(dst, src, tweak []byte) error {
	if err := c.check(dst, src, tweak); err != nil {
		return err
	}
	return c.crypt(dst[:len(src)], src, tweak, true)
}

// Decrypt is the inverse of Encrypt (hctr2_decrypt), with the same
// requirements and errors.
func (c *Cipher) Decrypt(dst, src, tweak []byte) error {
	if err := c.check(dst, src, tweak); err != nil {
		return err
	}
	return c.crypt(dst[:len(src)], src, tweak, false)
}

// check validates a request: the key first (crypto_skcipher_encrypt returns
// -ENOKEY), then the lengths.
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

// hashTweak returns the POLYVAL state after the length block and the padded
// tweak (hctr2_hash_tweak). It is shared by both hash steps.
func (c *Cipher) hashTweak(tweak []byte, hasRemainder bool) polyvalAcc {
	var a polyvalAcc
	if len(tweak) == TweakSize {
		if hasRemainder {
			a = c.tweakLen[1]
		} else {
			a = c.tweakLen[0]
		}
	} else {
		// Other tweak lengths are outside the Linux API; they are kept for
		// checking the construction against the specification's vectors.
		a = lengthBlockState(&c.hashKey, len(tweak), hasRemainder)
	}
	full := len(tweak) &^ (BlockSize - 1)
	a.blocks(&c.hashKey, tweak[:full])
	if full < len(tweak) {
		var last [BlockSize]byte
		copy(last[:], tweak[full:])
		a.block(&c.hashKey, loadElement(last[:]))
	}
	return a
}

// hashMessage continues a from hashTweak over msg, padding a trailing partial
// block with 0x01 and zeros (hctr2_hash_message), and returns the digest.
func (c *Cipher) hashMessage(a polyvalAcc, msg []byte) fieldElement {
	full := len(msg) &^ (BlockSize - 1)
	a.blocks(&c.hashKey, msg[:full])
	if full < len(msg) {
		var last [BlockSize]byte
		n := copy(last[:], msg[full:])
		last[n] = 0x01
		a.block(&c.hashKey, loadElement(last[:]))
	}
	return a.s
}

// crypt runs HCTR2 in either direction; len(dst) == len(src) >= 16 and the
// tweak may have any length. src is read before the corresponding part of
// dst is written, so dst may be src. The only error is XCTR's, which cannot
// occur for a keyed cipher (see XCTR.xor).
func (c *Cipher) crypt(dst, src, tweak []byte, encrypt bool) error {
	bulk := len(src) - BlockSize
	hashed := c.hashTweak(tweak, bulk%BlockSize != 0)

	// MM = M ^ H(T || N), or UU = U ^ H(T || V) when decrypting.
	d := c.hashMessage(hashed, src[BlockSize:])
	in := loadElement(src[:BlockSize])
	var blk [BlockSize]byte
	fieldElement{in.lo ^ d.lo, in.hi ^ d.hi}.store(blk[:])
	before := loadElement(blk[:])

	// UU = E(MM), or MM = D(UU).
	if encrypt {
		c.blockcipher.Encrypt(blk[:], blk[:])
	} else {
		c.blockcipher.Decrypt(blk[:], blk[:])
	}
	after := loadElement(blk[:])
	clear(blk[:])

	// S = MM ^ UU ^ L
	l := loadElement(c.l[:])
	var s [BlockSize]byte
	fieldElement{before.lo ^ after.lo ^ l.lo, before.hi ^ after.hi ^ l.hi}.store(s[:])

	// V = XCTR(S, N), or N = XCTR(S, V).
	if err := c.xctr.xor(dst[BlockSize:], src[BlockSize:], &s); err != nil {
		return err
	}

	// U = UU ^ H(T || V), or M = MM ^ H(T || N).
	d = c.hashMessage(hashed, dst[BlockSize:])
	fieldElement{after.lo ^ d.lo, after.hi ^ d.hi}.store(dst[:BlockSize])
	return nil
}
