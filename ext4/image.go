package ext4

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// A real ext4 image on a fixed-size device (vfs.NewBlockDeviceSize,
// vfs.OpenImage): the superblock at byte 1024, the group descriptors after
// it, the block and inode bitmaps and the inode tables where the
// descriptors say, every inode read from its table (ext4_iget) and written
// back to it (ext4_do_update_inode) with its checksum, files and
// directories mapped by their extent trees, blocks and inodes allocated
// from the bitmaps. The directory code above is the same as on the growing
// device; only where blocks and inodes come from changes.
//
// A read-write mount with a journal journals its metadata writes as jbd2
// does (jbd2.go) and sets needs_recovery while mounted; a journal that
// needs recovery is replayed at mount (journal.go).
//
// What the model leaves out: meta_bg, inline_data, bigalloc, mmp and
// ea_inode images are refused, block-mapped (non-extent) files are read
// but only written as extents, so an image without the extent feature
// (ext2, ext3) mounts read-only. 4 KiB blocks are the device's pages (the page cache maps them one
// to one through vfs.BlockMap); 1 KiB and 2 KiB blocks are slices of a
// page, which directories address one by one and file pages through
// image_subpage.go.

// diskFS is the on-disk state of a mounted image (the parts of struct
// ext4_sb_info that describe the disk: s_es, s_group_desc, the counters).
type diskFS struct {
	dev       *Device
	es        RawSuper
	bs        int
	groups    uint32
	descSize  int
	ipg, bpg  uint32
	inodeSize int
	csum      bool
	seed      uint32
	nblocks   uint64
	firstData uint32
	gdtBlock  uint64
	readOnly  bool
	now       uint32
	// bitmapMaxBytes is s_bitmap_maxbytes (ext4MaxBitmapSize): the
	// largest block-mapped file.
	bitmapMaxBytes int64

	// mu protects the bitmaps, the descriptors, the superblock's counters
	// and rover.
	mu    sync.Mutex
	rover uint64

	// jw is the journal's writer on a read-write mount with a journal
	// (jbd2.go), nil otherwise; meta marks the metadata blocks whose
	// changes it journals; logw receives every write submitted
	// (LogWrites).
	jw   *jwriter
	meta bitset
	logw func(BlockWrite)
	// mountState is s_mount_state: s_state when mounted read-write,
	// written back at umount.
	mountState uint16
	// resvClusters is s_resv_clusters (calculateResvClusters), set at
	// mount: Alloc leaves that many blocks free.
	resvClusters uint64
}

// gdtBlocks is the number of group descriptor blocks (ext4_bg_num_gdb
// of a group with a backup, without meta_bg): every group's descriptor.
func (d *diskFS) gdtBlocks() uint64 {
	return (uint64(d.groups)*uint64(d.descSize) + uint64(d.bs) - 1) / uint64(d.bs)
}

// itableBlocks is s_itb_per_group: the blocks of one group's inode table.
func (d *diskFS) itableBlocks() uint64 {
	return (uint64(d.ipg)*uint64(d.inodeSize) + uint64(d.bs) - 1) / uint64(d.bs)
}

// bread is sb_bread of filesystem block blk as a slice of the device's
// memory (a buffer head always up to date); nil past the filesystem.
func (d *diskFS) bread(blk uint64) []byte {
	if blk >= d.nblocks {
		return nil
	}
	off := blk * uint64(d.bs)
	page := d.dev.Block(uint32(off / vfs.PageSize))
	if page == nil {
		return nil
	}
	o := int(off % vfs.PageSize)
	return page[o : o+d.bs : o+d.bs]
}

// gd is ext4_get_group_desc: a view of group g's descriptor in the device.
func (d *diskFS) gd(g uint32) GroupDesc {
	off := uint64(g) * uint64(d.descSize)
	b := d.bread(d.gdtBlock + off/uint64(d.bs))
	if b == nil {
		return nil
	}
	o := int(off % uint64(d.bs))
	return GroupDesc(b[o : o+d.descSize : o+d.descSize])
}

// gdCsumSet is ext4_group_desc_csum_set.
func (d *diskFS) gdCsumSet(g uint32) {
	if !hasGroupCsum(&d.es) {
		return
	}
	gd := d.gd(g)
	binary.LittleEndian.PutUint16(gd[bgChecksum:], groupDescCsum(&d.es, d.seed, g, gd))
}

