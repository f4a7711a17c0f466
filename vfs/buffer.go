package vfs

import (
	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
)

// BlockMapper is what a block-based filesystem gives BlockAops: the map
// from a regular file's page index (its logical block: blocks are pages in
// the model) to a block of its device, get_block_t's job (ext4_get_block,
// f2fs_get_block). It is called with the mapping's lock held.
type BlockMapper interface {
	// GetBlock returns the device block behind logical block lblk of
	// inode, nil for a hole; with create a hole first gets a new zeroed
	// block (get_block with create set).
	GetBlock(inode *Inode, lblk uint64, create bool) []byte
	// TruncateBlocks gives the blocks from lblk from on back to the
	// device (ext4_truncate, f2fs_truncate_blocks).
	TruncateBlocks(inode *Inode, from uint64)
}

// BlockAops returns the AddressSpaceOperations of a filesystem that keeps
// a regular file's pages in device blocks mapped by m, with fscrypt's
// contents encryption where the kernel's block-based filesystems have it:
//
//   - a page is read from its block (mpage_read_folio,
//     block_read_full_folio) and, in an encrypted file, decrypted in place
//     per data unit (fscrypt_decrypt_pagecache_blocks, which the read
//     completion runs: fs/buffer.c decrypt_bh, ext4_mpage_readpages'
//     post-read work, f2fs's);
//   - ->write_begin reads the page only when the write does not cover it
//     all (block_write_begin, ext4_block_write_begin, f2fs_write_begin);
//   - writeback encrypts an encrypted file's page into a bounce page
//     (fscrypt_encrypt_pagecache_blocks, as ext4_bio_write_folio and
//     f2fs_encrypt_one_page do), whose ciphertext goes to the block; the
//     page keeps its plaintext.
func BlockAops(m BlockMapper) AddressSpaceOperations { return blockAops{m} }

type blockAops struct{ m BlockMapper }

// ReadFolio implements AddressSpaceOperations.
func (a blockAops) ReadFolio(t *kernel.Task, inode *Inode, index uint64, page []byte) error {
	b := a.m.GetBlock(inode, index, false)
	if b == nil {
		clear(page)
		return nil
	}
	copy(page, b)
	if !inode.IsEncrypted() {
		return nil
	}
	folio := block.Folio{Index: index, Data: page, Host: fscrypt.Inode(inode)}
	return fscrypt.DecryptPagecacheBlocks(t, &folio, PageSize, 0)
}

// WriteBegin implements AddressSpaceOperations.
func (a blockAops) WriteBegin(t *kernel.Task, inode *Inode, index uint64, off, n int, page []byte) error {
	if n < PageSize {
		return a.ReadFolio(t, inode, index, page)
	}
	return nil
}

// WritePage implements AddressSpaceOperations. An encrypted page is
// encrypted before its block is allocated, so a failure leaves a hole a
// hole.
func (a blockAops) WritePage(t *kernel.Task, inode *Inode, index uint64, page []byte) error {
	src := page
	if inode.IsEncrypted() {
		folio := block.Folio{Index: index, Data: page, Host: fscrypt.Inode(inode)}
		bounce, err := fscrypt.EncryptPagecacheBlocks(t, &folio, PageSize, 0)
		if err != nil {
			return err
		}
		defer fscrypt.FreeBouncePage(t, bounce)
		src = bounce
	}
	copy(a.m.GetBlock(inode, index, true), src)
	return nil
}

// Bmap implements AddressSpaceOperations.
func (a blockAops) Bmap(inode *Inode, index uint64) bool {
	return a.m.GetBlock(inode, index, false) != nil
}

// TruncateBlocks implements AddressSpaceOperations.
func (a blockAops) TruncateBlocks(t *kernel.Task, inode *Inode, from uint64) {
	a.m.TruncateBlocks(inode, from)
}
