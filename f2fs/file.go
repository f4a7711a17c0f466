package f2fs

import (
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// Inode attribute ioctls and the flags they carry (include/uapi/linux/fs.h;
// package vfs has them). The model's VFS has no fileattr layer, so f2fs
// answers them from its ->unlocked_ioctl, as it did before Linux 5.13
// (f2fs_ioc_getflags / f2fs_ioc_setflags).
const (
	FS_IOC_GETFLAGS = vfs.FS_IOC_GETFLAGS
	FS_IOC_SETFLAGS = vfs.FS_IOC_SETFLAGS

	FS_ENCRYPT_FL     = vfs.FS_ENCRYPT_FL
	FS_INLINE_DATA_FL = vfs.FS_INLINE_DATA_FL
	FS_CASEFOLD_FL    = vfs.FS_CASEFOLD_FL
)

// fileOps are a regular file's inode operations (f2fs_file_inode_operations).
type fileOps struct {
	vfs.NoInodeOps
	sbi *SuperBlock
}

// Setattr is f2fs_setattr: fscrypt_prepare_setattr (an encrypted file's
// size changes need its key), then the truncation. The VFS holds the
// inode's i_rwsem exclusive and a reference on d. Errors: ENOKEY, EFBIG
// and the other errors of fscrypt_prepare_setattr, ENOMEM.
func (o *fileOps) Setattr(t *kernel.Task, d *vfs.Dentry, attr *vfs.Iattr) error {
	defer t.Trace("f2fs_setattr")()
	if err := hooks.FscryptPrepareSetattr(t, d, attr); err != nil {
		return err
	}
	if attr.Valid&vfs.ATTR_SIZE != 0 {
		return vfs.TruncateSetsize(t, &F2FS_I(d.Inode()).mapping, attr.Size)
	}
	return nil
}

// fileFileOps are a regular file's file operations (f2fs_file_operations).
type fileFileOps struct {
	vfs.NoFileOps
	sbi *SuperBlock
}

// Open is f2fs_file_open: fscrypt_file_open first (the parent check of
// seed 004's variants). The VFS holds a reference on the file's path.
// Errors: ENOKEY (an encrypted file without its key), EPERM (a policy
// the encrypted parent does not permit), ENOMEM.
func (o *fileFileOps) Open(t *kernel.Task, inode *vfs.Inode, f *vfs.File) error {
	defer t.Trace("f2fs_file_open")()
	return hooks.FscryptFileOpen(t, inode, f)
}

// ReadIter is f2fs_file_read_iter (the buffered read path): the pages are
// read from the device and, in an encrypted file, decrypted per data unit,
// under the mapping's lock (no i_rwsem). Errors: ENOKEY (an encrypted
// file without its key); a page that cannot be read ends the read.
func (o *fileFileOps) ReadIter(t *kernel.Task, f *vfs.File, buf []byte, pos *int64) (int, error) {
	defer t.Trace("f2fs_file_read_iter")()
	return vfs.FilemapRead(t, &F2FS_I(f.Inode()).mapping, buf, pos)
}

// WriteIter is f2fs_file_write_iter, which takes the inode's i_rwsem
// (the caller must not hold it): each page is written through (read,
// modified, encrypted into a bounce page in an encrypted file, stored).
// Errors: ENOKEY, EFBIG (past s_maxbytes), ENOMEM.
func (o *fileFileOps) WriteIter(t *kernel.Task, f *vfs.File, buf []byte, pos *int64) (int, error) {
	defer t.Trace("f2fs_file_write_iter")()
	return vfs.GenericFileWriteIter(t, f, &F2FS_I(f.Inode()).mapping, buf, pos)
}

// Llseek is f2fs_llseek for SEEK_SET/CUR/END (generic_file_llseek_size);
// SEEK_DATA and SEEK_HOLE are answered as for a file without holes. The
// VFS holds f_pos_lock. Errors: EINVAL (a bad whence or a negative result), ENXIO (SEEK_DATA or
// SEEK_HOLE at or past i_size).
func (o *fileFileOps) Llseek(t *kernel.Task, f *vfs.File, off int64, whence int) (int64, error) {
	inode := f.Inode()
	return vfs.GenericFileLlseek(f, off, whence, inode.SB().MaxBytes(), inode.Size())
}

// UnlockedIoctl is f2fs_ioctl (see SuperBlock.ioctl).
func (o *fileFileOps) UnlockedIoctl(t *kernel.Task, f *vfs.File, cmd uint32, arg any) (int, error) {
	return o.sbi.ioctl(t, f, cmd, arg)
}

// ioctl is f2fs_ioctl: FS_IOC_GETFLAGS / FS_IOC_SETFLAGS (which take the
// inode's i_rwsem themselves: the caller holds no inode lock) and the
// fscrypt ioctls. Errors: ENOTTY for another command; EOPNOTSUPP (the
// fscrypt ioctls without the encrypt feature, a casefold flag the
// filesystem or the file type cannot carry), ENOTEMPTY, EFAULT, and
// fscrypt's.
func (sbi *SuperBlock) ioctl(t *kernel.Task, f *vfs.File, cmd uint32, arg any) (int, error) {
	if handled, ret, err := vfs.IoctlFlags(t, f, cmd, arg, fileattr{sbi}); handled {
		return ret, err
	}
	if handled, ret, err := vfs.FscryptIoctl(t, f, cmd, arg); handled {
		return ret, err
	}
	return 0, errno.ENOTTY
}

// fileattr gives vfs.IoctlFlags the flags of f2fs's inodes.
type fileattr struct{ sbi *SuperBlock }

// GetFlags implements vfs.FlagsOperations.
func (a fileattr) GetFlags(t *kernel.Task, inode *vfs.Inode) uint32 { return a.sbi.getflags(inode) }

// SetFlags implements vfs.FlagsOperations.
func (a fileattr) SetFlags(t *kernel.Task, inode *vfs.Inode, flags uint32) error {
	return a.sbi.setflags(t, inode, flags)
}

// getflags is f2fs_fileattr_get's flags: casefold from i_flags, encrypt
// from the inode, inline data for an inline directory.
func (sbi *SuperBlock) getflags(inode *vfs.Inode) uint32 {
	inode.Rwsem.RLock()
	defer inode.Rwsem.RUnlock()
	var fl uint32
	if inode.IsCasefolded() {
		fl |= FS_CASEFOLD_FL
	}
	if inode.IsEncrypted() {
		fl |= FS_ENCRYPT_FL
	}
	if inode.IsDir() && F2FS_I(inode).Inline {
		fl |= FS_INLINE_DATA_FL
	}
	return fl
}

// setflags is f2fs_fileattr_set for FS_CASEFOLD_FL, the only settable flag
// the model keeps: fscrypt_prepare_setflags (an encrypted directory needs a
// v2 policy and its key, and gets its dirhash key), then
// f2fs_setflags_common's checks: the casefold feature (EOPNOTSUPP), a
// directory (other types cannot carry the flag: EOPNOTSUPP, as
// f2fs_mask_flags drops it), empty (ENOTEMPTY). Flags f2fs cannot set
// (FS_ENCRYPT_FL, FS_INLINE_DATA_FL) are ignored, as the kernel ignores
// flags outside F2FS_SETTABLE_FS_FL; other unknown flags are EOPNOTSUPP.
func (sbi *SuperBlock) setflags(t *kernel.Task, inode *vfs.Inode, flags uint32) error {
	defer t.Trace("f2fs_fileattr_set")()
	if flags&^(FS_CASEFOLD_FL|FS_ENCRYPT_FL|FS_INLINE_DATA_FL) != 0 {
		return errno.EOPNOTSUPP
	}
	inode.Rwsem.Lock()
	defer inode.Rwsem.Unlock()
	want := flags&FS_CASEFOLD_FL != 0
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

// fileBlocks is the block map of f2fs's regular files for the generic
// page paths (vfs.BlockAops).
type fileBlocks struct{ sbi *SuperBlock }

// GetBlock implements vfs.BlockMapper: f2fs_get_block, the block address
// the file's dnodes hold for page index lblk (f2fs_map_blocks over the
// model's map); with create, a hole gets a new block (f2fs_reserve_block
// and the allocation of writeback).
func (b fileBlocks) GetBlock(inode *vfs.Inode, lblk uint64, create bool) []byte {
	fi := F2FS_I(inode)
	if addr, ok := fi.data[lblk]; ok {
		return b.sbi.Dev.Block(addr)
	}
	if !create {
		return nil
	}
	addr, blk := b.sbi.Dev.Alloc()
	fi.data[lblk] = addr
	return blk
}

// TruncateBlocks implements vfs.BlockMapper: f2fs_truncate_blocks, the
// blocks from page index from on back to the device.
func (b fileBlocks) TruncateBlocks(inode *vfs.Inode, from uint64) {
	F2FS_I(inode).truncateBlocks(from)
}

// RawBlocks returns copies of a regular file's stored blocks by page index
// (ciphertext for an encrypted file; nil for holes).
func RawBlocks(inode *vfs.Inode) [][]byte {
	fi := F2FS_I(inode)
	fi.mapping.Lock()
	defer fi.mapping.Unlock()
	n := uint64(0)
	for idx := range fi.data {
		n = max(n, idx+1)
	}
	out := make([][]byte, n)
	for idx, addr := range fi.data {
		out[idx] = append([]byte(nil), fi.SB.Dev.Block(addr)...)
	}
	return out
}