// groupBlocks is the number of blocks in group g
// (ext4_blocks_count_in_group / ext4_group_last_block_no).
func (d *diskFS) groupBlocks(g uint32) uint32 {
	first := uint64(d.firstData) + uint64(g)*uint64(d.bpg)
	if rest := d.nblocks - first; rest < uint64(d.bpg) {
		return uint32(rest)
	}
	return d.bpg
}

// writeSuper is ext4_commit_super: the counters and s_wtime, the
// checksum, and the 1024 bytes at offset 1024.
func (d *diskFS) writeSuper() error {
	if d.readOnly {
		return nil
	}
	d.es.SuperblockCsumSet()
	_, err := d.dev.WriteAt(d.es[:], SuperblockOffset)
	return err
}

// markBitmapEnd is ext4_mark_bitmap_end: the bits from start to end set.
func markBitmapEnd(start, end int, b []byte) {
	for i := start; i < end; i++ {
		b[i/8] |= 1 << (i % 8)
	}
}

func testBit(b []byte, i int) bool { return b[i/8]&(1<<(i%8)) != 0 }
func setBit(b []byte, i int)       { b[i/8] |= 1 << (i % 8) }
func clearBit(b []byte, i int)     { b[i/8] &^= 1 << (i % 8) }

// blockBitmapCsumSet is ext4_block_bitmap_csum_set.
func (d *diskFS) blockBitmapCsumSet(g uint32, bm []byte) {
	if d.csum {
		d.gd(g).setBlockBitmapCsum(bitmapCsum(d.seed, bm[:d.es.ClustersPerGroup()/8]))
	}
}

// inodeBitmapCsumSet is ext4_inode_bitmap_csum_set.
func (d *diskFS) inodeBitmapCsumSet(g uint32, bm []byte) {
	if d.csum {
		d.gd(g).setInodeBitmapCsum(bitmapCsum(d.seed, bm[:d.ipg/8]))
	}
}

// initBlockBitmap is ext4_init_block_bitmap for a BLOCK_UNINIT group: the
// superblock backup and descriptor blocks when the group has them, the
// group's own bitmaps and inode table, and the padding past the group's
// end marked in use.
func (d *diskFS) initBlockBitmap(g uint32, bm []byte) {
	clear(bm)
	first := uint64(d.firstData) + uint64(g)*uint64(d.bpg)
	n := d.groupBlocks(g)
	mark := func(blk uint64) {
		if blk >= first && blk < first+uint64(n) {
			setBit(bm, int(blk-first))
		}
	}
	if groupHasSuper(&d.es, g) {
		gdtBlocks := d.gdtBlocks()
		for i := uint64(0); i < 1+gdtBlocks+uint64(d.es.ReservedGdtBlocks()); i++ {
			mark(first + i)
		}
	}
	gd := d.gd(g)
	mark(gd.BlockBitmap())
	mark(gd.InodeBitmap())
	itb := d.itableBlocks()
	for i := uint64(0); i < itb; i++ {
		mark(gd.InodeTable() + i)
	}
	markBitmapEnd(int(n), d.bs*8, bm)
}

// Alloc implements vfs.BlockAllocator: ext4_new_meta_blocks /
// ext4_mb_new_blocks reduced to a next-fit search of the block bitmaps
// from the last block handed out, so that blocks allocated in a row are
// contiguous (one extent). It updates the group's free count, the bitmap
// checksum, the descriptor checksum and s_free_blocks_count. A block
// freed in the running transaction is taken only when no other is left
// (the kernel commits and retries: ext4_should_retry_alloc).
func (d *diskFS) Alloc() (uint32, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	// ext4_has_free_clusters: an allocation must leave s_resv_clusters
	// free. Deviation: root's reserved blocks (s_r_blocks_count) are
	// not withheld from other users, since the allocator does not know
	// the caller's credentials; every allocation may use them, as
	// root's may.
	if d.readOnly || d.es.FreeBlocksCount() <= d.resvClusters {
		return 0, false
	}
	if a, ok := d.allocLocked(true); ok || d.jw == nil || len(d.jw.pending) == 0 {
		return a, ok
	}
	return d.allocLocked(false)
}

