package vfs

import (
	"sync"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// PageSize is the size of the pages the generic read and write paths move
// (PAGE_SIZE): a filesystem's block in every filesystem of the model.
const PageSize = block.PageSize

// AddressSpaceOperations are a regular file's page operations (struct
// address_space_operations, include/linux/fs.h): what the generic read and
// write paths (FilemapRead, GenericPerformWrite, TruncateSetsize) ask the
// filesystem for. The model has no page cache: a page is read from the
// filesystem each time it is needed and written back as soon as it has been
// changed, as if writeback ran after every write. The methods are called
// with the mapping's lock held.
type AddressSpaceOperations interface {
	// ReadFolio is ->read_folio: fill page (PageSize bytes) with the
	// plaintext of page index of inode; zeros for a hole.
	ReadFolio(t *kernel.Task, inode *Inode, index uint64, page []byte) error
	// WriteBegin is ->write_begin: make page hold what page index of inode
	// holds wherever a write of n bytes at offset off into it does not
	// reach.
	WriteBegin(t *kernel.Task, inode *Inode, index uint64, off, n int, page []byte) error
	// WritePage is the writeback of page index (->writepages, run at
	// once): store its new plaintext, page, giving the page a block if it
	// is a hole.
	WritePage(t *kernel.Task, inode *Inode, index uint64, page []byte) error
	// Bmap is ->bmap: whether page index has a block (false for a hole).
	Bmap(inode *Inode, index uint64) bool
	// TruncateBlocks releases the pages from index from on: the model's
	// truncate_inode_pages_range together with the filesystem's release
	// of their blocks (ext4_truncate, f2fs_truncate_blocks).
	TruncateBlocks(t *kernel.Task, inode *Inode, from uint64)
}

// AddressSpace is struct address_space: the data pages of a regular file
// (mapping->host) and the operations that read and write them (a_ops). Its
// lock serialises page I/O, truncation and the filesystem's block map; it
// stands for the kernel's folio locks and invalidate_lock.
type AddressSpace struct {
	// Host is the inode the data belongs to.
	Host *Inode
	// Ops are the filesystem's page operations.
	Ops AddressSpaceOperations

	mu sync.Mutex
}

// Lock takes the mapping's lock, for a filesystem changing its block map
// outside the generic paths (eviction, inspection).
func (m *AddressSpace) Lock() { m.mu.Lock() }

// Unlock releases the mapping's lock.
func (m *AddressSpace) Unlock() { m.mu.Unlock() }

// needKey fails an encrypted file's data access without its key.
func needKey(inode *Inode) error {
	if inode.IsEncrypted() && inode.CryptInfo() == nil {
		return errno.ENOKEY
	}
	return nil
}

// FilemapRead is generic_file_read_iter's buffered path (filemap_read,
// mm/filemap.c): up to len(buf) bytes of m's file from *pos, stopping at
// i_size, page by page through ->read_folio; *pos advances by what was
// read. ENOKEY for an encrypted file without its key; a page that cannot
// be read ends the read with what came before it.
func FilemapRead(t *kernel.Task, m *AddressSpace, buf []byte, pos *int64) (int, error) {
	inode := m.Host
	if err := needKey(inode); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	size := inode.Size()
	if *pos >= size || len(buf) == 0 {
		return 0, nil
	}
	n := int(min(int64(len(buf)), size-*pos))
	var page [PageSize]byte
	done := 0
	for done < n {
		p := *pos + int64(done)
		index, off := uint64(p/PageSize), int(p%PageSize)
		if err := m.Ops.ReadFolio(t, inode, index, page[:]); err != nil {
			return done, err
		}
		done += copy(buf[done:n], page[off:])
	}
	*pos += int64(n)
	return n, nil
}

// GenericFileWriteIter is generic_file_write_iter for a buffered write:
// under the inode's i_rwsem, generic_write_checks (O_APPEND writes at
// i_size) and GenericPerformWrite.
func GenericFileWriteIter(t *kernel.Task, f *File, m *AddressSpace, buf []byte, pos *int64) (int, error) {
	inode := m.Host
	inode.Rwsem.Lock()
	defer inode.Rwsem.Unlock()
	// __generic_file_write_iter's file_modified (atime.go).
	if len(buf) > 0 {
		fileUpdateTime(t, f)
	}
	return GenericPerformWrite(t, m, buf, pos, f.Flags()&O_APPEND != 0)
}

// GenericPerformWrite is generic_perform_write (mm/filemap.c): buf goes
// into m's file at *pos (at i_size with appendMode), page by page:
// ->write_begin, the copy, then the page's writeback; i_size grows with
// each page written. A write starting at s_maxbytes is EFBIG, one crossing
// it is cut short there; ENOKEY for an encrypted file without its key.
//
// A page that fails ends the write with Linux's short-write rule: the
// bytes written before it are returned with no error and *pos advances by
// them (generic_perform_write returns "written ? written : status", and
// the caller moves ki_pos by written); only a failure on the first page
// returns the error. So a 5000-byte write whose second page fails returns
// 4096, and the next write(2) reports the error.
//
// Deviation: the model writes each page back at once, inside write(2),
// and encrypts it there (fscrypt_encrypt_pagecache_blocks into a bounce
// page), where ext4 and f2fs encrypt at writeback (ext4_bio_write_folio,
// f2fs_encrypt_one_page), after write(2) has returned; they retry a
// bounce page allocation that fails there (with GFP_NOFS, then waiting
// under __GFP_NOFAIL) rather than failing the write. In the model such
// a failure is a failed page of the write, so an allocation failure at
// encryption surfaces as a short write or ENOMEM from write(2) itself.
// The caller holds the inode's i_rwsem.
func GenericPerformWrite(t *kernel.Task, m *AddressSpace, buf []byte, pos *int64, appendMode bool) (int, error) {
	inode := m.Host
	if len(buf) == 0 {
		return 0, nil
	}
	if err := needKey(inode); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if appendMode {
		*pos = inode.Size()
	}
	maxBytes := inode.SB().MaxBytes()
	if *pos >= maxBytes {
		return 0, errno.EFBIG
	}
	n := int(min(int64(len(buf)), maxBytes-*pos))
	var page [PageSize]byte
	done := 0
	for done < n {
		p := *pos + int64(done)
		index, off := uint64(p/PageSize), int(p%PageSize)
		c := min(n-done, PageSize-off)
		err := m.Ops.WriteBegin(t, inode, index, off, c, page[:])
		if err == nil {
			copy(page[off:], buf[done:done+c])
			err = m.Ops.WritePage(t, inode, index, page[:])
		}
		if err != nil {
			if done == 0 {
				return 0, err
			}
			*pos += int64(done)
			return done, nil
		}
		done += c
		if end := p + int64(c); end > inode.Size() {
			inode.SetSize(end)
		}
	}
	*pos += int64(n)
	return n, nil
}

// TruncateSetsize is the data side of a size change (truncate_setsize and
// truncate_pagecache, with the filesystem's block release and
// block_truncate_page): the pages past size are released, the tail of the
// page size falls in is zeroed (read, cleared and written back, so an
// encrypted file's page is re-encrypted) unless it is a hole, and i_size
// becomes size. ENOKEY for an encrypted file without its key.
func TruncateSetsize(t *kernel.Task, m *AddressSpace, size int64) error {
	inode := m.Host
	if err := needKey(inode); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	npages := uint64((size + PageSize - 1) / PageSize)
	m.Ops.TruncateBlocks(t, inode, npages)
	if off := int(size % PageSize); off != 0 && m.Ops.Bmap(inode, npages-1) {
		var page [PageSize]byte
		if err := m.Ops.ReadFolio(t, inode, npages-1, page[:]); err != nil {
			return err
		}
		clear(page[off:])
		if err := m.Ops.WritePage(t, inode, npages-1, page[:]); err != nil {
			return err
		}
	}
	inode.SetSize(size)
	return nil
}
