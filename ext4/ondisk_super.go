package ext4

import (
	"encoding/binary"
)

// The on-disk superblock and group descriptors (fs/ext4/ext4.h struct
// ext4_super_block and struct ext4_group_desc; e2fsprogs
// lib/ext2fs/ext2_fs.h). The model keeps the raw bytes and reads and
// writes fields at their offsets, so that a field it does not interpret
// survives a write back unchanged.

// Superblock location and magic.
const (
	// SuperblockOffset is the byte offset of the primary superblock
	// (EXT4_MIN_BLOCK_SIZE: block 1 of a 1 KiB filesystem, within block 0
	// otherwise).
	SuperblockOffset = 1024
	// SuperblockSize is sizeof(struct ext4_super_block).
	SuperblockSize = 1024
	// SuperMagic is EXT4_SUPER_MAGIC.
	SuperMagic = 0xEF53
	// GoodOldInodeSize is EXT4_GOOD_OLD_INODE_SIZE.
	GoodOldInodeSize = 128
	// MinDescSize64bit is EXT4_MIN_DESC_SIZE_64BIT; MinDescSize is
	// EXT4_MIN_DESC_SIZE.
	MinDescSize64bit = 64
	MinDescSize      = 32
)

// Offsets of the ext4_super_block fields the model uses.
const (
	sInodesCount        = 0x00
	sBlocksCountLo      = 0x04
	sRBlocksCountLo     = 0x08
	sFreeBlocksCountLo  = 0x0C
	sFreeInodesCount    = 0x10
	sFirstDataBlock     = 0x14
	sLogBlockSize       = 0x18
	sLogClusterSize     = 0x1C
	sBlocksPerGroup     = 0x20
	sClustersPerGroup   = 0x24
	sInodesPerGroup     = 0x28
	sMtime              = 0x2C
	sWtime              = 0x30
	sMntCount           = 0x34
	sMaxMntCount        = 0x36
	sMagic              = 0x38
	sState              = 0x3A
	sRevLevel           = 0x4C
	sFirstIno           = 0x54
	sInodeSize          = 0x58
	sFeatureCompat      = 0x5C
	sFeatureIncompat    = 0x60
	sFeatureRoCompat    = 0x64
	sUUID               = 0x68
	sVolumeName         = 0x78 // s_volume_name[16]
	sReservedGdtBlocks  = 0xCE
	sJournalInum        = 0xE0
	sHashSeed           = 0xEC
	sDefHashVersion     = 0xFC
	sDescSize           = 0xFE
	sMkfsTime           = 0x108
	sBlocksCountHi      = 0x150
	sFreeBlocksCountHi  = 0x158
	sMinExtraIsize      = 0x15C
	sWantExtraIsize     = 0x15E
	sFlags              = 0x160
	sLogGroupsPerFlex   = 0x174
	sChecksumType       = 0x175
	sEncryptionLevel    = 0x176
	sKbytesWritten      = 0x178
	sOverheadClusters   = 0x248
	sBackupBgs          = 0x24C
	sEncryptAlgos       = 0x254
	sLpfIno             = 0x268
	sChecksumSeed       = 0x270
	sEncoding           = 0x27C
	sEncodingFlags      = 0x27E
	sOrphanFileInum     = 0x280
	sChecksum           = 0x3FC
	superChecksumOffset = sChecksum
)

// Superblock states (s_state) and flags (s_flags).
const (
	ValidFS  = 0x0001 // EXT4_VALID_FS: cleanly unmounted
	ErrorFS  = 0x0002 // EXT4_ERROR_FS
	OrphanFS = 0x0004 // EXT4_ORPHAN_FS

	FlagsSignedHash   = 0x0001 // EXT2_FLAGS_SIGNED_HASH
	FlagsUnsignedHash = 0x0002 // EXT2_FLAGS_UNSIGNED_HASH
	FlagsTestFilesys  = 0x0004 // EXT2_FLAGS_TEST_FILESYS

	// ChecksumTypeCrc32c is EXT4_CRC32C_CHKSUM, s_checksum_type.
	ChecksumTypeCrc32c = 1
	// EncUTF8_12_1 is EXT4_ENC_UTF8_12_1, s_encoding.
	EncUTF8_12_1 = 1
)

