// Package aes models the kernel's AES primitives: the AES library of
// lib/crypto/aes.c (a key schedule expanded once into a struct
// crypto_aes_ctx, then single 16-byte blocks) and the multi-block skcipher
// "arch drivers" that arch/x86/crypto/aesni-intel_glue.c registers for
// ecb(aes), cbc(aes), cts(cbc(aes)) and xts(aes).
//
// # Library
//
// [ExpandKey] is aes_expandkey: it fills a [Ctx] with the encryption round
// keys of FIPS-197 and the decryption round keys of the "Equivalent Inverse
// Cipher", in the kernel's layout (little-endian 32-bit words). [Ctx.Encrypt]
// and [Ctx.Decrypt] are aes_encrypt and aes_decrypt, [Ctx.Wipe] is the
// memzero_explicit a kernel caller does when it is done with the context.
// fscrypt's v1 key derivation (fs/crypto/keysetup_v1.c) uses exactly this:
// one ExpandKey with the 16-byte nonce, then one Encrypt per 16 bytes of the
// master key.
//
// # Drivers
//
// [ECB], [CBC], [CTSCBC] and [XTS] are the per-tfm contexts of the drivers
// "ecb-aes-aesni", "cbc-aes-aesni", "cts-cbc-aes-aesni" and
// "xts-aes-aesni": SetKey expands the key(s) once (the skcipher setkey), then
// any number of Encrypt/Decrypt requests run over contiguous buffers without
// allocating. dst and src may be the same buffer (in-place requests, the
// usual case in fscrypt) or disjoint; a partial overlap is rejected with
// EINVAL. Request semantics follow the kernel templates crypto/ecb.c,
// crypto/cbc.c, crypto/cts.c and crypto/xts.c: errno values, minimum lengths
// and what the IV buffer holds after a request. As with a kernel tfm, once
// SetKey has returned, requests may run from several goroutines at once
// (each with its own IV buffer); SetKey and Wipe must not race with them.
//
// # Implementations
//
// On amd64 with AES-NI (detected with golang.org/x/sys/cpu, like the
// kernel's X86_FEATURE_AES check in aesni_init) the key schedule, single
// blocks and all modes run in Go assembly in the spirit of
// arch/x86/crypto/aesni-intel_asm.S and aes-xts-avx-x86_64.S: eight blocks
// interleaved for ECB, CBC decryption and XTS (with the XTS tweak doubled in
// registers), CBC encryption as a serial loop. Elsewhere, or when built with
// the purego tag, a portable Go implementation modelled on lib/crypto/aes.c
// (S-box lookups plus arithmetic MixColumns, no large T-tables) is used.
// Both produce identical key schedules and outputs; [Accelerated] reports
// which one is in use.
//
// XTS has the other x86 drivers of aesni-intel_glue.c as well, chosen per
// [XTS] with [XTS.SetImpl] where the CPU has them ([XTSImpl.Available],
// from golang.org/x/sys/cpu and CPUID): "xts-aes-aesni-avx" (VEX-coded
// AES-NI, xmm), "xts-aes-vaes-avx2" (VAES and VPCLMULQDQ on ymm) and
// "xts-aes-vaes-avx512" (the same on zmm), one assembly body
// (xts_vaes_amd64.h) after arch/x86/crypto/aes-xts-avx-x86_64.S: four
// vectors of blocks per iteration, the tweaks advanced by a vector
// multiplication by x^k in GF(2^128). Ciphertext stealing, the tweak
// encryption and the request checks are the same Go code for all of them,
// as xts_crypt is shared by the kernel's drivers.
package aes

import (
	"github.com/vfslab/vfslab/errno"
)

// Sizes from include/crypto/aes.h.
const (
	// BlockSize is AES_BLOCK_SIZE.
	BlockSize = 16
	// KeySize128 is AES_KEYSIZE_128.
	KeySize128 = 16
	// KeySize192 is AES_KEYSIZE_192.
	KeySize192 = 24
	// KeySize256 is AES_KEYSIZE_256.
	KeySize256 = 32
	// MinKeySize is AES_MIN_KEY_SIZE.
	MinKeySize = KeySize128
	// MaxKeySize is AES_MAX_KEY_SIZE.
	MaxKeySize = KeySize256
	// MaxKeyLength is AES_MAX_KEYLENGTH: 15 round keys of 16 bytes.
	MaxKeyLength = 15 * 16
	// MaxKeyLengthU32 is AES_MAX_KEYLENGTH_U32, the length of the round-key
	// arrays of a Ctx.
	MaxKeyLengthU32 = MaxKeyLength / 4
)

// Ctx is struct crypto_aes_ctx (include/crypto/aes.h): the expanded key.
//
// KeyEnc holds the 4*(rounds+1) words of the FIPS-197 key schedule, each
// word the little-endian load of four key-schedule bytes, as the kernel
// stores them; KeyDec holds the decryption schedule of the Equivalent
// Inverse Cipher (round keys in reverse order, InvMixColumns applied to all
// but the first and the last). KeyLength is the key length in bytes (16, 24
// or 32); the number of rounds is 6 + KeyLength/4.
//
// The zero Ctx holds no key. A Ctx is plain data: copying it copies the key
// schedule, and it may be used from several goroutines at once for
// encryption and decryption once expanded.
type Ctx struct {
	// KeyEnc is key_enc: the encryption round keys.
	KeyEnc [MaxKeyLengthU32]uint32
	// KeyDec is key_dec: the decryption round keys.
	KeyDec [MaxKeyLengthU32]uint32
	// KeyLength is key_length in bytes.
	KeyLength uint32
}

