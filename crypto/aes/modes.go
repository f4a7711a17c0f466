package aes

import (
	"crypto/subtle"

	"github.com/vfslab/vfslab/errno"
)

// Request checks shared by the drivers. The kernel's skcipher walk
// (crypto/skcipher.c) fails a request whose length is not a whole number of
// blocks with EINVAL, cts and xts reject requests shorter than one block
// with EINVAL, and a tfm whose key was never set (or whose last setkey
// failed, which sets CRYPTO_TFM_NEED_KEY again) returns ENOKEY
// (crypto_skcipher_encrypt). A nil IV, which the kernel would dereference,
// is EINVAL here.

// checkRequest validates dst and src of a request: dst must be at least as
// long as src and must either be src itself or not overlap it.
func checkRequest(dst, src []byte) error {
	if len(dst) < len(src) {
		return errno.EINVAL
	}
	if InexactOverlap(dst[:len(src)], src) {
		return errno.EINVAL
	}
	return nil
}

// Mode dispatch: asm selects the AES-NI assembly, otherwise the portable
// code runs. Tests call these with both values.

func ecbEncrypt(c *Ctx, dst, src []byte, asm bool) {
	if asm {
		if len(src) >= BlockSize {
			ecbEncAsm(c.rounds(), &c.KeyEnc[0], &dst[0], &src[0], len(src)/BlockSize)
		}
		return
	}
	ecbEncryptGeneric(c, dst, src)
}

func ecbDecrypt(c *Ctx, dst, src []byte, asm bool) {
	if asm {
		if len(src) >= BlockSize {
			ecbDecAsm(c.rounds(), &c.KeyDec[0], &dst[0], &src[0], len(src)/BlockSize)
		}
		return
	}
	ecbDecryptGeneric(c, dst, src)
}

func cbcEncrypt(c *Ctx, dst, src []byte, iv *[BlockSize]byte, asm bool) {
	if asm {
		if len(src) >= BlockSize {
			cbcEncAsm(c.rounds(), &c.KeyEnc[0], &dst[0], &src[0], len(src)/BlockSize, iv)
		}
		return
	}
	cbcEncryptGeneric(c, dst, src, iv)
}

func cbcDecrypt(c *Ctx, dst, src []byte, iv *[BlockSize]byte, asm bool) {
	if asm {
		if len(src) >= BlockSize {
			cbcDecAsm(c.rounds(), &c.KeyDec[0], &dst[0], &src[0], len(src)/BlockSize, iv)
		}
		return
	}
	cbcDecryptGeneric(c, dst, src, iv)
}

// xtsEncryptBlocks XTS-encrypts the whole blocks of src with the bulk
// function of impl (already resolved by XTSImpl.resolve).
func xtsEncryptBlocks(c *Ctx, dst, src []byte, t *[BlockSize]byte, impl XTSImpl) {
	if len(src) < BlockSize {
		return
	}
	nr, n := c.rounds(), len(src)/BlockSize
	switch impl {
	case XTSVAESAVX512:
		xtsEncVAESAVX512(nr, &c.KeyEnc[0], &dst[0], &src[0], n, t)
	case XTSVAESAVX2:
		xtsEncVAESAVX2(nr, &c.KeyEnc[0], &dst[0], &src[0], n, t)
	case XTSAESNIAVX:
		xtsEncAESNIAVX(nr, &c.KeyEnc[0], &dst[0], &src[0], n, t)
	case XTSAESNI:
		xtsEncAsm(nr, &c.KeyEnc[0], &dst[0], &src[0], n, t)
	default:
		xtsEncryptGeneric(c, dst, src, t)
	}
}

// xtsDecryptBlocks is xtsEncryptBlocks's inverse, with the decryption
// schedule.
func xtsDecryptBlocks(c *Ctx, dst, src []byte, t *[BlockSize]byte, impl XTSImpl) {
	if len(src) < BlockSize {
		return
	}
	nr, n := c.rounds(), len(src)/BlockSize
	switch impl {
	case XTSVAESAVX512:
		xtsDecVAESAVX512(nr, &c.KeyDec[0], &dst[0], &src[0], n, t)
	case XTSVAESAVX2:
		xtsDecVAESAVX2(nr, &c.KeyDec[0], &dst[0], &src[0], n, t)
	case XTSAESNIAVX:
		xtsDecAESNIAVX(nr, &c.KeyDec[0], &dst[0], &src[0], n, t)
	case XTSAESNI:
		xtsDecAsm(nr, &c.KeyDec[0], &dst[0], &src[0], n, t)
	default:
		xtsDecryptGeneric(c, dst, src, t)
	}
}

