package ext4

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/vfslab/vfslab/vfs"
)

// mkfs.ext4 on a fixed-size device (misc/mke2fs.c, lib/ext2fs/initialize.c,
// alloc_tables.c, mkjournal.c): the layout mke2fs 1.47 writes for the
// device's size, as /etc/mke2fs.conf's [fs_types] choose it (floppy under
// 3 MiB, small under 512 MiB: 1 KiB blocks and an inode per 8 KiB or 4
// KiB; else 4 KiB blocks and an inode per 16 KiB), 256-byte inodes, and mke2fs's ext4 features (has_journal
// ext_attr dir_index filetype extent 64bit flex_bg sparse_super large_file
// huge_file dir_nlink extra_isize metadata_csum) changed by the options.
//
// The block size is mke2fs.conf's (1 KiB for the small and floppy types, 4
// KiB otherwise) unless -b gives one. Where the model differs from mke2fs:
// there is no resize_inode (and so no reserved GDT blocks), the flex_bg
// metadata is packed per flex group, every group's bitmaps are written out
// in full (no BLOCK_UNINIT or INODE_UNINIT), and the UUID is derived from
// the device's size (deterministic) unless -U gives one.

// mkfsTime is the model's mkfs time (s_mkfs_time and the first inodes'
// timestamps): a fixed instant, so that images repeat byte for byte.
const mkfsTime = 1700000000

// jbd2 superblock (include/linux/jbd2.h journal_superblock_t, big-endian).
const (
	jbd2Magic        = 0xC03B3998
	jbd2SuperblockV2 = 4
)

// defaultJournalBlocks is ext2fs_default_journal_size: the journal's
// blocks for a filesystem of n blocks (-1: none).
func defaultJournalBlocks(n uint64) int {
	switch {
	case n < 2048:
		return -1
	case n < 32768:
		return 1024
	case n < 256*1024:
		return 4096
	case n < 512*1024:
		return 8192
	case n < 4096*1024:
		return 16384
	case n < 8192*1024:
		return 32768
	case n < 16384*1024:
		return 65536
	case n < 32768*1024:
		return 131072
	}
	return 262144
}

// mkfsGeometry is what mke2fs decides before it writes anything.
type mkfsGeometry struct {
	bs               int
	first            uint64 // s_first_data_block
	nblocks          uint64
	groups, bpg, ipg uint32
	itb              uint32 // inode table blocks per group
	gdtBlocks        uint32
	flex             uint32
	jblocks          int
	inodeRatio       int
}

func mkfsPlan(size int64, o Options) (mkfsGeometry, error) {
	g := mkfsGeometry{bs: 4096, flex: 16}
	// mke2fs.conf's [fs_types]: floppy under 3 MiB, small under 512 MiB
	// (1 KiB blocks), else the default (4 KiB).
	switch mb := size >> 20; {
	case mb < 3:
		g.inodeRatio, g.bs = 8192, 1024 // floppy
	case mb < 512:
		g.inodeRatio, g.bs = 4096, 1024 // small
	default:
		g.inodeRatio = 16384
	}
	if o.BlockSize != 0 {
		if o.BlockSize > vfs.PageSize {
			return g, fmt.Errorf("mkfs.ext4: %d-byte blocks too big for system (max %d)", o.BlockSize, vfs.PageSize)
		}
		g.bs = o.BlockSize
	}
	g.bpg = uint32(g.bs * 8)
	if g.bs == 1024 {
		g.first = 1
	}
	g.nblocks = uint64(size) / uint64(g.bs)
	if g.nblocks < 64 {
		return g, fmt.Errorf("mkfs.ext4: Device size reported to be zero or too small (%d blocks)", g.nblocks)
	}
	g.groups = uint32((g.nblocks - g.first + uint64(g.bpg) - 1) / uint64(g.bpg))
	// A last group too small for its own metadata is dropped.
	if rem := (g.nblocks - g.first) % uint64(g.bpg); g.groups > 1 && rem != 0 && rem < 50+2 {
		g.nblocks -= rem
		g.groups--
	}
	inodes := g.nblocks * uint64(g.bs) / uint64(g.inodeRatio)
	if o.InodesCount != 0 {
		inodes = uint64(o.InodesCount)
	}
	// ext2fs_initialize: inodes per group filling whole inode table
	// blocks, then a multiple of 8 (rounded down).
	ipg := (inodes + uint64(g.groups) - 1) / uint64(g.groups)
	if ipg > uint64(g.bs*8) {
		ipg = uint64(g.bs * 8)
	}
	itb := (ipg*256 + uint64(g.bs) - 1) / uint64(g.bs)
	ipg = itb * uint64(g.bs) / 256
	ipg = max(ipg, 8) &^ 7
	if uint64(g.groups)*ipg > 0xFFFFFFFF {
		return g, fmt.Errorf("mkfs.ext4: too many inodes (%d)", uint64(g.groups)*ipg)
	}
	g.ipg = uint32(ipg)
	g.itb = uint32(ipg * 256 / uint64(g.bs))
	g.gdtBlocks = uint32((uint64(g.groups)*MinDescSize64bit + uint64(g.bs) - 1) / uint64(g.bs))
	g.jblocks = defaultJournalBlocks(g.nblocks)
	return g, nil
}