// CheckKeyLen is aes_check_keylen (include/crypto/aes.h): nil for 16, 24 and
// 32 bytes, EINVAL otherwise.
func CheckKeyLen(keyLen int) error {
	switch keyLen {
	case KeySize128, KeySize192, KeySize256:
		return nil
	}
	return errno.EINVAL
}

// ExpandKey is aes_expandkey (lib/crypto/aes.c): it checks the key length
// (EINVAL unless 16, 24 or 32 bytes, leaving ctx untouched) and stores the
// encryption and decryption key schedules of key in ctx. It does not
// allocate, and on amd64 with AES-NI it runs assembly (AESENCLAST computes
// SubWord, AESIMC the decryption round keys).
//
// Round-key words beyond the new schedule that a previous, longer key left in
// ctx are cleared, so a Ctx never holds stale key material past its
// schedule.
func ExpandKey(ctx *Ctx, key []byte) error {
	if err := CheckKeyLen(len(key)); err != nil {
		return err
	}
	expandKey(ctx, key, hasAESNI)
	return nil
}

// expandKey expands a key whose length was checked, with the assembly
// (asm true) or the portable implementation.
func expandKey(ctx *Ctx, key []byte, asm bool) {
	old := ctx.KeyLength
	ctx.KeyLength = uint32(len(key))
	if old > ctx.KeyLength {
		// A longer key was expanded here before: wipe its tail.
		n := 4 * (ctx.rounds() + 1)
		clear(ctx.KeyEnc[n:])
		clear(ctx.KeyDec[n:])
	}
	if asm {
		expandKeyAsm(ctx.rounds(), &key[0], &ctx.KeyEnc[0], &ctx.KeyDec[0])
		return
	}
	expandKeyGeneric(ctx, key)
}

// rounds is the number of AES rounds for the key in c, 6 + key_length/4 as
// aes_encrypt computes it.
func (c *Ctx) rounds() int {
	return 6 + int(c.KeyLength)/4
}

// checkKeyed panics when c holds no expanded key: the round count would be
// meaningless and the assembly would read past the schedule.
func (c *Ctx) checkKeyed() {
	switch c.KeyLength {
	case KeySize128, KeySize192, KeySize256:
		return
	}
	panic("aes: Ctx holds no expanded key (call ExpandKey first)")
}

// BlockSize returns BlockSize. With it a *Ctx is a crypto/cipher.Block.
func (c *Ctx) BlockSize() int { return BlockSize }

// Encrypt is aes_encrypt (lib/crypto/aes.c): it encrypts the 16-byte block
// src[:16] into dst[:16]; dst and src may be the same. Like the kernel
// function (and crypto/cipher.Block) it returns nothing: the caller passes
// whole blocks and an expanded Ctx, and a violation of that contract (a
// buffer shorter than 16 bytes, a Ctx never given to ExpandKey) is a
// programming error that panics with a message rather than reading out of
// bounds. It does not allocate.
func (c *Ctx) Encrypt(dst, src []byte) {
	c.checkKeyed()
	if len(dst) < BlockSize || len(src) < BlockSize {
		panic("aes: Encrypt needs 16-byte blocks")
	}
	encryptBlock(c, dst, src, hasAESNI)
}

// Decrypt is aes_decrypt (lib/crypto/aes.c): it decrypts the 16-byte block
// src[:16] into dst[:16] with the Equivalent Inverse Cipher schedule. The
// contract is that of [Ctx.Encrypt].
func (c *Ctx) Decrypt(dst, src []byte) {
	c.checkKeyed()
	if len(dst) < BlockSize || len(src) < BlockSize {
		panic("aes: Decrypt needs 16-byte blocks")
	}
	decryptBlock(c, dst, src, hasAESNI)
}

// Wipe zeroes the key schedules and the key length, as a kernel caller does
// with memzero_explicit(&ctx, sizeof(ctx)) once it is done with an on-stack
// crypto_aes_ctx (for example fscrypt's derive_key_aes). A wiped Ctx holds
// no key.
func (c *Ctx) Wipe() {
	clear(c.KeyEnc[:])
	clear(c.KeyDec[:])
	c.KeyLength = 0
}

// IsZero reports whether every byte of the key schedules is zero, as
// after Wipe: a test of key wiping looks at it.
func (c *Ctx) IsZero() bool { return *c == Ctx{} }

// Accelerated reports whether this build runs the AES-NI assembly (amd64
// with the AES instructions, not built with the purego tag). The kernel
// registers its aesni drivers only when the CPU has X86_FEATURE_AES; a
// Crypto API model can use this to decide whether the "-aesni" driver names
// are available. The portable code computes the same results either way.
func Accelerated() bool { return hasAESNI }

// encryptBlock encrypts one block with the chosen implementation.
func encryptBlock(c *Ctx, dst, src []byte, asm bool) {
	if asm {
		encryptBlockAsm(c.rounds(), &c.KeyEnc[0], &dst[0], &src[0])
		return
	}
	encryptBlockGeneric(c, dst, src)
}

// decryptBlock decrypts one block with the chosen implementation.
func decryptBlock(c *Ctx, dst, src []byte, asm bool) {
	if asm {
		decryptBlockAsm(c.rounds(), &c.KeyDec[0], &dst[0], &src[0])
		return
	}
	decryptBlockGeneric(c, dst, src)
}
