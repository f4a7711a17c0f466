package vfs

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
)

// BlockMap is a file's map from page index (its logical block: blocks are
// pages in the model) to a block of its device: what ext4's extent tree
// and f2fs's dnodes hold, reduced to a map, and what ext4_get_block and
// f2fs_get_block look up. ext4 and f2fs keep one per inode; BlockAops
// reads and writes through it. The inode's i_data lock protects it.
type BlockMap struct {
	dev *BlockDevice
	m   map[uint64]uint32
}

// Init makes m an empty map over dev.
func (m *BlockMap) Init(dev *BlockDevice) { m.dev, m.m = dev, map[uint64]uint32{} }

// Addr returns the device block behind page index lblk; ok is false for a
// hole.
func (m *BlockMap) Addr(lblk uint64) (addr uint32, ok bool) {
	addr, ok = m.m[lblk]
	return addr, ok
}

// GetBlock is get_block_t: the device block behind page index lblk, nil
// for a hole; with create a hole first gets a new zeroed block (nil, and
// still a hole, when a fixed-size device has none left).
func (m *BlockMap) GetBlock(lblk uint64, create bool) []byte {
	if addr, ok := m.m[lblk]; ok {
		return m.dev.Block(addr)
	}
	if !create {
		return nil
	}
	addr, blk := m.dev.Alloc()
	if blk == nil {
		return nil // a full fixed-size device: the hole stays a hole
	}
	m.m[lblk] = addr
	return blk
}

// Set maps page index lblk to device block addr, which the filesystem
// found in its own on-disk map (ext4's extent tree read by ext4_iget):
// the map a mounted image starts from.
func (m *BlockMap) Set(lblk uint64, addr uint32) { m.m[lblk] = addr }

// Punch makes page index lblk a hole, its block going back to the device
// (f2fs_truncate_hole of one block).
func (m *BlockMap) Punch(lblk uint64) {
	if addr, ok := m.m[lblk]; ok {
		m.dev.Free(addr)
		delete(m.m, lblk)
	}
}

// Truncate gives the blocks from page index from on back to the device
// (ext4_truncate's ext4_ext_remove_space, f2fs_truncate_blocks).
func (m *BlockMap) Truncate(from uint64) {
	for idx, addr := range m.m {
		if idx >= from {
			m.dev.Free(addr)
			delete(m.m, idx)
		}
	}
}

// Len is the number of mapped blocks.
func (m *BlockMap) Len() int { return len(m.m) }

