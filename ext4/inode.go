package ext4

import (
	"encoding/binary"
	"fmt"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// Device is the simulated block device under ext4, with its buffer cache
// (buffer_verified marks for the checksummed directory blocks).
type Device = vfs.BlockDevice

// NewDevice returns an empty device.
func NewDevice() *Device { return vfs.NewBlockDevice() }

// Encoding flags (s_encoding_flags; EXT4_ENC_STRICT_MODE_FL and the bit
// that include/linux/fs.h calls SB_ENC_NO_COMPAT_FALLBACK_FL).
const (
	EncStrictModeFL       uint16 = 1 << 0
	EncNoCompatFallbackFL uint16 = 1 << 1
)

// Inode flags (i_flags) the directory code tests.
const (
	IndexFL    uint32 = 0x00001000 // EXT4_INDEX_FL: the directory has an htree
	EncryptFL  uint32 = 0x00000800 // EXT4_ENCRYPT_FL
	CasefoldFL uint32 = 0x40000000 // EXT4_CASEFOLD_FL
)

// SuperBlock holds what the directory code reads from struct ext4_sb_info
// and the on-disk superblock.
type SuperBlock struct {
	// Dev holds the directory blocks.
	Dev *Device
	// MetadataCsum, DirIndex, LargeDir and Filetype are the features
	// metadata_csum, dir_index, large_dir and filetype.
	MetadataCsum, DirIndex, LargeDir, Filetype bool
	// UUID is s_uuid; CsumSeed is s_csum_seed (crc32c(~0, s_uuid) unless
	// the csum_seed feature stores one).
	UUID     [16]byte
	CsumSeed uint32
	// HashSeed is s_hash_seed as four words (HashSeedWords).
	HashSeed [4]uint32
	// DefHashVersion is s_def_hash_version.
	DefHashVersion uint8
	// HashUnsigned is s_hash_unsigned: 3 when EXT2_FLAGS_UNSIGNED_HASH is
	// set, else 0 (EXT2_FLAGS_SIGNED_HASH; ext4_fill_super also picks 0
	// when neither flag is set, on an architecture whose char is signed).
	HashUnsigned uint8
	// InodesCount is s_inodes_count, the largest valid inode number.
	InodesCount uint32
	// Encoding is sb->s_encoding (nil without the casefold feature).
	Encoding Encoding
	// EncodingFlags is s_encoding_flags.
	EncodingFlags uint16
	// Name is the device name in log lines.
	Name string
}

// NewSuperBlock returns a superblock with mke2fs's ext4 defaults for the
// directory code: dir_index, filetype and metadata_csum on, half_md4 as the
// default hash, signed as mke2fs makes it on x86, a zero seed, 65536
// inodes.
//
// The signedness is a property of the host that ran mke2fs, not of the
// kernel: ext2fs_initialize (lib/ext2fs/initialize.c) sets
// EXT2_FLAGS_SIGNED_HASH when a plain char is signed, as on x86 and
// x86-64, and EXT2_FLAGS_UNSIGNED_HASH otherwise (arm64, powerpc);
// ext4_fill_super turns the flag into s_hash_unsigned (0 signed, 3
// unsigned). So the default is DX_HASH_HALF_MD4 (1), signed.
func NewSuperBlock() *SuperBlock {
	sb := &SuperBlock{Dev: NewDevice(), MetadataCsum: true, DirIndex: true, Filetype: true,
		DefHashVersion: DxHashHalfMD4, HashUnsigned: 0, InodesCount: 65536, Name: "vfslab"}
	sb.SetUUID(sb.UUID)
	return sb
}

// SetUUID sets s_uuid and derives s_csum_seed as ext4_fill_super does.
func (sb *SuperBlock) SetUUID(uuid [16]byte) {
	sb.UUID = uuid
	sb.CsumSeed = Crc32c(^uint32(0), uuid[:])
}

// HasStrictEncoding is sb_has_strict_encoding.
func (sb *SuperBlock) HasStrictEncoding() bool { return sb.EncodingFlags&EncStrictModeFL != 0 }

// NoCasefoldCompatFallback is sb_no_casefold_compat_fallback.
func (sb *SuperBlock) NoCasefoldCompatFallback() bool {
	return sb.EncodingFlags&EncNoCompatFallbackFL != 0
}

// htreeLevel is ext4_dir_htree_level.
func (sb *SuperBlock) htreeLevel() int {
	if sb.LargeDir {
		return HtreeLevel
	}
	return HtreeLevelCompat
}

func (sb *SuperBlock) csumSize() int {
	if sb.MetadataCsum {
		return DirEntryTailSize
	}
	return 0
}

// Inode is a directory inode as the directory code sees it.
type Inode struct {
	// SB is the filesystem.
	SB *SuperBlock
	// Ino and Generation are i_ino and i_generation (both feed the
	// metadata checksums).
	Ino, Generation uint32
	// Mode is i_mode; Flags is i_flags (IndexFL, CasefoldFL).
	Mode, Flags uint32
	// Crypt is the fscrypt name handling of an encrypted directory; nil
	// when it is not encrypted.
	Crypt NameCrypt
	// Size is i_size (a multiple of the block size).
	Size int64

	blocks         []uint32 // logical block -> device block (0: hole)
	dirStartLookup uint32   // i_dir_start_lookup
}

// NewDirInode returns a directory inode without blocks; call InitNewDir.
func NewDirInode(sb *SuperBlock, ino, generation, mode uint32) *Inode {
	return &Inode{SB: sb, Ino: ino, Generation: generation, Mode: SIfdir | mode&^SIfmt}
}

// IsCasefolded is IS_CASEFOLDED.
func (dir *Inode) IsCasefolded() bool { return dir.Flags&CasefoldFL != 0 && dir.SB.Encoding != nil }

// IsEncrypted is IS_ENCRYPTED.
func (dir *Inode) IsEncrypted() bool { return dir.Crypt != nil }

// HashInDirent is ext4_hash_in_dirent: casefolded and encrypted.
func (dir *Inode) HashInDirent() bool { return dir.IsCasefolded() && dir.IsEncrypted() }

// IsDx is is_dx(dir): dir_index and EXT4_INDEX_FL.
func (dir *Inode) IsDx() bool { return dir.SB.DirIndex && dir.Flags&IndexFL != 0 }

// nblocks is i_size in blocks.
func (dir *Inode) nblocks() uint32 { return uint32(dir.Size / BlockSize) }

// BlockAt returns logical block lblk, or nil for a hole or past i_size.
func (dir *Inode) BlockAt(lblk uint32) []byte {
	if int(lblk) >= len(dir.blocks) || lblk >= dir.nblocks() {
		return nil
	}
	return dir.SB.Dev.Block(dir.blocks[lblk])
}

// PhysBlock returns the device block behind logical block lblk (0 for a
// hole).
func (dir *Inode) PhysBlock(lblk uint32) uint32 {
	if int(lblk) >= len(dir.blocks) {
		return 0
	}
	return dir.blocks[lblk]
}

// SetBlocks installs raw blocks as the directory's contents (for images
// made elsewhere): each is copied into a new device block; i_size follows.
func (dir *Inode) SetBlocks(raw [][]byte) {
	dir.blocks = nil
	for _, r := range raw {
		a, b := dir.SB.Dev.Alloc()
		copy(b, r)
		dir.blocks = append(dir.blocks, a)
	}
	dir.Size = int64(len(raw)) * BlockSize
}

// append is ext4_append: a new zeroed block at the end; i_size grows.
func (dir *Inode) appendBlock() (uint32, []byte) {
	lblk := dir.nblocks()
	a, b := dir.SB.Dev.Alloc()
	for uint32(len(dir.blocks)) < lblk {
		dir.blocks = append(dir.blocks, 0)
	}
	dir.blocks = append(dir.blocks[:lblk], a)
	dir.Size += BlockSize
	return lblk, b
}

// releaseBlocks gives every block of the directory back to the device
// (its inode is being evicted).
func (dir *Inode) releaseBlocks() {
	for _, a := range dir.blocks {
		if a != 0 {
			dir.SB.Dev.Free(a)
		}
	}
	dir.blocks = nil
	dir.Size = 0
}

// csumSeed is ei->i_csum_seed: crc32c of the inode number and generation
// chained from the filesystem seed (ext4_iget).
func (dir *Inode) csumSeed() uint32 {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], dir.Ino)
	c := Crc32c(dir.SB.CsumSeed, b[:])
	binary.LittleEndian.PutUint32(b[:], dir.Generation)
	return Crc32c(c, b[:])
}

