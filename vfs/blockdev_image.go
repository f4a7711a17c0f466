package vfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/vfslab/vfslab/errno"
)

// Fixed-size devices and host images.
//
// NewGrowingBlockDevice makes a device that grows as its filesystem
// allocates (vfslab's own layout, where the device hands out blocks). A
// device made from a host image file, or with a size, has a fixed number
// of PageSize blocks (block 0 included: a real filesystem's superblock
// lives there), kept sparse in memory (blockdev_sparse.go), and the
// filesystem mounted on it allocates its blocks itself, from its own
// bitmaps, through SetAllocator. ReadAt and WriteAt give byte-addressed
// access for filesystems whose blocks are smaller than a page (ext4 with
// 1 KiB or 2 KiB blocks) and for the image I/O itself.
//
// An attached image is read lazily from its file, which stays open (and
// locked: flock, exclusive for a writable image, shared for a read-only
// one) until Close. Its write-back (Sync) is atomic: see
// blockdev_writeback.go.

// BlockAllocator is the allocator a filesystem with its own free-space
// maps (ext4's block bitmaps, f2fs's SIT) plugs into a fixed-size device:
// Alloc returns a free block's address and false when none is left; Free
// gives one back.
type BlockAllocator interface {
	Alloc() (addr uint32, ok bool)
	Free(addr uint32)
}

// NewBlockDeviceSize returns a zeroed fixed-size device of nblocks
// PageSize blocks (a blank disk; blockdev --getsz is nblocks*8 sectors).
// It is sparse: a block takes memory once written.
func NewBlockDeviceSize(nblocks uint32) *BlockDevice {
	return &BlockDevice{verified: map[uint32]bool{}, fixed: true, sp: newSparseStore(nblocks)}
}

// MaxImageSize is the largest image or device OpenImage and
// NewBlockDeviceSize's callers accept: 1 TiB.
const MaxImageSize = 1 << 40