// keyedCtx is the key state the single-key mode tfms (ECB, CBC, CTSCBC)
// share: the expanded key, and whether the last setkey succeeded (the
// kernel clears CRYPTO_TFM_NEED_KEY only then).
type keyedCtx struct {
	ctx   Ctx
	keyed bool
}

// SetKey expands key (16, 24 or 32 bytes; EINVAL otherwise). After a failed
// SetKey the tfm holds no key, as the kernel sets CRYPTO_TFM_NEED_KEY again.
func (k *keyedCtx) SetKey(key []byte) error {
	k.keyed = false
	if err := ExpandKey(&k.ctx, key); err != nil {
		return err
	}
	k.keyed = true
	return nil
}

// Wipe zeroes the expanded key (the tfm's exit); the tfm then holds no key.
func (k *keyedCtx) Wipe() {
	k.ctx.Wipe()
	k.keyed = false
}

// KeyZero reports whether the expanded key is all zero (after Wipe, or
// before any SetKey).
func (k *keyedCtx) KeyZero() bool { return k.ctx.IsZero() }

// ECB is the context of the "ecb-aes-aesni" skcipher (ecb(aes); the generic
// equivalent is the crypto/ecb.c template over aes-generic): every 16-byte
// block is encrypted independently. The zero value holds no key.
type ECB struct {
	keyedCtx
}

// Encrypt encrypts src into dst[:len(src)]. len(src) must be a multiple of
// 16 (EINVAL otherwise; 0 is a no-op); ENOKEY without a key.
func (e *ECB) Encrypt(dst, src []byte) error {
	return e.crypt(dst, src, false, hasAESNI)
}

// Decrypt decrypts src into dst[:len(src)], with the rules of Encrypt.
func (e *ECB) Decrypt(dst, src []byte) error {
	return e.crypt(dst, src, true, hasAESNI)
}

func (e *ECB) crypt(dst, src []byte, decrypt, asm bool) error {
	if !e.keyed {
		return errno.ENOKEY
	}
	if len(src)%BlockSize != 0 {
		return errno.EINVAL
	}
	if err := checkRequest(dst, src); err != nil {
		return err
	}
	if decrypt {
		ecbDecrypt(&e.ctx, dst, src, asm)
	} else {
		ecbEncrypt(&e.ctx, dst, src, asm)
	}
	return nil
}

// CBC is the context of the "cbc-aes-aesni" skcipher (cbc(aes), generic
// template crypto/cbc.c). The zero value holds no key.
//
// The IV is passed by pointer and updated as the kernel updates req->iv:
// after Encrypt or Decrypt it holds the last ciphertext block of the
// request, so that consecutive requests chain like one long request.
type CBC struct {
	keyedCtx
}

// Encrypt CBC-encrypts src into dst[:len(src)] starting from *iv and leaves
// the last ciphertext block in *iv. len(src) must be a multiple of 16
// (EINVAL otherwise; 0 is a no-op that leaves *iv alone); ENOKEY without a
// key. CBC encryption is serial; it still runs in assembly with AES-NI.
func (c *CBC) Encrypt(dst, src []byte, iv *[BlockSize]byte) error {
	return c.crypt(dst, src, iv, false, hasAESNI)
}

// Decrypt CBC-decrypts src into dst[:len(src)] starting from *iv and leaves
// the last ciphertext block of src in *iv, with the rules of Encrypt. With
// AES-NI eight blocks are decrypted at a time.
func (c *CBC) Decrypt(dst, src []byte, iv *[BlockSize]byte) error {
	return c.crypt(dst, src, iv, true, hasAESNI)
}

