package crypto

import (
	"sync"
	"sync/atomic"

	"github.com/vfslab/vfslab/errno"
)

// SkcipherImpl is the implementation of an algorithm registered with
// RegisterSkcipher: one value per tfm (made by SkcipherAlgDef.New), keyed
// by SetKey, then used by concurrent requests. Encrypt and Decrypt get
// contiguous heap buffers (dst and src are the same slice) and an IV of
// IVSize bytes they may update; their error is the request's result.
// SetKey gets a copy of the key that is wiped when it returns: like a
// kernel driver's setkey it keeps what it needs in its own context.
type SkcipherImpl interface {
	SetKey(key []byte) error
	Encrypt(dst, src, iv []byte) error
	Decrypt(dst, src, iv []byte) error
}

// SkcipherAlgDef describes an algorithm for RegisterSkcipher (the fields of
// struct skcipher_alg a driver fills in).
type SkcipherAlgDef struct {
	Name       string // cra_name, e.g. "xts(aes)"
	DriverName string // cra_driver_name, unique
	Priority   int
	// Flags are extra cra_flags: CRYPTO_ALG_INTERNAL,
	// CRYPTO_ALG_KERN_DRIVER_ONLY, CRYPTO_ALG_ALLOCATES_MEMORY,
	// CRYPTO_ALG_NEED_FALLBACK, CRYPTO_ALG_SKCIPHER_REQSIZE_LARGE. The type
	// is always skcipher. CRYPTO_ALG_ASYNC is refused: put an Engine in
	// front of a synchronous implementation instead.
	Flags      uint32
	BlockSize  int
	MinKeySize int
	MaxKeySize int
	IVSize     int
	// ReqSize is the reqsize of the algorithm's tfms.
	ReqSize int
	// New makes the per-tfm implementation (the init_tfm).
	New func() SkcipherImpl
}

// RegisterSkcipher is crypto_register_skcipher for an implementation outside
// the model's built-in set (a test's own driver). Its requests go through an
// interface call on heap copies of the data, so this path allocates, unlike
// the built-in drivers. Errors: EINVAL for an inconsistent definition (or
// CRYPTO_ALG_ASYNC), EEXIST for a taken driver name, ENAMETOOLONG.
func (api *API) RegisterSkcipher(def SkcipherAlgDef) (*Alg, error) {
	if def.Name == "" || def.DriverName == "" || def.New == nil || def.BlockSize <= 0 ||
		def.MinKeySize < 0 || def.MinKeySize > def.MaxKeySize || def.IVSize < 0 ||
		def.IVSize > maxIVSize || def.ReqSize < 0 || def.Flags&(CRYPTO_ALG_ASYNC|CRYPTO_ALG_TYPE_MASK) != 0 {
		return nil, errno.EINVAL
	}
	d := def
	a := &Alg{
		name: def.Name, driver: def.DriverName, priority: def.Priority,
		flags:     CRYPTO_ALG_TYPE_SKCIPHER | def.Flags,
		blockSize: def.BlockSize, minKey: def.MinKeySize, maxKey: def.MaxKeySize, ivSize: def.IVSize,
		reqSize: def.ReqSize, ctxSize: 8, kind: kindExternal, ext: &d,
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	if err := api.addLocked(a); err != nil {
		return nil, err
	}
	return a, nil
}

// Unregister is crypto_unregister_alg for an algorithm registered with
// RegisterSkcipher: lookups stop finding it. Errors: EBUSY while tfms or
// instances still use it (the kernel BUGs on that), EINVAL for an algorithm
// not registered that way.
func (api *API) Unregister(a *Alg) error {
	if a.kind != kindExternal || a.api != api {
		return errno.EINVAL
	}
	if a.refcnt.Load() != 0 {
		return errno.EBUSY
	}
	a.dead.Store(true)
	return nil
}

// extImpls holds the SkcipherImpl of every live tfm of a registered
// algorithm, keyed by the tfm's extID. The implementation is kept out of the
// tfm so that the interface call made on it does not make Go's escape
// analysis treat everything the tfm points to (and so everything an
// on-stack request points to) as escaping.
var (
	extImpls  sync.Map
	extNextID atomic.Uint64
)

func extRegister(impl SkcipherImpl) uint64 {
	id := extNextID.Add(1)
	extImpls.Store(id, impl)
	return id
}

func extImpl(id uint64) SkcipherImpl {
	v, _ := extImpls.Load(id)
	impl, _ := v.(SkcipherImpl)
	return impl
}
