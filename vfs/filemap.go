package vfs

import (
	"errors"
	"math"
	"sync"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
)

// PageSize is the size of the pages the generic read and write paths move
// (PAGE_SIZE): a filesystem's block in every filesystem of the model.
const PageSize = block.PageSize

// AddressSpaceOperations are a regular file's page operations (struct
// address_space_operations, include/linux/fs.h): what the generic read and
// write paths (FilemapRead, GenericPerformWrite, TruncateSetsize) ask the
// filesystem for. A page is written back as soon as it has been changed,
// as if writeback ran after every write. Reads keep a page cache only for
// a filesystem whose operations also have ->readahead (Readaheader): its
// reads go through filemap_read, readahead and the filesystem's bios
// (readahead.go); without it (memfs) a page is read from the filesystem
// each time it is needed. The methods are called with the mapping's lock
// held.
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
// stands for the kernel's invalidate_lock and, around a read, the i_pages
// lock (a read holds it throughout, so two reads of one file do not run
// side by side; the folio locks are the kernel's: the completion of a
// read unlocks its folios, and a reader waits on them).
type AddressSpace struct {
	// Host is the inode the data belongs to.
	Host *Inode
	// Ops are the filesystem's page operations.
	Ops AddressSpaceOperations

	mu sync.Mutex
	// pages is i_pages: the cached folios by index (page-cache mappings
	// only, see Readaheader).
	pages map[uint64]*block.Folio
	// scratch holds a read's folio batch and readahead control (the
	// kernel's are on filemap_read's stack), reused under mu.
	scratch *readScratch
}

// readScratch is what a read of a mapping keeps between calls: no read
// runs beside another on one mapping (they hold its lock).
type readScratch struct {
	fb      folioBatch
	rac     ReadaheadControl
	localRA FileRAState
}

// pageCacheSet is a superblock's set of mappings with cached folios.
type pageCacheSet struct {
	mu sync.Mutex
	m  map[*AddressSpace]struct{}
}

func (c *pageCacheSet) add(m *AddressSpace) {
	c.mu.Lock()
	if c.m == nil {
		c.m = map[*AddressSpace]struct{}{}
	}
	c.m[m] = struct{}{}
	c.mu.Unlock()
}

func (c *pageCacheSet) remove(m *AddressSpace) {
	c.mu.Lock()
	delete(c.m, m)
	c.mu.Unlock()
}

// dropPagecacheSB is drop_pagecache_sb: invalidate_mapping_pages of every
// mapping with cached folios. A mapping under read (its lock held) is
// skipped, as the folios a read holds locked would be.
func (c *pageCacheSet) dropPagecacheSB() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for m := range c.m {
		if !m.mu.TryLock() {
			continue
		}
		m.invalidatePagesLocked()
		if len(m.pages) == 0 {
			delete(c.m, m)
		}
		m.mu.Unlock()
	}
}

// dropPagecache is iterate_supers(drop_pagecache_sb) over the mounted
// superblocks.
func (s *System) dropPagecache() {
	for _, sb := range s.superBlocks() {
		sb.cached.dropPagecacheSB()
	}
}

// Lock takes the mapping's lock, for a filesystem changing its block map
// outside the generic paths (eviction, inspection).
func (m *AddressSpace) Lock() { m.mu.Lock() }

// Unlock releases the mapping's lock.
func (m *AddressSpace) Unlock() { m.mu.Unlock() }

// NrPages is mapping->nrpages: the folios in the page cache.
func (m *AddressSpace) NrPages() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.pages)
}

// needKey fails an encrypted file's data access without its key.
func needKey(inode *Inode) error {
	if inode.IsEncrypted() && inode.CryptInfo() == nil {
		return errno.ENOKEY
	}
	return nil
}

// EvCopyToUser counts the bytes filemap_read copies into user buffers.
var EvCopyToUser = events.Register("copy_to_user_bytes", "bytes filemap_read copied from page-cache folios to user buffers (copy_page_to_iter)")

// folioPool is the page allocator of page-cache folios: freed folios are
// handed out again, so a read in steady state makes no Go allocation for
// them (as the kernel's page allocator reuses freed pages).
var folioPool struct {
	mu   sync.Mutex
	free []*block.Folio
}

