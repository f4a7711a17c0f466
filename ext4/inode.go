package ext4

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/vfs"
)

// Device is the simulated block device under ext4, with its buffer cache
// (buffer_verified marks for the checksummed directory blocks).
type Device = vfs.BlockDevice

// NewDevice returns an empty device.
func NewDevice() *Device { return vfs.NewGrowingBlockDevice() }

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

// Inode is struct ext4_inode_info: the VFS inode (vfs_inode, the first
// field, as in the kernel) and ext4's in-core state: the block map, the
// xattrs, a symlink's target, a regular file's mapping, and a
// directory's state (i_flags, i_dir_start_lookup). i_size is the VFS
// inode's (Size, SetSize). EXT4_I gets it back from the VFS inode.
type Inode struct {
	vfs.Inode

	// SB is EXT4_SB(inode->i_sb); the embedded inode's SB() is the VFS
	// superblock.
	SB *SuperBlock
	// Generation is i_generation (it feeds the metadata checksums).
	Generation uint32
	// Flags is ei->i_flags (IndexFL, CasefoldFL, EncryptFL); the VFS
	// inode's S_CASEFOLD and S_ENCRYPTED follow it (SetInodeFlags). The
	// directory's i_rwsem protects it.
	Flags uint32

	// blocks is a directory's block map (logical block -> device block,
	// 0 a hole); data a regular file's, whose pages are the VFS inode's
	// i_data, whose lock protects data.
	blocks []uint32
	data   vfs.BlockMap
	// xattrSem is xattr_sem; xattr the attributes' bytes (xattr_set.go).
	xattrSem sync.RWMutex
	xattr    xattrState
	// mu protects target.
	mu     sync.Mutex
	target []byte
	// dirStartLookup is i_dir_start_lookup.
	dirStartLookup uint32
	// The VFS holds a directory's i_rwsem exclusive around every change
	// and lookup, but only shared around readdir: readMu serialises the
	// readers.
	readMu sync.Mutex
	// iVersion is i_version as a directory's changes bump it
	// (inode_inc_iversion), under i_rwsem; readMu orders its reads.
	iVersion uint64
	// disk is the inode's on-disk state on an image (nil on the growing
	// device); fblocks is a regular file's map on an image whose blocks
	// are smaller than a page (image_subpage.go), under the i_data lock.
	disk    *inodeDisk
	fblocks map[uint32]uint32
}

// EXT4_I is EXT4_I(inode): the ext4 inode that embeds a VFS inode of an
// ext4 superblock (like container_of, it is only for ext4's inodes: for
// another filesystem's it panics).
func EXT4_I(inode *vfs.Inode) *Inode { return inode.Private.(*Inode) }

// ino is i_ino as the on-disk 32 bits.
func (dir *Inode) ino() uint32 { return uint32(dir.Ino()) }

// SetInodeFlags is ext4_set_inode_flags for the flags the model keeps:
// S_CASEFOLD follows EXT4_CASEFOLD_FL and S_ENCRYPTED EXT4_ENCRYPT_FL.
func (dir *Inode) SetInodeFlags() {
	for _, f := range [...]struct{ ext4, vfs uint32 }{{CasefoldFL, vfs.S_CASEFOLD}, {EncryptFL, vfs.S_ENCRYPTED}} {
		if dir.Flags&f.ext4 != 0 {
			dir.Inode.SetFlags(f.vfs)
		} else {
			dir.Inode.ClearFlags(f.vfs)
		}
	}
}

// IsCasefolded is IS_CASEFOLDED for ext4's directory code: S_CASEFOLD on a
// superblock with an encoding (sb->s_encoding).
func (dir *Inode) IsCasefolded() bool { return dir.Inode.IsCasefolded() && dir.SB.Encoding != nil }

// HashInDirent is ext4_hash_in_dirent: casefolded and encrypted.
func (dir *Inode) HashInDirent() bool { return dir.IsCasefolded() && dir.IsEncrypted() }

// IsDx is is_dx(dir): dir_index and EXT4_INDEX_FL.
func (dir *Inode) IsDx() bool { return dir.SB.DirIndex && dir.Flags&IndexFL != 0 }

// nblocks is i_size in blocks.
func (dir *Inode) nblocks() uint32 { return uint32(dir.Size() / int64(dir.bsize())) }

// bsize is the directory's block size (s_blocksize: BlockSize, or an
// image's).
func (dir *Inode) bsize() int { return dir.SB.blocksize() }

// blocksize is s_blocksize.
func (sb *SuperBlock) blocksize() int {
	if sb.disk != nil {
		return sb.disk.bs
	}
	return BlockSize
}

