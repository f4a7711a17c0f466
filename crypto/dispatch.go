package crypto

import (
	"encoding/binary"
	"fmt"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/crypto/aes"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// The static dispatcher. Every synchronous request, whether on the heap or
// on the stack, is processed by cryptReq: a switch on the tfm's implKind,
// with templates recursing into their inner tfm through the same switch.
// Nothing in it stores the request, its IV, its scatterlists or its data
// buffers, passes them to an interface method or a func value, or hands
// them to another goroutine, so Go's escape analysis keeps on-stack
// requests (and the IVs and scatterlist arrays in their callers' frames) on
// the stack. The one exception is contained: an algorithm registered
// through RegisterSkcipher is called through an interface on heap copies of
// the data and IV. Adiantum and HCTR2 (packages crypto/adiantum and
// crypto/hctr2) run on the concrete AES types of package crypto/aes, so
// their dst, src and IV parameters do not escape and they are called
// directly.

// bounceStack is the largest request gathered into an on-stack bounce
// buffer when its scatterlists split it (filenames are at most 255 bytes);
// larger split requests use a heap buffer.
const bounceStack = 512

// countRequest counts one encrypt or decrypt request.
func countRequest(t *kernel.Task, flags uint32, cryptlen int, bio *block.Bio, enc bool) {
	if t.Ev == nil {
		return
	}
	if enc {
		t.Ev.Inc(EvEncrypt)
	} else {
		t.Ev.Inc(EvDecrypt)
	}
	if flags&CRYPTO_SKCIPHER_REQ_BIO == 0 {
		t.Ev.Add(EvCryptBytes, uint64(cryptlen))
	} else if bio != nil {
		t.Ev.Add(EvCryptBytes, uint64(bio.Size()))
	}
}

// cryptSync is crypto_skcipher_encrypt/decrypt for a synchronous tfm and a
// heap request.
func cryptSync(t *kernel.Task, tfm *Skcipher, h *reqHeader, enc bool) error {
	return cryptReq(t, tfm, h.flags, h.bio, h.cryptlen, h.iv, h.src, h.dst, enc, true)
}

// cryptSyncNoCount runs a heap request without counting it (an engine's
// worker runs requests already counted at submission).
func cryptSyncNoCount(t *kernel.Task, tfm *Skcipher, h *reqHeader, enc bool) error {
	return cryptReq(t, tfm, h.flags, h.bio, h.cryptlen, h.iv, h.src, h.dst, enc, false)
}

// cryptReq is the synchronous request path shared by heap and on-stack
// requests: count (when count is set), the CRYPTO_TFM_NEED_KEY check, then
// the request as a bio request or over its scatterlists. It takes the
// request's fields as arguments, not a request, so that an on-stack request
// passes views of its own arrays without any header being built (and
// copied) in between.
func cryptReq(t *kernel.Task, tfm *Skcipher, flags uint32, bio *block.Bio, cryptlen int, iv []byte,
	src, dst []Scatterlist, enc, count bool) error {
	if count && t.Ev != nil {
		countRequest(t, flags, cryptlen, bio, enc)
	}
	if tfm.flags&CRYPTO_TFM_NEED_KEY != 0 {
		return errno.ENOKEY
	}
	if flags&CRYPTO_SKCIPHER_REQ_BIO != 0 {
		return cryptBio(t, tfm, bio, cryptlen, iv, enc)
	}
	ivsize := tfm.alg.ivSize
	if len(iv) < ivsize || cryptlen < 0 {
		return errno.EINVAL
	}
	// The skcipher walk: when src and dst each hold the whole request in
	// their first entry (the usual case) the mode runs directly on them;
	// otherwise cryptSGBounce gathers the request into a bounce buffer
	// (skcipher_walk's slow path for blocks split across entries).
	n := cryptlen
	if n != 0 && len(src) > 0 && len(dst) > 0 && len(src[0].buf) >= n && len(dst[0].buf) >= n {
		d, s := dst[0].buf[:n], src[0].buf[:n]
		if aes.InexactOverlap(d, s) {
			return errno.EINVAL
		}
		return cryptContig(t, tfm, d, s, iv[:ivsize], enc)
	}
	return cryptSGBounce(t, tfm, dst, src, n, iv[:ivsize], enc)
}

// cryptSGBounce is the walk for an empty request and for tables that
// split it: the request gathered into a bounce buffer (on the stack up to
// bounceStack bytes), processed and scattered back. It is a function of
// its own so that the usual path does not carry its frame.
func cryptSGBounce(t *kernel.Task, tfm *Skcipher, dst, src []Scatterlist, n int, iv []byte, enc bool) error {
	if n == 0 {
		return cryptContig(t, tfm, nil, nil, iv, enc)
	}
	if sgTotal(src) < n || sgTotal(dst) < n {
		return errno.EINVAL
	}
	t.Inc(EvWalkBounce)
	var stack [bounceStack]byte
	var buf []byte
	if n <= len(stack) {
		buf = stack[:n]
	} else {
		buf = make([]byte, n)
	}
	sgCopyToBuf(buf, src)
	err := cryptContig(t, tfm, buf, buf, iv, enc)
	if err == nil {
		sgCopyFromBuf(dst, buf)
	}
	clear(buf)
	return err
}

// cryptBio is crypto_skcipher_encrypt/decrypt of a CRYPTO_SKCIPHER_REQ_BIO
// request (seed 003): req->src and req->dst are the bio cast to struct
// scatterlist *, req->cryptlen is du_bits. The RFC teaches the flag to one
// function only, xts_crypt of arch/x86/crypto/aesni-intel_glue.c, which
// every x86 XTS driver shares (xts-aes-aesni, -aesni-avx, -vaes-avx2,
// -vaes-avx512: kindXTSNI); every other driver takes the request as an
// ordinary one (cryptBioUnaware).
func cryptBio(t *kernel.Task, tfm *Skcipher, bio *block.Bio, cryptlen int, iv []byte, enc bool) error {
	t.Inc(EvBioRequest)
	if tfm.kind != kindXTSNI {
		return cryptBioUnaware(t, tfm, cryptlen, iv, enc)
	}
	return xtsCryptBio(t, tfm, bio, cryptlen, iv, enc)
}

// xtsCryptBio is the RFC's xts_crypt as posted: for every folio of the bio
// (bio_first_folio/bio_next_folio over its vectors) and every offset i from
// the folio's offset while i < offset + length, in steps of du_size = 1U <<
// du_bits, the request is pointed at du_size bytes at i
// (skcipher_request_set_folio, with req->iv = iv) and xts_crypt_one runs
// it; then `*iv = cpu_to_le64(le64_to_cpu(*iv) + 1)`.
//
// The bug as posted: xts_crypt_one (the old xts_crypt) first encrypts
// req->iv in place into the tweak (aes_xts_encrypt_iv) and the assembly
// leaves the next tweak there, so the increment lands on the tweak, not on
// the IV. Unit 0 is processed with T0 = E(K2, IV); unit k+1 with E(K2,
// le64add(T_k·x^(du/16), 1)) where it should have had E(K2, IV+k+1): every
// data unit after the first in a bio comes out wrong, on every x86 XTS
// driver. After the walk iv holds the last such value, not IV+units.
//
// Also as posted: the loop checks only where a unit starts, so a vector
// that is not a whole number of units has its last unit run past the
// vector's end (the bytes after it in the folio are processed too; past
// the folio's end the model raises a BUG); a nil folio ends the walk
// (`fi.folio` is the loop condition); a NULL bio is dereferenced (a BUG);
// the shift 1U << du_bits takes its count modulo 32 as x86 does; a unit's
// error ends the walk and is returned. The model's own rule, as for every
// request: an IV shorter than the ivsize is EINVAL.
func xtsCryptBio(t *kernel.Task, tfm *Skcipher, bio *block.Bio, duBits int, iv []byte, enc bool) error {
	if bio == nil {
		panic(&kernel.Bug{Kind: "BUG: kernel NULL pointer dereference", Func: "xts_crypt",
			Msg: "bio_first_folio on a NULL bio (req->src)", Size: -1, Offset: -1})
	}
	if len(iv) < tfm.alg.ivSize {
		return errno.EINVAL
	}
	du := int(uint32(1) << (uint(duBits) & 31))
	units := 0
	var err error
	var fi block.FolioIter
	for block.BioFirstFolio(&fi, bio, 0); fi.Folio != nil; block.BioNextFolio(&fi, bio) {
		data := fi.Folio.Data
		for i := fi.Offset; i < fi.Offset+fi.Length; i += du {
			if i < 0 || i+du > len(data) {
				panic(&kernel.Bug{Kind: "BUG", Func: "xts_crypt", Size: len(data), Offset: i + du - 1,
					Msg: "data unit runs past the end of its folio (the loop checks only where a unit starts)"})
			}
			unit := data[i : i+du]
			if err = cryptContig(t, tfm, unit, unit, iv[:16], enc); err != nil {
				break
			}
			binary.LittleEndian.PutUint64(iv, binary.LittleEndian.Uint64(iv)+1)
			units++
		}
		if err != nil {
			break
		}
	}
	t.Add(EvBioDataUnits, uint64(units))
	return err
}

// cryptBioUnaware is what a driver that never learned
// CRYPTO_SKCIPHER_REQ_BIO does with a bio request: everything but the x86
// XTS glue, i.e. the generic templates (crypto/xts.c, cbc.c, ecb.c, cts.c,
// essiv.c), Adiantum and HCTR2, the other aesni-intel_glue.c modes, a
// hardware engine and any registered driver. Each takes req->cryptlen (the
// data unit's du_bits, 9 to 12 from fscrypt) as a byte count:
//
//   - xts_init_crypt, crypto_cts_encrypt/decrypt, cts_cbc_encrypt/decrypt,
//     adiantum_crypt and hctr2_crypt reject cryptlen < 16 with -EINVAL
//     before touching src;
//   - ecb and cbc (skcipher_walk_virt, or crypto_lskcipher_crypt_sg for the
//     lskcipher templates) succeed on cryptlen 0 without a step, and fail
//     0 < cryptlen < blocksize with -EINVAL in skcipher_walk_next (total <
//     blocksize) before mapping anything;
//   - essiv_skcipher_crypt first encrypts req->iv in place with the ESSIV
//     cipher, then passes the request, flags included
//     (skcipher_request_flags), to its inner cbc, which fails as above;
//   - a hardware engine's driver checks the length the same way.
//
// So fscrypt's whole-bio read on any of them fails with EINVAL and the
// bio is left as it was (the read gets an I/O error). A cryptlen of 16 or
// more (data units of 64 KiB and up, which fscrypt never has with 4 KiB
// pages) would reach the walk, which would map the struct bio as a
// scatterlist; the model raises a BUG there.
func cryptBioUnaware(t *kernel.Task, tfm *Skcipher, cryptlen int, iv []byte, enc bool) error {
	switch tfm.kind {
	case kindESSIV:
		if len(iv) < 16 {
			return errno.EINVAL
		}
		tfm.cipher.encrypt(t, iv[:16], iv[:16])
		return cryptBioUnaware(t, tfm.child, cryptlen, iv, enc)
	case kindECB, kindCBC, kindECBNI, kindCBCNI, kindEngine:
		if cryptlen == 0 {
			return nil
		}
	}
	if cryptlen < 16 {
		return errno.EINVAL
	}
	panic(&kernel.Bug{Kind: "BUG", Func: "skcipher_walk_virt", Size: -1, Offset: -1,
		Msg: fmt.Sprintf("%s: a CRYPTO_SKCIPHER_REQ_BIO request of %d bytes walked as scatterlists (req->src is a struct bio)", tfm.alg.driver, cryptlen)})
}

// cryptBioEngine is what an asynchronous engine's driver does with a
// CRYPTO_SKCIPHER_REQ_BIO request it dequeued: it never learned the flag
// (see cryptBioUnaware). The engine's worker calls it instead of computing
// the request with its software fallback.
func cryptBioEngine(t *kernel.Task, tfm *Skcipher, cryptlen int, iv []byte, enc bool) error {
	t.Inc(EvBioRequest)
	return cryptBioUnaware(t, tfm, cryptlen, iv, enc)
}

// ctsFPUSections is the number of kernel_fpu sections cts_cbc_encrypt and
// cts_cbc_decrypt (aesni-intel_glue.c) enter for a request of n >= 16
// bytes: one for the CBC part when cbc_blocks = DIV_ROUND_UP(n, 16) - 2 is
// positive (or n is one block), one for the stealing step when n > 16.
func ctsFPUSections(n int) uint64 {
	var s uint64
	if n == 16 || (n+15)/16-2 > 0 {
		s++
	}
	if n > 16 {
		s++
	}
	return s
}

// blocks16 returns the number of 16-byte blocks covering n bytes.
func blocks16(n int) uint64 { return uint64(n+15) / 16 }

// cryptContig runs tfm's mode over contiguous dst and src of equal length
// (the same slice for in-place operation); iv has exactly the tfm's ivsize
// bytes. This is the switch every synchronous request goes through.
func cryptContig(t *kernel.Task, tfm *Skcipher, dst, src, iv []byte, enc bool) error {
	n := len(src)
	var err error
	switch tfm.kind {
	case kindECBNI:
		// ecb_crypt: one kernel_fpu section per walk step.
		if enc {
			err = tfm.ecbNI.Encrypt(dst, src)
		} else {
			err = tfm.ecbNI.Decrypt(dst, src)
		}
		if err == nil && n > 0 {
			t.Add(EvAESBlocks, uint64(n/16))
			t.Inc(EvFPUBegin)
		}
	case kindCBCNI:
		// cbc_encrypt/cbc_decrypt: one kernel_fpu section per walk step.
		if enc {
			err = tfm.cbcNI.Encrypt(dst, src, (*[16]byte)(iv))
		} else {
			err = tfm.cbcNI.Decrypt(dst, src, (*[16]byte)(iv))
		}
		if err == nil && n > 0 {
			t.Add(EvAESBlocks, uint64(n/16))
			t.Inc(EvFPUBegin)
		}
	case kindCTSNI:
		if enc {
			err = tfm.ctsNI.Encrypt(dst, src, (*[16]byte)(iv))
		} else {
			err = tfm.ctsNI.Decrypt(dst, src, (*[16]byte)(iv))
		}
		if err == nil {
			t.Add(EvAESBlocks, blocks16(n))
			t.Add(EvFPUBegin, ctsFPUSections(n))
		}
	case kindXTSNI:
		// xts_crypt, shared by every x86 XTS driver: the tfm's XTS runs
		// the assembly of its driver (aes.XTS.SetImpl at init) in one
		// kernel_fpu section (the single-page fast path), on req->iv in
		// place: the IV becomes the tweak and then the next tweak.
		if enc {
			err = tfm.xtsNI.EncryptReqIV(dst, src, (*[16]byte)(iv))
		} else {
			err = tfm.xtsNI.DecryptReqIV(dst, src, (*[16]byte)(iv))
		}
		if err == nil {
			t.Add(EvAESBlocks, blocks16(n)+1)
			t.Inc(EvFPUBegin)
		}
	case kindECB:
		err = ecbCrypt(t, tfm.cipher, dst, src, enc)
	case kindCBC:
		err = cbcCrypt(t, tfm.cipher, dst, src, (*[16]byte)(iv), enc)
	case kindCTS:
		err = ctsCrypt(t, tfm, dst, src, iv, enc)
	case kindXTS:
		err = xtsCrypt(t, tfm, dst, src, iv, enc)
	case kindESSIV:
		// essiv_skcipher_crypt: the IV is encrypted in place with the
		// salt-keyed cipher, then the inner mode runs with it.
		if len(iv) != 16 {
			return errno.EINVAL
		}
		tfm.cipher.encrypt(t, iv, iv)
		err = cryptContig(t, tfm.child, dst, src, iv, enc)
	case kindAdiantum:
		if enc {
			err = tfm.adiant.Encrypt(dst, src, iv)
		} else {
			err = tfm.adiant.Decrypt(dst, src, iv)
		}
		if err == nil {
			t.Inc(EvAESBlocks)
		}
	case kindHCTR2:
		if enc {
			err = tfm.hctr.Encrypt(dst, src, iv)
		} else {
			err = tfm.hctr.Decrypt(dst, src, iv)
		}
		if err == nil {
			t.Add(EvAESBlocks, blocks16(n)+1)
		}
	case kindExternal:
		err = cryptExternal(tfm.extID, dst, src, iv, enc)
	default:
		// An engine tfm never reaches the dispatcher: requests to it are
		// queued (heap) or refused with EAGAIN (stack).
		err = errno.EINVAL
	}
	return err
}

// cryptExternal calls a registered implementation through its interface on
// heap copies, so that the caller's memory never flows into the interface
// call. This path allocates.
func cryptExternal(id uint64, dst, src, iv []byte, enc bool) error {
	impl := extImpl(id)
	if impl == nil {
		return errno.EINVAL
	}
	buf := make([]byte, len(src))
	copy(buf, src)
	ivc := make([]byte, len(iv))
	copy(ivc, iv)
	var err error
	if enc {
		err = impl.Encrypt(buf, buf, ivc)
	} else {
		err = impl.Decrypt(buf, buf, ivc)
	}
	if err == nil {
		copy(dst, buf)
		copy(iv, ivc)
	}
	return err
}

// ecbCrypt is the ecb template over a single-block cipher: each block
// through crypto_cipher_encrypt_one. Errors: EINVAL unless n is a multiple
// of the block size (the skcipher walk's check).
func ecbCrypt(t *kernel.Task, c *cipherTfm, dst, src []byte, enc bool) error {
	n := len(src)
	if n%16 != 0 {
		return errno.EINVAL
	}
	for i := 0; i < n; i += 16 {
		if enc {
			c.ctx.Encrypt(dst[i:i+16], src[i:i+16])
		} else {
			c.ctx.Decrypt(dst[i:i+16], src[i:i+16])
		}
	}
	c.countBlocks(t, n/16)
	return nil
}

// cbcCrypt is the cbc template (crypto/cbc.c) over a single-block cipher;
// it works in place and leaves the last ciphertext block in iv, as the
// kernel leaves it in req->iv. Errors: EINVAL unless n is a multiple of 16.
func cbcCrypt(t *kernel.Task, c *cipherTfm, dst, src []byte, iv *[16]byte, enc bool) error {
	n := len(src)
	if n%16 != 0 {
		return errno.EINVAL
	}
	var x [16]byte
	if enc {
		for i := 0; i < n; i += 16 {
			subtleXor16(&x, (*[16]byte)(src[i:i+16]), iv)
			c.ctx.Encrypt(dst[i:i+16], x[:])
			copy(iv[:], dst[i:i+16])
		}
	} else {
		for i := 0; i < n; i += 16 {
			var ct [16]byte
			copy(ct[:], src[i:i+16])
			c.ctx.Decrypt(x[:], ct[:])
			subtleXor16((*[16]byte)(dst[i:i+16]), &x, iv)
			*iv = ct
		}
	}
	clear(x[:])
	c.countBlocks(t, n/16)
	return nil
}

// subtleXor16 sets dst = a ^ b for 16-byte blocks (crypto_xor_cpy).
func subtleXor16(dst, a, b *[16]byte) {
	x0 := binary.LittleEndian.Uint64(a[0:]) ^ binary.LittleEndian.Uint64(b[0:])
	x1 := binary.LittleEndian.Uint64(a[8:]) ^ binary.LittleEndian.Uint64(b[8:])
	binary.LittleEndian.PutUint64(dst[0:], x0)
	binary.LittleEndian.PutUint64(dst[8:], x1)
}

// ctsCrypt is the cts template (crypto/cts.c), CBC-CS3 over the inner CBC
// tfm: CBC over all but the last (partial or full) block, then the last two
// blocks swapped with the final one cut to its length. A request of exactly
// one block is plain CBC; shorter is EINVAL. After encryption iv holds the
// ciphertext block at offset-16 (the last CBC output), after decryption the
// input block there, as the kernel leaves req->iv.
func ctsCrypt(t *kernel.Task, tfm *Skcipher, dst, src, iv []byte, enc bool) error {
	const bs = 16
	n := len(src)
	if n < bs {
		return errno.EINVAL
	}
	cbcBlocks := (n+bs-1)/bs - 1
	child := tfm.child
	if cbcBlocks <= 0 {
		return cryptContig(t, child, dst, src, iv, enc)
	}
	offset := cbcBlocks * bs
	lastn := n - offset
	var d [2 * bs]byte
	if enc {
		if err := cryptContig(t, child, dst[:offset], src[:offset], iv, true); err != nil {
			return err
		}
		// cts_cbc_encrypt: d = P_n zero-padded || C_{n-1}; written back
		// at offset-16 it puts the padded P_n where C_{n-1} was and the
		// first lastn bytes of C_{n-1} at the end; one more CBC block
		// over the padded P_n with iv = C_{n-1} gives the final C_{n-1}.
		copy(d[bs:], dst[offset-bs:offset])
		copy(d[:lastn], src[offset:n])
		copy(dst[offset-bs:n], d[:bs+lastn])
		clear(d[:])
		blk := dst[offset-bs : offset]
		return cryptContig(t, child, blk, blk, iv, true)
	}
	// crypto_cts_decrypt: keep C_{n-2} (or the IV) for the final block.
	var space [bs]byte
	if cbcBlocks <= 1 {
		copy(space[:], iv)
	} else {
		copy(space[:], src[offset-2*bs:offset-bs])
	}
	// The partial last ciphertext block is read before anything is
	// written over it (in place, dst[offset:] is src[offset:]).
	copy(d[:lastn], src[offset:n])
	if err := cryptContig(t, child, dst[:offset], src[:offset], iv, false); err != nil {
		return err
	}
	// cts_cbc_decrypt: D(C') = (CBC output) ^ C_{n-2}; X = D(C') ^ (C_n
	// zero-padded); P_n = X[:lastn]; E = C_n || X[lastn:], which
	// CBC-decrypts with iv = C_{n-2} to P_{n-1}.
	copy(d[bs:], dst[offset-bs:offset])
	for i := 0; i < bs; i++ {
		d[bs+i] ^= space[i]
	}
	for i := 0; i < lastn; i++ {
		d[bs+i] ^= d[i]
	}
	copy(d[lastn:bs], d[bs+lastn:])
	copy(dst[offset-bs:n], d[:bs+lastn])
	clear(d[:])
	blk := dst[offset-bs : offset]
	err := cryptContig(t, child, blk, blk, space[:], false)
	clear(space[:])
	return err
}

// gf128MulXBLE is gf128mul_x_ble (include/crypto/gf128mul.h): multiply the
// XTS tweak by x in GF(2^128), little-endian block convention.
func gf128MulXBLE(t *[16]byte) {
	a := binary.LittleEndian.Uint64(t[0:])
	b := binary.LittleEndian.Uint64(t[8:])
	carry := b >> 63
	b = b<<1 | a>>63
	a = a<<1 ^ carry*0x87
	binary.LittleEndian.PutUint64(t[0:], a)
	binary.LittleEndian.PutUint64(t[8:], b)
}

// xtsXorTweaks XORs every whole block of buf (from src) with the tweak
// sequence starting at *t0: block j gets T0·x^j. With a tail (ciphertext
// stealing), the last whole block uses T_m instead of T_{m-1} when
// decrypting, as xts_xor_tweak arranges. It returns the two tweaks the
// stealing step needs: tPrev = T_{m-1}, tLast = T_m, where m-1 is the index
// of the last whole block.
func xtsXorTweaks(dst, src []byte, t0 *[16]byte, tail bool, enc bool) (tPrev, tLast [16]byte) {
	whole := len(src) / 16 * 16
	t := *t0
	for i := 0; i < whole; i += 16 {
		if tail && i == whole-16 {
			tPrev = t
			tLast = t
			gf128MulXBLE(&tLast)
			use := &tPrev
			if !enc {
				use = &tLast
			}
			subtleXor16((*[16]byte)(dst[i:i+16]), (*[16]byte)(src[i:i+16]), use)
			break
		}
		subtleXor16((*[16]byte)(dst[i:i+16]), (*[16]byte)(src[i:i+16]), &t)
		gf128MulXBLE(&t)
	}
	return tPrev, tLast
}

// xtsCrypt is the xts template (crypto/xts.c) over an ECB child and a tweak
// cipher: T = E(tweak key, IV); every whole block is XORed with its tweak,
// the child ECB-processes them in place, and they are XORed again; a
// partial last block is handled by ciphertext stealing (xts_cts_final).
// Requests shorter than 16 bytes are EINVAL; the IV is not modified.
func xtsCrypt(t *kernel.Task, tfm *Skcipher, dst, src, iv []byte, enc bool) error {
	n := len(src)
	if n < 16 || len(iv) != 16 {
		return errno.EINVAL
	}
	tail := n % 16
	whole := n - tail
	var t0 [16]byte
	tfm.cipher.encrypt(t, t0[:], iv)
	// Save the partial source block before dst (which may be src) is
	// written.
	var part [16]byte
	copy(part[:], src[whole:])
	xtsXorTweaks(dst[:whole], src[:whole], &t0, tail != 0, enc)
	if err := cryptContig(t, tfm.child, dst[:whole], dst[:whole], nil, enc); err != nil {
		return err
	}
	tPrev, tLast := xtsXorTweaks(dst[:whole], dst[:whole], &t0, tail != 0, enc)
	if tail == 0 {
		return nil
	}
	// xts_cts_final: b = (last whole output block), b[:tail] <- partial
	// input; b ^= T; the child processes b; b ^= T; b goes to the last
	// whole block's place and the old block's first tail bytes become
	// the partial output.
	tFinal := &tLast
	if !enc {
		tFinal = &tPrev
	}
	last := dst[whole-16 : whole]
	var b [16]byte
	copy(b[:], last)
	copy(dst[whole:n], b[:tail])
	copy(b[:tail], part[:tail])
	subtleXor16(&b, &b, tFinal)
	if err := cryptContig(t, tfm.child, b[:], b[:], nil, enc); err != nil {
		return err
	}
	subtleXor16(&b, &b, tFinal)
	copy(last, b[:])
	clear(b[:])
	clear(part[:])
	return nil
}