// allocLocked is Alloc's search (d.mu held); avoidBusy skips the blocks
// freed in the running transaction.
func (d *diskFS) allocLocked(avoidBusy bool) (uint32, bool) {
	start := d.rover
	if start < uint64(d.firstData) || start >= d.nblocks {
		start = uint64(d.firstData)
	}
	g0 := uint32((start - uint64(d.firstData)) / uint64(d.bpg))
	for k := uint32(0); k <= d.groups; k++ {
		g := (g0 + k) % d.groups
		gd := d.gd(g)
		if gd.FreeBlocks() == 0 {
			continue
		}
		bm := d.bread(gd.BlockBitmap())
		if bm == nil {
			continue
		}
		if hasGroupCsum(&d.es) && gd.Flags()&BgBlockUninit != 0 {
			d.initBlockBitmap(g, bm)
			gd.SetFlags(gd.Flags() &^ BgBlockUninit)
		}
		first := uint64(d.firstData) + uint64(g)*uint64(d.bpg)
		from := 0
		if k == 0 {
			from = int(start - first)
		}
		n := int(d.groupBlocks(g))
		for _, lo := range [2][2]int{{from, n}, {0, from}} {
			for i := lo[0]; i < lo[1]; i++ {
				if testBit(bm, i) {
					continue
				}
				blk := first + uint64(i)
				if avoidBusy && d.busy(blk) {
					continue
				}
				if blk > 0xFFFFFFFF {
					return 0, false
				}
				setBit(bm, i)
				gd.SetFreeBlocks(gd.FreeBlocks() - 1)
				d.blockBitmapCsumSet(g, bm)
				d.gdCsumSet(g)
				d.es.SetFreeBlocksCount(d.es.FreeBlocksCount() - 1)
				d.rover = blk + 1
				return uint32(blk), true
			}
		}
	}
	return 0, false
}

// Free implements vfs.BlockAllocator: ext4_free_blocks of one block (a
// block outside the filesystem, or already free, is ignored: the
// kernel's "bit already cleared" error is logged by the model's checker
// instead).
func (d *diskFS) Free(addr uint32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	blk := uint64(addr)
	if d.readOnly || blk < uint64(d.firstData) || blk >= d.nblocks {
		return
	}
	g := uint32((blk - uint64(d.firstData)) / uint64(d.bpg))
	i := int((blk - uint64(d.firstData)) % uint64(d.bpg))
	gd := d.gd(g)
	bm := d.bread(gd.BlockBitmap())
	if bm == nil || !testBit(bm, i) {
		return
	}
	clearBit(bm, i)
	d.forget(blk)
	gd.SetFreeBlocks(gd.FreeBlocks() + 1)
	d.blockBitmapCsumSet(g, bm)
	d.gdCsumSet(g)
	d.es.SetFreeBlocksCount(d.es.FreeBlocksCount() + 1)
}

// newInodeNum is the bitmap part of __ext4_new_inode: the first free
// inode of the first group with one (find_group_other reduced to a
// linear search from group 0; the model has no Orlov allocator), its bit
// set, the group's counters (free inodes, used directories,
// bg_itable_unused) and checksums updated. ok is false when none is left.
func (d *diskFS) newInodeNum(dir bool) (uint32, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.readOnly || d.es.FreeInodesCount() == 0 {
		return 0, false
	}
	for g := uint32(0); g < d.groups; g++ {
		gd := d.gd(g)
		if gd.FreeInodes() == 0 {
			continue
		}
		bm := d.bread(gd.InodeBitmap())
		if bm == nil {
			continue
		}
		if hasGroupCsum(&d.es) && gd.Flags()&BgInodeUninit != 0 {
			clear(bm)
			markBitmapEnd(int(d.ipg), d.bs*8, bm)
			gd.SetFlags(gd.Flags() &^ BgInodeUninit)
		}
		for i := 0; i < int(d.ipg); i++ {
			ino := g*d.ipg + uint32(i) + 1
			if testBit(bm, i) || ino < d.es.FirstIno() {
				continue
			}
			setBit(bm, i)
			gd.SetFreeInodes(gd.FreeInodes() - 1)
			if dir {
				gd.SetUsedDirs(gd.UsedDirs() + 1)
			}
			if hasGroupCsum(&d.es) {
				if used := d.ipg - gd.ItableUnused(); uint32(i+1) > used {
					gd.SetItableUnused(d.ipg - uint32(i+1))
				}
				if gd.Flags()&BgBlockUninit != 0 {
					// The kernel initializes the group's block bitmap here.
					if bb := d.bread(gd.BlockBitmap()); bb != nil {
						d.initBlockBitmap(g, bb)
						gd.SetFlags(gd.Flags() &^ BgBlockUninit)
						d.blockBitmapCsumSet(g, bb)
					}
				}
			}
			d.inodeBitmapCsumSet(g, bm)
			d.gdCsumSet(g)
			d.es.SetFreeInodesCount(d.es.FreeInodesCount() - 1)
			return ino, true
		}
	}
	return 0, false
}