// BlockAt returns logical block lblk, or nil for a hole or past i_size.
func (dir *Inode) BlockAt(lblk uint32) []byte {
	if int(lblk) >= len(dir.blocks) || lblk >= dir.nblocks() {
		return nil
	}
	return dir.SB.dirBlock(dir.blocks[lblk])
}

// dirBlock is the device block pblk of a directory, nil for a hole (0:
// on an image's fixed-size device block 0 exists, and holds the
// superblock).
func (sb *SuperBlock) dirBlock(pblk uint32) []byte {
	if pblk == 0 {
		return nil
	}
	if sb.disk != nil {
		return sb.disk.bread(uint64(pblk))
	}
	return sb.Dev.Block(pblk)
}

// allocBlock is ext4_new_meta_blocks of one zeroed block for a directory:
// the device's block on the growing device, a block of the bitmaps on an
// image (whose blocks may be smaller than the device's pages); address 0
// and nil when none is free.
func (sb *SuperBlock) allocBlock() (uint32, []byte) {
	if sb.disk == nil {
		return sb.Dev.Alloc()
	}
	a, ok := sb.disk.AllocMeta()
	if !ok {
		return 0, nil
	}
	b := sb.disk.bread(uint64(a))
	clear(b)
	sb.Dev.Unverify(a)
	return a, b
}

// freeBlock gives a block allocBlock returned back.
func (sb *SuperBlock) freeBlock(a uint32) {
	if sb.disk == nil {
		sb.Dev.Free(a)
		return
	}
	sb.disk.Free(a)
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
	dir.releaseBlocks()
	for _, r := range raw {
		a, b := dir.SB.allocBlock()
		if b == nil {
			break // a full image: the rest stays a hole
		}
		copy(b, r)
		dir.blocks = append(dir.blocks, a)
	}
	dir.SetSize(int64(len(raw)) * int64(dir.bsize()))
}

// append is ext4_append: a new zeroed block at the end; i_size grows.
// ENOSPC when the device has no free block (an image).
func (dir *Inode) appendBlock() (uint32, []byte, error) {
	lblk := dir.nblocks()
	a, b := dir.SB.allocBlock()
	if b == nil {
		return 0, nil, errno.ENOSPC
	}
	for uint32(len(dir.blocks)) < lblk {
		dir.blocks = append(dir.blocks, 0)
	}
	dir.blocks = append(dir.blocks[:lblk], a)
	dir.SetSize(dir.Size() + int64(dir.bsize()))
	return lblk, b, nil
}

// releaseBlocks gives every block of the directory back to the device
// (its inode is being evicted).
func (dir *Inode) releaseBlocks() {
	for _, a := range dir.blocks {
		if a != 0 {
			dir.SB.freeBlock(a)
		}
	}
	dir.blocks = nil
	dir.SetSize(0)
}

// Inode numbers of a new filesystem: EXT4_ROOT_INO, and
// EXT4_GOOD_OLD_FIRST_INO, the first one handed out (s_first_ino).
const (
	RootIno  = 2
	FirstIno = 11
)

// inodeInfoCache is ext4_inode_cachep's share of struct ext4_inode_info
// beyond the struct inode the VFS accounts.
var inodeInfoCache = kmem.NewCache("ext4_inode_cache", 520)

// generation is i_generation of a new inode: ext4 draws it at random; the
// model derives it from the inode number so that runs repeat.
func generation(ino uint32) uint32 { return ino * 2654435761 }

