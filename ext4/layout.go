package ext4

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/vfslab/vfslab/vfs"
)

// On-disk directory format (fs/ext4/ext4.h).
const (
	// BlockSize is the block size the model uses (s_blocksize).
	BlockSize = 4096
	// NameLen is EXT4_NAME_LEN.
	NameLen = 255
	// BaseDirLen is EXT4_BASE_DIR_LEN, the dirent header before the name.
	BaseDirLen = 8
	// dirRound is EXT4_DIR_ROUND.
	dirRound = 3
	// DirEntryTailSize is sizeof(struct ext4_dir_entry_tail).
	DirEntryTailSize = 12
	// FtDirCsum is EXT4_FT_DIR_CSUM, the file type of the checksum tail.
	FtDirCsum = 0xDE
	// MaxRecLen is EXT4_MAX_REC_LEN, the on-disk rec_len of a 64 KiB span.
	MaxRecLen = (1 << 16) - 1
	// dxTailSize is sizeof(struct dx_tail).
	dxTailSize = 8
	// dxEntrySize is sizeof(struct dx_entry).
	dxEntrySize = 8
	// dxRootInfoLen is sizeof(struct dx_root_info).
	dxRootInfoLen = 8
	// HtreeLevelCompat is EXT4_HTREE_LEVEL_COMPAT; HtreeLevel is
	// EXT4_HTREE_LEVEL (with the largedir feature).
	HtreeLevelCompat = 2
	HtreeLevel       = 3
)

// File types stored in ext4_dir_entry_2.file_type (EXT4_FT_*, the VFS's
// FT_* values).
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

// File mode type bits (S_IF*).
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

// FsUmodeToFtype is fs_umode_to_ftype (fs/fs_types.c), as ext4_set_de_type
// uses it.
func FsUmodeToFtype(mode uint32) uint8 { return vfs.FsUmodeToFtype(mode) }

// FsFtypeToDtype is fs_ftype_to_dtype: DT_* for a stored file type.
func FsFtypeToDtype(ft uint8) uint8 { return vfs.FsFtypeToDtype(ft) }

// DirRecLen is ext4_dir_rec_len(name_len, dir): the smallest rec_len of a
// dirent with a name of nameLen bytes, 4-byte aligned, with 8 more bytes
// for the {hash, minor_hash} pair when hashInDirent (ext4_hash_in_dirent:
// casefolded and encrypted directories).
func DirRecLen(nameLen int, hashInDirent bool) int {
	n := nameLen + 8 + dirRound
	if hashInDirent {
		n += 8
	}
	return n &^ dirRound
}

// RecLenFromDisk is ext4_rec_len_from_disk for a system with PAGE_SIZE
// pageSize: with 64 KiB pages the two low bits of rec_len carry bits 16-17
// and 65535 (or 0) means a whole 64 KiB block; with smaller pages the value
// is used as is.
func RecLenFromDisk(dlen uint16, blocksize, pageSize int) int {
	l := int(dlen)
	if pageSize >= 65536 {
		if l == MaxRecLen || l == 0 {
			return blocksize
		}
		return (l & 65532) | ((l & 3) << 16)
	}
	return l
}

// RecLenToDisk is ext4_rec_len_to_disk for a system with PAGE_SIZE
// pageSize; ok is false for a length the format cannot store (the kernel
// BUG()s).
func RecLenToDisk(l, blocksize, pageSize int) (uint16, bool) {
	if l > blocksize || blocksize > (1<<18) || l&3 != 0 {
		return 0, false
	}
	if pageSize >= 65536 {
		if l < 65536 {
			return uint16(l), true
		}
		if l == blocksize {
			if blocksize == 65536 {
				return MaxRecLen, true
			}
			return 0, true
		}
		return uint16((l & 65532) | ((l >> 16) & 3)), true
	}
	return uint16(l), true
}

// DirEntry is a decoded struct ext4_dir_entry_2 header.
type DirEntry struct {
	Inode    uint32 // inode (0: unused)
	RecLen   int    // rec_len
	NameLen  uint8  // name_len
	FileType uint8  // file_type
}

// String is the canonical one-line dump of a dirent header.
func (de DirEntry) String() string {
	return fmt.Sprintf("ino=%d rec_len=%d name_len=%d type=%d", de.Inode, de.RecLen, de.NameLen, de.FileType)
}

// readDirent decodes the dirent at off (the header must fit).
func readDirent(b []byte, off int) DirEntry {
	return DirEntry{
		Inode:    binary.LittleEndian.Uint32(b[off:]),
		RecLen:   RecLenFromDisk(binary.LittleEndian.Uint16(b[off+4:]), BlockSize, BlockSize),
		NameLen:  b[off+6],
		FileType: b[off+7],
	}
}

