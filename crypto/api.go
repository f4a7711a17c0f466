package crypto

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/vfslab/vfslab/crypto/aes"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// implKind is the closed set of implementations the static dispatcher knows.
// Every synchronous request is dispatched with a switch on it, so that no
// pointer into a caller's stack ever reaches an interface method or a func
// value (see the package documentation).
type implKind uint8

const (
	_ implKind = iota
	// kindCipher is a single-block cipher ("aes-generic", "aes-aesni").
	kindCipher
	// kindSHA256 and kindSHA512 are the shash algorithms ESSIV names.
	kindSHA256
	kindSHA512
	// The x86 arch drivers of arch/x86/crypto/aesni-intel_glue.c, backed by
	// package crypto/aes.
	kindECBNI
	kindCBCNI
	kindCTSNI
	// kindXTSNI is every x86 XTS driver (xts-aes-aesni, -aesni-avx,
	// -vaes-avx2, -vaes-avx512): in the kernel they all run the one glue
	// function xts_crypt of aesni-intel_glue.c with a different assembly
	// function, so in the model they share one kind and one dispatcher
	// case, and differ only in the aes.XTSImpl their tfm runs
	// (Alg.xtsImpl).
	kindXTSNI
	// Template instances (crypto/ecb.c, cbc.c, cts.c, xts.c, essiv.c).
	kindECB
	kindCBC
	kindCTS
	kindXTS
	kindESSIV
	// Wide-block modes (crypto/adiantum.c, crypto/hctr2.c), backed by
	// packages crypto/adiantum and crypto/hctr2.
	kindAdiantum
	kindHCTR2
	// kindEngine is the modelled asynchronous hardware engine.
	kindEngine
	// kindExternal is an algorithm registered through RegisterSkcipher.
	kindExternal
)

// Alg is a registered algorithm: struct crypto_alg with the skcipher_alg /
// cipher_alg fields the model uses. Algorithms are created by NewAPI (the
// built-in drivers), by template instantiation, by RegisterSkcipher and by
// RegisterEngine, and are never modified afterwards except for their
// reference count and, for an engine's algorithms, the dead flag.
type Alg struct {
	name      string
	driver    string
	priority  int
	flags     uint32
	blockSize int
	minKey    int
	maxKey    int
	ivSize    int
	chunkSize int
	walkSize  int
	// reqSize is the reqsize the algorithm's tfms get (set by init_tfm in
	// the kernel; fixed per algorithm in the model since each instance's
	// children are fixed at instantiation).
	reqSize int
	// ctxSize is cra_ctxsize: the tfm context the kernel allocates with
	// the tfm (accounted by the model, see crypto_create_tfm).
	ctxSize    int
	digestSize int

	kind implKind
	tmpl string // template name for instances
	// spawns are the algorithms an instance is built on (crypto_spawn):
	// cts/essiv: [inner skcipher]; ecb/cbc: [cipher]; xts: [ecb skcipher];
	// adiantum/hctr2: [block cipher].
	spawns []*Alg
	// cipherName is the single-block cipher a template allocates at tfm
	// init: the xts tweak cipher and the essiv cipher (crypto_alloc_cipher
	// by name, so the best driver at that time is used).
	cipherName string

	// xtsImpl is the assembly an x86 XTS driver (kindXTSNI) runs.
	xtsImpl aes.XTSImpl

	engine *Engine
	ext    *SkcipherAlgDef

	api    *API
	seq    int
	refcnt atomic.Int64
	dead   atomic.Bool
}

// Name returns cra_name ("cts(cbc(aes))").
func (a *Alg) Name() string { return a.name }

// DriverName returns cra_driver_name ("cts-cbc-aes-aesni").
func (a *Alg) DriverName() string { return a.driver }

// Priority returns cra_priority.
func (a *Alg) Priority() int { return a.priority }

// Flags returns cra_flags (type in the low four bits).
func (a *Alg) Flags() uint32 { return a.flags }

// Type returns cra_flags & CRYPTO_ALG_TYPE_MASK.
func (a *Alg) Type() uint32 { return a.flags & CRYPTO_ALG_TYPE_MASK }

// Async reports whether CRYPTO_ALG_ASYNC is set.
func (a *Alg) Async() bool { return a.flags&CRYPTO_ALG_ASYNC != 0 }