// allocInode is ext4_alloc_inode and new_inode with ext4's operations for
// the file type, under inode number ino (0: a free one, as
// ext4_new_inode's bitmap search finds), entered in the inode table.
// Errors: ENOSPC when the inode table is full, ENOMEM.
func (sb *SuperBlock) allocInode(t *kernel.Task, ino uint32, mode uint32) (*Inode, error) {
	if err := inodeInfoCache.Alloc(&t.Ctx, kmem.GFPNoFS); err != nil {
		return nil, err
	}
	fromBitmap := false
	if ino == 0 && sb.disk != nil {
		n, ok := sb.disk.newInodeNum(mode&vfs.S_IFMT == vfs.S_IFDIR)
		if !ok {
			inodeInfoCache.Free(&t.Ctx)
			return nil, errno.ENOSPC
		}
		ino, fromBitmap = n, true
	}
	sb.mu.Lock()
	if ino == 0 {
		if n := len(sb.freeInos); n > 0 {
			ino = sb.freeInos[n-1]
			sb.freeInos = sb.freeInos[:n-1]
		} else if sb.nextIno > sb.InodesCount {
			sb.mu.Unlock()
			inodeInfoCache.Free(&t.Ctx)
			return nil, errno.ENOSPC
		} else {
			ino = sb.nextIno
			sb.nextIno++
		}
	}
	sb.mu.Unlock()
	ei := &Inode{SB: sb, Generation: generation(ino)}
	if err := vfs.InodeInit(t, &ei.Inode, sb.vsb, uint64(ino), mode, ei); err != nil {
		sb.freeIno(ino)
		if fromBitmap {
			sb.disk.freeInodeNum(ino, mode&vfs.S_IFMT == vfs.S_IFDIR)
		}
		inodeInfoCache.Free(&t.Ctx)
		return nil, err
	}
	if fromBitmap {
		sb.newDiskInode(ei)
	}
	// __ext4_new_inode: with the extents feature (every filesystem the
	// model makes has it) directories, regular files and symlinks are
	// extent-mapped (EXT4_INODE_EXTENTS, ext4_ext_tree_init).
	switch mode & vfs.S_IFMT {
	case vfs.S_IFREG, vfs.S_IFDIR, vfs.S_IFLNK:
		ei.Flags |= ExtentsFL
	}
	switch mode & vfs.S_IFMT {
	case vfs.S_IFDIR:
		ei.Op, ei.Fop = sb.dirOps, sb.dirFileOps
	case vfs.S_IFLNK:
		ei.Op, ei.Fop = sb.symlinkOps, vfs.NoFileOps{}
	case vfs.S_IFCHR, vfs.S_IFBLK, vfs.S_IFIFO, vfs.S_IFSOCK:
		// The caller's init_special_inode sets i_fop (special.go).
		ei.Op, ei.Fop = specialInodeOps, vfs.NoFileOps{}
	default:
		ei.data.Init(sb.Dev)
		ei.Data.Host, ei.Data.Ops = &ei.Inode, sb.aops
		ei.Op, ei.Fop = sb.fileOps, sb.fileFileOps
	}
	sb.mu.Lock()
	sb.inodes[ino] = ei
	sb.mu.Unlock()
	return ei, nil
}

// NewDirInode is ext4_new_inode for a directory that no directory names:
// inode number ino with generation gen and permission bits mode, no blocks
// (InitNewDir makes its first). It is for tools and tests that work on one
// directory's blocks outside the namespace (vfslab dump, e2fsprogs
// images). Errors: ENOMEM.
func (sb *SuperBlock) NewDirInode(t *kernel.Task, ino, gen, mode uint32) (*Inode, error) {
	dir, err := sb.allocInode(t, ino, vfs.S_IFDIR|mode&^vfs.S_IFMT)
	if err != nil {
		return nil, err
	}
	dir.Generation = gen
	return dir, nil
}

// freeIno is ext4_free_inode: the number goes back to the bitmap (on an
// image evictDisk has cleared its bit: the inode only leaves the cache).
func (sb *SuperBlock) freeIno(ino uint32) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	delete(sb.inodes, ino)
	if sb.disk == nil {
		sb.freeInos = append(sb.freeInos, ino)
	}
}

// discard drops a new inode that never got a name.
func discard(t *kernel.Task, inode *Inode) {
	inode.ClearNlink()
	vfs.Iput(t, &inode.Inode)
}

// iget is ext4_lookup's checks and ext4_iget for an inode number read from
// a dirent: an invalid number (ext4_valid_inum) and an unallocated inode
// ("deleted inode referenced", ext4_iget's ESTALE) are logged as errors on
// dir and are EFSCORRUPTED. The caller gets a reference.
func (sb *SuperBlock) iget(t *kernel.Task, dir *Inode, ino uint32) (*Inode, error) {
	if ino != RootIno && (ino < FirstIno || ino > sb.InodesCount) {
		dir.errorInode(t, "ext4_lookup", 0, "bad inode number: %d", ino)
		return nil, errno.EFSCORRUPTED
	}
	inode, err := sb.igetNumber(t, ino)
	if err == errStale {
		dir.errorInode(t, "ext4_lookup", 0, "deleted inode referenced: %d", ino)
		return nil, errno.EFSCORRUPTED
	}
	return inode, err
}

// igetNumber is ext4_iget's search: the cached inode ino with a new
// reference, else (an image) the inode read from its table. errStale
// when there is no such inode (not cached, or no links on disk); the
// image's read errors otherwise.
func (sb *SuperBlock) igetNumber(t *kernel.Task, ino uint32) (*Inode, error) {
	sb.mu.Lock()
	inode := sb.inodes[ino]
	sb.mu.Unlock()
	if inode == nil && sb.disk != nil {
		sb.igetMu.Lock()
		sb.mu.Lock()
		inode = sb.inodes[ino]
		sb.mu.Unlock()
		if inode == nil {
			in, err := sb.igetDisk(t, ino)
			sb.igetMu.Unlock()
			return in, err // allocInode's reference
		}
		sb.igetMu.Unlock()
	}
	if inode == nil || !vfs.Igrab(&inode.Inode) {
		return nil, errStale
	}
	return inode, nil
}