func direntInode(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }
func direntRecLen(b []byte, off int) int {
	return RecLenFromDisk(binary.LittleEndian.Uint16(b[off+4:]), BlockSize, BlockSize)
}
func setInode(b []byte, off int, ino uint32) { binary.LittleEndian.PutUint32(b[off:], ino) }
func setRecLen(b []byte, off, l int) {
	d, _ := RecLenToDisk(l, BlockSize, BlockSize)
	binary.LittleEndian.PutUint16(b[off+4:], d)
}

// direntHashes reads the {hash, minor_hash} after the name of a dirent in
// a casefolded and encrypted directory (EXT4_DIRENT_HASH and
// EXT4_DIRENT_MINOR_HASH); ok is false when they would lie past buf.
func direntHashes(b []byte, off int) (hash, minor uint32, ok bool) {
	p := off + ((8 + int(b[off+6]) + dirRound) &^ dirRound)
	if p+8 > len(b) {
		return 0, 0, false
	}
	return binary.LittleEndian.Uint32(b[p:]), binary.LittleEndian.Uint32(b[p+4:]), true
}

// initializeDirentTail is ext4_initialize_dirent_tail: the 12-byte fake
// dirent {inode 0, rec_len 12, name_len 0, file_type 0xDE, checksum 0} at
// the end of a leaf block.
func initializeDirentTail(b []byte) {
	t := b[len(b)-DirEntryTailSize:]
	clear(t)
	binary.LittleEndian.PutUint16(t[4:], DirEntryTailSize)
	t[7] = FtDirCsum
}

// direntTailOK is get_dirent_tail's validation of the tail at the end of b.
func direntTailOK(b []byte) bool {
	t := b[len(b)-DirEntryTailSize:]
	return binary.LittleEndian.Uint32(t[0:]) == 0 && binary.LittleEndian.Uint16(t[4:]) == DirEntryTailSize &&
		t[6] == 0 && t[7] == FtDirCsum
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Crc32c is the kernel's ext4_chksum(seed, data): crc32c_le without the
// final inversion, so that results chain (crc32c(crc32c(s, a), b) ==
// crc32c(s, a||b)).
func Crc32c(seed uint32, data []byte) uint32 {
	return ^crc32.Update(^seed, castagnoli, data)
}

// dx layout (fs/ext4/namei.c).
const (
	dxRootInfoOff    = 24 // offsetof(struct dx_root, info)
	dxRootEntriesOff = 32 // with info_length 8
	dxNodeEntriesOff = 8  // offsetof(struct dx_node, entries)
)

// dxEntries is a view of a dx_entry array: entry 0 holds {limit, count}
// in place of its hash, then the block.
type dxEntries struct {
	b   []byte
	off int // offset of entries[0] in b
}

func (e dxEntries) limit() int { return int(binary.LittleEndian.Uint16(e.b[e.off:])) }
func (e dxEntries) count() int { return int(binary.LittleEndian.Uint16(e.b[e.off+2:])) }
func (e dxEntries) setLimit(v int) {
	binary.LittleEndian.PutUint16(e.b[e.off:], uint16(v))
}
func (e dxEntries) setCount(v int) {
	binary.LittleEndian.PutUint16(e.b[e.off+2:], uint16(v))
}
func (e dxEntries) hash(i int) uint32 { return binary.LittleEndian.Uint32(e.b[e.off+i*8:]) }

// block is dx_get_block: the low 28 bits (the rest are reserved).
func (e dxEntries) block(i int) uint32 {
	return binary.LittleEndian.Uint32(e.b[e.off+i*8+4:]) & 0x0fffffff
}
func (e dxEntries) setHash(i int, h uint32) { binary.LittleEndian.PutUint32(e.b[e.off+i*8:], h) }
func (e dxEntries) setBlock(i int, blk uint32) {
	binary.LittleEndian.PutUint32(e.b[e.off+i*8+4:], blk)
}

// fits reports whether count and limit entries stay inside the block.
func (e dxEntries) fits(n int) bool { return e.off+n*8 <= len(e.b) }

// dxRootInfo is struct dx_root_info.
type dxRootInfo struct {
	reservedZero   uint32
	hashVersion    uint8
	infoLength     uint8
	indirectLevels uint8
	unusedFlags    uint8
}

func readDxRootInfo(b []byte) dxRootInfo {
	return dxRootInfo{binary.LittleEndian.Uint32(b[dxRootInfoOff:]), b[dxRootInfoOff+4], b[dxRootInfoOff+5], b[dxRootInfoOff+6], b[dxRootInfoOff+7]}
}
