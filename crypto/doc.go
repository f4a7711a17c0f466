// Package crypto models the Linux kernel Crypto API as fscrypt uses it:
// the algorithm registry and lookup (crypto/api.c, crypto/algapi.c), the
// skcipher frontend with allocated and on-stack requests (crypto/skcipher.c,
// include/crypto/skcipher.h), the templates cbc, cts, ecb, xts and essiv
// (crypto/{cbc,cts,ecb,xts,essiv}.c) plus adiantum and hctr2, the x86 AES-NI
// drivers and the AVX/VAES XTS drivers "xts-aes-aesni-avx",
// "xts-aes-vaes-avx2" and "xts-aes-vaes-avx512" where the CPU has them
// (arch/x86/crypto/aesni-intel_glue.c), a modelled asynchronous
// hardware engine (crypto/crypto_engine.c), the whole-bio requests and
// request chaining of seed 003, and the library functions (AES, SHA-2,
// HMAC, HKDF, SipHash).
//
// # Machines, algorithms, lookups
//
// NewAPI returns one machine's Crypto API with the software drivers
// registered. An algorithm has a cra_name ("xts(aes)"), a unique
// cra_driver_name ("xts-aes-aesni"), a priority and flags. Lookup follows
// crypto_alg_mod_lookup: an algorithm matches when (cra_flags ^ type) & mask
// is zero; a driver name matches exactly, otherwise the highest priority
// with the cra_name wins; names of the form "tmpl(args)" that nothing
// matches are instantiated from their template on first use and registered,
// so the second allocation finds the cached instance. Instance names follow
// the kernel: "cts(cbc(aes-generic))", "xts(ecb(aes-generic))",
// "essiv(cbc-aes-aesni,sha256-generic)", "adiantum(xchacha12-lib,aes-aesni)",
// "hctr2_base(xctr(aes-aesni),polyval-lib)".
//
// # Kernel names and their Go counterparts
//
//	crypto_alloc_skcipher(name, type, mask)   api.AllocSkcipher(t, name, type, mask)
//	crypto_alloc_sync_skcipher(...)           api.AllocSyncSkcipher(t, name, type, mask)
//	crypto_free_skcipher(tfm)                 tfm.Free(t)
//	crypto_skcipher_setkey(tfm, key, len)     tfm.SetKey(t, key)
//	crypto_skcipher_reqsize / ivsize          tfm.ReqSize() / tfm.IVSize()
//	skcipher_request_alloc(tfm, gfp)          SkcipherRequestAlloc(t, tfm, gfp)
//	skcipher_request_free(req)                req.Free(t)
//	SYNC_SKCIPHER_REQUEST_ON_STACK(req, tfm)  var req SyncSkcipherRequestOnStack; req.Init(t, tfm)
//	SKCIPHER_REQUEST_ON_STACK(req, tfm, 384)  var req SkcipherRequestOnStack384; req.Init(t, tfm)
//	SKCIPHER_REQUEST_CLONE(req, gfp)          SkcipherRequestClone(t, &req, gfp)
//	skcipher_request_set_callback(...)        req.SetCallback(flags, fn, data)
//	skcipher_request_set_crypt(...)           req.SetCrypt(src, dst, n, iv)
//	crypto_skcipher_encrypt(req)              req.Encrypt(t)
//	DECLARE_CRYPTO_WAIT(wait)                 var wait CryptoWait
//	crypto_req_done                           CryptoReqDone
//	crypto_wait_req(err, &wait)               CryptoWaitReq(t, err, &wait)
//	sg_init_one / sg_init_table / sg_set_buf  SgInitOne / SgInitTable / SgSetBuf
//
// Every operation that can allocate or count takes the calling
// *kernel.Task first.
//
// # Requests on the stack
//
// On-stack requests must really stay on the stack: fscrypt's Linux 6.17
// filename path makes no allocation at all. In Go a pointer passed through
// an interface method or a func value escapes to the heap, and no goroutine
// may hold a pointer into another goroutine's stack. So:
//
//   - on-stack requests are their own types (SyncSkcipherRequestOnStack,
//     SkcipherRequestOnStack[C]) whose Encrypt and Decrypt reach only the
//     static dispatcher: a switch on a closed set of implementation kinds,
//     templates recursing through the same switch, calling concrete
//     methods of packages crypto/aes, crypto/adiantum and crypto/hctr2;
//   - their setters copy the IV bytes and the scatterlist entries into the
//     request instead of pointing at the caller's arrays (in Go a pointer
//     stored through a pointer escapes), so the IV a driver leaves behind
//     is read with IV(); the completion of an on-stack request is not kept,
//     since it can never be called;
//   - CryptoWait holds no mutex or channel (sleepers use package-level wait
//     queues), so a wait object declared beside an on-stack request stays
//     on the stack too;
//   - the asynchronous engine is reachable from heap requests, and from
//     seed 000's unmarked Linux 6.6 declaration through a pooled heap
//     shadow (SkcipherRequestOnStack384); a request its declaration
//     marks CRYPTO_TFM_REQ_ON_STACK gets EAGAIN from an asynchronous
//     algorithm, and the caller clones it (the seed 003 protocol);
//   - algorithms registered through the SkcipherImpl interface are called
//     on heap copies, so that path allocates but leaks nothing.
//
// `go build -gcflags=-m ./crypto/` shows that the request, IV and
// scatterlist parameters of the on-stack paths do not escape, and the
// package's tests assert testing.AllocsPerRun == 0 for them.
//
// # Asynchronous algorithms
//
// RegisterEngine adds a hardware engine: algorithms with
// CRYPTO_ALG_ASYNC | CRYPTO_ALG_ALLOCATES_MEMORY |
// CRYPTO_ALG_KERN_DRIVER_ONLY at a high priority and a large reqsize (512),
// a bounded queue, and completion on the engine's goroutines. A request
// returns EINPROGRESS, EBUSY (backlogged, with CRYPTO_TFM_REQ_MAY_BACKLOG;
// it gets an EINPROGRESS notification when it enters the queue) or ENOSPC
// (queue full, no backlog), and its completion delivers the result;
// CryptoWaitReq waits for it. AllocSyncSkcipher, or a CRYPTO_ALG_ASYNC mask,
// never picks an engine.
//
// # Locking and lifetimes
//
// The API's algorithm list is guarded by a read-write lock (the kernel's
// crypto_alg_sem); tfms are used without locks by any number of concurrent
// requests once keyed; a request belongs to one submitter (and, while an
// asynchronous driver holds it, to the driver). Each tfm holds a reference
// on its algorithm (Alg.Refcnt), dropped by Free.
package crypto
