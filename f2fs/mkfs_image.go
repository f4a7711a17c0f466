package f2fs

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// vfslab's mkfs.f2fs on a fixed-size device: the layout f2fs-tools 1.15
// writes for that size (mkfs/f2fs_format.c f2fs_prepare_super_block,
// f2fs_write_check_point_pack, f2fs_create_root_dir,
// f2fs_write_super_block), for a single regular device with 512-byte
// sectors, one segment per section and section per zone, no quota and no
// lost+found. Deviations: the UUID and the checkpoint version are derived
// from the device size and the arguments (mkfs.f2fs draws them at
// random) unless -U gives the UUID, the times are 0, and the version
// strings name vfslab.

// mkfsVersion is what the superblock's version and init_version record.
const mkfsVersion = "Linux version 6.12.0-vfslab (vfslab mkfs.f2fs, f2fs-tools 1.15 layout)"

// mediaExtensions and hotExtensions are the default extension lists of
// mkfs.f2fs 1.15 (media_ext_lists, hot_ext_lists without WITH_ANDROID):
// cold and hot file name extensions.
var (
	mediaExtensions = []string{"mp", "wm", "og", "jp", "avi", "m4v", "m4p", "mkv", "mov", "webm",
		"wav", "m4a", "3gp", "opus", "flac", "gif", "png", "svg", "webp", "jar", "deb", "iso", "gz",
		"xz", "zst", "pdf", "pyc", "ttc", "ttf", "exe", "apk", "cnt", "exo", "odex", "vdex", "so"}
	hotExtensions = []string{"db", "vmdk", "vdi", "qcow2"}
)

// imageMkfsConfig is what mkfs.f2fs's arguments select.
type imageMkfsConfig struct {
	feature       uint32
	encodingFlags uint16
	uuid          *[16]byte
	// sectors is the operand after the device, mkfs.f2fs's
	// wanted_total_sectors (512-byte sectors; 0: the whole device).
	sectors uint64
}

// parseImageMkfsArgs reads mkfs.f2fs's arguments for a real layout: -O
// with the features the model writes (encrypt, casefold, extra_attr,
// inode_checksum, sb_checksum, inode_crtime), -C utf8[:strict,hashonly],
// -U UUID, and -q and -f, which change nothing here. Errors name the bad
// argument, as mkfs.f2fs words them.
func parseImageMkfsArgs(args []string) (imageMkfsConfig, error) {
	var c imageMkfsConfig
	names := map[string]uint32{"encrypt": FeatEncrypt, "casefold": FeatCasefold, "extra_attr": FeatExtraAttr,
		"inode_checksum": FeatInodeChksum, "sb_checksum": FeatSbChksum, "inode_crtime": FeatInodeCrtime}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") && c.sectors == 0 {
			// f2fs_parse_options: atoll of the operand; a count that
			// is not a number reads as 0, the whole device.
			n, _ := strconv.ParseUint(a, 10, 64)
			c.sectors = n
			continue
		}
		switch a {
		case "-q", "-f":
			continue
		case "-O", "-C", "-U":
			if i+1 >= len(args) {
				return c, fmt.Errorf("mkfs.f2fs: option requires an argument -- '%s'", a[1:])
			}
			i++
		default:
			return c, fmt.Errorf("mkfs.f2fs: invalid option -- '%s'", strings.TrimPrefix(a, "-"))
		}
		v := args[i]
		switch a {
		case "-O":
			for _, f := range strings.Split(v, ",") {
				if f == "" {
					continue
				}
				bit, ok := names[f]
				if !ok {
					return c, fmt.Errorf("mkfs.f2fs: Error: Wrong features %s", f)
				}
				c.feature |= bit
			}
		case "-C":
			enc, flags, _ := strings.Cut(v, ":")
			if enc != "utf8" {
				return c, fmt.Errorf("mkfs.f2fs: Unknown encoding : %s", enc)
			}
			c.feature |= FeatCasefold
			for _, f := range strings.Split(flags, ",") {
				switch f {
				case "strict":
					c.encodingFlags |= EncStrictModeFL
				case "hashonly":
					c.encodingFlags |= EncNoCompatFallbackFL
				case "":
				default:
					return c, fmt.Errorf("mkfs.f2fs: Unknown flag : %s", f)
				}
			}
		case "-U":
			u, ok := parseUUID(v)
			if !ok {
				return c, fmt.Errorf("mkfs.f2fs: Error: supplied string is not a valid UUID")
			}
			c.uuid = &u
		}
	}
	if c.feature&(FeatInodeChksum|FeatInodeCrtime) != 0 && c.feature&FeatExtraAttr == 0 {
		return c, fmt.Errorf("mkfs.f2fs: Error: Wrong features: extra_attr is needed")
	}
	return c, nil
}

