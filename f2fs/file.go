package f2fs

import (
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/libfs"
	"github.com/vfslab/vfslab/vfs"
)

// ioctl is f2fs_ioctl: vfs.FS_IOC_GETFLAGS / vfs.FS_IOC_SETFLAGS (which take the
// inode's i_rwsem themselves: the caller holds no inode lock) and the
// fscrypt ioctls. Errors: ENOTTY for another command; EOPNOTSUPP (the
// fscrypt ioctls without the encrypt feature, a casefold flag the
// filesystem or the file type cannot carry), ENOTEMPTY, EFAULT, and
// fscrypt's.
func (sbi *SuperBlock) ioctl(t *kernel.Task, f *vfs.File, cmd uint32, arg any) (int, error) {
	return libfs.FlagsIoctl(t, f, cmd, arg, fileattr{sbi})
}

// fileattr gives vfs.IoctlFlags the flags of f2fs's inodes.
type fileattr struct{ sbi *SuperBlock }

// GetFlags implements vfs.FlagsOperations.
func (a fileattr) GetFlags(t *kernel.Task, inode *vfs.Inode) uint32 { return a.sbi.getflags(inode) }

// SetFlags implements vfs.FlagsOperations.
func (a fileattr) SetFlags(t *kernel.Task, inode *vfs.Inode, flags uint32) error {
	return a.sbi.setflags(t, inode, flags)
}

// getflags is f2fs_fileattr_get's flags: f2fs_iflags_to_fsflags of
// i_flags (the index and casefold flags the model keeps), encrypt from the
// inode, and inline data for an inline file or directory
// (f2fs_has_inline_data || f2fs_has_inline_dentry).
func (sbi *SuperBlock) getflags(inode *vfs.Inode) uint32 {
	inode.Rwsem.RLock()
	defer inode.Rwsem.RUnlock()
	fi := F2FS_I(inode)
	fl := fi.IFlags & (IndexFL | CasefoldFL)
	if inode.IsCasefolded() {
		fl |= vfs.FS_CASEFOLD_FL
	}
	if inode.IsEncrypted() {
		fl |= vfs.FS_ENCRYPT_FL
	}
	if (inode.IsDir() && fi.Inline) || fi.inlineData {
		fl |= vfs.FS_INLINE_DATA_FL
	}
	return fl
}

// setflags is f2fs_fileattr_set for vfs.FS_CASEFOLD_FL, the only settable flag
// the model keeps: fscrypt_prepare_setflags (an encrypted directory needs a
// v2 policy and its key, and gets its dirhash key), then
// f2fs_setflags_common's checks: the casefold feature (EOPNOTSUPP), a
// directory (other types cannot carry the flag: EOPNOTSUPP, as
// f2fs_mask_flags drops it), empty (ENOTEMPTY). Flags f2fs cannot set
// (vfs.FS_ENCRYPT_FL, vfs.FS_INLINE_DATA_FL, vfs.FS_INDEX_FL) are ignored, as the kernel ignores
// flags outside F2FS_SETTABLE_FS_FL; other unknown flags are EOPNOTSUPP.
func (sbi *SuperBlock) setflags(t *kernel.Task, inode *vfs.Inode, flags uint32) error {
	defer t.Trace("f2fs_fileattr_set")()
	if err := sbi.checkWritable(); err != nil {
		return err
	}
	if flags&^(vfs.FS_CASEFOLD_FL|vfs.FS_ENCRYPT_FL|vfs.FS_INLINE_DATA_FL|vfs.FS_INDEX_FL) != 0 {
		return errno.EOPNOTSUPP
	}
	inode.Rwsem.Lock()
	defer inode.Rwsem.Unlock()
	want := flags&vfs.FS_CASEFOLD_FL != 0
	if want == inode.IsCasefolded() {
		return nil
	}
	if err := fscrypt.PrepareSetflags(t, inode, want); err != nil {
		return err
	}
	if !sbi.opts.Casefold {
		return errno.EOPNOTSUPP
	}
	if !inode.IsDir() {
		return errno.EOPNOTSUPP
	}
	fi := F2FS_I(inode)
	if !EmptyDir(t, fi) {
		return errno.ENOTEMPTY
	}
	if want {
		fi.IFlags |= CasefoldFL
	} else {
		fi.IFlags &^= CasefoldFL
	}
	fi.setInodeFlags()
	return nil
}

// RawBlocks returns copies of a regular file's stored blocks by page index
// (ciphertext for an encrypted file; nil for holes).
func RawBlocks(inode *vfs.Inode) [][]byte {
	fi := F2FS_I(inode)
	fi.Data.Lock()
	defer fi.Data.Unlock()
	return fi.data.Raw()
}
