package vfs

import (
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// Permission bits and checks: chmod(2) (fs/open.c chmod_common,
// fs/attr.c setattr_prepare and setattr_copy) and the DAC checks of
// fs/namei.c (generic_permission, acl_permission_check, may_lookup's
// MAY_EXEC, may_open, may_create, may_delete with check_sticky), with
// in_group_p over the credentials' fsgid and supplementary groups.
//
// The model's credentials have no capability set beyond CAP_SYS_ADMIN and
// CAP_FOWNER: CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FSETID are
// uid 0's, as chown's CAP_CHOWN is. There are no ACLs (IS_POSIXACL is
// false everywhere) and no umask (the shell's tools pass the modes that a
// umask of 022 leaves).

// The set-id and sticky bits and the permission groups of i_mode
// (include/uapi/linux/stat.h, include/linux/stat.h).
const (
	S_ISUID = 0o4000
	S_ISGID = 0o2000
	S_ISVTX = 0o1000
	S_IRWXU = 0o700
	S_IRWXG = 0o070
	S_IRWXO = 0o007
	S_IXGRP = 0o010
	S_IXUGO = 0o111
)

// MAY_NOT_BLOCK is the mask bit of a permission check in RCU-walk.
const MAY_NOT_BLOCK = 0x80

// capDAC reports CAP_DAC_OVERRIDE (and CAP_DAC_READ_SEARCH, CAP_FSETID):
// uid 0 in the model.
func capDAC(cred *kernel.Cred) bool { return cred.UID == 0 }

// capFowner is capable_wrt_inode_uidgid(CAP_FOWNER).
func capFowner(cred *kernel.Cred) bool { return cred.UID == 0 || cred.CapFowner }

// aclPermissionCheck is acl_permission_check: the owner's bits for the
// owner, the group's for a member of i_gid (in_group_p), the others'
// otherwise.
func aclPermissionCheck(cred *kernel.Cred, inode *Inode, mask int) error {
	mode := inode.Mode()
	mask &= MAY_READ | MAY_WRITE | MAY_EXEC
	if cred.UID == inode.uid {
		if uint32(mask)&^(mode>>6) != 0 {
			return errno.EACCES
		}
		return nil
	}
	// Only when the group and other bits differ is the group asked.
	if uint32(mask)&(mode^(mode>>3)) != 0 && cred.InGroupP(inode.gid) {
		mode >>= 3
	}
	if uint32(mask)&^mode != 0 {
		return errno.EACCES
	}
	return nil
}

// genericPermission is generic_permission: the mode bits, then the DAC
// capabilities (a directory may always be read and searched with
// CAP_DAC_READ_SEARCH and written with CAP_DAC_OVERRIDE; a file executed
// by them only when some x bit is set).
func genericPermission(cred *kernel.Cred, inode *Inode, mask int) error {
	err := aclPermissionCheck(cred, inode, mask)
	if err == nil || !capDAC(cred) {
		return err
	}
	if inode.IsDir() {
		return nil
	}
	if mask&MAY_EXEC == 0 || inode.Mode()&S_IXUGO != 0 {
		return nil
	}
	return errno.EACCES
}

// inodePermission is inode_permission: a write to a read-only superblock
// (sb_permission's IS_RDONLY, for files, directories and symlinks) is
// EROFS and to an immutable inode EPERM, before the mode bits.
func inodePermission(t *kernel.Task, inode *Inode, mask int) error {
	if mask&MAY_WRITE != 0 {
		if inode.sb.ReadOnly() && (inode.IsReg() || inode.IsDir() || inode.IsLnk()) {
			return errno.EROFS
		}
		if inode.Flags()&S_IMMUTABLE != 0 {
			return errno.EPERM
		}
	}
	return genericPermission(t.CurrentCred(), inode, mask)
}

// mayLookup is may_lookup: search (MAY_EXEC) permission on the directory
// the walk is in. A refusal in RCU-walk is retried in ref-walk, as the
// kernel does to make sure it was not transient.
func (nd *nameidata) mayLookup() error {
	inode := nd.path.Dentry.Inode()
	if inode == nil {
		return nil
	}
	mask := MAY_EXEC
	if nd.rcu() {
		mask |= MAY_NOT_BLOCK
	}
	err := inodePermission(nd.t, inode, mask)
	if err == nil || !nd.rcu() {
		return err
	}
	if !nd.tryToUnlazy() {
		return ECHILD
	}
	return inodePermission(nd.t, inode, MAY_EXEC)
}

// checkSticky is check_sticky: in a sticky directory only the file's
// owner, the directory's owner or CAP_FOWNER may remove or rename it.
func checkSticky(cred *kernel.Cred, dir, inode *Inode) bool {
	if dir.Mode()&S_ISVTX == 0 {
		return false
	}
	if inode.uid == cred.UID || dir.uid == cred.UID {
		return false
	}
	return !capFowner(cred)
}

// Chmod is chmod(2) and fchmodat(2) (fs/open.c do_fchmodat, chmod_common):
// under mnt_want_write and the inode's i_rwsem, notify_change with
// ATTR_MODE, whose setattr_prepare lets only the owner (or CAP_FOWNER)
// change the mode (EPERM) and clears S_ISGID when the caller is not in the
// file's group and lacks CAP_FSETID; setattr_copy stores the permission
// bits (the model's filesystems keep i_mode in the VFS inode, as chown
// keeps i_uid). A symlink's mode cannot change (EOPNOTSUPP, as
// fchmodat2 with AT_SYMLINK_NOFOLLOW answers). Errors: EPERM, EROFS, the
// walk's.
func (p *Proc) Chmod(t *kernel.Task, path string, mode uint32) (err error) {
	defer t.Recover(&err)
	defer t.Trace("do_fchmodat")()
	t.Inc(EvSyscall)
	pa, err := p.lookupPath(t, AT_FDCWD, path, LOOKUP_FOLLOW)
	if err != nil {
		return err
	}
	defer pa.put(t)
	if err := mntWantWrite(pa.Mnt); err != nil {
		return err
	}
	inode := pa.Dentry.Inode()
	if inode.IsLnk() {
		return errno.EOPNOTSUPP
	}
	cred := p.cred()
	inode.Rwsem.Lock()
	defer inode.Rwsem.Unlock()
	// setattr_prepare: inode_owner_or_capable.
	if cred.UID != inode.uid && !capFowner(cred) {
		return errno.EPERM
	}
	mode &= S_IALLUGO
	if mode&S_ISGID != 0 && !cred.InGroupP(inode.gid) && !capDAC(cred) {
		mode &^= S_ISGID
	}
	inode.mode.Store(inode.Mode()&S_IFMT | mode)
	inodeChanged(t, inode, false)
	return nil
}

// Chgrp is the group part of chown(2) (chown_common with a gid): the
// owner may give the file to a group it is in, CAP_CHOWN (uid 0) to any;
// a file that is not a directory loses S_ISUID, and a group-executable
// S_ISGID (chown_common's ATTR_KILL_SUID, setattr_should_drop_sgid).
// Errors: EPERM, EROFS, the walk's.
func (p *Proc) Chgrp(t *kernel.Task, path string, gid uint32, follow bool) (err error) {
	defer t.Recover(&err)
	defer t.Trace("do_fchownat")()
	t.Inc(EvSyscall)
	pa, err := p.attrPath(t, path, follow)
	if err != nil {
		return err
	}
	defer pa.put(t)
	inode := pa.Dentry.Inode()
	cred := p.cred()
	inode.Rwsem.Lock()
	defer inode.Rwsem.Unlock()
	// chgrp_ok: the owner to one of its groups (or the same group).
	if cred.UID != 0 && !(cred.UID == inode.uid && (gid == inode.gid || cred.InGroupP(gid))) {
		return errno.EPERM
	}
	if !inode.IsDir() {
		m := inode.Mode()
		if m&(S_ISGID|S_IXGRP) == S_ISGID|S_IXGRP {
			m &^= S_ISGID
		}
		inode.mode.Store(m &^ S_ISUID)
	}
	inode.gid = gid
	inodeChanged(t, inode, false)
	return nil
}

// attrPath is the walk of the attribute syscalls (chown, chgrp, utimensat
// and chmod's fchmodat): the path, following a final symlink when follow
// is set, under mnt_want_write (chown_common, chmod_common and
// vfs_utimes all change the inode of a writable mount). The caller puts
// the path. Errors: the walk's, EROFS.
func (p *Proc) attrPath(t *kernel.Task, path string, follow bool) (Path, error) {
	var flags uint32
	if follow {
		flags = LOOKUP_FOLLOW
	}
	pa, err := p.lookupPath(t, AT_FDCWD, path, flags)
	if err != nil {
		return pa, err
	}
	if err := mntWantWrite(pa.Mnt); err != nil {
		pa.put(t)
		return Path{}, err
	}
	return pa, nil
}

// cred is the process's credentials (RootCred when it has none).
func (p *Proc) cred() *kernel.Cred {
	if p.Cred == nil {
		return kernel.RootCred
	}
	return p.Cred
}
