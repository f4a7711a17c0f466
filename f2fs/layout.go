package f2fs

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/vfslab/vfslab/vfs"
)

// On-disk geometry of directories (include/linux/f2fs_fs.h).
const (
	// BlockSize is F2FS_BLKSIZE: every dentry block and node block is 4 KiB.
	BlockSize = 4096
	// SlotLen is F2FS_SLOT_LEN: a name occupies (len+7)/8 slots of 8 bytes.
	SlotLen = 8
	// SizeOfDirEntry is SIZE_OF_DIR_ENTRY: sizeof(struct f2fs_dir_entry),
	// {__le32 hash_code, __le32 ino, __le16 name_len, __u8 file_type}, packed.
	SizeOfDirEntry = 11
	// NrDentryInBlock is NR_DENTRY_IN_BLOCK, the dentries of one block.
	NrDentryInBlock = 214
	// SizeOfDentryBitmap is SIZE_OF_DENTRY_BITMAP, (214 + 7) / 8 bytes.
	SizeOfDentryBitmap = (NrDentryInBlock + 7) / 8
	// SizeOfReserved is SIZE_OF_RESERVED, the unused bytes after the bitmap.
	SizeOfReserved = BlockSize - ((SizeOfDirEntry+SlotLen)*NrDentryInBlock + SizeOfDentryBitmap)
	// NameLen is F2FS_NAME_LEN, the longest name.
	NameLen = 255
	// MaxDirHashDepth is MAX_DIR_HASH_DEPTH, the most levels a directory has.
	MaxDirHashDepth = 63
	// MaxDirBuckets is MAX_DIR_BUCKETS, the bucket count of every level from
	// MaxDirHashDepth/2 on.
	MaxDirBuckets = 1 << ((MaxDirHashDepth / 2) - 1)
)

// Offsets inside a struct f2fs_dentry_block.
const (
	dentryBlockBitmapOff   = 0
	dentryBlockDentryOff   = SizeOfDentryBitmap + SizeOfReserved
	dentryBlockFilenameOff = dentryBlockDentryOff + SizeOfDirEntry*NrDentryInBlock
)

// File types stored in f2fs_dir_entry.file_type (enum FILE_TYPE in
// include/linux/f2fs_fs.h; the same values as the VFS's FT_* of
// include/linux/fs_types.h).
const (
	FtUnknown = vfs.FT_UNKNOWN
	FtRegFile = vfs.FT_REG_FILE
	FtDir     = vfs.FT_DIR
	FtChrdev  = vfs.FT_CHRDEV
	FtBlkdev  = vfs.FT_BLKDEV
	FtFifo    = vfs.FT_FIFO
	FtSock    = vfs.FT_SOCK
	FtSymlink = vfs.FT_SYMLINK
	FtMax     = vfs.FT_MAX
)

// File mode type bits (S_IF* of include/uapi/linux/stat.h).
const (
	SIfmt   = vfs.S_IFMT
	SIfsock = vfs.S_IFSOCK
	SIflnk  = vfs.S_IFLNK
	SIfreg  = vfs.S_IFREG
	SIfblk  = vfs.S_IFBLK
	SIfdir  = vfs.S_IFDIR
	SIfchr  = vfs.S_IFCHR
	SIfifo  = vfs.S_IFIFO
)

// Directory entry types reported by readdir (DT_* of include/linux/fs_types.h).
const (
	DtUnknown uint8 = vfs.DT_UNKNOWN
	DtFifo    uint8 = vfs.DT_FIFO
	DtChr     uint8 = vfs.DT_CHR
	DtDir     uint8 = vfs.DT_DIR
	DtBlk     uint8 = vfs.DT_BLK
	DtReg     uint8 = vfs.DT_REG
	DtLnk     uint8 = vfs.DT_LNK
	DtSock    uint8 = vfs.DT_SOCK
)

// FsUmodeToFtype is fs_umode_to_ftype (fs/fs_types.c): the file type stored
// in a dirent for an inode of the given mode (set_de_type).
func FsUmodeToFtype(mode uint32) uint8 { return vfs.FsUmodeToFtype(mode) }

// FsFtypeToDtype is fs_ftype_to_dtype (fs/fs_types.c): the d_type readdir
// reports for a stored file type; DT_UNKNOWN for values past FtMax.
func FsFtypeToDtype(ft uint8) uint8 { return vfs.FsFtypeToDtype(ft) }

