package fscrypt

import (
	"crypto/sha512"

	"github.com/vfslab/vfslab/crypto"
)

// HKDF contexts (fs/crypto/fscrypt_private.h HKDF_CONTEXT_*): the byte after
// "fscrypt\0" in the HKDF info string.
const (
	HKDFContextKeyIdentifier  = 1 // key identifier of a raw key (no extra info)
	HKDFContextPerFileEncKey  = 2 // per-file key (info: nonce)
	HKDFContextDirectKey      = 3 // DIRECT_KEY per-mode key (info: mode_num)
	HKDFContextIVInoLblk64Key = 4 // IV_INO_LBLK_64 key (info: mode_num || fs_uuid)
	HKDFContextDirhashKey     = 5 // dirhash SipHash key (info: nonce)
	HKDFContextIVInoLblk32Key = 6 // IV_INO_LBLK_32 key (info: mode_num || fs_uuid)
	HKDFContextInodeHashKey   = 7 // inode number hash key (no extra info)
	hkdfInfoPrefix            = "fscrypt\x00"
	hkdfMaxInfo               = len(hkdfInfoPrefix) + 1 + 1 + 16
	sha512DigestSize          = sha512.Size
)

// hkdfKey is struct fscrypt_hkdf (fs/crypto/hkdf.c, Linux 6.16): the
// HMAC-SHA512 key prepared from the pseudorandom key that HKDF-Extract
// derives from a master key once, when the key is added. It holds only
// the HMAC's inner and outer states (struct hmac_sha512_key); the PRK
// itself is zeroed as soon as the key is prepared, as the kernel does.
//
// The HMAC is the project's own (crypto/sha512.go), not Go's crypto/hmac,
// whose keyed states cannot be zeroed: those states are enough to derive
// every per-file key, so wipe must reach them. Expansions only read the
// prepared key, so they may run concurrently.
type hkdfKey struct {
	key crypto.HMACSHA512Key
	set bool
}

// init is fscrypt_init_hkdf: HKDF-Extract with the default salt (64 zero
// bytes) and the master key as input keying material, then
// hmac_sha512_preparekey on the PRK and memzero_explicit of the PRK.
func (h *hkdfKey) init(masterKey []byte) {
	prk := crypto.HKDFExtractSHA512(nil, masterKey)
	crypto.HMACSHA512PrepareKey(&h.key, prk[:])
	clear(prk[:])
	h.set = true
}

// expand is fscrypt_hkdf_expand: HKDF-Expand with info = "fscrypt\0" ||
// context || info, filling okm (at most 255*64 bytes). It allocates
// nothing.
func (h *hkdfKey) expand(context byte, info []byte, okm []byte) {
	var full [hkdfMaxInfo + 48]byte
	fi := append(full[:0], hkdfInfoPrefix...)
	fi = append(fi, context)
	fi = append(fi, info...)
	crypto.HKDFExpandPrepared(&h.key, fi, okm)
}

// wipe is fscrypt_destroy_hkdf: zero the prepared HMAC key
// (memzero_explicit of the struct).
func (h *hkdfKey) wipe() {
	h.key.Wipe()
	h.set = false
}

// KeyIdentifier returns the v2 key identifier of a raw master key: the
// first 16 bytes of HKDF-SHA512 with context 1 (what
// FS_IOC_ADD_ENCRYPTION_KEY returns).
func KeyIdentifier(masterKey []byte) [KeyIdentifierSize]byte {
	var h hkdfKey
	h.init(masterKey)
	var id [KeyIdentifierSize]byte
	h.expand(HKDFContextKeyIdentifier, nil, id[:])
	h.wipe()
	return id
}

// KeyDescriptor returns the v1 key descriptor userspace conventionally uses
// for a raw key: the first 8 bytes of SHA-512(SHA-512(key)).
func KeyDescriptor(masterKey []byte) [KeyDescriptorSize]byte {
	a := sha512.Sum512(masterKey)
	b := sha512.Sum512(a[:])
	var d [KeyDescriptorSize]byte
	copy(d[:], b[:])
	return d
}