// dirblockCsum is ext4_dirblock_csum over the block up to its tail.
func (dir *Inode) dirblockCsum(b []byte) uint32 {
	return Crc32c(dir.csumSeed(), b[:BlockSize-DirEntryTailSize])
}

// dirblockCsumSet is ext4_dirblock_csum_set.
func (dir *Inode) dirblockCsumSet(t *kernel.Task, b []byte) {
	if !dir.SB.MetadataCsum {
		return
	}
	if !direntTailOK(b) {
		dir.warning(t, "ext4_dirblock_csum_set", "No space for directory leaf checksum. Please run e2fsck -D.")
		return
	}
	binary.LittleEndian.PutUint32(b[BlockSize-4:], dir.dirblockCsum(b))
}

// dirblockCsumVerify is ext4_dirblock_csum_verify.
func (dir *Inode) dirblockCsumVerify(t *kernel.Task, b []byte) bool {
	if !dir.SB.MetadataCsum {
		return true
	}
	if !direntTailOK(b) {
		dir.warning(t, "ext4_dirblock_csum_verify", "No space for directory leaf checksum. Please run e2fsck -D.")
		return false
	}
	return binary.LittleEndian.Uint32(b[BlockSize-4:]) == dir.dirblockCsum(b)
}

// getDxCountlimit is get_dx_countlimit: where {limit, count} sit in an
// index block (offset 32 in the root, 8 in a node), or -1.
func getDxCountlimit(b []byte) int {
	rlen := direntRecLen(b, 0)
	switch {
	case rlen == BlockSize:
		return 8
	case rlen == 12:
		if direntRecLen(b, 12) != BlockSize-12 {
			return -1
		}
		info := readDxRootInfo(b)
		if info.reservedZero != 0 || info.infoLength != dxRootInfoLen {
			return -1
		}
		return 32
	}
	return -1
}

