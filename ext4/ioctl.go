package ext4

import (
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/libfs"
	"github.com/vfslab/vfslab/vfs"
)

// ioctl is ext4_ioctl: vfs.FS_IOC_GETFLAGS / vfs.FS_IOC_SETFLAGS and the fscrypt
// ioctls (EOPNOTSUPP without the encrypt feature); ENOTTY for others.
// On an image the inode goes to its table afterwards (a policy's context
// xattr, a flag: ext4_mark_inode_dirty in the ioctl's handle); a
// read-only image refuses the ioctls that change an inode (EROFS, as
// mnt_want_write_file does).
func (sb *SuperBlock) ioctl(t *kernel.Task, f *vfs.File, cmd uint32, arg any) (int, error) {
	if sb.disk != nil && sb.opts.NoEncrypt {
		switch cmd {
		case vfs.FS_IOC_SET_ENCRYPTION_POLICY, vfs.FS_IOC_GET_ENCRYPTION_POLICY,
			vfs.FS_IOC_GET_ENCRYPTION_POLICY_EX, vfs.FS_IOC_GET_ENCRYPTION_NONCE,
			vfs.FS_IOC_ADD_ENCRYPTION_KEY, vfs.FS_IOC_REMOVE_ENCRYPTION_KEY,
			vfs.FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS, vfs.FS_IOC_GET_ENCRYPTION_KEY_STATUS:
			// ext4_ioctl: !ext4_has_feature_encrypt(sb) -> EOPNOTSUPP.
			return 0, errno.EOPNOTSUPP
		}
	}
	if sb.disk != nil && sb.disk.readOnly && (cmd == vfs.FS_IOC_SETFLAGS || cmd == vfs.FS_IOC_SET_ENCRYPTION_POLICY) {
		return 0, errno.EROFS
	}
	n, err := libfs.FlagsIoctl(t, f, cmd, arg, fileattr{sb})
	if err == nil && sb.disk != nil {
		sb.dirtyInodes(t, f.Inode())
	}
	return n, err
}

// fileattr gives vfs.IoctlFlags the flags of ext4's inodes.
type fileattr struct{ sb *SuperBlock }

// GetFlags implements vfs.FlagsOperations.
func (a fileattr) GetFlags(t *kernel.Task, inode *vfs.Inode) uint32 { return getflags(EXT4_I(inode)) }

// SetFlags implements vfs.FlagsOperations.
func (a fileattr) SetFlags(t *kernel.Task, inode *vfs.Inode, flags uint32) error {
	return a.sb.setflags(t, EXT4_I(inode), flags)
}

// EXT4_FL_USER_VISIBLE is the i_flags FS_IOC_GETFLAGS shows.
const EXT4_FL_USER_VISIBLE = 0x705BDFFF

// getflags is ext4_fileattr_get's flags, under i_rwsem shared: i_flags &
// EXT4_FL_USER_VISIBLE, so casefold, encrypt, the htree index and the
// extents flag (lsattr's "e") as the inode holds them.
func getflags(inode *Inode) uint32 {
	inode.Rwsem.RLock()
	defer inode.Rwsem.RUnlock()
	fl := inode.Flags & EXT4_FL_USER_VISIBLE
	if inode.Inode.IsCasefolded() {
		fl |= vfs.FS_CASEFOLD_FL
	}
	if inode.IsEncrypted() {
		fl |= vfs.FS_ENCRYPT_FL
	}
	return fl
}

// setflags is ext4_fileattr_set for vfs.FS_CASEFOLD_FL, the only settable flag
// the model keeps, under i_rwsem: fscrypt_prepare_setflags (an encrypted
// directory needs a v2 policy and its key, and gets its dirhash key), then
// ext4_ioctl_setflags's checks: the casefold feature (EOPNOTSUPP), a
// directory (ENOTDIR), empty (ENOTEMPTY). Flags users cannot change
// (vfs.FS_ENCRYPT_FL, vfs.FS_INDEX_FL, the extents flag) are ignored, as the kernel keeps them; other
// unknown flags are EOPNOTSUPP.
func (sb *SuperBlock) setflags(t *kernel.Task, inode *Inode, flags uint32) error {
	defer t.Trace("ext4_fileattr_set")()
	if flags&^(vfs.FS_CASEFOLD_FL|vfs.FS_ENCRYPT_FL|vfs.FS_INDEX_FL|ExtentsFL) != 0 {
		return errno.EOPNOTSUPP
	}
	inode.Rwsem.Lock()
	defer inode.Rwsem.Unlock()
	want := flags&vfs.FS_CASEFOLD_FL != 0
	if want == inode.Inode.IsCasefolded() {
		return nil
	}
	if err := fscrypt.PrepareSetflags(t, &inode.Inode, want); err != nil {
		return err
	}
	if !sb.opts.Casefold {
		return errno.EOPNOTSUPP
	}
	if !inode.IsDir() {
		return errno.ENOTDIR
	}
	if !EmptyDir(t, inode) {
		return errno.ENOTEMPTY
	}
	if want {
		inode.Flags |= CasefoldFL
		inode.Inode.SetFlags(vfs.S_CASEFOLD)
	} else {
		inode.Flags &^= CasefoldFL
		inode.Inode.ClearFlags(vfs.S_CASEFOLD)
	}
	return nil
}