// freeInodeNum is ext4_free_inode's bitmap part.
func (d *diskFS) freeInodeNum(ino uint32, dir bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.readOnly || ino == 0 || ino > d.es.InodesCount() {
		return
	}
	g, i := (ino-1)/d.ipg, int((ino-1)%d.ipg)
	gd := d.gd(g)
	bm := d.bread(gd.InodeBitmap())
	if bm == nil || !testBit(bm, i) {
		return
	}
	clearBit(bm, i)
	gd.SetFreeInodes(gd.FreeInodes() + 1)
	if dir && gd.UsedDirs() > 0 {
		gd.SetUsedDirs(gd.UsedDirs() - 1)
	}
	d.inodeBitmapCsumSet(g, bm)
	d.gdCsumSet(g)
	d.es.SetFreeInodesCount(d.es.FreeInodesCount() + 1)
}

// inodeLoc is __ext4_get_inode_loc: the slice of the inode table that
// holds inode ino; nil when the descriptor points outside the filesystem.
func (d *diskFS) inodeLoc(ino uint32) RawInode {
	g, i := (ino-1)/d.ipg, uint64((ino-1)%d.ipg)
	gd := d.gd(g)
	if gd == nil {
		return nil
	}
	off := i * uint64(d.inodeSize)
	b := d.bread(gd.InodeTable() + off/uint64(d.bs))
	if b == nil {
		return nil
	}
	o := int(off % uint64(d.bs))
	return RawInode(b[o : o+d.inodeSize : o+d.inodeSize])
}

// imageMsg is ext4_msg: "EXT4-fs (DEV): MSG".
func imageMsg(t *kernel.Task, id, format string, args ...any) {
	t.Printk("EXT4-fs (%s): %s", id, fmt.Sprintf(format, args...))
}

// HasImage reports whether dev is a fixed-size device that holds an ext4
// superblock (s_magic 0xEF53 at byte 1080): the devices fill_super reads
// as an on-disk image.
func HasImage(dev *Device) bool {
	if dev == nil || !dev.Fixed() {
		return false
	}
	var m [2]byte
	if _, err := dev.ReadAt(m[:], SuperblockOffset+sMagic); err != nil {
		return false
	}
	return binary.LittleEndian.Uint16(m[:]) == SuperMagic
}