// Compatible features (s_feature_compat, EXT4_FEATURE_COMPAT_*).
const (
	CompatDirPrealloc  uint32 = 0x0001
	CompatImagicInodes uint32 = 0x0002
	CompatHasJournal   uint32 = 0x0004
	CompatExtAttr      uint32 = 0x0008
	CompatResizeInode  uint32 = 0x0010
	CompatDirIndex     uint32 = 0x0020
	CompatSparseSuper2 uint32 = 0x0200
	CompatFastCommit   uint32 = 0x0400
	CompatStableInodes uint32 = 0x0800
	CompatOrphanFile   uint32 = 0x1000
)

// Read-only compatible features (s_feature_ro_compat).
const (
	RoCompatSparseSuper   uint32 = 0x0001
	RoCompatLargeFile     uint32 = 0x0002
	RoCompatBtreeDir      uint32 = 0x0004
	RoCompatHugeFile      uint32 = 0x0008
	RoCompatGdtCsum       uint32 = 0x0010
	RoCompatDirNlink      uint32 = 0x0020
	RoCompatExtraIsize    uint32 = 0x0040
	RoCompatQuota         uint32 = 0x0100
	RoCompatBigalloc      uint32 = 0x0200
	RoCompatMetadataCsum  uint32 = 0x0400
	RoCompatReadonly      uint32 = 0x1000
	RoCompatProject       uint32 = 0x2000
	RoCompatVerity        uint32 = 0x8000
	RoCompatOrphanPresent uint32 = 0x10000
)

// Incompatible features (s_feature_incompat).
const (
	IncompatCompression uint32 = 0x0001
	IncompatFiletype    uint32 = 0x0002
	IncompatRecover     uint32 = 0x0004
	IncompatJournalDev  uint32 = 0x0008
	IncompatMetaBg      uint32 = 0x0010
	IncompatExtents     uint32 = 0x0040
	Incompat64bit       uint32 = 0x0080
	IncompatMMP         uint32 = 0x0100
	IncompatFlexBg      uint32 = 0x0200
	IncompatEAInode     uint32 = 0x0400
	IncompatDirdata     uint32 = 0x1000
	IncompatCsumSeed    uint32 = 0x2000
	IncompatLargedir    uint32 = 0x4000
	IncompatInlineData  uint32 = 0x8000
	IncompatEncrypt     uint32 = 0x10000
	IncompatCasefold    uint32 = 0x20000
)

// The features the kernel knows (EXT4_FEATURE_INCOMPAT_SUPP and
// EXT4_FEATURE_RO_COMPAT_SUPP), and the subsets the model implements:
// an image with an incompatible feature outside the model's set is refused
// as the kernel refuses one outside its own (meta_bg, mmp, ea_inode,
// inline_data are the kernel's but not the model's), and one with a
// read-only compatible feature outside the model's set mounts read-only
// only (quota, bigalloc, project, verity).
const (
	IncompatSupp = IncompatFiletype | IncompatRecover | IncompatMetaBg | IncompatExtents | Incompat64bit |
		IncompatFlexBg | IncompatEAInode | IncompatMMP | IncompatInlineData | IncompatEncrypt |
		IncompatCasefold | IncompatCsumSeed | IncompatLargedir
	RoCompatSupp = RoCompatSparseSuper | RoCompatLargeFile | RoCompatHugeFile | RoCompatGdtCsum |
		RoCompatDirNlink | RoCompatExtraIsize | RoCompatBtreeDir | RoCompatQuota | RoCompatBigalloc |
		RoCompatMetadataCsum | RoCompatReadonly | RoCompatProject | RoCompatVerity | RoCompatOrphanPresent

	modelIncompat = IncompatFiletype | IncompatRecover | IncompatExtents | Incompat64bit | IncompatFlexBg |
		IncompatEncrypt | IncompatCasefold | IncompatCsumSeed | IncompatLargedir
	modelRoCompat = RoCompatSparseSuper | RoCompatLargeFile | RoCompatHugeFile | RoCompatGdtCsum |
		RoCompatDirNlink | RoCompatExtraIsize | RoCompatBtreeDir | RoCompatMetadataCsum | RoCompatOrphanPresent
)