func (c *CBC) crypt(dst, src []byte, iv *[BlockSize]byte, decrypt, asm bool) error {
	if !c.keyed {
		return errno.ENOKEY
	}
	if len(src)%BlockSize != 0 || iv == nil {
		return errno.EINVAL
	}
	if err := checkRequest(dst, src); err != nil {
		return err
	}
	if decrypt {
		cbcDecrypt(&c.ctx, dst, src, iv, asm)
	} else {
		cbcEncrypt(&c.ctx, dst, src, iv, asm)
	}
	return nil
}

// CTSCBC is the context of cts(cbc(aes)) ("cts-cbc-aes-aesni"; generic
// template crypto/cts.c), the mode fscrypt uses for filenames. It is CBC
// with ciphertext stealing in the CS3 convention of RFC 3962 and NIST
// SP 800-38A Addendum: for a request of n > 16 bytes the last plaintext
// block is zero-padded, the whole text is CBC-encrypted, the last two
// ciphertext blocks are swapped and the result is cut to n bytes (so the
// last two blocks are swapped even when n is a multiple of 16). A request of
// exactly 16 bytes is one plain CBC block; shorter requests get EINVAL.
//
// After a request *iv holds what crypto/cts.c leaves in req->iv: the
// ciphertext block at offset 16*(ceil(n/16)-2), the last full block of the
// ciphertext (for n == 16, the one ciphertext block). fscrypt does not use
// it; the RFC 3962 vectors list it as the "next IV".
type CTSCBC struct {
	keyedCtx
}

// Encrypt encrypts src (at least 16 bytes, EINVAL otherwise) into
// dst[:len(src)]; ENOKEY without a key.
func (c *CTSCBC) Encrypt(dst, src []byte, iv *[BlockSize]byte) error {
	return c.crypt(dst, src, iv, false, hasAESNI)
}

// Decrypt decrypts src (at least 16 bytes, EINVAL otherwise) into
// dst[:len(src)]; ENOKEY without a key.
func (c *CTSCBC) Decrypt(dst, src []byte, iv *[BlockSize]byte) error {
	return c.crypt(dst, src, iv, true, hasAESNI)
}

func (c *CTSCBC) crypt(dst, src []byte, iv *[BlockSize]byte, decrypt, asm bool) error {
	if !c.keyed {
		return errno.ENOKEY
	}
	if len(src) < BlockSize || iv == nil {
		return errno.EINVAL
	}
	if err := checkRequest(dst, src); err != nil {
		return err
	}
	dst = dst[:len(src)]
	if len(src) == BlockSize {
		// crypto_cts_encrypt/decrypt: cbc_blocks <= 0, a plain CBC request.
		if decrypt {
			cbcDecrypt(&c.ctx, dst, src, iv, asm)
		} else {
			cbcEncrypt(&c.ctx, dst, src, iv, asm)
		}
		return nil
	}
	if decrypt {
		ctsDecrypt(&c.ctx, dst, src, iv, asm)
	} else {
		ctsEncrypt(&c.ctx, dst, src, iv, asm)
	}
	return nil
}

// ctsEncrypt handles n = len(src) > 16. With k = ceil(n/16)-2 whole blocks
// before the last two, it CBC-encrypts the first k blocks, then P(k) (full)
// and the zero-padded final partial block P(k+1) of lastn bytes:
//
//	X = E(P(k) ^ chain)
//	Y = E(pad(P(k+1)) ^ X)
//	output ... || Y || X[:lastn]
//
// which is crypto/cts.c's cts_cbc_encrypt after its CBC sub-request.
func ctsEncrypt(c *Ctx, dst, src []byte, iv *[BlockSize]byte, asm bool) {
	n := len(src)
	off := (n - 1) / BlockSize * BlockSize // start of the final (partial or whole) block
	lastn := n - off                       // 1..16
	cbcEncrypt(c, dst[:off-BlockSize], src[:off-BlockSize], iv, asm)

	var x, y [BlockSize]byte
	xorBlock(x[:], src[off-BlockSize:], iv[:])
	copy(y[:], src[off:]) // read the tail before dst may overwrite it
	encryptBlock(c, x[:], x[:], asm)
	xorBlock(y[:], y[:], x[:])
	encryptBlock(c, y[:], y[:], asm)
	copy(dst[off:], x[:lastn])
	copy(dst[off-BlockSize:off], y[:])
	*iv = y
	clear(x[:])
	clear(y[:])
}

