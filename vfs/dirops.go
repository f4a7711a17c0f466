package vfs

import (
	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// created is what filenameCreate returns: the parent (with a reference
// and its i_rwsem held) and the negative dentry to create.
type created struct {
	parent Path
	dentry *Dentry
}

// done is done_path_create: unlock the parent, drop both references.
func (c *created) done(t *kernel.Task) {
	inodeUnlock(t, c.parent.Dentry.Inode())
	dcache.Dput(t, c.dentry)
	c.parent.put(t)
}

// filenameCreate is filename_create: look up the parent of name, lock it
// and look up the last component, which must not exist. wantDir allows a
// trailing slash. Errors: those of the walk, EEXIST (existing name, or a
// last component that is ".", ".." or "/"), ENOENT (trailing slash
// without wantDir).
func (p *Proc) filenameCreate(t *kernel.Task, dfd int, name string, wantDir bool) (*created, error) {
	pr, err := p.lookupParent(t, dfd, name)
	if err != nil {
		return nil, err
	}
	if pr.typ != LAST_NORM {
		pr.path.put(t)
		return nil, errno.EEXIST
	}
	createFlags := uint32(LOOKUP_CREATE | LOOKUP_EXCL)
	if pr.slash && !wantDir {
		createFlags = 0
	}
	dir := pr.path.Dentry.Inode()
	inodeLock(t, dir, "filename_create")
	d, err := lookupOneQstrExcl(t, &pr.last, pr.path.Dentry, createFlags)
	if err == nil && d.IsPositive() {
		dcache.Dput(t, d)
		err = errno.EEXIST
	} else if err == nil && createFlags == 0 {
		dcache.Dput(t, d)
		err = errno.ENOENT
	} else if err == nil {
		// mnt_want_write, taken before the lookup and reported after
		// it so that EEXIST and ENOENT win.
		if err = mntWantWrite(pr.path.Mnt); err != nil {
			dcache.Dput(t, d)
		}
	}
	if err != nil {
		inodeUnlock(t, dir)
		pr.path.put(t)
		return nil, err
	}
	return &created{parent: pr.path, dentry: d}, nil
}

// mayCreate is may_create: write and search permission on the directory
// (attr.go).
func mayCreate(t *kernel.Task, dir *Inode, child *Dentry) error {
	if child.IsPositive() {
		return errno.EEXIST
	}
	if dir.IsDeadDir() {
		return errno.ENOENT
	}
	return inodePermission(t, dir, MAY_WRITE|MAY_EXEC)
}

// mayDelete is may_delete: write and search permission on the directory,
// then the sticky bit's rule (check_sticky, attr.go).
func mayDelete(t *kernel.Task, dir *Inode, victim *Dentry, isDir bool) error {
	if victim.IsNegative() {
		return errno.ENOENT
	}
	inode := victim.Inode()
	if err := inodePermission(t, dir, MAY_WRITE|MAY_EXEC); err != nil {
		return err
	}
	if dir.Flags()&S_APPEND != 0 || checkSticky(t.CurrentCred(), dir, inode) || inode.Flags()&(S_APPEND|S_IMMUTABLE) != 0 {
		return errno.EPERM
	}
	if isDir {
		if !victim.IsDir() {
			return errno.ENOTDIR
		}
		if victim.IsRoot() {
			return errno.EBUSY
		}
	} else if victim.IsDir() {
		return errno.EISDIR
	}
	if dir.IsDeadDir() {
		return errno.ENOENT
	}
	return nil
}

// isLocalMountpoint reports whether d is mounted on.
func isLocalMountpoint(d *Dentry) bool { return d.Flags()&dcache.Mounted != 0 }

// Mkdir is mkdir(2). Errors: EEXIST, ENOENT, ENOTDIR, ENAMETOOLONG,
// ELOOP, EPERM, ENOKEY (encrypted parent without its key), the
// filesystem's errors.
func (p *Proc) Mkdir(t *kernel.Task, path string, mode uint32) (err error) {
	defer t.Recover(&err)
	defer t.Trace("do_mkdirat")()
	t.Inc(EvSyscall)
	c, err := p.filenameCreate(t, AT_FDCWD, path, true)
	if err != nil {
		return err
	}
	defer c.done(t)
	return vfsMkdir(t, c.parent.Dentry.Inode(), c.dentry, mode&0o1777|S_IFDIR)
}

// vfsMkdir is vfs_mkdir.
func vfsMkdir(t *kernel.Task, dir *Inode, d *Dentry, mode uint32) error {
	defer t.Trace("vfs_mkdir")()
	if err := mayCreate(t, dir, d); err != nil {
		return err
	}
	if err := dir.Op.Mkdir(t, dir, d, mode); err != nil {
		return err
	}
	inodeChanged(t, dir, true)
	return nil
}

// Rmdir is rmdir(2). Errors: ENOENT, ENOTDIR, ENOTEMPTY (also for a last
// component ".."), EINVAL ("."), EBUSY (the root, a mountpoint), ENOKEY,
// the filesystem's errors.
func (p *Proc) Rmdir(t *kernel.Task, path string) (err error) {
	defer t.Recover(&err)
	defer t.Trace("do_rmdir")()
	t.Inc(EvSyscall)
	pr, err := p.lookupParent(t, AT_FDCWD, path)
	if err != nil {
		return err
	}
	defer pr.path.put(t)
	switch pr.typ {
	case LAST_DOTDOT:
		return errno.ENOTEMPTY
	case LAST_DOT:
		return errno.EINVAL
	case LAST_ROOT:
		return errno.EBUSY
	}
	if err := mntWantWrite(pr.path.Mnt); err != nil {
		return err
	}
	dir := pr.path.Dentry.Inode()
	dir.Rwsem.Lock()
	defer dir.Rwsem.Unlock()
	d, err := lookupOneQstrExcl(t, &pr.last, pr.path.Dentry, 0)
	if err != nil {
		return err
	}
	defer dcache.Dput(t, d)
	if d.IsNegative() {
		return errno.ENOENT
	}
	return vfsRmdir(t, dir, d)
}

// vfsRmdir is vfs_rmdir. The caller holds dir's i_rwsem.
func vfsRmdir(t *kernel.Task, dir *Inode, d *Dentry) error {
	defer t.Trace("vfs_rmdir")()
	if err := mayDelete(t, dir, d, true); err != nil {
		return err
	}
	inode := d.Inode()
	inode.Rwsem.Lock()
	defer inode.Rwsem.Unlock()
	if isLocalMountpoint(d) {
		return errno.EBUSY
	}
	if err := dir.Op.Rmdir(t, dir, d); err != nil {
		return err
	}
	inodeChanged(t, dir, true)
	dcache.ShrinkDcacheParent(t, d)
	inode.SetFlags(S_DEAD)
	dcache.DDelete(t, d)
	return nil
}

// Unlink is unlink(2). Errors: ENOENT, EISDIR (a directory, or ".", ".."
// or "/"), ENOTDIR (a trailing slash on a non-directory), EPERM, EBUSY,
// ENOKEY, the filesystem's errors.
func (p *Proc) Unlink(t *kernel.Task, path string) (err error) {
	defer t.Recover(&err)
	defer t.Trace("do_unlinkat")()
	t.Inc(EvSyscall)
	pr, err := p.lookupParent(t, AT_FDCWD, path)
	if err != nil {
		return err
	}
	defer pr.path.put(t)
	if pr.typ != LAST_NORM {
		return errno.EISDIR
	}
	if err := mntWantWrite(pr.path.Mnt); err != nil {
		return err
	}
	dir := pr.path.Dentry.Inode()
	// do_unlinkat holds the victim's inode (ihold) across vfs_unlink and
	// drops it after unlocking the directory: that final iput, not
	// d_delete inside vfs_unlink, is where an unlinked inode is evicted
	// ("truncate the inode here", fs/namei.c).
	var held *Inode
	defer func() {
		if held != nil {
			Iput(t, held)
		}
	}()
	dir.Rwsem.Lock()
	defer dir.Rwsem.Unlock()
	d, err := lookupOneQstrExcl(t, &pr.last, pr.path.Dentry, 0)
	if err != nil {
		return err
	}
	defer dcache.Dput(t, d)
	if !pr.slash && !d.IsNegative() {
		held = d.Inode()
		Ihold(held)
	}
	if pr.slash || d.IsNegative() {
		switch {
		case d.IsNegative():
			return errno.ENOENT
		case d.IsDir():
			return errno.EISDIR
		}
		return errno.ENOTDIR
	}
	return vfsUnlink(t, dir, d)
}

// vfsUnlink is vfs_unlink. The caller holds dir's i_rwsem.
func vfsUnlink(t *kernel.Task, dir *Inode, d *Dentry) error {
	defer t.Trace("vfs_unlink")()
	if err := mayDelete(t, dir, d, false); err != nil {
		return err
	}
	target := d.Inode()
	target.Rwsem.Lock()
	defer target.Rwsem.Unlock()
	if isLocalMountpoint(d) {
		return errno.EBUSY
	}
	if err := dir.Op.Unlink(t, dir, d); err != nil {
		return err
	}
	inodeChanged(t, dir, true)
	inodeChanged(t, target, false)
	dcache.DDelete(t, d)
	return nil
}

// Link is link(2): newpath becomes another name of oldpath's inode (a
// trailing symlink is not followed). Errors: ENOENT, EEXIST, EPERM (a
// directory), EXDEV (another mount, or fscrypt's policy rule), ENOKEY,
// ENOTDIR, the filesystem's errors.
func (p *Proc) Link(t *kernel.Task, oldpath, newpath string) (err error) {
	defer t.Recover(&err)
	defer t.Trace("do_linkat")()
	t.Inc(EvSyscall)
	old, err := p.lookupPath(t, AT_FDCWD, oldpath, 0)
	if err != nil {
		return err
	}
	defer old.put(t)
	c, err := p.filenameCreate(t, AT_FDCWD, newpath, false)
	if err != nil {
		return err
	}
	defer c.done(t)
	if old.Mnt != c.parent.Mnt {
		return errno.EXDEV
	}
	return vfsLink(t, old.Dentry, c.parent.Dentry.Inode(), c.dentry)
}

// vfsLink is vfs_link.
func vfsLink(t *kernel.Task, oldDentry *Dentry, dir *Inode, newDentry *Dentry) error {
	defer t.Trace("vfs_link")()
	inode := oldDentry.Inode()
	if inode == nil {
		return errno.ENOENT
	}
	if err := mayCreate(t, dir, newDentry); err != nil {
		return err
	}
	if dir.sb != inode.sb {
		return errno.EXDEV
	}
	if inode.Flags()&(S_APPEND|S_IMMUTABLE) != 0 {
		return errno.EPERM
	}
	if inode.IsDir() {
		return errno.EPERM
	}
	inode.Rwsem.Lock()
	defer inode.Rwsem.Unlock()
	if inode.Nlink() == 0 {
		return errno.ENOENT
	}
	if err := dir.Op.Link(t, oldDentry, dir, newDentry); err != nil {
		return err
	}
	inodeChanged(t, dir, true)
	inodeChanged(t, inode, false)
	return nil
}

// Symlink is symlink(2): a symlink at linkpath whose target is target.
// Errors: ENOENT (empty target), ENAMETOOLONG, EEXIST, ENOKEY, the
// filesystem's errors.
func (p *Proc) Symlink(t *kernel.Task, target, linkpath string) (err error) {
	defer t.Recover(&err)
	defer t.Trace("do_symlinkat")()
	t.Inc(EvSyscall)
	target, err = getname(target, 0)
	if err != nil {
		return err
	}
	c, err := p.filenameCreate(t, AT_FDCWD, linkpath, false)
	if err != nil {
		return err
	}
	defer c.done(t)
	return vfsSymlink(t, c.parent.Dentry.Inode(), c.dentry, target)
}

// vfsSymlink is vfs_symlink.
func vfsSymlink(t *kernel.Task, dir *Inode, d *Dentry, target string) error {
	defer t.Trace("vfs_symlink")()
	if err := mayCreate(t, dir, d); err != nil {
		return err
	}
	if err := dir.Op.Symlink(t, dir, d, target); err != nil {
		return err
	}
	inodeChanged(t, dir, true)
	return nil
}

// Readlink is readlink(2): the target of the symlink at path (not
// followed), truncated to len(buf). Errors: EINVAL (len(buf) == 0, or not
// a symlink), ENOENT, ENOTDIR. Without the key an encrypted target reads
// as its no-key name.
func (p *Proc) Readlink(t *kernel.Task, path string, buf []byte) (n int, err error) {
	defer t.Recover(&err)
	defer t.Trace("do_readlinkat")()
	t.Inc(EvSyscall)
	if len(buf) <= 0 {
		return 0, errno.EINVAL
	}
	pa, err := p.lookupPath(t, AT_FDCWD, path, 0)
	if err != nil {
		return 0, err
	}
	defer pa.put(t)
	if !pa.Dentry.IsSymlink() {
		return 0, errno.EINVAL
	}
	target, err := vfsGetLink(t, pa.Dentry)
	if err != nil {
		return 0, err
	}
	return copy(buf, target), nil
}

// vfsGetLink is vfs_get_link: the cached i_link or ->get_link.
func vfsGetLink(t *kernel.Task, d *Dentry) (string, error) {
	inode := d.Inode()
	if s, ok := inode.Link(); ok {
		return s, nil
	}
	return inode.Op.GetLink(t, d, inode)
}

// Rename is renameat2(2) in the current directory: oldpath becomes
// newpath. flags: RENAME_NOREPLACE (EEXIST if newpath exists),
// RENAME_EXCHANGE (swap two existing names), RENAME_WHITEOUT.
//
// Errors, in Linux's order: EINVAL (bad flags; a directory into its own
// subtree), the walk's errors for either parent, EXDEV (another mount, or
// fscrypt's policy rule), EBUSY (a last component ".", ".." or "/" on the
// old side, or on the new side without RENAME_NOREPLACE, or a
// mountpoint), EEXIST, ENOENT, ENOTDIR, EISDIR, ENOTEMPTY, ENOKEY, the
// filesystem's errors. Renaming a name to another name of the same inode
// does nothing.
func (p *Proc) Rename(t *kernel.Task, oldpath, newpath string, flags uint32) (err error) {
	defer t.Recover(&err)
	defer t.Trace("do_renameat2")()
	t.Inc(EvSyscall)
	if flags&^(RENAME_NOREPLACE|RENAME_EXCHANGE|RENAME_WHITEOUT) != 0 {
		return errno.EINVAL
	}
	if flags&(RENAME_NOREPLACE|RENAME_WHITEOUT) != 0 && flags&RENAME_EXCHANGE != 0 {
		return errno.EINVAL
	}
	var targetFlags uint32 = LOOKUP_RENAME_TARGET
	if flags&RENAME_EXCHANGE != 0 {
		targetFlags = 0
	}
	if flags&RENAME_NOREPLACE != 0 {
		targetFlags |= LOOKUP_EXCL
	}
	op, err := p.lookupParent(t, AT_FDCWD, oldpath)
	if err != nil {
		return err
	}
	defer op.path.put(t)
	np, err := p.lookupParent(t, AT_FDCWD, newpath)
	if err != nil {
		return err
	}
	defer np.path.put(t)
	if op.path.Mnt != np.path.Mnt {
		return errno.EXDEV
	}
	if op.typ != LAST_NORM {
		return errno.EBUSY
	}
	if np.typ != LAST_NORM {
		if flags&RENAME_NOREPLACE != 0 {
			return errno.EEXIST
		}
		return errno.EBUSY
	}
	if err := mntWantWrite(op.path.Mnt); err != nil {
		return err
	}
	oldDir, newDir := op.path.Dentry, np.path.Dentry
	trap, unlock := lockRename(t, newDir, oldDir)
	defer unlock()
	oldD, err := lookupOneQstrExcl(t, &op.last, oldDir, 0)
	if err != nil {
		return err
	}
	defer dcache.Dput(t, oldD)
	if oldD.IsNegative() {
		return errno.ENOENT
	}
	newD, err := lookupOneQstrExcl(t, &np.last, newDir, targetFlags)
	if err != nil {
		return err
	}
	defer dcache.Dput(t, newD)
	if flags&RENAME_NOREPLACE != 0 && newD.IsPositive() {
		return errno.EEXIST
	}
	if flags&RENAME_EXCHANGE != 0 {
		if newD.IsNegative() {
			return errno.ENOENT
		}
		if !newD.IsDir() && np.slash {
			return errno.ENOTDIR
		}
	}
	if !oldD.IsDir() {
		if op.slash {
			return errno.ENOTDIR
		}
		if flags&RENAME_EXCHANGE == 0 && np.slash {
			return errno.ENOTDIR
		}
	}
	if oldD == trap {
		return errno.EINVAL
	}
	if newD == trap {
		if flags&RENAME_EXCHANGE != 0 {
			return errno.EINVAL
		}
		return errno.ENOTEMPTY
	}
	return vfsRename(t, oldDir.Inode(), oldD, newDir.Inode(), newD, flags)
}

// lockRename is lock_rename(p1, p2): lock both directories, and for two
// different ones the superblock's s_vfs_rename_mutex first, ancestors
// before descendants. It returns the "trap": the child of p2 on the way to
// p1 if p2 is an ancestor of p1, else the child of p1 on the way to p2,
// else nil; and the function that unlocks.
func lockRename(t *kernel.Task, p1, p2 *Dentry) (*Dentry, func()) {
	i1, i2 := p1.Inode(), p2.Inode()
	if p1 == p2 {
		i1.Rwsem.Lock()
		return nil, i1.Rwsem.Unlock
	}
	sb := i1.sb
	sb.renameMutex.Lock()
	unlock := func() {
		i1.Rwsem.Unlock()
		i2.Rwsem.Unlock()
		sb.renameMutex.Unlock()
	}
	if p := dAncestor(p2, p1); p != nil {
		i2.Rwsem.Lock()
		i1.Rwsem.Lock()
		return p, unlock
	}
	p := dAncestor(p1, p2)
	i1.Rwsem.Lock()
	i2.Rwsem.Lock()
	return p, unlock
}

// lockTwoInodes locks the children of a rename (lock_two_inodes):
// directories first, then by inode number; nil and duplicates skipped.
func lockTwoInodes(a, b *Inode) func() {
	if a == nil || a == b {
		a, b = b, nil
	}
	if a == nil {
		return func() {}
	}
	if b == nil {
		a.Rwsem.Lock()
		return a.Rwsem.Unlock
	}
	if (b.IsDir() && !a.IsDir()) || (a.IsDir() == b.IsDir() && b.ino < a.ino) {
		a, b = b, a
	}
	a.Rwsem.Lock()
	b.Rwsem.Lock()
	return func() { b.Rwsem.Unlock(); a.Rwsem.Unlock() }
}

// vfsRename is vfs_rename: the generic checks, the filesystem's ->rename
// and the dcache's d_move or d_exchange. The caller holds both
// directories' locks (lockRename).
func vfsRename(t *kernel.Task, oldDir *Inode, oldD *Dentry, newDir *Inode, newD *Dentry, flags uint32) error {
	defer t.Trace("vfs_rename")()
	source, target := oldD.Inode(), newD.Inode()
	if source == target {
		return nil
	}
	isDir := oldD.IsDir()
	newIsDir := false
	if err := mayDelete(t, oldDir, oldD, isDir); err != nil {
		return err
	}
	var err error
	if target == nil {
		err = mayCreate(t, newDir, newD)
	} else {
		newIsDir = newD.IsDir()
		if flags&RENAME_EXCHANGE == 0 {
			err = mayDelete(t, newDir, newD, isDir)
		} else {
			err = mayDelete(t, newDir, newD, newIsDir)
		}
	}
	if err != nil {
		return err
	}
	// A directory that changes parent needs write permission on itself:
	// its ".." is rewritten.
	if newDir != oldDir {
		if isDir {
			if err := inodePermission(t, source, MAY_WRITE); err != nil {
				return err
			}
		}
		if flags&RENAME_EXCHANGE != 0 && newIsDir {
			if err := inodePermission(t, target, MAY_WRITE); err != nil {
				return err
			}
		}
	}
	var unlock func()
	if !isDir || flags&RENAME_EXCHANGE != 0 {
		unlock = lockTwoInodes(source, target)
	} else {
		unlock = lockTwoInodes(target, nil)
	}
	defer unlock()
	if isLocalMountpoint(oldD) || isLocalMountpoint(newD) {
		return errno.EBUSY
	}
	if err := oldDir.Op.Rename(t, oldDir, oldD, newDir, newD, flags); err != nil {
		return err
	}
	inodeChanged(t, oldDir, true)
	if newDir != oldDir {
		inodeChanged(t, newDir, true)
	}
	inodeChanged(t, source, false)
	if target != nil {
		inodeChanged(t, target, false)
	}
	if flags&RENAME_EXCHANGE == 0 && target != nil {
		if isDir {
			dcache.ShrinkDcacheParent(t, newD)
			target.SetFlags(S_DEAD)
		}
	}
	if flags&RENAME_EXCHANGE == 0 {
		dcache.DMove(t, oldD, newD)
	} else {
		dcache.DExchange(t, oldD, newD)
	}
	return nil
}