// BlockSize returns cra_blocksize.
func (a *Alg) BlockSize() int { return a.blockSize }

// IVSize returns the skcipher ivsize (0 for ciphers and ECB).
func (a *Alg) IVSize() int { return a.ivSize }

// MinKeySize returns min_keysize (cia_min_keysize for ciphers).
func (a *Alg) MinKeySize() int { return a.minKey }

// MaxKeySize returns max_keysize.
func (a *Alg) MaxKeySize() int { return a.maxKey }

// ReqSize returns the reqsize of the algorithm's skcipher tfms.
func (a *Alg) ReqSize() int { return a.reqSize }

// CtxSize returns cra_ctxsize.
func (a *Alg) CtxSize() int { return a.ctxSize }

// Template returns the name of the template this algorithm is an instance
// of, or "" for a driver registered directly.
func (a *Alg) Template() string { return a.tmpl }

// Refcnt returns cra_refcnt minus the registration's own reference: the
// number of live tfms (and instances spawned on it) using the algorithm.
func (a *Alg) Refcnt() int64 { return a.refcnt.Load() }

// Dead reports whether the algorithm was unregistered (its engine stopped).
func (a *Alg) Dead() bool { return a.dead.Load() }

// typeName names the type as /proc/crypto does.
func typeName(flags uint32) string {
	switch flags & CRYPTO_ALG_TYPE_MASK {
	case CRYPTO_ALG_TYPE_CIPHER:
		return "cipher"
	case CRYPTO_ALG_TYPE_LSKCIPHER:
		return "lskcipher"
	case CRYPTO_ALG_TYPE_SKCIPHER:
		return "skcipher"
	case CRYPTO_ALG_TYPE_SHASH:
		return "shash"
	case CRYPTO_ALG_TYPE_AEAD:
		return "aead"
	}
	return fmt.Sprintf("type%d", flags&CRYPTO_ALG_TYPE_MASK)
}

// String is the canonical one-line dump, in the spirit of a /proc/crypto
// entry: "cts(cbc(aes)) driver=cts-cbc-aes-aesni prio=400 type=skcipher
// flags=0x5 bs=16 iv=16 keys=16-32 reqsize=0 refcnt=0".
func (a *Alg) String() string {
	s := fmt.Sprintf("%s driver=%s prio=%d type=%s flags=%#x bs=%d iv=%d keys=%d-%d reqsize=%d refcnt=%d",
		a.name, a.driver, a.priority, typeName(a.flags), a.flags, a.blockSize, a.ivSize,
		a.minKey, a.maxKey, a.reqSize, a.refcnt.Load())
	if a.dead.Load() {
		s += " dead"
	}
	return s
}

// API is one simulated machine's Crypto API: its algorithm list
// (crypto_alg_list, guarded like crypto_alg_sem by an RWMutex), its
// templates and its asynchronous engines. Lookups and tfm allocations may
// run from many goroutines at once; requests never take the API's lock.
type API struct {
	mu      sync.RWMutex
	algs    []*Alg
	nextSeq int
	engines []*Engine
	opts    Options
}

// Options configures NewAPIOptions.
type Options struct {
	// NoArchDrivers leaves out the x86 AES-NI drivers ("aes-aesni",
	// "ecb-aes-aesni", ...), as a kernel on a CPU without
	// X86_FEATURE_AES (or without CONFIG_CRYPTO_AES_NI_INTEL) has them:
	// every AES mode is then a template instance over "aes-generic".
	NoArchDrivers bool
}

// NewAPI returns a Crypto API with the software algorithms registered, as in
// a kernel built with CONFIG_CRYPTO_AES, _CBC, _CTS, _ECB, _XTS, _ESSIV,
// _ADIANTUM, _HCTR2, _SHA256, _SHA512 and, when the CPU has AES-NI (see
// aes.Accelerated), CONFIG_CRYPTO_AES_NI_INTEL:
//
//	aes            aes-generic (100), aes-aesni (300)
//	sha256/sha512  sha256-generic, sha512-generic (100)
//	ecb(aes)       ecb-aes-aesni (400)
//	cbc(aes)       cbc-aes-aesni (400)
//	cts(cbc(aes))  cts-cbc-aes-aesni (400)
//	xts(aes)       xts-aes-aesni (401), and as the CPU allows (see
//	               aes.XTSImpl.Available) xts-aes-aesni-avx (500),
//	               xts-aes-vaes-avx2 (600), xts-aes-vaes-avx512 (800)
//
// and the templates ecb, cbc, cts, xts, essiv, adiantum and hctr2, whose
// instances ("essiv(cbc(aes),sha256)", "adiantum(xchacha12,aes)",
// "hctr2(aes)", or "cts(cbc(aes))" without AES-NI) are created on first use.
func NewAPI() *API { return NewAPIOptions(Options{}) }

