package f2fs

import "encoding/binary"

// The checkpoint (struct f2fs_checkpoint, include/linux/f2fs_fs.h): two
// packs, at cp_blkaddr and one segment after it; a pack starts and ends
// with a checkpoint block of the same version, between them the payload
// (a large SIT bitmap), orphan blocks and the summaries of the current
// segments.

// Checkpoint constants (include/linux/f2fs_fs.h).
const (
	CpDisabledQuickFlag  = 0x00002000
	CpDisabledFlag       = 0x00001000
	CpQuotaNeedFsckFlag  = 0x00000800
	CpLargeNatBitmapFlag = 0x00000400
	CpNocrcRecoveryFlag  = 0x00000200
	CpTrimmedFlag        = 0x00000100
	CpNatBitsFlag        = 0x00000080
	CpCrcRecoveryFlag    = 0x00000040
	CpFastbootFlag       = 0x00000020
	CpFsckFlag           = 0x00000010
	CpErrorFlag          = 0x00000008
	CpCompactSumFlag     = 0x00000004
	CpOrphanPresentFlag  = 0x00000002
	CpUmountFlag         = 0x00000001

	// MaxActiveLogs, MaxActiveNodeLogs and MaxActiveDataLogs are the
	// on-disk room for current segments.
	MaxActiveLogs     = 16
	MaxActiveNodeLogs = 8
	MaxActiveDataLogs = 8
	// NrCursegDataType and NrCursegNodeType are the logs f2fs uses
	// (hot, warm, cold of each).
	NrCursegDataType = 3
	NrCursegNodeType = 3
	NrCursegType     = NrCursegDataType + NrCursegNodeType

	// cpChksumOffset is CP_CHKSUM_OFFSET: the checksum sits in the last
	// word of the block.
	cpChksumOffset = BlockSize - 4
	// cpMinChksumOffset is CP_MIN_CHKSUM_OFFSET, offsetof(struct
	// f2fs_checkpoint, sit_nat_version_bitmap).
	cpMinChksumOffset = 192
	// OrphansPerBlock is F2FS_ORPHANS_PER_BLOCK.
	OrphansPerBlock = 1020
)

// Current segment types (enum CURSEG_*_TYPE, fs/f2fs/segment.h).
const (
	CursegHotData = iota
	CursegWarmData
	CursegColdData
	CursegHotNode
	CursegWarmNode
	CursegColdNode
)

// Byte offsets of struct f2fs_checkpoint's fields.
const (
	cpCheckpointVer      = 0
	cpUserBlockCount     = 8
	cpValidBlockCount    = 16
	cpRsvdSegmentCount   = 24
	cpOverprovSegCount   = 28
	cpFreeSegmentCount   = 32
	cpCurNodeSegno       = 36
	cpCurNodeBlkoff      = 68
	cpCurDataSegno       = 84
	cpCurDataBlkoff      = 116
	cpCkptFlags          = 132
	cpPackTotalBlockCnt  = 136
	cpPackStartSum       = 140
	cpValidNodeCount     = 144
	cpValidInodeCount    = 148
	cpNextFreeNid        = 152
	cpSitVerBitmapBytes  = 156
	cpNatVerBitmapBytes  = 160
	cpChecksumOffsetOff  = 164
	cpElapsedTime        = 168
	cpAllocType          = 176
	cpSitNatVersionBmOff = 192
)

// Checkpoint is struct f2fs_checkpoint, decoded, with Raw, the block.
type Checkpoint struct {
	CheckpointVer         uint64
	UserBlockCount        uint64
	ValidBlockCount       uint64
	RsvdSegmentCount      uint32
	OverprovSegmentCount  uint32
	FreeSegmentCount      uint32
	CurNodeSegno          [MaxActiveNodeLogs]uint32
	CurNodeBlkoff         [MaxActiveNodeLogs]uint16
	CurDataSegno          [MaxActiveDataLogs]uint32
	CurDataBlkoff         [MaxActiveDataLogs]uint16
	CkptFlags             uint32
	CpPackTotalBlockCount uint32
	CpPackStartSum        uint32
	ValidNodeCount        uint32
	ValidInodeCount       uint32
	NextFreeNid           uint32
	SitVerBitmapBytesize  uint32
	NatVerBitmapBytesize  uint32
	ChecksumOffset        uint32
	ElapsedTime           uint64
	AllocType             [MaxActiveLogs]uint8
	// Raw is the checkpoint block (the version bitmaps follow the fields).
	Raw [BlockSize]byte
}

// DecodeCheckpoint decodes a checkpoint block.
func DecodeCheckpoint(b []byte) *Checkpoint {
	c := &Checkpoint{}
	copy(c.Raw[:], b)
	r := c.Raw[:]
	le := binary.LittleEndian
	c.CheckpointVer = le.Uint64(r[cpCheckpointVer:])
	c.UserBlockCount = le.Uint64(r[cpUserBlockCount:])
	c.ValidBlockCount = le.Uint64(r[cpValidBlockCount:])
	c.RsvdSegmentCount = le.Uint32(r[cpRsvdSegmentCount:])
	c.OverprovSegmentCount = le.Uint32(r[cpOverprovSegCount:])
	c.FreeSegmentCount = le.Uint32(r[cpFreeSegmentCount:])
	for i := 0; i < MaxActiveNodeLogs; i++ {
		c.CurNodeSegno[i] = le.Uint32(r[cpCurNodeSegno+4*i:])
		c.CurNodeBlkoff[i] = le.Uint16(r[cpCurNodeBlkoff+2*i:])
		c.CurDataSegno[i] = le.Uint32(r[cpCurDataSegno+4*i:])
		c.CurDataBlkoff[i] = le.Uint16(r[cpCurDataBlkoff+2*i:])
	}
	c.CkptFlags = le.Uint32(r[cpCkptFlags:])
	c.CpPackTotalBlockCount = le.Uint32(r[cpPackTotalBlockCnt:])
	c.CpPackStartSum = le.Uint32(r[cpPackStartSum:])
	c.ValidNodeCount = le.Uint32(r[cpValidNodeCount:])
	c.ValidInodeCount = le.Uint32(r[cpValidInodeCount:])
	c.NextFreeNid = le.Uint32(r[cpNextFreeNid:])
	c.SitVerBitmapBytesize = le.Uint32(r[cpSitVerBitmapBytes:])
	c.NatVerBitmapBytesize = le.Uint32(r[cpNatVerBitmapBytes:])
	c.ChecksumOffset = le.Uint32(r[cpChecksumOffsetOff:])
	c.ElapsedTime = le.Uint64(r[cpElapsedTime:])
	copy(c.AllocType[:], r[cpAllocType:cpAllocType+MaxActiveLogs])
	return c
}