// ctsDecrypt undoes ctsEncrypt (crypto/cts.c cts_cbc_decrypt): with Y the
// full block at off-16 and C the lastn-byte tail,
//
//	D = D_K(Y)                 (= pad(P(k+1)) ^ X)
//	P(k+1) = D[:lastn] ^ C
//	X = C || D[lastn:]
//	P(k) = D_K(X) ^ chain
func ctsDecrypt(c *Ctx, dst, src []byte, iv *[BlockSize]byte, asm bool) {
	n := len(src)
	off := (n - 1) / BlockSize * BlockSize
	lastn := n - off
	var y, d, x [BlockSize]byte
	copy(y[:], src[off-BlockSize:off])
	copy(x[:lastn], src[off:]) // C, padded below with the tail of D
	cbcDecrypt(c, dst[:off-BlockSize], src[:off-BlockSize], iv, asm)

	decryptBlock(c, d[:], y[:], asm)
	copy(x[lastn:], d[lastn:])
	subtle.XORBytes(dst[off:n], d[:lastn], x[:lastn])
	decryptBlock(c, d[:], x[:], asm)
	xorBlock(dst[off-BlockSize:], d[:], iv[:])
	*iv = y
	clear(d[:])
	clear(x[:])
}

// XTSImpl names one of the x86 AES-XTS drivers of
// arch/x86/crypto/aesni-intel_glue.c (Linux 6.15 and later, where the
// VAES + AVX10/256 driver was dropped and VAES + AVX10/512 became
// "xts-aes-vaes-avx512"), or the portable code. They compute the same
// function and differ only in speed; [XTS.SetImpl] picks one.
type XTSImpl uint8

const (
	// XTSAESNI is "xts-aes-aesni" (priority 401): legacy-SSE AES-NI, eight
	// blocks interleaved (aes_amd64.s). It is the zero value of an XTS's
	// implementation; without AES-NI it runs the portable code.
	XTSAESNI XTSImpl = iota
	// XTSGeneric is the portable Go code (what the xts template over
	// aes-generic computes).
	XTSGeneric
	// XTSAESNIAVX is "xts-aes-aesni-avx" (priority 500): VEX-coded AES-NI
	// on xmm registers, four blocks per iteration.
	XTSAESNIAVX
	// XTSVAESAVX2 is "xts-aes-vaes-avx2" (priority 600): VAES and
	// VPCLMULQDQ on ymm registers, eight blocks per iteration.
	XTSVAESAVX2
	// XTSVAESAVX512 is "xts-aes-vaes-avx512" (priority 800): VAES and
	// VPCLMULQDQ on zmm registers, sixteen blocks per iteration, the round
	// keys held in registers.
	XTSVAESAVX512
)

// XTSImpls lists every implementation, the portable one first and then
// in the kernel's priority order.
var XTSImpls = []XTSImpl{XTSGeneric, XTSAESNI, XTSAESNIAVX, XTSVAESAVX2, XTSVAESAVX512}

// String returns the kernel's cra_driver_name of the driver ("generic" for
// the portable code).
func (i XTSImpl) String() string {
	switch i {
	case XTSAESNI:
		return "xts-aes-aesni"
	case XTSGeneric:
		return "generic"
	case XTSAESNIAVX:
		return "xts-aes-aesni-avx"
	case XTSVAESAVX2:
		return "xts-aes-vaes-avx2"
	case XTSVAESAVX512:
		return "xts-aes-vaes-avx512"
	}
	return "XTSImpl(invalid)"
}

// Priority returns the driver's cra_priority in aesni-intel_glue.c (0 for
// the portable code, which is no driver of its own).
func (i XTSImpl) Priority() int {
	switch i {
	case XTSAESNI:
		return 401
	case XTSAESNIAVX:
		return 500
	case XTSVAESAVX2:
		return 600
	case XTSVAESAVX512:
		return 800
	}
	return 0
}

// Available reports whether this build and CPU can run the implementation:
// the condition under which the kernel registers the driver.
func (i XTSImpl) Available() bool {
	switch i {
	case XTSGeneric:
		return true
	case XTSAESNI:
		return hasAESNI
	case XTSAESNIAVX:
		return hasAESNIAVX
	case XTSVAESAVX2:
		return hasVAESAVX2
	case XTSVAESAVX512:
		return hasVAESAVX512
	}
	return false
}

