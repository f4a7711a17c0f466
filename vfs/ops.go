package vfs

import (
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
)

// InodeOperations is struct inode_operations (include/linux/fs.h): what a
// filesystem does for the namespace operations on its inodes. A directory's
// operations are called with the directory's i_rwsem held (and, for rename,
// both directories' and the children's, as lock_rename and vfs_rename take
// them). Embed NoInodeOps to get the kernel's answer for the operations a
// filesystem leaves out.
type InodeOperations interface {
	// Lookup is ->lookup: find dentry's name in dir. It either attaches
	// the inode (or nil, for a negative dentry) to dentry with
	// SpliceAlias and returns nil, or returns another dentry (an existing
	// alias of a directory) with a reference, which the VFS uses instead.
	// Names longer than NAME_MAX give ENAMETOOLONG.
	Lookup(t *kernel.Task, dir *Inode, dentry *Dentry, flags uint32) (*Dentry, error)
	// Create is ->create: make a regular file for the negative dentry and
	// instantiate it.
	Create(t *kernel.Task, dir *Inode, dentry *Dentry, mode uint32, excl bool) error
	// Mkdir is ->mkdir.
	Mkdir(t *kernel.Task, dir *Inode, dentry *Dentry, mode uint32) error
	// Rmdir is ->rmdir: ENOTEMPTY for a directory with entries.
	Rmdir(t *kernel.Task, dir *Inode, dentry *Dentry) error
	// Unlink is ->unlink.
	Unlink(t *kernel.Task, dir *Inode, dentry *Dentry) error
	// Rename is ->rename with renameat2's flags. The VFS has made the
	// generic checks; the filesystem checks its own (ENOTEMPTY, the
	// fscrypt rules) and moves its entries; the VFS then moves the dentries
	// (d_move / d_exchange).
	Rename(t *kernel.Task, oldDir *Inode, oldDentry *Dentry, newDir *Inode, newDentry *Dentry, flags uint32) error
	// Link is ->link: a new name newDentry in dir for oldDentry's inode.
	Link(t *kernel.Task, oldDentry *Dentry, dir *Inode, newDentry *Dentry) error
	// Symlink is ->symlink.
	Symlink(t *kernel.Task, dir *Inode, dentry *Dentry, target string) error
	// GetLink is ->get_link: the symlink's target. dentry is nil in
	// RCU-walk, where a filesystem that would block returns ECHILD.
	GetLink(t *kernel.Task, dentry *Dentry, inode *Inode) (string, error)
	// Setattr is ->setattr (truncation through ATTR_SIZE).
	Setattr(t *kernel.Task, dentry *Dentry, attr *Iattr) error
	// Getattr is ->getattr: fill st (GenericFillattr does the common part).
	Getattr(t *kernel.Task, path Path, st *Stat) error
}

// FileOperations is struct file_operations: what a filesystem does for an
// open file. Embed NoFileOps to get the kernel's answers for the
// operations a filesystem leaves out.
type FileOperations interface {
	// Open is ->open, called by vfs_open (do_dentry_open).
	Open(t *kernel.Task, inode *Inode, f *File) error
	// Release is ->release, called when the last reference to the file
	// goes.
	Release(t *kernel.Task, inode *Inode, f *File) error
	// ReadIter is ->read_iter: read into buf at *pos and advance *pos.
	ReadIter(t *kernel.Task, f *File, buf []byte, pos *int64) (int, error)
	// WriteIter is ->write_iter: write buf at *pos (at the end for
	// O_APPEND) and advance *pos.
	WriteIter(t *kernel.Task, f *File, buf []byte, pos *int64) (int, error)
	// Llseek is ->llseek; the VFS holds f_pos_lock.
	Llseek(t *kernel.Task, f *File, off int64, whence int) (int64, error)
	// IterateShared is ->iterate_shared: emit directory entries from
	// ctx.Pos on (DirEmit), with the directory's i_rwsem held shared.
	IterateShared(t *kernel.Task, f *File, ctx *DirContext) error
	// UnlockedIoctl is ->unlocked_ioctl; ENOTTY for an unknown command.
	UnlockedIoctl(t *kernel.Task, f *File, cmd uint32, arg any) (int, error)
}

// SuperOperations is struct super_operations, reduced to what the model
// calls.
type SuperOperations interface {
	// EvictInode is ->evict_inode, called by evict() when the in-core
	// inode goes away: with no link left the filesystem frees the inode's
	// data and number; in every case it frees its in-core state, the
	// inode's fscrypt key among it (fscrypt_put_encryption_info, which
	// ext4_clear_inode and f2fs_evict_inode call). The caller holds the
	// last reference, which nobody can take again.
	EvictInode(t *kernel.Task, inode *Inode)
	// DropInode is ->drop_inode, asked by iput_final whether an unused
	// inode that still has links must be evicted now rather than kept
	// cached: ext4_drop_inode and f2fs_drop_inode answer
	// generic_drop_inode(inode) || fscrypt_drop_inode(inode), the second
	// true once the master key that unlocked the inode is removed.
	DropInode(t *kernel.Task, inode *Inode) bool
}

