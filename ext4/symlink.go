package ext4

import (
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// symlinkOps are a symlink's inode operations (fs/ext4/symlink.c:
// ext4_symlink_inode_operations, ext4_fast_symlink_inode_operations and
// ext4_encrypted_symlink_inode_operations).
type symlinkOps struct {
	vfs.NoInodeOps
	sb *SuperBlock
}

// GetLink is ext4_get_link / ext4_encrypted_get_link: the stored target, or
// for an encrypted symlink fscrypt_get_symlink (not in RCU-walk, d nil:
// ECHILD). The caller holds a reference on the inode. Errors: ECHILD,
// ENOKEY, fscrypt's.
func (o *symlinkOps) GetLink(t *kernel.Task, d *vfs.Dentry, inode *vfs.Inode) (string, error) {
	ei := EXT4_I(inode)
	if inode.IsEncrypted() {
		if d == nil {
			return "", vfs.ECHILD
		}
		return hooks.FscryptGetSymlink(t, inode, ei.target)
	}
	return string(ei.target[:len(ei.target)-1]), nil
}

// Getattr is ext4_encrypted_symlink_getattr for an encrypted symlink
// (fscrypt_symlink_getattr, whose errors it returns).
func (o *symlinkOps) Getattr(t *kernel.Task, path vfs.Path, st *vfs.Stat) error {
	inode := path.Dentry.Inode()
	vfs.GenericFillattr(inode, st)
	if inode.IsEncrypted() {
		return hooks.FscryptSymlinkGetattr(t, path, st)
	}
	return nil
}

// Setattr of a symlink: nothing to truncate.
func (o *symlinkOps) Setattr(t *kernel.Task, d *vfs.Dentry, attr *vfs.Iattr) error { return nil }

// RawTarget returns a symlink's on-disk target: the bytes and a NUL, or
// struct fscrypt_symlink_data for an encrypted one.
func RawTarget(inode *vfs.Inode) []byte {
	ei := EXT4_I(inode)
	ei.mu.Lock()
	defer ei.mu.Unlock()
	return append([]byte(nil), ei.target...)
}