// loadImage is the on-disk half of __ext4_fill_super (fs/ext4/super.c):
// ext4_load_super (the magic, the checksum type and the superblock
// checksum), ext4_feature_set_ok, the block size, inode size and group
// geometry checks, ext4_check_descriptors and the journal's state. ro is
// a read-only mount (the device's, or "ro" in the mount data). Errors, each
// with the kernel's log line: EINVAL, EFSBADCRC, EFSCORRUPTED, EROFS.
func loadImage(t *kernel.Task, dev *Device, id string, ro, noload bool) (*diskFS, error) {
	d := &diskFS{dev: dev, readOnly: ro}
	if _, err := dev.ReadAt(d.es[:], SuperblockOffset); err != nil {
		imageMsg(t, id, "unable to read superblock")
		return nil, errno.EIO
	}
	es := &d.es
	if es.Magic() != SuperMagic {
		imageMsg(t, id, "VFS: Can't find ext4 filesystem")
		return nil, errno.EINVAL
	}
	if es.RoCompat()&RoCompatMetadataCsum != 0 && es.RoCompat()&RoCompatGdtCsum != 0 {
		imageMsg(t, id, "metadata_csum and uninit_bg are redundant flags; please run fsck.")
	}
	if es.RoCompat()&RoCompatMetadataCsum != 0 && es.ChecksumType() != ChecksumTypeCrc32c {
		imageMsg(t, id, "VFS: Found ext4 filesystem with unknown checksum algorithm.")
		return nil, errno.EINVAL
	}
	if !es.SuperblockCsumVerify() {
		imageMsg(t, id, "VFS: Found ext4 filesystem with invalid superblock checksum.  Run e2fsck?")
		return nil, EFSBADCRC
	}
	if es.RevLevel() == 0 && (es.Compat() != 0 || es.Incompat() != 0 || es.RoCompat() != 0) {
		imageMsg(t, id, "feature flags set on rev 0 fs, running e2fsck is recommended")
	}
	// ext4_feature_set_ok, with the model's own set in place of the
	// kernel's where the model implements less.
	if bad := es.Incompat() &^ modelIncompat; bad != 0 {
		imageMsg(t, id, "Couldn't mount because of unsupported optional features (%x)", bad)
		return nil, errno.EINVAL
	}
	if bad := es.RoCompat() &^ modelRoCompat; bad != 0 && !ro {
		imageMsg(t, id, "Couldn't mount RDWR because of unsupported optional features (%x)", bad)
		return nil, errno.EINVAL
	}
	if es.LogBlockSize() > 6 {
		imageMsg(t, id, "Invalid log block size: %d", es.LogBlockSize())
		return nil, errno.EINVAL
	}
	d.bs = es.BlockSize()
	if d.bs > vfs.PageSize {
		imageMsg(t, id, "bad block size %d", d.bs)
		return nil, errno.EINVAL
	}

	d.inodeSize = es.InodeSize()
	if d.inodeSize < GoodOldInodeSize || d.inodeSize > d.bs || d.inodeSize&(d.inodeSize-1) != 0 {
		imageMsg(t, id, "unsupported inode size: %d", d.inodeSize)
		return nil, errno.EINVAL
	}
	if es.Incompat()&IncompatExtents == 0 && !ro {
		// New files would get extent trees, which a filesystem without
		// the feature cannot hold; the model has no block-mapped writer.
		imageMsg(t, id, "the model mounts a filesystem without the extent feature read-only")
		d.readOnly, ro = true, true
	}
	if d.inodeSize > GoodOldInodeSize {
		if int(es.MinExtraIsize())+GoodOldInodeSize > d.inodeSize || int(es.WantExtraIsize())+GoodOldInodeSize > d.inodeSize {
			imageMsg(t, id, "bad s_min_extra_isize or s_want_extra_isize")
		}
	}
	d.bpg, d.ipg = es.BlocksPerGroup(), es.InodesPerGroup()
	if es.ClustersPerGroup() != d.bpg || es.u32(sLogClusterSize) != es.LogBlockSize() {
		imageMsg(t, id, "fragment/cluster size (%d) != block size (%d)", 1024<<es.u32(sLogClusterSize), d.bs)
		return nil, errno.EINVAL
	}
	if d.bpg == 0 || d.bpg > uint32(d.bs*8) || d.bpg%8 != 0 {
		imageMsg(t, id, "#blocks per group too big: %d", d.bpg)
		return nil, errno.EINVAL
	}
	ipb := uint32(d.bs / d.inodeSize)
	if d.ipg < ipb || d.ipg > uint32(d.bs*8) || d.ipg%ipb != 0 {
		imageMsg(t, id, "invalid inodes per group: %d", d.ipg)
		return nil, errno.EINVAL
	}
	d.nblocks = es.BlocksCount()
	devBlocks := uint64(dev.Size()) / uint64(d.bs)
	if d.nblocks > devBlocks {
		imageMsg(t, id, "bad geometry: block count %d exceeds size of device (%d blocks)", d.nblocks, devBlocks)
		return nil, errno.EINVAL
	}
	d.firstData = es.FirstDataBlock()
	if uint64(d.firstData) >= d.nblocks {
		imageMsg(t, id, "bad geometry: first data block %d is beyond end of filesystem (%d)", d.firstData, d.nblocks)
		return nil, errno.EINVAL
	}
	if d.firstData == 0 && d.bs == 1024 {
		imageMsg(t, id, "bad geometry: first data block is 0 with a 1k block and cluster size")
		return nil, errno.EINVAL
	}
	if (d.firstData == 0) != (d.bs > 1024) {
		imageMsg(t, id, "bad geometry: first data block %d with a %d-byte block", d.firstData, d.bs)
		return nil, errno.EINVAL
	}
	d.groups = es.GroupsCount()
	if uint64(d.groups)*uint64(d.ipg) != uint64(es.InodesCount()) {
		imageMsg(t, id, "inodes count not valid: %d vs %d", es.InodesCount(), uint64(d.groups)*uint64(d.ipg))
		return nil, errno.EINVAL
	}
	d.descSize = es.DescSize()
	if es.Is64bit() && (d.descSize < MinDescSize64bit || d.descSize > 1024 || d.descSize&(d.descSize-1) != 0) {
		imageMsg(t, id, "unsupported descriptor size %d", d.descSize)
		return nil, errno.EINVAL
	}
	d.gdtBlock = uint64(d.firstData) + 1
	gdtBlocks := d.gdtBlocks()
	if d.gdtBlock+gdtBlocks > d.nblocks {
		imageMsg(t, id, "group descriptors corrupted!")
		return nil, errno.EFSCORRUPTED
	}
	d.csum = es.RoCompat()&RoCompatMetadataCsum != 0
	d.seed = es.CsumSeed()
	d.now = max(es.u32(sWtime), es.MkfsTime())
	if err := d.checkDescriptors(t, id); err != nil {
		return nil, err
	}
	// The journal (__ext4_fill_super, ext4_load_journal): a filesystem
	// that needs recovery is replayed, on a read-only mount too unless the
	// device itself is read-only; "noload" skips the journal, which a
	// read-write mount then refuses.
	if es.Incompat()&IncompatRecover != 0 && es.Compat()&CompatHasJournal != 0 {
		switch {
		case noload && !ro:
			imageMsg(t, id, "required journal recovery suppressed and not mounted read-only")
			return nil, errno.EINVAL
		case noload:
		default:
			if ro {
				imageMsg(t, id, "INFO: recovery required on readonly filesystem")
				if dev.ReadOnly() {
					imageMsg(t, id, "write access unavailable, cannot proceed (try mounting with noload)")
					return nil, errno.EROFS
				}
				imageMsg(t, id, "write access will be enabled during recovery")
			}
			if err := d.recoverJournal(t, id); err != nil {
				imageMsg(t, id, "error loading journal")
				return nil, errno.EINVAL
			}
			imageMsg(t, id, "recovery complete")
			// The log may have rewritten the superblock and the
			// descriptors: read and check them again.
			return loadImage(t, dev, id, ro, noload)
		}
	}
	if es.State()&ErrorFS != 0 {
		imageMsg(t, id, "warning: mounting fs with errors, running e2fsck is recommended")
	} else if es.State()&ValidFS == 0 {
		imageMsg(t, id, "warning: mounting unchecked fs, running e2fsck is recommended")
	}
	return d, nil
}