// filemapAllocFolio is filemap_alloc_folio(gfp, 0).
func filemapAllocFolio(index uint64, host *Inode) *block.Folio {
	folioPool.mu.Lock()
	var f *block.Folio
	if n := len(folioPool.free); n > 0 {
		f = folioPool.free[n-1]
		folioPool.free = folioPool.free[:n-1]
	}
	folioPool.mu.Unlock()
	if f == nil {
		f = block.NewFolio(index, 0)
	}
	f.Reset(index, fscrypt.Inode(host))
	return f
}

// putFolio frees a folio no one holds (folio_put of the last reference).
func putFolio(f *block.Folio) {
	f.Host = nil
	folioPool.mu.Lock()
	folioPool.free = append(folioPool.free, f)
	folioPool.mu.Unlock()
}

// addNewFolio is filemap_alloc_folio + filemap_add_folio: a new locked
// folio at index in the page cache.
func (m *AddressSpace) addNewFolio(index uint64) *block.Folio {
	f := filemapAllocFolio(index, m.Host)
	f.Lock()
	if m.pages == nil {
		m.pages = map[uint64]*block.Folio{}
	}
	if len(m.pages) == 0 {
		m.Host.SB().cached.add(m)
	}
	m.pages[index] = f
	return f
}

// removeFolio is filemap_remove_folio.
func (m *AddressSpace) removeFolio(f *block.Folio) {
	if m.pages[f.Index] == f {
		delete(m.pages, f.Index)
	}
}

// prevMiss is page_cache_prev_miss: the index of the first page not
// cached scanning down from index, at most maxScan pages; MaxUint64 when
// the scan runs past page 0.
func (m *AddressSpace) prevMiss(index, maxScan uint64) uint64 {
	for ; maxScan > 0; maxScan-- {
		if m.pages[index] == nil {
			return index
		}
		if index == 0 {
			return math.MaxUint64
		}
		index--
	}
	return index
}

// nextMiss is page_cache_next_miss: the index of the first page not
// cached from index on, at most maxScan pages (0 when the index wraps).
func (m *AddressSpace) nextMiss(index, maxScan uint64) uint64 {
	for ; maxScan > 0; maxScan-- {
		if m.pages[index] == nil {
			return index
		}
		index++
		if index == 0 {
			return 0
		}
	}
	return index
}

// raPages and ioPages are the host's bdi ra_pages and io_pages.
func (m *AddressSpace) raPages() int {
	if d := m.Host.SB().Bdev(); d != nil {
		return d.RAPages()
	}
	return VMReadaheadPages
}

func (m *AddressSpace) ioPages() int {
	if d := m.Host.SB().Bdev(); d != nil {
		return d.IOPages()
	}
	return blkDefMaxSectorsCap >> (block.PageShift - 9)
}

// invalidatePagesLocked is invalidate_mapping_pages over the whole
// mapping (the page cache half of drop_caches): every clean unlocked
// folio leaves the cache; folios under read (locked) stay. It returns how
// many left. The caller holds the mapping's lock.
func (m *AddressSpace) invalidatePagesLocked() int {
	n := 0
	for idx, f := range m.pages {
		if !f.TryLock() {
			continue
		}
		delete(m.pages, idx)
		f.Unlock()
		putFolio(f)
		n++
	}
	return n
}

// truncatePagesLocked is truncate_inode_pages_range from page from on,
// waiting for folios under read; the caller holds the mapping's lock.
func (m *AddressSpace) truncatePagesLocked(from uint64) {
	for idx, f := range m.pages {
		if idx < from {
			continue
		}
		f.Lock()
		delete(m.pages, idx)
		f.Unlock()
		putFolio(f)
	}
}

// TruncateInodePagesFinal is truncate_inode_pages_final: the inode's page
// cache is emptied as it is evicted.
func (m *AddressSpace) TruncateInodePagesFinal() {
	m.mu.Lock()
	if len(m.pages) > 0 {
		m.truncatePagesLocked(0)
		m.Host.SB().cached.remove(m)
	}
	m.mu.Unlock()
}

// updateCachedLocked keeps the cached folio of page index, if any, equal
// to page after a write or truncation changed the page (the model writes
// pages through; the kernel's write would have changed the folio itself).
func (m *AddressSpace) updateCachedLocked(index uint64, page []byte) {
	f := m.pages[index]
	if f == nil {
		return
	}
	f.Lock()
	copy(f.Data, page)
	f.MarkUptodate()
	f.Unlock()
}