// RawSuper is the 1024 bytes of struct ext4_super_block.
type RawSuper [SuperblockSize]byte

func (s *RawSuper) u16(off int) uint16      { return binary.LittleEndian.Uint16(s[off:]) }
func (s *RawSuper) u32(off int) uint32      { return binary.LittleEndian.Uint32(s[off:]) }
func (s *RawSuper) put16(off int, v uint16) { binary.LittleEndian.PutUint16(s[off:], v) }
func (s *RawSuper) put32(off int, v uint32) { binary.LittleEndian.PutUint32(s[off:], v) }

// Magic is s_magic.
func (s *RawSuper) Magic() uint16 { return s.u16(sMagic) }

// InodesCount is s_inodes_count.
func (s *RawSuper) InodesCount() uint32 { return s.u32(sInodesCount) }

// Is64bit reports the 64bit feature.
func (s *RawSuper) Is64bit() bool { return s.Incompat()&Incompat64bit != 0 }

// BlocksCount is ext4_blocks_count: s_blocks_count_lo and, with 64bit,
// s_blocks_count_hi.
func (s *RawSuper) BlocksCount() uint64 {
	n := uint64(s.u32(sBlocksCountLo))
	if s.Is64bit() {
		n |= uint64(s.u32(sBlocksCountHi)) << 32
	}
	return n
}

// FreeBlocksCount is ext4_free_blocks_count.
func (s *RawSuper) FreeBlocksCount() uint64 {
	n := uint64(s.u32(sFreeBlocksCountLo))
	if s.Is64bit() {
		n |= uint64(s.u32(sFreeBlocksCountHi)) << 32
	}
	return n
}

// SetFreeBlocksCount is ext4_free_blocks_count_set.
func (s *RawSuper) SetFreeBlocksCount(n uint64) {
	s.put32(sFreeBlocksCountLo, uint32(n))
	if s.Is64bit() {
		s.put32(sFreeBlocksCountHi, uint32(n>>32))
	}
}

// FreeInodesCount is s_free_inodes_count.
func (s *RawSuper) FreeInodesCount() uint32 { return s.u32(sFreeInodesCount) }

// SetFreeInodesCount sets s_free_inodes_count.
func (s *RawSuper) SetFreeInodesCount(n uint32) { s.put32(sFreeInodesCount, n) }

// FirstDataBlock is s_first_data_block (1 with 1 KiB blocks, else 0).
func (s *RawSuper) FirstDataBlock() uint32 { return s.u32(sFirstDataBlock) }

// LogBlockSize is s_log_block_size: the block size is 1024 << it.
func (s *RawSuper) LogBlockSize() uint32 { return s.u32(sLogBlockSize) }

// BlocksPerGroup is s_blocks_per_group.
func (s *RawSuper) BlocksPerGroup() uint32 { return s.u32(sBlocksPerGroup) }

// ClustersPerGroup is s_clusters_per_group.
func (s *RawSuper) ClustersPerGroup() uint32 { return s.u32(sClustersPerGroup) }

// InodesPerGroup is s_inodes_per_group.
func (s *RawSuper) InodesPerGroup() uint32 { return s.u32(sInodesPerGroup) }

// State is s_state.
func (s *RawSuper) State() uint16 { return s.u16(sState) }

// RevLevel is s_rev_level.
func (s *RawSuper) RevLevel() uint32 { return s.u32(sRevLevel) }

