package fscrypt

import (
	"encoding/binary"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// fscryptIV is union fscrypt_iv: le64 index || nonce (DIRECT_KEY), or
// le32 index || le32 ino (IV_INO_LBLK_64), padded with zeros to the mode's
// IV size.
type fscryptIV struct {
	bytes [maxIVSize]byte
}

// generateIV is fs/crypto/crypto.c fscrypt_generate_iv: the IV of data unit
// index of ci's file (index 0 for filenames).
func generateIV(iv *fscryptIV, index uint64, ci *InodeInfo) {
	clear(iv.bytes[:])
	flags := ci.policy.Flags
	switch {
	case flags&PolicyFlagIVInoLblk64 != 0:
		index |= ci.inode.Ino() << 32
	case flags&PolicyFlagIVInoLblk32 != 0:
		index = uint64(uint32(uint64(ci.hashedIno) + index))
	case flags&PolicyFlagDirectKey != 0:
		copy(iv.bytes[8:], ci.nonce[:])
	}
	binary.LittleEndian.PutUint64(iv.bytes[:8], index)
}

// Directions of fscrypt_crypt_data_unit.
const (
	fsDecrypt = false
	fsEncrypt = true
)

// cryptDataUnit is fs/crypto/crypto.c fscrypt_crypt_data_unit: encrypt or
// decrypt len(src) bytes (a positive multiple of 16) of data unit index.
// Errors: EINVAL for a bad length, ENOMEM, driver errors.
func cryptDataUnit(t *kernel.Task, ci *InodeInfo, encrypt bool, index uint64, dst, src []byte) error {
	if t.WarnOn(len(src) == 0 || len(src)%contentsAlignment != 0, "len <= 0 || len % FSCRYPT_CONTENTS_ALIGNMENT") {
		return errno.EINVAL
	}
	var iv fscryptIV
	generateIV(&iv, index, ci)
	t.Inc(EvDataUnitCrypt)
	err := contentsCrypt(t, ci, encrypt, dst, src, iv.bytes[:ci.mode.IVSize])
	if err != nil {
		op := "Decryption"
		if encrypt {
			op = "Encryption"
		}
		fscryptErr(t, ci.inode, "%s failed for data unit %d: %d", op, index, -errnoValue(err))
	}
	return err
}

// siteBouncePage stands for fscrypt_alloc_bounce_page (mempool_alloc from
// fscrypt_bounce_page_pool). The model allocates the page directly so that
// fault injection can fail it: with GFP_NOWAIT, as ext4's write path first
// asks, the kernel's mempool can fail too.
var siteBouncePage = kmem.NewSite("fscrypt_alloc_bounce_page")

// EncryptPagecacheBlocks is fscrypt_encrypt_pagecache_blocks: encrypt the
// data units of folio covering [offs, offs+len) (aligned to the data unit
// size) into a newly allocated bounce page and return it; the page-cache
// folio keeps its plaintext. Free the bounce page with FreeBouncePage.
// Errors: EINVAL (alignment, or a large folio), ENOMEM, driver errors.
func EncryptPagecacheBlocks(t *kernel.Task, folio *block.Folio, length, offs int) ([]byte, error) {
	defer t.Trace("fscrypt_encrypt_pagecache_blocks")()
	inode := folio.Host.(Inode)
	ci := inode.CryptInfo()
	duBits := uint(ci.dataUnitBits)
	duSize := 1 << duBits
	if t.WarnOn(folio.Order != 0, "folio_test_large(folio)") {
		return nil, errno.EINVAL
	}
	if t.WarnOn((length|offs)&(duSize-1) != 0 || offs+length > block.PageSize, "!IS_ALIGNED(len | offs, du_size)") {
		return nil, errno.EINVAL
	}
	bounce, err := t.Kmalloc(siteBouncePage, block.PageSize, kmem.GFPNoFS)
	if err != nil {
		return nil, err
	}
	t.Inc(EvBounceAlloc)
	index := folio.Index<<(block.PageShift-duBits) + uint64(offs>>duBits)
	for i := offs; i < offs+length; i += duSize {
		if err := cryptDataUnit(t, ci, fsEncrypt, index, bounce[i:i+duSize], folio.Data[i:i+duSize]); err != nil {
			t.Kfree(siteBouncePage, bounce)
			return nil, err
		}
		index++
	}
	return bounce, nil
}

// FreeBouncePage is fscrypt_free_bounce_page.
func FreeBouncePage(t *kernel.Task, page []byte) { t.Kfree(siteBouncePage, page) }

// DecryptPagecacheBlocks is fscrypt_decrypt_pagecache_blocks: decrypt in
// place the data units of folio covering [offs, offs+len). Errors: EINVAL
// (alignment), ENOMEM, driver errors.
func DecryptPagecacheBlocks(t *kernel.Task, folio *block.Folio, length, offs int) error {
	defer t.Trace("fscrypt_decrypt_pagecache_blocks")()
	inode := folio.Host.(Inode)
	ci := inode.CryptInfo()
	duBits := uint(ci.dataUnitBits)
	duSize := 1 << duBits
	if t.WarnOn((length|offs)&(duSize-1) != 0 || offs+length > folio.Size(), "!IS_ALIGNED(len | offs, du_size)") {
		return errno.EINVAL
	}
	index := folio.Index<<(block.PageShift-duBits) + uint64(offs>>duBits)
	for i := offs; i < offs+length; i += duSize {
		unit := folio.Data[i : i+duSize]
		if err := cryptDataUnit(t, ci, fsDecrypt, index, unit, unit); err != nil {
			return err
		}
		index++
	}
	return nil
}

// EncryptBlockInplace is fscrypt_encrypt_block_inplace: encrypt len(data)
// bytes (a positive multiple of 16, at most one data unit) of data unit
// lblk in place, for filesystems that do not use the page cache path.
func EncryptBlockInplace(t *kernel.Task, inode Inode, data []byte, lblk uint64) error {
	ci := inode.CryptInfo()
	if t.WarnOn(ci.dataUnitsPerBlockBits != 0, "ci->ci_data_units_per_block_bits != 0") {
		return errno.EINVAL
	}
	return cryptDataUnit(t, ci, fsEncrypt, lblk, data, data)
}

// DecryptBlockInplace is fscrypt_decrypt_block_inplace.
func DecryptBlockInplace(t *kernel.Task, inode Inode, data []byte, lblk uint64) error {
	ci := inode.CryptInfo()
	if t.WarnOn(ci.dataUnitsPerBlockBits != 0, "ci->ci_data_units_per_block_bits != 0") {
		return errno.EINVAL
	}
	return cryptDataUnit(t, ci, fsDecrypt, lblk, data, data)
}