// newInode is __ext4_new_inode's part that matters here: a new inode in
// dir, casefolded if it is a directory in a casefolded one (ext4_mask_flags
// of the inherited EXT4_CASEFOLD_FL), with the directory's encryption
// policy (fscrypt_prepare_new_inode, then fscrypt_set_context). Errors:
// ENOKEY, ENOSPC, ENOMEM.
func (sb *SuperBlock) newInode(t *kernel.Task, dir *Inode, mode uint32) (*Inode, error) {
	defer t.Trace("__ext4_new_inode")()
	// The require-key step of fscrypt_prepare_new_inode
	// (fscrypt_policy_to_inherit), before an inode is taken.
	if err := hooks.FscryptPrepareCreate(t, &dir.Inode); err != nil {
		return nil, err
	}
	inode, err := sb.allocInode(t, 0, mode)
	if err != nil {
		return nil, err
	}
	vfs.InodeInitOwner(t, &inode.Inode, &dir.Inode, mode)
	if dir.Inode.IsCasefolded() && inode.IsDir() {
		inode.Inode.SetFlags(vfs.S_CASEFOLD)
		inode.Flags |= CasefoldFL
	}
	encrypt, err := fscrypt.PrepareNewInode(t, &dir.Inode, &inode.Inode)
	if err == nil && encrypt {
		err = fscrypt.SetContext(t, &inode.Inode, nil)
	}
	if err != nil {
		discard(t, inode)
		return nil, err
	}
	return inode, nil
}

// EvictInode implements vfs.SuperOperations (ext4_evict_inode,
// ext4_clear_inode): an inode with no links left gives its blocks back to
// the device and its number back; in every case the in-core state goes,
// its key with fscrypt_put_encryption_info. The caller holds the last
// reference.
func (sb *SuperBlock) EvictInode(t *kernel.Task, inode *vfs.Inode) {
	ei := EXT4_I(inode)
	if inode.Nlink() == 0 {
		ei.Data.Lock()
		ei.data.Truncate(0)
		ei.Data.Unlock()
		ei.releaseBlocks()
		sb.evictDisk(t, ei, false)
		ei.xattr = xattrState{}
		sb.freeIno(ei.ino())
		inodeInfoCache.Free(&t.Ctx)
	} else {
		sb.evictDisk(t, ei, true)
	}
	vfs.ClearInode(inode)
	fscrypt.PutEncryptionInfo(t, inode)
}

// RawBlocks returns copies of a regular file's stored blocks by page index
// (ciphertext for an encrypted file; nil for holes). It takes the
// mapping's lock.
func RawBlocks(inode *vfs.Inode) [][]byte {
	ei := EXT4_I(inode)
	ei.Data.Lock()
	defer ei.Data.Unlock()
	return ei.data.Raw()
}

// csumSeed is ei->i_csum_seed: crc32c of the inode number and generation
// chained from the filesystem seed (ext4_iget).
func (dir *Inode) csumSeed() uint32 {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], dir.ino())
	c := Crc32c(dir.SB.CsumSeed, b[:])
	binary.LittleEndian.PutUint32(b[:], dir.Generation)
	return Crc32c(c, b[:])
}

// String is the canonical one-line dump of the inode's directory state.
func (dir *Inode) String() string {
	s := fmt.Sprintf("ext4 dir ino=%d size=%d blocks=%d", dir.ino(), dir.Size(), dir.nblocks())
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

// NfsGetInode is ext4_nfs_get_inode (fs/ext4/super.c): the inode ino of
// vsb by number, with a new reference, for callers that hold a number and
// no name (a file handle there; the model's debugfs `<INO>` here). An
// inode number below the first non-reserved one (other than the root) or
// above s_inodes_count is ESTALE, as is an inode with no links
// (ext4_iget with EXT4_IGET_HANDLE). The caller drops the reference with
// vfs.Iput.
func NfsGetInode(t *kernel.Task, vsb *vfs.SuperBlock, ino uint64) (*vfs.Inode, error) {
	sb := EXT4_SB(vsb)
	if (ino < FirstIno && ino != RootIno) || ino > uint64(sb.InodesCount) {
		return nil, errno.ESTALE
	}
	inode, err := sb.igetNumber(t, uint32(ino))
	if err == errStale {
		return nil, errno.ESTALE
	}
	if err != nil {
		return nil, err
	}
	return &inode.Inode, nil
}