// Encode writes the decoded fields into Raw, then the checksum at
// checksum_offset (f2fs_crc32 of the bytes before it), and returns Raw.
func (c *Checkpoint) Encode() []byte {
	r := c.Raw[:]
	le := binary.LittleEndian
	le.PutUint64(r[cpCheckpointVer:], c.CheckpointVer)
	le.PutUint64(r[cpUserBlockCount:], c.UserBlockCount)
	le.PutUint64(r[cpValidBlockCount:], c.ValidBlockCount)
	le.PutUint32(r[cpRsvdSegmentCount:], c.RsvdSegmentCount)
	le.PutUint32(r[cpOverprovSegCount:], c.OverprovSegmentCount)
	le.PutUint32(r[cpFreeSegmentCount:], c.FreeSegmentCount)
	for i := 0; i < MaxActiveNodeLogs; i++ {
		le.PutUint32(r[cpCurNodeSegno+4*i:], c.CurNodeSegno[i])
		le.PutUint16(r[cpCurNodeBlkoff+2*i:], c.CurNodeBlkoff[i])
		le.PutUint32(r[cpCurDataSegno+4*i:], c.CurDataSegno[i])
		le.PutUint16(r[cpCurDataBlkoff+2*i:], c.CurDataBlkoff[i])
	}
	le.PutUint32(r[cpCkptFlags:], c.CkptFlags)
	le.PutUint32(r[cpPackTotalBlockCnt:], c.CpPackTotalBlockCount)
	le.PutUint32(r[cpPackStartSum:], c.CpPackStartSum)
	le.PutUint32(r[cpValidNodeCount:], c.ValidNodeCount)
	le.PutUint32(r[cpValidInodeCount:], c.ValidInodeCount)
	le.PutUint32(r[cpNextFreeNid:], c.NextFreeNid)
	le.PutUint32(r[cpSitVerBitmapBytes:], c.SitVerBitmapBytesize)
	le.PutUint32(r[cpNatVerBitmapBytes:], c.NatVerBitmapBytesize)
	le.PutUint32(r[cpChecksumOffsetOff:], c.ChecksumOffset)
	le.PutUint64(r[cpElapsedTime:], c.ElapsedTime)
	copy(r[cpAllocType:], c.AllocType[:])
	if off := c.ChecksumOffset; off >= cpMinChksumOffset && off <= cpChksumOffset {
		le.PutUint32(r[off:], f2fsCrc32(r[:off]))
	}
	return r
}

// CrcValid is the checksum test of get_checkpoint_version: checksum_offset
// in range (CP_MIN_CHKSUM_OFFSET to CP_CHKSUM_OFFSET) and f2fs_crc32 of the
// bytes before it equal to the word stored there.
func (c *Checkpoint) CrcValid() bool {
	off := c.ChecksumOffset
	if off < cpMinChksumOffset || off > cpChksumOffset {
		return false
	}
	return binary.LittleEndian.Uint32(c.Raw[off:]) == f2fsCrc32(c.Raw[:off])
}

// Flag is is_set_ckpt_flags.
func (c *Checkpoint) Flag(f uint32) bool { return c.CkptFlags&f != 0 }

// Bitmap kinds of __bitmap_ptr.
const (
	natBitmap = iota
	sitBitmap
)

// bitmapPtr is __bitmap_ptr: the NAT or SIT version bitmap inside the
// checkpoint, or, with a cp_payload, the SIT bitmap in the payload
// blocks that follow (payload holds them; nil when there is none).
func (c *Checkpoint) bitmapPtr(flag int, cpPayload uint32, payload []byte) []byte {
	r := c.Raw[:]
	if c.Flag(CpLargeNatBitmapFlag) {
		off := 0
		if flag == sitBitmap {
			off = int(c.NatVerBitmapBytesize)
		}
		start := cpSitNatVersionBmOff + off + 4
		return r[start:]
	}
	if cpPayload > 0 {
		if flag == natBitmap {
			return r[cpSitNatVersionBmOff:]
		}
		return payload
	}
	off := 0
	if flag == natBitmap {
		off = int(c.SitVerBitmapBytesize)
	}
	return r[cpSitNatVersionBmOff+off:]
}

// f2fsTestBit is f2fs_test_bit: bit nr of a bitmap in f2fs's big-endian
// bit order within each byte (the NAT and SIT version bitmaps, SIT valid
// maps).
func f2fsTestBit(nr uint32, bm []byte) bool {
	return bm[nr>>3]&(0x80>>(nr&7)) != 0
}

// f2fsSetBit is f2fs_set_bit.
func f2fsSetBit(nr uint32, bm []byte) { bm[nr>>3] |= 0x80 >> (nr & 7) }