// parseUUID reads a UUID in its 36-character form.
func parseUUID(s string) ([16]byte, bool) {
	var u [16]byte
	h := strings.ReplaceAll(s, "-", "")
	if len(s) != 36 || len(h) != 32 {
		return u, false
	}
	for i := 0; i < 16; i++ {
		var b byte
		for _, ch := range h[2*i : 2*i+2] {
			switch {
			case ch >= '0' && ch <= '9':
				b = b<<4 | byte(ch-'0')
			case ch >= 'a' && ch <= 'f':
				b = b<<4 | byte(ch-'a'+10)
			case ch >= 'A' && ch <= 'F':
				b = b<<4 | byte(ch-'A'+10)
			default:
				return u, false
			}
		}
		u[i] = b
	}
	return u, true
}

// bestOverprovision is get_best_overprovision of mkfs.f2fs 1.15: the
// overprovision ratio (percent) that leaves the most user space, with
// reserved segments of (2 * (100 / ovp + 1) + 6) per section, tried in
// steps of 5 from 10 for fewer than 256 main segments, else of 0.01 from
// 0.01 (the same float64 sums as the C doubles).
func bestOverprovision(mainSegs uint32) float64 {
	candidate, end, diff := 10.0, 95.0, 5.0
	if mainSegs >= 256 {
		candidate, end, diff = 0.01, 10.0, 0.01
	}
	var maxOvp, maxSpace float64
	for ; candidate <= end; candidate += diff {
		reserved := (2*(100/candidate+1) + NrCursegType) * 1
		ovp := (float64(mainSegs) - reserved) * candidate / 100
		space := float64(mainSegs) - reserved - ovp
		if maxSpace < space {
			maxSpace, maxOvp = space, candidate
		}
	}
	return maxOvp
}

// imageLayout is f2fs_prepare_super_block and the counts of
// f2fs_write_check_point_pack: the superblock and the checkpoint's
// geometry for a device of totalSectors 512-byte sectors.
type imageLayout struct {
	sb            *RawSuper
	reserved      uint32
	overprov      uint32
	freeSegs      uint32
	userBlocks    uint64
	curSeg        [NrCursegType]uint32
	ovpRatio      float64
	sitBitmapSize uint32
	natBitmapSize uint32
}

