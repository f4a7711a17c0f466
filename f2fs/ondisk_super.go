package f2fs

import (
	"encoding/binary"
	"hash/crc32"
)

// The on-disk superblock (struct f2fs_super_block, include/linux/f2fs_fs.h).
// Two copies live at byte F2FS_SUPER_OFFSET of blocks 0 and 1; the
// checksum (with the sb_checksum feature) is f2fs_crc32 of the bytes before
// crc.

// Superblock constants (include/linux/f2fs_fs.h).
const (
	// SuperMagic is F2FS_SUPER_MAGIC.
	SuperMagic = 0xF2F52010
	// SuperOffset is F2FS_SUPER_OFFSET, the superblock's byte offset in
	// blocks 0 and 1.
	SuperOffset = 1024
	// superSize is sizeof(struct f2fs_super_block).
	superSize = 3072
	// sbCrcOffset is offsetof(struct f2fs_super_block, crc).
	sbCrcOffset = 3068
	// MaxExtension is F2FS_MAX_EXTENSION.
	MaxExtension = 64
	// MaxDevices is MAX_DEVICES.
	MaxDevices = 8
	// VersionLen is VERSION_LEN.
	VersionLen = 256
	// reservedNodeNum is F2FS_RESERVED_NODE_NUM: nids 0, 1 (node) and 2
	// (meta) are never inodes.
	reservedNodeNum = 3
	// minLogSectorSize and maxLogSectorSize are F2FS_MIN/MAX_LOG_SECTOR_SIZE.
	minLogSectorSize = 9
	maxLogSectorSize = 12
	// blkSizeBits is F2FS_BLKSIZE_BITS.
	blkSizeBits = 12
	// NullAddr and NewAddr are NULL_ADDR and NEW_ADDR.
	NullAddr uint32 = 0
	NewAddr  uint32 = 0xFFFFFFFF
)

// Superblock feature bits (F2FS_FEATURE_* of fs/f2fs/f2fs.h).
const (
	FeatEncrypt             = 0x00000001
	FeatBlkzoned            = 0x00000002
	FeatAtomicWrite         = 0x00000004
	FeatExtraAttr           = 0x00000008
	FeatPrjQuota            = 0x00000010
	FeatInodeChksum         = 0x00000020
	FeatFlexibleInlineXattr = 0x00000040
	FeatQuotaIno            = 0x00000080
	FeatInodeCrtime         = 0x00000100
	FeatLostFound           = 0x00000200
	FeatVerity              = 0x00000400
	FeatSbChksum            = 0x00000800
	FeatCasefold            = 0x00001000
	FeatCompression         = 0x00002000
	FeatRO                  = 0x00004000
)

// F2FS_ENC_UTF8_12_1 is the only s_encoding (include/linux/f2fs_fs.h).
const encUTF8_12_1 = 1

// f2fsChksum is f2fs_chksum (fs/f2fs/f2fs.h): the kernel's "crc32" shash,
// crc32_le continued from crc, without the pre- and post-inversion of the
// IEEE CRC.
func f2fsChksum(crc uint32, p []byte) uint32 {
	return ^crc32.Update(^crc, crc32.IEEETable, p)
}

// f2fsCrc32 is f2fs_crc32: f2fs_chksum seeded with F2FS_SUPER_MAGIC, the
// checksum of the superblock, checkpoint and orphan blocks.
func f2fsCrc32(p []byte) uint32 { return f2fsChksum(SuperMagic, p) }

// RawSuper is struct f2fs_super_block, decoded: the fields the kernel
// reads, and Raw, the 3072 bytes as they are on disk.
type RawSuper struct {
	Magic              uint32
	MajorVer, MinorVer uint16
	LogSectorSize      uint32
	LogSectorsPerBlock uint32
	LogBlockSize       uint32
	LogBlocksPerSeg    uint32
	SegsPerSec         uint32
	SecsPerZone        uint32
	ChecksumOffset     uint32
	BlockCount         uint64
	SectionCount       uint32
	SegmentCount       uint32
	SegmentCountCkpt   uint32
	SegmentCountSit    uint32
	SegmentCountNat    uint32
	SegmentCountSsa    uint32
	SegmentCountMain   uint32
	Segment0Blkaddr    uint32
	CpBlkaddr          uint32
	SitBlkaddr         uint32
	NatBlkaddr         uint32
	SsaBlkaddr         uint32
	MainBlkaddr        uint32
	RootIno            uint32
	NodeIno            uint32
	MetaIno            uint32
	UUID               [16]byte
	ExtensionCount     uint32
	CpPayload          uint32
	Feature            uint32
	EncryptionLevel    uint8
	QfIno              [3]uint32
	HotExtCount        uint8
	Encoding           uint16
	EncodingFlags      uint16
	Crc                uint32
	// Raw is the superblock's bytes (struct f2fs_super_block).
	Raw [superSize]byte
}