// OpenImage attaches the host file path as a fixed-size device (the
// loop-device setup of losetup, reduced). The file stays open and is read
// lazily, a block when it is first needed; its size must be a positive
// multiple of 512 (the last page is completed with zeroes). The file is
// locked (flock) against another process: exclusively with writable set,
// shared otherwise. A write-ahead record left by a write-back that did not
// finish is completed first (writable) or read over the file (read-only);
// a torn record, whose write-back never began, is discarded. With writable
// false the device is read-only (BLKROSET): ReadOnly reports it, and Sync
// never touches the file. Errors: the host's open/read errors, wrapped
// with the path; EBUSY when another process holds the lock; EINVAL for an
// empty file or a size that is not a multiple of 512.
func OpenImage(path string, writable bool) (*BlockDevice, error) {
	flag := os.O_RDONLY
	if writable {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, err
	}
	unlock, err := lockImage(f, writable)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("not a regular file: %w", errno.EINVAL)
	}
	if err != nil {
		unlock()
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	size := st.Size()
	if size <= 0 || size%512 != 0 || size > MaxImageSize {
		unlock()
		f.Close()
		return nil, fmt.Errorf("%s: size %d is not a positive multiple of 512 bytes: %w", path, size, errno.EINVAL)
	}
	n := uint32((size + PageSize - 1) / PageSize)
	d := NewBlockDeviceSize(n)
	d.sp.file, d.sp.fileSize = f, size
	d.imageSize = size
	d.readOnly = !writable
	d.img = &imageFile{path: path, f: f, writable: writable, unlock: unlock}
	if err := d.recover(); err != nil {
		d.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if writable {
		d.backing = path
	}
	return d, nil
}

// Close releases an attached image's file and its lock; the device must
// not be used afterwards. It writes nothing (Sync does). Nothing to do for
// a device with no image.
func (d *BlockDevice) Close() error {
	if d.img == nil || d.img.f == nil {
		return nil
	}
	err := d.img.f.Close()
	d.img.unlock()
	d.img.f, d.sp.file = nil, nil
	return err
}

// Fixed reports whether the device has a fixed size (NewBlockDeviceSize,
// OpenImage).
func (d *BlockDevice) Fixed() bool { return d.fixed }

// ReadOnly reports whether the device is read-only (an image attached
// without write access); mounting it read-write must fail with EACCES, as
// mount(8) then retries read-only.
func (d *BlockDevice) ReadOnly() bool { return d.readOnly }

// SetReadOnly sets or clears the device's read-only flag (blockdev
// --setro/--setrw). An image attached read-only stays read-only for
// write-back: Sync never writes its file.
func (d *BlockDevice) SetReadOnly(ro bool) { d.readOnly = ro }

// Blocks returns the number of PageSize blocks a fixed-size device has
// (for a growing device, the number it has handed out so far plus the
// reserved block 0).
func (d *BlockDevice) Blocks() uint32 {
	if d.fixed {
		return d.sp.n
	}
	return uint32(len(*d.blocks.Load()))
}

// Resident returns the bytes of memory the device's blocks hold: what
// was written to a fixed-size device (or read from its image through
// Block), every block of a growing one.
func (d *BlockDevice) Resident() int64 {
	if d.fixed {
		return d.sp.resident.Load() * PageSize
	}
	return int64(d.Blocks()) * PageSize
}

// Size returns the device's size in bytes (BLKGETSIZE64): the image's own
// size for an attached image.
func (d *BlockDevice) Size() int64 {
	if d.imageSize != 0 {
		return d.imageSize
	}
	return int64(d.Blocks()) * PageSize
}

// SetAllocator makes a the device's block allocator: Alloc and Free go
// to it from now on. A filesystem that manages its own free space calls
// it from fill_super; nil restores the device's own allocator.
func (d *BlockDevice) SetAllocator(a BlockAllocator) {
	d.mu.Lock()
	d.alloc = a
	d.mu.Unlock()
}

// ReadAt copies len(p) bytes at byte offset off into p (io.ReaderAt),
// without materialising the blocks of a fixed-size device. Errors: io.EOF
// past the end of the device (with the bytes that exist copied), EINVAL
// for a negative offset, EIO when an image's file cannot be read.
func (d *BlockDevice) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errno.EINVAL
	}
	if d.fixed {
		n := 0
		for n < len(p) {
			pos := off + int64(n)
			blk := pos / PageSize
			if blk >= int64(d.sp.n) {
				return n, io.EOF
			}
			o := int(pos % PageSize)
			m := min(PageSize-o, len(p)-n)
			if err := d.sp.read(uint32(blk), o, p[n:n+m]); err != nil {
				return n, fmt.Errorf("%v: %w", err, errno.EIO)
			}
			n += m
		}
		return n, nil
	}
	bs := *d.blocks.Load()
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		blk := pos / PageSize
		if blk >= int64(len(bs)) {
			return n, io.EOF
		}
		b := bs[blk]
		o := int(pos % PageSize)
		if b == nil {
			m := min(PageSize-o, len(p)-n)
			clear(p[n : n+m])
			n += m
			continue
		}
		n += copy(p[n:], b[o:])
	}
	return n, nil
}

// WriteAt copies p to byte offset off (io.WriterAt), marking the blocks it
// touches unverified. Errors: EROFS on a read-only device, ENOSPC past the
// end of the device (nothing written), EINVAL for a negative offset or a
// block the growing device never handed out, EIO when an image's file
// cannot be read for a partial block.
func (d *BlockDevice) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errno.EINVAL
	}
	if d.readOnly {
		return 0, errno.EROFS
	}
	if end := off + int64(len(p)); end > int64(d.Blocks())*PageSize {
		return 0, errno.ENOSPC
	}
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		blk := uint32(pos / PageSize)
		b := d.Block(blk)
		if b == nil {
			if d.fixed {
				return n, errno.EIO
			}
			return n, errno.EINVAL
		}
		d.Unverify(blk)
		n += copy(b[pos%PageSize:], p[n:])
	}
	return n, nil
}