// dxCsum is ext4_dx_csum.
func (dir *Inode) dxCsum(b []byte, countOff, count int, tailOff int) uint32 {
	c := Crc32c(dir.csumSeed(), b[:countOff+count*dxEntrySize])
	c = Crc32c(c, b[tailOff:tailOff+4])
	var zero [4]byte
	return Crc32c(c, zero[:])
}

// dxCsumLocate finds the dx tail of an index block: ok false when there is
// no room for one.
func dxCsumLocate(b []byte) (countOff, count, tailOff int, ok bool) {
	countOff = getDxCountlimit(b)
	if countOff < 0 {
		return 0, 0, 0, false
	}
	limit := int(binary.LittleEndian.Uint16(b[countOff:]))
	count = int(binary.LittleEndian.Uint16(b[countOff+2:]))
	if countOff+limit*dxEntrySize > BlockSize-dxTailSize {
		return 0, 0, 0, false
	}
	return countOff, count, countOff + limit*dxEntrySize, true
}

// dxCsumSet is ext4_dx_csum_set.
func (dir *Inode) dxCsumSet(t *kernel.Task, b []byte) {
	if !dir.SB.MetadataCsum {
		return
	}
	countOff, count, tailOff, ok := dxCsumLocate(b)
	if !ok || count > (BlockSize-countOff)/dxEntrySize {
		dir.errorInode(t, "ext4_dx_csum_set", 0, "dir seems corrupt?  Run e2fsck -D.")
		return
	}
	binary.LittleEndian.PutUint32(b[tailOff+4:], dir.dxCsum(b, countOff, count, tailOff))
}

// dxCsumVerify is ext4_dx_csum_verify.
func (dir *Inode) dxCsumVerify(t *kernel.Task, b []byte) bool {
	if !dir.SB.MetadataCsum {
		return true
	}
	countOff, count, tailOff, ok := dxCsumLocate(b)
	if !ok || count > (BlockSize-countOff)/dxEntrySize {
		dir.errorInode(t, "ext4_dx_csum_verify", 0, "dir seems corrupt?  Run e2fsck -D.")
		return false
	}
	return binary.LittleEndian.Uint32(b[tailOff+4:]) == dir.dxCsum(b, countOff, count, tailOff)
}

// errorInode logs like ext4_error_inode: "EXT4-fs error (device D): FN:
// inode #N: block B: comm C: MSG".
func (dir *Inode) errorInode(t *kernel.Task, fn string, block uint32, format string, args ...any) {
	t.Printk("EXT4-fs error (device %s): %s: inode #%d: block %d: comm %s: %s", dir.SB.Name, fn, dir.Ino, block, t.Comm, fmt.Sprintf(format, args...))
}