// Byte offsets of struct f2fs_super_block's fields.
const (
	sbMagic           = 0
	sbMajorVer        = 4
	sbMinorVer        = 6
	sbLogSectorSize   = 8
	sbLogSectorsPerBl = 12
	sbLogBlockSize    = 16
	sbLogBlocksPerSeg = 20
	sbSegsPerSec      = 24
	sbSecsPerZone     = 28
	sbChecksumOffset  = 32
	sbBlockCount      = 36
	sbSectionCount    = 44
	sbSegmentCount    = 48
	sbSegCountCkpt    = 52
	sbSegCountSit     = 56
	sbSegCountNat     = 60
	sbSegCountSsa     = 64
	sbSegCountMain    = 68
	sbSegment0Blkaddr = 72
	sbCpBlkaddr       = 76
	sbSitBlkaddr      = 80
	sbNatBlkaddr      = 84
	sbSsaBlkaddr      = 88
	sbMainBlkaddr     = 92
	sbRootIno         = 96
	sbNodeIno         = 100
	sbMetaIno         = 104
	sbUUID            = 108
	sbVolumeName      = 124
	sbExtensionCount  = 1148
	sbExtensionList   = 1152
	sbCpPayload       = 1664
	sbVersion         = 1668
	sbInitVersion     = 1924
	sbFeature         = 2180
	sbEncryptionLevel = 2184
	sbEncryptPwSalt   = 2185
	sbDevs            = 2201
	sbQfIno           = 2745
	sbHotExtCount     = 2757
	sbEncoding        = 2758
	sbEncodingFlags   = 2760
	sbStopReason      = 2762
	sbErrors          = 2794
	sbCrc             = sbCrcOffset
)

// DecodeRawSuper decodes the 3072 bytes of a struct f2fs_super_block.
func DecodeRawSuper(b []byte) *RawSuper {
	s := &RawSuper{}
	copy(s.Raw[:], b)
	r := s.Raw[:]
	le := binary.LittleEndian
	s.Magic = le.Uint32(r[sbMagic:])
	s.MajorVer, s.MinorVer = le.Uint16(r[sbMajorVer:]), le.Uint16(r[sbMinorVer:])
	s.LogSectorSize = le.Uint32(r[sbLogSectorSize:])
	s.LogSectorsPerBlock = le.Uint32(r[sbLogSectorsPerBl:])
	s.LogBlockSize = le.Uint32(r[sbLogBlockSize:])
	s.LogBlocksPerSeg = le.Uint32(r[sbLogBlocksPerSeg:])
	s.SegsPerSec = le.Uint32(r[sbSegsPerSec:])
	s.SecsPerZone = le.Uint32(r[sbSecsPerZone:])
	s.ChecksumOffset = le.Uint32(r[sbChecksumOffset:])
	s.BlockCount = le.Uint64(r[sbBlockCount:])
	s.SectionCount = le.Uint32(r[sbSectionCount:])
	s.SegmentCount = le.Uint32(r[sbSegmentCount:])
	s.SegmentCountCkpt = le.Uint32(r[sbSegCountCkpt:])
	s.SegmentCountSit = le.Uint32(r[sbSegCountSit:])
	s.SegmentCountNat = le.Uint32(r[sbSegCountNat:])
	s.SegmentCountSsa = le.Uint32(r[sbSegCountSsa:])
	s.SegmentCountMain = le.Uint32(r[sbSegCountMain:])
	s.Segment0Blkaddr = le.Uint32(r[sbSegment0Blkaddr:])
	s.CpBlkaddr = le.Uint32(r[sbCpBlkaddr:])
	s.SitBlkaddr = le.Uint32(r[sbSitBlkaddr:])
	s.NatBlkaddr = le.Uint32(r[sbNatBlkaddr:])
	s.SsaBlkaddr = le.Uint32(r[sbSsaBlkaddr:])
	s.MainBlkaddr = le.Uint32(r[sbMainBlkaddr:])
	s.RootIno = le.Uint32(r[sbRootIno:])
	s.NodeIno = le.Uint32(r[sbNodeIno:])
	s.MetaIno = le.Uint32(r[sbMetaIno:])
	copy(s.UUID[:], r[sbUUID:])
	s.ExtensionCount = le.Uint32(r[sbExtensionCount:])
	s.CpPayload = le.Uint32(r[sbCpPayload:])
	s.Feature = le.Uint32(r[sbFeature:])
	s.EncryptionLevel = r[sbEncryptionLevel]
	for i := range s.QfIno {
		s.QfIno[i] = le.Uint32(r[sbQfIno+4*i:])
	}
	s.HotExtCount = r[sbHotExtCount]
	s.Encoding = le.Uint16(r[sbEncoding:])
	s.EncodingFlags = le.Uint16(r[sbEncodingFlags:])
	s.Crc = le.Uint32(r[sbCrc:])
	return s
}

