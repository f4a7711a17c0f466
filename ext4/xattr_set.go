package ext4

import (
	"bytes"
	"encoding/binary"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// The xattr set path of fs/ext4/xattr.c on the on-disk bytes: an inode's
// attributes live in its in-inode space (after i_extra_isize: the ibody
// header's magic, the entries from the front, the values packed down from
// the end, in the order they were added) and in one xattr block (a
// 32-byte header, the entries sorted by index, name length and name, the
// values from the end, h_hash over the entries' hashes). A new value goes
// in the inode when it fits there and in the block otherwise
// (ext4_xattr_set_handle), and leaves the other place. The model keeps
// both regions as bytes and edits them as ext4_xattr_set_entry does, so an
// image holds what the kernel would have written. Not modelled: ea_inode
// (values in their own inodes; such an entry is refused as corrupt on
// read) and the mbcache's sharing of identical blocks between inodes (a
// block shared on an image made elsewhere is cloned before it is changed,
// as the kernel clones it).

// Entry fields (struct ext4_xattr_entry).
const (
	xeNameLen   = 0
	xeNameIndex = 1
	xeValueOffs = 2
	xeValueInum = 4
	xeValueSize = 8
	xeHash      = 12
)

// Block header fields (struct ext4_xattr_header).
const (
	xhMagic    = 0
	xhRefcount = 4
	xhBlocks   = 8
	xhHash     = 12
	xhChecksum = 16
)

// Name indexes (fs/ext4/xattr.h EXT4_XATTR_INDEX_*).
const (
	XattrIndexUser            = 1
	XattrIndexPosixACLAccess  = 2
	XattrIndexPosixACLDefault = 3
	XattrIndexTrusted         = 4
	XattrIndexSecurity        = 6
	XattrIndexSystem          = 7
	XattrIndexHurd            = 10
)

// isLastEntry is IS_LAST_ENTRY: the four zero bytes after the entries.
func isLastEntry(b []byte, off int) bool {
	return off+4 > len(b) || binary.LittleEndian.Uint32(b[off:]) == 0
}

// xattrNext is EXT4_XATTR_NEXT.
func xattrNext(b []byte, off int) int { return off + xattrLen(int(b[off+xeNameLen])) }

// xattrSearch is struct ext4_xattr_search over one region: buf runs from
// s->base (where value offsets count from) to s->end; first is the first
// entry; here the entry found, or where a new one goes.
type xattrSearch struct {
	buf      []byte
	first    int
	here     int
	notFound bool
}

// xattrFindEntry is xattr_find_entry: the entry (index, name) from s.here
// on. In a sorted region (the block) the search stops at the first entry
// not below the name, where a new one is inserted; in the inode it goes to
// the end. Errors: ENODATA (s.here is then the insertion point),
// EFSCORRUPTED for entries that run past the region.
func xattrFindEntry(s *xattrSearch, index uint8, name string, sorted bool) error {
	cmp := 1
	off := s.here
	for !isLastEntry(s.buf, off) {
		next := xattrNext(s.buf, off)
		if next >= len(s.buf) {
			return errno.EFSCORRUPTED
		}
		cmp = int(index) - int(s.buf[off+xeNameIndex])
		if cmp == 0 {
			cmp = len(name) - int(s.buf[off+xeNameLen])
		}
		if cmp == 0 {
			nl := int(s.buf[off+xeNameLen])
			cmp = bytes.Compare([]byte(name), s.buf[off+xattrEntrySize:off+xattrEntrySize+nl])
		}
		if cmp <= 0 && (sorted || cmp == 0) {
			break
		}
		off = next
	}
	s.here = off
	if cmp != 0 {
		s.notFound = true
		return errno.ENODATA
	}
	s.notFound = false
	return nil
}

// entryValue returns the value of the entry at off.
func entryValue(b []byte, off int) []byte {
	vo := int(binary.LittleEndian.Uint16(b[off+xeValueOffs:]))
	vs := int(binary.LittleEndian.Uint32(b[off+xeValueSize:]))
	return b[vo : vo+vs]
}

// xattrSetEntry is ext4_xattr_set_entry: value (nil removes) for (index,
// name) at s.here: the old value is taken out and the values below it
// moved up, the name inserted (or removed, closing the gap), the new
// value put below the lowest one. In the block the entry's hash and the
// header's are computed (ext4_xattr_rehash); in-inode entries keep a
// hash of 0. Errors: ENOSPC when it does not fit, EFSCORRUPTED.
func xattrSetEntry(s *xattrSearch, index uint8, name string, value []byte, isBlock bool) error {
	b := s.buf
	here := s.here
	nameLen := len(name)
	oldSize := 0
	if !s.notFound {
		oldSize = xattrSize(int(binary.LittleEndian.Uint32(b[here+xeValueSize:])))
	}
	newSize := 0
	if value != nil {
		newSize = xattrSize(len(value))
	}
	if newSize != 0 && newSize == oldSize {
		// The same padded size: the value is replaced in place.
		offs := int(binary.LittleEndian.Uint16(b[here+xeValueOffs:]))
		binary.LittleEndian.PutUint32(b[here+xeValueSize:], uint32(len(value)))
		copy(b[offs:], value)
		clear(b[offs+len(value) : offs+newSize])
		xattrUpdateHash(s, value, isBlock)
		return nil
	}
	minOffs := len(b)
	last := s.first
	for !isLastEntry(b, last) {
		next := xattrNext(b, last)
		if next >= len(b) {
			return errno.EFSCORRUPTED
		}
		if binary.LittleEndian.Uint32(b[last+xeValueInum:]) == 0 && binary.LittleEndian.Uint32(b[last+xeValueSize:]) != 0 {
			if offs := int(binary.LittleEndian.Uint16(b[last+xeValueOffs:])); offs < minOffs {
				minOffs = offs
			}
		}
		last = next
	}
	if value != nil {
		free := minOffs - last - 4
		if !s.notFound {
			free += xattrLen(nameLen) + oldSize
		}
		if free < xattrLen(nameLen)+newSize {
			return errno.ENOSPC
		}
	}
	if !s.notFound && binary.LittleEndian.Uint32(b[here+xeValueSize:]) != 0 {
		// Remove the old value.
		offs := int(binary.LittleEndian.Uint16(b[here+xeValueOffs:]))
		copy(b[minOffs+oldSize:], b[minOffs:offs])
		clear(b[minOffs : minOffs+oldSize])
		minOffs += oldSize
		for e := s.first; !isLastEntry(b, e); e = xattrNext(b, e) {
			o := int(binary.LittleEndian.Uint16(b[e+xeValueOffs:]))
			if binary.LittleEndian.Uint32(b[e+xeValueInum:]) == 0 && binary.LittleEndian.Uint32(b[e+xeValueSize:]) != 0 && o < offs {
				binary.LittleEndian.PutUint16(b[e+xeValueOffs:], uint16(o+oldSize))
			}
		}
	}
	switch {
	case value == nil:
		// Remove the name.
		size := xattrLen(nameLen)
		last -= size
		copy(b[here:], b[here+size:last+size+4])
		clear(b[last : last+size])
	case s.notFound:
		// Insert the name.
		size := xattrLen(nameLen)
		rest := last - here + 4
		copy(b[here+size:], b[here:here+rest])
		clear(b[here : here+size])
		b[here+xeNameIndex] = index
		b[here+xeNameLen] = byte(nameLen)
		copy(b[here+xattrEntrySize:], name)
	default:
		// An update: the value's fields start again.
		binary.LittleEndian.PutUint32(b[here+xeValueInum:], 0)
		binary.LittleEndian.PutUint16(b[here+xeValueOffs:], 0)
		binary.LittleEndian.PutUint32(b[here+xeValueSize:], 0)
	}
	if value != nil {
		if len(value) > 0 {
			off := minOffs - newSize
			binary.LittleEndian.PutUint16(b[here+xeValueOffs:], uint16(off))
			copy(b[off:], value)
			clear(b[off+len(value) : off+newSize])
		}
		binary.LittleEndian.PutUint32(b[here+xeValueSize:], uint32(len(value)))
	}
	xattrUpdateHash(s, value, isBlock)
	return nil
}

// xattrUpdateHash is the update_hash tail of ext4_xattr_set_entry.
func xattrUpdateHash(s *xattrSearch, value []byte, isBlock bool) {
	b := s.buf
	if value != nil {
		var h uint32
		if isBlock {
			here := s.here
			nl := int(b[here+xeNameLen])
			vo := int(binary.LittleEndian.Uint16(b[here+xeValueOffs:]))
			h = XattrHashEntry(b[here+xattrEntrySize:here+xattrEntrySize+nl], b[vo:vo+xattrSize(len(value))])
		}
		binary.LittleEndian.PutUint32(b[s.here+xeHash:], h)
	}
	if isBlock {
		xattrRehash(b)
	}
}

// xattrRehash is ext4_xattr_rehash: h_hash from the entries' hashes (0
// when one of them is 0).
func xattrRehash(b []byte) {
	var h uint32
	for e := xattrBlockHeader; !isLastEntry(b, e); e = xattrNext(b, e) {
		eh := binary.LittleEndian.Uint32(b[e+xeHash:])
		if eh == 0 {
			h = 0
			break
		}
		h = h<<16 ^ h>>16 ^ eh
	}
	binary.LittleEndian.PutUint32(b[xhHash:], h)
}

// xattrState is the xattr part of struct ext4_inode_info: xattr_sem, the
// in-inode space (its ibody header and what follows it up to the inode's
// end; EXT4_STATE_XATTR is its magic) and the xattr block's bytes with
// i_file_acl, its number on an image (0 until it is written, on the
// growing device always). shared marks a block whose h_refcount was above
// one when it was read: it is cloned before it changes.
type xattrState struct {
	ibody   []byte
	block   []byte
	blockNr uint64
	shared  bool
	dirty   bool // the block changed since it was written
}

// ibodySize is the size of the inode's in-inode xattr space, with its
// header (0 without EXT4_INODE_HAS_XATTR_SPACE).
func (ei *Inode) ibodySize() int {
	isz, extra := 256, int(extraIsizeStd)
	if d := ei.SB.disk; d != nil {
		isz = d.inodeSize
		extra = 0
		if ei.disk != nil && isz > GoodOldInodeSize {
			extra = ei.disk.raw.ExtraIsize()
		}
	}
	if extra == 0 || GoodOldInodeSize+extra+4+xattrPad > isz {
		return 0
	}
	return isz - GoodOldInodeSize - extra
}

// hasIbodyXattrs is ext4_test_inode_state(EXT4_STATE_XATTR).
func (x *xattrState) hasIbodyXattrs() bool {
	return len(x.ibody) >= 4 && binary.LittleEndian.Uint32(x.ibody) == XattrMagic
}

// ibodySearch is ext4_xattr_ibody_find's search of the in-inode space.
func (ei *Inode) ibodySearch() *xattrSearch {
	x := &ei.xattr
	if x.ibody == nil {
		x.ibody = make([]byte, ei.ibodySize())
	} else if !x.hasIbodyXattrs() {
		// No EXT4_STATE_XATTR: whatever the space holds is not entries.
		clear(x.ibody)
	}
	return &xattrSearch{buf: x.ibody[4:], notFound: true}
}

// blockSearch is ext4_xattr_block_find's search of the block (nil base:
// no block).
func (ei *Inode) blockSearch() *xattrSearch {
	if ei.xattr.block == nil {
		return &xattrSearch{notFound: true}
	}
	return &xattrSearch{buf: ei.xattr.block, first: xattrBlockHeader, here: xattrBlockHeader, notFound: true}
}

// xattrGet is ext4_xattr_get: the in-inode attribute, else the block's.
// Errors: ERANGE (a name over 255 bytes, a short buffer), ENODATA.
func (ei *Inode) xattrGet(index uint8, name string, buf []byte) (int, error) {
	if len(name) > 255 {
		return 0, errno.ERANGE
	}
	ei.xattrSem.RLock()
	defer ei.xattrSem.RUnlock()
	x := &ei.xattr
	get := func(s *xattrSearch, sorted bool) (int, error) {
		if err := xattrFindEntry(s, index, name, sorted); err != nil {
			return 0, err
		}
		v := entryValue(s.buf, s.here)
		if len(buf) > 0 {
			if len(v) > len(buf) {
				return 0, errno.ERANGE
			}
			copy(buf, v)
		}
		return len(v), nil
	}
	if x.hasIbodyXattrs() {
		n, err := get(&xattrSearch{buf: x.ibody[4:]}, false)
		if err != errno.ENODATA {
			return n, err
		}
	}
	if x.block == nil {
		return 0, errno.ENODATA
	}
	return get(ei.blockSearch(), true)
}

// xattrValueSame is ext4_xattr_value_same.
func xattrValueSame(s *xattrSearch, value []byte) bool {
	return binary.LittleEndian.Uint32(s.buf[s.here+xeValueInum:]) == 0 && bytes.Equal(entryValue(s.buf, s.here), value)
}

// xattrSet is ext4_xattr_set_handle: value (nil removes) as (index,
// name), in the inode if it fits and in the block otherwise, removed from
// the other place; the block is then written (xattrBlockWrite) and the
// inode's ctime updated. The caller writes the inode (ext4_mark_iloc_dirty
// of the handle). Errors: ERANGE (name over 255 bytes), ENODATA
// (XATTR_REPLACE of a missing attribute), EEXIST (XATTR_CREATE of an
// existing one), ENOSPC (no room in the inode or the block, or no block),
// EFSCORRUPTED.
func (ei *Inode) xattrSet(t *kernel.Task, index uint8, name string, value []byte, flags int) error {
	if len(name) > 255 {
		return errno.ERANGE
	}
	ei.xattrSem.Lock()
	defer ei.xattrSem.Unlock()
	x := &ei.xattr
	is := &xattrSearch{notFound: true}
	hasSpace := ei.ibodySize() > 0
	if hasSpace {
		is = ei.ibodySearch()
		if x.hasIbodyXattrs() {
			if err := xattrFindEntry(is, index, name, false); err != nil && err != errno.ENODATA {
				return ei.xattrCorrupt(t, err)
			}
		}
	}
	bs := &xattrSearch{notFound: true}
	if is.notFound && x.block != nil {
		bs = ei.blockSearch()
		if err := xattrFindEntry(bs, index, name, true); err != nil && err != errno.ENODATA {
			return ei.xattrCorrupt(t, err)
		}
	}
	if is.notFound && bs.notFound {
		if flags&vfs.XATTR_REPLACE != 0 {
			return errno.ENODATA
		}
		if value == nil {
			return nil
		}
	} else if flags&vfs.XATTR_CREATE != 0 {
		return errno.EEXIST
	}
	ibodySet := func() error {
		if !hasSpace {
			return errno.ENOSPC
		}
		if err := xattrSetEntry(is, index, name, value, false); err != nil {
			return err
		}
		if !isLastEntry(is.buf, 0) {
			binary.LittleEndian.PutUint32(x.ibody, XattrMagic)
		} else {
			binary.LittleEndian.PutUint32(x.ibody, 0)
		}
		return nil
	}
	var err error
	if value == nil {
		if !is.notFound {
			err = ibodySet()
		} else if !bs.notFound {
			err = ei.xattrBlockSet(bs, index, name, nil)
		}
	} else {
		if !is.notFound && xattrValueSame(is, value) || !bs.notFound && xattrValueSame(bs, value) {
			return nil
		}
		err = ibodySet()
		if err == nil && !bs.notFound {
			err = ei.xattrBlockSet(bs, index, name, nil)
		} else if err == errno.ENOSPC {
			if x.block != nil && bs.buf == nil {
				bs = ei.blockSearch()
				if e := xattrFindEntry(bs, index, name, true); e != nil && e != errno.ENODATA {
					return ei.xattrCorrupt(t, e)
				}
			}
			err = ei.xattrBlockSet(bs, index, name, value)
			if err == nil && !is.notFound {
				value = nil
				err = ibodySet()
			}
		}
	}
	if err == errno.EFSCORRUPTED {
		return ei.xattrCorrupt(t, err)
	}
	if err != nil {
		return err
	}
	if err := ei.xattrBlockWrite(t); err != nil {
		return err
	}
	if sb := ei.SB; sb.disk != nil {
		sb.disk.setExtAttrFeature()
	}
	vfs.InodeSetCtimeCurrent(t, &ei.Inode)
	return nil
}

// xattrBlockSet is ext4_xattr_block_set: the block's entry changed (a new
// block made when there is none), in place, or in a copy when the block
// is shared.
func (ei *Inode) xattrBlockSet(bs *xattrSearch, index uint8, name string, value []byte) error {
	x := &ei.xattr
	if bs.buf == nil {
		b := make([]byte, ei.bsize())
		binary.LittleEndian.PutUint32(b[xhMagic:], XattrMagic)
		binary.LittleEndian.PutUint32(b[xhBlocks:], 1)
		binary.LittleEndian.PutUint32(b[xhRefcount:], 1)
		s := &xattrSearch{buf: b, first: xattrBlockHeader, here: xattrBlockHeader, notFound: true}
		if err := xattrSetEntry(s, index, name, value, true); err != nil {
			return err
		}
		x.block, x.blockNr, x.shared = b, 0, false
		x.dirty = true
		return nil
	}
	work := bs
	if x.shared {
		// clone_block: the shared block stays as it is.
		c := append([]byte(nil), x.block...)
		binary.LittleEndian.PutUint32(c[xhRefcount:], 1)
		work = &xattrSearch{buf: c, first: bs.first, here: bs.here, notFound: bs.notFound}
	}
	if err := xattrSetEntry(work, index, name, value, true); err != nil {
		return err
	}
	if x.shared {
		x.block = work.buf
	}
	x.dirty = true
	return nil
}

// xattrCorrupt logs ext4_xattr's "corrupted xattr entries" error on the
// inode and returns EFSCORRUPTED.
func (ei *Inode) xattrCorrupt(t *kernel.Task, err error) error {
	ei.errorInode(t, "ext4_xattr_set_entry", 0, "corrupted xattr entries")
	return errno.EFSCORRUPTED
}

// xattrBlockWrite writes a changed block on an image: an empty block is
// released (ext4_xattr_release_block: freed, or its h_refcount lowered
// when shared), a shared one replaced by a new block (the old one's
// count lowered), a new one allocated near the inode (ext4_new_meta_blocks:
// ENOSPC when none is free); the bytes go to the device with their
// checksum. On the growing device the block stays in memory.
func (ei *Inode) xattrBlockWrite(t *kernel.Task) error {
	x := &ei.xattr
	if !x.dirty {
		return nil
	}
	empty := isLastEntry(x.block, xattrBlockHeader)
	d := ei.SB.disk
	if d == nil || ei.disk == nil {
		if empty {
			x.block = nil
		}
		x.dirty = false
		return nil
	}
	if empty {
		if x.blockNr != 0 {
			d.releaseXattrBlock(x.blockNr)
		}
		x.block, x.blockNr, x.shared, x.dirty = nil, 0, false, false
		return nil
	}
	if x.blockNr == 0 || x.shared {
		a, ok := d.AllocMeta()
		if !ok {
			return errno.ENOSPC
		}
		if x.shared {
			d.releaseXattrBlock(x.blockNr)
		}
		x.blockNr, x.shared = uint64(a), false
		ei.SB.Dev.Unverify(a)
	}
	d.writeXattrBlock(x.blockNr, x.block)
	x.dirty = false
	return nil
}

// writeXattrBlock puts b into block blk with its checksum
// (ext4_xattr_block_csum_set).
func (d *diskFS) writeXattrBlock(blk uint64, b []byte) {
	dst := d.bread(blk)
	if dst == nil {
		return
	}
	if d.csum {
		binary.LittleEndian.PutUint32(b[xhChecksum:], xattrBlockCsum(d.seed, blk, b))
	}
	copy(dst, b)
}

// releaseXattrBlock is ext4_xattr_release_block: the last reference frees
// the block, another lowers h_refcount.
func (d *diskFS) releaseXattrBlock(blk uint64) {
	b := d.bread(blk)
	if b == nil {
		return
	}
	ref := binary.LittleEndian.Uint32(b[xhRefcount:])
	if ref <= 1 {
		d.Free(uint32(blk))
		return
	}
	c := append([]byte(nil), b...)
	binary.LittleEndian.PutUint32(c[xhRefcount:], ref-1)
	d.writeXattrBlock(blk, c)
}

// setExtAttrFeature is ext4_xattr_update_super_block: the ext_attr
// compat feature, set by the first attribute.
func (d *diskFS) setExtAttrFeature() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if f := binary.LittleEndian.Uint32(d.es[sFeatureCompat:]); f&CompatExtAttr == 0 {
		binary.LittleEndian.PutUint32(d.es[sFeatureCompat:], f|CompatExtAttr)
		_ = d.writeSuper()
	}
}

// xattrList is ext4_listxattr: the in-inode names, then the block's, each
// with its handler's prefix when the handler lists it for the task
// (ext4_xattr_list_entries). Errors: ERANGE.
func (ei *Inode) xattrList(t *kernel.Task, d *vfs.Dentry, buf []byte) (int, error) {
	ei.xattrSem.RLock()
	defer ei.xattrSem.RUnlock()
	x := &ei.xattr
	used := 0
	list := func(b []byte, first int) error {
		for e := first; !isLastEntry(b, e); e = xattrNext(b, e) {
			h := xattrHandlerOf(b[e+xeNameIndex])
			if !vfs.XattrHandlerCanList(t, h, d) {
				continue
			}
			nl := int(b[e+xeNameLen])
			if err := vfs.XattrListOne(buf, &used, h.XattrPrefix()+string(b[e+xattrEntrySize:e+xattrEntrySize+nl])); err != nil {
				return err
			}
		}
		return nil
	}
	if x.hasIbodyXattrs() {
		if err := list(x.ibody[4:], 0); err != nil {
			return 0, err
		}
	}
	if x.block != nil {
		if err := list(x.block, xattrBlockHeader); err != nil {
			return 0, err
		}
	}
	return used, nil
}
