package vfs

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// Dentry is the VFS dentry: dcache's dentry over the VFS inode, so that
// d_inode_rcu is one atomic load of a *Inode.
type Dentry = dcache.Dentry[Inode]

// inodeCache accounts struct inode (about 600 bytes on x86-64 in Linux
// 6.x; a filesystem's own part, such as ext4_inode_info, is accounted by
// the filesystem).
var inodeCache = kmem.NewCache("inode_cache", 600)

// Inode is struct inode (include/linux/fs.h). The fields the lockless
// fast paths read (i_flags, i_size, i_nlink, i_crypt_info) are atomics;
// i_mode's file type never changes once the inode is published. A
// filesystem creates inodes with NewInode and keeps its own data in
// Private.
type Inode struct {
	// i_crypt_info (fscrypt's per-inode key), published with a release
	// store and read with an acquire load.
	fscrypt.InfoSlot
	// i_dentry and i_lock.
	aliases dcache.Aliases[Inode]

	ino uint64
	// mode is i_mode: its file type never changes once the inode is
	// published; chmod changes the permission bits (an atomic store, as
	// the lockless walk reads them in may_lookup).
	mode    atomic.Uint32
	uid     uint32
	gid     uint32
	blkbits uint8
	// freeing is I_FREEING, under ilock.
	freeing bool
	// i_atime, i_mtime, i_ctime (nanoseconds since the Unix epoch) and
	// i_state's dirty bits (atime.go).
	atime, mtime, ctime atomic.Int64
	dirty               atomic.Uint32
	flags               atomic.Uint32 // i_flags: S_ENCRYPTED, S_CASEFOLD, S_DEAD, ...
	nlink               atomic.Uint32
	// rdev is i_rdev, a device's number (dev_t, special.go).
	rdev  uint32
	size  atomic.Int64
	count atomic.Int32 // i_count
	link  atomic.Pointer[string]

	// ilock orders the decision to evict against igrab (the inode_hash_lock
	// and I_FREEING of the kernel).
	ilock sync.Mutex
	// pipe is i_pipe, a FIFO's pipe while it is open (pipe.go), under
	// ilock (the kernel's i_lock).
	pipe *pipeInodeInfo

	sb *SuperBlock

	// Rwsem is i_rwsem: the directory lock of namespace operations and the
	// lock of size changes.
	Rwsem sync.RWMutex
	// Op is i_op, Fop is i_fop.
	Op  InodeOperations
	Fop FileOperations
	// Data is i_data, the regular file's page mapping (i_mapping points
	// at it); the filesystem sets its Ops (and Host) when it makes the
	// inode. Its lock protects the filesystem's block map.
	Data AddressSpace
	// Private is the filesystem's inode data (the container of the
	// kernel's vfs_inode, or i_private).
	Private any
	// Pad to a multiple of the cache line.
}

// NewInode allocates an inode of sb (new_inode): mode is the file type and
// permission bits, ino its number, blocks of sb's block size, one
// reference (the caller's), nlink 1. The filesystem sets Op, Fop and
// Private before it makes the inode visible. Errors: ENOMEM.
func NewInode(t *kernel.Task, sb *SuperBlock, ino uint64, mode uint32) (*Inode, error) {
	if err := inodeCache.Alloc(&t.Ctx, kmem.GFPKernel); err != nil {
		return nil, err
	}
	i := &Inode{ino: ino, sb: sb, blkbits: sb.blkbits}
	i.mode.Store(mode)
	stampNew(i)
	i.count.Store(1)
	i.nlink.Store(1)
	return i, nil
}

