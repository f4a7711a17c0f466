package crypto

// Algorithm types and flags (include/linux/crypto.h, cra_flags), with the
// kernel's values. Lookups compare them with the type/mask rule of
// __crypto_alg_lookup: an algorithm matches when (cra_flags ^ type) & mask
// is zero.
const (
	// CRYPTO_ALG_TYPE_MASK selects the type bits of cra_flags.
	CRYPTO_ALG_TYPE_MASK uint32 = 0x0000000f
	// CRYPTO_ALG_TYPE_CIPHER is a single-block cipher ("aes").
	CRYPTO_ALG_TYPE_CIPHER uint32 = 0x00000001
	// CRYPTO_ALG_TYPE_AEAD is an AEAD.
	CRYPTO_ALG_TYPE_AEAD uint32 = 0x00000003
	// CRYPTO_ALG_TYPE_LSKCIPHER is a linear (virtual address) skcipher.
	CRYPTO_ALG_TYPE_LSKCIPHER uint32 = 0x00000004
	// CRYPTO_ALG_TYPE_SKCIPHER is a scatterlist symmetric key cipher.
	CRYPTO_ALG_TYPE_SKCIPHER uint32 = 0x00000005
	// CRYPTO_ALG_TYPE_SHASH is a synchronous hash ("sha256").
	CRYPTO_ALG_TYPE_SHASH uint32 = 0x0000000e
	// CRYPTO_ALG_TYPE_SKCIPHER_MASK is what crypto_alloc_skcipher adds to
	// the mask: it lets an lskcipher serve as an skcipher.
	CRYPTO_ALG_TYPE_SKCIPHER_MASK uint32 = 0x0000000e

	// CRYPTO_ALG_LARVAL marks a larval (being instantiated) algorithm.
	CRYPTO_ALG_LARVAL uint32 = 0x00000010
	// CRYPTO_ALG_DEAD marks an algorithm being unregistered.
	CRYPTO_ALG_DEAD uint32 = 0x00000020
	// CRYPTO_ALG_DYING marks an algorithm being removed.
	CRYPTO_ALG_DYING uint32 = 0x00000040
	// CRYPTO_ALG_ASYNC marks an asynchronous implementation: requests may
	// return -EINPROGRESS/-EBUSY and complete through their callback.
	CRYPTO_ALG_ASYNC uint32 = 0x00000080
	// CRYPTO_ALG_NEED_FALLBACK marks a driver that needs a fallback of the
	// same algorithm for corner cases.
	CRYPTO_ALG_NEED_FALLBACK uint32 = 0x00000100
	// CRYPTO_ALG_TESTED is set once the self-tests passed.
	CRYPTO_ALG_TESTED uint32 = 0x00000400
	// CRYPTO_ALG_INSTANCE marks a template instance.
	CRYPTO_ALG_INSTANCE uint32 = 0x00000800
	// CRYPTO_ALG_KERN_DRIVER_ONLY marks a driver for dedicated hardware
	// (a crypto accelerator reached through a kernel driver).
	CRYPTO_ALG_KERN_DRIVER_ONLY uint32 = 0x00001000
	// CRYPTO_ALG_INTERNAL marks an algorithm meant only for other
	// algorithms; lookups skip it unless the caller asks for it.
	CRYPTO_ALG_INTERNAL uint32 = 0x00002000
	// CRYPTO_ALG_OPTIONAL_KEY: a hash that works without a key.
	CRYPTO_ALG_OPTIONAL_KEY uint32 = 0x00004000
	// CRYPTO_ALG_SKCIPHER_REQSIZE_LARGE (include/crypto/internal/skcipher.h)
	// reuses the CRYPTO_ALG_OPTIONAL_KEY bit for skciphers: a synchronous
	// algorithm whose reqsize exceeds MAX_SYNC_SKCIPHER_REQSIZE sets it so
	// that crypto_alloc_sync_skcipher never picks it.
	CRYPTO_ALG_SKCIPHER_REQSIZE_LARGE uint32 = CRYPTO_ALG_OPTIONAL_KEY
	// CRYPTO_NOLOAD: do not try to load a module for the lookup.
	CRYPTO_NOLOAD uint32 = 0x00008000
	// CRYPTO_ALG_ALLOCATES_MEMORY marks an algorithm that may allocate
	// memory while processing a request (fscrypt masks it out so that
	// reads under memory pressure cannot fail).
	CRYPTO_ALG_ALLOCATES_MEMORY uint32 = 0x00010000
	// CRYPTO_ALG_FIPS_INTERNAL marks an algorithm usable in FIPS mode only
	// inside another one.
	CRYPTO_ALG_FIPS_INTERNAL uint32 = 0x00020000
)