// GetDentrySlots is GET_DENTRY_SLOTS: the slots a name of n bytes takes.
func GetDentrySlots(n int) int { return (n + SlotLen - 1) / SlotLen }

// DirEntry is a decoded struct f2fs_dir_entry.
type DirEntry struct {
	HashCode uint32 // hash_code (__le32 on disk)
	Ino      uint32 // ino
	NameLen  uint16 // name_len
	FileType uint8  // file_type
}

// String is the canonical one-line dump of a dirent header.
func (de DirEntry) String() string {
	return fmt.Sprintf("hash=%08x ino=%d len=%d type=%d", de.HashCode, de.Ino, de.NameLen, de.FileType)
}

// InlineGeometry is the layout of the inline dentry area of a directory
// inode: MAX_INLINE_DATA, NR_INLINE_DENTRY, INLINE_DENTRY_BITMAP_SIZE and
// INLINE_RESERVED_SIZE of fs/f2fs/f2fs.h, which depend on the inode's extra
// attribute size and inline xattr size.
type InlineGeometry struct {
	// ExtraIsize is i_extra_isize in bytes (0 without the extra_attr feature).
	ExtraIsize int
	// InlineXattrAddrs is get_inline_xattr_addrs(): the __le32 words of
	// i_addr given to inline xattrs (DEFAULT_INLINE_XATTR_ADDRS = 50 with the
	// inline_xattr mount option, the default; 0 without it).
	InlineXattrAddrs int
	// MaxInlineData is MAX_INLINE_DATA in bytes.
	MaxInlineData int
	// NrInlineDentry is NR_INLINE_DENTRY, the dentries of the inline area.
	NrInlineDentry int
	// BitmapSize is INLINE_DENTRY_BITMAP_SIZE in bytes.
	BitmapSize int
	// ReservedSize is INLINE_RESERVED_SIZE in bytes.
	ReservedSize int
	// Offset is the offset of inline_data_addr() in the inode block:
	// i_addr[extra_isize/4 + DEF_INLINE_RESERVED_SIZE].
	Offset int
}

// Inode block layout constants (struct f2fs_inode, include/linux/f2fs_fs.h).
const (
	// DefAddrsPerInode is DEF_ADDRS_PER_INODE, the words of i_addr.
	DefAddrsPerInode = 923
	// DefaultInlineXattrAddrs is DEFAULT_INLINE_XATTR_ADDRS.
	DefaultInlineXattrAddrs = 50
	// inodeIAddrOff is offsetof(struct f2fs_inode, i_addr).
	inodeIAddrOff = 360
	// defInlineReservedSize is DEF_INLINE_RESERVED_SIZE (words).
	defInlineReservedSize = 1
)

// NewInlineGeometry computes the inline dentry layout for an inode with
// extraIsize bytes of extra attributes and inlineXattrAddrs words of inline
// xattrs, as the macros of fs/f2fs/f2fs.h do.
func NewInlineGeometry(extraIsize, inlineXattrAddrs int) InlineGeometry {
	g := InlineGeometry{ExtraIsize: extraIsize, InlineXattrAddrs: inlineXattrAddrs}
	g.MaxInlineData = 4 * (DefAddrsPerInode - extraIsize/4 - inlineXattrAddrs - defInlineReservedSize)
	g.NrInlineDentry = g.MaxInlineData * 8 / ((SizeOfDirEntry+SlotLen)*8 + 1)
	g.BitmapSize = (g.NrInlineDentry + 7) / 8
	g.ReservedSize = g.MaxInlineData - ((SizeOfDirEntry+SlotLen)*g.NrInlineDentry + g.BitmapSize)
	g.Offset = inodeIAddrOff + 4*(extraIsize/4+defInlineReservedSize)
	return g
}

// DefaultInlineGeometry is the layout of an inode without extra attributes
// and with the default inline xattr size: 182 dentries, a 23-byte bitmap and
// 7 reserved bytes in 3488 bytes.
var DefaultInlineGeometry = NewInlineGeometry(0, DefaultInlineXattrAddrs)