// Encode writes the decoded fields back into Raw (the bytes of fields the
// model does not decode are kept) and, with the sb_checksum feature, the
// checksum; it returns Raw.
func (s *RawSuper) Encode() []byte {
	r := s.Raw[:]
	le := binary.LittleEndian
	le.PutUint32(r[sbMagic:], s.Magic)
	le.PutUint16(r[sbMajorVer:], s.MajorVer)
	le.PutUint16(r[sbMinorVer:], s.MinorVer)
	le.PutUint32(r[sbLogSectorSize:], s.LogSectorSize)
	le.PutUint32(r[sbLogSectorsPerBl:], s.LogSectorsPerBlock)
	le.PutUint32(r[sbLogBlockSize:], s.LogBlockSize)
	le.PutUint32(r[sbLogBlocksPerSeg:], s.LogBlocksPerSeg)
	le.PutUint32(r[sbSegsPerSec:], s.SegsPerSec)
	le.PutUint32(r[sbSecsPerZone:], s.SecsPerZone)
	le.PutUint32(r[sbChecksumOffset:], s.ChecksumOffset)
	le.PutUint64(r[sbBlockCount:], s.BlockCount)
	le.PutUint32(r[sbSectionCount:], s.SectionCount)
	le.PutUint32(r[sbSegmentCount:], s.SegmentCount)
	le.PutUint32(r[sbSegCountCkpt:], s.SegmentCountCkpt)
	le.PutUint32(r[sbSegCountSit:], s.SegmentCountSit)
	le.PutUint32(r[sbSegCountNat:], s.SegmentCountNat)
	le.PutUint32(r[sbSegCountSsa:], s.SegmentCountSsa)
	le.PutUint32(r[sbSegCountMain:], s.SegmentCountMain)
	le.PutUint32(r[sbSegment0Blkaddr:], s.Segment0Blkaddr)
	le.PutUint32(r[sbCpBlkaddr:], s.CpBlkaddr)
	le.PutUint32(r[sbSitBlkaddr:], s.SitBlkaddr)
	le.PutUint32(r[sbNatBlkaddr:], s.NatBlkaddr)
	le.PutUint32(r[sbSsaBlkaddr:], s.SsaBlkaddr)
	le.PutUint32(r[sbMainBlkaddr:], s.MainBlkaddr)
	le.PutUint32(r[sbRootIno:], s.RootIno)
	le.PutUint32(r[sbNodeIno:], s.NodeIno)
	le.PutUint32(r[sbMetaIno:], s.MetaIno)
	copy(r[sbUUID:], s.UUID[:])
	le.PutUint32(r[sbExtensionCount:], s.ExtensionCount)
	le.PutUint32(r[sbCpPayload:], s.CpPayload)
	le.PutUint32(r[sbFeature:], s.Feature)
	r[sbEncryptionLevel] = s.EncryptionLevel
	for i, q := range s.QfIno {
		le.PutUint32(r[sbQfIno+4*i:], q)
	}
	r[sbHotExtCount] = s.HotExtCount
	le.PutUint16(r[sbEncoding:], s.Encoding)
	le.PutUint16(r[sbEncodingFlags:], s.EncodingFlags)
	if s.Feature&FeatSbChksum != 0 {
		s.Crc = f2fsCrc32(r[:sbCrcOffset])
	}
	le.PutUint32(r[sbCrc:], s.Crc)
	return r
}

// HasFeature is F2FS_HAS_FEATURE.
func (s *RawSuper) HasFeature(f uint32) bool { return s.Feature&f != 0 }

// BlocksPerSeg is 1 << log_blocks_per_seg.
func (s *RawSuper) BlocksPerSeg() uint32 { return 1 << s.LogBlocksPerSeg }

// Version returns the kernel version string mkfs recorded (version[]).
func (s *RawSuper) Version() string { return cstr(s.Raw[sbVersion : sbVersion+VersionLen]) }

// cstr is a NUL-terminated string in a fixed-size field.
func cstr(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// FeatureNames returns the names of the feature bits set, in bit order,
// as fsck.f2fs and dump.f2fs print them.
func FeatureNames(feat uint32) []string {
	names := []string{"encrypt", "blkzoned", "atomic_write", "extra_attr", "project_quota",
		"inode_checksum", "flexible_inline_xattr", "quota_ino", "inode_crtime", "lost_found",
		"verity", "sb_checksum", "casefold", "compression", "ro"}
	var out []string
	for i, n := range names {
		if feat&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// Clone returns a copy of s.
func (s *RawSuper) Clone() *RawSuper {
	c := *s
	return &c
}