// NewAPIOptions is NewAPI with options.
func NewAPIOptions(opts Options) *API {
	api := &API{opts: opts}
	api.registerBuiltins()
	return api
}

// registerBuiltins registers the drivers of the modelled kernel config. The
// priorities and context sizes are those of Linux 6.16+ on x86-64
// (crypto/aes_generic.c, arch/x86/crypto/aesni-intel_glue.c after the SIMD
// helper was dropped, so the skcipher drivers are synchronous).
func (api *API) registerBuiltins() {
	const aesCtx = 484 // sizeof(struct crypto_aes_ctx): 2*240 + 4
	api.mu.Lock()
	defer api.mu.Unlock()
	api.addLocked(&Alg{name: "aes", driver: "aes-generic", priority: 100,
		flags: CRYPTO_ALG_TYPE_CIPHER, blockSize: 16, minKey: 16, maxKey: 32,
		ctxSize: aesCtx, kind: kindCipher})
	api.addLocked(&Alg{name: "sha256", driver: "sha256-generic", priority: 100,
		flags: CRYPTO_ALG_TYPE_SHASH, blockSize: 64, digestSize: 32, kind: kindSHA256})
	api.addLocked(&Alg{name: "sha512", driver: "sha512-generic", priority: 100,
		flags: CRYPTO_ALG_TYPE_SHASH, blockSize: 128, digestSize: 64, kind: kindSHA512})
	if api.opts.NoArchDrivers || !aes.Accelerated() {
		return
	}
	// CRYPTO_AES_CTX_SIZE: the context plus AESNI_ALIGN_EXTRA (8).
	const niCtx = aesCtx + 8
	// XTS_AES_CTX_SIZE: two 16-byte-aligned contexts plus the extra.
	const niXTSCtx = 2*496 + 8
	api.addLocked(&Alg{name: "aes", driver: "aes-aesni", priority: 300,
		flags: CRYPTO_ALG_TYPE_CIPHER, blockSize: 16, minKey: 16, maxKey: 32,
		ctxSize: niCtx, kind: kindCipher})
	api.addLocked(&Alg{name: "ecb(aes)", driver: "ecb-aes-aesni", priority: 400,
		flags: CRYPTO_ALG_TYPE_SKCIPHER, blockSize: 16, minKey: 16, maxKey: 32,
		chunkSize: 16, walkSize: 16, ctxSize: niCtx, kind: kindECBNI})
	api.addLocked(&Alg{name: "cbc(aes)", driver: "cbc-aes-aesni", priority: 400,
		flags: CRYPTO_ALG_TYPE_SKCIPHER, blockSize: 16, minKey: 16, maxKey: 32, ivSize: 16,
		chunkSize: 16, walkSize: 16, ctxSize: niCtx, kind: kindCBCNI})
	api.addLocked(&Alg{name: "cts(cbc(aes))", driver: "cts-cbc-aes-aesni", priority: 400,
		flags: CRYPTO_ALG_TYPE_SKCIPHER, blockSize: 16, minKey: 16, maxKey: 32, ivSize: 16,
		chunkSize: 16, walkSize: 32, ctxSize: niCtx, kind: kindCTSNI})
	api.addLocked(&Alg{name: "xts(aes)", driver: "xts-aes-aesni", priority: 401,
		flags: CRYPTO_ALG_TYPE_SKCIPHER, blockSize: 16, minKey: 32, maxKey: 64, ivSize: 16,
		chunkSize: 16, walkSize: 32, ctxSize: niXTSCtx, kind: kindXTSNI, xtsImpl: aes.XTSAESNI})
	// register_xts_algs: the AVX and VAES drivers, each only when the CPU
	// has its features (nested: VAES-AVX512 needs what VAES-AVX2 needs,
	// which needs what AESNI-AVX needs), under the same cra_name, so that
	// "xts(aes)" finds the fastest and a driver name pins any.
	for _, im := range []aes.XTSImpl{aes.XTSAESNIAVX, aes.XTSVAESAVX2, aes.XTSVAESAVX512} {
		if !im.Available() {
			break
		}
		api.addLocked(&Alg{name: "xts(aes)", driver: im.String(), priority: im.Priority(),
			flags: CRYPTO_ALG_TYPE_SKCIPHER, blockSize: 16, minKey: 32, maxKey: 64, ivSize: 16,
			chunkSize: 16, walkSize: 32, ctxSize: niXTSCtx, kind: kindXTSNI, xtsImpl: im})
	}
}

