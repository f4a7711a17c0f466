package vfs

import (
	"fmt"
	"io"
	"os"

	"github.com/vfslab/vfslab/errno"
)

// Fixed-size devices and host images.
//
// NewBlockDevice makes a device that grows as its filesystem allocates
// (vfslab's own layout, where the device hands out blocks). A device made
// from a host image file, or with a size, has a fixed number of PageSize
// blocks, all present from the start (block 0 included: a real filesystem's
// superblock lives there), and the filesystem mounted on it allocates its
// blocks itself, from its own bitmaps, through SetAllocator. ReadAt and
// WriteAt give byte-addressed access for filesystems whose blocks are
// smaller than a page (ext4 with 1 KiB or 2 KiB blocks) and for the image
// I/O itself.

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
func NewBlockDeviceSize(nblocks uint32) *BlockDevice {
	d := &BlockDevice{verified: map[uint32]bool{}, fixed: true}
	data := make([]byte, int(nblocks)*PageSize)
	bs := make([][]byte, nblocks)
	for i := range bs {
		bs[i] = data[i*PageSize : (i+1)*PageSize : (i+1)*PageSize]
	}
	d.blocks.Store(&bs)
	return d
}

// OpenImage attaches the host file path as a fixed-size device (the
// loop-device setup of losetup, reduced). The file's contents are read
// into memory; its size must be a positive multiple of 512 and is rounded
// up to whole pages with zeroes. With writable false the device is
// read-only (BLKROSET): ReadOnly reports it, and Sync never touches the
// file. Errors: the host's open/read errors, wrapped with the path;
// EINVAL for an empty file or a size that is not a multiple of 512.
func OpenImage(path string, writable bool) (*BlockDevice, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size <= 0 || size%512 != 0 || size > 1<<40 {
		return nil, fmt.Errorf("%s: size %d is not a positive multiple of 512 bytes: %w", path, size, errno.EINVAL)
	}
	n := uint32((size + PageSize - 1) / PageSize)
	d := NewBlockDeviceSize(n)
	if _, err := d.ReadFrom(f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	d.imageSize = size
	d.readOnly = !writable
	if writable {
		d.backing = path
	}
	return d, nil
}

// Fixed reports whether the device has a fixed size (NewBlockDeviceSize,
// OpenImage).
func (d *BlockDevice) Fixed() bool { return d.fixed }

// ReadOnly reports whether the device is read-only (an image attached
// without write access); mounting it read-write must fail with EACCES, as
// mount(8) then retries read-only.
func (d *BlockDevice) ReadOnly() bool { return d.readOnly }

// SetReadOnly sets or clears the device's read-only flag (blockdev
// --setro/--setrw).
func (d *BlockDevice) SetReadOnly(ro bool) { d.readOnly = ro }

// Blocks returns the number of PageSize blocks a fixed-size device has
// (for a growing device, the number it has handed out so far plus the
// reserved block 0).
func (d *BlockDevice) Blocks() uint32 { return uint32(len(*d.blocks.Load())) }

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

// ReadAt copies len(p) bytes at byte offset off into p (io.ReaderAt).
// Errors: io.EOF past the end of a fixed-size device (with the bytes that
// exist copied), EINVAL for a negative offset.
func (d *BlockDevice) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errno.EINVAL
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
// end of a fixed-size device (nothing written), EINVAL for a negative
// offset or a block the growing device never handed out.
func (d *BlockDevice) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errno.EINVAL
	}
	if d.readOnly {
		return 0, errno.EROFS
	}
	bs := *d.blocks.Load()
	if end := off + int64(len(p)); end > int64(len(bs))*PageSize {
		return 0, errno.ENOSPC
	}
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		blk := pos / PageSize
		b := bs[blk]
		if b == nil {
			return n, errno.EINVAL
		}
		d.Unverify(uint32(blk))
		n += copy(b[pos%PageSize:], p[n:])
	}
	return n, nil
}

// ReadFrom fills the device from r, from byte 0, until r ends or the
// device is full (io.ReaderFrom); it ignores the read-only flag (it is how
// an image is loaded).
func (d *BlockDevice) ReadFrom(r io.Reader) (int64, error) {
	bs := *d.blocks.Load()
	var n int64
	for i := 0; i < len(bs); i++ {
		if bs[i] == nil {
			continue
		}
		m, err := io.ReadFull(r, bs[i])
		n += int64(m)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// WriteTo writes the device's contents to w (io.WriterTo): Size() bytes,
// holes as zeroes.
func (d *BlockDevice) WriteTo(w io.Writer) (int64, error) {
	var zero [PageSize]byte
	bs := *d.blocks.Load()
	left := d.Size()
	var n int64
	for i := 0; i < len(bs) && left > 0; i++ {
		b := bs[i]
		if b == nil {
			b = zero[:]
		}
		b = b[:min(int64(len(b)), left)]
		m, err := w.Write(b)
		n += int64(m)
		left -= int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// SaveImage writes the device's contents to the host file path, created
// or truncated (vfslab sh --save-image; dd if=/dev/vdb of=FILE).
func (d *BlockDevice) SaveImage(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := d.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// Sync writes a writable attached image back to its host file (the page
// cache of the loop device's backing file flushed: fsync on umount and
// sync). It does nothing for a device with no backing file.
func (d *BlockDevice) Sync() error {
	if d.backing == "" || d.readOnly {
		return nil
	}
	return d.SaveImage(d.backing)
}

// Map records that page index lblk lives in device block addr, for a
// filesystem that reads a file's block map from its image (ext4's extent
// tree, f2fs's i_addr and dnodes); the block is not allocated.
func (m *BlockMap) Map(lblk uint64, addr uint32) { m.m[lblk] = addr }