// warning logs like ext4_warning_inode.
func (dir *Inode) warning(t *kernel.Task, fn string, format string, args ...any) {
	t.Printk("EXT4-fs warning (device %s): %s: inode #%d: comm %s: %s", dir.SB.Name, fn, dir.Ino, t.Comm, fmt.Sprintf(format, args...))
}

// Directory block kinds for readDirblock (dirblock_type_t).
type dirblockType int

const (
	either dirblockType = iota
	index
	dirent
	direntHtree
)

// errBadDxDir is ERR_BAD_DX_DIR: an htree format error after which the
// caller falls back to a linear search; never returned to users.
var errBadDxDir = fmt.Errorf("ERR_BAD_DX_DIR")

// EFSBADCRC is the kernel's EFSBADCRC (EBADMSG): a metadata checksum
// mismatch.
var EFSBADCRC = errno.EBADMSG

// readDirblock is __ext4_read_dirblock: the block past i_size and holes
// where the htree needs a block are EFSCORRUPTED; with metadata_csum an
// index block must pass ext4_dx_csum_verify and a leaf ext4_dirblock_csum_verify
// (EFSBADCRC otherwise). A hole elsewhere returns nil.
func (dir *Inode) readDirblock(t *kernel.Task, lblk uint32, typ dirblockType, fn string) ([]byte, error) {
	if lblk >= dir.nblocks() {
		dir.errorInode(t, fn, lblk, "Attempting to read directory block (%d) that is past i_size (%d)", lblk, dir.Size)
		return nil, errno.EFSCORRUPTED
	}
	pblk := dir.PhysBlock(lblk)
	b := dir.SB.Dev.Block(pblk)
	if b == nil {
		if typ == index || typ == direntHtree || lblk == 0 {
			kind := "leaf"
			if typ == index {
				kind = "index"
			}
			dir.errorInode(t, fn, lblk, "Directory hole found for htree %s block %d", kind, lblk)
			return nil, errno.EFSCORRUPTED
		}
		return nil, nil
	}
	isDxBlock := false
	if dir.IsDx() {
		if lblk == 0 || direntRecLen(b, 0) == BlockSize {
			isDxBlock = true
		}
	}
	if !isDxBlock && typ == index {
		dir.errorInode(t, fn, lblk, "directory leaf block found instead of index block")
		return nil, errno.EFSCORRUPTED
	}
	if !dir.SB.MetadataCsum || dir.SB.Dev.BufferVerified(pblk) {
		return b, nil
	}
	if isDxBlock && typ == index {
		if !dir.dxCsumVerify(t, b) {
			dir.errorInode(t, fn, lblk, "Directory index failed checksum")
			return nil, EFSBADCRC
		}
		dir.SB.Dev.SetBufferVerified(pblk)
	}
	if !isDxBlock {
		if !dir.dirblockCsumVerify(t, b) {
			dir.errorInode(t, fn, lblk, "Directory block failed checksum")
			return nil, EFSBADCRC
		}
		dir.SB.Dev.SetBufferVerified(pblk)
	}
	return b, nil
}

// markDirty stands for ext4_handle_dirty_dirblock / _dx_node: the checksum
// is recomputed and the buffer stays verified.
func (dir *Inode) markDirtyLeaf(t *kernel.Task, lblk uint32, b []byte) {
	dir.dirblockCsumSet(t, b)
	dir.SB.Dev.SetBufferVerified(dir.PhysBlock(lblk))
}

func (dir *Inode) markDirtyDx(t *kernel.Task, lblk uint32, b []byte) {
	dir.dxCsumSet(t, b)
	dir.SB.Dev.SetBufferVerified(dir.PhysBlock(lblk))
}

// String is the canonical one-line dump of the inode's directory state.
func (dir *Inode) String() string {
	s := fmt.Sprintf("ext4 dir ino=%d size=%d blocks=%d", dir.Ino, dir.Size, dir.nblocks())
	if dir.IsDx() {
		s += " htree"
	}
	if dir.IsCasefolded() {
		s += " casefold"
	}
	if dir.IsEncrypted() {
		s += " encrypt"
	}
	if dir.SB.MetadataCsum {
		s += " csum"
	}
	return s
}
