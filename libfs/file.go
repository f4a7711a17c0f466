// Package libfs is what the filesystems share, as fs/libfs.c and
// fs/buffer.c share it in Linux: the glue of a regular file's inode and
// file operations over the generic page paths, and the fscrypt operations
// of a filesystem that keeps the encryption context in an xattr. ext4,
// f2fs and memfs each call it from their own operation tables, which keep
// their kernel names (ext4_file_open, f2fs_setattr, ...) in traces.
//
// It sits above hooks (the glue calls fscrypt_file_open and
// fscrypt_prepare_setattr) and below the filesystems.
package libfs

import (
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// Ioctl is a filesystem's ->unlocked_ioctl.
type Ioctl func(t *kernel.Task, f *vfs.File, cmd uint32, arg any) (int, error)

// RegularFile returns the inode and file operations of a regular file of
// the filesystem called name (the kernel's <name>_file_inode_operations
// and <name>_file_operations), whose pages are the inode's i_data (with
// the address space operations the filesystem set on it) and whose ioctls
// go to ioctl. The functions trace under their kernel names:
// <name>_setattr, <name>_file_open, <name>_file_read_iter,
// <name>_file_write_iter.
func RegularFile(name string, ioctl Ioctl, opts ...FileOption) (vfs.InodeOperations, vfs.FileOperations) {
	var o fileOptions
	for _, opt := range opts {
		opt(&o)
	}
	return &fileInodeOps{setattr: name + "_setattr", fiemap: name + "_fiemap", fileOptions: o},
		&fileOps{open: name + "_file_open", read: name + "_file_read_iter", write: name + "_file_write_iter", ioctl: ioctl, limit: o.limit}
}

// FileOption adds an optional operation or limit to RegularFile's
// operations.
type FileOption func(*fileOptions)

// fileOptions are what the FileOptions set.
type fileOptions struct {
	blocks      func(*vfs.Inode) *vfs.BlockMap
	extentFlags func(*vfs.Inode) uint32
	limit       SizeLimit
}

// WithFiemap gives the regular files ->fiemap (traced as <name>_fiemap):
// blocks returns the file's block map and flags are the fe_flags every
// extent gets (ext4's extent-mapped files report FIEMAP_EXTENT_MERGED,
// f2fs also FIEMAP_EXTENT_DATA_ENCRYPTED for an encrypted file).
func WithFiemap(blocks func(*vfs.Inode) *vfs.BlockMap, flags func(*vfs.Inode) uint32) FileOption {
	return func(o *fileOptions) { o.blocks, o.extentFlags = blocks, flags }
}

// SizeLimit is a filesystem's own limit on a file's size past the VFS's
// s_maxbytes, which ATTR_SIZE and writes check (ext4's s_bitmap_maxbytes
// for a block-mapped file, ext4_get_maxbytes).
type SizeLimit func(inode *vfs.Inode) int64

// WithSizeLimit gives the files a size limit below s_maxbytes.
func WithSizeLimit(limit SizeLimit) FileOption {
	return func(o *fileOptions) { o.limit = limit }
}

// fileInodeOps are a regular file's inode operations.
type fileInodeOps struct {
	vfs.NoInodeOps
	setattr, fiemap string
	fileOptions
}

// Fiemap is ext4_fiemap / f2fs_fiemap over the file's block map
// (vfs.FiemapBlockMap); EOPNOTSUPP for a filesystem that did not ask
// for it (WithFiemap).
func (o *fileInodeOps) Fiemap(t *kernel.Task, inode *vfs.Inode, fm *vfs.Fiemap, start, length uint64) error {
	defer t.Trace(o.fiemap)()
	if o.blocks == nil {
		return errno.EOPNOTSUPP
	}
	return vfs.FiemapBlockMap(t, inode, o.blocks(inode), fm, start, length, o.extentFlags(inode))
}

// Setattr is ext4_setattr / f2fs_setattr for what the model changes:
// setattr_prepare's inode_newsize_ok (a size past s_maxbytes is EFBIG),
// fscrypt_prepare_setattr (an encrypted file's size changes need its
// key), the filesystem's own size limit (ext4: s_bitmap_maxbytes for a
// block-mapped file, EFBIG), then the truncation (truncate_setsize over
// i_data). The VFS holds the inode's i_rwsem and a reference on d.
// Errors: EFBIG, ENOKEY, ENOMEM, fscrypt's.
func (o *fileInodeOps) Setattr(t *kernel.Task, d *vfs.Dentry, attr *vfs.Iattr) error {
	defer t.Trace(o.setattr)()
	inode := d.Inode()
	if attr.Valid&vfs.ATTR_SIZE != 0 {
		if err := vfs.InodeNewsizeOk(inode, attr.Size); err != nil {
			return err
		}
	}
	if err := hooks.FscryptPrepareSetattr(t, d, attr); err != nil {
		return err
	}
	if attr.Valid&vfs.ATTR_SIZE != 0 {
		if o.limit != nil && attr.Size > o.limit(inode) {
			return errno.EFBIG
		}
		return vfs.TruncateSetsize(t, &inode.Data, attr.Size)
	}
	return nil
}

// fileOps are a regular file's file operations.
type fileOps struct {
	vfs.NoFileOps
	open, read, write string
	ioctl             Ioctl
	limit             SizeLimit
}

// Open is ext4_file_open / f2fs_file_open: fscrypt_file_open first. The
// caller holds references on the inode and the file's path. Errors:
// ENOKEY (an encrypted file without its key), EPERM (a policy the
// encrypted parent does not permit: the parent check of seed 004's
// variants), ENOMEM.
func (o *fileOps) Open(t *kernel.Task, inode *vfs.Inode, f *vfs.File) error {
	defer t.Trace(o.open)()
	return hooks.FscryptFileOpen(t, inode, f)
}

// ReadIter is the buffered read path (generic_file_read_iter, filemap_read
// over i_data): pages are read from the filesystem and, in an encrypted
// file, decrypted per data unit. Errors: ENOKEY, EIO (a failed
// decryption), ENOMEM.
func (o *fileOps) ReadIter(t *kernel.Task, f *vfs.File, buf []byte, pos *int64) (int, error) {
	defer t.Trace(o.read)()
	return vfs.GenericFileReadIter(t, f, buf, pos)
}

// WriteIter is ext4_file_write_iter / f2fs_file_write_iter, which take the
// inode's i_rwsem (the caller must not hold it): each page is written
// through (read, modified, encrypted into a bounce page in an encrypted
// file, stored). The filesystem's own size limit is
// ext4_generic_write_checks': a write starting at it (at i_size with
// O_APPEND) is EFBIG, one crossing it is cut short there. Errors:
// ENOKEY, EFBIG (past s_maxbytes or the limit), ENOMEM; a short write
// returns what was written.
func (o *fileOps) WriteIter(t *kernel.Task, f *vfs.File, buf []byte, pos *int64) (int, error) {
	defer t.Trace(o.write)()
	if o.limit != nil && len(buf) > 0 {
		p := *pos
		if f.Flags()&vfs.O_APPEND != 0 {
			p = f.Inode().Size()
		}
		lim := o.limit(f.Inode())
		if p >= lim {
			return 0, errno.EFBIG
		}
		buf = buf[:min(int64(len(buf)), lim-p)]
	}
	return vfs.GenericFileWriteIter(t, f, &f.Inode().Data, buf, pos)
}

// Llseek is generic_file_llseek_size for SEEK_SET/CUR/END; SEEK_DATA and
// SEEK_HOLE are answered as for a file without holes. The VFS holds
// f_pos_lock. Errors: EINVAL (a bad whence or a negative result), ENXIO.
func (o *fileOps) Llseek(t *kernel.Task, f *vfs.File, off int64, whence int) (int64, error) {
	inode := f.Inode()
	return vfs.GenericFileLlseek(f, off, whence, inode.SB().MaxBytes(), inode.Size())
}

// UnlockedIoctl is the filesystem's ioctl.
func (o *fileOps) UnlockedIoctl(t *kernel.Task, f *vfs.File, cmd uint32, arg any) (int, error) {
	return o.ioctl(t, f, cmd, arg)
}