// Transform and request flags (crt_flags and crypto_async_request.flags).
const (
	// CRYPTO_TFM_NEED_KEY is set on a tfm until a key has been set
	// successfully; crypto_skcipher_encrypt/decrypt then return -ENOKEY.
	CRYPTO_TFM_NEED_KEY uint32 = 0x00000001
	// CRYPTO_TFM_REQ_MASK selects the request flags a template passes down
	// to its children at setkey.
	CRYPTO_TFM_REQ_MASK uint32 = 0x000fff00
	// CRYPTO_TFM_REQ_FORBID_WEAK_KEYS makes setkey reject weak keys (for
	// XTS: a key whose two halves are equal).
	CRYPTO_TFM_REQ_FORBID_WEAK_KEYS uint32 = 0x00000100
	// CRYPTO_TFM_REQ_MAY_SLEEP allows the driver to sleep.
	CRYPTO_TFM_REQ_MAY_SLEEP uint32 = 0x00000200
	// CRYPTO_TFM_REQ_MAY_BACKLOG lets an asynchronous driver queue the
	// request in its backlog when its queue is full, returning -EBUSY.
	CRYPTO_TFM_REQ_MAY_BACKLOG uint32 = 0x00000400
	// CRYPTO_TFM_REQ_ON_STACK marks a request declared on the stack
	// (HASH_REQUEST_ON_STACK in Linux 6.15, and the skcipher equivalent of
	// the seed 003 branch): an asynchronous driver refuses it with -EAGAIN
	// and the caller clones it to the heap.
	CRYPTO_TFM_REQ_ON_STACK uint32 = 0x00000800

	// CRYPTO_SKCIPHER_REQ_CONT: the request continues a previous one.
	CRYPTO_SKCIPHER_REQ_CONT uint32 = 0x00000001
	// CRYPTO_SKCIPHER_REQ_NOTFINAL: the operation is not final.
	CRYPTO_SKCIPHER_REQ_NOTFINAL uint32 = 0x00000002
	// CRYPTO_SKCIPHER_REQ_BIO (seed 003, never merged): the request carries
	// a whole bio instead of scatterlists and cryptlen holds log2 of the
	// data-unit size. Only the x86 XTS glue learned it: it walks the bio's
	// folios and data units, adding one (le64) to req->iv after each, which
	// by then holds the tweak (see cryptBio); other drivers take cryptlen
	// as a byte count and fail with EINVAL.
	CRYPTO_SKCIPHER_REQ_BIO uint32 = 0x00000004
)

// Sizes from include/crypto/skcipher.h and the x86-64 struct layouts.
const (
	// MaxSyncSkcipherReqSize is MAX_SYNC_SKCIPHER_REQSIZE: the request
	// context room of SYNC_SKCIPHER_REQUEST_ON_STACK, and the largest
	// reqsize crypto_alloc_sync_skcipher accepts.
	MaxSyncSkcipherReqSize = 384
	// MaxSkcipherReqSize is the MAX_SKCIPHER_REQSIZE of seed 000 (384),
	// the size fscrypt passed to its SKCIPHER_REQUEST_ON_STACK.
	MaxSkcipherReqSize = 384
	// SizeofSkcipherRequest is sizeof(struct skcipher_request) on x86-64:
	// cryptlen (4, padded to 8), iv, src, dst (8 each) and struct
	// crypto_async_request base (list_head 16, complete 8, data 8, tfm 8,
	// flags 4, padded: 48) = 80 bytes; __ctx follows, aligned to
	// CRYPTO_MINALIGN (8).
	SizeofSkcipherRequest = 80
	// SizeofScatterlist is sizeof(struct scatterlist) on x86-64 with
	// CONFIG_NEED_SG_DMA_LENGTH (page_link, offset, length, dma_address,
	// dma_length, padded).
	SizeofScatterlist = 32
	// CryptoMaxAlgName is CRYPTO_MAX_ALG_NAME: names of 64 bytes or more
	// are rejected with ENAMETOOLONG.
	CryptoMaxAlgName = 64
)