// DentryPtr mirrors struct f2fs_dentry_ptr: slices into a dentry block or an
// inline dentry area, so that one set of functions handles both.
type DentryPtr struct {
	// Max is the number of dentries (and name slots).
	Max int
	// NrBitmap is the bitmap size in bytes.
	NrBitmap int
	// Bitmap is the validity bitmap (little-endian bit order, test_bit_le).
	Bitmap []byte
	// Dentry holds Max packed 11-byte dentries.
	Dentry []byte
	// Filename holds Max name slots of 8 bytes.
	Filename []byte
}

// MakeDentryPtrBlock is make_dentry_ptr_block: a view of a 4 KiB dentry
// block (struct f2fs_dentry_block).
func MakeDentryPtrBlock(blk []byte) DentryPtr {
	_ = blk[BlockSize-1]
	return DentryPtr{
		Max:      NrDentryInBlock,
		NrBitmap: SizeOfDentryBitmap,
		Bitmap:   blk[dentryBlockBitmapOff:SizeOfDentryBitmap:SizeOfDentryBitmap],
		Dentry:   blk[dentryBlockDentryOff:dentryBlockFilenameOff:dentryBlockFilenameOff],
		Filename: blk[dentryBlockFilenameOff:BlockSize:BlockSize],
	}
}

// MakeDentryPtrInline is make_dentry_ptr_inline: a view of an inline dentry
// area of g.MaxInlineData bytes (bitmap, reserved bytes, dentries, names).
func MakeDentryPtrInline(g InlineGeometry, area []byte) DentryPtr {
	_ = area[g.MaxInlineData-1]
	d0 := g.BitmapSize + g.ReservedSize
	f0 := d0 + SizeOfDirEntry*g.NrInlineDentry
	end := f0 + SlotLen*g.NrInlineDentry
	return DentryPtr{
		Max:      g.NrInlineDentry,
		NrBitmap: g.BitmapSize,
		Bitmap:   area[0:g.BitmapSize:g.BitmapSize],
		Dentry:   area[d0:f0:f0],
		Filename: area[f0:end:end],
	}
}

// TestBit is test_bit_le on the bitmap.
func (d *DentryPtr) TestBit(i int) bool { return d.Bitmap[i>>3]&(1<<(i&7)) != 0 }

func (d *DentryPtr) setBit(i int)   { d.Bitmap[i>>3] |= 1 << (i & 7) }
func (d *DentryPtr) clearBit(i int) { d.Bitmap[i>>3] &^= 1 << (i & 7) }

// FindNextBit is find_next_bit_le(bitmap, Max, from): the first set bit at
// or after from, or Max.
func (d *DentryPtr) FindNextBit(from int) int {
	for i := from; i < d.Max; {
		b := d.Bitmap[i>>3] >> (i & 7)
		if b == 0 {
			i = (i | 7) + 1
			continue
		}
		i += bits.TrailingZeros8(b)
		if i < d.Max {
			return i
		}
		break
	}
	return d.Max
}

// FindNextZeroBit is find_next_zero_bit_le(bitmap, Max, from).
func (d *DentryPtr) FindNextZeroBit(from int) int {
	for i := from; i < d.Max; {
		b := ^d.Bitmap[i>>3] >> (i & 7)
		if b == 0 {
			i = (i | 7) + 1
			continue
		}
		i += bits.TrailingZeros8(b)
		if i < d.Max {
			return i
		}
		break
	}
	return d.Max
}

// Entry decodes dentry i.
func (d *DentryPtr) Entry(i int) DirEntry {
	p := d.Dentry[i*SizeOfDirEntry : i*SizeOfDirEntry+SizeOfDirEntry]
	return DirEntry{
		HashCode: binary.LittleEndian.Uint32(p[0:]),
		Ino:      binary.LittleEndian.Uint32(p[4:]),
		NameLen:  binary.LittleEndian.Uint16(p[8:]),
		FileType: p[10],
	}
}

// nameLenAt reads dentry i's name_len without decoding the rest.
func (d *DentryPtr) nameLenAt(i int) int {
	return int(binary.LittleEndian.Uint16(d.Dentry[i*SizeOfDirEntry+8:]))
}

// hashAt reads dentry i's hash_code.
func (d *DentryPtr) hashAt(i int) uint32 {
	return binary.LittleEndian.Uint32(d.Dentry[i*SizeOfDirEntry:])
}

func (d *DentryPtr) putEntry(i int, de DirEntry) {
	p := d.Dentry[i*SizeOfDirEntry : i*SizeOfDirEntry+SizeOfDirEntry]
	binary.LittleEndian.PutUint32(p[0:], de.HashCode)
	binary.LittleEndian.PutUint32(p[4:], de.Ino)
	binary.LittleEndian.PutUint16(p[8:], de.NameLen)
	p[10] = de.FileType
}

