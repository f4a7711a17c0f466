package ext4

import (
	"encoding/binary"
	"errors"
	"slices"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// inodeDisk is what an inode of an image remembers of its on-disk form:
// the bytes last read or written (so that an unchanged inode is not
// written again, and the fields the model does not keep, such as the
// timestamps and i_gid, survive), the extent tree's node blocks, a slow
// symlink's block.
type inodeDisk struct {
	raw RawInode
	buf RawInode // writeInode's scratch, swapped with raw on a write
	// unwritten are a file's preallocated extents (fallocate), which
	// read as zeroes: holes to the page cache, kept on write-back.
	unwritten []Extent
	exts      []Extent
	nodes     []uint64
	symBlock  uint64
	fresh     bool // never written yet (a new inode)
}

// errStale is ext4_iget's ESTALE for an inode with no links: the caller
// (ext4_lookup) logs "deleted inode referenced" and returns EFSCORRUPTED.
var errStale = errors.New("ESTALE")

// igetDisk is __ext4_iget for an inode not in the cache: the inode read
// from its table (__ext4_get_inode_loc), its checksum verified, the
// in-core inode made from it (ext4_inode_info: i_flags, i_generation,
// i_size, i_nlink, i_uid), its extent tree read into the block map of a
// file or directory (ext4_ext_check_inode), a symlink's target, the
// xattrs. The caller holds sb.igetMu. Errors: errStale, EFSCORRUPTED,
// EFSBADCRC (logged), ENOMEM.
func (sb *SuperBlock) igetDisk(t *kernel.Task, ino uint32) (*Inode, error) {
	d := sb.disk
	loc := d.inodeLoc(ino)
	if loc == nil {
		t.Printk("EXT4-fs error (device %s): __ext4_get_inode_loc: inode #%d: comm %s: invalid inode table block", sb.Name, ino, t.Comm)
		return nil, errno.EFSCORRUPTED
	}
	raw := RawInode(append([]byte(nil), loc...))
	fail := func(err error, format string, args ...any) (*Inode, error) {
		t.Printk("EXT4-fs error (device %s): __ext4_iget: inode #%d: comm %s: "+format, append([]any{sb.Name, ino, t.Comm}, args...)...)
		return nil, err
	}
	if len(raw) > GoodOldInodeSize {
		if ex := raw.ExtraIsize(); GoodOldInodeSize+ex > d.inodeSize || ex&3 != 0 {
			return fail(errno.EFSCORRUPTED, "iget: bad extra_isize %d (inode size %d)", ex, d.inodeSize)
		}
	}
	if d.csum && !raw.CsumVerify(inodeCsumSeed(d.seed, ino, raw.Generation())) {
		return fail(EFSBADCRC, "iget: checksum invalid")
	}
	if raw.LinksCount() == 0 && ino != BootLoaderIno {
		return nil, errStale
	}
	mode := uint32(raw.Mode())
	switch mode & vfs.S_IFMT {
	case vfs.S_IFREG, vfs.S_IFDIR, vfs.S_IFLNK, vfs.S_IFCHR, vfs.S_IFBLK, vfs.S_IFIFO, vfs.S_IFSOCK:
	default:
		return fail(errno.EFSCORRUPTED, "iget: bogus i_mode (%o)", mode)
	}
	flags := raw.Flags()
	if flags&InlineDataFL != 0 {
		return fail(errno.EFSCORRUPTED, "iget: inline data the model does not read")
	}
	size := raw.Size()
	if size < 0 || size > sb.getMaxbytes(flags) {
		return fail(errno.EFSCORRUPTED, "iget: bad i_size value: %d", size)
	}
	isLnk := mode&vfs.S_IFMT == vfs.S_IFLNK
	acl := raw.FileACL()
	aclBlocks := uint64(0)
	if acl != 0 {
		aclBlocks = d.sectors(1)
		if acl >= d.nblocks || acl < uint64(d.firstData) {
			return fail(errno.EFSCORRUPTED, "iget: bad extended attribute block %d", acl)
		}
	}
	fast := isLnk && raw.Blocks()-aclBlocks == 0 && flags&ExtentsFL == 0
	var exts []Extent
	var nodes []uint64
	mapped := mode&vfs.S_IFMT == vfs.S_IFREG || mode&vfs.S_IFMT == vfs.S_IFDIR || (isLnk && !fast)
	if mapped {
		if flags&ExtentsFL == 0 {
			var err error
			exts, nodes, err = readIndirect(raw.IBlock(), d.bread, d.bs, d.nblocks, size)
			if err != nil {
				t.Printk("EXT4-fs error (device %s): ext4_ind_map_blocks: inode #%d: comm %s: %s", sb.Name, ino, t.Comm, err)
				return nil, errno.EFSCORRUPTED
			}
		} else {
			r := &extReader{bread: d.bread, blocksize: d.bs, nblocks: d.nblocks, csum: d.csum,
				seed: inodeCsumSeed(d.seed, ino, raw.Generation())}
			var err error
			exts, err = r.readExtents(raw.IBlock())
			if err != nil {
				var ee *extentError
				errors.As(err, &ee)
				t.Printk("EXT4-fs error (device %s): ext4_ext_check_inode: inode #%d: comm %s: %s", sb.Name, ino, t.Comm, err)
				if ee != nil && ee.bad {
					return nil, EFSBADCRC
				}
				return nil, errno.EFSCORRUPTED
			}
			nodes = r.nodes
		}
	}
	// The xattrs are checked as ext4_xattr_ibody_get and
	// ext4_xattr_block_get check them (check_xattrs) and kept as bytes.
	if _, err := ibodyXattrs(raw); err != nil {
		return fail(errno.EFSCORRUPTED, "%s", err)
	}
	var xblock []byte
	if acl != 0 {
		b := d.bread(acl)
		if _, err := blockXattrs(b, acl, d.csum, d.seed); err != nil {
			t.Printk("EXT4-fs error (device %s): ext4_xattr_block_get: inode #%d: comm %s: %s", sb.Name, ino, t.Comm, err)
			return nil, errno.EFSCORRUPTED
		}
		xblock = append([]byte(nil), b...)
	}
	ei, err := sb.allocInode(t, ino, mode)
	if err != nil {
		return nil, err
	}
	ei.Generation = raw.Generation()
	ei.Flags = flags
	ei.SetInodeFlags()
	ei.SetNlink(uint32(raw.LinksCount()))
	ei.SetOwner(raw.UID())
	dk := &inodeDisk{raw: raw, exts: exts, nodes: nodes}
	if d.meta != nil {
		// The tree's nodes, the xattr block, a directory's or slow
		// symlink's blocks are metadata: their changes are journalled.
		d.mu.Lock()
		for _, n := range nodes {
			d.setMeta(n)
		}
		if acl != 0 {
			d.setMeta(acl)
		}
		if m := mode & vfs.S_IFMT; m == vfs.S_IFDIR || m == vfs.S_IFLNK {
			for _, e := range exts {
				for k := uint64(0); k < uint64(e.Len); k++ {
					d.setMeta(e.Pblk + k)
				}
			}
		}
		d.mu.Unlock()
	}
	if mode&vfs.S_IFMT == vfs.S_IFREG {
		for _, e := range exts {
			if e.Unwritten {
				dk.unwritten = append(dk.unwritten, e)
			}
		}
	}
	ei.disk = dk
	if n := ei.ibodySize(); n > 0 {
		if r := raw[len(raw)-n:]; binary.LittleEndian.Uint32(r) == XattrMagic {
			ei.xattr.ibody = append([]byte(nil), r...)
		}
	}
	if xblock != nil {
		ei.xattr.block, ei.xattr.blockNr = xblock, acl
		ei.xattr.shared = binary.LittleEndian.Uint32(xblock[xhRefcount:]) > 1
	}
	bs := uint64(d.bs)
	switch mode & vfs.S_IFMT {
	case vfs.S_IFDIR:
		n := uint64(size) / bs
		if n > d.nblocks {
			discardDisk(t, ei)
			return fail(errno.EFSCORRUPTED, "iget: directory too large (%d)", size)
		}
		ei.blocks = make([]uint32, n)
		for _, e := range exts {
			for k := uint32(0); k < e.Len; k++ {
				if l := uint64(e.Lblk) + uint64(k); l < n && !e.Unwritten {
					ei.blocks[l] = uint32(e.Pblk + uint64(k))
				}
			}
		}
		ei.SetSize(size)
	case vfs.S_IFREG:
		subpage := d.bs < vfs.PageSize
		if subpage {
			ei.fblocks = map[uint32]uint32{}
		}
		for _, e := range exts {
			if e.Unwritten {
				continue // reads as zeroes: a hole to the model
			}
			for k := uint32(0); k < e.Len; k++ {
				if subpage {
					ei.fblocks[e.Lblk+k] = uint32(e.Pblk + uint64(k))
				} else {
					ei.data.Set(uint64(e.Lblk)+uint64(k), uint32(e.Pblk+uint64(k)))
				}
			}
		}
		ei.SetSize(size)
	case vfs.S_IFLNK:
		var src []byte
		if fast {
			if size == 0 || size >= iBlockLen {
				discardDisk(t, ei)
				return fail(errno.EFSCORRUPTED, "inode is fast symlink with bad size/target")
			}
			src = raw.IBlock()[:size]
		} else {
			if len(exts) == 0 || exts[0].Lblk != 0 || size == 0 || size >= int64(d.bs) {
				discardDisk(t, ei)
				return fail(errno.EFSCORRUPTED, "iget: bad symlink (size %d)", size)
			}
			dk.symBlock = exts[0].Pblk
			src = d.bread(exts[0].Pblk)[:size]
		}
		if ei.IsEncrypted() {
			ei.target = append(append([]byte(nil), src...), 0)
		} else {
			if slices.Contains(src, 0) {
				discardDisk(t, ei)
				return fail(errno.EFSCORRUPTED, "inode is fast symlink with bad size/target")
			}
			ei.target = append(append([]byte(nil), src...), 0)
			ei.SetLink(string(src))
		}
		ei.SetSize(size)
	case vfs.S_IFCHR, vfs.S_IFBLK, vfs.S_IFIFO, vfs.S_IFSOCK:
		vfs.InitSpecialInode(t, &ei.Inode, mode, deviceNumber(raw.IBlock()))
		ei.SetSize(size)
	default:
		ei.SetSize(size)
	}
	return ei, nil
}

// discardDisk drops an inode igetDisk made but cannot return: out of the
// cache, its number left as the bitmap has it.
func discardDisk(t *kernel.Task, ei *Inode) {
	ei.SB.mu.Lock()
	delete(ei.SB.inodes, ei.ino())
	ei.SB.mu.Unlock()
	ei.disk = nil
	vfs.ClearInode(&ei.Inode)
	inodeInfoCache.Free(&t.Ctx)
}

// currentExtents is the extent list of the inode's block map now.
func (ei *Inode) currentExtents() []Extent {
	switch ei.Mode() & vfs.S_IFMT {
	case vfs.S_IFDIR:
		var lblks []uint32
		for l, p := range ei.blocks {
			if p != 0 && uint32(l) < ei.nblocks() {
				lblks = append(lblks, uint32(l))
			}
		}
		return extentsFromMap(lblks, func(l uint32) uint64 { return uint64(ei.blocks[l]) })
	case vfs.S_IFREG:
		ei.Data.Lock()
		defer ei.Data.Unlock()
		d := ei.SB.disk
		if d != nil && d.bs < vfs.PageSize {
			return ei.mergeUnwritten(ei.fblockExtents(d), func(l uint32) bool { _, ok := ei.fblocks[l]; return ok })
		}
		idx := ei.data.Indexes()
		lblks := make([]uint32, len(idx))
		for i, l := range idx {
			lblks[i] = uint32(l)
		}
		return ei.mergeUnwritten(extentsFromMap(lblks, func(l uint32) uint64 {
			a, _ := ei.data.Addr(uint64(l))
			return uint64(a)
		}), func(l uint32) bool { _, ok := ei.data.Addr(uint64(l)); return ok })
	}
	return nil
}

// mergeUnwritten adds the image's unwritten (preallocated) extents to the
// written ones: an unwritten block that has since been written (the page
// cache gave it a new block) is freed, the rest stay unwritten, past
// i_size too (EXT4_EOFBLOCKS: e2fsck accepts unwritten blocks there).
func (ei *Inode) mergeUnwritten(written []Extent, mapped func(uint32) bool) []Extent {
	dk := ei.disk
	if dk == nil || len(dk.unwritten) == 0 {
		return written
	}
	var keep []Extent
	for _, u := range dk.unwritten {
		for k := uint32(0); k < u.Len; k++ {
			l, p := u.Lblk+k, u.Pblk+uint64(k)
			if mapped(l) {
				ei.SB.disk.Free(uint32(p))
				continue
			}
			if n := len(keep); n > 0 && keep[n-1].Lblk+keep[n-1].Len == l && keep[n-1].Pblk+uint64(keep[n-1].Len) == p && keep[n-1].Len < ExtInitMaxLen {
				keep[n-1].Len++
				continue
			}
			keep = append(keep, Extent{Lblk: l, Len: 1, Pblk: p, Unwritten: true})
		}
	}
	dk.unwritten = keep
	out := append(written[:len(written):len(written)], keep...)
	slices.SortFunc(out, func(a, b Extent) int { return int(int64(a.Lblk) - int64(b.Lblk)) })
	return out
}

func extentsEqual(a, b []Extent) bool { return slices.Equal(a, b) }

// writeInode is ext4_mark_inode_dirty -> ext4_do_update_inode for an
// inode of an image: the in-core state copied into the on-disk inode
// (i_mode, i_uid, i_size, i_links_count, i_flags, i_generation, the extent
// tree or a fast symlink's target, i_blocks, the in-inode xattrs), its
// checksum, and the bytes written into the inode table when they changed.
// A linked inode that has lost its blocks' bookkeeping is not possible
// here: the block map is the truth. Errors: ENOSPC (no block for the
// extent tree or a slow symlink, or xattrs that do not fit the inode).
func (sb *SuperBlock) writeInode(t *kernel.Task, ei *Inode) error {
	d := sb.disk
	if d == nil || ei.disk == nil || d.readOnly {
		return nil
	}
	sb.wmu.Lock()
	defer sb.wmu.Unlock()
	dk := ei.disk
	// The new bytes are built in the inode's second buffer (the kernel
	// writes into the inode table's buffer head; the model compares
	// first, so that an unchanged inode is not written).
	if len(dk.buf) != len(dk.raw) {
		dk.buf = make(RawInode, len(dk.raw))
	}
	raw := dk.buf
	copy(raw, dk.raw)
	ino := ei.ino()
	mode := ei.Mode()
	raw.put16(iMode, uint16(mode))
	uid := ei.OwnerUID()
	raw.put16(iUID, uint16(uid))
	raw.put16(iUIDHigh, uint16(uid>>16))
	raw.SetSize(ei.Size())
	nl := ei.Nlink()
	if ei.IsDir() && nl > LinkMax {
		nl = 1 // dir_nlink: ext4_inc_count's overflow to 1
	}
	raw.put16(iLinksCount, uint16(nl))
	raw.put32(iGeneration, ei.Generation)
	flags := ei.Flags
	seed := inodeCsumSeed(d.seed, ino, ei.Generation)
	// i_file_acl is the xattr block's number (xattr_set.go); i_blocks
	// counts it.
	oldACL, newACL := raw.FileACL(), ei.xattr.blockNr
	raw.put32(iFileACLLo, uint32(newACL))
	raw.put16(iFileACLHigh, uint16(newACL>>32))
	aclBlocks := uint64(0)
	if newACL != 0 {
		aclBlocks = 1
	}
	blocksSet := false
	switch mode & vfs.S_IFMT {
	case vfs.S_IFREG, vfs.S_IFDIR:
		exts := ei.currentExtents()
		if dk.fresh || !extentsEqual(exts, dk.exts) {
			if err := sb.layoutExtents(raw, dk, exts, seed); err != nil {
				return err
			}
			data := uint64(0)
			for _, e := range exts {
				data += uint64(e.Len)
			}
			raw.SetBlocks(d.sectors(data + uint64(len(dk.nodes)) + aclBlocks))
			blocksSet = true
			flags |= ExtentsFL
			flags &^= HugeFileFL
		}
	case vfs.S_IFLNK:
		ei.mu.Lock()
		target := ei.target
		ei.mu.Unlock()
		if len(target) == 0 {
			break
		}
		n := len(target) - 1 // the stored bytes, without the NUL
		if n < iBlockLen && dk.symBlock == 0 {
			if dk.fresh {
				clear(raw.IBlock())
				copy(raw.IBlock(), target[:n])
				raw.SetBlocks(d.sectors(aclBlocks))
				blocksSet = true
				flags &^= ExtentsFL
			}
			break
		}
		if dk.symBlock == 0 {
			a, ok := d.AllocMeta()
			if !ok {
				return errno.ENOSPC
			}
			dk.symBlock = uint64(a)
			b := d.bread(dk.symBlock)
			clear(b)
			copy(b, target)
			exts := []Extent{{Lblk: 0, Len: 1, Pblk: dk.symBlock}}
			if err := sb.layoutExtents(raw, dk, exts, seed); err != nil {
				return err
			}
			raw.SetBlocks(d.sectors(1 + aclBlocks))
			blocksSet = true
			flags |= ExtentsFL
		}
	default:
		if dk.fresh {
			clear(raw.IBlock())
		}
		if m := mode & vfs.S_IFMT; m == vfs.S_IFCHR || m == vfs.S_IFBLK {
			putDeviceNumber(raw.IBlock(), ei.Rdev())
		}
	}
	raw.put32(iFlags, flags)
	ei.Flags = flags
	if !blocksSet && (oldACL != 0) != (newACL != 0) {
		if newACL != 0 {
			raw.SetBlocks(raw.Blocks() + d.sectors(1))
		} else {
			raw.SetBlocks(raw.Blocks() - d.sectors(1))
		}
	}
	// The in-inode xattrs: the space after i_extra_isize as the xattr
	// code left it (the encryption context among the entries).
	if x := ei.xattr.ibody; x != nil && len(x) <= len(raw) {
		copy(raw[len(raw)-len(x):], x)
	}
	if d.csum {
		raw.CsumSet(seed)
	}
	if !dk.fresh && string(raw) == string(dk.raw) {
		return nil
	}
	loc := d.inodeLoc(ino)
	if loc == nil {
		return errno.EFSCORRUPTED
	}
	copy(loc, raw)
	dk.raw, dk.buf = raw, dk.raw
	dk.fresh = false
	return nil
}

// layoutExtents writes exts as the inode's tree, reusing its node blocks
// and allocating or freeing the difference.
func (sb *SuperBlock) layoutExtents(raw RawInode, dk *inodeDisk, exts []Extent, seed uint32) error {
	d := sb.disk
	need, _ := extNodesNeeded(len(exts), extSpaceBlock(d.bs))
	for len(dk.nodes) > need {
		d.Free(uint32(dk.nodes[len(dk.nodes)-1]))
		dk.nodes = dk.nodes[:len(dk.nodes)-1]
	}
	for len(dk.nodes) < need {
		a, ok := d.AllocMeta()
		if !ok {
			return errno.ENOSPC
		}
		dk.nodes = append(dk.nodes, uint64(a))
	}
	writeExtents(raw.IBlock(), exts, dk.nodes, d.bread, d.bs, d.csum, seed)
	dk.exts = exts
	return nil
}

// newDiskInode gives a new inode of an image its on-disk template
// (__ext4_new_inode): i_extra_isize 32, the timestamps, an empty extent
// tree for a file or directory (ext4_ext_tree_init).
func (sb *SuperBlock) newDiskInode(ei *Inode) {
	d := sb.disk
	raw := make(RawInode, d.inodeSize)
	for _, off := range []int{iAtime, iCtime, iMtime} {
		raw.put32(off, d.now)
	}
	if d.inodeSize > GoodOldInodeSize {
		raw.put16(iExtraIsize, extraIsizeStd)
		raw.put32(iCrtime, d.now)
	}
	ei.disk = &inodeDisk{raw: raw, fresh: true}
	switch ei.Mode() & vfs.S_IFMT {
	case vfs.S_IFREG, vfs.S_IFDIR, vfs.S_IFLNK:
		ei.Flags |= ExtentsFL
	}
}

// evictDisk is the on-disk part of ext4_evict_inode for an inode with no
// links: its extent tree and slow symlink blocks freed (the data and
// directory blocks went through the device's allocator already), i_dtime
// set, i_size and i_blocks zeroed, the inode written, then its number
// freed in the bitmap (ext4_free_inode). A linked inode is written back.
func (sb *SuperBlock) evictDisk(t *kernel.Task, ei *Inode, linked bool) {
	d := sb.disk
	if d == nil || ei.disk == nil || d.readOnly {
		return
	}
	if linked {
		// Written back as the inode cache lets it go (umount evicts every
		// unused inode), with the superblock's counters.
		_ = sb.writeInode(t, ei)
		d.mu.Lock()
		_ = d.writeSuper()
		d.mu.Unlock()
		return
	}
	dk := ei.disk
	ei.truncateFblocks(d, 0)
	for _, u := range dk.unwritten {
		for k := uint32(0); k < u.Len; k++ {
			d.Free(uint32(u.Pblk + uint64(k)))
		}
	}
	dk.unwritten = nil
	for _, n := range dk.nodes {
		d.Free(uint32(n))
	}
	dk.nodes = nil
	if dk.symBlock != 0 {
		d.Free(uint32(dk.symBlock))
		dk.symBlock = 0
	}
	if acl := ei.xattr.blockNr; acl != 0 {
		d.releaseXattrBlock(acl)
		ei.xattr.blockNr = 0
	}
	if !dk.fresh {
		raw := RawInode(append([]byte(nil), dk.raw...))
		raw.put16(iLinksCount, 0)
		raw.put32(iDtime, max(d.now, 1))
		raw.SetSize(0)
		raw.SetBlocks(0)
		raw.put32(iFileACLLo, 0)
		raw.put16(iFileACLHigh, 0)
		if raw.Flags()&ExtentsFL != 0 {
			clear(raw.IBlock())
			putExtHeader(raw.IBlock(), extHeader{ExtMagic, 0, uint16(extSpaceRoot()), 0})
		}
		if d.csum {
			raw.CsumSet(inodeCsumSeed(d.seed, ei.ino(), ei.Generation))
		}
		if loc := d.inodeLoc(ei.ino()); loc != nil {
			copy(loc, raw)
		}
	}
	d.freeInodeNum(ei.ino(), ei.IsDir())
	ei.disk = nil
	d.mu.Lock()
	_ = d.writeSuper()
	d.mu.Unlock()
}

// SyncFs is ext4_sync_fs (->sync_fs) for an image: every cached inode
// written back (ext4_write_inode) and the superblock with its counters and
// checksum (ext4_commit_super); vfs.SyncFilesystem then flushes the device
// to its host file. sync(2), syncfs(2) and umount end here; the growing
// device has nothing to write. Errors: the first inode's.
func (sb *SuperBlock) SyncFs(t *kernel.Task) error {
	if sb.disk == nil || sb.disk.readOnly {
		return nil
	}
	sb.mu.Lock()
	inodes := make([]*Inode, 0, len(sb.inodes))
	for _, ei := range sb.inodes {
		inodes = append(inodes, ei)
	}
	sb.mu.Unlock()
	slices.SortFunc(inodes, func(a, b *Inode) int { return int(a.ino()) - int(b.ino()) })
	var first error
	for _, ei := range inodes {
		if ei.Nlink() == 0 {
			continue
		}
		if err := sb.writeInode(t, ei); err != nil && first == nil {
			first = err
		}
	}
	sb.disk.mu.Lock()
	err := sb.disk.writeSuper()
	sb.disk.mu.Unlock()
	if err != nil && first == nil {
		first = err
	}
	// The running transaction committed (jbd2_journal_start_commit and
	// jbd2_log_wait_commit).
	sb.disk.commit()
	return first
}

// SyncFS is sync_filesystem of the ext4 mounted as vsb (nil error for
// another filesystem): ->sync_fs, then the device written back.
func SyncFS(t *kernel.Task, vsb *vfs.SuperBlock) error {
	if EXT4_SB(vsb) == nil {
		return nil
	}
	return vfs.SyncFilesystem(t, vsb)
}

// dirtyInodes writes the inodes an operation changed through to the
// inode table at once (ext4_mark_inode_dirty in the operation's
// handle): a directory operation ends with its directories and inodes on
// disk.
func (sb *SuperBlock) dirtyInodes(t *kernel.Task, inodes ...*vfs.Inode) {
	if sb.disk == nil {
		return
	}
	for _, i := range inodes {
		if i != nil && i.Nlink() > 0 {
			_ = sb.writeInode(t, EXT4_I(i))
		}
	}
	sb.disk.mu.Lock()
	_ = sb.disk.writeSuper()
	sb.disk.mu.Unlock()
}