// BestXTSImpl returns the available implementation of highest priority:
// the driver the Crypto API selects for "xts(aes)".
func BestXTSImpl() XTSImpl {
	for i := len(XTSImpls) - 1; i > 0; i-- {
		if XTSImpls[i].Available() {
			return XTSImpls[i]
		}
	}
	return XTSGeneric
}

// resolve maps XTSAESNI without AES-NI to the portable code.
func (i XTSImpl) resolve() XTSImpl {
	if i == XTSAESNI && !hasAESNI {
		return XTSGeneric
	}
	return i
}

// XTS is the context of the "xts-aes-aesni" skcipher (xts(aes), generic
// template crypto/xts.c), or of another x86 XTS driver chosen with
// SetImpl: XTS-AES of IEEE Std 1619-2007 as fscrypt uses it
// for file contents. The key is two AES keys of equal length concatenated:
// the first half is the data key, the second the tweak key (32 bytes:
// AES-128-XTS, 48: AES-192-XTS, which Linux also accepts, 64: AES-256-XTS,
// fscrypt's FSCRYPT_MODE_AES_256_XTS). The zero value holds no key.
//
// The 16-byte IV is the initial tweak input: T0 = AES-encrypt(tweak key, IV);
// block j uses T0·x^j in GF(2^128). Requests of at least 16 bytes are
// accepted; a length that is not a multiple of 16 is handled by ciphertext
// stealing over the last two blocks, as IEEE 1619 and crypto/xts.c do.
// Encrypt and Decrypt leave the IV as it was; EncryptReqIV and
// DecryptReqIV work on it in place as the x86 glue works on req->iv (the
// IV becomes the tweak, then the next tweak), and EncryptIV, EncryptTweak
// and DecryptTweak are the glue's two steps on their own.
type XTS struct {
	// ForbidWeakKeys models CRYPTO_TFM_REQ_FORBID_WEAK_KEYS (set on the tfm,
	// or implied by fips_enabled): when true, SetKey rejects a key whose two
	// halves are equal with EINVAL, as xts_verify_key does
	// (include/crypto/xts.h). Linux accepts such keys otherwise, and so does
	// SetKey by default.
	ForbidWeakKeys bool

	data  Ctx
	tweak Ctx
	keyed bool
	impl  XTSImpl
}

// SetImpl makes the XTS run the implementation impl from now on; it does
// not touch the key. EOPNOTSUPP when impl is not Available (the kernel
// does not register such a driver). Like SetKey it must not race with
// requests.
func (x *XTS) SetImpl(impl XTSImpl) error {
	if !impl.Available() {
		return errno.EOPNOTSUPP
	}
	x.impl = impl
	return nil
}

// Impl returns the implementation the XTS runs (XTSGeneric where the zero
// value's XTSAESNI has no AES-NI to run on).
func (x *XTS) Impl() XTSImpl { return x.impl.resolve() }

// SetKey is xts_verify_key followed by the expansion of both halves: EINVAL
// for an odd length, for halves that are not AES key sizes (so the key must
// be 32, 48 or 64 bytes) and, with ForbidWeakKeys, for equal halves. After a
// failed SetKey the tfm holds no key.
func (x *XTS) SetKey(key []byte) error {
	x.keyed = false
	if len(key)%2 != 0 {
		return errno.EINVAL
	}
	half := len(key) / 2
	if x.ForbidWeakKeys && subtle.ConstantTimeCompare(key[:half], key[half:]) == 1 {
		return errno.EINVAL
	}
	if err := CheckKeyLen(half); err != nil {
		return err
	}
	expandKey(&x.data, key[:half], hasAESNI)
	expandKey(&x.tweak, key[half:], hasAESNI)
	x.keyed = true
	return nil
}

// Encrypt encrypts one data unit src (at least 16 bytes, EINVAL otherwise)
// into dst[:len(src)] with the tweak input *iv; ENOKEY without a key.
func (x *XTS) Encrypt(dst, src []byte, iv *[BlockSize]byte) error {
	return x.crypt(dst, src, iv, false, x.impl.resolve())
}

