package libfs

import (
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// Symlink returns the inode operations of a symlink whose stored target
// target returns (the bytes and a NUL, or an encrypted symlink's
// fscrypt_symlink_data): what ext4_symlink_inode_operations,
// ext4_encrypted_symlink_inode_operations and f2fs's counterparts do.
func Symlink(target func(*vfs.Inode) []byte) vfs.InodeOperations {
	return &symlinkOps{target: target}
}

type symlinkOps struct {
	vfs.NoInodeOps
	target func(*vfs.Inode) []byte
}

// GetLink is ext4_get_link / f2fs_get_link for a plain symlink, and
// ext4_encrypted_get_link / f2fs_encrypted_get_link (fscrypt_get_symlink)
// for an encrypted one, which cannot be decrypted in RCU-walk (d nil:
// ECHILD). The caller holds a reference on the inode. Errors: ECHILD, and
// fscrypt_get_symlink's (EUCLEAN for a corrupt target, ENOMEM; without
// the key the target is a no-key name).
func (o *symlinkOps) GetLink(t *kernel.Task, d *vfs.Dentry, inode *vfs.Inode) (string, error) {
	target := o.target(inode)
	if inode.IsEncrypted() {
		if d == nil {
			return "", vfs.ECHILD
		}
		return hooks.FscryptGetSymlink(t, inode, target)
	}
	return string(target[:len(target)-1]), nil
}

// Getattr is generic_fillattr, and for an encrypted symlink
// fscrypt_symlink_getattr (ext4_encrypted_symlink_getattr,
// f2fs_encrypted_symlink_getattr): st_size is the target's length as
// userspace sees it. Errors: fscrypt_symlink_getattr's.
func (o *symlinkOps) Getattr(t *kernel.Task, path vfs.Path, st *vfs.Stat) error {
	inode := path.Dentry.Inode()
	vfs.GenericFillattr(inode, st)
	if inode.IsEncrypted() {
		return hooks.FscryptSymlinkGetattr(t, path, st)
	}
	return nil
}

// Setattr of a symlink: there is nothing to truncate.
func (o *symlinkOps) Setattr(t *kernel.Task, d *vfs.Dentry, attr *vfs.Iattr) error { return nil }

// FlagsIoctl is the ioctl dispatch ext4_ioctl and f2fs_ioctl share for the
// model's commands: FS_IOC_GETFLAGS and FS_IOC_SETFLAGS through flags (nil
// for a filesystem without them), then the fscrypt ioctls (EOPNOTSUPP
// without the encrypt feature); ENOTTY for another command.
func FlagsIoctl(t *kernel.Task, f *vfs.File, cmd uint32, arg any, flags vfs.FlagsOperations) (int, error) {
	if flags != nil {
		if handled, ret, err := vfs.IoctlFlags(t, f, cmd, arg, flags); handled {
			return ret, err
		}
	}
	if handled, ret, err := vfs.FscryptIoctl(t, f, cmd, arg); handled {
		return ret, err
	}
	return 0, errno.ENOTTY
}
