package f2fs

import (
	"bytes"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// Reading inodes from an image (fs/f2fs/inode.c f2fs_iget, do_read_inode,
// sanity_check_inode; fs/f2fs/node.c get_node_path; fs/f2fs/xattr.c
// read_all_xattrs; fs/f2fs/inline.c f2fs_read_inline_data).

// sanityCheckInode is sanity_check_inode for the fields the model reads:
// the extra attribute size, the inline xattr size, inline data and
// inline dentries on the right file types. It returns false with the
// kernel's warning.
func (sbi *SuperBlock) sanityCheckInode(t *kernel.Task, ino uint32, n Node, xaddrs int) bool {
	feat := sbi.img.raw.Feature
	mode := uint32(n.Mode())
	if n.Inline()&ExtraAttr != 0 {
		if feat&FeatExtraAttr == 0 {
			sbi.warn(t, "inode (ino=%x) is with extra_attr, but extra_attr feature is off", ino)
			return false
		}
		if e := n.ExtraIsize(); e > totalExtraAttrSize || e < minExtraAttrSize || e%4 != 0 {
			sbi.warn(t, "inode (ino=%x) has corrupted i_extra_isize: %d, max: %d", ino, e, totalExtraAttrSize)
			return false
		}
	}
	if feat&FeatFlexibleInlineXattr != 0 && n.Inline()&InlineXattr != 0 && (xaddrs == 0 || xaddrs > maxInlineXattrSize) {
		sbi.warn(t, "inode (ino=%x) has corrupted i_inline_xattr_size: %d, max: %d", ino, xaddrs, maxInlineXattrSize)
		return false
	}
	if xaddrs > DefAddrsPerInode-n.ExtraIsize()/4-defInlineReservedSize-minInlineDentrySize/4 {
		sbi.warn(t, "inode (ino=%x) has corrupted i_inline_xattr_size: %d, max: %d", ino, xaddrs, maxInlineXattrSize)
		return false
	}
	if n.Inline()&InlineData != 0 && mode&SIfmt != SIfreg && mode&SIfmt != SIflnk {
		sbi.warn(t, "inode (ino=%x, mode=%d) should not have inline_data, run fsck to fix", ino, mode)
		return false
	}
	if n.Inline()&InlineDentry != 0 && mode&SIfmt != SIfdir {
		sbi.warn(t, "inode (ino=%x, mode=%d) should not have inline_dentry, run fsck to fix", ino, mode)
		return false
	}
	return true
}

// addrsPerInode is ADDRS_PER_INODE: i_addr words left for data after the
// extra attributes and the inline xattrs.
func addrsPerInode(extraIsize, xaddrs int) int {
	return DefAddrsPerInode - extraIsize/4 - xaddrs
}

// maxInlineData is MAX_INLINE_DATA(inode).
func maxInlineData(extraIsize, xaddrs int) int {
	return 4 * (DefAddrsPerInode - extraIsize/4 - xaddrs - defInlineReservedSize)
}

// inlineDataOff is the offset of inline_data_addr in the inode block.
func inlineDataOff(extraIsize int) int { return inodeIAddrOff + 4*(extraIsize/4+defInlineReservedSize) }

// readInode is f2fs_iget of an inode not in memory: its node block
// (read_node_folio with the checksum and footer checks), do_read_inode's
// fields and sanity_check_inode, the xattrs (the encryption context
// among them), and the page index to block map of its i_addr and its
// direct and indirect nodes (get_node_path's layout). Errors: ENOENT (a
// free nid), EFSCORRUPTED, EFSBADCRC, EIO, ENOMEM.
func (sbi *SuperBlock) readInode(t *kernel.Task, ino uint32) (*Inode, error) {
	raw, err := sbi.readNode(t, ino, nodeTypeInode)
	if err != nil {
		return nil, err
	}
	n := Node(bytes.Clone(raw))
	mode := uint32(n.Mode())
	switch mode & SIfmt {
	case SIfreg, SIfdir, SIflnk, SIfchr, SIfblk, SIfifo, SIfsock:
	default:
		sbi.warn(t, "f2fs_iget: inode (ino=%x) has an unknown file type, mode=%o", ino, mode)
		return nil, errno.EIO
	}
	feat := sbi.img.raw.Feature
	extra := n.ExtraIsize()
	xaddrs := inlineXattrAddrs(feat, n)
	if !sbi.sanityCheckInode(t, ino, n, xaddrs) {
		return nil, errno.EFSCORRUPTED
	}
	fi, err := sbi.allocInode(t, ino, mode)
	if err != nil {
		return nil, err
	}
	fi.onDisk = true
	fi.SetOwner(n.UID())
	fi.SetNlink(n.Links())
	size := n.Size()
	if size > uint64(maxFileSize) {
		size = uint64(maxFileSize)
	}
	fi.SetSize(int64(size))
	fi.IFlags = n.Flags()
	fi.setInodeFlags()
	if n.Advise()&FadviseEncryptBit != 0 {
		fi.SetFlags(vfs.S_ENCRYPTED)
	}
	fi.extraIsize, fi.xattrAddrs = extra, xaddrs
	fi.Node = n
	fail := func(err error) (*Inode, error) {
		sbi.forgetInode(t, fi)
		return nil, err
	}
	if err := sbi.readXattrs(t, fi, n, xaddrs); err != nil {
		return fail(err)
	}
	npages := (size + BlockSize - 1) / BlockSize
	switch mode & SIfmt {
	case SIfdir:
		fi.Inline = n.Inline()&InlineDentry != 0
		fi.Geo = NewInlineGeometry(extra, xaddrs)
		fi.CurrentDepth = n.CurrentDepth()
		fi.DirLevel = uint32(n.DirLevel())
		if !fi.Inline {
			if err := sbi.mapData(t, fi, n, npages); err != nil {
				return fail(err)
			}
		}
	case SIfreg, SIflnk:
		fi.inlineData = n.Inline()&InlineData != 0
		if fi.inlineData {
			if size > uint64(maxInlineData(extra, xaddrs)) {
				sbi.warn(t, "inode (ino=%x) has inline data of %d bytes, more than %d", ino, size, maxInlineData(extra, xaddrs))
				return fail(errno.EFSCORRUPTED)
			}
		} else if err := sbi.mapData(t, fi, n, npages); err != nil {
			return fail(err)
		}
		if mode&SIfmt == SIflnk {
			if err := sbi.readSymlink(t, fi, size); err != nil {
				return fail(err)
			}
		}
	case SIfchr, SIfblk, SIfifo, SIfsock:
		vfs.InitSpecialInode(t, &fi.Inode, mode, inodeRdev(n, extra/4))
	}
	return fi, nil
}

// forgetInode drops a half-read inode: it leaves the inode table without
// freeing its nid (the inode stays on disk).
func (sbi *SuperBlock) forgetInode(t *kernel.Task, fi *Inode) {
	sbi.mu.Lock()
	delete(sbi.inodes, fi.nid())
	sbi.mu.Unlock()
	inodeInfoCache.Free(&t.Ctx)
	vfs.ClearInode(&fi.Inode)
}

// readXattrs is read_all_xattrs for the inode's xattrs: the inline xattr
// area (the last xaddrs words of i_addr), then the xattr node's block,
// checked entry by entry. Errors: those of readNode, EFSCORRUPTED for a
// corrupt entry (with __find_xattr's "inode (%lu) has corrupted xattr").
func (sbi *SuperBlock) readXattrs(t *kernel.Task, fi *Inode, n Node, xaddrs int) error {
	var inline, node []byte
	if xaddrs > 0 {
		off := inodeIAddrOff + 4*(DefAddrsPerInode-xaddrs)
		inline = n[off : off+4*xaddrs]
	}
	if xnid := n.XattrNid(); xnid != 0 {
		if xnid < reservedNodeNum || xnid >= sbi.img.maxNid {
			sbi.warn(t, "f2fs_check_nid_range: out-of-range nid=%x, run fsck to fix.", xnid)
			return errno.EFSCORRUPTED
		}
		xn, err := sbi.readNode(t, xnid, nodeTypeXattr)
		if err != nil {
			return err
		}
		node = xn[:validXattrBlockSize]
	}
	if _, err := parseXattrs(append(append([]byte(nil), inline...), node...)); err != nil {
		sbi.warn(t, "inode (%d) has corrupted xattr", fi.Ino())
		return err
	}
	fi.loadXattrs(inline, node)
	fi.loadAdvise(n)
	return nil
}

// mapData fills the inode's block map from i_addr and its direct,
// indirect and double indirect nodes (i_nid[0..4]), for the first npages
// page indexes: get_node_path's offsets, NULL_ADDR and NEW_ADDR as holes.
// A node reached twice, a node of another inode, or a block outside the
// main area is corruption (EFSCORRUPTED, as f2fs_is_valid_blkaddr's
// "access invalid blkaddr"); the walk thus ends on any image.
func (sbi *SuperBlock) mapData(t *kernel.Task, fi *Inode, n Node, npages uint64) error {
	im := sbi.img
	ino := fi.nid()
	base := fi.extraIsize / 4
	direct := uint64(addrsPerInode(fi.extraIsize, fi.xattrAddrs))
	visited := map[uint32]bool{}
	add := func(idx uint64, addr uint32) error {
		if idx >= npages || addr == NullAddr || addr == NewAddr {
			return nil
		}
		if !im.isValidBlkaddr(addr) {
			sbi.warn(t, "access invalid blkaddr:%d", addr)
			return errno.EFSCORRUPTED
		}
		fi.data.Map(idx, addr)
		return nil
	}
	for i := uint64(0); i < direct && i < npages; i++ {
		if err := add(i, n.Addr(true, base+int(i))); err != nil {
			return err
		}
	}
	span := [3]uint64{AddrsPerBlock, AddrsPerBlock * NidsPerBlock, AddrsPerBlock * NidsPerBlock * NidsPerBlock}
	var walk func(nid uint32, depth int, start uint64) error
	walk = func(nid uint32, depth int, start uint64) error {
		if nid == 0 || start >= npages {
			return nil
		}
		if nid < reservedNodeNum || nid >= im.maxNid || visited[nid] {
			sbi.warn(t, "f2fs_check_nid_range: out-of-range nid=%x, run fsck to fix.", nid)
			return errno.EFSCORRUPTED
		}
		visited[nid] = true
		dn, err := sbi.readNode(t, nid, nodeTypeNonInode)
		if err != nil {
			return err
		}
		if dn.InoOfNode() != ino {
			sbi.warn(t, "inconsistent node block, node_type:%d, nid:%d, node_footer[nid:%d,ino:%d,ofs:%d,cpver:%d,blkaddr:%d]",
				nodeTypeNonInode, nid, dn.NidOfNode(), dn.InoOfNode(), dn.OfsOfNode(), dn.Footer().CpVer, dn.Footer().NextBlkaddr)
			return errno.EFSCORRUPTED
		}
		if depth == 0 {
			for i := 0; i < AddrsPerBlock; i++ {
				if err := add(start+uint64(i), dn.Addr(false, i)); err != nil {
					return err
				}
			}
			return nil
		}
		// Copy the nids: the walk below reads other nodes.
		nids := make([]uint32, NidsPerBlock)
		for i := range nids {
			nids[i] = dn.Nid(i)
		}
		for i, c := range nids {
			if err := walk(c, depth-1, start+uint64(i)*span[depth-1]); err != nil {
				return err
			}
		}
		return nil
	}
	start := direct
	for k, depth := range [DefNidsPerInode]int{0, 0, 1, 1, 2} {
		if err := walk(n.INid(k), depth, start); err != nil {
			return err
		}
		start += span[depth]
	}
	return nil
}

// inlineData returns the inode's inline data area (inline_data_addr, of
// MAX_INLINE_DATA bytes).
func (fi *Inode) inlineDataArea() []byte {
	if fi.Node == nil {
		// A new inline file: its inode block is made when first needed.
		fi.Node = make([]byte, BlockSize)
	}
	// A new inode's layout is f2fs_new_inode's (extraIsizeOr,
	// inlineXattrAddrs), as the image writer lays its inode block out:
	// MAX_INLINE_DATA is 3488 bytes with the default inline_xattr.
	extra := fi.extraIsizeOr(fi.SB)
	off := inlineDataOff(extra)
	return fi.Node[off : off+maxInlineData(extra, fi.inlineXattrAddrs())]
}

// readSymlink reads a symlink's target (page_get_link's page: the inline
// data or block 0): size bytes and the NUL after them, or struct
// fscrypt_symlink_data for an encrypted one. Errors: EFSCORRUPTED for a
// target that does not fit its block or has no data.
func (sbi *SuperBlock) readSymlink(t *kernel.Task, fi *Inode, size uint64) error {
	var src []byte
	if fi.inlineData {
		src = fi.inlineDataArea()
	} else {
		src = fi.data.GetBlock(0, false)
	}
	if src == nil || size == 0 || size >= uint64(len(src)) {
		sbi.warn(t, "inode (ino=%x) has a corrupted symlink of %d bytes", fi.Ino(), size)
		return errno.EFSCORRUPTED
	}
	fi.target = append(bytes.Clone(src[:size]), 0)
	if !fi.IsEncrypted() {
		fi.SetLink(string(src[:size]))
	}
	return nil
}

// inlineAops are f2fs_dblock_aops over the generic block paths, with
// f2fs_read_inline_data and f2fs_write_inline_data for a file whose data
// is inline (FI_INLINE_DATA): page 0 is the inline area, the rest of it
// zeroes. A write(2) that ends within MAX_INLINE_DATA keeps the data
// inline, one that reaches past it first moves the data to a block
// (fs/f2fs/data.c prepare_write_begin: f2fs_do_read_inline_data, else
// f2fs_convert_inline_page); truncation stays inline.
type inlineAops struct{ vfs.AddressSpaceOperations }

// ReadFolio implements vfs.AddressSpaceOperations.
func (a inlineAops) ReadFolio(t *kernel.Task, inode *vfs.Inode, index uint64, page []byte) error {
	fi := F2FS_I(inode)
	if fi.inlineData {
		clear(page)
		if index == 0 {
			copy(page, fi.inlineDataArea()[:min(int(inode.Size()), len(fi.inlineDataArea()))])
		}
		return nil
	}
	return a.AddressSpaceOperations.ReadFolio(t, inode, index, page)
}

// WriteBegin implements vfs.AddressSpaceOperations.
func (a inlineAops) WriteBegin(t *kernel.Task, inode *vfs.Inode, index uint64, off, n int, page []byte) error {
	if err := F2FS_I(inode).SB.checkWritable(); err != nil {
		return err
	}
	fi := F2FS_I(inode)
	if fi.inlineData && index == 0 && off+n <= len(fi.inlineDataArea()) {
		// pos + len <= MAX_INLINE_DATA(inode): the page is the inline
		// data, and writeback puts it back there.
		return a.ReadFolio(t, inode, index, page)
	}
	if err := convertInlineInode(t, fi); err != nil {
		return err
	}
	return a.AddressSpaceOperations.WriteBegin(t, inode, index, off, n, page)
}

// WritePage implements vfs.AddressSpaceOperations: the generic
// writeback, and ENOSPC (the page a hole again) when an image has no free
// block left for it.
func (a inlineAops) WritePage(t *kernel.Task, inode *vfs.Inode, index uint64, page []byte) error {
	fi := F2FS_I(inode)
	if err := fi.SB.checkWritable(); err != nil {
		return err
	}
	if fi.inlineData {
		// f2fs_write_inline_data: page 0 goes back to the inline area
		// (the page truncate_setsize zeroes past a new i_size).
		if index == 0 {
			copy(fi.inlineDataArea(), page)
		}
		return nil
	}
	if err := a.AddressSpaceOperations.WritePage(t, inode, index, page); err != nil {
		return err
	}
	if addr, ok := fi.data.Addr(index); ok && addr == 0 {
		fi.data.Punch(index)
		return errno.ENOSPC
	}
	return nil
}

// TruncateBlocks implements vfs.AddressSpaceOperations: an inline file
// truncated to 0 loses its inline data (f2fs_truncate_inline_inode).
func (a inlineAops) TruncateBlocks(t *kernel.Task, inode *vfs.Inode, from uint64) {
	if fi := F2FS_I(inode); fi.inlineData {
		if from == 0 {
			clear(fi.inlineDataArea())
		}
		return
	}
	a.AddressSpaceOperations.TruncateBlocks(t, inode, from)
}

// Bmap implements vfs.AddressSpaceOperations.
func (a inlineAops) Bmap(inode *vfs.Inode, index uint64) bool {
	if fi := F2FS_I(inode); fi.inlineData {
		return index == 0 && inode.Size() > 0
	}
	return a.AddressSpaceOperations.Bmap(inode, index)
}

// convertInlineInode is f2fs_convert_inline_inode: the inline data moves
// to a new block 0 and the inline area is cleared. Errors: ENOSPC.
func convertInlineInode(t *kernel.Task, fi *Inode) error {
	if !fi.inlineData {
		return nil
	}
	n := min(int(fi.Size()), len(fi.inlineDataArea()))
	b := fi.data.GetBlock(0, true)
	if b == nil {
		fi.data.Punch(0)
		return errno.ENOSPC
	}
	copy(b, fi.inlineDataArea()[:n])
	clear(fi.inlineDataArea())
	fi.inlineData = false
	return nil
}

// checkWritable is the read-only test of an image mount
// (f2fs_readonly, which mnt_want_write would give as EROFS for a read-only
// superblock): an image on a read-only device has no allocator. Mounts of
// the growing device are always writable.
func (sbi *SuperBlock) checkWritable() error {
	if sbi.img != nil && sbi.img.alloc == nil {
		return errno.EROFS
	}
	return nil
}
