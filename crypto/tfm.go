package crypto

import (
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"fmt"

	"github.com/vfslab/vfslab/crypto/adiantum"
	"github.com/vfslab/vfslab/crypto/aes"
	"github.com/vfslab/vfslab/crypto/hctr2"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// Frontend sizes on x86-64 (crypto_create_tfm_node allocates tfmsize +
// sizeof(struct crypto_tfm) + cra_ctxsize in one kzalloc).
const (
	// sizeofCryptoTfm is sizeof(struct crypto_tfm): refcnt, crt_flags,
	// node, fb, exit, __crt_alg (40 bytes).
	sizeofCryptoTfm = 40
	// skcipherTfmSize is offsetof(struct crypto_skcipher, base): reqsize,
	// padded.
	skcipherTfmSize = 8
)

// Skcipher is a symmetric key cipher handle, struct crypto_skcipher
// (include/crypto/skcipher.h), made by API.AllocSkcipher and freed with
// Free. After SetKey it may be used by any number of requests at once from
// any goroutines (the kernel's rule: encrypt/decrypt do not modify the tfm);
// SetKey itself must not race with requests.
type Skcipher struct {
	api     *API
	alg     *Alg
	flags   uint32 // crt_flags
	reqsize int
	mem     []byte // the tfm's kzalloc'd memory (accounting)
	kind    implKind
	freed   bool

	// Implementation context; which fields are set depends on kind.
	ecbNI  *aes.ECB
	cbcNI  *aes.CBC
	ctsNI  *aes.CTSCBC
	xtsNI  *aes.XTS
	cipher *cipherTfm // ecb/cbc: the block cipher; xts: the tweak cipher; essiv: the IV cipher
	child  *Skcipher  // cts/essiv: inner mode; xts: inner ecb; engine: software fallback
	adiant *adiantum.Cipher
	hctr   *hctr2.Cipher
	extID  uint64 // the SkcipherImpl in extImpls (kept out of the tfm, see cryptExternal)
	engine *Engine
}

// SyncSkcipher is struct crypto_sync_skcipher: an Skcipher guaranteed
// synchronous with reqsize <= MaxSyncSkcipherReqSize, made by
// API.AllocSyncSkcipher. Only a SyncSkcipher can be given to a
// SyncSkcipherRequestOnStack (the type check of
// SYNC_SKCIPHER_REQUEST_ON_STACK). It has every method of Skcipher.
type SyncSkcipher struct {
	Skcipher
}

// Base returns the underlying Skcipher (&tfm->base).
func (s *SyncSkcipher) Base() *Skcipher { return &s.Skcipher }

// cipherTfm is struct crypto_cipher: a single-block cipher tfm ("aes"), the
// child of the ecb/cbc templates and the tweak/IV cipher of xts and essiv.
type cipherTfm struct {
	alg   *Alg
	ctx   aes.Ctx
	mem   []byte
	keyed bool
	// fpu is set for "aes-aesni", whose aes_set_key, aesni_encrypt and
	// aesni_decrypt each run in a kernel_fpu section (aes-generic uses
	// none).
	fpu bool
}

// encrypt is crypto_cipher_encrypt_one: one block, counted.
func (c *cipherTfm) encrypt(t *kernel.Task, dst, src []byte) {
	c.ctx.Encrypt(dst, src)
	c.countBlocks(t, 1)
}

// countBlocks counts n single-block operations of the cipher (and the
// kernel_fpu section each enters on "aes-aesni"), once per call.
func (c *cipherTfm) countBlocks(t *kernel.Task, n int) {
	t.Add(EvAESBlocks, uint64(n))
	if c.fpu {
		t.Add(EvFPUBegin, uint64(n))
	}
}

// AllocSkcipher is crypto_alloc_skcipher (crypto/skcipher.c): it looks up
// name ("xts(aes)" or a driver name such as "xts-aes-aesni") under type/mask
// with the skcipher frontend's type bits, instantiating templates as needed,
// and allocates a tfm of the best match. The tfm needs a key
// (CRYPTO_TFM_NEED_KEY) until SetKey succeeds.
//
// Passing CRYPTO_ALG_ASYNC in mask (type 0) excludes asynchronous
// implementations, as callers that cannot wait do; fscrypt (Linux 6.17)
// masks CRYPTO_ALG_ASYNC | CRYPTO_ALG_ALLOCATES_MEMORY |
// CRYPTO_ALG_KERN_DRIVER_ONLY.
//
// Errors: ENOENT (no such algorithm), EINVAL (a template rejected its
// arguments), ENAMETOOLONG, ENOMEM (allocation of the tfm or of a child
// failed under fault injection; nothing is leaked).
func (api *API) AllocSkcipher(t *kernel.Task, name string, typ, mask uint32) (*Skcipher, error) {
	defer t.Trace("crypto_alloc_skcipher")()
	typ, mask = skcipherTypeMask(typ, mask)
	alg, err := api.Lookup(t, name, typ, mask)
	if err != nil {
		return nil, err
	}
	if t.Tracing() {
		t.TraceNote("%s -> %s (priority %d)", name, alg.DriverName(), alg.Priority())
	}
	tfm := new(Skcipher)
	if err := api.initSkcipher(t, tfm, alg); err != nil {
		return nil, err
	}
	return tfm, nil
}

// AllocSyncSkcipher is crypto_alloc_sync_skcipher: AllocSkcipher with
// CRYPTO_ALG_ASYNC and CRYPTO_ALG_SKCIPHER_REQSIZE_LARGE forced into the
// mask (and out of the type), so only synchronous algorithms whose requests
// fit an on-stack request qualify. A tfm whose reqsize still exceeds
// MaxSyncSkcipherReqSize is freed with a WARN and EINVAL, as the kernel
// does. Errors: those of AllocSkcipher, and EINVAL.
func (api *API) AllocSyncSkcipher(t *kernel.Task, name string, typ, mask uint32) (*SyncSkcipher, error) {
	defer t.Trace("crypto_alloc_sync_skcipher")()
	mask |= CRYPTO_ALG_ASYNC | CRYPTO_ALG_SKCIPHER_REQSIZE_LARGE
	typ &^= CRYPTO_ALG_ASYNC | CRYPTO_ALG_SKCIPHER_REQSIZE_LARGE
	typ, mask = skcipherTypeMask(typ, mask)
	alg, err := api.Lookup(t, name, typ, mask)
	if err != nil {
		return nil, err
	}
	if t.Tracing() {
		t.TraceNote("%s -> %s (priority %d)", name, alg.DriverName(), alg.Priority())
	}
	s := new(SyncSkcipher)
	if err := api.initSkcipher(t, &s.Skcipher, alg); err != nil {
		return nil, err
	}
	if t.WarnOn(s.reqsize > MaxSyncSkcipherReqSize, "crypto_alloc_sync_skcipher: reqsize > MAX_SYNC_SKCIPHER_REQSIZE") {
		s.Free(t)
		return nil, errno.EINVAL
	}
	return s, nil
}

// initSkcipher is crypto_create_tfm + crypto_skcipher_init_tfm + the
// algorithm's init: one kzalloc of the frontend size plus cra_ctxsize, a
// reference on the algorithm, and the children a template or driver needs.
// On failure everything allocated so far is released.
func (api *API) initSkcipher(t *kernel.Task, tfm *Skcipher, alg *Alg) error {
	mem, err := t.Kzalloc(siteTfm, skcipherTfmSize+sizeofCryptoTfm+alg.ctxSize, kmem.GFPKernel)
	if err != nil {
		return err
	}
	*tfm = Skcipher{api: api, alg: alg, reqsize: alg.reqSize, mem: mem, kind: alg.kind}
	alg.refcnt.Add(1)
	t.Inc(EvTfmAlloc)
	if err := tfm.initCtx(t); err != nil {
		tfm.destroy(t)
		return err
	}
	if alg.maxKey != 0 {
		tfm.flags |= CRYPTO_TFM_NEED_KEY
	}
	return nil
}

// initCtx sets up the implementation context (the algorithm's init_tfm).
func (tfm *Skcipher) initCtx(t *kernel.Task) error {
	alg := tfm.alg
	var err error
	switch tfm.kind {
	case kindECBNI:
		tfm.ecbNI = new(aes.ECB)
	case kindCBCNI:
		tfm.cbcNI = new(aes.CBC)
	case kindCTSNI:
		tfm.ctsNI = new(aes.CTSCBC)
	case kindXTSNI:
		tfm.xtsNI = new(aes.XTS)
		err = tfm.xtsNI.SetImpl(alg.xtsImpl)
	case kindECB, kindCBC:
		tfm.cipher, err = createCipher(t, alg.spawns[0])
	case kindCTS:
		tfm.child = new(Skcipher)
		if err = tfm.api.initSkcipher(t, tfm.child, alg.spawns[0]); err != nil {
			tfm.child = nil
		}
	case kindXTS, kindESSIV:
		tfm.child = new(Skcipher)
		if err = tfm.api.initSkcipher(t, tfm.child, alg.spawns[0]); err != nil {
			tfm.child = nil
			return err
		}
		tfm.cipher, err = tfm.api.allocCipher(t, alg.cipherName)
	case kindAdiantum:
		tfm.adiant = new(adiantum.Cipher)
	case kindHCTR2:
		tfm.hctr = new(hctr2.Cipher)
	case kindEngine:
		tfm.engine = alg.engine
		tfm.child, err = tfm.api.AllocSkcipher(t, alg.name, 0, CRYPTO_ALG_ASYNC|CRYPTO_ALG_NEED_FALLBACK)
	case kindExternal:
		impl := alg.ext.New()
		if impl == nil {
			return errno.EINVAL
		}
		tfm.extID = extRegister(impl)
	default:
		err = errno.EINVAL
	}
	return err
}

// allocCipher is crypto_alloc_cipher: the best single-block cipher named
// name.
func (api *API) allocCipher(t *kernel.Task, name string) (*cipherTfm, error) {
	alg, err := api.Lookup(t, name, CRYPTO_ALG_TYPE_CIPHER, CRYPTO_ALG_TYPE_MASK)
	if err != nil {
		return nil, err
	}
	return createCipher(t, alg)
}

// createCipher allocates a cipher tfm of alg (crypto_create_tfm for the
// cipher frontend, whose tfmsize is 0).
func createCipher(t *kernel.Task, alg *Alg) (*cipherTfm, error) {
	if alg.kind != kindCipher {
		return nil, errno.EINVAL
	}
	mem, err := t.Kzalloc(siteTfm, sizeofCryptoTfm+alg.ctxSize, kmem.GFPKernel)
	if err != nil {
		return nil, err
	}
	alg.refcnt.Add(1)
	t.Inc(EvTfmAlloc)
	return &cipherTfm{alg: alg, mem: mem, fpu: alg.driver == "aes-aesni"}, nil
}

// setKey is crypto_cipher_setkey: length check against cia_min/max_keysize
// (EINVAL), then aes_expandkey.
func (c *cipherTfm) setKey(t *kernel.Task, key []byte) error {
	c.keyed = false
	if len(key) < c.alg.minKey || len(key) > c.alg.maxKey {
		return errno.EINVAL
	}
	if err := aes.ExpandKey(&c.ctx, key); err != nil {
		return err
	}
	t.Inc(EvKeyExpansion)
	if c.fpu {
		t.Inc(EvFPUBegin)
	}
	c.keyed = true
	return nil
}

// free is crypto_free_cipher: the key schedule is wiped with the memory.
func (c *cipherTfm) free(t *kernel.Task) {
	c.ctx.Wipe()
	c.keyed = false
	t.KfreeSensitive(siteTfm, c.mem)
	c.alg.refcnt.Add(-1)
	t.Inc(EvTfmFree)
}

// destroy releases the tfm and its children (crypto_destroy_tfm: exit, then
// kfree_sensitive of the memory, then the algorithm reference).
func (tfm *Skcipher) destroy(t *kernel.Task) {
	if tfm.child != nil {
		tfm.child.Free(t)
		tfm.child = nil
	}
	if tfm.cipher != nil {
		tfm.cipher.free(t)
		tfm.cipher = nil
	}
	tfm.wipe()
	if tfm.extID != 0 {
		extImpls.Delete(tfm.extID)
		tfm.extID = 0
	}
	t.KfreeSensitive(siteTfm, tfm.mem)
	tfm.alg.refcnt.Add(-1)
	tfm.freed = true
	t.Inc(EvTfmFree)
}

// wipe zeroes the key material of the implementation context.
func (tfm *Skcipher) wipe() {
	switch {
	case tfm.ecbNI != nil:
		tfm.ecbNI.Wipe()
	case tfm.cbcNI != nil:
		tfm.cbcNI.Wipe()
	case tfm.ctsNI != nil:
		tfm.ctsNI.Wipe()
	case tfm.xtsNI != nil:
		tfm.xtsNI.Wipe()
	case tfm.adiant != nil:
		*tfm.adiant = adiantum.Cipher{}
	case tfm.hctr != nil:
		*tfm.hctr = hctr2.Cipher{}
	}
}

// KeyWiped reports whether no key material is left in the tfm: every key
// schedule of its implementation context, its block cipher and its
// children is zero. A freed tfm must report true (kfree_sensitive); tests
// of key removal look at it.
func (tfm *Skcipher) KeyWiped() bool {
	if tfm.child != nil && !tfm.child.KeyWiped() {
		return false
	}
	if tfm.cipher != nil && !tfm.cipher.ctx.IsZero() {
		return false
	}
	switch {
	case tfm.ecbNI != nil:
		return tfm.ecbNI.KeyZero()
	case tfm.cbcNI != nil:
		return tfm.cbcNI.KeyZero()
	case tfm.ctsNI != nil:
		return tfm.ctsNI.KeyZero()
	case tfm.xtsNI != nil:
		return tfm.xtsNI.KeyZero()
	case tfm.adiant != nil:
		return *tfm.adiant == adiantum.Cipher{}
	case tfm.hctr != nil:
		return *tfm.hctr == hctr2.Cipher{}
	}
	return true
}

// Free is crypto_free_skcipher: it frees the tfm, its children and its
// memory (kfree_sensitive: keys are wiped) and drops the algorithm
// reference. Free of nil does nothing; a second Free of the same tfm is
// reported with a WARN and ignored (the kernel would use freed memory).
func (tfm *Skcipher) Free(t *kernel.Task) {
	if tfm == nil {
		return
	}
	if t.WarnOn(tfm.freed, "crypto_free_skcipher: tfm already freed") {
		return
	}
	tfm.destroy(t)
}

// SetKey is crypto_skcipher_setkey: a key length outside
// [min_keysize, max_keysize] gives EINVAL and leaves the tfm as it was (a
// previous key stays usable, as in the kernel); otherwise the driver's
// setkey runs, and on its failure (e.g. EINVAL for an odd XTS key or, with
// CRYPTO_TFM_REQ_FORBID_WEAK_KEYS, equal XTS halves) the tfm needs a key
// again (CRYPTO_TFM_NEED_KEY). Success clears CRYPTO_TFM_NEED_KEY.
func (tfm *Skcipher) SetKey(t *kernel.Task, key []byte) error {
	t.Inc(EvSetkey)
	if len(key) < tfm.alg.minKey || len(key) > tfm.alg.maxKey {
		return errno.EINVAL
	}
	if err := tfm.setKey(t, key); err != nil {
		if tfm.alg.maxKey != 0 {
			tfm.flags |= CRYPTO_TFM_NEED_KEY
		}
		return err
	}
	tfm.flags &^= CRYPTO_TFM_NEED_KEY
	return nil
}

// setKey is the algorithm's setkey.
func (tfm *Skcipher) setKey(t *kernel.Task, key []byte) error {
	switch tfm.kind {
	case kindECBNI:
		// aesni_skcipher_setkey: aes_set_key_common, which checks the
		// length and then runs aesni_set_key in one kernel_fpu section.
		t.Inc(EvKeyExpansion)
		return countFPU(t, tfm.ecbNI.SetKey(key), 1)
	case kindCBCNI:
		t.Inc(EvKeyExpansion)
		return countFPU(t, tfm.cbcNI.SetKey(key), 1)
	case kindCTSNI:
		t.Inc(EvKeyExpansion)
		return countFPU(t, tfm.ctsNI.SetKey(key), 1)
	case kindXTSNI:
		if err := xtsVerifyKey(tfm.flags, key); err != nil {
			return err
		}
		tfm.xtsNI.ForbidWeakKeys = tfm.flags&CRYPTO_TFM_REQ_FORBID_WEAK_KEYS != 0
		// xts_setkey_aesni: aes_set_key_common for each half.
		t.Add(EvKeyExpansion, 2)
		return countFPU(t, tfm.xtsNI.SetKey(key), 2)
	case kindECB, kindCBC:
		return tfm.cipher.setKey(t, key)
	case kindCTS:
		return tfm.child.setKeyChild(t, tfm.flags, key)
	case kindXTS:
		// crypto/xts.c setkey: verify, tweak cipher takes the second
		// half, the ECB child the first.
		if err := xtsVerifyKey(tfm.flags, key); err != nil {
			return err
		}
		half := len(key) / 2
		if err := tfm.cipher.setKey(t, key[half:]); err != nil {
			return err
		}
		return tfm.child.setKeyChild(t, tfm.flags, key[:half])
	case kindESSIV:
		// essiv_skcipher_setkey: key the inner mode, then the IV cipher
		// with the hash of the key.
		if err := tfm.child.setKeyChild(t, tfm.flags, key); err != nil {
			return err
		}
		var salt [64]byte
		n := tfm.essivSalt(&salt, key)
		err := tfm.cipher.setKey(t, salt[:n])
		clear(salt[:])
		return err
	case kindAdiantum:
		t.Inc(EvKeyExpansion)
		return tfm.adiant.SetKey(key)
	case kindHCTR2:
		t.Inc(EvKeyExpansion)
		return tfm.hctr.SetKey(key)
	case kindEngine:
		// The hardware takes the key; the model programs its software
		// fallback with it.
		return tfm.child.setKeyChild(t, tfm.flags, key)
	case kindExternal:
		// An interface call makes Go assume the key escapes, which
		// would move every caller's on-stack key (fscrypt's file
		// nonce, say) to the heap; the external driver gets a copy
		// made here instead, only when it runs, wiped afterwards.
		k := make([]byte, len(key))
		copy(k, key)
		err := extImpl(tfm.extID).SetKey(k)
		clear(k)
		return err
	}
	return errno.EINVAL
}

// countFPU counts n kernel_fpu sections when err is nil and returns err.
func countFPU(t *kernel.Task, err error, n uint64) error {
	if err == nil {
		t.Add(EvFPUBegin, n)
	}
	return err
}

// essivSalt hashes key with the instance's hash into salt and returns the
// digest size.
func (tfm *Skcipher) essivSalt(salt *[64]byte, key []byte) int {
	if tfm.alg.spawns[1].kind == kindSHA512 {
		*salt = sha512.Sum512(key)
		return sha512.Size
	}
	s := sha256.Sum256(key)
	copy(salt[:], s[:])
	clear(s[:])
	return sha256.Size
}

// setKeyChild is what a template does to its child at setkey: pass the
// parent's request flags down, then crypto_skcipher_setkey on the child.
func (tfm *Skcipher) setKeyChild(t *kernel.Task, parentFlags uint32, key []byte) error {
	tfm.flags = tfm.flags&^CRYPTO_TFM_REQ_MASK | parentFlags&CRYPTO_TFM_REQ_MASK
	return tfm.SetKey(t, key)
}

// xtsVerifyKey is xts_verify_key (include/crypto/xts.h): an odd length, or
// equal halves when weak keys are forbidden, is EINVAL.
func xtsVerifyKey(tfmFlags uint32, key []byte) error {
	if len(key)%2 != 0 {
		return errno.EINVAL
	}
	half := len(key) / 2
	if tfmFlags&CRYPTO_TFM_REQ_FORBID_WEAK_KEYS != 0 && subtle.ConstantTimeCompare(key[:half], key[half:]) == 1 {
		return errno.EINVAL
	}
	return nil
}

// Alg returns the algorithm of the tfm (crypto_skcipher_alg).
func (tfm *Skcipher) Alg() *Alg { return tfm.alg }

// AlgName returns cra_name (crypto_skcipher_alg_name).
func (tfm *Skcipher) AlgName() string { return tfm.alg.name }

// DriverName is crypto_skcipher_driver_name.
func (tfm *Skcipher) DriverName() string { return tfm.alg.driver }

// IVSize is crypto_skcipher_ivsize.
func (tfm *Skcipher) IVSize() int { return tfm.alg.ivSize }

// BlockSize is crypto_skcipher_blocksize.
func (tfm *Skcipher) BlockSize() int { return tfm.alg.blockSize }

// MinKeySize is crypto_skcipher_min_keysize.
func (tfm *Skcipher) MinKeySize() int { return tfm.alg.minKey }

// MaxKeySize is crypto_skcipher_max_keysize.
func (tfm *Skcipher) MaxKeySize() int { return tfm.alg.maxKey }

// ReqSize is crypto_skcipher_reqsize: the request context an allocated
// request carries after its SizeofSkcipherRequest header, and what an
// on-stack request must have room for.
func (tfm *Skcipher) ReqSize() int { return tfm.reqsize }

// Async reports whether the tfm's algorithm is asynchronous
// (crypto_skcipher_alg(tfm)->base.cra_flags & CRYPTO_ALG_ASYNC).
func (tfm *Skcipher) Async() bool { return tfm.alg.flags&CRYPTO_ALG_ASYNC != 0 }

// GetFlags is crypto_skcipher_get_flags.
func (tfm *Skcipher) GetFlags() uint32 { return tfm.flags }

// SetFlags is crypto_skcipher_set_flags (e.g.
// CRYPTO_TFM_REQ_FORBID_WEAK_KEYS before SetKey).
func (tfm *Skcipher) SetFlags(flags uint32) { tfm.flags |= flags }

// ClearFlags is crypto_skcipher_clear_flags.
func (tfm *Skcipher) ClearFlags(flags uint32) { tfm.flags &^= flags }

// Child returns the inner tfm of a template instance (cts, xts, essiv) or
// the software fallback of an engine tfm; nil otherwise.
func (tfm *Skcipher) Child() *Skcipher { return tfm.child }

// String is the canonical one-line dump: "skcipher{alg=xts(aes)
// driver=xts-aes-aesni reqsize=0 flags=0x1}".
func (tfm *Skcipher) String() string {
	return fmt.Sprintf("skcipher{alg=%s driver=%s reqsize=%d flags=%#x}", tfm.alg.name, tfm.alg.driver, tfm.reqsize, tfm.flags)
}