// InodeInit initialises an inode that the filesystem embeds in its own
// inode (inode_init_always, for the struct inode inside ext4_inode_info or
// f2fs_inode_info that ->alloc_inode returns): as NewInode, but the
// caller provides the memory. private is the container, which the
// filesystem's EXT4_I-like accessor gets back from Private. Errors:
// ENOMEM.
func InodeInit(t *kernel.Task, i *Inode, sb *SuperBlock, ino uint64, mode uint32, private any) error {
	if err := inodeCache.Alloc(&t.Ctx, kmem.GFPKernel); err != nil {
		return err
	}
	i.ino, i.sb, i.blkbits, i.Private = ino, sb, sb.blkbits, private
	i.mode.Store(mode)
	stampNew(i)
	i.count.Store(1)
	i.nlink.Store(1)
	return nil
}

// InodeKmemCache returns the kmem cache inodes are accounted to.
func InodeKmemCache() *kmem.Cache { return inodeCache }

// Ino is i_ino (fscrypt.Inode).
func (i *Inode) Ino() uint64 { return i.ino }

// Mode is i_mode (fscrypt.Inode).
func (i *Inode) Mode() uint32 { return i.mode.Load() }

// Blkbits is i_blkbits (fscrypt.Inode).
func (i *Inode) Blkbits() uint8 { return i.blkbits }

// IsEncrypted is IS_ENCRYPTED (fscrypt.Inode): one atomic load.
func (i *Inode) IsEncrypted() bool { return i.flags.Load()&S_ENCRYPTED != 0 }

// IsCasefolded is IS_CASEFOLDED (fscrypt.Inode).
func (i *Inode) IsCasefolded() bool { return i.flags.Load()&S_CASEFOLD != 0 }

// IsDeadDir is IS_DEADDIR (fscrypt.DeadDir): a removed directory.
func (i *Inode) IsDeadDir() bool { return i.flags.Load()&S_DEAD != 0 }

// OwnerUID is i_uid (fscrypt.Owner).
func (i *Inode) OwnerUID() uint32 { return i.uid }

// SetOwner sets i_uid.
func (i *Inode) SetOwner(uid uint32) { i.uid = uid }

// InodeInitOwner is fs/inode.c inode_init_owner: a new inode is owned by
// the fsuid of the creating task's credentials (current_fsuid()), not by
// its directory's owner; its group is the directory's when the directory
// is setgid (and a new directory inherits S_ISGID), else the task's
// fsgid. mode is the new inode's mode (as NewInode set it).
func InodeInitOwner(t *kernel.Task, inode, dir *Inode, mode uint32) {
	cred := t.CurrentCred()
	inode.uid = cred.UID
	if dir != nil && dir.Mode()&S_ISGID != 0 {
		inode.gid = dir.gid
		if mode&S_IFMT == S_IFDIR {
			mode |= S_ISGID
		}
	} else {
		inode.gid = cred.GID
	}
	inode.mode.Store(mode)
	// The filesystems' new-inode path (__ext4_new_inode, f2fs_new_inode)
	// marks the new inode dirty: it waits for writeback (writeback.go).
	setDirtyBits(inode, I_DIRTY_SYNC)
}

// OwnerGID is i_gid.
func (i *Inode) OwnerGID() uint32 { return i.gid }

// SuperBlock is i_sb as fscrypt sees it (fscrypt.Inode).
func (i *Inode) SuperBlock() fscrypt.SuperBlock { return i.sb }

// SB is i_sb.
func (i *Inode) SB() *SuperBlock { return i.sb }

// Flags returns i_flags.
func (i *Inode) Flags() uint32 { return i.flags.Load() }

// SetFlags sets bits in i_flags (inode_set_flags).
func (i *Inode) SetFlags(f uint32) {
	for {
		o := i.flags.Load()
		if i.flags.CompareAndSwap(o, o|f) {
			return
		}
	}
}

// ClearFlags clears bits in i_flags.
func (i *Inode) ClearFlags(f uint32) {
	for {
		o := i.flags.Load()
		if i.flags.CompareAndSwap(o, o&^f) {
			return
		}
	}
}

// Size returns i_size (i_size_read).
func (i *Inode) Size() int64 { return i.size.Load() }

