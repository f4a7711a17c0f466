package fscrypt

import "github.com/vfslab/vfslab/patch"

// V1KDFPatch is seed 002: the v1 per-file key derivation
// (fs/crypto/keysetup_v1.c derive_key_aes / setup_v1_file_key_derived).
var V1KDFPatch = patch.Register(&patch.Patch{
	ID:      "fscrypt-v1-kdf",
	Seed:    "002",
	Subject: "[PATCH] fscrypt: use AES library for v1 key derivation",
	Author:  "Eric Biggers <ebiggers@kernel.org>",
	Date:    "2026-03-21",
	Fate:    "merged (Linux 7.1, commit 1546d3feb5e5)",
	Files:   []string{"fs/crypto/Kconfig", "fs/crypto/keysetup_v1.c"},
	Reported: []string{
		"AMD Ryzen 9 9950X: ~7000 -> ~1500 cycles per derived key (4.7x); little difference between 32- and 64-byte keys",
		"v2 key derivation (HKDF-SHA512) on the same CPU: ~3500 cycles",
	},
	Variants: []patch.Variant{
		{Name: "base", Summary: "crypto_alloc_skcipher(\"ecb(aes)\") per derivation, kmalloc'd derived key, skcipher_request_alloc, scatterlists, crypto_wait_req, free everything"},
		{Name: "sync", Summary: "Linux 6.17: crypto_alloc_sync_skcipher(\"ecb(aes)\", 0, FSCRYPT_CRYPTOAPI_MASK) per derivation with SYNC_SKCIPHER_REQUEST_ON_STACK"},
		{Name: "aeslib", Summary: "Linux 7.1: AES library, expand the nonce key once, aes_encrypt per 16 bytes into a stack buffer, memzero_explicit the derived key"},
	},
})

// V1KDFVariant is a variant of V1KDFPatch, in Variants order.
type V1KDFVariant uint8

// The fscrypt-v1-kdf variants.
const (
	V1KDFBase V1KDFVariant = iota
	V1KDFSync
	V1KDFAESLib
)

// v1KDF reads the fscrypt-v1-kdf variant of a machine's patch set.
var v1KDF = patch.Bind[V1KDFVariant](V1KDFPatch)
