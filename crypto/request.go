package crypto

import (
	"fmt"
	"sync"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// CompletionFunc is crypto_completion_t (include/linux/crypto.h, void
// (*)(void *data, int err) since Linux 6.3): called by an asynchronous
// driver with the request's callback data when the request completes (err
// is its result), and with EINPROGRESS when a backlogged request enters the
// driver's queue. Synchronous algorithms never call it.
type CompletionFunc func(data any, err error)

// reqHeader holds the fields of struct skcipher_request and of its struct
// crypto_async_request base that the model uses. Heap requests and both
// on-stack request types share it, and the static dispatcher reads only
// through it; the dispatcher never stores it, its IV or its scatterlists
// anywhere, never passes them to an interface method or func value, and
// never calls the completion, so a request declared on the stack stays on
// the stack.
type reqHeader struct {
	tfm      *Skcipher
	cryptlen int
	iv       []byte
	src      []Scatterlist
	dst      []Scatterlist
	bio      *block.Bio
	flags    uint32
	complete CompletionFunc
	data     any
}

// setCallback is skcipher_request_set_callback.
func (h *reqHeader) setCallback(flags uint32, fn CompletionFunc, data any) {
	h.flags = flags | h.flags&CRYPTO_TFM_REQ_ON_STACK
	h.complete = fn
	h.data = data
}

// setCrypt is skcipher_request_set_crypt.
func (h *reqHeader) setCrypt(src, dst []Scatterlist, cryptlen int, iv []byte) {
	h.src, h.dst, h.cryptlen, h.iv, h.bio = src, dst, cryptlen, iv, nil
}

// setBio is the seed 003 form of skcipher_request_set_crypt(req, (struct
// scatterlist *)bio, (struct scatterlist *)bio, du_bits, iv).
func (h *reqHeader) setBio(bio *block.Bio, duBits uint, iv []byte) {
	h.src, h.dst, h.cryptlen, h.iv, h.bio = nil, nil, int(duBits), iv, bio
}

func (h *reqHeader) string(kind string) string {
	drv := "<none>"
	if h.tfm != nil {
		drv = h.tfm.alg.driver
	}
	if h.bio != nil {
		return fmt.Sprintf("skcipher_request{%s tfm=%s bio=%d du_bits=%d flags=%#x}", kind, drv, h.bio.Size(), h.cryptlen, h.flags)
	}
	return fmt.Sprintf("skcipher_request{%s tfm=%s cryptlen=%d src=%dsg dst=%dsg iv=%d flags=%#x}",
		kind, drv, h.cryptlen, SgNents(h.src), SgNents(h.dst), len(h.iv), h.flags)
}

// SkcipherRequest is a struct skcipher_request allocated on the heap with
// SkcipherRequestAlloc: one kmalloc of SizeofSkcipherRequest + the tfm's
// reqsize, freed with Free (kfree_sensitive). Heap requests are the only
// ones an asynchronous algorithm accepts, and the only ones that can be
// chained.
//
// A request is owned by its submitter until it is submitted and, for an
// asynchronous algorithm that returned EINPROGRESS or EBUSY, by the driver
// until its completion is called; its IV, scatterlists and data must stay
// untouched meanwhile.
type SkcipherRequest struct {
	h    reqHeader
	mem  []byte
	site *kmem.Site
	// next links a chain of requests submitted as one (head first).
	next  *SkcipherRequest
	chain bool
	err   error
	// ivCopy holds the IV of a clone (SKCIPHER_REQUEST_CLONE copies the
	// request memory; the model gives the clone its own copy of the IV
	// because a heap object cannot point into another frame's stack).
	ivCopy  [maxIVSize]byte
	sgCopy  []Scatterlist
	isClone bool
	// sgOne holds the src and dst entries of SetCryptOne.
	sgOne [2]Scatterlist
	// stackMem and ivOnStack say where the kernel's memory is, for the
	// DMA-API debug check of a driver that maps it (dma_debug.go):
	// stackMem, the request itself is in the caller's frame (the shadow
	// of an on-stack request a 6.6 driver accepted); ivOnStack, req->iv
	// points into the caller's frame (SetCryptOne, whose callers keep
	// their union fscrypt_iv on the stack, and on-stack requests).
	stackMem, ivOnStack bool
}

// maxIVSize is the largest IV of the modelled algorithms (Adiantum and
// HCTR2: 32 bytes).
const maxIVSize = 32

// SkcipherRequestAlloc is skcipher_request_alloc: one kmalloc at SiteRequest
// of SizeofSkcipherRequest + crypto_skcipher_reqsize(tfm) bytes with gfp.
// Errors: ENOMEM when the allocation fails (the kernel returns NULL and its
// callers return -ENOMEM).
func SkcipherRequestAlloc(t *kernel.Task, tfm *Skcipher, gfp kmem.GFP) (*SkcipherRequest, error) {
	return SkcipherRequestAllocAt(t, SiteRequest, tfm, gfp)
}

// SkcipherRequestAllocAt is SkcipherRequestAlloc accounted at the caller's
// site (skcipher_request_alloc is an inline function: the kmalloc happens
// at each caller). Free accounts the free at the same site.
func SkcipherRequestAllocAt(t *kernel.Task, site *kmem.Site, tfm *Skcipher, gfp kmem.GFP) (*SkcipherRequest, error) {
	mem, err := t.Kmalloc(site, SizeofSkcipherRequest+tfm.reqsize, gfp)
	if err != nil {
		return nil, errno.ENOMEM
	}
	t.Inc(EvReqAlloc)
	req := reqPool.Get().(*SkcipherRequest)
	req.mem, req.site = mem, site
	req.h.tfm = tfm
	return req, nil
}

// reqPool recycles the Go structs of freed heap requests. The kmalloc of
// skcipher_request_alloc is the request's memory (mem, one Go allocation
// per kmalloc, as kmem models every kmalloc); the SkcipherRequest struct
// that carries the model's fields is bookkeeping the kernel does not have
// (its fields live in that same memory), so it is reused, as a freed slab
// object is, instead of being a second Go allocation per request. Clones,
// whose scatterlist copy is their own, are not recycled.
var reqPool = sync.Pool{New: func() any { return new(SkcipherRequest) }}

// Free is skcipher_request_free: kfree_sensitive of the request memory
// (wiped, then freed). Free of nil does nothing. Freeing a request that is
// still in flight at an asynchronous driver is a use-after-free in the
// kernel; don't.
func (req *SkcipherRequest) Free(t *kernel.Task) {
	if req == nil || req.mem == nil {
		return
	}
	t.KfreeSensitive(req.site, req.mem)
	req.mem = nil
	clear(req.ivCopy[:])
	t.Inc(EvReqFree)
	if !req.isClone {
		// The memory is gone: like a freed slab object the struct
		// may now be handed to the next skcipher_request_alloc
		// (using req after Free is a use-after-free, as in the
		// kernel).
		*req = SkcipherRequest{}
		reqPool.Put(req)
	}
}

// Size returns the bytes of the request's allocation (SizeofSkcipherRequest
// + reqsize, or the clone size).
func (req *SkcipherRequest) Size() int { return len(req.mem) }

// SetTfm is skcipher_request_set_tfm.
func (req *SkcipherRequest) SetTfm(tfm *Skcipher) { req.h.tfm = tfm }

// Tfm is crypto_skcipher_reqtfm.
func (req *SkcipherRequest) Tfm() *Skcipher { return req.h.tfm }

// SetCallback is skcipher_request_set_callback: flags
// (CRYPTO_TFM_REQ_MAY_BACKLOG, CRYPTO_TFM_REQ_MAY_SLEEP,
// CRYPTO_SKCIPHER_REQ_BIO), the completion and its data. With
// DECLARE_CRYPTO_WAIT the usual pair is CryptoReqDone and &wait.
func (req *SkcipherRequest) SetCallback(flags uint32, fn CompletionFunc, data any) {
	req.h.setCallback(flags, fn, data)
}

// SetCrypt is skcipher_request_set_crypt: cryptlen bytes from src to dst
// (the same table for in-place operation) with iv (at least the tfm's ivsize
// bytes; the driver may update it, as CBC does).
func (req *SkcipherRequest) SetCrypt(src, dst []Scatterlist, cryptlen int, iv []byte) {
	req.h.setCrypt(src, dst, cryptlen, iv)
	req.ivOnStack = false
}

// SetCryptOne is sg_init_one on src and on dst followed by
// skcipher_request_set_crypt(req, src_sg, dst_sg, len(src), iv), for a
// caller whose scatterlists and IV live in its own frame while the request
// is on the heap (fscrypt before Linux 6.17). In the kernel the request
// points at them there; a Go heap object cannot point into a goroutine's
// stack, so instead of making the caller move them to the heap (a Go
// allocation the kernel does not make) the request keeps the two entries
// and a copy of the IV (at most 32 bytes) inside itself. The IV as the
// driver leaves it is read with IV; the caller's iv is not updated.
func (req *SkcipherRequest) SetCryptOne(src, dst, iv []byte) {
	SgInitOne(&req.sgOne[0], src)
	SgInitOne(&req.sgOne[1], dst)
	n := copy(req.ivCopy[:], iv)
	req.h.setCrypt(req.sgOne[0:1], req.sgOne[1:2], len(src), req.ivCopy[:n])
	req.ivOnStack = true
}

// IV returns the request's IV (req->iv) as the driver left it.
func (req *SkcipherRequest) IV() []byte { return req.h.iv }

// SetBio makes the request a whole-bio request (seed 003): the caller also
// sets CRYPTO_SKCIPHER_REQ_BIO in the callback flags. The driver processes
// every data unit of 1<<duBits bytes of every folio vector of bio in place,
// starting with iv and adding one to its first eight bytes (little-endian)
// after each data unit; req->iv is left past the last unit.
func (req *SkcipherRequest) SetBio(bio *block.Bio, duBits uint, iv []byte) {
	req.h.setBio(bio, duBits, iv)
	req.ivOnStack = false
}

// Flags returns the request flags (skcipher_request_flags).
func (req *SkcipherRequest) Flags() uint32 { return req.h.flags }

// Err returns the result of the request's last processing as a member of a
// chain (the per-request error of request chaining), or of its last
// synchronous or completed asynchronous run.
func (req *SkcipherRequest) Err() error { return req.err }

// String is the canonical one-line dump of the request.
func (req *SkcipherRequest) String() string {
	kind := fmt.Sprintf("heap %dB", len(req.mem))
	if req.isClone {
		kind = fmt.Sprintf("clone %dB", len(req.mem))
	}
	return req.h.string(kind)
}

// SkcipherRequestChain is the request chaining of the Linux 6.15 merge
// window (crypto_request_chain / ahash_request_chain, removed again; seed
// 003 "Chaining is dead"): req is appended to head's chain, and encrypting
// or decrypting head processes head and then every chained request, one by
// one, each with its own scatterlists, IV and result (Err). Every request of
// a chain must use the same tfm. On-stack requests cannot be chained.
func SkcipherRequestChain(req, head *SkcipherRequest) {
	p := head
	for p.next != nil {
		p = p.next
	}
	p.next = req
	req.next = nil
	req.chain = true
}

// ChainNext returns the request after req in its chain (nil at the end).
func (req *SkcipherRequest) ChainNext() *SkcipherRequest { return req.next }

// Encrypt is crypto_skcipher_encrypt. For a synchronous algorithm the
// request is processed before Encrypt returns and its result is returned.
// For an asynchronous algorithm it returns EINPROGRESS (queued), EBUSY
// (queued in the backlog: only with CRYPTO_TFM_REQ_MAY_BACKLOG), ENOSPC (the
// queue is full and backlogging was not allowed: not queued) or ESHUTDOWN
// (the engine was stopped); the result then comes through the completion.
// A chain headed by req is processed as described at SkcipherRequestChain;
// the return value is the head's own result.
//
// Errors of the request itself: ENOKEY (no key set), EINVAL (a length the
// mode rejects, an IV shorter than the tfm's ivsize, scatterlists shorter
// than cryptlen, a malformed bio request).
func (req *SkcipherRequest) Encrypt(t *kernel.Task) error { return req.crypt(t, true) }

// Decrypt is crypto_skcipher_decrypt; see Encrypt.
func (req *SkcipherRequest) Decrypt(t *kernel.Task) error { return req.crypt(t, false) }

func (req *SkcipherRequest) crypt(t *kernel.Task, enc bool) error {
	tfm := req.h.tfm
	if tfm == nil {
		return errno.EINVAL
	}
	if tfm.kind == kindEngine {
		countRequest(t, req.h.flags, req.h.cryptlen, req.h.bio, enc)
		if tfm.flags&CRYPTO_TFM_NEED_KEY != 0 {
			req.err = errno.ENOKEY
			return errno.ENOKEY
		}
		return tfm.engine.enqueue(t, req, enc)
	}
	err := cryptSync(t, tfm, &req.h, enc)
	req.err = err
	for c := req.next; c != nil; c = c.next {
		t.Inc(EvChainRequest)
		c.err = c.cryptMember(t, enc, false)
	}
	return err
}

// cryptMember processes one request synchronously: a chained request, or,
// on an engine's worker, a request the engine dequeued (counted already
// when it was submitted: counted true). A request for an engine tfm is
// computed with the tfm's software fallback.
func (req *SkcipherRequest) cryptMember(t *kernel.Task, enc, counted bool) error {
	tfm := req.h.tfm
	if tfm == nil {
		return errno.EINVAL
	}
	if !counted {
		countRequest(t, req.h.flags, req.h.cryptlen, req.h.bio, enc)
	}
	if tfm.flags&CRYPTO_TFM_NEED_KEY != 0 {
		return errno.ENOKEY
	}
	if tfm.kind == kindEngine {
		tfm = tfm.child
	}
	return cryptSyncNoCount(t, tfm, &req.h, enc)
}
