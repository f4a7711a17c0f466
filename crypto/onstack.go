package crypto

import (
	"fmt"
	"sync"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/crypto/aes"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// maxStackSG is the number of scatterlist entries per direction an
// on-stack request holds (fscrypt uses one).
const maxStackSG = 4

// stackReq is what the setters of an on-stack request fill in. Everything
// the caller's frame owns is copied in by value: the IV bytes and the
// scatterlist entries (not the caller's arrays), because in Go a pointer
// stored through a pointer escapes to the heap, and fscrypt keeps its IV
// and its scatterlist on its stack. The kernel's request points at the
// caller's IV instead; drivers that update the IV (CBC, CTS, the bio walk)
// update the request's copy here, which IV returns.
type stackReq struct {
	tfm      *Skcipher
	bio      *block.Bio
	cryptlen int
	flags    uint32
	// mark is the flag the declaration puts on the request:
	// CRYPTO_TFM_REQ_ON_STACK in kernels that have it, 0 for seed 000's
	// Linux 6.6 macro, which marks nothing.
	mark  uint32
	ivLen int
	// callback is whether skcipher_request_set_callback was given a
	// completion (which the request does not keep; see SetCallback).
	callback bool
	nsrc     int
	ndst     int
	bad      bool // a table longer than maxStackSG or an IV longer than maxIVSize was set
	iv       [maxIVSize]byte
	src      [maxStackSG]Scatterlist
	dst      [maxStackSG]Scatterlist
}

// init binds the request to tfm and resets what the setters fill in; mark
// is the flag the declaration sets (CRYPTO_TFM_REQ_ON_STACK or 0). The IV
// and entry arrays are not cleared: ivLen, nsrc and ndst say how much of
// them is valid (and the declaration zeroed them).
func (s *stackReq) init(tfm *Skcipher, mark uint32) {
	s.tfm, s.bio, s.cryptlen, s.flags, s.mark = tfm, nil, 0, mark, mark
	s.ivLen, s.nsrc, s.ndst, s.bad, s.callback = 0, 0, 0, false, false
}

func (s *stackReq) setCallback(flags uint32, hasCallback bool) {
	s.flags = flags | s.mark
	s.callback = hasCallback
}

// setIV copies the IV in; the IV sizes of the model's algorithms (16 and
// 32 bytes) are copied as arrays rather than through memmove.
func (s *stackReq) setIV(iv []byte) {
	switch len(iv) {
	case 16:
		*(*[16]byte)(s.iv[:16]) = [16]byte(iv)
	case maxIVSize:
		s.iv = [maxIVSize]byte(iv)
	default:
		if len(iv) > maxIVSize {
			s.bad = true
			return
		}
		copy(s.iv[:], iv)
	}
	s.ivLen = len(iv)
}

func (s *stackReq) setCrypt(src, dst []Scatterlist, cryptlen int, iv []byte) {
	s.cryptlen, s.bio = cryptlen, nil
	if len(src) > 0 && len(dst) > 0 && (len(src) == 1 || src[0].end) && (len(dst) == 1 || dst[0].end) {
		// One entry each way (sg_init_one), what fscrypt passes.
		s.nsrc, s.ndst = 1, 1
		s.src[0], s.dst[0] = src[0], dst[0]
	} else if !s.setTables(src, dst) {
		return
	}
	s.setIV(iv)
}

// setTables copies tables of several entries in (false: too many).
func (s *stackReq) setTables(src, dst []Scatterlist) bool {
	s.nsrc, s.ndst = SgNents(src), SgNents(dst)
	if s.nsrc > maxStackSG || s.ndst > maxStackSG {
		s.bad = true
		return false
	}
	copy(s.src[:], src[:s.nsrc])
	copy(s.dst[:], dst[:s.ndst])
	return true
}

func (s *stackReq) setBio(bio *block.Bio, duBits uint, iv []byte) {
	s.cryptlen, s.bio, s.nsrc, s.ndst = int(duBits), bio, 0, 0
	s.setIV(iv)
}

// crypt runs the request: it passes views of its own arrays to the
// dispatcher, so nothing the request holds is reached through a stored
// pointer. The usual request (a keyed synchronous tfm, one entry each way,
// no counters) goes straight to the mode with a single call, so that the
// model's bookkeeping costs no more than the kernel's; everything else,
// with the same results, takes cryptSlow.
func (s *stackReq) crypt(t *kernel.Task, ctxSize int, enc bool) error {
	tfm := s.tfm
	if tfm != nil && !s.bad && s.nsrc == 1 && s.ndst == 1 && s.flags&CRYPTO_SKCIPHER_REQ_BIO == 0 &&
		t.Ev == nil && tfm.kind != kindEngine && tfm.reqsize <= ctxSize && tfm.flags&CRYPTO_TFM_NEED_KEY == 0 {
		n, ivsize := s.cryptlen, tfm.alg.ivSize
		if n > 0 && s.ivLen >= ivsize && len(s.src[0].buf) >= n && len(s.dst[0].buf) >= n {
			d, src := s.dst[0].buf[:n], s.src[0].buf[:n]
			if !aes.InexactOverlap(d, src) {
				return cryptContig(t, tfm, d, src, s.iv[:ivsize], enc)
			}
		}
	}
	return s.cryptSlow(t, ctxSize, enc)
}

// cryptSlow is crypt for every request: the checks of an on-stack
// request, then cryptReq.
func (s *stackReq) cryptSlow(t *kernel.Task, ctxSize int, enc bool) error {
	if s.bad {
		return errno.EINVAL
	}
	tfm := s.tfm
	if tfm == nil {
		return errno.EINVAL
	}
	if tfm.kind == kindEngine && s.flags&CRYPTO_TFM_REQ_ON_STACK != 0 {
		return s.refuseAsync(t, enc)
	}
	if tfm.reqsize > ctxSize {
		stackOverflow(tfm.reqsize, ctxSize)
	}
	if tfm.kind == kindEngine {
		return s.submitAsync(t, enc)
	}
	return cryptReq(t, tfm, s.flags, s.bio, s.cryptlen, s.iv[:s.ivLen], s.src[:s.nsrc], s.dst[:s.ndst], enc, true)
}

// refuseAsync is an asynchronous tfm's answer to a request marked
// CRYPTO_TFM_REQ_ON_STACK (the rule of Linux 6.15's HASH_REQUEST_ON_STACK
// and of the seed 003 branch): counted, then ENOKEY without a key, else
// EAGAIN (the caller clones it).
func (s *stackReq) refuseAsync(t *kernel.Task, enc bool) error {
	countRequest(t, s.flags, s.cryptlen, s.bio, enc)
	if s.tfm.flags&CRYPTO_TFM_NEED_KEY != 0 {
		return errno.ENOKEY
	}
	t.Inc(EvAsyncEAGAIN)
	return errno.EAGAIN
}

// submitAsync hands an unmarked on-stack request (seed 000's 6.6
// declaration) to an asynchronous driver, as Linux 6.6's
// crypto_skcipher_encrypt does: through a heap shadow that carries copies
// of the request's fields and the mark that its memory is the caller's
// stack (stackMem), submitted like a heap request. With a completion set,
// the caller's wait is done here (see SkcipherRequestOnStack384) and the IV
// the driver leaves is copied back; without one the result is what the
// driver returned (EINPROGRESS for a queued request, whose completion the
// driver then finds missing).
func (s *stackReq) submitAsync(t *kernel.Task, enc bool) error {
	sh := reqPool.Get().(*SkcipherRequest)
	sh.stackMem, sh.ivOnStack = true, true
	sh.h.tfm, sh.h.cryptlen, sh.h.flags, sh.h.bio = s.tfm, s.cryptlen, s.flags, s.bio
	sh.ivCopy = s.iv
	sh.h.iv = sh.ivCopy[:s.ivLen]
	switch {
	case s.nsrc == 1 && s.ndst == 1:
		sh.sgOne[0], sh.sgOne[1] = s.src[0], s.dst[0]
		sh.h.src, sh.h.dst = sh.sgOne[0:1], sh.sgOne[1:2]
	case s.nsrc+s.ndst > 0:
		sh.sgCopy = make([]Scatterlist, s.nsrc+s.ndst)
		copy(sh.sgCopy, s.src[:s.nsrc])
		copy(sh.sgCopy[s.nsrc:], s.dst[:s.ndst])
		sh.h.src, sh.h.dst = sh.sgCopy[:s.nsrc:s.nsrc], sh.sgCopy[s.nsrc:]
	}
	if !s.callback {
		// Nobody waits: the shadow belongs to the driver from now on.
		return sh.crypt(t, enc)
	}
	w := asyncWaitPool.Get().(*CryptoWait)
	sh.h.complete, sh.h.data = CryptoReqDone, w
	err := CryptoWaitReq(t, sh.crypt(t, enc), w)
	// The request has completed, or was never queued: the driver holds
	// neither the shadow nor the wait any more.
	s.iv = sh.ivCopy
	*sh = SkcipherRequest{}
	reqPool.Put(sh)
	asyncWaitPool.Put(w)
	return err
}

// asyncWaitPool holds the crypto_waits submitAsync waits on (the caller's
// DECLARE_CRYPTO_WAIT in the kernel).
var asyncWaitPool = sync.Pool{New: func() any { return new(CryptoWait) }}

func (s *stackReq) string(size int) string {
	h := reqHeader{tfm: s.tfm, cryptlen: s.cryptlen, iv: s.iv[:s.ivLen],
		src: s.src[:s.nsrc], dst: s.dst[:s.ndst], bio: s.bio, flags: s.flags}
	return h.string(fmt.Sprintf("stack %dB", size))
}

// SyncSkcipherRequestOnStack is SYNC_SKCIPHER_REQUEST_ON_STACK(name, tfm)
// (include/crypto/skcipher.h): a request declared in the caller's frame,
// with room for MAX_SYNC_SKCIPHER_REQSIZE (384) bytes of request context.
// Declare it as a local variable and Init it with a SyncSkcipher:
//
//	var req crypto.SyncSkcipherRequestOnStack
//	req.Init(t, tfm)
//	req.SetCallback(0, nil, nil)
//	req.SetCrypt(sg[:], sg[:], n, iv[:])
//	err := req.Encrypt(t)
//
// Neither the request nor the IV and scatterlist arrays given to it escape
// to the heap: the setters copy the IV and the scatterlist entries into the
// request, and the request runs through the static dispatcher only (see the
// package documentation), which testing.AllocsPerRun and
// `go build -gcflags=-m` confirm. A table may have up to 4 entries per
// direction (EINVAL beyond).
//
// The declaration is as large as the kernel's, SizeofSkcipherRequest +
// MAX_SYNC_SKCIPHER_REQSIZE (464 bytes): the model's copies of the IV and
// the scatterlist entries take the place of part of the context area. Go
// zeroes it at the declaration, which is what a kernel built with
// CONFIG_INIT_STACK_ALL_ZERO (the default of security/Kconfig.hardening
// with a compiler that has -ftrivial-auto-var-init=zero) does to the
// descriptor too, so the zeroing costs what the kernel's does.
type SyncSkcipherRequestOnStack struct {
	s stackReq
	// The rest of the context area: room only, never read or written.
	_ [MaxSyncSkcipherReqSize - stackReqExtra]byte
}

// Init is the macro's declaration plus skcipher_request_set_sync_tfm: the
// request is reset and bound to tfm. It counts one on-stack request.
func (r *SyncSkcipherRequestOnStack) Init(t *kernel.Task, tfm *SyncSkcipher) {
	r.s.init(&tfm.Skcipher, CRYPTO_TFM_REQ_ON_STACK)
	t.Inc(EvReqOnStack)
}

// SetCallback is skcipher_request_set_callback. The flags are kept; the
// completion and its data are not: a sync tfm is never asynchronous, so
// they would never be called, and keeping them would move the caller's
// wait object to the heap.
func (r *SyncSkcipherRequestOnStack) SetCallback(flags uint32, fn CompletionFunc, data any) {
	r.s.setCallback(flags, fn != nil)
}

// SetCrypt is skcipher_request_set_crypt; the IV bytes and the scatterlist
// entries are copied into the request.
func (r *SyncSkcipherRequestOnStack) SetCrypt(src, dst []Scatterlist, cryptlen int, iv []byte) {
	r.s.setCrypt(src, dst, cryptlen, iv)
}

// SetBio makes the request a whole-bio request (see SkcipherRequest.SetBio).
func (r *SyncSkcipherRequestOnStack) SetBio(bio *block.Bio, duBits uint, iv []byte) {
	r.s.setBio(bio, duBits, iv)
}

// IV returns the request's IV as the driver left it (req->iv).
func (r *SyncSkcipherRequestOnStack) IV() []byte { return r.s.iv[:r.s.ivLen] }

// CtxSize returns the request context room: MAX_SYNC_SKCIPHER_REQSIZE.
func (r *SyncSkcipherRequestOnStack) CtxSize() int { return MaxSyncSkcipherReqSize }

// Encrypt is crypto_skcipher_encrypt on the on-stack request. Errors:
// ENOKEY without a key, EINVAL for lengths the mode rejects, short IVs or
// scatterlists.
func (r *SyncSkcipherRequestOnStack) Encrypt(t *kernel.Task) error {
	return r.s.crypt(t, r.CtxSize(), true)
}

// Decrypt is crypto_skcipher_decrypt on the on-stack request.
func (r *SyncSkcipherRequestOnStack) Decrypt(t *kernel.Task) error {
	return r.s.crypt(t, r.CtxSize(), false)
}

// Zero is skcipher_request_zero: the request (and its context) is wiped.
func (r *SyncSkcipherRequestOnStack) Zero() { *r = SyncSkcipherRequestOnStack{} }

// Tfm is crypto_skcipher_reqtfm.
func (r *SyncSkcipherRequestOnStack) Tfm() *Skcipher { return r.s.tfm }

// String is the canonical one-line dump.
func (r *SyncSkcipherRequestOnStack) String() string {
	return r.s.string(SizeofSkcipherRequest + MaxSyncSkcipherReqSize)
}

// SkcipherRequestOnStack is the SKCIPHER_REQUEST_ON_STACK(name, tfm, reqsize)
// of seed 000: an on-stack request for any crypto_skcipher whose context
// area is the caller's choice, given as the type parameter C (an array type
// such as [MaxSkcipherReqSize]byte; the context size is sizeof(C)). The
// macro does no check: seed 000 adds BUG_ON(MAX_SKCIPHER_REQSIZE <
// crypto_skcipher_reqsize(tfm)), which a caller writes as
//
//	kernel.BUGOn(!req.Fits(), "MAX_SKCIPHER_REQSIZE < crypto_skcipher_reqsize(tfm)")
//
// A request whose tfm needs more context than C provides and that reaches a
// driver is a stack overflow in the kernel: the model reports it as a
// "KASAN: stack-out-of-bounds" BUG (a panic with a *kernel.Bug that
// kernel.Task.Recover turns into a report).
//
// What an asynchronous algorithm does with it depends on the kernel the
// declaration belongs to. Seed 003's SKCIPHER_REQUEST_ON_STACK(req, tfm,
// sizeof(bio)) (type SkcipherBioRequestOnStack: MAX_SYNC_SKCIPHER_REQSIZE
// plus the extra bytes) is of a kernel after Linux 6.15: the declaration
// marks the request CRYPTO_TFM_REQ_ON_STACK and an asynchronous algorithm
// refuses it with EAGAIN, the protocol of HASH_REQUEST_ON_STACK; the
// caller clones it with SkcipherRequestClone and submits the clone. Seed
// 000's declaration (SkcipherRequestOnStack384) is of Linux 6.6, which has
// no such flag: see that type. Like SyncSkcipherRequestOnStack it copies
// the IV and scatterlist entries in and stays on the stack, except on the
// way to an asynchronous driver that accepts it.
type SkcipherRequestOnStack[C any] struct {
	s   stackReq
	ctx C
}

// SkcipherRequestOnStack384 is the seed 000 declaration
// SKCIPHER_REQUEST_ON_STACK(req, tfm, MAX_SKCIPHER_REQSIZE), with the macro
// the posting adds to the include/crypto/skcipher.h of Linux 6.6, where the
// author ran it: a char array of sizeof(struct skcipher_request) + 384
// bytes, CRYPTO_MINALIGN_ATTR, whose base.tfm is set, cast to a request
// pointer. Nothing marks the request as being on the stack, and 6.6's
// crypto_skcipher_encrypt calls the algorithm's encrypt on whatever request
// it is given. So an asynchronous driver whose reqsize fits queues it, like
// a heap request, and completes it later from its own context while the
// caller sleeps in crypto_wait_req: the driver is handed stack memory, and
// one that DMA-maps its request context maps the caller's stack (reported
// by the DMA-API debug check, see EngineConfig). A reqsize larger than 384
// is a write past the declaration (the model's KASAN stack-out-of-bounds
// report), which the posting's BUG_ON stops first.
//
// The model runs such a request at the engine through a heap shadow (a
// pooled SkcipherRequest that carries the request's fields and the mark
// that its memory is the caller's stack) and, since the request does not
// keep its completion, does the caller's wait itself: Encrypt and Decrypt
// return the request's result once the engine has completed it (counting
// the crypto_wait_sleep the caller's crypto_wait_req would), or EINPROGRESS
// when the caller set no completion. Only this path allocates; the
// synchronous path is unchanged.
type SkcipherRequestOnStack384 struct {
	SkcipherRequestOnStack[[MaxSkcipherReqSize]byte]
}

// Init is the 6.6 macro's declaration: the request is reset and bound to
// tfm, and not marked CRYPTO_TFM_REQ_ON_STACK. It counts one on-stack
// request.
func (r *SkcipherRequestOnStack384) Init(t *kernel.Task, tfm *Skcipher) {
	r.s.init(tfm, 0)
	t.Inc(EvReqOnStack)
}

// Zero is skcipher_request_zero.
func (r *SkcipherRequestOnStack384) Zero() { *r = SkcipherRequestOnStack384{} }

// SkcipherBioRequestOnStack is seed 003's
// SKCIPHER_REQUEST_ON_STACK(req, tfm, sizeof(bio)): MAX_SYNC_SKCIPHER_REQSIZE
// of context plus room for the bio pointer (skcipher_request_extra).
type SkcipherBioRequestOnStack = SkcipherRequestOnStack[[MaxSyncSkcipherReqSize + 8]byte]

// Init binds the request to tfm (the macro sets base.tfm) and resets it. It
// counts one on-stack request.
func (r *SkcipherRequestOnStack[C]) Init(t *kernel.Task, tfm *Skcipher) {
	r.s.init(tfm, CRYPTO_TFM_REQ_ON_STACK)
	t.Inc(EvReqOnStack)
}

// Fits reports whether the bound tfm's reqsize fits the declared context
// (the negation of seed 000's BUG_ON condition).
func (r *SkcipherRequestOnStack[C]) Fits() bool {
	return r.s.tfm != nil && r.s.tfm.reqsize <= r.CtxSize()
}

// SetCallback is skcipher_request_set_callback; as for
// SyncSkcipherRequestOnStack only the flags are kept (and whether a
// completion was given: see SkcipherRequestOnStack384 for the one case in
// which it matters).
func (r *SkcipherRequestOnStack[C]) SetCallback(flags uint32, fn CompletionFunc, data any) {
	r.s.setCallback(flags, fn != nil)
}

// SetCrypt is skcipher_request_set_crypt; the IV and scatterlist entries are
// copied into the request.
func (r *SkcipherRequestOnStack[C]) SetCrypt(src, dst []Scatterlist, cryptlen int, iv []byte) {
	r.s.setCrypt(src, dst, cryptlen, iv)
}

// SetBio makes the request a whole-bio request (see SkcipherRequest.SetBio).
func (r *SkcipherRequestOnStack[C]) SetBio(bio *block.Bio, duBits uint, iv []byte) {
	r.s.setBio(bio, duBits, iv)
}

// IV returns the request's IV as the driver left it.
func (r *SkcipherRequestOnStack[C]) IV() []byte { return r.s.iv[:r.s.ivLen] }

// Encrypt is crypto_skcipher_encrypt on the on-stack request. Errors: as
// SyncSkcipherRequestOnStack.Encrypt, plus EAGAIN for an asynchronous tfm.
func (r *SkcipherRequestOnStack[C]) Encrypt(t *kernel.Task) error {
	return r.s.crypt(t, r.CtxSize(), true)
}

// Decrypt is crypto_skcipher_decrypt on the on-stack request.
func (r *SkcipherRequestOnStack[C]) Decrypt(t *kernel.Task) error {
	return r.s.crypt(t, r.CtxSize(), false)
}

// Tfm is crypto_skcipher_reqtfm.
func (r *SkcipherRequestOnStack[C]) Tfm() *Skcipher { return r.s.tfm }

// Zero is skcipher_request_zero.
func (r *SkcipherRequestOnStack[C]) Zero() { *r = SkcipherRequestOnStack[C]{} }

// String is the canonical one-line dump.
func (r *SkcipherRequestOnStack[C]) String() string {
	return r.s.string(SizeofSkcipherRequest + r.CtxSize())
}

// SkcipherRequestClone is SKCIPHER_REQUEST_CLONE(req, gfp) of seed 003 (after
// HASH_REQUEST_CLONE, crypto_request_clone in crypto/api.c): a heap copy of
// an on-stack request, made when an asynchronous driver answered EAGAIN. The
// copy is one kmalloc at SiteRequestClone of SizeofSkcipherRequest plus the
// larger of the declared context and the tfm's reqsize; it is not marked
// on-stack, carries the IV, scatterlist entries, bio and flags of the
// original, and is freed with Free. The completion is not carried (the
// on-stack request does not keep it): set it on the clone, as seed 003 does.
//
// Errors: ENOMEM when the allocation fails (Linux 6.15's
// crypto_request_clone instead falls back to the tfm's synchronous fallback
// and returns the on-stack request; the model reports the failure).
func SkcipherRequestClone[C any](t *kernel.Task, r *SkcipherRequestOnStack[C], gfp kmem.GFP) (*SkcipherRequest, error) {
	s := &r.s
	if s.tfm == nil {
		return nil, errno.EINVAL
	}
	size := max(r.CtxSize(), s.tfm.reqsize)
	mem, err := t.Kmalloc(SiteRequestClone, SizeofSkcipherRequest+size, gfp)
	if err != nil {
		return nil, errno.ENOMEM
	}
	t.Inc(EvReqClone)
	c := &SkcipherRequest{mem: mem, site: SiteRequestClone, isClone: true}
	c.h.tfm = s.tfm
	c.h.cryptlen = s.cryptlen
	c.h.flags = s.flags &^ CRYPTO_TFM_REQ_ON_STACK
	c.h.bio = s.bio
	c.ivCopy = s.iv
	c.h.iv = c.ivCopy[:s.ivLen]
	if s.nsrc+s.ndst > 0 {
		c.sgCopy = make([]Scatterlist, s.nsrc+s.ndst)
		copy(c.sgCopy, s.src[:s.nsrc])
		copy(c.sgCopy[s.nsrc:], s.dst[:s.ndst])
		c.h.src, c.h.dst = c.sgCopy[:s.nsrc:s.nsrc], c.sgCopy[s.nsrc:]
	}
	return c, nil
}

// stackOverflow raises the KASAN report of a driver using more request
// context than the on-stack declaration has.
func stackOverflow(reqsize, ctxSize int) {
	panic(&kernel.Bug{
		Kind:   "KASAN: stack-out-of-bounds",
		Func:   "crypto_skcipher_encrypt",
		Msg:    fmt.Sprintf("request context of %d bytes used with an on-stack request of %d", reqsize, ctxSize),
		Size:   SizeofSkcipherRequest + ctxSize,
		Offset: SizeofSkcipherRequest + ctxSize,
	})
}
