package crypto

import (
	"strings"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// templateCreate builds an instance for a template expression's arguments
// (crypto_template.create). It runs with api.mu held for writing and may
// look up (and so instantiate) the algorithms it is built on.
type templateCreate func(api *API, t *kernel.Task, args []string) (*Alg, error)

// templates are the registered templates (crypto_register_template), keyed
// by name. Filled in init to break the initialization cycle through
// lookupLocked.
var templates map[string]templateCreate

func init() {
	templates = map[string]templateCreate{
		"ecb":      createECB,
		"cbc":      createCBC,
		"cts":      createCTS,
		"xts":      createXTS,
		"essiv":    createESSIV,
		"adiantum": createAdiantum,
		"hctr2":    createHCTR2,
	}
}

// Request-context sizes of the templates on x86-64, from their struct
// layouts (see each create function).
const (
	// ctsReqCtx is sizeof(struct crypto_cts_reqctx): sg[2], offset (padded)
	// and the subrequest.
	ctsReqCtx = 2*SizeofScatterlist + 8 + SizeofSkcipherRequest
	// xtsReqCtx is sizeof(struct xts_request_ctx): le128 t, the tail
	// pointer, sg[2] and the subrequest.
	xtsReqCtx = 16 + 8 + 2*SizeofScatterlist + SizeofSkcipherRequest
	// adiantumReqSize is the reqsize adiantum_init_tfm computes: rbuf (32),
	// enc, header_hash (aligned: 64 bytes), then the larger of the
	// NHPoly1305 state (80) and the XChaCha12 subrequest (80 + 0).
	adiantumReqSize = 64 + SizeofSkcipherRequest
	// hctr2ReqSize is the reqsize hctr2_init_tfm computes: first_block,
	// xctr_iv, two scatterlist pointers, sg_src[2], sg_dst[2],
	// hashed_tweak (192 bytes), then the XCTR subrequest (80 + 0).
	hctr2ReqSize = 192 + SizeofSkcipherRequest
	// xchachaPriority is the priority of "xchacha12-lib", the only
	// XChaCha12 skcipher Linux registers since the ChaCha library rework.
	xchachaPriority = 300
)

// innerSkcipher grabs the skcipher an instance is built on
// (crypto_grab_skcipher). The model's templates always build on synchronous
// algorithms: an instance over an asynchronous engine would itself be
// asynchronous, which the model does not implement (an engine registers the
// modes it accelerates directly instead).
func innerSkcipher(api *API, t *kernel.Task, name string) (*Alg, error) {
	typ, mask := skcipherTypeMask(0, CRYPTO_ALG_ASYNC)
	return api.lookupLocked(t, name, typ, mask)
}

// innerCipher grabs a single-block cipher (crypto_grab_cipher).
func innerCipher(api *API, t *kernel.Task, name string) (*Alg, error) {
	return api.lookupLocked(t, name, CRYPTO_ALG_TYPE_CIPHER, CRYPTO_ALG_TYPE_MASK)
}

// aesCipherSpawn checks that c is an AES cipher the model can drive.
func aesCipherSpawn(c *Alg) error {
	if c.kind != kindCipher || c.blockSize != 16 {
		return errno.EINVAL
	}
	return nil
}

// createECB is the ecb template (crypto/ecb.c): "ecb(aes)" over a cipher,
// named "ecb(<cipher driver>)", at the cipher's priority. Since Linux 6.8
// ecb and cbc are lskcipher templates; an lskcipher also serves skcipher
// users, which the type is kept for.
func createECB(api *API, t *kernel.Task, args []string) (*Alg, error) {
	return createSimple(api, t, "ecb", args, 0, kindECB)
}

// createCBC is the cbc template (crypto/cbc.c), like createECB with an IV of
// one block.
func createCBC(api *API, t *kernel.Task, args []string) (*Alg, error) {
	return createSimple(api, t, "cbc", args, 16, kindCBC)
}

// createSimple is lskcipher_alloc_instance_simple for ecb and cbc.
func createSimple(api *API, t *kernel.Task, tmpl string, args []string, ivSize int, kind implKind) (*Alg, error) {
	if len(args) != 1 {
		return nil, errno.EINVAL
	}
	c, err := innerCipher(api, t, args[0])
	if err != nil {
		return nil, err
	}
	if err := aesCipherSpawn(c); err != nil {
		return nil, err
	}
	return &Alg{
		name: tmpl + "(" + c.name + ")", driver: tmpl + "(" + c.driver + ")",
		priority: c.priority, flags: CRYPTO_ALG_TYPE_LSKCIPHER,
		blockSize: c.blockSize, minKey: c.minKey, maxKey: c.maxKey, ivSize: ivSize,
		ctxSize: 8, kind: kind, spawns: []*Alg{c},
	}, nil
}

// createCTS is crypto_cts_create (crypto/cts.c): CBC ciphertext stealing
// (CS3) over an inner "cbc(...)" skcipher whose IV is one block. The
// instance is "cts(<inner name>)", driver "cts(<inner driver>)", at the
// inner priority; reqsize is ALIGN(sizeof(crypto_cts_reqctx) + inner
// reqsize, 8) + blocksize (crypto_cts_init_tfm). Errors: EINVAL when the
// inner algorithm is not a CBC mode.
func createCTS(api *API, t *kernel.Task, args []string) (*Alg, error) {
	if len(args) != 1 {
		return nil, errno.EINVAL
	}
	c, err := innerSkcipher(api, t, args[0])
	if err != nil {
		return nil, err
	}
	// The model's cts works on 16-byte blocks (every cipher it has).
	if c.blockSize != 16 || c.ivSize != c.blockSize || !strings.HasPrefix(c.name, "cbc(") {
		return nil, errno.EINVAL
	}
	return &Alg{
		name: "cts(" + c.name + ")", driver: "cts(" + c.driver + ")",
		priority: c.priority, flags: CRYPTO_ALG_TYPE_SKCIPHER | c.flags&CRYPTO_ALG_ASYNC,
		blockSize: c.blockSize, minKey: c.minKey, maxKey: c.maxKey, ivSize: c.blockSize,
		chunkSize: c.chunkSize, reqSize: align8(ctsReqCtx+c.reqSize) + c.blockSize,
		ctxSize: 8, kind: kindCTS, spawns: []*Alg{c},
	}, nil
}

// createXTS is the xts template's create (crypto/xts.c): it grabs the named
// skcipher, or "ecb(<name>)" when that does not exist, which must be an ECB
// mode of a 16-byte block cipher without IV. Because of the historical
// naming the instance's cra_name is "xts(<cipher>)" with the "ecb(...)"
// stripped, while its driver name is "xts(<ecb driver>)", e.g.
// "xts(ecb(aes-generic))". Keys are twice the inner key sizes; reqsize is
// the inner reqsize plus sizeof(struct xts_request_ctx).
func createXTS(api *API, t *kernel.Task, args []string) (*Alg, error) {
	if len(args) != 1 {
		return nil, errno.EINVAL
	}
	name := args[0]
	c, err := innerSkcipher(api, t, name)
	if err == errno.ENOENT && !strings.HasPrefix(name, "ecb(") {
		ecb := "ecb(" + name + ")"
		if len(ecb) >= CryptoMaxAlgName {
			return nil, errno.ENAMETOOLONG
		}
		c, err = innerSkcipher(api, t, ecb)
	}
	if err != nil {
		return nil, err
	}
	if c.blockSize != 16 || c.ivSize != 0 {
		return nil, errno.EINVAL
	}
	if !strings.HasPrefix(c.name, "ecb(") || !strings.HasSuffix(c.name, ")") || len(c.name) < 6 {
		return nil, errno.EINVAL
	}
	cipher := c.name[4 : len(c.name)-1]
	return &Alg{
		name: "xts(" + cipher + ")", driver: "xts(" + c.driver + ")",
		priority: c.priority, flags: CRYPTO_ALG_TYPE_SKCIPHER | c.flags&CRYPTO_ALG_ASYNC,
		blockSize: 16, minKey: 2 * c.minKey, maxKey: 2 * c.maxKey, ivSize: 16,
		reqSize: c.reqSize + xtsReqCtx, ctxSize: 16, kind: kindXTS,
		spawns: []*Alg{c}, cipherName: cipher,
	}, nil
}

// parseCipherName is essiv.c's parse_cipher_name: the text between the last
// '(' of the inner cra_name and the first ')' after it ("aes" for
// "cbc(aes)").
func parseCipherName(craName string) (string, bool) {
	p := strings.LastIndexByte(craName, '(')
	if p < 0 {
		return "", false
	}
	rest := craName[p+1:]
	q := strings.IndexByte(rest, ')')
	if q <= 0 {
		return "", false
	}
	return rest[:q], true
}

// createESSIV is essiv_create (crypto/essiv.c) for skciphers:
// "essiv(<skcipher>,<hash>)", e.g. essiv(cbc(aes),sha256) for fscrypt's
// AES-128-CBC-ESSIV. The IV is encrypted with the cipher named inside the
// inner mode, keyed with the hash of the key; the hash's digest must be a
// valid key size of that cipher and the inner IV must be one cipher block
// (essiv_supported_algorithms), else EINVAL. Names: cra_name
// "essiv(<inner name>,<hash name>)", driver "essiv(<inner driver>,<hash
// driver>)"; priority and flags of the inner skcipher; reqsize
// sizeof(struct skcipher_request) + inner reqsize.
func createESSIV(api *API, t *kernel.Task, args []string) (*Alg, error) {
	if len(args) != 2 {
		return nil, errno.EINVAL
	}
	c, err := innerSkcipher(api, t, args[0])
	if err != nil {
		return nil, err
	}
	h, err := api.lookupLocked(t, args[1], CRYPTO_ALG_TYPE_SHASH, CRYPTO_ALG_TYPE_MASK)
	if err != nil {
		return nil, err
	}
	cipherName, ok := parseCipherName(c.name)
	if !ok {
		return nil, errno.EINVAL
	}
	ciph, err := innerCipher(api, t, cipherName)
	if err != nil {
		return nil, errno.EINVAL
	}
	if aesCipherSpawn(ciph) != nil || h.digestSize < ciph.minKey || h.digestSize > ciph.maxKey ||
		c.ivSize != ciph.blockSize {
		return nil, errno.EINVAL
	}
	return &Alg{
		name: "essiv(" + c.name + "," + h.name + ")", driver: "essiv(" + c.driver + "," + h.driver + ")",
		priority: c.priority, flags: CRYPTO_ALG_TYPE_SKCIPHER | c.flags&CRYPTO_ALG_ASYNC,
		blockSize: c.blockSize, minKey: c.minKey, maxKey: c.maxKey, ivSize: c.ivSize,
		chunkSize: c.chunkSize, walkSize: c.walkSize,
		reqSize: SizeofSkcipherRequest + c.reqSize, ctxSize: 32, kind: kindESSIV,
		spawns: []*Alg{c, h}, cipherName: cipherName,
	}, nil
}

// createAdiantum is adiantum_create (crypto/adiantum.c, Linux 7.0 after the
// NH library conversion): "adiantum(<stream cipher>,<block cipher>)". The
// model implements XChaCha12 with AES (package crypto/adiantum), the only
// instantiation fscrypt uses; "xchacha20" is ENOENT here (Linux has it).
// Names: cra_name "adiantum(xchacha12,<cipher name>)", driver
// "adiantum(xchacha12-lib,<cipher driver>)"; priority (4 * stream priority
// + block cipher priority) / 5; 32-byte key and 32-byte tweak.
func createAdiantum(api *API, t *kernel.Task, args []string) (*Alg, error) {
	if len(args) != 2 {
		return nil, errno.EINVAL
	}
	if args[0] != "xchacha12" && args[0] != "xchacha12-lib" {
		return nil, errno.ENOENT
	}
	blk, err := innerCipher(api, t, args[1])
	if err != nil {
		return nil, err
	}
	if err := aesCipherSpawn(blk); err != nil || blk.minKey > 32 || blk.maxKey < 32 {
		return nil, errno.EINVAL
	}
	return &Alg{
		name: "adiantum(xchacha12," + blk.name + ")", driver: "adiantum(xchacha12-lib," + blk.driver + ")",
		priority: (4*xchachaPriority + blk.priority) / 5, flags: CRYPTO_ALG_TYPE_SKCIPHER,
		blockSize: 16, minKey: 32, maxKey: 32, ivSize: 32,
		reqSize: adiantumReqSize, ctxSize: 16 + 2*24 + 1072, kind: kindAdiantum,
		spawns: []*Alg{blk},
	}, nil
}

// createHCTR2 is hctr2_create (crypto/hctr2.c, after the POLYVAL library
// conversion): "hctr2(<block cipher>)" built on "xctr(<cipher>)" and the
// POLYVAL library. The model names the XCTR part after the xctr template
// over the chosen cipher driver (it registers no XCTR drivers), so the
// driver is "hctr2_base(xctr(<cipher driver>),polyval-lib)" with priority
// (2 * xctr priority + cipher priority) / 3; 32-byte tweak, AES key sizes.
func createHCTR2(api *API, t *kernel.Task, args []string) (*Alg, error) {
	if len(args) != 1 {
		return nil, errno.EINVAL
	}
	blk, err := innerCipher(api, t, args[0])
	if err != nil {
		return nil, err
	}
	if err := aesCipherSpawn(blk); err != nil {
		return nil, err
	}
	xctrPriority := blk.priority
	return &Alg{
		name: "hctr2(" + blk.name + ")", driver: "hctr2_base(xctr(" + blk.driver + "),polyval-lib)",
		priority: (2*xctrPriority + blk.priority) / 3, flags: CRYPTO_ALG_TYPE_SKCIPHER,
		blockSize: 16, minKey: blk.minKey, maxKey: blk.maxKey, ivSize: 32,
		reqSize: hctr2ReqSize, ctxSize: 16 + 16 + 8*16, kind: kindHCTR2,
		spawns: []*Alg{blk},
	}, nil
}

// align8 rounds n up to CRYPTO_MINALIGN (crypto_tfm_ctx_alignment, 8 on
// x86-64).
func align8(n int) int { return (n + 7) &^ 7 }