// checkDescriptors is ext4_check_descriptors: every group's bitmaps and
// inode table inside the filesystem (flex_bg: anywhere in it; else in the
// group), and its checksum.
func (d *diskFS) checkDescriptors(t *kernel.Task, id string) error {
	itb := d.itableBlocks()
	flex := d.es.Incompat()&IncompatFlexBg != 0
	var freeB uint64
	var freeI uint64
	for g := uint32(0); g < d.groups; g++ {
		gd := d.gd(g)
		first, last := uint64(d.firstData)+uint64(g)*uint64(d.bpg), uint64(d.firstData)+uint64(g)*uint64(d.bpg)+uint64(d.groupBlocks(g))-1
		if flex {
			first, last = uint64(d.firstData), d.nblocks-1
		}
		bad := func(what string, blk uint64) error {
			t.Printk("EXT4-fs error (device %s): ext4_check_descriptors: %s for group %d not in group (block %d)!", id, what, g, blk)
			imageMsg(t, id, "group descriptors corrupted!")
			return errno.EFSCORRUPTED
		}
		if b := gd.BlockBitmap(); b < first || b > last || b < d.gdtBlock {
			return bad("Block bitmap", b)
		}
		if b := gd.InodeBitmap(); b < first || b > last || b < d.gdtBlock {
			return bad("Inode bitmap", b)
		}
		if b := gd.InodeTable(); b < first || b+itb-1 > last || b < d.gdtBlock {
			return bad("Inode table", b)
		}
		if hasGroupCsum(&d.es) {
			if want := groupDescCsum(&d.es, d.seed, g, gd); want != gd.Checksum() {
				t.Printk("EXT4-fs error (device %s): ext4_check_descriptors: Checksum for group %d failed (%d!=%d)", id, g, gd.Checksum(), want)
				if !d.readOnly {
					imageMsg(t, id, "group descriptors corrupted!")
					return errno.EFSCORRUPTED
				}
			}
		}
		freeB += uint64(gd.FreeBlocks())
		freeI += uint64(gd.FreeInodes())
	}
	// The kernel's percpu counters start from the descriptors' sums
	// (ext4_percpu_param_init); the superblock's counts follow them.
	d.es.SetFreeBlocksCount(freeB)
	d.es.SetFreeInodesCount(uint32(min(freeI, 0xFFFFFFFF)))
	return nil
}