// SetSize sets i_size (i_size_write); the caller holds i_rwsem.
func (i *Inode) SetSize(n int64) { i.size.Store(n) }

// Nlink returns i_nlink.
func (i *Inode) Nlink() uint32 { return i.nlink.Load() }

// SetNlink sets i_nlink (set_nlink).
func (i *Inode) SetNlink(n uint32) { i.nlink.Store(n) }

// IncNlink is inc_nlink.
func (i *Inode) IncNlink() { i.nlink.Add(1) }

// DropNlink is drop_nlink.
func (i *Inode) DropNlink(t *kernel.Task) {
	for {
		n := i.nlink.Load()
		if n == 0 {
			t.WarnOn(true, "drop_nlink: inode->i_nlink == 0")
			return
		}
		if i.nlink.CompareAndSwap(n, n-1) {
			return
		}
	}
}

// ClearNlink is clear_nlink.
func (i *Inode) ClearNlink() { i.nlink.Store(0) }

// Count returns i_count (a racy snapshot).
func (i *Inode) Count() int32 { return i.count.Load() }

// Link returns the cached symlink target (i_link), or "" and false.
func (i *Inode) Link() (string, bool) {
	if p := i.link.Load(); p != nil {
		return *p, true
	}
	return "", false
}

// SetLink caches a symlink target (i_link) if none is cached yet
// (cmpxchg_release, as fscrypt_get_symlink does).
func (i *Inode) SetLink(target string) { i.link.CompareAndSwap(nil, &target) }

// ClearLink drops the cached target.
func (i *Inode) ClearLink() { i.link.Store(nil) }

// IsDir, IsReg and IsLnk test the file type (S_ISDIR, S_ISREG, S_ISLNK).
func (i *Inode) IsDir() bool { return i.mode.Load()&S_IFMT == S_IFDIR }

// IsReg reports S_ISREG.
func (i *Inode) IsReg() bool { return i.mode.Load()&S_IFMT == S_IFREG }

// IsLnk reports S_ISLNK.
func (i *Inode) IsLnk() bool { return i.mode.Load()&S_IFMT == S_IFLNK }

// Aliases returns the inode's alias list and i_lock (for the dcache).
func (i *Inode) Aliases() *dcache.Aliases[Inode] { return &i.aliases }

// String is the canonical one-line dump:
//
//	inode 12 mode=0100644 nlink=1 size=5 count=1 flags=ENCRYPTED key=yes
func (i *Inode) String() string {
	if i == nil {
		return "inode <nil>"
	}
	f := i.flags.Load()
	var fl string
	for _, n := range []struct {
		bit  uint32
		name string
	}{{S_DEAD, "DEAD"}, {S_ENCRYPTED, "ENCRYPTED"}, {S_CASEFOLD, "CASEFOLD"}, {S_APPEND, "APPEND"}, {S_IMMUTABLE, "IMMUTABLE"}} {
		if f&n.bit != 0 {
			if fl != "" {
				fl += "|"
			}
			fl += n.name
		}
	}
	if fl == "" {
		fl = "0"
	}
	key := "-"
	if i.IsEncrypted() {
		key = "no"
		if i.CryptInfo() != nil {
			key = "yes"
		}
	}
	return fmt.Sprintf("inode %d mode=%#o nlink=%d size=%d count=%d flags=%s key=%s",
		i.ino, i.mode.Load(), i.nlink.Load(), i.size.Load(), i.count.Load(), fl, key)
}

// Ihold takes a reference on an inode the caller already holds one on
// (ihold).
func Ihold(inode *Inode) {
	if inode.count.Add(1) < 2 {
		panic("ihold on an inode without references")
	}
}

// Igrab takes a reference unless the inode is being evicted (igrab), for
// a filesystem that finds an inode through its own tables.
func Igrab(inode *Inode) bool {
	inode.ilock.Lock()
	defer inode.ilock.Unlock()
	if inode.freeing {
		return false
	}
	inode.count.Add(1)
	return true
}