// mkfsImage is mke2fs's write of a new filesystem on the fixed-size
// device dev, from o (ParseMkfsArgs). Errors name the problem as mke2fs
// does.
func mkfsImage(dev *Device, o Options) error {
	if dev.ReadOnly() {
		return fmt.Errorf("mkfs.ext4: Read-only file system while setting up superblock")
	}
	size := dev.Size()
	if o.FsSize > 0 {
		// PRS: an fs-size over the device's is refused without -F and
		// then fails writing past the end; the model refuses it.
		if o.FsSize > size {
			return fmt.Errorf("mkfs.ext4: Filesystem larger than apparent device size (%d > %d bytes)", o.FsSize, size)
		}
		size = o.FsSize
	}
	geo, err := mkfsPlan(size, o)
	if err != nil {
		return err
	}
	bs := uint64(geo.bs)
	var es RawSuper
	es.put32(sInodesCount, geo.groups*geo.ipg)
	es.put32(sBlocksCountLo, uint32(geo.nblocks))
	es.put32(sBlocksCountHi, uint32(geo.nblocks>>32))
	r := geo.nblocks * 5 / 100
	es.put32(sRBlocksCountLo, uint32(r))
	es.put32(0x154, uint32(r>>32))
	es.put32(sFirstDataBlock, uint32(geo.first))
	es.put32(sLogBlockSize, uint32(bits.TrailingZeros(uint(geo.bs))-10))
	es.put32(sLogClusterSize, uint32(bits.TrailingZeros(uint(geo.bs))-10))
	es.put32(sBlocksPerGroup, geo.bpg)
	es.put32(sClustersPerGroup, geo.bpg)
	es.put32(sInodesPerGroup, geo.ipg)
	es.put32(sWtime, mkfsTime)
	es.put16(sMaxMntCount, 0xFFFF) // -1
	es.put16(sMagic, SuperMagic)
	es.put16(sState, ValidFS)
	es.put16(0x3C, 1) // s_errors: EXT4_ERRORS_CONTINUE
	es.put32(0x40, mkfsTime)
	es.put32(sRevLevel, 1)
	es.put32(sFirstIno, FirstIno)
	es.put16(sInodeSize, 256)
	compat := CompatHasJournal | CompatExtAttr | CompatDirIndex
	if o.NoDirIndex {
		compat &^= CompatDirIndex
	}
	if o.StableInodes {
		compat |= CompatStableInodes
	}
	if geo.jblocks < 0 {
		compat &^= CompatHasJournal
	}
	incompat := IncompatFiletype | IncompatExtents | Incompat64bit | IncompatFlexBg
	if !o.NoEncrypt {
		incompat |= IncompatEncrypt
	}
	if o.Casefold {
		incompat |= IncompatCasefold
	}
	if o.LargeDir {
		incompat |= IncompatLargedir
	}
	ro := RoCompatSparseSuper | RoCompatLargeFile | RoCompatHugeFile | RoCompatDirNlink | RoCompatExtraIsize | RoCompatMetadataCsum
	if o.NoMetadataCsum {
		ro &^= RoCompatMetadataCsum
	}
	es.put32(sFeatureCompat, compat)
	es.put32(sFeatureIncompat, incompat)
	es.put32(sFeatureRoCompat, ro)
	uuid := o.UUID
	if uuid == ([16]byte{}) {
		h := sha256.Sum256([]byte(fmt.Sprintf("vfslab mkfs.ext4 %d", dev.Size())))
		copy(uuid[:], h[:16])
		uuid[6] = uuid[6]&0x0F | 0x40
		uuid[8] = uuid[8]&0x3F | 0x80
	}
	copy(es[sUUID:], uuid[:])
	copy(es[sVolumeName:sVolumeName+16], o.Label)
	copy(es[sHashSeed:], o.HashSeed[:])
	switch o.Hash {
	case "legacy":
		es[sDefHashVersion] = DxHashLegacy
	case "tea":
		es[sDefHashVersion] = DxHashTEA
	default:
		es[sDefHashVersion] = DxHashHalfMD4
	}
	es.put16(sDescSize, MinDescSize64bit)
	es.put32(0x100, 0x0004|0x0008) // s_default_mount_opts: user_xattr, acl
	es.put32(sMkfsTime, mkfsTime)
	es.put16(sMinExtraIsize, extraIsizeStd)
	es.put16(sWantExtraIsize, extraIsizeStd)
	if o.UnsignedHash {
		es.put32(sFlags, FlagsUnsignedHash)
	} else {
		es.put32(sFlags, FlagsSignedHash)
	}
	es[sLogGroupsPerFlex] = 4
	if !o.NoMetadataCsum {
		es[sChecksumType] = ChecksumTypeCrc32c
	}
	if o.Casefold {
		es.put16(sEncoding, EncUTF8_12_1)
		var fl uint16
		if o.Strict {
			fl |= EncStrictModeFL
		}
		if o.NoCompatFallback {
			fl |= EncNoCompatFallbackFL
		}
		es.put16(sEncodingFlags, fl)
	}
	if !o.NoEncrypt {
		es[sEncryptAlgos] = 1   // EXT4_ENCRYPTION_MODE_AES_256_XTS
		es[sEncryptAlgos+1] = 4 // EXT4_ENCRYPTION_MODE_AES_256_CTS
	}

	// The disk, zeroed where mke2fs writes (the metadata, the inode
	// tables, the journal).
	d := &diskFS{dev: dev, es: es, bs: geo.bs, groups: geo.groups, descSize: MinDescSize64bit, ipg: geo.ipg,
		bpg: geo.bpg, inodeSize: 256, csum: !o.NoMetadataCsum, nblocks: geo.nblocks, gdtBlock: geo.first + 1, firstData: uint32(geo.first), now: mkfsTime}
	d.seed = es.CsumSeed()
	// zero is ext2fs_zero_blocks2 as a discard (mke2fs's discard of the
	// device, with discard_zeroes_data): the blocks read as zeroes and,
	// on the sparse device, hold no memory.
	zero := func(blk uint64, n uint64) {
		n = min(n, geo.nblocks-min(blk, geo.nblocks))
		dev.Discard(int64(blk)*int64(geo.bs), int64(n)*int64(geo.bs))
	}
	zero(0, geo.first+1+uint64(geo.gdtBlocks))
	used := make([][]byte, geo.groups) // block bitmaps, built here
	for g := range used {
		used[g] = make([]byte, geo.bs)
	}
	groupStart := func(g uint32) uint64 { return geo.first + uint64(g)*uint64(geo.bpg) }
	where := func(blk uint64) (uint32, int) {
		return uint32((blk - geo.first) / uint64(geo.bpg)), int((blk - geo.first) % uint64(geo.bpg))
	}
	mark := func(blk uint64) {
		g, i := where(blk)
		setBit(used[g], i)
	}
	isUsed := func(blk uint64) bool {
		g, i := where(blk)
		return testBit(used[g], i)
	}
	for g := uint32(0); g < geo.groups; g++ {
		if groupHasSuper(&es, g) {
			for i := uint64(0); i < 1+uint64(geo.gdtBlocks); i++ {
				mark(groupStart(g) + i)
			}
		}
	}
	// take marks and zeroes the first run of n free blocks from from on.
	take := func(from uint64, n int) (uint64, error) {
		b := from
		for {
			free := true
			for i := 0; i < n; i++ {
				x := b + uint64(i)
				if x >= geo.nblocks {
					return 0, fmt.Errorf("mkfs.ext4: Could not allocate block in ext2 filesystem")
				}
				if isUsed(x) {
					b = x + 1
					free = false
					break
				}
			}
			if free {
				for i := 0; i < n; i++ {
					mark(b + uint64(i))
				}
				zero(b, uint64(n))
				return b, nil
			}
		}
	}
	// flex_bg (ext2fs_allocate_group_table with flexbg_size 16): the
	// block bitmaps of a flex group's groups together, then their inode
	// bitmaps, then their inode tables, from the start of its first group.
	type loc struct{ bb, ib, it uint64 }
	locs := make([]loc, geo.groups)
	for f := uint32(0); f < geo.groups; f += geo.flex {
		n := min(geo.flex, geo.groups-f)
		var err error
		for i := uint32(0); i < n && err == nil; i++ {
			locs[f+i].bb, err = take(groupStart(f), 1)
		}
		for i := uint32(0); i < n && err == nil; i++ {
			locs[f+i].ib, err = take(locs[f+n-1].bb+1, 1)
		}
		for i := uint32(0); i < n && err == nil; i++ {
			locs[f+i].it, err = take(locs[f+n-1].ib+1, int(geo.itb))
		}
		if err != nil {
			return fmt.Errorf("mkfs.ext4: Could not allocate block in ext2 filesystem while trying to allocate filesystem tables")
		}
	}
	// The first data blocks: the root directory, lost+found (which
	// create_lost_and_found expands to 16 KiB, within its 12 direct
	// blocks), then the journal in the middle group (ext2fs_mkjournal's
	// goal), after its metadata.
	lpfBlocks := min(12, 16384/geo.bs)
	rootBlk, err := take(locs[0].it, 1)
	if err != nil {
		return err
	}
	lpfBlk, err := take(rootBlk+1, lpfBlocks)
	if err != nil {
		return err
	}
	var jblk uint64
	if geo.jblocks > 0 {
		if jblk, err = take(groupStart(geo.groups/2), geo.jblocks); err != nil {
			if jblk, err = take(lpfBlk+uint64(lpfBlocks), geo.jblocks); err != nil {
				return fmt.Errorf("mkfs.ext4: Filesystem too small for a journal")
			}
		}
	}
	// Padding past the last block.
	last := geo.groups - 1
	markBitmapEnd(int(geo.nblocks-groupStart(last)), geo.bs*8, used[last])

	// Descriptors and bitmaps.
	var freeBlocks uint64
	// The root's group and lost+found's (inode 11 is in group 1 when a
	// group has fewer than 11 inodes).
	dirs := map[uint32]uint32{}
	dirs[(RootIno-1)/geo.ipg]++
	dirs[(FirstIno-1)/geo.ipg]++
	for g := uint32(0); g < geo.groups; g++ {
		gd := d.gd(g)
		clear(gd)
		gd.setLohi(bgBlockBitmapLo, bgBlockBitmapHi, 4, locs[g].bb)
		gd.setLohi(bgInodeBitmapLo, bgInodeBitmapHi, 4, locs[g].ib)
		gd.setLohi(bgInodeTableLo, bgInodeTableHi, 4, locs[g].it)
		n := d.groupBlocks(g)
		free := uint32(0)
		for i := 0; i < int(n); i++ {
			if !testBit(used[g], i) {
				free++
			}
		}
		freeBlocks += uint64(free)
		gd.SetFreeBlocks(free)
		ib := d.bread(locs[g].ib)
		clear(ib)
		markBitmapEnd(int(geo.ipg), geo.bs*8, ib)
		// Inodes 1..10 reserved, 11 lost+found (ext2fs_inode_alloc_stats2
		// of each, in whichever group holds it).
		usedInodes := uint32(0)
		for ino := g*geo.ipg + 1; ino <= FirstIno && ino <= (g+1)*geo.ipg; ino++ {
			setBit(ib, int(ino-1-g*geo.ipg))
			usedInodes++
		}
		gd.SetFreeInodes(geo.ipg - usedInodes)
		gd.SetUsedDirs(dirs[g])
		if hasGroupCsum(&d.es) {
			// Without a descriptor checksum these fields mean nothing (and
			// e2fsck would trust bg_itable_unused all the same).
			gd.SetItableUnused(geo.ipg - usedInodes)
			gd.SetFlags(BgInodeZeroed)
		}
		copy(d.bread(locs[g].bb), used[g])
		d.blockBitmapCsumSet(g, used[g])
		d.inodeBitmapCsumSet(g, ib)
	}
	d.es.SetFreeBlocksCount(freeBlocks)
	d.es.SetFreeInodesCount(geo.groups*geo.ipg - FirstIno)

	// The reserved inodes (write_reserved_inodes), then the root,
	// lost+found and the journal.
	for ino := uint32(1); ino < FirstIno; ino++ {
		raw := d.inodeLoc(ino)
		clear(raw)
		raw.put16(iExtraIsize, extraIsizeStd)
		if d.csum {
			raw.CsumSet(inodeCsumSeed(d.seed, ino, 0))
		}
	}
	newInode := func(ino uint32, mode uint16, links uint16, size int64, exts []Extent, nodes []uint64) {
		raw := d.inodeLoc(ino)
		clear(raw)
		raw.put16(iMode, mode)
		raw.SetSize(size)
		for _, off := range []int{iAtime, iCtime, iMtime} {
			raw.put32(off, mkfsTime)
		}
		raw.put16(iLinksCount, links)
		raw.put32(iFlags, ExtentsFL)
		raw.put16(iExtraIsize, extraIsizeStd)
		raw.put32(iCrtime, mkfsTime)
		var n uint64
		for _, e := range exts {
			n += uint64(e.Len)
		}
		raw.SetBlocks((n + uint64(len(nodes))) * bs / 512)
		writeExtents(raw.IBlock(), exts, nodes, d.bread, geo.bs, d.csum, inodeCsumSeed(d.seed, ino, 0))
		if d.csum {
			raw.CsumSet(inodeCsumSeed(d.seed, ino, 0))
		}
	}
	newInode(RootIno, uint16(vfs.S_IFDIR|0o755), 3, int64(bs), []Extent{{Lblk: 0, Len: 1, Pblk: rootBlk}}, nil)
	newInode(FirstIno, uint16(vfs.S_IFDIR|0o700), 2, int64(lpfBlocks)*int64(bs), []Extent{{Lblk: 0, Len: uint32(lpfBlocks), Pblk: lpfBlk}}, nil)
	if geo.jblocks > 0 {
		var exts []Extent
		for l := 0; l < geo.jblocks; l += ExtInitMaxLen {
			n := min(ExtInitMaxLen, geo.jblocks-l)
			exts = append(exts, Extent{Lblk: uint32(l), Len: uint32(n), Pblk: jblk + uint64(l)})
		}
		need, _ := extNodesNeeded(len(exts), extSpaceBlock(geo.bs))
		var nodes []uint64
		for i := 0; i < need; i++ {
			b, err := take(jblk+uint64(geo.jblocks), 1)
			if err != nil {
				return err
			}
			nodes = append(nodes, b)
			// The node's block is counted: fix the group's free count.
			g, _ := where(b)
			gd := d.gd(g)
			gd.SetFreeBlocks(gd.FreeBlocks() - 1)
			copy(d.bread(gd.BlockBitmap()), used[g])
			d.blockBitmapCsumSet(g, used[g])
			d.es.SetFreeBlocksCount(d.es.FreeBlocksCount() - 1)
		}
		newInode(JournalIno, uint16(vfs.S_IFREG|0o600), 1, int64(geo.jblocks)*int64(bs), exts, nodes)
		jsb := d.bread(jblk)
		be := binary.BigEndian
		be.PutUint32(jsb[0x00:], jbd2Magic)
		be.PutUint32(jsb[0x04:], jbd2SuperblockV2)
		be.PutUint32(jsb[jsbBlocksize:], uint32(geo.bs))
		be.PutUint32(jsb[jsbMaxlen:], uint32(geo.jblocks))
		be.PutUint32(jsb[jsbFirst:], 1)
		be.PutUint32(jsb[jsbSequence:], 1)
		copy(jsb[jsbUUID:], uuid[:])
		be.PutUint32(jsb[0x40:], 1) // s_nr_users
		es := &d.es
		es.put32(sJournalInum, JournalIno)
		es[0xFD] = 1 // s_jnl_backup_type: EXT3_JNL_BACKUP_BLOCKS
		jraw := d.inodeLoc(JournalIno)
		copy(es[0x10C:0x10C+iBlockLen], jraw.IBlock())
		es.put32(0x10C+iBlockLen, jraw.u32(iSizeHigh))
		es.put32(0x10C+iBlockLen+4, jraw.u32(iSizeLo))
	}
	// The root directory and lost+found (ext2fs_mkdir, expanded).
	dirBlock := func(blk uint64, ino uint32, ents []struct {
		ino  uint32
		name string
		ft   uint8
	}) {
		b := d.bread(blk)
		clear(b)
		tail := 0
		if d.csum {
			tail = DirEntryTailSize
		}
		off := 0
		for i, e := range ents {
			l := DirRecLen(len(e.name), false)
			if i == len(ents)-1 {
				l = geo.bs - tail - off
			}
			binary.LittleEndian.PutUint32(b[off:], e.ino)
			binary.LittleEndian.PutUint16(b[off+4:], uint16(l))
			b[off+6] = byte(len(e.name))
			b[off+7] = e.ft
			copy(b[off+8:], e.name)
			off += l
		}
		if len(ents) == 0 {
			binary.LittleEndian.PutUint16(b[4:], uint16(geo.bs-tail))
		}
		if d.csum {
			initializeDirentTail(b)
			binary.LittleEndian.PutUint32(b[geo.bs-4:], Crc32c(inodeCsumSeed(d.seed, ino, 0), b[:geo.bs-DirEntryTailSize]))
		}
	}
	type ent = struct {
		ino  uint32
		name string
		ft   uint8
	}
	dirBlock(rootBlk, RootIno, []ent{{RootIno, ".", FtDir}, {RootIno, "..", FtDir}, {FirstIno, lostFoundIname, FtDir}})
	dirBlock(lpfBlk, FirstIno, []ent{{FirstIno, ".", FtDir}, {RootIno, "..", FtDir}})
	for i := uint64(1); i < uint64(lpfBlocks); i++ {
		dirBlock(lpfBlk+i, FirstIno, nil)
	}
	for g := uint32(0); g < geo.groups; g++ {
		d.gdCsumSet(g)
	}
	// The superblock and its backups, with the descriptors.
	d.es.SuperblockCsumSet()
	if _, err := dev.WriteAt(d.es[:], SuperblockOffset); err != nil {
		return err
	}
	gdt := make([]byte, uint64(geo.gdtBlocks)*bs)
	for i := uint64(0); i < uint64(geo.gdtBlocks); i++ {
		copy(gdt[i*bs:], d.bread(d.gdtBlock+i))
	}
	for g := uint32(1); g < geo.groups; g++ {
		if !groupHasSuper(&d.es, g) {
			continue
		}
		first := groupStart(g)
		backup := d.es
		binary.LittleEndian.PutUint16(backup[0x5A:], uint16(g)) // s_block_group_nr
		backup.SuperblockCsumSet()
		b := d.bread(first)
		clear(b)
		copy(b, backup[:])
		for i := uint64(0); i < uint64(geo.gdtBlocks); i++ {
			copy(d.bread(first+1+i), gdt[i*bs:(i+1)*bs])
		}
	}
	return nil
}