// blocksPerPage512 is the i_blocks units (512-byte sectors) of one block.
func (d *diskFS) sectors(nblocks uint64) uint64 { return nblocks * uint64(d.bs) / 512 }

// log2 of the block size, for vfs.SetBlockBits.
func (d *diskFS) blockBits() uint8 { return uint8(bits.TrailingZeros(uint(d.bs))) }

// fillSuperImage is ext4_fill_super for a device that holds an image:
// loadImage's checks, the ext4_sb_info fields from the superblock (the
// features, s_hash_seed, s_def_hash_version, the hash signedness from
// s_flags, s_encoding), the device's allocator, and the root inode read
// from its table ("get root inode failed", "corrupt root inode, run
// e2fsck"). The mount data may say "ro" (the model's MS_RDONLY), and
// "noload" or "norecovery"; a read-only device mounts read-only.
func fillSuperImage(t *kernel.Task, vsb *vfs.SuperBlock, data string) error {
	dev := vsb.Bdev()
	id := vsb.ID()
	ro, noload := dev.ReadOnly(), false
	for _, opt := range vfs.ParseMountData(data) {
		switch opt.Key {
		case "ro":
			ro = true
		case "noload", "norecovery":
			noload = true
		case "rw":
		default:
			return vfs.UnknownParameter(t, vsb.Type, opt)
		}
	}
	d, err := loadImage(t, dev, id, ro, noload)
	if err != nil {
		return err
	}
	d.logw = writeLogOf(dev)
	if !d.readOnly && !noload && d.es.Compat()&CompatHasJournal != 0 {
		if err := d.loadWriter(t, id); err != nil {
			imageMsg(t, id, "error loading journal")
			return errno.EINVAL
		}
	}
	es := &d.es
	sb := &SuperBlock{Dev: dev, vsb: vsb, inodes: map[uint32]*Inode{}, nextIno: es.FirstIno(), disk: d}
	sb.Name = id
	sb.UUID = es.UUID()
	vsb.SetUUID(sb.UUID)
	d.resvClusters = calculateResvClusters(es)
	sb.CsumSeed = d.seed
	sb.MetadataCsum = d.csum
	sb.DirIndex = es.Compat()&CompatDirIndex != 0
	sb.LargeDir = es.Incompat()&IncompatLargedir != 0
	sb.Filetype = es.Incompat()&IncompatFiletype != 0
	seed := es.HashSeed()
	sb.HashSeed = HashSeedWords(&seed)
	sb.DefHashVersion = es.DefHashVersion()
	if sb.DirIndex && es.Flags()&FlagsUnsignedHash != 0 {
		sb.HashUnsigned = 3
	}
	sb.InodesCount = es.InodesCount()
	o := &sb.opts
	o.NoMetadataCsum, o.NoDirIndex, o.LargeDir = !sb.MetadataCsum, !sb.DirIndex, sb.LargeDir
	switch sb.DefHashVersion {
	case DxHashLegacy:
		o.Hash = "legacy"
	case DxHashTEA:
		o.Hash = "tea"
	}
	o.UnsignedHash = sb.HashUnsigned != 0
	o.HashSeed = seed
	o.InodesCount = sb.InodesCount
	o.NoEncrypt = es.Incompat()&IncompatEncrypt == 0
	o.StableInodes = es.Compat()&CompatStableInodes != 0
	if es.Incompat()&IncompatCasefold != 0 {
		if es.Encoding() != EncUTF8_12_1 {
			imageMsg(t, id, "Encoding requested by superblock is unknown")
			return errno.EINVAL
		}
		sb.EncodingFlags = es.EncodingFlags()
		if err := vsb.LoadEncoding(sb.EncodingFlags&EncStrictModeFL != 0); err != nil {
			return err
		}
		sb.Encoding = vsb.Encoding
		o.Casefold = true
		o.Strict = sb.HasStrictEncoding()
		o.NoCompatFallback = sb.NoCasefoldCompatFallback()
	}
	sb.setupOps(vsb)
	// Blocks smaller than a page: the file data goes block by block
	// (image_subpage.go), and the device's page allocator is not used.
	subpage := d.bs < vfs.PageSize
	if subpage {
		sb.aops = subpageAops{sb}
	}
	if d.readOnly {
		sb.fileOps, sb.fileFileOps = roInodeOps{sb.fileOps}, roFileOps{sb.fileFileOps}
	}
	huge := es.RoCompat()&RoCompatHugeFile != 0
	d.bitmapMaxBytes = ext4MaxBitmapSize(uint(d.blockBits()), huge)
	vsb.SetBlockBits(d.blockBits(), ext4MaxSize(uint(d.blockBits()), huge))
	// s_cop is ext4_cryptops whatever the features (an inode flagged
	// encrypted on a filesystem without the feature still goes through
	// fscrypt); the fscrypt ioctls check the feature (ioctl.go).
	vsb.SetCop(sb)
	hooks.SetSBDops(vsb)
	if !d.readOnly && !subpage {
		dev.SetAllocator(d)
	}
	fail := func(err error) error {
		if !d.readOnly && !subpage {
			dev.SetAllocator(nil)
		}
		return err
	}
	sb.igetMu.Lock()
	root, err := sb.igetDisk(t, RootIno)
	sb.igetMu.Unlock()
	if err != nil {
		imageMsg(t, id, "get root inode failed")
		if err == errStale {
			err = errno.EFSCORRUPTED
		}
		return fail(err)
	}
	if !root.IsDir() || root.Size() == 0 || root.nblocks() == 0 {
		imageMsg(t, id, "corrupt root inode, run e2fsck")
		discardDisk(t, root)
		return fail(errno.EFSCORRUPTED)
	}
	if err := vsb.MakeRoot(t, &root.Inode); err != nil {
		return fail(err)
	}
	if !d.readOnly {
		d.mu.Lock()
		err := d.setupSuper()
		d.mu.Unlock()
		if err != nil {
			return fail(err)
		}
	}
	sb.mountedMsg(t)
	return nil
}