func (d *DentryPtr) setIno(i int, ino uint32, ft uint8) {
	p := d.Dentry[i*SizeOfDirEntry:]
	binary.LittleEndian.PutUint32(p[4:], ino)
	p[10] = ft
}

// Name returns the name stored from slot i, n bytes long; ok is false when
// it would run past the last slot (a corrupt name_len).
func (d *DentryPtr) Name(i, n int) (name []byte, ok bool) {
	off := i * SlotLen
	if n < 0 || off+n > len(d.Filename) {
		return nil, false
	}
	return d.Filename[off : off+n : off+n], true
}

// UpdateDentry is f2fs_update_dentry: it writes a dentry for name (already
// in its on-disk form) at bitPos, sets its slots in the bitmap and zeroes
// the name_len of the continuation dentries.
func (d *DentryPtr) UpdateDentry(ino uint32, mode uint32, name []byte, hash uint32, bitPos int) {
	slots := GetDentrySlots(len(name))
	d.putEntry(bitPos, DirEntry{HashCode: hash, Ino: ino, NameLen: uint16(len(name)), FileType: FsUmodeToFtype(mode)})
	copy(d.Filename[bitPos*SlotLen:], name)
	for i := 0; i < slots; i++ {
		d.setBit(bitPos + i)
		if i != 0 {
			// avoid wrong garbage data for readdir
			binary.LittleEndian.PutUint16(d.Dentry[(bitPos+i)*SizeOfDirEntry+8:], 0)
		}
	}
}

// RoomForFilename is f2fs_room_for_filename: the first run of at least slots
// free slots, or max when there is none.
func RoomForFilename(d *DentryPtr, slots int) int {
	bitStart := 0
	for {
		zeroStart := d.FindNextZeroBit(bitStart)
		if zeroStart >= d.Max {
			return d.Max
		}
		zeroEnd := d.FindNextBit(zeroStart)
		if zeroEnd-zeroStart >= slots {
			return zeroStart
		}
		bitStart = zeroEnd + 1
		if zeroEnd+1 >= d.Max {
			return d.Max
		}
	}
}

// dirBuckets is dir_buckets(level, dir_level).
func dirBuckets(level, dirLevel uint32) uint64 {
	if level+dirLevel < MaxDirHashDepth/2 {
		return 1 << (level + dirLevel)
	}
	return MaxDirBuckets
}

// bucketBlocks is bucket_blocks(level).
func bucketBlocks(level uint32) uint64 {
	if level < MaxDirHashDepth/2 {
		return 2
	}
	return 4
}

// dirBlockIndex is dir_block_index(level, dir_level, idx): the page index of
// the first block of bucket idx of level.
func dirBlockIndex(level, dirLevel uint32, idx uint64) uint64 {
	var bidx uint64
	for i := uint32(0); i < level; i++ {
		bidx += dirBuckets(i, dirLevel) * bucketBlocks(i)
	}
	return bidx + idx*bucketBlocks(level)
}

// DirBuckets, BucketBlocks and DirBlockIndex export the multi-level hash
// table arithmetic (fs/f2fs/dir.c) for checkers and dumps.
func DirBuckets(level, dirLevel uint32) uint64 { return dirBuckets(level, dirLevel) }

// BucketBlocks is bucket_blocks(level).
func BucketBlocks(level uint32) uint64 { return bucketBlocks(level) }

// DirBlockIndex is dir_block_index(level, dir_level, idx).
func DirBlockIndex(level, dirLevel uint32, idx uint64) uint64 {
	return dirBlockIndex(level, dirLevel, idx)
}

// LevelOfBlock inverts DirBlockIndex: the level and bucket that page index
// bidx belongs to, for a directory of the given depth; ok is false past the
// last level.
func LevelOfBlock(bidx uint64, dirLevel, depth uint32) (level uint32, bucket uint64, ok bool) {
	var start uint64
	for l := uint32(0); l < depth; l++ {
		n := dirBuckets(l, dirLevel) * bucketBlocks(l)
		if bidx < start+n {
			return l, (bidx - start) / bucketBlocks(l), true
		}
		start += n
	}
	return 0, 0, false
}