// FirstIno is EXT4_FIRST_INO: s_first_ino, or 11 for revision 0.
func (s *RawSuper) FirstIno() uint32 {
	if s.RevLevel() == 0 {
		return FirstIno
	}
	return s.u32(sFirstIno)
}

// InodeSize is EXT4_INODE_SIZE: s_inode_size, or 128 for revision 0.
func (s *RawSuper) InodeSize() int {
	if s.RevLevel() == 0 {
		return GoodOldInodeSize
	}
	return int(s.u16(sInodeSize))
}

// Compat, Incompat and RoCompat are the three feature words.
func (s *RawSuper) Compat() uint32   { return s.u32(sFeatureCompat) }
func (s *RawSuper) Incompat() uint32 { return s.u32(sFeatureIncompat) }
func (s *RawSuper) RoCompat() uint32 { return s.u32(sFeatureRoCompat) }

// UUID is s_uuid.
func (s *RawSuper) UUID() (u [16]byte) { copy(u[:], s[sUUID:]); return u }

// HashSeed is s_hash_seed.
func (s *RawSuper) HashSeed() (h [16]byte) { copy(h[:], s[sHashSeed:]); return h }

// DefHashVersion is s_def_hash_version.
func (s *RawSuper) DefHashVersion() uint8 { return s[sDefHashVersion] }

// DescSize is EXT4_DESC_SIZE: s_desc_size with 64bit, else 32.
func (s *RawSuper) DescSize() int {
	if s.Is64bit() {
		return int(s.u16(sDescSize))
	}
	return MinDescSize
}

// Flags is s_flags.
func (s *RawSuper) Flags() uint32 { return s.u32(sFlags) }

// ReservedGdtBlocks is s_reserved_gdt_blocks.
func (s *RawSuper) ReservedGdtBlocks() uint32 { return uint32(s.u16(sReservedGdtBlocks)) }

// JournalInum is s_journal_inum.
func (s *RawSuper) JournalInum() uint32 { return s.u32(sJournalInum) }

// MinExtraIsize and WantExtraIsize are s_min_extra_isize and
// s_want_extra_isize.
func (s *RawSuper) MinExtraIsize() uint16  { return s.u16(sMinExtraIsize) }
func (s *RawSuper) WantExtraIsize() uint16 { return s.u16(sWantExtraIsize) }

// LogGroupsPerFlex is s_log_groups_per_flex.
func (s *RawSuper) LogGroupsPerFlex() uint8 { return s[sLogGroupsPerFlex] }

// ChecksumType is s_checksum_type.
func (s *RawSuper) ChecksumType() uint8 { return s[sChecksumType] }

// ChecksumSeed is s_checksum_seed (with the csum_seed feature).
func (s *RawSuper) ChecksumSeed() uint32 { return s.u32(sChecksumSeed) }

// Encoding and EncodingFlags are s_encoding and s_encoding_flags.
func (s *RawSuper) Encoding() uint16      { return s.u16(sEncoding) }
func (s *RawSuper) EncodingFlags() uint16 { return s.u16(sEncodingFlags) }

// MkfsTime is s_mkfs_time (low 32 bits).
func (s *RawSuper) MkfsTime() uint32 { return s.u32(sMkfsTime) }

// Checksum is s_checksum.
func (s *RawSuper) Checksum() uint32 { return s.u32(sChecksum) }

// CsumSeed is s_csum_seed as ext4_fill_super derives it: s_checksum_seed
// with the csum_seed feature, else crc32c(~0, s_uuid).
func (s *RawSuper) CsumSeed() uint32 {
	if s.Incompat()&IncompatCsumSeed != 0 {
		return s.ChecksumSeed()
	}
	u := s.UUID()
	return Crc32c(^uint32(0), u[:])
}

// SuperblockCsum is ext4_superblock_csum: crc32c(~0) over the superblock
// up to s_checksum.
func (s *RawSuper) SuperblockCsum() uint32 {
	return Crc32c(^uint32(0), s[:superChecksumOffset])
}