// GenericFileReadIter is generic_file_read_iter's buffered path for file f:
// FilemapRead with f's readahead state.
func GenericFileReadIter(t *kernel.Task, f *File, buf []byte, pos *int64) (int, error) {
	return filemapRead(t, f, &f.Inode().Data, buf, pos)
}

// FilemapRead is generic_file_read_iter's buffered path (filemap_read,
// mm/filemap.c) without a file (a fresh readahead state): up to len(buf)
// bytes of m's file from *pos, stopping at i_size; *pos advances by what
// was read. ENOKEY for an encrypted file without its key; a page that
// cannot be read ends the read with what came before it.
func FilemapRead(t *kernel.Task, m *AddressSpace, buf []byte, pos *int64) (int, error) {
	return filemapRead(t, nil, m, buf, pos)
}

func filemapRead(t *kernel.Task, file *File, m *AddressSpace, buf []byte, pos *int64) (int, error) {
	inode := m.Host
	if err := needKey(inode); err != nil {
		return 0, err
	}
	if _, ok := m.Ops.(Readaheader); ok {
		return filemapReadCached(t, file, m, buf, pos)
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
	n, err := GenericPerformWrite(t, m, buf, pos, f.Flags()&O_APPEND != 0)
	if n > 0 {
		// The written pages are dirty (__set_page_dirty ->
		// __mark_inode_dirty(I_DIRTY_PAGES)) until writeback.
		setDirtyBits(inode, I_DIRTY_PAGES)
	}
	return n, err
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
		if err == nil {
			m.updateCachedLocked(index, page[:])
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
	m.truncatePagesLocked(npages)
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
		m.updateCachedLocked(npages-1, page[:])
	}
	inode.SetSize(size)
	return nil
}

// pagevecSize is PAGEVEC_SIZE: the folios of one folio_batch.
const pagevecSize = 31

// folioBatch is struct folio_batch.
type folioBatch struct {
	nr     int
	folios [pagevecSize]*block.Folio
}

// filemapGetReadBatch is filemap_get_read_batch: the cached folios from
// index to last, in order, up to the first missing one, the batch's end, a
// folio not uptodate or one marked PG_readahead (that one included).
func (m *AddressSpace) filemapGetReadBatch(index, last uint64, fb *folioBatch) {
	for index <= last && fb.nr < pagevecSize {
		f := m.pages[index]
		if f == nil {
			return
		}
		fb.folios[fb.nr] = f
		fb.nr++
		if !f.TestUptodate() || f.TestReadahead() {
			return
		}
		index += 1 << f.Order
	}
}

// errTruncatedPage is AOP_TRUNCATED_PAGE: the folio went away or was
// waited for; the caller looks it up again.
var errTruncatedPage = errors.New("AOP_TRUNCATED_PAGE")

// filemapReadFolio is filemap_read_folio: ->read_folio of the locked folio
// f, then folio_wait_locked until its read ends; EIO when it is not
// uptodate afterwards. A filesystem with ->readahead reads it as its
// ->read_folio does (ext4_read_folio is ext4_mpage_readpages of the one
// folio: a bio, decrypted in its completion); the others fill it with
// AddressSpaceOperations.ReadFolio.
func filemapReadFolio(t *kernel.Task, m *AddressSpace, f *block.Folio) error {
	defer t.Trace("filemap_read_folio")()
	if ra, ok := m.Ops.(Readaheader); ok {
		rac := &m.scratch.rac
		*rac = ReadaheadControl{Mapping: m, index: f.Index, nrPages: 1 << f.Order}
		ra.Readahead(t, rac)
		f.WaitLocked()
		if !f.TestUptodate() {
			return errno.EIO
		}
		return nil
	}
	err := m.Ops.ReadFolio(t, m.Host, f.Index, f.Data)
	f.EndRead(err == nil)
	return err
}

// filemapUpdatePage is filemap_update_page: f, the batch's last folio, is
// not uptodate. A locked folio is under read: wait for it
// (folio_put_wait_locked: "where we usually end up waiting for a
// previously submitted readahead to finish") and have the caller look it
// up again; an unlocked one whose read failed is read again.
func filemapUpdatePage(t *kernel.Task, m *AddressSpace, f *block.Folio) error {
	if !f.TryLock() {
		defer t.Trace("folio_wait_locked")()
		f.WaitLocked()
		return errTruncatedPage
	}
	if m.pages[f.Index] != f {
		f.Unlock()
		return errTruncatedPage
	}
	if f.TestUptodate() {
		f.Unlock()
		return nil
	}
	return filemapReadFolio(t, m, f)
}

// filemapCreateFolio is filemap_create_folio: readahead left no folio at
// index (it failed to allocate, or readahead is off): one folio is added
// and read with ->read_folio.
func filemapCreateFolio(t *kernel.Task, m *AddressSpace, index uint64, fb *folioBatch) error {
	f := m.addNewFolio(index)
	if err := filemapReadFolio(t, m, f); err != nil {
		m.removeFolio(f)
		putFolio(f)
		return err
	}
	fb.folios[0], fb.nr = f, 1
	return nil
}

// filemapGetPages is filemap_get_pages: a batch of uptodate folios for a
// read of count bytes at pos, starting synchronous readahead on a miss
// and asynchronous readahead at a PG_readahead folio.
func filemapGetPages(t *kernel.Task, file *File, ra *FileRAState, m *AddressSpace, pos int64, count int, fb *folioBatch) error {
	index := uint64(pos) >> block.PageShift
	lastIndex := uint64(pos+int64(count)+PageSize-1) >> block.PageShift
	for {
		m.filemapGetReadBatch(index, lastIndex-1, fb)
		if fb.nr == 0 {
			rac := &m.scratch.rac
			*rac = ReadaheadControl{File: file, Mapping: m, RA: ra, index: index}
			pageCacheSyncRA(t, rac, lastIndex-index)
			m.filemapGetReadBatch(index, lastIndex-1, fb)
		}
		if fb.nr == 0 {
			return filemapCreateFolio(t, m, index, fb)
		}
		f := fb.folios[fb.nr-1]
		if f.TestReadahead() {
			rac := &m.scratch.rac
			*rac = ReadaheadControl{File: file, Mapping: m, RA: ra, index: f.Index}
			pageCacheAsyncRA(t, rac, f, lastIndex-f.Index)
		}
		if f.TestUptodate() {
			return nil
		}
		err := filemapUpdatePage(t, m, f)
		if err == nil {
			return nil
		}
		fb.nr--
		if fb.nr > 0 {
			return nil
		}
		if err != errTruncatedPage {
			return err
		}
	}
}

// filemapReadCached is filemap_read over the page cache: batch by batch
// (filemap_get_pages), each folio's part copied to the user buffer
// (copy_folio_to_iter -> copy_page_to_iter), until count bytes, i_size or
// an error; ra.PrevPos records the last byte read.
func filemapReadCached(t *kernel.Task, file *File, m *AddressSpace, buf []byte, pos *int64) (int, error) {
	defer t.Trace("filemap_read")()
	inode := m.Host
	if len(buf) == 0 || *pos >= inode.SB().MaxBytes() {
		return 0, nil
	}
	buf = buf[:min(int64(len(buf)), inode.SB().MaxBytes()-*pos)]
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.scratch == nil {
		m.scratch = new(readScratch)
	}
	sc := m.scratch
	ra := &sc.localRA
	if file != nil {
		ra = &file.ra
	} else {
		*ra = FileRAState{}
	}
	if !ra.ok {
		fileRAStateInit(ra, m)
	}
	fb := &sc.fb
	done := 0
	lastPos := ra.PrevPos
	var err error
	for done < len(buf) {
		if *pos >= inode.Size() {
			break
		}
		fb.nr = 0
		if err = filemapGetPages(t, file, ra, m, *pos, len(buf)-done, fb); err != nil {
			break
		}
		isize := inode.Size()
		if *pos >= isize {
			break
		}
		end := min(isize, *pos+int64(len(buf)-done))
		for i := 0; i < fb.nr; i++ {
			f := fb.folios[i]
			fpos := f.Pos()
			if end < fpos {
				break
			}
			off := int(*pos - fpos)
			n := int(min(end-*pos, int64(f.Size()-off)))
			endCopy := t.Trace("copy_page_to_iter")
			c := copy(buf[done:done+n], f.Data[off:off+n])
			endCopy()
			t.Add(EvCopyToUser, uint64(c))
			done += c
			*pos += int64(c)
			lastPos = *pos
		}
		clear(fb.folios[:fb.nr])
	}
	ra.PrevPos = lastPos
	if done > 0 {
		return done, nil
	}
	return 0, err
}