// Decrypt decrypts one data unit src (at least 16 bytes, EINVAL otherwise)
// into dst[:len(src)] with the tweak input *iv; ENOKEY without a key.
func (x *XTS) Decrypt(dst, src []byte, iv *[BlockSize]byte) error {
	return x.crypt(dst, src, iv, true, x.impl.resolve())
}

// crypt is XTS.Encrypt and XTS.Decrypt: the glue's xts_crypt on a copy of
// the IV, so that the caller's IV is left as it was.
func (x *XTS) crypt(dst, src []byte, iv *[BlockSize]byte, decrypt bool, impl XTSImpl) error {
	if iv == nil {
		return errno.EINVAL
	}
	t := *iv
	err := x.xtsCrypt(dst, src, &t, decrypt, impl)
	clear(t[:])
	return err
}

// EncryptIV is aes_xts_encrypt_iv (aesni_xts_encrypt_iv for
// "xts-aes-aesni"), the first step of xts_crypt in
// arch/x86/crypto/aesni-intel_glue.c: *iv is encrypted in place with the
// tweak key and so becomes the first tweak T0. ENOKEY without a key.
func (x *XTS) EncryptIV(iv *[BlockSize]byte) error {
	if !x.keyed {
		return errno.ENOKEY
	}
	encryptBlock(&x.tweak, iv[:], iv[:], hasAESNI && x.impl.resolve() != XTSGeneric)
	return nil
}

// EncryptTweak is the driver's xts_crypt_func (aes_xts_encrypt_vaes_avx512
// and its siblings in aes-xts-avx-x86_64.S, aesni_xts_enc for
// "xts-aes-aesni"): src (at least 16 bytes, EINVAL otherwise) is encrypted
// into dst[:len(src)] with *tweak as the tweak of its first block — the
// encryption of the IV is already done (EncryptIV) — and, when len(src) is
// a multiple of 16, *tweak is left holding the next tweak, T·x^(len/16),
// which is what lets the glue's slow path continue a request across walk
// steps. With a partial last block the assembly's contract leaves the
// tweak unspecified; the model leaves T·x^m, m the number of whole blocks.
// ENOKEY without a key.
func (x *XTS) EncryptTweak(dst, src []byte, tweak *[BlockSize]byte) error {
	return x.cryptTweak(dst, src, tweak, false, x.impl.resolve())
}

// DecryptTweak is EncryptTweak's inverse (aes_xts_decrypt_*), with the same
// rules for *tweak.
func (x *XTS) DecryptTweak(dst, src []byte, tweak *[BlockSize]byte) error {
	return x.cryptTweak(dst, src, tweak, true, x.impl.resolve())
}

// EncryptReqIV is the whole of the glue's xts_crypt, on *iv in place as
// the kernel works on req->iv: *iv is encrypted into the first tweak
// (EncryptIV), src is encrypted with it into dst[:len(src)]
// (EncryptTweak), and *iv is left holding the next tweak. This is what
// every x86 XTS driver does with a request; Encrypt is the same on a copy
// of the IV. Errors as Encrypt's.
func (x *XTS) EncryptReqIV(dst, src []byte, iv *[BlockSize]byte) error {
	return x.xtsCrypt(dst, src, iv, false, x.impl.resolve())
}

// DecryptReqIV is EncryptReqIV's inverse, with the same rules for *iv.
func (x *XTS) DecryptReqIV(dst, src []byte, iv *[BlockSize]byte) error {
	return x.xtsCrypt(dst, src, iv, true, x.impl.resolve())
}

// xtsCrypt is xts_crypt for every implementation, on *iv in place.
func (x *XTS) xtsCrypt(dst, src []byte, iv *[BlockSize]byte, decrypt bool, impl XTSImpl) error {
	if !x.keyed {
		return errno.ENOKEY
	}
	if len(src) < BlockSize || iv == nil {
		return errno.EINVAL
	}
	if err := checkRequest(dst, src); err != nil {
		return err
	}
	encryptBlock(&x.tweak, iv[:], iv[:], hasAESNI && impl != XTSGeneric)
	x.cryptBlocks(dst[:len(src)], src, iv, decrypt, impl)
	return nil
}

