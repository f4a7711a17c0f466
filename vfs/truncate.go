package vfs

import (
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// InodeNewsizeOk is inode_newsize_ok (fs/attr.c), setattr_prepare's check
// of an ATTR_SIZE change: a negative size is EINVAL, and growing the file
// past s_maxbytes is EFBIG (RLIMIT_FSIZE is not modelled: unlimited). A
// swap file is not modelled either, so shrinking is always allowed.
func InodeNewsizeOk(inode *Inode, offset int64) error {
	if offset < 0 {
		return errno.EINVAL
	}
	if inode.Size() < offset && offset > inode.sb.maxBytes {
		return errno.EFBIG
	}
	return nil
}

// doTruncate is do_truncate: ATTR_SIZE through notify_change under the
// inode's i_rwsem.
func doTruncate(t *kernel.Task, d *Dentry, length int64) error {
	inode := d.Inode()
	inode.Rwsem.Lock()
	defer inode.Rwsem.Unlock()
	return notifyChange(t, d, &Iattr{Valid: ATTR_SIZE, Size: length})
}

// Truncate is truncate(2): set the size of the regular file at path.
// Errors: EINVAL (negative length), EISDIR, EINVAL (not a regular file),
// ENOKEY (an encrypted file without its key: fscrypt_prepare_setattr), and
// the walk's errors.
func (p *Proc) Truncate(t *kernel.Task, path string, length int64) (err error) {
	defer t.Recover(&err)
	defer t.Trace("do_sys_truncate")()
	t.Inc(EvSyscall)
	if length < 0 {
		return errno.EINVAL
	}
	pa, err := p.lookupPath(t, AT_FDCWD, path, LOOKUP_FOLLOW)
	if err != nil {
		return err
	}
	defer pa.put(t)
	inode := pa.Dentry.Inode()
	if inode.IsDir() {
		return errno.EISDIR
	}
	if !inode.IsReg() {
		return errno.EINVAL
	}
	if err := mntWantWrite(pa.Mnt); err != nil {
		return err
	}
	return doTruncate(t, pa.Dentry, length)
}

// Ftruncate is ftruncate(2). Errors: EBADF, EINVAL (negative length, not a
// regular file, or not open for writing), ENOKEY.
func (p *Proc) Ftruncate(t *kernel.Task, fd int, length int64) (err error) {
	defer t.Recover(&err)
	defer t.Trace("do_sys_ftruncate")()
	t.Inc(EvSyscall)
	if length < 0 {
		return errno.EINVAL
	}
	f, err := p.fdget(fd)
	if err != nil {
		return err
	}
	defer f.fput(t)
	if !f.inode.IsReg() || f.mode&FMODE_WRITE == 0 {
		return errno.EINVAL
	}
	return doTruncate(t, f.path.Dentry, length)
}