// Discard zeroes length bytes at byte offset off (BLKDISCARD on a device
// whose discards zero, BLKZEROOUT, blkdev_issue_zeroout): whole blocks of
// a fixed-size device are dropped, holding no memory and reading as
// zeroes, so that mkfs zeroing a 64 MiB journal costs nothing; a partial
// block is zeroed in place. Errors: EROFS on a read-only device, EINVAL
// for a range outside the device.
func (d *BlockDevice) Discard(off, length int64) error {
	if d.readOnly {
		return errno.EROFS
	}
	if off < 0 || length < 0 || off+length > int64(d.Blocks())*PageSize {
		return errno.EINVAL
	}
	end := off + length
	for off < end {
		blk := uint32(off / PageSize)
		o := off % PageSize
		m := min(PageSize-o, end-off)
		switch {
		case d.fixed && o == 0 && m == PageSize:
			d.sp.discard(blk)
			d.Unverify(blk)
		default:
			if b := d.Block(blk); b != nil {
				clear(b[o : o+m])
				d.Unverify(blk)
			}
		}
		off += m
	}
	return nil
}

// ReadFrom fills the device from r, from byte 0, until r ends or the
// device is full (io.ReaderFrom); blocks of zeroes stay holes. It ignores
// the read-only flag (it is how an image is loaded).
func (d *BlockDevice) ReadFrom(r io.Reader) (int64, error) {
	var buf [PageSize]byte
	var n int64
	for i := uint32(0); i < d.Blocks(); i++ {
		m, err := io.ReadFull(r, buf[:])
		n += int64(m)
		if m > 0 && (!d.fixed || !allZero(buf[:m])) {
			if b := d.Block(i); b != nil {
				copy(b, buf[:m])
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// allZero reports whether b holds only zero bytes.
func allZero(b []byte) bool {
	var zero [PageSize]byte
	for len(b) > 0 {
		m := min(len(b), PageSize)
		if !bytes.Equal(b[:m], zero[:m]) {
			return false
		}
		b = b[m:]
	}
	return true
}

// WriteTo writes the device's contents to w (io.WriterTo): Size() bytes,
// holes as zeroes.
func (d *BlockDevice) WriteTo(w io.Writer) (int64, error) {
	var buf [PageSize]byte
	left := d.Size()
	var n int64
	for i := uint32(0); i < d.Blocks() && left > 0; i++ {
		m := int(min(PageSize, left))
		if _, err := d.ReadAt(buf[:m], int64(i)*PageSize); err != nil && err != io.EOF {
			return n, err
		}
		k, err := w.Write(buf[:m])
		n += int64(k)
		left -= int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// SaveImage writes the device's contents to the host file path (vfslab sh
// --save-image; dd if=/dev/vdb of=FILE conv=sparse): a sparse file of
// Size() bytes whose blocks of zeroes are holes, written to a temporary
// file beside path, flushed (fsync) and renamed over path, so that path
// is either its old self or the whole new image, never a part of one.
func (d *BlockDevice) SaveImage(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".vfslab-*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := d.writeSparse(tmp); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	// The new image keeps the mode of the file it replaces.
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	if err := tmp.Chmod(mode); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	done = true
	return syncDir(filepath.Dir(path))
}

// writeSparse writes the device to the empty file f, leaving its blocks
// of zeroes holes.
func (d *BlockDevice) writeSparse(f *os.File) error {
	size := d.Size()
	var buf [PageSize]byte
	for i := uint32(0); i < d.Blocks(); i++ {
		off := int64(i) * PageSize
		m := int(min(PageSize, size-off))
		if m <= 0 {
			break
		}
		if d.fixed {
			if c := d.sp.chunk(i, false); c == nil && !d.sp.fromFile(i) {
				i |= sparseChunk - 1 // a chunk never written
				continue
			}
		}
		if _, err := d.ReadAt(buf[:m], off); err != nil && err != io.EOF {
			return err
		}
		if allZero(buf[:m]) {
			continue
		}
		if _, err := f.WriteAt(buf[:m], off); err != nil {
			return err
		}
	}
	return f.Truncate(size)
}

// syncDir flushes the directory dir (an entry made or removed in it).
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, errno.EINVAL) {
		return err
	}
	return nil
}

// Map records that page index lblk lives in device block addr, for a
// filesystem that reads a file's block map from its image (ext4's extent
// tree, f2fs's i_addr and dnodes); the block is not allocated.
func (m *BlockMap) Map(lblk uint64, addr uint32) { m.m[lblk] = addr }
