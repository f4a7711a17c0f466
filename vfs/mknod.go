package vfs

import (
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// Mknoder is implemented by the inode operations of a filesystem that
// makes special files (->mknod: ext4_mknod, f2fs_mknod, shmem_mknod):
// a FIFO, socket or device node for the negative dentry, instantiated,
// whose inode the filesystem sets up with InitSpecialInode. dev is the
// device number (the kernel's dev_t, MKDEV) for S_IFCHR and S_IFBLK, 0
// otherwise.
type Mknoder interface {
	Mknod(t *kernel.Task, dir *Inode, dentry *Dentry, mode uint32, dev uint32) error
}

// Mknod is mknod(2) (fs/namei.c do_mknodat): mode's type is a regular
// file (0 or S_IFREG, made by ->create as vfs_create does), a FIFO, a
// socket, or a character or block device (which need CAP_MKNOD, uid 0 in
// the model) numbered dev in userspace's encoding (new_decode_dev); a
// directory is EPERM and anything else EINVAL (may_mknod). vfs_mknod refuses with EPERM on a filesystem without
// ->mknod (Mknoder). Errors: EPERM, EINVAL, EEXIST, EACCES, EROFS, the
// walk's, the filesystem's.
func (p *Proc) Mknod(t *kernel.Task, path string, mode, dev uint32) (err error) {
	defer t.Recover(&err)
	defer t.Trace("do_mknodat")()
	t.Inc(EvSyscall)
	switch mode & S_IFMT {
	case 0:
		mode |= S_IFREG
	case S_IFREG, S_IFCHR, S_IFBLK, S_IFIFO, S_IFSOCK:
	case S_IFDIR:
		return errno.EPERM
	default:
		return errno.EINVAL
	}
	c, err := p.filenameCreate(t, AT_FDCWD, path, false)
	if err != nil {
		return err
	}
	defer c.done(t)
	dir := c.parent.Dentry.Inode()
	mode = mode&S_IFMT | mode&S_IALLUGO
	if mode&S_IFMT == S_IFREG {
		// vfs_create.
		if err := mayCreate(t, dir, c.dentry); err != nil {
			return err
		}
		if err := vfsCreate(t, dir, c.dentry, mode, true); err != nil {
			return err
		}
		inodeChanged(t, dir, true)
		return nil
	}
	var rdev uint32
	if mode&S_IFMT == S_IFCHR || mode&S_IFMT == S_IFBLK {
		rdev = NewDecodeDev(dev)
	}
	return vfsMknod(t, dir, c.dentry, mode, rdev)
}

// vfsMknod is vfs_mknod.
func vfsMknod(t *kernel.Task, dir *Inode, d *Dentry, mode, dev uint32) error {
	defer t.Trace("vfs_mknod")()
	if err := mayCreate(t, dir, d); err != nil {
		return err
	}
	if (mode&S_IFMT == S_IFCHR || mode&S_IFMT == S_IFBLK) && t.CurrentCred().UID != 0 {
		return errno.EPERM
	}
	mk, ok := dir.Op.(Mknoder)
	if !ok {
		return errno.EPERM
	}
	if err := mk.Mknod(t, dir, d, mode, dev); err != nil {
		return err
	}
	inodeChanged(t, dir, true)
	return nil
}