// SuperblockCsumVerify is ext4_superblock_csum_verify: true without
// metadata_csum.
func (s *RawSuper) SuperblockCsumVerify() bool {
	if s.RoCompat()&RoCompatMetadataCsum == 0 {
		return true
	}
	return s.Checksum() == s.SuperblockCsum()
}

// SuperblockCsumSet is ext4_superblock_csum_set.
func (s *RawSuper) SuperblockCsumSet() {
	if s.RoCompat()&RoCompatMetadataCsum == 0 {
		return
	}
	s.put32(sChecksum, s.SuperblockCsum())
}

// BlockSize is the block size in bytes (EXT4_BLOCK_SIZE).
func (s *RawSuper) BlockSize() int { return 1024 << s.LogBlockSize() }

// GroupsCount is s_groups_count: the block groups covering the blocks
// past s_first_data_block.
func (s *RawSuper) GroupsCount() uint32 {
	bpg := uint64(s.BlocksPerGroup())
	if bpg == 0 {
		return 0
	}
	return uint32((s.BlocksCount() - uint64(s.FirstDataBlock()) + bpg - 1) / bpg)
}

// Group descriptor fields (struct ext4_group_desc).
const (
	bgBlockBitmapLo     = 0x00
	bgInodeBitmapLo     = 0x04
	bgInodeTableLo      = 0x08
	bgFreeBlocksCountLo = 0x0C
	bgFreeInodesCountLo = 0x0E
	bgUsedDirsCountLo   = 0x10
	bgFlags             = 0x12
	bgBlockBitmapCsumLo = 0x18
	bgInodeBitmapCsumLo = 0x1A
	bgItableUnusedLo    = 0x1C
	bgChecksum          = 0x1E
	bgBlockBitmapHi     = 0x20
	bgInodeBitmapHi     = 0x24
	bgInodeTableHi      = 0x28
	bgFreeBlocksCountHi = 0x2C
	bgFreeInodesCountHi = 0x2E
	bgUsedDirsCountHi   = 0x30
	bgItableUnusedHi    = 0x32
	bgBlockBitmapCsumHi = 0x38
	bgInodeBitmapCsumHi = 0x3A

	// bgBlockBitmapCsumHiEnd and bgInodeBitmapCsumHiEnd are
	// EXT4_BG_BLOCK_BITMAP_CSUM_HI_END and EXT4_BG_INODE_BITMAP_CSUM_HI_END.
	bgBlockBitmapCsumHiEnd = 0x3A
	bgInodeBitmapCsumHiEnd = 0x3C
)

// Group descriptor flags (bg_flags).
const (
	BgInodeUninit = 0x0001 // EXT4_BG_INODE_UNINIT
	BgBlockUninit = 0x0002 // EXT4_BG_BLOCK_UNINIT
	BgInodeZeroed = 0x0004 // EXT4_BG_INODE_ZEROED
)

// GroupDesc is a view of one struct ext4_group_desc (32 or 64 bytes).
type GroupDesc []byte

func (g GroupDesc) lohi(lo, hi int, hiSize int) uint64 {
	var v uint64
	if hiSize == 2 {
		v = uint64(binary.LittleEndian.Uint16(g[lo:]))
	} else {
		v = uint64(binary.LittleEndian.Uint32(g[lo:]))
	}
	if len(g) >= MinDescSize64bit {
		if hiSize == 2 {
			v |= uint64(binary.LittleEndian.Uint16(g[hi:])) << 16
		} else {
			v |= uint64(binary.LittleEndian.Uint32(g[hi:])) << 32
		}
	}
	return v
}

func (g GroupDesc) setLohi(lo, hi int, hiSize int, v uint64) {
	if hiSize == 2 {
		binary.LittleEndian.PutUint16(g[lo:], uint16(v))
		if len(g) >= MinDescSize64bit {
			binary.LittleEndian.PutUint16(g[hi:], uint16(v>>16))
		}
		return
	}
	binary.LittleEndian.PutUint32(g[lo:], uint32(v))
	if len(g) >= MinDescSize64bit {
		binary.LittleEndian.PutUint32(g[hi:], uint32(v>>32))
	}
}