// cryptTweak is EncryptTweak and DecryptTweak: the request checks, then
// cryptBlocks.
func (x *XTS) cryptTweak(dst, src []byte, t *[BlockSize]byte, decrypt bool, impl XTSImpl) error {
	if !x.keyed {
		return errno.ENOKEY
	}
	if len(src) < BlockSize || t == nil {
		return errno.EINVAL
	}
	if err := checkRequest(dst, src); err != nil {
		return err
	}
	x.cryptBlocks(dst[:len(src)], src, t, decrypt, impl)
	return nil
}

// cryptBlocks runs the data part of a checked request (len(dst) ==
// len(src) >= 16) from tweak *t: the whole blocks but the last one of a
// stolen tail by the implementation's bulk function, the stealing in Go
// over the single-block cipher (AES-NI unless impl is the portable code).
func (x *XTS) cryptBlocks(dst, src []byte, t *[BlockSize]byte, decrypt bool, impl XTSImpl) {
	asm := hasAESNI && impl != XTSGeneric
	n := len(src)
	tail := n % BlockSize
	bulk := n - tail
	if tail != 0 {
		bulk -= BlockSize // the last whole block takes part in the stealing
	}
	if decrypt {
		xtsDecryptBlocks(&x.data, dst[:bulk], src[:bulk], t, impl)
	} else {
		xtsEncryptBlocks(&x.data, dst[:bulk], src[:bulk], t, impl)
	}
	if tail != 0 {
		if decrypt {
			xtsDecryptSteal(&x.data, dst[bulk:], src[bulk:], t, asm)
		} else {
			xtsEncryptSteal(&x.data, dst[bulk:], src[bulk:], t, asm)
		}
	}
}

// xtsEncryptSteal encrypts the last whole block and the partial block after
// it (16 < len(src) < 32) by ciphertext stealing, IEEE 1619 section 5.3.2:
// with tweaks T and T·x,
//
//	CC = XTS-block(T, P(m-1))
//	C(m) = CC[:r]
//	C(m-1) = XTS-block(T·x, P(m) || CC[r:])
func xtsEncryptSteal(c *Ctx, dst, src []byte, t *[BlockSize]byte, asm bool) {
	r := len(src) - BlockSize
	var cc, pp [BlockSize]byte
	xorBlock(cc[:], src, t[:])
	copy(pp[:r], src[BlockSize:]) // read P(m) before dst may overwrite it
	encryptBlock(c, cc[:], cc[:], asm)
	xorBlock(cc[:], cc[:], t[:])
	gf128Double(t)
	copy(pp[r:], cc[r:])
	copy(dst[BlockSize:BlockSize+r], cc[:r])
	xorBlock(pp[:], pp[:], t[:])
	encryptBlock(c, pp[:], pp[:], asm)
	xorBlock(dst, pp[:], t[:])
	clear(cc[:])
	clear(pp[:])
}

// xtsDecryptSteal inverts xtsEncryptSteal, IEEE 1619 section 5.4.2: the
// last whole ciphertext block is decrypted with the later tweak T·x first.
func xtsDecryptSteal(c *Ctx, dst, src []byte, t *[BlockSize]byte, asm bool) {
	r := len(src) - BlockSize
	t1 := *t
	gf128Double(t)
	var pp, cc [BlockSize]byte
	xorBlock(pp[:], src, t[:])
	copy(cc[:r], src[BlockSize:]) // read C(m) before dst may overwrite it
	decryptBlock(c, pp[:], pp[:], asm)
	xorBlock(pp[:], pp[:], t[:])
	copy(cc[r:], pp[r:])
	copy(dst[BlockSize:BlockSize+r], pp[:r])
	xorBlock(cc[:], cc[:], t1[:])
	decryptBlock(c, cc[:], cc[:], asm)
	xorBlock(dst, cc[:], t1[:])
	clear(cc[:])
	clear(pp[:])
	clear(t1[:])
}

// KeyZero reports whether both expanded keys are all zero.
func (x *XTS) KeyZero() bool { return x.data.IsZero() && x.tweak.IsZero() }

// Wipe zeroes both expanded keys; the XTS then holds no key.
func (x *XTS) Wipe() {
	x.data.Wipe()
	x.tweak.Wipe()
	x.keyed = false
}
