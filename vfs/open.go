package vfs

import (
	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// openFlags is struct open_flags (fs/internal.h), built by buildOpenFlags.
type openFlags struct {
	openFlag    int
	mode        uint32
	accMode     int
	intent      uint32
	lookupFlags uint32
}

// buildOpenFlags is build_open_how + build_open_flags for open(2): the
// access mode, the lookup intent and flags. Errors: EINVAL for
// O_DIRECTORY|O_CREAT (Linux 6.4 on), EOPNOTSUPP for O_PATH and O_TMPFILE,
// which the model does not implement.
func buildOpenFlags(flags int, mode uint32) (openFlags, error) {
	var op openFlags
	if flags&O_CREAT != 0 || flags&O_TMPFILE == O_TMPFILE {
		op.mode = mode&S_IALLUGO | S_IFREG
	}
	if flags&(O_DIRECTORY|O_CREAT) == O_DIRECTORY|O_CREAT {
		return op, errno.EINVAL
	}
	if flags&O_PATH != 0 || flags&O_TMPFILE == O_TMPFILE {
		return op, errno.EOPNOTSUPP
	}
	flags &^= O_CLOEXEC
	acc := [4]int{MAY_READ, MAY_WRITE, MAY_READ | MAY_WRITE, MAY_READ | MAY_WRITE}[flags&O_ACCMODE]
	op.openFlag = flags
	if flags&O_TRUNC != 0 {
		acc |= MAY_WRITE
	}
	if flags&O_APPEND != 0 {
		acc |= MAY_APPEND
	}
	op.accMode = acc
	op.intent = LOOKUP_OPEN
	if flags&O_CREAT != 0 {
		op.intent |= LOOKUP_CREATE
		if flags&O_EXCL != 0 {
			op.intent |= LOOKUP_EXCL
			flags |= O_NOFOLLOW
		}
	}
	if flags&O_DIRECTORY != 0 {
		op.lookupFlags |= LOOKUP_DIRECTORY
	}
	if flags&O_NOFOLLOW == 0 {
		op.lookupFlags |= LOOKUP_FOLLOW
	}
	return op, nil
}

// Open is open(2) (do_sys_openat2 with AT_FDCWD): open, and with O_CREAT
// create, the file at path, and return the lowest free descriptor.
//
// Errors, as Linux gives them: ENOENT, ENOTDIR, ENAMETOOLONG, ELOOP (too
// many symlinks, or O_NOFOLLOW on a symlink), EEXIST (O_CREAT|O_EXCL),
// EISDIR (a directory opened for writing or truncation, or O_CREAT on a
// directory), EINVAL (O_DIRECTORY|O_CREAT), ENOKEY and EPERM from
// fscrypt_file_open, and the filesystem's errors.
func (p *Proc) Open(t *kernel.Task, path string, flags int, mode uint32) (fd int, err error) {
	return p.Openat(t, AT_FDCWD, path, flags, mode)
}

// Openat is openat(2): Open relative to the directory dirfd (or
// AT_FDCWD).
func (p *Proc) Openat(t *kernel.Task, dirfd int, path string, flags int, mode uint32) (fd int, err error) {
	defer func() {
		if err != nil {
			fd = -1
		}
	}()
	defer t.Recover(&err)
	defer t.Trace("do_sys_openat2")()
	t.Inc(EvSyscall)
	f, err := p.doFilpOpen(t, dirfd, path, flags, mode)
	if err != nil {
		return -1, err
	}
	fd, err = p.installFd(f)
	if err != nil {
		f.fput(t)
	}
	return fd, err
}

// doFilpOpen is do_filp_open: RCU-walk first, ref-walk on ECHILD.
func (p *Proc) doFilpOpen(t *kernel.Task, dfd int, name string, flags int, mode uint32) (*File, error) {
	op, err := buildOpenFlags(flags, mode)
	if err != nil {
		return nil, err
	}
	name, err = getname(name, 0)
	if err != nil {
		return nil, err
	}
	var f *File
	err = p.walk(t, dfd, func(nd *nameidata, fl uint32) error {
		var err error
		f, err = nd.pathOpenat(name, &op, fl)
		return err
	}, op.lookupFlags)
	return f, err
}

// pathOpenat is path_openat.
func (nd *nameidata) pathOpenat(name string, op *openFlags, flags uint32) (*File, error) {
	defer nd.t.Trace("path_openat")()
	f, err := allocFile(nd.t, op.openFlag)
	if err != nil {
		return nil, err
	}
	f.cred = nd.p.Cred
	if err := nd.pathInit(name, flags); err != nil {
		f.fput(nd.t)
		return nil, err
	}
	s := name
	for {
		if err = nd.linkPathWalk(s); err != nil {
			break
		}
		var isLink bool
		if s, isLink, err = nd.openLastLookups(f, op); err != nil || !isLink {
			break
		}
	}
	if err == nil {
		err = nd.doOpen(f, op)
	}
	nd.terminate()
	if err != nil {
		f.fput(nd.t)
		return nil, err
	}
	return f, nil
}

// openLastLookups is open_last_lookups (Linux 6.10): the trailing
// component of an open, created if O_CREAT asks for it. Without O_CREAT the
// lookup may stay in RCU mode; with it the walk turns into a ref-walk on
// the directory first (Linux 6.12 added an opportunistic RCU lookup of an
// existing file for O_CREAT opens, not modelled).
func (nd *nameidata) openLastLookups(f *File, op *openFlags) (string, bool, error) {
	nd.flags |= op.intent
	if nd.lastType != LAST_NORM {
		return "", false, nd.handleDots(nd.lastType)
	}
	var d *Dentry
	if op.openFlag&O_CREAT == 0 {
		if nd.lastSlash {
			nd.flags |= LOOKUP_FOLLOW | LOOKUP_DIRECTORY
		}
		var err error
		if d, err = nd.lookupFast(); err != nil {
			return "", false, err
		}
	} else {
		if nd.rcu() {
			if nd.t.Tracing() {
				nd.t.TraceNote("O_CREAT: RCU-walk -> ref-walk in %q", nd.path.Dentry.Name().Name)
			}
			if !nd.tryToUnlazy() {
				return "", false, ECHILD
			}
		}
		if nd.lastSlash {
			return "", false, errno.EISDIR
		}
	}
	if d == nil {
		dir := nd.path.Dentry.Inode()
		inodeLock(nd.t, dir, "open_last_lookups")
		var err error
		d, err = nd.lookupOpen(f, op)
		inodeUnlock(nd.t, dir)
		if err != nil {
			return "", false, err
		}
	}
	link, isLink, err := nd.stepInto(walkTrailing, nd.path.Mnt, d)
	if err != nil || isLink {
		nd.flags &^= LOOKUP_OPEN | LOOKUP_CREATE | LOOKUP_EXCL
	}
	return link, isLink, err
}

// lookupOpen is lookup_open: look the name up under the directory's lock
// and create it if O_CREAT asks and it is negative. The caller holds the
// directory's i_rwsem.
func (nd *nameidata) lookupOpen(f *File, op *openFlags) (*Dentry, error) {
	defer nd.t.Trace("lookup_open")()
	dir := nd.path.Dentry.Inode()
	if dir.IsDeadDir() {
		return nil, errno.ENOENT
	}
	f.mode &^= FMODE_CREATED
	d, err := lookupSlowLocked(nd.t, &nd.last, nd.path.Dentry, nd.flags)
	if err != nil {
		return nil, err
	}
	if d.Inode() != nil || op.openFlag&O_CREAT == 0 {
		return d, nil
	}
	// The create_error of lookup_open: mnt_want_write failed, or
	// may_o_create's write and search permission on the directory.
	if err := mntWantWrite(nd.path.Mnt); err != nil {
		dcache.Dput(nd.t, d)
		return nil, err
	}
	if err := inodePermission(nd.t, dir, MAY_WRITE|MAY_EXEC); err != nil {
		dcache.Dput(nd.t, d)
		return nil, err
	}
	f.mode |= FMODE_CREATED
	if err := vfsCreate(nd.t, dir, d, op.mode, op.openFlag&O_EXCL != 0); err != nil {
		dcache.Dput(nd.t, d)
		return nil, err
	}
	inodeChanged(nd.t, dir, true)
	return d, nil
}

// vfsCreate is the ->create call of lookup_open. lookup_open calls
// dir_inode->i_op->create itself, not vfs_create (fs/namei.c), so it is
// not traced under that name: the filesystem's create is the node.
func vfsCreate(t *kernel.Task, dir *Inode, d *Dentry, mode uint32, excl bool) error {
	return dir.Op.Create(t, dir, d, mode, excl)
}

// doOpen is do_open: the checks on the file found or created, vfs_open,
// and O_TRUNC.
func (nd *nameidata) doOpen(f *File, op *openFlags) error {
	if f.mode&FMODE_CREATED == 0 {
		if err := nd.completeWalk(); err != nil {
			return err
		}
	}
	d := nd.path.Dentry
	openFlag := op.openFlag
	if openFlag&O_CREAT != 0 {
		if openFlag&O_EXCL != 0 && f.mode&FMODE_CREATED == 0 {
			return errno.EEXIST
		}
		if d.IsDir() {
			return errno.EISDIR
		}
	}
	if nd.flags&LOOKUP_DIRECTORY != 0 && !d.IsDir() {
		return errno.ENOTDIR
	}
	// A file just created is neither checked for write access nor
	// truncated.
	accMode := op.accMode
	doTruncate := false
	if f.mode&FMODE_CREATED != 0 {
		accMode = 0
	} else if d.IsReg() && openFlag&O_TRUNC != 0 {
		doTruncate = true
	}
	if err := mayOpen(nd.t, d, accMode); err != nil {
		return err
	}
	// sb_permission's and do_dentry_open's (FMODE_WRITER) write access
	// to a file that is not a device, FIFO or socket on a read-only mount.
	if accMode&MAY_WRITE != 0 && (d.IsReg() || d.IsDir() || d.Inode().IsLnk()) {
		if err := mntWantWrite(nd.path.Mnt); err != nil {
			return err
		}
	}
	if err := vfsOpen(nd.t, nd.path, f); err != nil {
		return err
	}
	if doTruncate {
		return handleTruncate(nd.t, f)
	}
	return nil
}

// mayOpen is may_open: what the file type allows, then inode_permission
// with MAY_OPEN and the access mode (attr.go).
func mayOpen(t *kernel.Task, d *Dentry, accMode int) error {
	inode := d.Inode()
	if inode == nil {
		return errno.ENOENT
	}
	switch inode.Mode() & S_IFMT {
	case S_IFLNK:
		return errno.ELOOP
	case S_IFDIR:
		if accMode&MAY_WRITE != 0 {
			return errno.EISDIR
		}
		if accMode&MAY_EXEC != 0 {
			return errno.EACCES
		}
	case S_IFBLK, S_IFCHR, S_IFIFO, S_IFSOCK:
		// MNT_NODEV is not modelled (nodev is recorded only).
		if accMode&MAY_EXEC != 0 {
			return errno.EACCES
		}
	}
	return inodePermission(t, inode, MAY_OPEN|accMode)
}

// vfsOpen is vfs_open and do_dentry_open: the file takes a reference on
// the path and the filesystem's ->open runs.
func vfsOpen(t *kernel.Task, path Path, f *File) error {
	defer t.Trace("vfs_open")()
	inode := path.Dentry.Inode()
	f.path = path
	f.inode = inode
	dcache.Dget(t, path.Dentry)
	f.mode |= FMODE_LSEEK | FMODE_PREAD | FMODE_PWRITE
	f.Op = inode.Fop
	if f.Op == nil {
		f.Op = NoFileOps{}
	}
	if err := f.Op.Open(t, inode, f); err != nil {
		dcache.Dput(t, path.Dentry)
		f.path = Path{}
		return err
	}
	t.Inc(EvFileOpen)
	f.mode |= FMODE_OPENED
	if path.Mnt != nil {
		path.Mnt.files.Add(1)
	}
	// do_dentry_open's file_get_write_access: a file open for writing
	// that is not a device, FIFO or socket counts in mnt_writers.
	if f.mode&FMODE_WRITE != 0 && (inode.IsReg() || inode.IsDir() || inode.IsLnk()) && path.Mnt != nil {
		path.Mnt.writers.Add(1)
		f.mode |= FMODE_WRITER
	}
	if f.mode&FMODE_READ != 0 {
		f.mode |= FMODE_CAN_READ
	}
	if f.mode&FMODE_WRITE != 0 {
		f.mode |= FMODE_CAN_WRITE
	}
	f.flags &^= O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC
	return nil
}

// handleTruncate is handle_truncate: O_TRUNC through ->setattr.
func handleTruncate(t *kernel.Task, f *File) error {
	inode := f.inode
	inode.Rwsem.Lock()
	defer inode.Rwsem.Unlock()
	return notifyChange(t, f.path.Dentry, &Iattr{Valid: ATTR_SIZE, Size: 0})
}

// notifyChange is notify_change: ->setattr. The caller holds the inode's
// i_rwsem.
func notifyChange(t *kernel.Task, d *Dentry, attr *Iattr) error {
	defer t.Trace("notify_change")()
	if err := d.Inode().Op.Setattr(t, d, attr); err != nil {
		return err
	}
	// do_truncate's ATTR_MTIME|ATTR_CTIME, which setattr_copy stores.
	if attr.Valid&ATTR_SIZE != 0 {
		inodeChanged(t, d.Inode(), true)
	}
	return nil
}

// Close is close(2). Errors: EBADF.
func (p *Proc) Close(t *kernel.Task, fd int) (err error) {
	defer t.Recover(&err)
	defer t.Trace("close_fd")()
	t.Inc(EvSyscall)
	f, err := p.closeFd(fd)
	if err != nil {
		return err
	}
	if f != nil {
		f.fput(t)
	}
	return nil
}