// BlockBitmap is ext4_block_bitmap.
func (g GroupDesc) BlockBitmap() uint64 { return g.lohi(bgBlockBitmapLo, bgBlockBitmapHi, 4) }

// InodeBitmap is ext4_inode_bitmap.
func (g GroupDesc) InodeBitmap() uint64 { return g.lohi(bgInodeBitmapLo, bgInodeBitmapHi, 4) }

// InodeTable is ext4_inode_table.
func (g GroupDesc) InodeTable() uint64 { return g.lohi(bgInodeTableLo, bgInodeTableHi, 4) }

// FreeBlocks is ext4_free_group_clusters.
func (g GroupDesc) FreeBlocks() uint32 {
	return uint32(g.lohi(bgFreeBlocksCountLo, bgFreeBlocksCountHi, 2))
}

// SetFreeBlocks is ext4_free_group_clusters_set.
func (g GroupDesc) SetFreeBlocks(n uint32) {
	g.setLohi(bgFreeBlocksCountLo, bgFreeBlocksCountHi, 2, uint64(n))
}

// FreeInodes is ext4_free_inodes_count.
func (g GroupDesc) FreeInodes() uint32 {
	return uint32(g.lohi(bgFreeInodesCountLo, bgFreeInodesCountHi, 2))
}

// SetFreeInodes is ext4_free_inodes_set.
func (g GroupDesc) SetFreeInodes(n uint32) {
	g.setLohi(bgFreeInodesCountLo, bgFreeInodesCountHi, 2, uint64(n))
}

// UsedDirs is ext4_used_dirs_count.
func (g GroupDesc) UsedDirs() uint32 {
	return uint32(g.lohi(bgUsedDirsCountLo, bgUsedDirsCountHi, 2))
}

// SetUsedDirs is ext4_used_dirs_set.
func (g GroupDesc) SetUsedDirs(n uint32) {
	g.setLohi(bgUsedDirsCountLo, bgUsedDirsCountHi, 2, uint64(n))
}

// ItableUnused is ext4_itable_unused_count.
func (g GroupDesc) ItableUnused() uint32 {
	return uint32(g.lohi(bgItableUnusedLo, bgItableUnusedHi, 2))
}

// SetItableUnused is ext4_itable_unused_set.
func (g GroupDesc) SetItableUnused(n uint32) {
	g.setLohi(bgItableUnusedLo, bgItableUnusedHi, 2, uint64(n))
}

// Flags is bg_flags.
func (g GroupDesc) Flags() uint16 { return binary.LittleEndian.Uint16(g[bgFlags:]) }

// SetFlags sets bg_flags.
func (g GroupDesc) SetFlags(f uint16) { binary.LittleEndian.PutUint16(g[bgFlags:], f) }

// Checksum is bg_checksum.
func (g GroupDesc) Checksum() uint16 { return binary.LittleEndian.Uint16(g[bgChecksum:]) }

// BlockBitmapCsum and InodeBitmapCsum are the bitmap checksums
// (lo, and hi when the descriptor has room).
func (g GroupDesc) BlockBitmapCsum() uint32 {
	v := uint32(binary.LittleEndian.Uint16(g[bgBlockBitmapCsumLo:]))
	if len(g) >= bgBlockBitmapCsumHiEnd {
		v |= uint32(binary.LittleEndian.Uint16(g[bgBlockBitmapCsumHi:])) << 16
	}
	return v
}

// InodeBitmapCsum: see BlockBitmapCsum.
func (g GroupDesc) InodeBitmapCsum() uint32 {
	v := uint32(binary.LittleEndian.Uint16(g[bgInodeBitmapCsumLo:]))
	if len(g) >= bgInodeBitmapCsumHiEnd {
		v |= uint32(binary.LittleEndian.Uint16(g[bgInodeBitmapCsumHi:])) << 16
	}
	return v
}

