package fscrypt

import "github.com/vfslab/vfslab/patch"

// CryptoBioPatch is seed 003: how the read path decrypts a completed bio
// (fs/crypto/bio.c fscrypt_decrypt_bio and its callers).
var CryptoBioPatch = patch.Register(&patch.Patch{
	ID:      "crypto-bio",
	Seed:    "003",
	Subject: "Chaining is dead (whole-bio skcipher requests, CRYPTO_SKCIPHER_REQ_BIO, for fscrypt read decryption)",
	Author:  "Herbert Xu <herbert@gondor.apana.org.au>",
	Date:    "2025-03-30",
	Fate:    "RFC experiment, never merged; request chaining was removed from the Crypto API",
	Files:   []string{"fs/crypto/bio.c", "include/crypto/skcipher.h", "arch/x86/crypto/aesni-intel_glue.c"},
	Reported: []string{
		"reading an 8 GB encrypted file (ext4 on loop on tmpfs, xts-vaes): workqueue 2.4 s, inline 2.5 s, chain no gain (~2.4 s), bio 2.1 s",
		"the bio variant's le64 IV increment would be wrong for IV_INO_LBLK_32, whose 32-bit IV wraps at 2^32; as posted it is masked by the tweak bug (see TestCryptoBioIVInoLblk32Wrap)",
	},
	Variants: []patch.Variant{
		{Name: "workqueue", Summary: "base: bio completion queues the bio on an unbound decrypt workqueue (max_active = CPUs); the worker decrypts each data unit with its own request"},
		{Name: "inline", Summary: "no workqueue: the data units are decrypted in the completion context"},
		{Name: "chain", Summary: "one request per data unit, all chained and submitted as one"},
		{Name: "bio", Summary: "the whole bio in one on-stack request (CRYPTO_SKCIPHER_REQ_BIO, -EAGAIN clones it); as posted only the x86 XTS glue's xts_crypt walks the folios and data units, and its le64 increment lands on the tweak it left in req->iv, not on the IV: every data unit after the first in a bio decrypts wrong; every other driver (ESSIV, Adiantum, engines, XTS without AES-NI) fails the request with EINVAL"},
	},
})

// CryptoBioVariant is a variant of CryptoBioPatch, in Variants order.
type CryptoBioVariant uint8

// The crypto-bio variants.
const (
	BioWorkqueue CryptoBioVariant = iota
	BioInline
	BioChain
	BioWhole
)

// cryptoBio reads the crypto-bio variant of a machine's patch set.
var cryptoBio = patch.Bind[CryptoBioVariant](CryptoBioPatch)

// CryptoBioOf returns the crypto-bio variant of a machine's patch set.
func CryptoBioOf(s *patch.Set) CryptoBioVariant { return cryptoBio.Of(s) }

// FirstUnitOnly reports whether a read under the variant decrypts only the
// first data unit of each bio right: bio as posted, on the x86 XTS glue,
// whose increment lands on the tweak (see DecryptBio).
func (v CryptoBioVariant) FirstUnitOnly() bool {
	switch v {
	case BioWhole:
		return true
	case BioWorkqueue, BioInline, BioChain:
	}
	return false
}