// ReadOnly reports whether the filesystem is mounted read-only (an image
// on a read-only device, or "ro" in the mount data).
func (sb *SuperBlock) ReadOnly() bool { return sb.disk != nil && sb.disk.readOnly }

// OnDisk reports whether the filesystem is mounted from an on-disk image.
func (sb *SuperBlock) OnDisk() bool { return sb.disk != nil }

// roFileOps and roInodeOps are a read-only image's regular-file
// operations: an open for writing and a truncation are EROFS, as
// mnt_want_write makes them on a read-only superblock (sb_rdonly).
type roFileOps struct{ vfs.FileOperations }

// Open implements vfs.FileOperations.
func (o roFileOps) Open(t *kernel.Task, inode *vfs.Inode, f *vfs.File) error {
	if f.FMode()&vfs.FMODE_WRITE != 0 {
		return errno.EROFS
	}
	return o.FileOperations.Open(t, inode, f)
}

type roInodeOps struct{ vfs.InodeOperations }

// Fiemap passes FS_IOC_FIEMAP to the regular file's ->fiemap: a
// read-only image reports its extents too.
func (o roInodeOps) Fiemap(t *kernel.Task, inode *vfs.Inode, fm *vfs.Fiemap, start, length uint64) error {
	if f, ok := o.InodeOperations.(vfs.Fiemapper); ok {
		return f.Fiemap(t, inode, fm, start, length)
	}
	return errno.EOPNOTSUPP
}

// Setattr implements vfs.InodeOperations.
func (o roInodeOps) Setattr(t *kernel.Task, d *vfs.Dentry, attr *vfs.Iattr) error {
	return errno.EROFS
}
