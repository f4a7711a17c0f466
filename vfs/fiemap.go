package vfs

import (
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// FS_IOC_FIEMAP is _IOWR('f', 11, struct fiemap) (include/uapi/linux/fs.h).
const FS_IOC_FIEMAP = 0xc020660b

// struct fiemap's fm_flags and struct fiemap_extent's fe_flags
// (include/uapi/linux/fiemap.h).
const (
	FIEMAP_FLAG_SYNC  = 0x00000001
	FIEMAP_FLAG_XATTR = 0x00000002
	// FIEMAP_FLAGS_COMPAT are the request flags every filesystem takes.
	FIEMAP_FLAGS_COMPAT = FIEMAP_FLAG_SYNC | FIEMAP_FLAG_XATTR

	FIEMAP_EXTENT_LAST           = 0x00000001
	FIEMAP_EXTENT_UNKNOWN        = 0x00000002
	FIEMAP_EXTENT_DELALLOC       = 0x00000004
	FIEMAP_EXTENT_ENCODED        = 0x00000008
	FIEMAP_EXTENT_DATA_ENCRYPTED = 0x00000080
	FIEMAP_EXTENT_NOT_ALIGNED    = 0x00000100
	FIEMAP_EXTENT_DATA_INLINE    = 0x00000200
	FIEMAP_EXTENT_UNWRITTEN      = 0x00000800
	FIEMAP_EXTENT_MERGED         = 0x00001000
	FIEMAP_EXTENT_SHARED         = 0x00002000
)

// FiemapExtent is struct fiemap_extent: bytes from fe_logical in the file
// are at fe_physical on the device.
type FiemapExtent struct {
	Logical, Physical, Length uint64
	Flags                     uint32
}

// Fiemap is struct fiemap, the argument of FS_IOC_FIEMAP: the range
// [Start, Start+Length) of the file, the request Flags, and room for
// MaxExtents extents (0: only count them in MappedExtents). The ioctl
// fills MappedExtents and Extents.
type Fiemap struct {
	Start, Length uint64
	Flags         uint32
	MaxExtents    uint32
	MappedExtents uint32
	Extents       []FiemapExtent
}

// FillNextExtent is fiemap_fill_next_extent (fs/ioctl.c): it records one
// extent, or only counts it when the caller asked for none; it returns
// true when the caller's array is full or the extent is the last, so the
// filesystem stops.
func (fm *Fiemap) FillNextExtent(logical, phys, length uint64, flags uint32) bool {
	if fm.MaxExtents == 0 {
		fm.MappedExtents++
		return flags&FIEMAP_EXTENT_LAST != 0
	}
	if fm.MappedExtents >= fm.MaxExtents {
		return true
	}
	fm.Extents = append(fm.Extents, FiemapExtent{Logical: logical, Physical: phys, Length: length, Flags: flags})
	fm.MappedExtents++
	return fm.MappedExtents == fm.MaxExtents || flags&FIEMAP_EXTENT_LAST != 0
}

// Fiemapper is implemented by the inode operations of a filesystem that
// reports its files' block mappings (->fiemap: ext4_fiemap, f2fs_fiemap).
type Fiemapper interface {
	Fiemap(t *kernel.Task, inode *Inode, fm *Fiemap, start, length uint64) error
}

// ioctlFiemap is ioctl_fiemap (fs/ioctl.c): flags outside what the
// filesystem supports are EBADR, a zero length is no extents, and the
// inode's ->fiemap does the rest (EOPNOTSUPP without one). The model
// writes pages back as it goes, so FIEMAP_FLAG_SYNC has nothing to wait
// for.
func ioctlFiemap(t *kernel.Task, f *File, arg any) (int, error) {
	fm, ok := arg.(*Fiemap)
	if !ok {
		return 0, errno.EFAULT
	}
	inode := f.inode
	fi, ok := inode.Op.(Fiemapper)
	if !ok {
		return 0, errno.EOPNOTSUPP
	}
	if fm.Flags&^FIEMAP_FLAGS_COMPAT != 0 {
		fm.Flags &^= FIEMAP_FLAGS_COMPAT
		return 0, errno.EBADR
	}
	fm.MappedExtents, fm.Extents = 0, nil
	if fm.Length == 0 {
		return 0, nil
	}
	return 0, fi.Fiemap(t, inode, fm, fm.Start, fm.Length)
}

// FiemapBlockMap reports a block-mapped file's extents (what ext4_fiemap
// reports through iomap and f2fs_fiemap through f2fs_map_blocks): runs of
// pages whose device blocks follow each other are one extent of the
// mapped range, holes are left out, each extent has flags and the last
// one found also FIEMAP_EXTENT_LAST. A flag other than
// FIEMAP_FLAG_SYNC in the request is EBADR (no xattr fork). The map is
// read under the inode's i_data lock.
func FiemapBlockMap(t *kernel.Task, inode *Inode, m *BlockMap, fm *Fiemap, start, length uint64, flags uint32) error {
	if fm.Flags&FIEMAP_FLAG_XATTR != 0 {
		return errno.EBADR
	}
	size := uint64(inode.Size())
	end := start + length
	if end < start || end > size {
		end = size
	}
	if start >= end {
		return nil
	}
	first, last := start/PageSize, (end-1)/PageSize
	var run *FiemapExtent
	flush := func(isLast bool) bool {
		if run == nil {
			return false
		}
		fl := run.Flags
		if isLast {
			fl |= FIEMAP_EXTENT_LAST
		}
		stop := fm.FillNextExtent(run.Logical, run.Physical, run.Length, fl)
		run = nil
		return stop
	}
	type mapping struct {
		idx  uint64
		addr uint32
	}
	inode.Data.mu.Lock()
	var maps []mapping
	for _, idx := range m.Indexes() {
		if idx >= first && idx <= last {
			addr, _ := m.Addr(idx)
			maps = append(maps, mapping{idx, addr})
		}
	}
	inode.Data.mu.Unlock()
	for _, mp := range maps {
		idx, addr := mp.idx, mp.addr
		phys := uint64(addr) * PageSize
		logical := idx * PageSize
		if run != nil && run.Logical+run.Length == logical && run.Physical+run.Length == phys {
			run.Length += PageSize
			continue
		}
		if flush(false) {
			return nil
		}
		run = &FiemapExtent{Logical: logical, Physical: phys, Length: PageSize, Flags: flags}
	}
	flush(true)
	return nil
}