// crc16Table is the table of crc16 (lib/crc16.c, polynomial 0x8005
// reflected), which ext4_group_desc_csum uses with gdt_csum.
var crc16Table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i)
		for j := 0; j < 8; j++ {
			if c&1 != 0 {
				c = c>>1 ^ 0xA001
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return t
}()

// Crc16 is the kernel's crc16(crc, buffer).
func Crc16(crc uint16, data []byte) uint16 {
	for _, b := range data {
		crc = crc>>8 ^ crc16Table[byte(crc)^b]
	}
	return crc
}

// groupDescCsum is ext4_group_desc_csum: with metadata_csum the low 16
// bits of crc32c(s_csum_seed, group number, the descriptor with
// bg_checksum zeroed); with gdt_csum crc16 over the uuid, the group
// number and the descriptor without bg_checksum; 0 with neither.
func groupDescCsum(s *RawSuper, csumSeed uint32, group uint32, g GroupDesc) uint16 {
	var le [4]byte
	binary.LittleEndian.PutUint32(le[:], group)
	if s.RoCompat()&RoCompatMetadataCsum != 0 {
		var zero [2]byte
		c := Crc32c(csumSeed, le[:])
		c = Crc32c(c, g[:bgChecksum])
		c = Crc32c(c, zero[:])
		if len(g) > bgChecksum+2 {
			c = Crc32c(c, g[bgChecksum+2:])
		}
		return uint16(c)
	}
	if s.RoCompat()&RoCompatGdtCsum == 0 {
		return 0
	}
	u := s.UUID()
	crc := Crc16(^uint16(0), u[:])
	crc = Crc16(crc, le[:])
	crc = Crc16(crc, g[:bgChecksum])
	if len(g) > bgChecksum+2 {
		crc = Crc16(crc, g[bgChecksum+2:])
	}
	return crc
}

// hasGroupCsum is ext4_has_group_desc_csum: metadata_csum or gdt_csum.
func hasGroupCsum(s *RawSuper) bool {
	return s.RoCompat()&(RoCompatMetadataCsum|RoCompatGdtCsum) != 0
}

// bitmapCsum is ext4_inode_bitmap_csum_set's and
// ext4_block_bitmap_csum_set's crc32c(s_csum_seed, bitmap, size).
func bitmapCsum(csumSeed uint32, bitmap []byte) uint32 { return Crc32c(csumSeed, bitmap) }

// setBlockBitmapCsum stores the block bitmap's checksum in the descriptor.
func (g GroupDesc) setBlockBitmapCsum(c uint32) {
	binary.LittleEndian.PutUint16(g[bgBlockBitmapCsumLo:], uint16(c))
	if len(g) >= bgBlockBitmapCsumHiEnd {
		binary.LittleEndian.PutUint16(g[bgBlockBitmapCsumHi:], uint16(c>>16))
	}
}

// setInodeBitmapCsum stores the inode bitmap's checksum.
func (g GroupDesc) setInodeBitmapCsum(c uint32) {
	binary.LittleEndian.PutUint16(g[bgInodeBitmapCsumLo:], uint16(c))
	if len(g) >= bgInodeBitmapCsumHiEnd {
		binary.LittleEndian.PutUint16(g[bgInodeBitmapCsumHi:], uint16(c>>16))
	}
}

// groupHasSuper is ext4_bg_has_super: with sparse_super only groups 0, 1
// and powers of 3, 5 and 7 hold a superblock backup.
func groupHasSuper(s *RawSuper, group uint32) bool {
	if group == 0 {
		return true
	}
	if s.Compat()&CompatSparseSuper2 != 0 {
		return group == s.u32(sBackupBgs) || group == s.u32(sBackupBgs+4)
	}
	if s.RoCompat()&RoCompatSparseSuper == 0 {
		return true
	}
	if group == 1 {
		return true
	}
	for _, p := range [...]uint32{3, 5, 7} {
		n := p
		for n < group {
			n *= p
		}
		if n == group {
			return true
		}
	}
	return false
}