// Iput drops a reference (iput). When the last one goes (iput_final), an
// inode with no links left is evicted: the filesystem's EvictInode frees
// its data and its key, and the struct inode is freed. A linked inode
// that the filesystem's DropInode says to drop (its master key was
// removed: fscrypt_drop_inode) has its in-core state evicted the same
// way; the kernel would free the struct inode too and read it again on
// the next lookup, while the model keeps the object, as the filesystems'
// inode tables stand for the inodes on disk, and the key is set up again
// on the next use if it is back.
func Iput(t *kernel.Task, inode *Inode) {
	if inode == nil {
		return
	}
	n := inode.count.Add(-1)
	if n > 0 {
		return
	}
	if n < 0 {
		t.WarnOn(true, "iput: inode has no reference")
		return
	}
	inode.ilock.Lock()
	if inode.count.Load() != 0 || inode.freeing {
		inode.ilock.Unlock()
		return
	}
	if inode.nlink.Load() == 0 {
		inode.freeing = true
		inode.ilock.Unlock()
		evict(t, inode)
		inodeCache.Free(&t.Ctx)
		return
	}
	if inode.dropInode(t) {
		evict(t, inode)
	}
	inode.ilock.Unlock()
}

// dropInode asks the filesystem's ->drop_inode (GenericDropInode without
// super operations).
func (inode *Inode) dropInode(t *kernel.Task) bool {
	if op := inode.sb.op; op != nil {
		return op.DropInode(t, inode)
	}
	return GenericDropInode(t, inode)
}

// evict is evict(): the filesystem's ->evict_inode, which frees the
// inode's data when no link is left and its in-core state (the fscrypt
// key among it) always; without super operations only the key.
func evict(t *kernel.Task, inode *Inode) {
	defer t.Trace("evict")()
	// inode_io_list_del: off the writeback lists.
	inode.ClearDirty()
	inode.Data.TruncateInodePagesFinal()
	if op := inode.sb.op; op != nil {
		op.EvictInode(t, inode)
		return
	}
	fscrypt.PutEncryptionInfo(t, inode)
}

// EvictIfUnused evicts the in-core state of an inode nothing holds whose
// filesystem's ->drop_inode says to drop it, as the kernel evicts unused
// inodes from the inode cache (for fscrypt_operations.DropInode after a
// key removal: evict_dentries_for_decrypted_inodes, then
// invalidate_inodes). It returns false if the inode is in use.
func EvictIfUnused(t *kernel.Task, inode *Inode) bool {
	inode.ilock.Lock()
	defer inode.ilock.Unlock()
	if inode.count.Load() != 0 {
		return false
	}
	if inode.nlink.Load() != 0 && inode.dropInode(t) {
		evict(t, inode)
	}
	return true
}

// ClearInode is clear_inode, which a filesystem's ->evict_inode calls
// once the inode's pages are gone: the in-core state the VFS keeps (the
// cached symlink body, i_link) is dropped. The filesystem frees its own
// state and calls fscrypt_put_encryption_info itself.
func ClearInode(inode *Inode) { inode.link.Store(nil) }

// dentryType is d_flags_for_inode: the DCACHE_*_TYPE of an inode.
func dentryType(i *Inode) dcache.Flags {
	switch i.mode.Load() & S_IFMT {
	case S_IFDIR:
		return dcache.DirectoryType
	case S_IFLNK:
		return dcache.SymlinkType
	case S_IFREG:
		return dcache.RegularType
	}
	return dcache.SpecialType
}

// inodeOps tells the dcache about VFS inodes.
var inodeOps = dcache.InodeOps[Inode]{
	Aliases: func(i *Inode) *dcache.Aliases[Inode] { return &i.aliases },
	Type:    dentryType,
	Iput:    Iput,
	Ino:     func(i *Inode) uint64 { return i.ino },
}
