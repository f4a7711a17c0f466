package fscrypt

import "github.com/vfslab/vfslab/patch"

// FnameOnstackPatch is seed 000: how fs/crypto/fname.c allocates its
// skcipher requests (and, with Linux 6.17's answer to it, how fscrypt
// allocates its tfms).
var FnameOnstackPatch = patch.Register(&patch.Patch{
	ID:      "fscrypt-fname-onstack",
	Seed:    "000",
	Subject: "[PATCH v2] fscrypt: improve filename encryption and decryption performance",
	Author:  "Yuwen Chen <ywen.chen@foxmail.com>",
	Date:    "2025-07-04",
	Fate:    "superseded by Eric Biggers' \"fscrypt: Switch to sync_skcipher and on-stack requests\" (Linux 6.17)",
	Files:   []string{"fs/crypto/fname.c", "include/crypto/skcipher.h"},
	Reported: []string{
		"2000 creates of 4 KiB files in an encrypted casefolded f2fs dir (Android, Snapdragon 8s Gen4, 6.6 userdebug): 14.83/15.61/14.72 s -> 7.64/7.66/8.67 s",
		"author, later, non-debug: 10000 creates 10.9 s -> 5.3 s (with the f2fs lookup patch as well)",
	},
	Variants: []patch.Variant{
		{Name: "base", Summary: "skcipher_request_alloc (GFP_NOFS) + DECLARE_CRYPTO_WAIT + crypto_wait_req + skcipher_request_free per name; any driver, async ones waited for"},
		{Name: "v2", Summary: "as posted, on 6.6: SKCIPHER_REQUEST_ON_STACK(req, tfm, 384) + BUG_ON(384 < crypto_skcipher_reqsize(tfm)) in both; encryption still does req = skcipher_request_alloc (GFP_NOFS) and no longer frees it (one request leaked per name); decryption on the stack, queued to an async driver that fits (stack memory DMA-mapped); a larger reqsize BUGs"},
		{Name: "upstream", Summary: "Linux 6.17: tfms allocated with CRYPTO_ALG_ASYNC|ALLOCATES_MEMORY|KERN_DRIVER_ONLY masked out (crypto_alloc_sync_skcipher), SYNC_SKCIPHER_REQUEST_ON_STACK, no wait object"},
	},
})

// FnameOnstackVariant is a variant of FnameOnstackPatch, in Variants
// order.
type FnameOnstackVariant uint8

// The fscrypt-fname-onstack variants.
const (
	FnameBase FnameOnstackVariant = iota
	FnameV2
	FnameUpstream
)

// fnameOnstack reads the fscrypt-fname-onstack variant of a machine's patch
// set.
var fnameOnstack = patch.Bind[FnameOnstackVariant](FnameOnstackPatch)
