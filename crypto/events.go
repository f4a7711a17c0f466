package crypto

import (
	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/kmem"
)

// Events counted by the Crypto API model, in the calling task's shard (or,
// for work an asynchronous engine does, in its worker task's shard). Counts
// are taken once per operation or request, never per block inside a loop.
var (
	EvTfmAlloc       = events.Register("crypto_tfm_alloc", "crypto tfms allocated (crypto_alloc_skcipher and friends, template children included)")
	EvTfmFree        = events.Register("crypto_tfm_free", "crypto tfms freed")
	EvAlgLookup      = events.Register("crypto_alg_lookup", "algorithm lookups by name (crypto_alg_mod_lookup)")
	EvTmplInstance   = events.Register("crypto_template_instantiate", "template instances created and registered (e.g. cts(cbc(aes-generic)))")
	EvSetkey         = events.Register("crypto_setkey", "crypto_skcipher_setkey calls")
	EvKeyExpansion   = events.Register("aes_key_expansion", "AES key schedules expanded (aes_expandkey and driver setkeys)")
	EvAESBlocks      = events.Register("aes_block_ops", "AES block encryptions/decryptions, counted n per request")
	EvReqAlloc       = events.Register("skcipher_request_alloc", "skcipher requests allocated on the heap (skcipher_request_alloc)")
	EvReqFree        = events.Register("skcipher_request_free", "skcipher requests freed (skcipher_request_free)")
	EvReqOnStack     = events.Register("skcipher_request_on_stack", "skcipher requests declared on the stack (SYNC_SKCIPHER_REQUEST_ON_STACK / SKCIPHER_REQUEST_ON_STACK)")
	EvReqClone       = events.Register("skcipher_request_clone", "on-stack skcipher requests cloned to the heap (SKCIPHER_REQUEST_CLONE)")
	EvEncrypt        = events.Register("skcipher_encrypt", "crypto_skcipher_encrypt requests")
	EvDecrypt        = events.Register("skcipher_decrypt", "crypto_skcipher_decrypt requests")
	EvCryptBytes     = events.Register("skcipher_bytes", "bytes passed to skcipher encrypt/decrypt requests")
	EvWalkBounce     = events.Register("skcipher_walk_bounce", "requests whose scatterlists were gathered into a bounce buffer (blocks split across entries)")
	EvAsyncSubmit    = events.Register("crypto_async_submit", "requests accepted by an asynchronous driver (-EINPROGRESS or -EBUSY)")
	EvAsyncBacklog   = events.Register("crypto_async_backlog", "requests put in an asynchronous driver's backlog (-EBUSY)")
	EvAsyncReject    = events.Register("crypto_async_reject", "requests refused by a full asynchronous queue without MAY_BACKLOG (-ENOSPC)")
	EvAsyncEAGAIN    = events.Register("crypto_async_eagain", "on-stack requests refused by an asynchronous driver (-EAGAIN)")
	EvAsyncComplete  = events.Register("crypto_async_complete", "asynchronous completions delivered (counted by the engine's worker)")
	EvAsyncBacklogIn = events.Register("crypto_async_backlog_notify", "-EINPROGRESS notifications sent to backlogged requests entering the queue")
	EvWaitSleep      = events.Register("crypto_wait_sleep", "crypto_wait_req calls that waited for a completion")
	EvBioRequest     = events.Register("skcipher_bio_request", "whole-bio skcipher requests (CRYPTO_SKCIPHER_REQ_BIO)")
	EvBioDataUnits   = events.Register("skcipher_bio_data_units", "data units processed inside whole-bio requests")
	EvChainRequest   = events.Register("skcipher_chain_request", "requests processed as members of a request chain")
	// EvFPUBegin counts the kernel_fpu_begin/kernel_fpu_end sections the
	// x86 AES-NI code enters, where the kernel enters them: one per
	// skcipher walk step of the aesni-intel_glue.c drivers (ecb, cbc, one or
	// two for cts, one per xts_crypt), one per setkey (aes_set_key_common),
	// one per block of the "aes-aesni" single-block cipher (aesni_encrypt,
	// aesni_decrypt), and, for the AES library since Linux 7.0
	// (lib/crypto/x86/aes.h), one per aes_encrypt and one per AES-128/256
	// key preparation. The model's walk has one step per contiguous request.
	EvFPUBegin = events.Register("kernel_fpu_begin", "kernel_fpu_begin/kernel_fpu_end sections entered by the x86 AES-NI glue and the AES library")
)

// Allocation sites of the model (kmem accounting and fault injection).
var (
	// siteTfm is crypto_create_tfm_node's kzalloc of a tfm and its context.
	siteTfm = kmem.NewSite("crypto_create_tfm")
	// SiteRequest is the kmalloc inside skcipher_request_alloc: one
	// allocation of SizeofSkcipherRequest + crypto_skcipher_reqsize(tfm)
	// bytes per request.
	SiteRequest = kmem.NewSite("skcipher_request_alloc")
	// SiteRequestClone is the kmemdup of SKCIPHER_REQUEST_CLONE.
	SiteRequestClone = kmem.NewSite("skcipher_request_clone")
)
