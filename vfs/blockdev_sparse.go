package vfs

import (
	"os"
	"sync"
	"sync/atomic"

	"github.com/vfslab/vfslab/errno"
)

// The blocks of a fixed-size device, kept sparse: a two-level table of
// chunks of sparseChunk pages, each page allocated when it is first
// handed out for writing (Block, Alloc, WriteAt), so that a device's
// memory grows with the blocks written, not with its size, as a sparse
// loop file's or a thin-provisioned disk's does. A page never written
// reads as zeroes, or, on a device made from a host image (OpenImage),
// as the image's bytes, read from the file when first needed. Discard
// drops pages (BLKDISCARD, BLKZEROOUT with a device whose discards
// zero): they read as zeroes again and cost nothing.
//
// Every page handed out for writing is marked dirty in its chunk; an
// image's write-back (Sync) writes the dirty pages that differ from the
// file and clears the marks.

const (
	sparseChunkShift = 8
	sparseChunk      = 1 << sparseChunkShift // pages per chunk
)

// zeroedPage marks a page of an image-backed device that was discarded:
// it reads as zeroes, not as the file's bytes. It is never handed out.
var zeroedPage = new([PageSize]byte)

type sparseChunkT struct {
	pages [sparseChunk]atomic.Pointer[[PageSize]byte]
	dirty [sparseChunk / 64]atomic.Uint64
}

type sparseStore struct {
	n      uint32
	chunks []atomic.Pointer[sparseChunkT]
	// mu serialises the materialisation of pages and chunks.
	mu sync.Mutex
	// file, when set, holds the pages never written (an attached
	// image, read lazily); fileSize is its size in bytes.
	file     *os.File
	fileSize int64
	resident atomic.Int64
}

func newSparseStore(nblocks uint32) *sparseStore {
	return &sparseStore{n: nblocks, chunks: make([]atomic.Pointer[sparseChunkT], (uint64(nblocks)+sparseChunk-1)/sparseChunk)}
}

// chunk returns the chunk of page addr, made when create is set (nil
// otherwise when there is none yet).
func (s *sparseStore) chunk(addr uint32, create bool) *sparseChunkT {
	cp := &s.chunks[addr>>sparseChunkShift]
	if c := cp.Load(); c != nil || !create {
		return c
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := cp.Load(); c != nil {
		return c
	}
	c := new(sparseChunkT)
	cp.Store(c)
	return c
}

// fromFile reports whether page addr, never written, reads from the
// image file.
func (s *sparseStore) fromFile(addr uint32) bool {
	return s.file != nil && int64(addr)*PageSize < s.fileSize
}

// readFilePage reads page addr of the image file into p (zeroes past the
// file's end).
func (s *sparseStore) readFilePage(addr uint32, p []byte) error {
	off := int64(addr) * PageSize
	n, err := s.file.ReadAt(p, off)
	if n < len(p) && off+int64(n) >= s.fileSize {
		clear(p[n:])
		return nil
	}
	return err
}

// page returns page addr for writing: materialised (zeroes, or the
// image's bytes) on first use, and marked dirty. With fresh the page is
// zeroed whatever it held (a block newly allocated). nil when the image
// file cannot be read.
func (s *sparseStore) page(addr uint32, fresh bool) []byte {
	c := s.chunk(addr, true)
	i := addr & (sparseChunk - 1)
	c.dirty[i/64].Or(1 << (i % 64))
	p := c.pages[i].Load()
	if p != nil && p != zeroedPage {
		if fresh {
			clear(p[:])
		}
		return p[:]
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p = c.pages[i].Load()
	if p != nil && p != zeroedPage {
		if fresh {
			clear(p[:])
		}
		return p[:]
	}
	np := new([PageSize]byte)
	if p == nil && !fresh && s.fromFile(addr) {
		if err := s.readFilePage(addr, np[:]); err != nil {
			return nil
		}
	}
	c.pages[i].Store(np)
	s.resident.Add(1)
	return np[:]
}

// peek returns page addr for reading without materialising it: the page
// when it is in memory, nil when it reads as zeroes; file is set when it
// must be read from the image file.
func (s *sparseStore) peek(addr uint32) (p []byte, file bool) {
	c := s.chunk(addr, false)
	if c == nil {
		return nil, s.fromFile(addr)
	}
	pg := c.pages[addr&(sparseChunk-1)].Load()
	switch pg {
	case nil:
		return nil, s.fromFile(addr)
	case zeroedPage:
		return nil, false
	}
	return pg[:], false
}

// read copies page addr's bytes from o on into p (len(p) <= PageSize-o).
func (s *sparseStore) read(addr uint32, o int, p []byte) error {
	pg, file := s.peek(addr)
	switch {
	case pg != nil:
		copy(p, pg[o:])
	case file:
		var buf [PageSize]byte
		if err := s.readFilePage(addr, buf[:]); err != nil {
			return err
		}
		copy(p, buf[o:])
	default:
		clear(p)
	}
	return nil
}

// discard drops page addr: it reads as zeroes and holds no memory.
func (s *sparseStore) discard(addr uint32) {
	c := s.chunk(addr, false)
	if c == nil && !s.fromFile(addr) {
		return
	}
	if c == nil {
		c = s.chunk(addr, true)
	}
	i := addr & (sparseChunk - 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	old := c.pages[i].Load()
	var mark *[PageSize]byte
	if s.fromFile(addr) {
		mark = zeroedPage
	}
	if old == mark {
		return
	}
	if old != nil && old != zeroedPage {
		s.resident.Add(-1)
	}
	c.pages[i].Store(mark)
	c.dirty[i/64].Or(1 << (i % 64))
}

// dirtyPages calls fn for every page marked dirty, in order.
func (s *sparseStore) dirtyPages(fn func(addr uint32) error) error {
	for ci := range s.chunks {
		c := s.chunks[ci].Load()
		if c == nil {
			continue
		}
		for w := range c.dirty {
			bits := c.dirty[w].Load()
			for b := 0; bits != 0; b++ {
				if bits&1 != 0 {
					if err := fn(uint32(ci)<<sparseChunkShift | uint32(w*64+b)); err != nil {
						return err
					}
				}
				bits >>= 1
			}
		}
	}
	return nil
}

// cleanAll clears every dirty mark (after a write-back).
func (s *sparseStore) cleanAll() {
	for ci := range s.chunks {
		if c := s.chunks[ci].Load(); c != nil {
			for w := range c.dirty {
				c.dirty[w].Store(0)
			}
		}
	}
}

// Clone returns a new fixed-size device holding a copy of d's contents
// (a snapshot of the disk, as cp --sparse of its image makes): only the
// blocks d holds something in are copied, so a clone of a sparse device
// is cheap. The clone has no image file, allocator or verified marks.
// Errors: EINVAL for a growing device, EIO when d's image cannot be read.
func (d *BlockDevice) Clone() (*BlockDevice, error) {
	if !d.fixed {
		return nil, errno.EINVAL
	}
	n := NewBlockDeviceSize(d.sp.n)
	n.imageSize = d.imageSize
	var buf [PageSize]byte
	for a := uint32(0); a < d.sp.n; a++ {
		if d.sp.chunk(a, false) == nil && !d.sp.fromFile(a) {
			a |= sparseChunk - 1
			continue
		}
		pg, file := d.sp.peek(a)
		if file {
			if err := d.sp.readFilePage(a, buf[:]); err != nil {
				return nil, errno.EIO
			}
			if allZero(buf[:]) {
				continue
			}
			pg = buf[:]
		}
		if pg != nil {
			copy(n.sp.page(a, true), pg)
		}
	}
	return n, nil
}
