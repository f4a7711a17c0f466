package f2fs

import (
	"fmt"
	"sync"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// Device is the simulated block device under f2fs. Block 0 is never handed
// out (NULL_ADDR). The directory code reads and writes blocks in place,
// like pages of the page cache that are always up to date.
type Device = vfs.BlockDevice

// NewDevice returns an empty device.
func NewDevice() *Device { return vfs.NewGrowingBlockDevice() }

// Inode flags (fi->i_flags) the directory code tests.
const (
	// CasefoldFL is F2FS_CASEFOLD_FL.
	CasefoldFL uint32 = 0x40000000
	// IndexFL is F2FS_INDEX_FL, which f2fs_new_inode gives every new
	// directory (lsattr's "I").
	IndexFL uint32 = 0x00001000
)

// Inode is struct f2fs_inode_info (fs/f2fs/f2fs.h): the VFS inode it
// embeds (vfs_inode) and f2fs's in-memory state of the inode: the map
// from page index to block address (the dnodes) of a file's data or a
// directory's dentry blocks, its xattrs, a symlink's target, and for a
// directory i_flags, i_current_depth, i_dir_level, FI_INLINE_DENTRY with
// the inode block holding the inline dentries, and the hash level a
// missed lookup left for the create that follows (chash, clevel). i_size
// is the VFS inode's (Size, SetSize); IS_ENCRYPTED is its S_ENCRYPTED.
//
// A directory is changed and looked up under the VFS inode's i_rwsem,
// held exclusive; readdir holds it shared, and readMu serialises the
// readers.
type Inode struct {
	vfs.Inode

	// SB is the filesystem (F2FS_I_SB); the VFS superblock is
	// Inode.SB(), which this field hides.
	SB *SuperBlock
	// IFlags is fi->i_flags (CasefoldFL); S_CASEFOLD of the VFS inode
	// follows it (f2fs_set_inode_flags).
	IFlags uint32
	// CurrentDepth is i_current_depth, the number of hash levels in use.
	CurrentDepth uint32
	// DirLevel is i_dir_level.
	DirLevel uint32
	// Inline is FI_INLINE_DENTRY: the dentries live in the inode block.
	Inline bool
	// Geo is the inline dentry geometry of this inode.
	Geo InlineGeometry
	// Node is a directory's inode block (struct f2fs_inode); only its
	// inline area is used. nil for other file types.
	Node []byte

	// data maps a regular file's or a directory's page indexes to block
	// addresses (the dnodes); a regular file's pages are the VFS inode's
	// i_data, whose lock protects data
	// for regular files.
	data vfs.BlockMap
	// xattrSem is i_xattr_sem; xattr the attributes (xattr.go).
	xattrSem sync.RWMutex
	xattr    xattrState
	// mu protects target.
	mu     sync.Mutex
	target []byte
	readMu sync.Mutex

	chash  uint32
	clevel uint32
	task   *kernel.Task

	// onDisk is set for an inode read from an image's node block (Node
	// then holds the whole block); inlineData is FI_INLINE_DATA;
	// extraIsize and xattrAddrs are i_extra_isize and
	// i_inline_xattr_size (in words) as do_read_inode sets them.
	onDisk     bool
	inlineData bool
	extraIsize int
	xattrAddrs int
}

// F2FS_I is F2FS_I(inode): the f2fs_inode_info around a VFS inode of an
// f2fs. It panics for an inode of another filesystem, as container_of
// would read garbage.
func F2FS_I(inode *vfs.Inode) *Inode { return inode.Private.(*Inode) }

// nid is the inode's node id (i_ino).
func (fi *Inode) nid() uint32 { return uint32(fi.Ino()) }

// IsCasefolded is IS_CASEFOLDED(dir) as the directory code tests it: the
// VFS inode's S_CASEFOLD, on a superblock with an encoding
// (sb->s_encoding).
func (fi *Inode) IsCasefolded() bool { return fi.Inode.IsCasefolded() && fi.SB.Encoding != nil }

// setInodeFlags is f2fs_set_inode_flags: S_CASEFOLD of the VFS inode from
// F2FS_CASEFOLD_FL.
func (fi *Inode) setInodeFlags() {
	if fi.IFlags&CasefoldFL != 0 {
		fi.SetFlags(vfs.S_CASEFOLD)
	} else {
		fi.ClearFlags(vfs.S_CASEFOLD)
	}
}

// inlineArea is inline_data_addr(dir, ipage).
func (fi *Inode) inlineArea() []byte {
	return fi.Node[fi.Geo.Offset : fi.Geo.Offset+fi.Geo.MaxInlineData]
}

// InlineDentryPtr is make_dentry_ptr_inline over the inode's inline area.
func (fi *Inode) InlineDentryPtr() DentryPtr {
	return MakeDentryPtrInline(fi.Geo, fi.inlineArea())
}

// dirBlocks is dir_blocks(inode): i_size in pages.
func (fi *Inode) dirBlocks() uint64 { return uint64(fi.Size()+BlockSize-1) / BlockSize }

// findDataBlock is f2fs_find_data_folio: the block at page index bidx, or
// nil for a hole.
func (fi *Inode) findDataBlock(bidx uint64) []byte {
	return fi.data.GetBlock(bidx, false)
}

// getNewDataBlock is f2fs_get_new_data_folio(dir, NULL, bidx, true): the
// block at bidx, allocated (zeroed) if it is a hole, growing i_size to
// cover it; nil when no block is left (ENOSPC to the caller).
func (fi *Inode) getNewDataBlock(bidx uint64) []byte {
	if b := fi.findDataBlock(bidx); b != nil {
		return b
	}
	b := fi.data.GetBlock(bidx, true)
	if b == nil {
		// No free block on an image (or a read-only one): the hole stays.
		fi.data.Punch(bidx)
		return nil
	}
	if end := int64(bidx+1) * BlockSize; fi.Size() < end {
		fi.SetSize(end)
	}
	return b
}

// truncateHole is f2fs_truncate_hole(dir, bidx, bidx+1): the block goes back
// to the device and the page index becomes a hole (i_size is kept).
func (fi *Inode) truncateHole(bidx uint64) {
	fi.data.Punch(bidx)
}

// truncateBlocks is f2fs_truncate_blocks: the blocks from page index from
// on go back to the device (i_size is the caller's).
func (fi *Inode) truncateBlocks(from uint64) {
	fi.data.Truncate(from)
}

// Pages returns the page indexes that hold blocks (a directory's dentry
// blocks), in order.
func (fi *Inode) Pages() []uint64 {
	return fi.data.Indexes()
}

// BlockAt returns the block at page index bidx (a directory's dentry
// block), or nil for a hole.
func (fi *Inode) BlockAt(bidx uint64) []byte { return fi.findDataBlock(bidx) }

// SetBlock installs raw as the dentry block at page index bidx (copying it
// to a new device block), growing i_size; for tests and images built
// elsewhere.
func (fi *Inode) SetBlock(bidx uint64, raw []byte) {
	if b := fi.getNewDataBlock(bidx); b != nil {
		copy(b, raw)
	}
}

// String is the canonical one-line dump of the directory inode's state.
func (fi *Inode) String() string {
	s := fmt.Sprintf("f2fs dir ino=%d size=%d depth=%d dir_level=%d", fi.Ino(), fi.Size(), fi.CurrentDepth, fi.DirLevel)
	if fi.Inline {
		s += " inline"
	}
	if fi.IsCasefolded() {
		s += " casefold"
	}
	if fi.IsEncrypted() {
		s += " encrypt"
	}
	return s + fmt.Sprintf(" blocks=%d", fi.data.Len())
}

// discard drops a new inode that never got a name (f2fs_handle_failed_inode).
func discard(t *kernel.Task, fi *Inode) {
	fi.ClearNlink()
	vfs.Iput(t, &fi.Inode)
}

// iget is f2fs_iget for an inode number read from a dentry: the in-memory
// inode with a new reference. A nid outside the node area is corruption
// (f2fs_check_nid_range: a warning, EFSCORRUPTED); an in-range nid that is
// not allocated reads as a node with NULL_ADDR (read_node_folio), ENOENT.
func (sbi *SuperBlock) iget(t *kernel.Task, ino uint32) (*Inode, error) {
	sbi.mu.Lock()
	fi := sbi.inodes[ino]
	end := sbi.nextNid
	sbi.mu.Unlock()
	if sbi.img != nil {
		end = sbi.img.maxNid
	}
	if ino < RootIno || (end != 0 && ino >= end) {
		sbi.warn(t, "f2fs_check_nid_range: out-of-range nid=%x, run fsck to fix.", ino)
		return nil, errno.EFSCORRUPTED
	}
	if fi == nil && sbi.img != nil {
		sbi.imgMu.Lock()
		defer sbi.imgMu.Unlock()
		sbi.mu.Lock()
		fi = sbi.inodes[ino]
		sbi.mu.Unlock()
		if fi == nil {
			// The new inode comes with its one reference.
			return sbi.readInode(t, ino)
		}
	}
	if fi == nil || !vfs.Igrab(&fi.Inode) {
		return nil, errno.ENOENT
	}
	return fi, nil
}

// Context returns a copy of an inode's stored fscrypt context (nil if
// none): the bytes of the encryption xattr, 28 (v1) or 40 (v2) long.
func Context(inode *vfs.Inode) []byte { return F2FS_SB(inode.SB()).Context(inode) }

// LookupInode returns the in-memory inode ino of sbi, read from the image
// if it is not in memory yet, without a new reference (for checkers and
// dumps that walk a mounted filesystem); nil when there is none.
func LookupInode(t *kernel.Task, sbi *SuperBlock, ino uint32) *Inode {
	fi, err := sbi.iget(t, ino)
	if err != nil {
		return nil
	}
	vfs.Iput(t, &fi.Inode)
	return fi
}

// NfsGetInode is f2fs_nfs_get_inode (fs/f2fs/super.c): the inode ino of
// vsb by number, with a new reference, for callers that hold a number and
// no name (a file handle there; the model's dump.f2fs -i here). A nid
// outside the node area (f2fs_check_nid_range) and an inode that is not
// there are ESTALE. The caller drops the reference with vfs.Iput.
func NfsGetInode(t *kernel.Task, vsb *vfs.SuperBlock, ino uint64) (*vfs.Inode, error) {
	sbi := F2FS_SB(vsb)
	if ino > uint64(^uint32(0)) {
		return nil, errno.ESTALE
	}
	fi, err := sbi.iget(t, uint32(ino))
	if err != nil {
		return nil, errno.ESTALE
	}
	return &fi.Inode, nil
}

// DiskName returns i_name, the name inode ino holds in its own node block
// on vsb's image (what f2fs_init_inode_metadata copied there from the
// dentry: the ciphertext for an encrypted name), as dump.f2fs prints it;
// nil when the filesystem is not an image or the inode has no node. The
// caller holds no lock of the filesystem.
func DiskName(t *kernel.Task, vsb *vfs.SuperBlock, ino uint64) []byte {
	sbi := F2FS_SB(vsb)
	if sbi.img == nil || ino > uint64(^uint32(0)) {
		return nil
	}
	sbi.imgMu.Lock()
	defer sbi.imgMu.Unlock()
	n, err := sbi.readNode(t, uint32(ino), nodeTypeInode)
	if err != nil {
		return nil
	}
	nl := min(int(n.u32(iNamelen)), NameLen)
	return append([]byte(nil), n[iName:iName+nl]...)
}
