package fscrypt

import (
	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/crypto"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// siteChainRequest is the allocation of each chained request of the chain
// variant; siteChainIVs holds their IVs and scatterlists.
var (
	siteChainRequest = kmem.NewSite("fscrypt_decrypt_bio:chained_request")
	siteChainIVs     = kmem.NewSite("fscrypt_decrypt_bio:chain_ivs")
)

// DecryptBio is fs/crypto/bio.c fscrypt_decrypt_bio: decrypt in place every
// data unit of a completed read bio of an encrypted file (the folios' Host
// is the file's Inode). On failure it sets bio.Status and returns false.
// How depends on the crypto-bio variant (seed 003):
//
//   - workqueue, inline: fscrypt_decrypt_pagecache_blocks on each folio, one
//     request per data unit (the two differ in where the caller runs this:
//     a workqueue worker or the completion itself; see ReadPath);
//   - chain: one request per data unit, all chained behind the first and
//     submitted as one, then waited for;
//   - bio: one on-stack request carrying the whole bio
//     (CRYPTO_SKCIPHER_REQ_BIO) from the first data unit's IV; an
//     asynchronous driver's EAGAIN makes it clone the request and wait.
//
// The bio variant as posted: only the x86 XTS glue (xts_crypt in
// arch/x86/crypto/aesni-intel_glue.c, every xts-aes-* driver) learned the
// flag, and it adds one (le64) to req->iv after xts_crypt_one has turned
// req->iv into the tweak and left the next tweak there, so it increments
// the tweak: the first data unit of a bio decrypts right and every later
// one wrong, with no error (data-mismatch from the second data unit; see
// crypto.cryptBio and TestCryptoBioAsPosted). Every other driver (ESSIV,
// Adiantum, HCTR2, an engine, XTS without AES-NI) takes du_bits as the
// request's length and fails it with EINVAL: the bio fails. The author's
// intent, one added to the IV, would still be wrong for IV_INO_LBLK_32,
// whose 32-bit IV wraps at 2^32 (TestCryptoBioIVInoLblk32Wrap).
func DecryptBio(t *kernel.Task, bio *block.Bio) bool {
	defer t.Trace("fscrypt_decrypt_bio")()
	folio := bio.FirstFolioAll()
	if folio == nil {
		return true
	}
	inode := folio.Host.(Inode)
	t.Inc(EvBioDecrypt)
	var err error
	switch cryptoBio.Of(t.K.Patches()) {
	case BioChain:
		err = decryptBioChain(t, inode, bio)
	case BioWhole:
		err = decryptBioWhole(t, inode, bio)
	case BioWorkqueue, BioInline:
		for fi := range block.BioForEachFolioAll(bio) {
			if err = DecryptPagecacheBlocks(t, fi.Folio, fi.Length, fi.Offset); err != nil {
				break
			}
		}
	}
	if err != nil {
		bio.Status = block.ErrnoToBlkStatus(err)
		return false
	}
	return true
}

// decryptBioWhole is seed 003's fscrypt_decrypt_bio: the IV of the bio's
// first data unit, one SKCIPHER_REQUEST_ON_STACK(req, tfm, sizeof(bio))
// with CRYPTO_TFM_REQ_MAY_BACKLOG | CRYPTO_SKCIPHER_REQ_BIO, the bio as
// src and dst and du_bits as cryptlen, decrypted; on -EAGAIN
// SKCIPHER_REQUEST_CLONE(GFP_ATOMIC) and wait.
func decryptBioWhole(t *kernel.Task, inode Inode, bio *block.Bio) error {
	ci := inode.CryptInfo()
	duBits := uint(ci.dataUnitBits)
	tfm := ci.encKey.tfm
	var fi block.FolioIter
	block.BioFirstFolio(&fi, bio, 0)
	if fi.Folio == nil {
		return nil
	}
	index := fi.Folio.Index<<(block.PageShift-duBits) + uint64(fi.Offset>>duBits)
	var iv fscryptIV
	generateIV(&iv, index, ci)

	var req crypto.SkcipherBioRequestOnStack
	endStack := t.TraceInline("SKCIPHER_REQUEST_ON_STACK")
	req.Init(t, tfm)
	endStack()
	req.SetCallback(crypto.CRYPTO_TFM_REQ_MAY_BACKLOG|crypto.CRYPTO_SKCIPHER_REQ_BIO, nil, nil)
	req.SetBio(bio, duBits, iv.bytes[:ci.mode.IVSize])
	endCrypt := traceSkcipherCrypt(t, false)
	if t.Tracing() {
		t.TraceNote("one request for the whole bio (CRYPTO_SKCIPHER_REQ_BIO): %d data unit(s)", bio.Size()>>duBits)
	}
	err := req.Decrypt(t)
	endCrypt()
	if err == errno.EAGAIN {
		clone, cerr := crypto.SkcipherRequestClone(t, &req, kmem.GFPAtomic)
		if cerr != nil {
			return cerr
		}
		var wait crypto.CryptoWait
		clone.SetCallback(crypto.CRYPTO_TFM_REQ_MAY_BACKLOG|crypto.CRYPTO_SKCIPHER_REQ_BIO, crypto.CryptoReqDone, &wait)
		err = crypto.CryptoWaitReq(t, clone.Decrypt(t), &wait)
		clone.Free(t)
	}
	if err != nil {
		fscryptErr(t, inode, "Decryption failed for bio of %d bytes: %d", bio.Size(), -errnoValue(err))
		return err
	}
	// Counted once the driver has been through them (a driver that never
	// learned CRYPTO_SKCIPHER_REQ_BIO fails the request having decrypted
	// none).
	t.Add(EvDataUnitCrypt, uint64(bio.Size()>>duBits))
	return nil
}

// decryptBioChain decrypts every data unit of the bio with its own heap
// request, the requests chained behind the first and submitted as one (the
// request chaining of the Linux 6.15 merge window that seed 003 measured
// and declared dead).
func decryptBioChain(t *kernel.Task, inode Inode, bio *block.Bio) error {
	ci := inode.CryptInfo()
	duBits := uint(ci.dataUnitBits)
	duSize := 1 << duBits
	tfm := ci.encKey.tfm
	n := bio.Size() >> duBits
	if n == 0 {
		return nil
	}
	// The IVs and scatterlists of all the requests, in one allocation.
	// The model accounts for it here but keeps each request's IV and
	// scatterlist entries inside the request (SetCryptOne), because Go
	// scatterlist structs cannot live in a byte buffer and slices of them
	// would be Go allocations the kernel does not make.
	ivMem, err := t.Kmalloc(siteChainIVs, n*(maxIVSize+crypto.SizeofScatterlist), kmem.GFPNoFS)
	if err != nil {
		return err
	}
	defer t.Kfree(siteChainIVs, ivMem)
	// The chain itself links the requests (head first): no array of
	// request pointers is kept beside it.
	var head, tail *crypto.SkcipherRequest
	defer func() {
		for r := head; r != nil; {
			next := r.ChainNext()
			r.Free(t)
			r = next
		}
	}()
	wait := getWait()
	defer putWait(wait)
	for fi := range block.BioForEachFolioAll(bio) {
		if fi.Length%duSize != 0 || fi.Offset%duSize != 0 {
			return errno.EINVAL
		}
		index := fi.Folio.Index<<(block.PageShift-duBits) + uint64(fi.Offset>>duBits)
		for off := fi.Offset; off < fi.Offset+fi.Length; off += duSize {
			endAlloc := t.TraceInline("skcipher_request_alloc")
			req, err := crypto.SkcipherRequestAllocAt(t, siteChainRequest, tfm, kmem.GFPNoFS)
			endAlloc()
			if err != nil {
				return errno.ENOMEM
			}
			var iv fscryptIV
			generateIV(&iv, index, ci)
			unit := fi.Folio.Data[off : off+duSize]
			req.SetCryptOne(unit, unit, iv.bytes[:ci.mode.IVSize])
			if head == nil {
				head = req
				req.SetCallback(reqFlags, crypto.CryptoReqDone, wait)
			} else {
				req.SetCallback(reqFlags, nil, nil)
				crypto.SkcipherRequestChain(req, tail)
			}
			tail = req
			index++
		}
	}
	t.Add(EvDataUnitCrypt, uint64(n))
	endCrypt := traceSkcipherCrypt(t, false)
	if t.Tracing() {
		t.TraceNote("%d request(s), one per data unit, chained behind the first and submitted as one", n)
	}
	err = head.Decrypt(t)
	endCrypt()
	err = traceWaitReq(t, err, wait)
	if err == nil {
		for r := head.ChainNext(); r != nil; r = r.ChainNext() {
			if r.Err() != nil {
				err = r.Err()
				break
			}
		}
	}
	if err != nil {
		fscryptErr(t, inode, "Decryption failed for chained bio of %d bytes: %d", bio.Size(), -errnoValue(err))
	}
	return err
}