// addLocked appends a to the algorithm list (crypto_register_alg). The
// caller holds api.mu for writing. Errors: EEXIST when a live algorithm
// already has the driver name, ENAMETOOLONG for names of CRYPTO_MAX_ALG_NAME
// bytes or more.
func (api *API) addLocked(a *Alg) error {
	if len(a.name) >= CryptoMaxAlgName || len(a.driver) >= CryptoMaxAlgName {
		return errno.ENAMETOOLONG
	}
	for _, q := range api.algs {
		if q.driver == a.driver && !q.dead.Load() {
			return errno.EEXIST
		}
	}
	if a.chunkSize == 0 {
		a.chunkSize = a.blockSize
	}
	if a.walkSize == 0 {
		a.walkSize = a.chunkSize
	}
	a.api = api
	a.seq = api.nextSeq
	api.nextSeq++
	api.algs = append(api.algs, a)
	return nil
}

// Algs returns every registered algorithm in registration order (the model's
// /proc/crypto).
func (api *API) Algs() []*Alg {
	api.mu.RLock()
	defer api.mu.RUnlock()
	return append([]*Alg(nil), api.algs...)
}

// String lists the algorithms, one line each (Alg.String), sorted by name
// and then by descending priority.
func (api *API) String() string {
	algs := api.Algs()
	sort.SliceStable(algs, func(i, j int) bool {
		if algs[i].name != algs[j].name {
			return algs[i].name < algs[j].name
		}
		return algs[i].priority > algs[j].priority
	})
	var b strings.Builder
	for _, a := range algs {
		b.WriteString(a.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// matches is the type/mask test of __crypto_alg_lookup.
func matches(a *Alg, typ, mask uint32) bool {
	return (a.flags^typ)&mask == 0
}

// findLocked is __crypto_alg_lookup: the algorithm whose driver name is name
// (an exact match ends the search), or else the highest-priority one whose
// cra_name is name, among live algorithms passing the type/mask test. The
// kernel adds algorithms at the head of crypto_alg_list, so of two with the
// same priority the later-registered one wins; the model scans newest first
// for the same result.
func (api *API) findLocked(name string, typ, mask uint32) *Alg {
	var best *Alg
	for i := len(api.algs) - 1; i >= 0; i-- {
		q := api.algs[i]
		if q.dead.Load() || !matches(q, typ, mask) {
			continue
		}
		if q.driver == name {
			return q
		}
		if q.name == name && (best == nil || q.priority > best.priority) {
			best = q
		}
	}
	return best
}

// lookupMask applies crypto_alg_mod_lookup's rule for internal algorithms:
// unless the caller mentions CRYPTO_ALG_INTERNAL in type or mask, internal
// algorithms are excluded.
func lookupMask(typ, mask uint32) uint32 {
	if (typ|mask)&CRYPTO_ALG_INTERNAL == 0 {
		mask |= CRYPTO_ALG_INTERNAL
	}
	return mask
}

// Lookup is crypto_alg_mod_lookup (crypto/api.c): it finds the best
// algorithm for name under type/mask, instantiating a template when the name
// has the form "tmpl(args)" and no registered algorithm matches (the
// kernel's larval + cryptomgr probe), and registering the instance so later
// lookups find it. It counts one crypto_alg_lookup event, and one
// crypto_template_instantiate per instance created (inner instances
// included).
//
// Errors: ENOENT when nothing matches and no template can build it (also for
// unknown templates and malformed names), EINVAL when a template rejects its
// arguments (e.g. cts over a non-CBC mode), ENAMETOOLONG for names of 64
// bytes or more.
func (api *API) Lookup(t *kernel.Task, name string, typ, mask uint32) (*Alg, error) {
	if len(name) >= CryptoMaxAlgName {
		return nil, errno.ENAMETOOLONG
	}
	mask = lookupMask(typ, mask)
	t.Inc(EvAlgLookup)
	api.mu.RLock()
	a := api.findLocked(name, typ, mask)
	api.mu.RUnlock()
	if a != nil {
		return a, nil
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	return api.lookupLocked(t, name, typ, mask)
}

// lookupLocked finds or instantiates name with api.mu held for writing.
func (api *API) lookupLocked(t *kernel.Task, name string, typ, mask uint32) (*Alg, error) {
	mask = lookupMask(typ, mask)
	if a := api.findLocked(name, typ, mask); a != nil {
		return a, nil
	}
	tmpl, args, ok := parseTemplateName(name)
	if !ok {
		return nil, errno.ENOENT
	}
	create, ok := templates[tmpl]
	if !ok {
		return nil, errno.ENOENT
	}
	inst, err := create(api, t, args)
	if err != nil {
		return nil, err
	}
	inst.tmpl = tmpl
	inst.flags |= CRYPTO_ALG_INSTANCE
	if inst.ctxSize == 0 {
		inst.ctxSize = 8
	}
	// A lookup racing with ours (or an earlier instantiation under another
	// name, such as "xts(ecb(aes))" for "xts(aes)") may have registered
	// the same driver already: use it, as crypto_register_instance's
	// -EEXIST makes the kernel's probe do.
	for _, q := range api.algs {
		if q.driver == inst.driver && !q.dead.Load() {
			if !matches(q, typ, mask) {
				return nil, errno.ENOENT
			}
			return q, nil
		}
	}
	if err := api.addLocked(inst); err != nil {
		return nil, err
	}
	for _, s := range inst.spawns {
		s.refcnt.Add(1)
	}
	t.Inc(EvTmplInstance)
	if !matches(inst, typ, mask) {
		// The instance exists now but is not what the caller asked for
		// (for instance a type mismatch): the kernel's lookup after the
		// probe fails the same way.
		return nil, errno.ENOENT
	}
	return inst, nil
}

// HasSkcipher is crypto_has_skcipher: whether an skcipher named name can be
// found (or instantiated) under type/mask.
func (api *API) HasSkcipher(t *kernel.Task, name string, typ, mask uint32) bool {
	typ, mask = skcipherTypeMask(typ, mask)
	_, err := api.Lookup(t, name, typ, mask)
	return err == nil
}

// skcipherTypeMask applies crypto_skcipher_type's maskclear/maskset: the
// caller's type bits are replaced by CRYPTO_ALG_TYPE_SKCIPHER under
// CRYPTO_ALG_TYPE_SKCIPHER_MASK, so lskcipher instances qualify too.
func skcipherTypeMask(typ, mask uint32) (uint32, uint32) {
	typ = typ&^CRYPTO_ALG_TYPE_MASK | CRYPTO_ALG_TYPE_SKCIPHER
	mask = mask&^CRYPTO_ALG_TYPE_MASK | CRYPTO_ALG_TYPE_SKCIPHER_MASK
	return typ, mask
}

// parseTemplateName splits "tmpl(arg1,arg2)" at top-level commas, as
// cryptomgr_schedule_probe parses a name. It reports false for names that
// are not template expressions.
func parseTemplateName(name string) (tmpl string, args []string, ok bool) {
	i := strings.IndexByte(name, '(')
	if i <= 0 || !strings.HasSuffix(name, ")") {
		return "", nil, false
	}
	tmpl = name[:i]
	body := name[i+1 : len(name)-1]
	depth, start := 0, 0
	for j := 0; j < len(body); j++ {
		switch body[j] {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return "", nil, false
			}
		case ',':
			if depth == 0 {
				args = append(args, body[start:j])
				start = j + 1
			}
		}
	}
	if depth != 0 {
		return "", nil, false
	}
	args = append(args, body[start:])
	for _, a := range args {
		if a == "" {
			return "", nil, false
		}
	}
	return tmpl, args, true
}