// GenericDropInode is generic_drop_inode for a linked inode, plus
// fscrypt_drop_inode, the ->drop_inode of ext4, f2fs and memfs. The model
// keeps no inode hash to unhash, so generic_drop_inode's part (no link
// left, or unhashed) is iput_final's nlink test.
func GenericDropInode(t *kernel.Task, inode *Inode) bool {
	return inode.Nlink() == 0 || fscrypt.DropInode(inode)
}

// Iattr is struct iattr: the attributes a setattr changes.
type Iattr struct {
	Valid uint32 // ATTR_* bits
	Mode  uint32
	Size  int64
}

// NoInodeOps returns what vfs_* returns when an inode_operations member is
// NULL. Embed it in a filesystem's inode operations.
type NoInodeOps struct{}

// Lookup of an inode without ->lookup: the VFS never calls it (such an
// inode is not a directory).
func (NoInodeOps) Lookup(t *kernel.Task, dir *Inode, dentry *Dentry, flags uint32) (*Dentry, error) {
	return nil, errno.ENOTDIR
}

// Create without ->create: EACCES (lookup_open).
func (NoInodeOps) Create(t *kernel.Task, dir *Inode, dentry *Dentry, mode uint32, excl bool) error {
	return errno.EACCES
}

// Mkdir without ->mkdir: EPERM (vfs_mkdir).
func (NoInodeOps) Mkdir(t *kernel.Task, dir *Inode, dentry *Dentry, mode uint32) error {
	return errno.EPERM
}

// Rmdir without ->rmdir: EPERM.
func (NoInodeOps) Rmdir(t *kernel.Task, dir *Inode, dentry *Dentry) error { return errno.EPERM }

// Unlink without ->unlink: EPERM.
func (NoInodeOps) Unlink(t *kernel.Task, dir *Inode, dentry *Dentry) error { return errno.EPERM }

// Rename without ->rename: EPERM.
func (NoInodeOps) Rename(t *kernel.Task, oldDir *Inode, oldDentry *Dentry, newDir *Inode, newDentry *Dentry, flags uint32) error {
	return errno.EPERM
}

// Link without ->link: EPERM.
func (NoInodeOps) Link(t *kernel.Task, oldDentry *Dentry, dir *Inode, newDentry *Dentry) error {
	return errno.EPERM
}

// Symlink without ->symlink: EPERM.
func (NoInodeOps) Symlink(t *kernel.Task, dir *Inode, dentry *Dentry, target string) error {
	return errno.EPERM
}

// GetLink of an inode that is not a symlink: EINVAL.
func (NoInodeOps) GetLink(t *kernel.Task, dentry *Dentry, inode *Inode) (string, error) {
	return "", errno.EINVAL
}

// Setattr without ->setattr: simple_setattr's size change.
func (NoInodeOps) Setattr(t *kernel.Task, dentry *Dentry, attr *Iattr) error {
	if attr.Valid&ATTR_SIZE != 0 {
		dentry.Inode().SetSize(attr.Size)
	}
	return nil
}

// Getattr without ->getattr: generic_fillattr.
func (NoInodeOps) Getattr(t *kernel.Task, path Path, st *Stat) error {
	GenericFillattr(path.Dentry.Inode(), st)
	return nil
}

// NoFileOps returns what the VFS returns when a file_operations member is
// NULL. Embed it in a filesystem's file operations.
type NoFileOps struct{}

// Open without ->open succeeds.
func (NoFileOps) Open(t *kernel.Task, inode *Inode, f *File) error { return nil }

// Release without ->release does nothing.
func (NoFileOps) Release(t *kernel.Task, inode *Inode, f *File) error { return nil }

// ReadIter without ->read_iter: EINVAL (vfs_read).
func (NoFileOps) ReadIter(t *kernel.Task, f *File, buf []byte, pos *int64) (int, error) {
	return 0, errno.EINVAL
}

// WriteIter without ->write_iter: EINVAL (vfs_write).
func (NoFileOps) WriteIter(t *kernel.Task, f *File, buf []byte, pos *int64) (int, error) {
	return 0, errno.EINVAL
}

// Llseek without ->llseek: ESPIPE (no_llseek).
func (NoFileOps) Llseek(t *kernel.Task, f *File, off int64, whence int) (int64, error) {
	return 0, errno.ESPIPE
}

// IterateShared without ->iterate_shared: ENOTDIR (iterate_dir).
func (NoFileOps) IterateShared(t *kernel.Task, f *File, ctx *DirContext) error {
	return errno.ENOTDIR
}

// UnlockedIoctl without ->unlocked_ioctl: ENOTTY.
func (NoFileOps) UnlockedIoctl(t *kernel.Task, f *File, cmd uint32, arg any) (int, error) {
	return 0, errno.ENOTTY
}

// DirFileOps are NoFileOps for a directory: ->read_iter is generic_read_dir
// (fs/libfs.c), EISDIR, as every filesystem's directory file operations
// have it. Embed it in a filesystem's directory file operations.
type DirFileOps struct{ NoFileOps }

// ReadIter is generic_read_dir: EISDIR.
func (DirFileOps) ReadIter(t *kernel.Task, f *File, buf []byte, pos *int64) (int, error) {
	return 0, errno.EISDIR
}