// Indexes returns the mapped page indexes, in order.
func (m *BlockMap) Indexes() []uint64 {
	out := make([]uint64, 0, len(m.m))
	for p := range m.m {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Raw returns copies of the mapped blocks by page index, nil for holes
// (ciphertext for an encrypted file).
func (m *BlockMap) Raw() [][]byte {
	n := uint64(0)
	for idx := range m.m {
		n = max(n, idx+1)
	}
	out := make([][]byte, n)
	for idx, addr := range m.m {
		out[idx] = append([]byte(nil), m.dev.Block(addr)...)
	}
	return out
}

// BlockAops returns the AddressSpaceOperations of a filesystem that keeps
// a regular file's pages in device blocks mapped by the inode's BlockMap
// (blocks returns it), with fscrypt's contents encryption where the
// kernel's block-based filesystems have it:
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
func BlockAops(blocks func(*Inode) *BlockMap) AddressSpaceOperations { return blockAops{blocks} }

type blockAops struct{ blocks func(*Inode) *BlockMap }

// ReadFolio implements AddressSpaceOperations.
func (a blockAops) ReadFolio(t *kernel.Task, inode *Inode, index uint64, page []byte) error {
	b := a.blocks(inode).GetBlock(index, false)
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
// hole; ENOSPC when the device has no block left for a hole.
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
	b := a.blocks(inode).GetBlock(index, true)
	if b == nil {
		return errno.ENOSPC
	}
	copy(b, src)
	return nil
}

// Bmap implements AddressSpaceOperations.
func (a blockAops) Bmap(inode *Inode, index uint64) bool {
	return a.blocks(inode).GetBlock(index, false) != nil
}

// TruncateBlocks implements AddressSpaceOperations.
func (a blockAops) TruncateBlocks(t *kernel.Task, inode *Inode, from uint64) {
	a.blocks(inode).Truncate(from)
}

// BlockDevice is a simulated block device with its buffer cache (struct
// block_device and the buffer heads of fs/buffer.c, as a disk filesystem
// such as ext4 or f2fs sees them): numbered PageSize blocks, always up to
// date in memory, read and written in place. It remembers which blocks a
// filesystem has verified (buffer_verified), as the buffer cache does.
//
// A device is either fixed-size (NewBlockDeviceSize, OpenImage: a disk,
// sparse in memory, on which mkfs writes the real on-disk format; see
// blockdev_sparse.go) or growing (NewGrowingBlockDevice: vfslab's own
// layout, where the device hands out blocks and block 0 is never handed
// out, standing for NULL_ADDR or a hole), which tests and benchmarks use
// for its speed.
//
// A mounted filesystem shares its device between tasks: allocation,
// freeing and the verified marks take locks, and Block is lock-free on a
// growing device (the table of blocks is replaced, never changed in place
// below its published length, so a reader sees a consistent prefix) and
// takes a lock only to materialise a page on a fixed-size one.
type BlockDevice struct {
	mu       sync.Mutex
	blocks   atomic.Pointer[[][]byte]
	free     []uint32
	vmu      sync.Mutex
	verified map[uint32]bool
	// super is what mkfs wrote; claimed is set while a superblock is
	// mounted on the device (the exclusive open of blkdev_get_by_dev).
	superMu sync.Mutex
	super   DeviceSuper
	claimed bool
	// fixed is set for a fixed-size device (NewBlockDeviceSize,
	// OpenImage), whose blocks sp holds; alloc, when set, is the mounted
	// filesystem's allocator (blockdev_image.go).
	fixed     bool
	sp        *sparseStore
	readOnly  bool
	imageSize int64
	backing   string
	img       *imageFile
	alloc     BlockAllocator
	// loop, when set, is the loop device whose worker serves the
	// device's bios (vfs/loop.go).
	loop *block.LoopDevice
}

// SetSuper records what mkfs wrote on the device (DeviceSuper).
func (d *BlockDevice) SetSuper(s DeviceSuper) {
	d.superMu.Lock()
	d.super = s
	d.superMu.Unlock()
}

// Super returns what mkfs wrote on the device; the zero DeviceSuper for a
// device never formatted.
func (d *BlockDevice) Super() DeviceSuper {
	d.superMu.Lock()
	defer d.superMu.Unlock()
	return d.super
}

// claim opens the device exclusively for a mount; false when a superblock
// is already mounted on it (mount(2)'s EBUSY).
func (d *BlockDevice) claim() bool {
	d.superMu.Lock()
	defer d.superMu.Unlock()
	if d.claimed {
		return false
	}
	d.claimed = true
	return true
}

// release ends claim, when the mount fails.
func (d *BlockDevice) release() {
	d.superMu.Lock()
	d.claimed = false
	d.superMu.Unlock()
}

// NewGrowingBlockDevice returns an empty growing device in vfslab's own
// layout: it has no fixed size, hands out a new block whenever its
// filesystem allocates one and holds no on-disk format (mkfs records the
// filesystem's features in DeviceSuper instead). It is the fast device of
// unit tests and benchmarks; a disk that mkfs formats as the kernel's
// tools do is NewBlockDeviceSize.
func NewGrowingBlockDevice() *BlockDevice {
	d := &BlockDevice{verified: map[uint32]bool{}}
	bs := [][]byte{nil}
	d.blocks.Store(&bs)
	return d
}

// Alloc returns a zeroed block and its address; a reused block is no
// longer verified.
//
// On a fixed-size device the mounted filesystem's allocator picks the
// block (SetAllocator); with none, or when it has no free block, Alloc
// returns address 0 and a nil block (ENOSPC to the caller).
func (d *BlockDevice) Alloc() (uint32, []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fixed {
		if d.alloc == nil {
			return 0, nil
		}
		a, ok := d.alloc.Alloc()
		if !ok || a == 0 || a >= d.sp.n {
			return 0, nil
		}
		b := d.sp.page(a, true)
		if b == nil {
			return 0, nil
		}
		d.Unverify(a)
		return a, b
	}
	bs := *d.blocks.Load()
	if n := len(d.free); n > 0 {
		a := d.free[n-1]
		d.free = d.free[:n-1]
		clear(bs[a])
		d.Unverify(a)
		return a, bs[a]
	}
	b := make([]byte, PageSize)
	bs = append(bs, b)
	d.blocks.Store(&bs)
	return uint32(len(bs) - 1), b
}

// Free returns block addr to the free list.
func (d *BlockDevice) Free(addr uint32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fixed {
		if d.alloc != nil && addr != 0 && addr < d.sp.n {
			d.alloc.Free(addr)
		}
		return
	}
	if addr != 0 && int(addr) < len(*d.blocks.Load()) {
		d.free = append(d.free, addr)
	}
}

// Block returns block addr, to read and write in place, or nil if it was
// never allocated. On a fixed-size device every block exists, block 0
// included: the block is materialised on first use (zeroes, or the
// image's bytes) and marked dirty for write-back; nil past the end, or
// when an image's bytes cannot be read. A reader that must not
// materialise blocks uses ReadAt.
func (d *BlockDevice) Block(addr uint32) []byte {
	if d.fixed {
		if addr >= d.sp.n {
			return nil
		}
		return d.sp.page(addr, false)
	}
	bs := *d.blocks.Load()
	if addr == 0 || int(addr) >= len(bs) {
		return nil
	}
	return bs[addr]
}

// BufferVerified is buffer_verified: block addr passed the filesystem's
// checks since it was last changed behind its back.
func (d *BlockDevice) BufferVerified(addr uint32) bool {
	d.vmu.Lock()
	defer d.vmu.Unlock()
	return d.verified[addr]
}

// SetBufferVerified is set_buffer_verified.
func (d *BlockDevice) SetBufferVerified(addr uint32) {
	d.vmu.Lock()
	defer d.vmu.Unlock()
	d.verified[addr] = true
}

// Unverify forgets that block addr was verified (clear_buffer_verified),
// after a change made behind the filesystem's back (a test corrupting it,
// a raw write).
func (d *BlockDevice) Unverify(addr uint32) {
	d.vmu.Lock()
	defer d.vmu.Unlock()
	delete(d.verified, addr)
}

// InUse returns the number of allocated blocks of a growing device; on a
// fixed-size device, the number of blocks held in memory (Resident).
func (d *BlockDevice) InUse() int {
	if d.fixed {
		return int(d.sp.resident.Load())
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(*d.blocks.Load()) - 1 - len(d.free)
}