// prepareImageLayout computes the layout. Errors: EINVAL with mkfs.f2fs's
// "Device size is not sufficient for F2FS volume" for a device too small,
// and for one too large for the model (32 GiB and more: a cp_payload or
// a capped NAT).
func prepareImageLayout(totalSectors uint64, c imageMkfsConfig) (*imageLayout, error) {
	const bps = 512
	s := &RawSuper{Magic: SuperMagic, MajorVer: 1, MinorVer: 15, LogSectorSize: 9, LogSectorsPerBlock: 3,
		LogBlockSize: blkSizeBits, LogBlocksPerSeg: 9, SegsPerSec: 1, SecsPerZone: 1}
	tooSmall := fmt.Errorf("mkfs.f2fs: Error: Device size is not sufficient for F2FS volume: %w", errno.EINVAL)
	if totalSectors*512 >= 32<<30 {
		return nil, fmt.Errorf("mkfs.f2fs: devices of 32 GiB and more are not modelled: %w", errno.EINVAL)
	}
	s.BlockCount = totalSectors >> 3
	const zoneBytes = BlockSize * bps
	zoneAlign := uint64(2*BlockSize+zoneBytes-1) / zoneBytes * zoneBytes
	if totalSectors*512 < zoneAlign+f2fsMinSegments*zoneBytes {
		return nil, tooSmall
	}
	s.Segment0Blkaddr = uint32(zoneAlign / BlockSize)
	s.CpBlkaddr = s.Segment0Blkaddr
	s.SegmentCount = uint32((totalSectors*512 - zoneAlign) / zoneBytes)
	s.SegmentCountCkpt = 2
	s.SitBlkaddr = s.Segment0Blkaddr + s.SegmentCountCkpt*bps
	blocksForSit := (s.SegmentCount + SitEntryPerBlock - 1) / SitEntryPerBlock
	sitSegs := (blocksForSit + bps - 1) / bps
	s.SegmentCountSit = sitSegs * 2
	s.NatBlkaddr = s.SitBlkaddr + s.SegmentCountSit*bps
	valid := (s.SegmentCount - (s.SegmentCountCkpt + s.SegmentCountSit)) * bps
	blocksForNat := (valid + NatEntryPerBlock - 1) / NatEntryPerBlock
	s.SegmentCountNat = 2 * ((blocksForNat + bps - 1) / bps)
	s.SsaBlkaddr = s.NatBlkaddr + s.SegmentCountNat*bps
	valid = (s.SegmentCount - (s.SegmentCountCkpt + s.SegmentCountSit + s.SegmentCountNat)) * bps
	blocksForSsa := valid/bps + 1
	s.SegmentCountSsa = (blocksForSsa + bps - 1) / bps
	meta := s.SegmentCountCkpt + s.SegmentCountSit + s.SegmentCountNat + s.SegmentCountSsa
	s.MainBlkaddr = s.Segment0Blkaddr + meta*bps
	if s.SegmentCount <= meta {
		return nil, tooSmall
	}
	totalZones := s.SegmentCount - meta
	s.SectionCount = totalZones
	s.SegmentCountMain = totalZones
	l := &imageLayout{sb: s}
	l.ovpRatio = bestOverprovision(s.SegmentCountMain)
	if l.ovpRatio == 0 {
		return nil, tooSmall
	}
	l.reserved = uint32((2*(100/l.ovpRatio+1) + NrCursegType) * 1)
	if s.SegmentCount < f2fsMinSegments || s.SegmentCountMain < NrCursegType || s.SegmentCountMain-NrCursegType < l.reserved || totalZones <= 6 {
		return nil, tooSmall
	}
	l.overprov = uint32(float64(s.SegmentCountMain-l.reserved)*l.ovpRatio/100) + l.reserved
	if s.SegmentCountMain <= l.overprov {
		return nil, fmt.Errorf("mkfs.f2fs: Error: Not enough segments to create F2FS Volume: %w", errno.EINVAL)
	}
	l.freeSegs = s.SegmentCountMain - NrCursegType
	l.userBlocks = uint64(l.freeSegs+NrCursegType-l.overprov) * bps
	// The current segments (non-heap, non-zoned).
	lastZone := func(n uint32) uint32 { return n - 1 }
	cs := &l.curSeg
	cs[CursegHotNode], cs[CursegWarmNode], cs[CursegColdNode], cs[CursegHotData] = 0, 1, 2, 3
	cs[CursegColdData] = max(lastZone(totalZones>>2), cs[CursegHotData]+1)
	cs[CursegWarmData] = max(lastZone(totalZones>>1), cs[CursegColdData]+1)
	// verify_cur_segs
	dup := false
	for i := 0; i < NrCursegType; i++ {
		for j := i + 1; j < NrCursegType; j++ {
			dup = dup || cs[i] == cs[j]
		}
	}
	if dup {
		for i := range cs {
			cs[i] = uint32(i)
		}
	}
	for i, e := range mediaExtensions {
		copy(s.Raw[sbExtensionList+8*i:], e)
	}
	for i, e := range hotExtensions {
		copy(s.Raw[sbExtensionList+8*(len(mediaExtensions)+i):], e)
	}
	s.ExtensionCount = uint32(len(mediaExtensions))
	s.HotExtCount = uint8(len(hotExtensions))
	s.RootIno, s.NodeIno, s.MetaIno = RootIno, 1, 2
	copy(s.Raw[sbVersion:sbVersion+VersionLen], mkfsVersion)
	copy(s.Raw[sbInitVersion:sbInitVersion+VersionLen], mkfsVersion)
	s.Feature = c.feature
	if c.feature&FeatCasefold != 0 {
		s.Encoding, s.EncodingFlags = encUTF8_12_1, c.encodingFlags
	}
	if c.feature&FeatSbChksum != 0 {
		s.ChecksumOffset = sbCrcOffset
	}
	l.sitBitmapSize = (s.SegmentCountSit / 2 << s.LogBlocksPerSeg) / 8
	l.natBitmapSize = (s.SegmentCountNat / 2 << s.LogBlocksPerSeg) / 8
	return l, nil
}

// calcExtraIsize is calc_extra_isize: the extra attributes mkfs.f2fs gives
// its inodes, up to the last field a feature needs.
func calcExtraIsize(feature uint32) int {
	size := iProjid
	if feature&FeatPrjQuota != 0 {
		size = iInodeChecksum
	}
	if feature&FeatInodeChksum != 0 {
		size = iCrtime
	}
	if feature&FeatInodeCrtime != 0 {
		size = inodeIAddrOff + 24 // offsetof(struct f2fs_inode, i_compr_blocks)
	}
	return size - inodeIAddrOff
}

