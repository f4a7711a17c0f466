package fscrypt

import (
	"crypto/hmac"
	"crypto/sha512"
	"hash"
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

// hkdfKey is struct fscrypt_hkdf (fs/crypto/hkdf.c): the HKDF-SHA512
// pseudorandom key extracted from a master key once, when the key is added.
//
// Like the kernel, which keeps an HMAC key with its inner and outer states
// prepared (hmac_sha512_preparekey, or crypto_shash_setkey on "hmac(sha512)"
// before Linux 6.16), the model keeps an HMAC whose padded-key states are
// computed once; each expansion works on a clone of it, so expansions may
// run concurrently.
type hkdfKey struct {
	prk  [sha512DigestSize]byte
	hmac hash.Cloner
	set  bool
}

// initHKDF is fscrypt_init_hkdf: HKDF-Extract with the default salt (64
// zero bytes) and the master key as input keying material.
func (h *hkdfKey) init(masterKey []byte) {
	var salt [sha512DigestSize]byte
	m := hmac.New(sha512.New, salt[:])
	m.Write(masterKey)
	m.Sum(h.prk[:0])
	p := hmac.New(sha512.New, h.prk[:])
	p.Reset() // computes and keeps the inner and outer states
	h.hmac = p.(hash.Cloner)
	h.set = true
}

// expand is fscrypt_hkdf_expand: HKDF-Expand with info = "fscrypt\0" ||
// context || info, filling okm (at most 255*64 bytes).
func (h *hkdfKey) expand(context byte, info []byte, okm []byte) {
	var full [hkdfMaxInfo + 48]byte
	fi := append(full[:0], hkdfInfoPrefix...)
	fi = append(fi, context)
	fi = append(fi, info...)
	m, err := h.hmac.Clone()
	if err != nil {
		panic(err) // sha512's HMAC always clones
	}
	hkdfExpand(m, fi, okm)
}

func hkdfExpand(m hash.Hash, info, okm []byte) {
	var t [sha512DigestSize]byte
	var prev []byte
	counter := byte(1)
	for i := 0; i < len(okm); i += sha512DigestSize {
		m.Reset()
		m.Write(prev)
		m.Write(info)
		c := [1]byte{counter}
		m.Write(c[:])
		m.Sum(t[:0])
		copy(okm[i:], t[:])
		prev = t[:]
		counter++
	}
	clear(t[:])
}

// wipe is fscrypt_destroy_hkdf: zero the pseudorandom key.
func (h *hkdfKey) wipe() {
	clear(h.prk[:])
	h.hmac = nil
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
