package f2fs

import (
	"errors"
	"syscall"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// Mounting a real image: a fixed-size device (vfs.NewBlockDeviceSize,
// vfs.OpenImage) whose block 0 or 1 holds an f2fs superblock is mounted
// from what it holds, as f2fs_fill_super does (fs/f2fs/super.c): the raw
// superblock (read_raw_super_block, sanity_check_raw_super), the valid
// checkpoint (f2fs_get_valid_checkpoint, f2fs_sanity_check_ckpt), the
// node manager's NAT bitmap and journal (f2fs_build_node_manager,
// restore_curseg_summaries) and the SIT (build_sit_info); inodes are
// then read from their node blocks through the NAT (f2fs_iget,
// do_read_inode), a file's data and a directory's dentry blocks through
// i_addr and its direct and indirect nodes.

// efsbadcrc is EFSBADCRC (fs/f2fs/f2fs.h): EBADMSG.
const efsbadcrc = errno.EBADMSG

// Geometry bounds of sanity_check_raw_super and f2fs_sanity_check_ckpt
// (fs/f2fs/segment.h, f2fs.h).
const (
	f2fsMinSegments     = 9                   // F2FS_MIN_SEGMENTS
	f2fsMaxSegment      = 8 * 1024 * 1024 / 2 // F2FS_MAX_SEGMENT: 16 TB of 2 MB segments
	f2fsMinMetaSegments = 8                   // F2FS_MIN_META_SEGMENTS
	f2fsCpPacks         = 2                   // F2FS_CP_PACKS
	nrCursegPersistType = NrCursegType
	minExtraAttrSize    = 4 // F2FS_MIN_EXTRA_ATTR_SIZE
	minInlineDentrySize = 40
	// maxInlineXattrSize is MAX_INLINE_XATTR_SIZE (in words).
	maxInlineXattrSize = DefAddrsPerInode - totalExtraAttrSize/4 - defInlineReservedSize - minInlineDentrySize/4
)

// imageInfo is the on-disk state of an f2fs mounted from an image: the
// superblock, the checkpoint in use, the node manager (struct
// f2fs_nm_info: NAT bitmap, NAT journal, max_nid) and the segment
// manager's SIT (struct sit_info). The SuperBlock of the growing-device
// model has none.
type imageInfo struct {
	raw *RawSuper
	// sbBlock is the superblock copy that was valid (0 or 1).
	sbBlock int
	ckpt    *Checkpoint
	// cpStart is the first block of the checkpoint pack in use.
	cpStart uint32
	// cpPack is 1 or 2.
	cpPack int

	blocksPerSeg uint32
	mainBlkaddr  uint32
	maxBlkaddr   uint32
	chksumSeed   uint32

	natBitmap  []byte
	sitBitmap  []byte
	natJournal []NatJournalEntry
	sitJournal []SitJournalEntry
	maxNid     uint32
	// sit is the SIT entry of each main-area segment.
	sit []SitEntry
	// alloc is the block allocator of a writable mount (nil read-only).
	alloc *imageAlloc
}

// metaBlock is f2fs_get_meta_folio's read: the device block at addr, or
// nil past the device's end (EIO to the caller).
func (sbi *SuperBlock) metaBlock(addr uint32) []byte {
	if uint64(addr) >= uint64(sbi.Dev.Blocks()) {
		return nil
	}
	return sbi.Dev.Block(addr)
}

// sanityCheckAreaBoundary is sanity_check_area_boundary: the areas follow
// each other without gaps and the main area ends inside the segments.
func (sbi *SuperBlock) sanityCheckAreaBoundary(t *kernel.Task, s *RawSuper) bool {
	seg0 := s.Segment0Blkaddr
	end := func(start, segs uint32) uint64 { return uint64(start) + uint64(segs)<<s.LogBlocksPerSeg }
	if seg0 != s.CpBlkaddr {
		sbi.info(t, "Mismatch start address, segment0(%d) cp_blkaddr(%d)", seg0, s.CpBlkaddr)
		return true
	}
	areas := []struct {
		name        string
		start, segs uint32
		next        uint32
	}{
		{"CP", s.CpBlkaddr, s.SegmentCountCkpt, s.SitBlkaddr},
		{"SIT", s.SitBlkaddr, s.SegmentCountSit, s.NatBlkaddr},
		{"NAT", s.NatBlkaddr, s.SegmentCountNat, s.SsaBlkaddr},
		{"SSA", s.SsaBlkaddr, s.SegmentCountSsa, s.MainBlkaddr},
	}
	for _, a := range areas {
		if end(a.start, a.segs) != uint64(a.next) {
			sbi.info(t, "Wrong %s boundary, start(%d) end(%d) blocks(%d)", a.name, a.start, a.next, a.segs<<s.LogBlocksPerSeg)
			return true
		}
	}
	mainEnd := end(s.MainBlkaddr, s.SegmentCountMain)
	segEnd := end(seg0, s.SegmentCount)
	if mainEnd > segEnd {
		sbi.info(t, "Wrong MAIN_AREA boundary, start(%d) end(%d) block(%d)", s.MainBlkaddr, segEnd, s.SegmentCountMain<<s.LogBlocksPerSeg)
		return true
	}
	return false
}

// sanityCheckRawSuper is sanity_check_raw_super: magic, checksum,
// geometry and the reserved inode numbers. Errors: EINVAL for a wrong
// magic, EFSCORRUPTED for the rest, each with the kernel's log line.
func (sbi *SuperBlock) sanityCheckRawSuper(t *kernel.Task, s *RawSuper) error {
	if s.Magic != SuperMagic {
		sbi.info(t, "Magic Mismatch, valid(0x%x) - read(0x%x)", SuperMagic, s.Magic)
		return errno.EINVAL
	}
	if s.HasFeature(FeatSbChksum) {
		if s.ChecksumOffset != sbCrcOffset {
			sbi.info(t, "Invalid SB checksum offset: %d", s.ChecksumOffset)
			return errno.EFSCORRUPTED
		}
		if f2fsCrc32(s.Raw[:sbCrcOffset]) != s.Crc {
			sbi.info(t, "Invalid SB checksum value: %d", s.Crc)
			return errno.EFSCORRUPTED
		}
	}
	if s.LogBlockSize != blkSizeBits {
		sbi.info(t, "Invalid log_blocksize (%d), supports only %d", s.LogBlockSize, blkSizeBits)
		return errno.EFSCORRUPTED
	}
	if s.LogBlocksPerSeg != 9 {
		sbi.info(t, "Invalid log blocks per segment (%d)", s.LogBlocksPerSeg)
		return errno.EFSCORRUPTED
	}
	if s.LogSectorSize > maxLogSectorSize || s.LogSectorSize < minLogSectorSize {
		sbi.info(t, "Invalid log sectorsize (%d)", s.LogSectorSize)
		return errno.EFSCORRUPTED
	}
	if s.LogSectorsPerBlock+s.LogSectorSize != maxLogSectorSize {
		sbi.info(t, "Invalid log sectors per block(%d) log sectorsize(%d)", s.LogSectorsPerBlock, s.LogSectorSize)
		return errno.EFSCORRUPTED
	}
	segCount, segsPerSec, secsPerZone, totalSections := s.SegmentCount, s.SegsPerSec, s.SecsPerZone, s.SectionCount
	if segCount > f2fsMaxSegment || segCount < f2fsMinSegments {
		sbi.info(t, "Invalid segment count (%d)", segCount)
		return errno.EFSCORRUPTED
	}
	if totalSections > s.SegmentCountMain || totalSections < 1 || segsPerSec > segCount || segsPerSec == 0 {
		sbi.info(t, "Invalid segment/section count (%d, %d x %d)", segCount, totalSections, segsPerSec)
		return errno.EFSCORRUPTED
	}
	if uint64(s.SegmentCountMain) != uint64(totalSections)*uint64(segsPerSec) {
		sbi.info(t, "Invalid segment/section count (%d != %d * %d)", s.SegmentCountMain, totalSections, segsPerSec)
		return errno.EFSCORRUPTED
	}
	if segCount/segsPerSec < totalSections {
		sbi.info(t, "Small segment_count (%d < %d * %d)", segCount, totalSections, segsPerSec)
		return errno.EFSCORRUPTED
	}
	if uint64(segCount) > s.BlockCount>>9 {
		sbi.info(t, "Wrong segment_count / block_count (%d > %d)", segCount, s.BlockCount>>9)
		return errno.EFSCORRUPTED
	}
	if secsPerZone == 0 || secsPerZone > totalSections {
		sbi.info(t, "Wrong secs_per_zone / total_sections (%d, %d)", secsPerZone, totalSections)
		return errno.EFSCORRUPTED
	}
	if s.ExtensionCount > MaxExtension || uint32(s.HotExtCount) > MaxExtension || s.ExtensionCount+uint32(s.HotExtCount) > MaxExtension {
		sbi.info(t, "Corrupted extension count (%d + %d > %d)", s.ExtensionCount, s.HotExtCount, MaxExtension)
		return errno.EFSCORRUPTED
	}
	if s.CpPayload >= s.BlocksPerSeg()-f2fsCpPacks-nrCursegPersistType {
		sbi.info(t, "Insane cp_payload (%d >= %d)", s.CpPayload, s.BlocksPerSeg()-f2fsCpPacks-nrCursegPersistType)
		return errno.EFSCORRUPTED
	}
	if s.NodeIno != 1 || s.MetaIno != 2 || s.RootIno != 3 {
		sbi.info(t, "Invalid Fs Meta Ino: node(%d) meta(%d) root(%d)", s.NodeIno, s.MetaIno, s.RootIno)
		return errno.EFSCORRUPTED
	}
	if sbi.sanityCheckAreaBoundary(t, s) {
		return errno.EFSCORRUPTED
	}
	return nil
}

// readRawSuperBlock is read_raw_super_block: the first of the two copies
// that passes sanity_check_raw_super. Errors: the last copy's error, after
// "Can't find valid F2FS filesystem in %dth superblock" for each.
func (sbi *SuperBlock) readRawSuperBlock(t *kernel.Task) (*RawSuper, int, error) {
	var err error
	for block := 0; block < 2; block++ {
		blk := sbi.metaBlock(uint32(block))
		if blk == nil {
			sbi.err(t, "Unable to read %dth superblock", block+1)
			err = errno.EIO
			continue
		}
		s := DecodeRawSuper(blk[SuperOffset : SuperOffset+superSize])
		if err = sbi.sanityCheckRawSuper(t, s); err != nil {
			sbi.err(t, "Can't find valid F2FS filesystem in %dth superblock", block+1)
			continue
		}
		return s, block, nil
	}
	return nil, 0, err
}

// getCheckpointVersion is get_checkpoint_version: the checkpoint block at
// addr with a valid checksum. Errors: EIO past the device, EINVAL for a
// bad checksum offset or value (with the kernel's warning).
func (sbi *SuperBlock) getCheckpointVersion(t *kernel.Task, addr uint32) (*Checkpoint, error) {
	blk := sbi.metaBlock(addr)
	if blk == nil {
		return nil, errno.EIO
	}
	c := DecodeCheckpoint(blk)
	if c.ChecksumOffset < cpMinChksumOffset || c.ChecksumOffset > cpChksumOffset {
		sbi.warn(t, "invalid crc_offset: %d", c.ChecksumOffset)
		return nil, errno.EINVAL
	}
	if !c.CrcValid() {
		sbi.warn(t, "invalid crc value")
		return nil, errno.EINVAL
	}
	return c, nil
}

// validateCheckpoint is validate_checkpoint: a pack whose first and last
// blocks are valid and of the same version.
func (sbi *SuperBlock) validateCheckpoint(t *kernel.Task, addr uint32, bps uint32) *Checkpoint {
	c, err := sbi.getCheckpointVersion(t, addr)
	if err != nil {
		return nil
	}
	if c.CpPackTotalBlockCount > bps || c.CpPackTotalBlockCount <= f2fsCpPacks {
		sbi.warn(t, "invalid cp_pack_total_block_count:%d", c.CpPackTotalBlockCount)
		return nil
	}
	c2, err := sbi.getCheckpointVersion(t, addr+c.CpPackTotalBlockCount-1)
	if err != nil || c2.CheckpointVer != c.CheckpointVer {
		return nil
	}
	return c
}

// verAfter is ver_after: a is newer than b (serial number arithmetic).
func verAfter(a, b uint64) bool { return int64(a-b) > 0 }

// getValidCheckpoint is f2fs_get_valid_checkpoint: the newer of the two
// valid packs, with the SIT bitmap of its payload blocks, then
// f2fs_sanity_check_ckpt. Errors: EFSCORRUPTED.
func (sbi *SuperBlock) getValidCheckpoint(t *kernel.Task, im *imageInfo) error {
	s := im.raw
	bps := s.BlocksPerSeg()
	cp1 := sbi.validateCheckpoint(t, s.CpBlkaddr, bps)
	cp2 := sbi.validateCheckpoint(t, s.CpBlkaddr+bps, bps)
	switch {
	case cp1 != nil && cp2 != nil:
		if verAfter(cp2.CheckpointVer, cp1.CheckpointVer) {
			im.ckpt, im.cpStart, im.cpPack = cp2, s.CpBlkaddr+bps, 2
		} else {
			im.ckpt, im.cpStart, im.cpPack = cp1, s.CpBlkaddr, 1
		}
	case cp1 != nil:
		im.ckpt, im.cpStart, im.cpPack = cp1, s.CpBlkaddr, 1
	case cp2 != nil:
		im.ckpt, im.cpStart, im.cpPack = cp2, s.CpBlkaddr+bps, 2
	default:
		return errno.EFSCORRUPTED
	}
	var payload []byte
	for i := uint32(0); i < s.CpPayload; i++ {
		b := sbi.metaBlock(im.cpStart + 1 + i)
		if b == nil {
			return errno.EFSCORRUPTED
		}
		payload = append(payload, b...)
	}
	if sbi.sanityCheckCkpt(t, im) {
		return errno.EFSCORRUPTED
	}
	c := im.ckpt
	im.natBitmap = append([]byte(nil), c.bitmapPtr(natBitmap, s.CpPayload, payload)[:c.NatVerBitmapBytesize]...)
	sb := c.bitmapPtr(sitBitmap, s.CpPayload, payload)
	if int(c.SitVerBitmapBytesize) > len(sb) {
		return errno.EFSCORRUPTED
	}
	im.sitBitmap = append([]byte(nil), sb[:c.SitVerBitmapBytesize]...)
	return nil
}

// sanityCheckCkpt is f2fs_sanity_check_ckpt: the layout, the block and
// node counts, the current segments, the bitmap sizes and the summary
// start. It returns true for a bad checkpoint, with the kernel's line.
func (sbi *SuperBlock) sanityCheckCkpt(t *kernel.Task, im *imageInfo) bool {
	s, c := im.raw, im.ckpt
	total := uint64(s.SegmentCount)
	fsmeta := uint64(s.SegmentCountCkpt) + uint64(s.SegmentCountSit) + uint64(s.SegmentCountNat) +
		uint64(c.RsvdSegmentCount) + uint64(s.SegmentCountSsa)
	if fsmeta >= total {
		return true
	}
	if !s.HasFeature(FeatRO) && (fsmeta < f2fsMinMetaSegments || c.OverprovSegmentCount == 0 || c.RsvdSegmentCount == 0) {
		sbi.err(t, "Wrong layout: check mkfs.f2fs version")
		return true
	}
	mainSegs := s.SegmentCountMain
	if c.UserBlockCount == 0 || c.UserBlockCount >= uint64(mainSegs)<<s.LogBlocksPerSeg {
		sbi.err(t, "Wrong user_block_count: %d", c.UserBlockCount)
		return true
	}
	if c.ValidBlockCount > c.UserBlockCount {
		sbi.err(t, "Wrong valid_user_blocks: %d, user_block_count: %d", c.ValidBlockCount, c.UserBlockCount)
		return true
	}
	availNodes := availNodeCount(s)
	if uint64(c.ValidNodeCount) > availNodes {
		sbi.err(t, "Wrong valid_node_count: %d, avail_node_count: %d", c.ValidNodeCount, availNodes)
		return true
	}
	bps := s.BlocksPerSeg()
	for i := 0; i < NrCursegNodeType; i++ {
		if c.CurNodeSegno[i] >= mainSegs || uint32(c.CurNodeBlkoff[i]) >= bps {
			return true
		}
		for j := i + 1; j < NrCursegNodeType; j++ {
			if c.CurNodeSegno[i] == c.CurNodeSegno[j] {
				sbi.err(t, "Node segment (%d, %d) has the same segno: %d", i, j, c.CurNodeSegno[i])
				return true
			}
		}
	}
	for i := 0; i < NrCursegDataType; i++ {
		if c.CurDataSegno[i] >= mainSegs || uint32(c.CurDataBlkoff[i]) >= bps {
			return true
		}
		for j := i + 1; j < NrCursegDataType; j++ {
			if c.CurDataSegno[i] == c.CurDataSegno[j] {
				sbi.err(t, "Data segment (%d, %d) has the same segno: %d", i, j, c.CurDataSegno[i])
				return true
			}
		}
	}
	for i := 0; i < NrCursegNodeType; i++ {
		for j := 0; j < NrCursegDataType; j++ {
			if c.CurNodeSegno[i] == c.CurDataSegno[j] {
				sbi.err(t, "Node segment (%d) and Data segment (%d) has the same segno: %d", i, j, c.CurNodeSegno[i])
				return true
			}
		}
	}
	sitSize := (s.SegmentCountSit / 2 << s.LogBlocksPerSeg) / 8
	natSize := (s.SegmentCountNat / 2 << s.LogBlocksPerSeg) / 8
	if c.SitVerBitmapBytesize != sitSize || c.NatVerBitmapBytesize != natSize {
		sbi.err(t, "Wrong bitmap size: sit: %d, nat:%d", c.SitVerBitmapBytesize, c.NatVerBitmapBytesize)
		return true
	}
	if s.CpPayload == 0 && !c.Flag(CpLargeNatBitmapFlag) && cpSitNatVersionBmOff+sitSize+natSize > c.ChecksumOffset {
		// The bitmaps overlap the checksum: no layout mkfs.f2fs writes.
		sbi.err(t, "Wrong bitmap size: sit: %d, nat:%d", c.SitVerBitmapBytesize, c.NatVerBitmapBytesize)
		return true
	}
	if c.CpPackStartSum < s.CpPayload+1 || c.CpPackStartSum > bps-1-nrCursegPersistType {
		sbi.err(t, "Wrong cp_pack_start_sum: %d", c.CpPackStartSum)
		return true
	}
	if c.CpPackTotalBlockCount < c.CpPackStartSum+1 {
		sbi.err(t, "Wrong cp_pack_start_sum: %d", c.CpPackStartSum)
		return true
	}
	if c.Flag(CpErrorFlag) {
		sbi.err(t, "A bug case: need to run fsck")
		return true
	}
	return false
}

// existNodeSummaries is __exist_node_summaries: a checkpoint made at
// umount (or fastboot) carries the node logs' summaries too.
func existNodeSummaries(c *Checkpoint) bool { return c.Flag(CpUmountFlag) || c.Flag(CpFastbootFlag) }

// sumBlkAddr is sum_blk_addr(sbi, base, type): the summary block of a
// log, counted back from the end of the checkpoint pack.
func (im *imageInfo) sumBlkAddr(base, typ int) uint32 {
	return im.cpStart + im.ckpt.CpPackTotalBlockCount - uint32(base+1) + uint32(typ)
}

// restoreCursegJournals is the journal part of restore_curseg_summaries:
// the NAT journal (in the hot data log's summary) and the SIT journal (in
// the cold data log's), from the compacted summary (read_compacted_summaries)
// or the normal ones (read_normal_summaries). Errors: EIO.
func (sbi *SuperBlock) restoreCursegJournals(im *imageInfo) error {
	c := im.ckpt
	if c.Flag(CpCompactSumFlag) {
		b := sbi.metaBlock(im.cpStart + c.CpPackStartSum)
		if b == nil {
			return errno.EIO
		}
		im.natJournal = decodeNatJournal(b[:SumJournalSize])
		im.sitJournal = decodeSitJournal(b[SumJournalSize : 2*SumJournalSize])
		return nil
	}
	base := NrCursegDataType
	if existNodeSummaries(c) {
		base = nrCursegPersistType
	}
	hot := sbi.metaBlock(im.sumBlkAddr(base, CursegHotData))
	cold := sbi.metaBlock(im.sumBlkAddr(base, CursegColdData))
	if hot == nil || cold == nil {
		return errno.EIO
	}
	im.natJournal = decodeNatJournal(hot[SumEntrySize : SumEntrySize+SumJournalSize])
	im.sitJournal = decodeSitJournal(cold[SumEntrySize : SumEntrySize+SumJournalSize])
	return nil
}

// currentNatAddr is current_nat_addr: the NAT block holding nid's entry,
// in the copy the NAT bitmap selects.
func (im *imageInfo) currentNatAddr(nid uint32) uint32 {
	blockOff := nid / NatEntryPerBlock
	segOff := blockOff >> im.raw.LogBlocksPerSeg
	addr := im.raw.NatBlkaddr + (segOff << im.raw.LogBlocksPerSeg << 1) + (blockOff & (im.blocksPerSeg - 1))
	if blockOff/8 < uint32(len(im.natBitmap)) && f2fsTestBit(blockOff, im.natBitmap) {
		addr += im.blocksPerSeg
	}
	return addr
}

// getNodeInfo is f2fs_get_node_info: nid's NAT entry, from the journal
// of the current checkpoint or from the NAT block. Errors: EIO.
func (sbi *SuperBlock) getNodeInfo(nid uint32) (NatEntry, error) {
	im := sbi.img
	for _, j := range im.natJournal {
		if j.Nid == nid {
			return j.NatEntry, nil
		}
	}
	b := sbi.metaBlock(im.currentNatAddr(nid))
	if b == nil {
		return NatEntry{}, errno.EIO
	}
	off := int(nid%NatEntryPerBlock) * natEntrySize
	return decodeNatEntry(b[off:]), nil
}

// currentSitAddr is current_sit_addr: the SIT block of segno in the copy
// the SIT bitmap selects.
func (im *imageInfo) currentSitAddr(segno uint32) uint32 {
	off := segno / SitEntryPerBlock
	addr := im.raw.SitBlkaddr + off
	if off/8 < uint32(len(im.sitBitmap)) && f2fsTestBit(off, im.sitBitmap) {
		addr += (im.raw.SegmentCountSit / 2) << im.raw.LogBlocksPerSeg
	}
	return addr
}

// buildSitEntries is build_sit_entries: every main segment's SIT entry,
// from its block or the journal. Errors: EIO, EFSCORRUPTED (a valid
// block count past the segment, check_block_count's "Mismatch valid
// blocks %d vs. %d").
func (sbi *SuperBlock) buildSitEntries(t *kernel.Task, im *imageInfo) error {
	n := im.raw.SegmentCountMain
	im.sit = make([]SitEntry, n)
	for segno := uint32(0); segno < n; segno++ {
		b := sbi.metaBlock(im.currentSitAddr(segno))
		if b == nil {
			return errno.EIO
		}
		im.sit[segno] = decodeSitEntry(b[int(segno%SitEntryPerBlock)*sitEntrySize:])
	}
	for _, j := range im.sitJournal {
		if j.Segno >= n {
			sbi.err(t, "Wrong journal entry on segno %d", j.Segno)
			return errno.EFSCORRUPTED
		}
		im.sit[j.Segno] = j.SitEntry
	}
	for segno := range im.sit {
		e := &im.sit[segno]
		valid := uint32(0)
		for _, b := range e.ValidMap {
			for ; b != 0; b &= b - 1 {
				valid++
			}
		}
		if e.ValidBlocks() > im.blocksPerSeg || valid != e.ValidBlocks() {
			sbi.err(t, "Mismatch valid blocks %d vs. %d", e.ValidBlocks(), valid)
			return errno.EFSCORRUPTED
		}
	}
	return nil
}

// loadImage reads what fill_super needs from an image: superblock,
// checkpoint, NAT and SIT. Errors: as the kernel's f2fs_fill_super
// returns them, with its log lines (EINVAL: no f2fs; EFSCORRUPTED: a bad
// superblock or checkpoint; EIO).
func (sbi *SuperBlock) loadImage(t *kernel.Task) (*imageInfo, error) {
	raw, block, err := sbi.readRawSuperBlock(t)
	if err != nil {
		return nil, err
	}
	im := &imageInfo{raw: raw, sbBlock: block, blocksPerSeg: raw.BlocksPerSeg(), mainBlkaddr: raw.MainBlkaddr}
	im.maxBlkaddr = raw.MainBlkaddr + raw.SegmentCountMain<<raw.LogBlocksPerSeg
	if uint64(im.maxBlkaddr) > uint64(sbi.Dev.Blocks()) {
		sbi.err(t, "Wrong block_count: device has %d blocks, main area ends at %d", sbi.Dev.Blocks(), im.maxBlkaddr)
		return nil, errno.EINVAL
	}
	if raw.HasFeature(FeatInodeChksum) {
		im.chksumSeed = f2fsChksum(^uint32(0), raw.UUID[:])
	}
	if err := sbi.getValidCheckpoint(t, im); err != nil {
		sbi.err(t, "Failed to get valid F2FS checkpoint")
		return nil, err
	}
	im.maxNid = NatEntryPerBlock * ((raw.SegmentCountNat / 2) << raw.LogBlocksPerSeg)
	if err := sbi.restoreCursegJournals(im); err != nil {
		sbi.err(t, "Failed to initialize F2FS segment manager (%d)", -errnoNum(err))
		return nil, err
	}
	if err := sbi.buildSitEntries(t, im); err != nil {
		sbi.err(t, "Failed to initialize F2FS segment manager (%d)", -errnoNum(err))
		return nil, err
	}
	return im, nil
}

// info and err log like f2fs_info and f2fs_err.
func (sbi *SuperBlock) info(t *kernel.Task, format string, args ...any) { sbi.warn(t, format, args...) }
func (sbi *SuperBlock) err(t *kernel.Task, format string, args ...any)  { sbi.warn(t, format, args...) }

// isValidBlkaddr is f2fs_is_valid_blkaddr(DATA_GENERIC): a block of the
// main area.
func (im *imageInfo) isValidBlkaddr(addr uint32) bool {
	return addr >= im.mainBlkaddr && addr < im.maxBlkaddr
}

// Node types of __get_node_folio (enum node_type, fs/f2fs/node.h).
const (
	nodeTypeRegular  = 0 // NODE_TYPE_REGULAR
	nodeTypeInode    = 1 // NODE_TYPE_INODE
	nodeTypeXattr    = 2 // NODE_TYPE_XATTR
	nodeTypeNonInode = 3 // NODE_TYPE_NON_INODE
	// xattrNodeOffset is XATTR_NODE_OFFSET, ofs_of_node of an xattr node.
	// (((unsigned int)-1) << OFFSET_BIT_SHIFT) >> OFFSET_BIT_SHIFT, in
	// 32 bits: 0x1fffffff.
	xattrNodeOffset = uint32(0xFFFFFFFF<<offsetBitShift&0xFFFFFFFF) >> offsetBitShift
)

// readNode is read_node_folio (__get_node_folio): node nid's block,
// through the NAT, checked: the inode checksum (EFSBADCRC) and the footer
// (sanity_check_node_footer for ntype: EFSCORRUPTED). Errors: ENOENT for
// a free nid, EFSCORRUPTED, EIO, EFSBADCRC.
func (sbi *SuperBlock) readNode(t *kernel.Task, nid uint32, ntype int) (Node, error) {
	im := sbi.img
	ni, err := sbi.getNodeInfo(nid)
	if err != nil {
		return nil, err
	}
	if ni.BlockAddr == NullAddr {
		return nil, errno.ENOENT
	}
	if ni.BlockAddr == NewAddr || !im.isValidBlkaddr(ni.BlockAddr) {
		sbi.warn(t, "f2fs_get_node_info: nid:%d blkaddr:%d is invalid, run fsck to fix.", nid, ni.BlockAddr)
		return nil, errno.EFSCORRUPTED
	}
	b := sbi.metaBlock(ni.BlockAddr)
	if b == nil {
		return nil, errno.EIO
	}
	n := Node(b)
	if enableInodeChksum(im.raw.Feature, n) {
		if prov, calc := n.InodeChecksum(), inodeChksum(im.chksumSeed, n); prov != calc {
			sbi.warn(t, "checksum invalid, nid = %d, ino_of_node = %x, %x vs. %x", nid, n.InoOfNode(), prov, calc)
			return nil, efsbadcrc
		}
	}
	bad := n.NidOfNode() != nid
	switch ntype {
	case nodeTypeInode:
		bad = bad || !n.IsInode()
	case nodeTypeXattr:
		bad = bad || n.OfsOfNode() != xattrNodeOffset
	case nodeTypeNonInode:
		bad = bad || n.IsInode()
	}
	if bad {
		ft := n.Footer()
		sbi.warn(t, "inconsistent node block, node_type:%d, nid:%d, node_footer[nid:%d,ino:%d,ofs:%d,cpver:%d,blkaddr:%d]",
			ntype, nid, ft.Nid, ft.Ino, n.OfsOfNode(), ft.CpVer, ft.NextBlkaddr)
		return nil, errno.EFSCORRUPTED
	}
	return n, nil
}

// options are the features of the image's superblock as the model's
// Options: encrypt, casefold with its encoding flags.
func (im *imageInfo) options() Options {
	s := im.raw
	o := Options{NoEncrypt: !s.HasFeature(FeatEncrypt)}
	if s.HasFeature(FeatCasefold) {
		o.Casefold = true
		o.Strict = s.EncodingFlags&EncStrictModeFL != 0
		o.NoCompatFallback = s.EncodingFlags&EncNoCompatFallbackFL != 0
	}
	return o
}

// newExtraIsize is the i_extra_isize of a new inode (f2fs_new_inode:
// F2FS_TOTAL_EXTRA_ATTR_SIZE with the extra_attr feature).
func (im *imageInfo) newExtraIsize() int {
	if im.raw.HasFeature(FeatExtraAttr) {
		return totalExtraAttrSize
	}
	return 0
}

// errnoNum is the number of an errno error, for log lines that print
// one (0 for another error).
func errnoNum(err error) int {
	var e syscall.Errno
	if errors.As(err, &e) {
		return int(e)
	}
	return 0
}