// mkfsImage is mkfs.f2fs on a fixed-size device: the whole device is
// discarded (zeroed, as mkfs.f2fs's trim leaves an image), then the
// superblocks, the two checkpoint packs with the compacted data summary
// and the NAT bits, the root inode and its dentry block, the NAT block of
// the reserved nids. Errors: the arguments', EINVAL (a device too small
// or too large), EROFS on a read-only device.
func mkfsImage(t *kernel.Task, dev *vfs.BlockDevice, args []string) error {
	if dev.ReadOnly() {
		return errno.EROFS
	}
	c, err := parseImageMkfsArgs(args)
	if err != nil {
		return err
	}
	sectors := uint64(dev.Size()) / 512
	// f2fs_get_device_info: a wanted size under the device's is the
	// volume's size; a larger one is ignored.
	if c.sectors != 0 && c.sectors < sectors {
		sectors = c.sectors
	}
	l, err := prepareImageLayout(sectors, c)
	if err != nil {
		return err
	}
	s := l.sb
	h := sha256.Sum256([]byte(fmt.Sprintf("vfslab mkfs.f2fs %d %q", dev.Size(), args)))
	if c.uuid != nil {
		s.UUID = *c.uuid
	} else {
		copy(s.UUID[:], h[:16])
		s.UUID[6] = s.UUID[6]&0x0f | 0x40 // a version 4 UUID, as uuid_generate makes
		s.UUID[8] = s.UUID[8]&0x3f | 0x80
	}
	// The device discarded (f2fs_trim_devices, whose discard zeroes):
	// every block reads as zeroes and, on the sparse device, holds no
	// memory.
	if err := dev.Discard(0, int64(sectors*512)/BlockSize*BlockSize); err != nil {
		return err
	}
	const bps = 512
	main := s.MainBlkaddr
	rootNode := main + l.curSeg[CursegHotNode]*bps
	rootData := main + l.curSeg[CursegHotData]*bps

	// The root inode (f2fs_write_root_inode).
	n := Node(dev.Block(rootNode))
	n.put16(iMode, 0x41ed)
	n.put32(iLinks, 2)
	n.put64(iSize, BlockSize)
	n.put64(iBlocks, 2)
	n.put32(iCurrentDepth, 1)
	extra := 0
	if c.feature&FeatExtraAttr != 0 {
		extra = calcExtraIsize(c.feature)
		n[iInline] = ExtraAttr
		n.put16(iExtraIsize, uint16(extra))
	}
	n.SetAddr(true, extra/4, rootData)
	n.SetFooter(Footer{Nid: RootIno, Ino: RootIno, CpVer: 1, NextBlkaddr: rootNode + 1})
	if c.feature&FeatInodeChksum != 0 {
		n.put32(iInodeChecksum, inodeChksum(f2fsChksum(^uint32(0), s.UUID[:]), n))
	}
	// Its dentry block (f2fs_add_default_dentry_root).
	d := MakeDentryPtrBlock(dev.Block(rootData))
	d.UpdateDentry(RootIno, SIfdir, []byte("."), 0, 0)
	d.UpdateDentry(RootIno, SIfdir, []byte(".."), 0, 1)
	// The NAT block of nids 1 to 3 (f2fs_update_nat_root).
	nat := dev.Block(s.NatBlkaddr)
	NatEntry{Ino: RootIno, BlockAddr: rootNode}.put(nat[RootIno*natEntrySize:])
	NatEntry{Ino: 1, BlockAddr: 1}.put(nat[1*natEntrySize:])
	NatEntry{Ino: 2, BlockAddr: 1}.put(nat[2*natEntrySize:])

	// The checkpoint (f2fs_write_check_point_pack).
	cp := &Checkpoint{CheckpointVer: binary.LittleEndian.Uint64(h[16:]) | 1}
	cp.CheckpointVer &= 0x7fffffff // rand() | 1
	for i := 0; i < MaxActiveNodeLogs; i++ {
		cp.CurNodeSegno[i], cp.CurDataSegno[i] = ^uint32(0), ^uint32(0)
	}
	cp.CurNodeSegno[0], cp.CurNodeSegno[1], cp.CurNodeSegno[2] = l.curSeg[CursegHotNode], l.curSeg[CursegWarmNode], l.curSeg[CursegColdNode]
	cp.CurDataSegno[0], cp.CurDataSegno[1], cp.CurDataSegno[2] = l.curSeg[CursegHotData], l.curSeg[CursegWarmData], l.curSeg[CursegColdData]
	cp.CurNodeBlkoff[0], cp.CurDataBlkoff[0] = 1, 1
	cp.ValidBlockCount = 2
	cp.RsvdSegmentCount = l.reserved
	cp.OverprovSegmentCount = l.overprov
	cp.FreeSegmentCount = l.freeSegs
	cp.UserBlockCount = l.userBlocks
	cp.CpPackTotalBlockCount = 6 + s.CpPayload
	natBitsBytes := s.SegmentCountNat << 5
	natBitsBlocks := (natBitsBytes<<1 + 8 + BlockSize - 1) / BlockSize
	flags := uint32(CpUmountFlag | CpCompactSumFlag | CpTrimmedFlag)
	if cp.CpPackTotalBlockCount <= bps-natBitsBlocks {
		flags |= CpNatBitsFlag
	}
	cp.CkptFlags = flags
	cp.CpPackStartSum = 1 + s.CpPayload
	cp.ValidNodeCount, cp.ValidInodeCount = 1, 1
	cp.NextFreeNid = RootIno + 1
	cp.SitVerBitmapBytesize, cp.NatVerBitmapBytesize = l.sitBitmapSize, l.natBitmapSize
	cp.ChecksumOffset = cpChksumOffset
	cpBlk := cp.Encode()
	seg0 := s.Segment0Blkaddr
	copy(dev.Block(seg0), cpBlk)
	// The compacted data summary: NAT journal, SIT journal, the hot data
	// log's one entry.
	sum := dev.Block(seg0 + 1)
	encodeNatJournal(sum, []NatJournalEntry{{Nid: RootIno, NatEntry: NatEntry{Ino: RootIno, BlockAddr: rootNode}}})
	sits := make([]SitJournalEntry, NrCursegType)
	types := []int{CursegHotNode, CursegWarmNode, CursegColdNode, CursegHotData, CursegWarmData, CursegColdData}
	for i, typ := range types {
		sits[i] = SitJournalEntry{Segno: l.curSeg[typ], SitEntry: SitEntry{Vblocks: uint16(typ) << SitVblocksShift}}
		if typ == CursegHotNode || typ == CursegHotData {
			sits[i].Vblocks |= 1
			f2fsSetBit(0, sits[i].ValidMap[:])
		}
	}
	encodeSitJournal(sum[SumJournalSize:], sits)
	Summary{Nid: RootIno}.put(sum[2*SumJournalSize:])
	// The node logs' summaries.
	for i := uint32(0); i < NrCursegNodeType; i++ {
		var sb SummaryBlock
		sb.EntryType = SumTypeNode
		if i == 0 {
			sb.Entries[0] = Summary{Nid: RootIno}
		}
		sb.Encode(dev.Block(seg0 + 2 + i))
	}
	copy(dev.Block(seg0+5), cpBlk)
	if flags&CpNatBitsFlag != 0 {
		bits := make([]byte, natBitsBlocks*BlockSize)
		// The checkpoint's version and CRC (get_cp_crc).
		binary.LittleEndian.PutUint64(bits, cp.CheckpointVer|uint64(binary.LittleEndian.Uint32(cpBlk[cpChksumOffset:]))<<32)
		empty := bits[8+natBitsBytes : 8+2*natBitsBytes]
		for i := range empty {
			empty[i] = 0xff
		}
		empty[0] &^= 1 // NAT block 0 holds the root (test_and_clear_bit_le)
		for i := uint32(0); i < natBitsBlocks; i++ {
			copy(dev.Block(seg0+bps-natBitsBlocks+i), bits[i*BlockSize:])
		}
	}
	// Pack 2: version 0.
	cp.CheckpointVer = 0
	cp2 := cp.Encode()
	copy(dev.Block(seg0+bps), cp2)
	copy(dev.Block(seg0+bps+cp.CpPackTotalBlockCount-1), cp2)
	// The superblocks.
	raw := s.Encode()
	copy(dev.Block(0)[SuperOffset:], raw)
	copy(dev.Block(1)[SuperOffset:], raw)
	return nil
}

// mkfsDevice is Type.Mkfs: on a fixed-size device the real layout
// (mkfsImage; the device then records no vfslab features, so that
// fill_super reads the superblock), on a growing device vfslab's own.
func mkfsDevice(t *kernel.Task, dev *vfs.BlockDevice, args []string) error {
	if dev.Fixed() {
		if err := mkfsImage(t, dev, args); err != nil {
			return err
		}
		dev.SetSuper(vfs.DeviceSuper{})
		return nil
	}
	return mkfs(t, dev, args)
}
