package fscrypt

import (
	"runtime"
	"sync"
	"weak"

	"github.com/vfslab/vfslab/crypto"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// CryptoAPI is the machine's Crypto API, which a SuperBlock carries.
type CryptoAPI = *crypto.API

// cryptoAPIMask is FSCRYPT_CRYPTOAPI_MASK of Linux 6.17
// (fs/crypto/fscrypt_private.h): asynchronous, memory-allocating and
// hardware-only drivers are never used.
const cryptoAPIMask = crypto.CRYPTO_ALG_ASYNC | crypto.CRYPTO_ALG_ALLOCATES_MEMORY | crypto.CRYPTO_ALG_KERN_DRIVER_ONLY

// Allocation sites of requests fscrypt allocates (skcipher_request_alloc
// is inline, so the kmalloc is at each caller).
var (
	siteFnameEncryptRequest = kmem.NewSite("fscrypt_fname_encrypt:skcipher_request")
	siteFnameDecryptRequest = kmem.NewSite("fname_decrypt:skcipher_request")
	siteDataUnitRequest     = kmem.NewSite("fscrypt_crypt_data_unit:skcipher_request")
	siteV1KDFRequest        = kmem.NewSite("derive_key_aes:skcipher_request")
)

// cryptoTfm is the tfm a prepared key holds (struct fscrypt_prepared_key's
// tfm): a crypto_skcipher before Linux 6.17, a crypto_sync_skcipher with
// the fscrypt-fname-onstack "upstream" variant.
type cryptoTfm struct {
	tfm  *crypto.Skcipher
	sync *crypto.SyncSkcipher
}

func (c *cryptoTfm) free(t *kernel.Task) {
	if c.sync != nil {
		c.sync.Free(t)
	} else {
		c.tfm.Free(t)
	}
}

func (c *cryptoTfm) driverName() string { return c.tfm.DriverName() }

// loggedImpl is fscrypt_mode.logged_cryptoapi_impl, per machine. Keys hold
// the machine's API weakly, so that machines can be collected. A plain map
// under a lock: its lookups of a loggedKey make no Go allocation, where a
// sync.Map would box the key on every tfm allocation.
var loggedImpl struct {
	mu   sync.Mutex
	done map[loggedKey]bool
}

// logImplOnce reports whether the implementation of mode on api has
// already been logged, and records that it now is.
func logImplOnce(api *crypto.API, mode int) (logged bool) {
	k := loggedKey{weak.Make(api), mode}
	loggedImpl.mu.Lock()
	defer loggedImpl.mu.Unlock()
	if loggedImpl.done[k] {
		return true
	}
	if loggedImpl.done == nil {
		loggedImpl.done = map[loggedKey]bool{}
	}
	loggedImpl.done[k] = true
	return false
}

type loggedKey struct {
	api  weak.Pointer[crypto.API]
	mode int
}

// allocateSkcipher is fs/crypto/keysetup.c fscrypt_allocate_skcipher: a tfm
// for mode keyed with rawKey. Before Linux 6.17 (variants base and v2) any
// implementation qualifies, asynchronous hardware engines included (mask
// 0); upstream allocates a sync skcipher with FSCRYPT_CRYPTOAPI_MASK.
// Errors: ENOPKG when the Crypto API has no such algorithm, EINVAL, ENOMEM,
// setkey errors.
func allocateSkcipher(t *kernel.Task, mode *Mode, rawKey []byte, inode Inode) (*cryptoTfm, error) {
	sb := inode.SuperBlock()
	api := sb.Crypto()
	var c cryptoTfm
	var err error
	switch fnameOnstack.Of(t.K.Patches()) {
	case FnameUpstream:
		c.sync, err = api.AllocSyncSkcipher(t, mode.CipherStr, 0, cryptoAPIMask)
		if err == nil {
			c.tfm = c.sync.Base()
		}
	case FnameBase, FnameV2:
		c.tfm, err = api.AllocSkcipher(t, mode.CipherStr, 0, 0)
	}
	if err != nil {
		if err == errno.ENOENT {
			warn(t, inode, "Missing crypto API support for %s (API name: \"%s\")", mode.FriendlyName, mode.CipherStr)
			return nil, errENOPKG
		}
		fscryptErr(t, inode, "Error allocating '%s' transform: %d", mode.CipherStr, -errnoValue(err))
		return nil, err
	}
	t.Inc(EvAllocateSkcipher)
	if !logImplOnce(api, mode.Num) {
		t.Printk("fscrypt: %s using implementation \"%s\"", mode.FriendlyName, c.tfm.DriverName())
	}
	if t.WarnOn(c.tfm.IVSize() != mode.IVSize, "crypto_skcipher_ivsize(tfm) != mode->ivsize") {
		c.free(t)
		return nil, errno.EINVAL
	}
	c.tfm.SetFlags(crypto.CRYPTO_TFM_REQ_FORBID_WEAK_KEYS)
	if err := c.tfm.SetKey(t, rawKey); err != nil {
		c.free(t)
		return nil, err
	}
	return &c, nil
}

// reqFlags are the callback flags fscrypt's requests carry.
const reqFlags = crypto.CRYPTO_TFM_REQ_MAY_BACKLOG | crypto.CRYPTO_TFM_REQ_MAY_SLEEP

// cryptAllocated runs one request the pre-6.17 way: skcipher_request_alloc,
// DECLARE_CRYPTO_WAIT, crypto_wait_req, skcipher_request_free. It works with
// asynchronous drivers (it waits for the completion). Errors: ENOMEM,
// driver errors.
func cryptAllocated(t *kernel.Task, site *kmem.Site, gfp kmem.GFP, tfm *crypto.Skcipher, enc bool, dst, src, iv []byte) error {
	req, err := requestAlloc(t, site, tfm, gfp)
	if err != nil {
		return err
	}
	wait := getWait()
	err = cryptWaitHeap(t, req, wait, enc, dst, src, iv)
	endFree := t.TraceInline("skcipher_request_free")
	req.Free(t)
	endFree()
	putWait(wait)
	return err
}

// requestAlloc is skcipher_request_alloc at the caller's site, traced as
// inline, with the callers' "if (!req) return -ENOMEM".
func requestAlloc(t *kernel.Task, site *kmem.Site, tfm *crypto.Skcipher, gfp kmem.GFP) (*crypto.SkcipherRequest, error) {
	endAlloc := t.TraceInline("skcipher_request_alloc")
	req, err := crypto.SkcipherRequestAllocAt(t, site, tfm, gfp)
	endAlloc()
	if err != nil {
		return nil, errno.ENOMEM
	}
	return req, nil
}

// cryptWaitHeap runs an allocated request to completion:
// skcipher_request_set_callback(req, MAY_BACKLOG | MAY_SLEEP,
// crypto_req_done, &wait), sg_init_one, skcipher_request_set_crypt,
// crypto_skcipher_encrypt or _decrypt, crypto_wait_req.
func cryptWaitHeap(t *kernel.Task, req *crypto.SkcipherRequest, wait *crypto.CryptoWait, enc bool, dst, src, iv []byte) error {
	req.SetCallback(reqFlags, crypto.CryptoReqDone, wait)
	// sg_init_one and skcipher_request_set_crypt. The request lives on
	// the heap and points at its IV and scatterlists until it completes;
	// the kernel keeps them in this frame, the model inside the request
	// (SetCryptOne copies the IV), so that no Go allocation beyond the
	// request's own is made for them.
	req.SetCryptOne(src, dst, iv)
	var err error
	endCrypt := traceSkcipherCrypt(t, enc)
	if enc {
		err = req.Encrypt(t)
	} else {
		err = req.Decrypt(t)
	}
	endCrypt()
	return traceWaitReq(t, err, wait)
}

// traceSkcipherCrypt traces the crypto_skcipher_encrypt or
// crypto_skcipher_decrypt call (crypto/skcipher.c) that a request is
// handed to. The driver that runs it is not noted here: it depends on
// the host's CPU, and crypto_alloc_skcipher's note already names it when
// the tfm is set up (trace --cold).
func traceSkcipherCrypt(t *kernel.Task, enc bool) func() {
	if enc {
		return t.Trace("crypto_skcipher_encrypt")
	}
	return t.Trace("crypto_skcipher_decrypt")
}

// traceWaitReq is crypto_wait_req (include/linux/crypto.h, static inline),
// traced as inline: it waits for an asynchronous driver's completion.
func traceWaitReq(t *kernel.Task, err error, wait *crypto.CryptoWait) error {
	defer t.TraceInline("crypto_wait_req")()
	return crypto.CryptoWaitReq(t, err, wait)
}

// waitPool holds the crypto_waits of the heap-request paths. The kernel's
// DECLARE_CRYPTO_WAIT is in the caller's frame; in Go, a wait whose address
// a heap request keeps as its callback data escapes to the heap, a Go
// allocation per request that the kernel does not make. A pooled wait is
// the frame's: taken at the declaration and given back once the request
// has completed (after crypto_wait_req and skcipher_request_free), when no
// driver can complete it any more.
var waitPool = sync.Pool{New: func() any { return new(crypto.CryptoWait) }}

// getWait is DECLARE_CRYPTO_WAIT(wait) for a wait a heap request points at.
func getWait() *crypto.CryptoWait { return waitPool.Get().(*crypto.CryptoWait) }

// putWait ends the wait's scope; wait_for_completion left it re-armed.
func putWait(w *crypto.CryptoWait) { waitPool.Put(w) }

// cryptSyncOnStack runs one request the Linux 6.17 way:
// SYNC_SKCIPHER_REQUEST_ON_STACK, no completion, no wait.
func cryptSyncOnStack(t *kernel.Task, tfm *crypto.SyncSkcipher, enc bool, dst, src, iv []byte) error {
	var req crypto.SyncSkcipherRequestOnStack
	endStack := t.TraceInline("SYNC_SKCIPHER_REQUEST_ON_STACK")
	req.Init(t, tfm)
	endStack()
	req.SetCallback(reqFlags, nil, nil)
	var sg [2]crypto.Scatterlist
	crypto.SgInitOne(&sg[0], src)
	crypto.SgInitOne(&sg[1], dst)
	req.SetCrypt(sg[0:1], sg[1:2], len(src), iv)
	defer traceSkcipherCrypt(t, enc)()
	if enc {
		return req.Encrypt(t)
	}
	return req.Decrypt(t)
}

// seedDeclare is the two lines seed 000 adds at the top of both functions:
// SKCIPHER_REQUEST_ON_STACK(req, tfm, MAX_SKCIPHER_REQSIZE) (the 6.6
// declaration, see crypto.SkcipherRequestOnStack384) and
// BUG_ON(MAX_SKCIPHER_REQSIZE < crypto_skcipher_reqsize(tfm)). The BUG
// names fn, the kernel function whose BUG_ON it is.
func seedDeclare(t *kernel.Task, req *crypto.SkcipherRequestOnStack384, tfm *crypto.Skcipher, fn string) {
	endStack := t.TraceInline("SKCIPHER_REQUEST_ON_STACK")
	req.Init(t, tfm)
	endStack()
	if !req.Fits() {
		b := &kernel.Bug{Kind: "BUG", Func: fn, Msg: "MAX_SKCIPHER_REQSIZE < crypto_skcipher_reqsize(tfm)", Size: -1, Offset: -1}
		_, b.File, b.Line, _ = runtime.Caller(0)
		panic(b)
	}
}

// cryptSeedEncrypt is fscrypt_fname_encrypt's request part as seed 000
// v2 posted it. The hunks replace the declaration "struct skcipher_request
// *req = NULL;" by SKCIPHER_REQUEST_ON_STACK(req, ...), add the BUG_ON,
// and delete skcipher_request_free(req) after the encryption; but the
// lines between them, "req = skcipher_request_alloc(tfm, GFP_NOFS); if
// (!req) return -ENOMEM;", are not in any hunk, so the posted function
// still has them. That is valid C: the macro declares req as an ordinary
// (non-const) pointer initialised to the on-stack buffer, which the
// assignment overwrites, so it compiles without a diagnostic (gcc and
// clang warn about neither the dead store nor the now-unused 464 bytes of
// stack). A kernel built from it therefore declares and BUG_ON-checks the
// on-stack request, never uses it, kmallocs a heap request as before
// (still failing with ENOMEM), runs and waits for it, and never frees it:
// one object of sizeof(struct skcipher_request) + reqsize bytes leaked per
// filename encryption, at the site "fscrypt_fname_encrypt:skcipher_request"
// (kmem's live count, kmemleak's report). Decryption (cryptSeedOnStack)
// really is on the stack.
func cryptSeedEncrypt(t *kernel.Task, tfm *crypto.Skcipher, dst, src, iv []byte) error {
	var stack crypto.SkcipherRequestOnStack384
	seedDeclare(t, &stack, tfm, "fscrypt_fname_encrypt")
	req, err := requestAlloc(t, siteFnameEncryptRequest, tfm, kmem.GFPNoFS)
	if err != nil {
		return err
	}
	wait := getWait()
	err = cryptWaitHeap(t, req, wait, true, dst, src, iv)
	// skcipher_request_free(req) is deleted by the posting: the request
	// is never freed. The wait goes back to its pool: the request has
	// completed, and nothing will touch it again.
	putWait(wait)
	return err
}

// cryptSeedOnStack is fname_decrypt's request part as seed 000 v2 posted
// it: SKCIPHER_REQUEST_ON_STACK(req, tfm, MAX_SKCIPHER_REQSIZE),
// BUG_ON(MAX_SKCIPHER_REQSIZE < crypto_skcipher_reqsize(tfm)), a
// completion and crypto_wait_req (here the allocation is deleted with the
// free). An asynchronous driver whose reqsize fits is handed the on-stack
// request, which Linux 6.6 queues and the caller waits for (see
// crypto.SkcipherRequestOnStack384).
func cryptSeedOnStack(t *kernel.Task, tfm *crypto.Skcipher, enc bool, dst, src, iv []byte) error {
	var req crypto.SkcipherRequestOnStack384
	fn := "fname_decrypt"
	if enc {
		fn = "fscrypt_fname_encrypt"
	}
	seedDeclare(t, &req, tfm, fn)
	var wait crypto.CryptoWait
	req.SetCallback(reqFlags, crypto.CryptoReqDone, &wait)
	var sg [2]crypto.Scatterlist
	crypto.SgInitOne(&sg[0], src)
	crypto.SgInitOne(&sg[1], dst)
	req.SetCrypt(sg[0:1], sg[1:2], len(src), iv)
	var err error
	endCrypt := traceSkcipherCrypt(t, enc)
	if enc {
		err = req.Encrypt(t)
	} else {
		err = req.Decrypt(t)
	}
	endCrypt()
	return traceWaitReq(t, err, &wait)
}

// fnameCrypt is the request part of fscrypt_fname_encrypt / fname_decrypt,
// by fscrypt-fname-onstack variant.
func fnameCrypt(t *kernel.Task, inode Inode, ci *InodeInfo, enc bool, dst, src, iv []byte) error {
	switch fnameOnstack.Of(t.K.Patches()) {
	case FnameBase:
		site := siteFnameDecryptRequest
		if enc {
			site = siteFnameEncryptRequest
		}
		return cryptAllocated(t, site, kmem.GFPNoFS, ci.encKey.tfm, enc, dst, src, iv)
	case FnameV2:
		if enc {
			return cryptSeedEncrypt(t, ci.encKey.tfm, dst, src, iv)
		}
		return cryptSeedOnStack(t, ci.encKey.tfm, enc, dst, src, iv)
	case FnameUpstream:
		if ci.encKey.sync == nil {
			// A key prepared by another machine's code: the kernel
			// has no such state; treat it as the 6.17 tfm would be.
			return errno.EINVAL
		}
		return cryptSyncOnStack(t, ci.encKey.sync, enc, dst, src, iv)
	default:
		panic("fscrypt: bad fscrypt-fname-onstack variant")
	}
}

// contentsCrypt is the request part of fscrypt_crypt_data_unit: an
// allocated request and a wait before Linux 6.17, a sync on-stack request
// with the upstream variant (seed 000 itself changed only fname.c).
func contentsCrypt(t *kernel.Task, ci *InodeInfo, enc bool, dst, src, iv []byte) error {
	if ci.encKey.sync != nil {
		return cryptSyncOnStack(t, ci.encKey.sync, enc, dst, src, iv)
	}
	return cryptAllocated(t, siteDataUnitRequest, kmem.GFPNoFS, ci.encKey.tfm, enc, dst, src, iv)
}

// deriveKeyAESSync is fs/crypto/keysetup_v1.c derive_key_aes in Linux
// 6.17 (fscrypt-v1-kdf sync): AES-128-ECB of masterKey under nonce into
// derived, through crypto_alloc_sync_skcipher("ecb(aes)") and an on-stack
// request.
func deriveKeyAESSync(t *kernel.Task, sb SuperBlock, masterKey, nonce, derived []byte) error {
	defer t.Trace("derive_key_aes")()
	tfm, err := sb.Crypto().AllocSyncSkcipher(t, "ecb(aes)", 0, cryptoAPIMask)
	if err != nil {
		return err
	}
	defer tfm.Free(t)
	if err := tfm.SetKey(t, nonce); err != nil {
		return err
	}
	return cryptSyncOnStack(t, tfm, true, derived, masterKey, nil)
}

// deriveKeyAES is fs/crypto/keysetup_v1.c derive_key_aes before Linux 6.17
// (fscrypt-v1-kdf base): AES-128-ECB of masterKey under nonce into derived,
// through an "ecb(aes)" skcipher allocated for this one derivation and a
// kmalloc'd request.
func deriveKeyAES(t *kernel.Task, sb SuperBlock, masterKey, nonce, derived []byte) error {
	defer t.Trace("derive_key_aes")()
	api := sb.Crypto()
	tfm, err := api.AllocSkcipher(t, "ecb(aes)", 0, 0)
	if err != nil {
		return err
	}
	defer tfm.Free(t)
	tfm.SetFlags(crypto.CRYPTO_TFM_REQ_FORBID_WEAK_KEYS)
	endAlloc := t.TraceInline("skcipher_request_alloc")
	req, err := crypto.SkcipherRequestAllocAt(t, siteV1KDFRequest, tfm, kmem.GFPKernel)
	endAlloc()
	if err != nil {
		return errno.ENOMEM
	}
	defer func() {
		defer t.TraceInline("skcipher_request_free")()
		req.Free(t)
	}()
	wait := getWait()
	req.SetCallback(reqFlags, crypto.CryptoReqDone, wait)
	if err := tfm.SetKey(t, nonce); err != nil {
		putWait(wait)
		return err
	}
	// sg_init_one(&src_sg, master_key, derived_keysize), sg_init_one(&dst_sg,
	// derived_key, derived_keysize) and skcipher_request_set_crypt: the
	// kernel's scatterlists are in this frame; the model keeps them in the
	// request (SetCryptOne), since a heap request pointing at them would
	// move them to the Go heap.
	req.SetCryptOne(masterKey[:len(derived)], derived, nil)
	endCrypt := traceSkcipherCrypt(t, true)
	err = req.Encrypt(t)
	endCrypt()
	err = traceWaitReq(t, err, wait)
	putWait(wait)
	return err
}
