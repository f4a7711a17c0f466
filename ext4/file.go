package ext4

import (
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// fileOps are a regular file's inode operations (ext4_file_inode_operations,
// fs/ext4/file.c).
type fileOps struct {
	vfs.NoInodeOps
	sb *SuperBlock
}

// Setattr is ext4_setattr: fscrypt_prepare_setattr (an encrypted file's
// size changes need its key: ENOKEY), then the truncation. The VFS holds
// the inode's i_rwsem. Errors: ENOKEY, EFBIG, ENOMEM, fscrypt's.
func (o *fileOps) Setattr(t *kernel.Task, d *vfs.Dentry, attr *vfs.Iattr) error {
	defer t.Trace("ext4_setattr")()
	if err := hooks.FscryptPrepareSetattr(t, d, attr); err != nil {
		return err
	}
	if attr.Valid&vfs.ATTR_SIZE != 0 {
		return vfs.TruncateSetsize(t, &EXT4_I(d.Inode()).mapping, attr.Size)
	}
	return nil
}

// fileFileOps are a regular file's file operations (ext4_file_operations).
type fileFileOps struct {
	vfs.NoFileOps
	sb *SuperBlock
}

// Open is ext4_file_open: fscrypt_file_open first (ENOKEY for an encrypted
// file without its key; the parent check of seed 004's variants, EPERM).
// The caller holds references on the inode and the file's path.
func (o *fileFileOps) Open(t *kernel.Task, inode *vfs.Inode, f *vfs.File) error {
	defer t.Trace("ext4_file_open")()
	return hooks.FscryptFileOpen(t, inode, f)
}

// ReadIter is ext4_file_read_iter (the buffered read path): the pages are
// read from the device and, in an encrypted file, decrypted per data unit.
// Errors: EIO (a failed decryption), ENOMEM.
func (o *fileFileOps) ReadIter(t *kernel.Task, f *vfs.File, buf []byte, pos *int64) (int, error) {
	defer t.Trace("ext4_file_read_iter")()
	return vfs.FilemapRead(t, &EXT4_I(f.Inode()).mapping, buf, pos)
}

// WriteIter is ext4_file_write_iter, under the inode's i_rwsem: each page
// is written through (read, modified, encrypted into a bounce page in an
// encrypted file, stored). Errors: EFBIG, ENOKEY, ENOMEM.
func (o *fileFileOps) WriteIter(t *kernel.Task, f *vfs.File, buf []byte, pos *int64) (int, error) {
	defer t.Trace("ext4_file_write_iter")()
	return vfs.GenericFileWriteIter(t, f, &EXT4_I(f.Inode()).mapping, buf, pos)
}

// Llseek is ext4_llseek for SEEK_SET/CUR/END (generic_file_llseek_size);
// SEEK_DATA and SEEK_HOLE are answered as for a file without holes.
// Errors: EINVAL, ENXIO.
func (o *fileFileOps) Llseek(t *kernel.Task, f *vfs.File, off int64, whence int) (int64, error) {
	inode := f.Inode()
	return vfs.GenericFileLlseek(f, off, whence, inode.SB().MaxBytes(), inode.Size())
}

// UnlockedIoctl is ext4_ioctl.
func (o *fileFileOps) UnlockedIoctl(t *kernel.Task, f *vfs.File, cmd uint32, arg any) (int, error) {
	return o.sb.ioctl(t, f, cmd, arg)
}
