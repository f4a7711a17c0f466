package vfs

import (
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// Chown is chown(2) and lchown(2) (follow false) for the owner
// (fs/open.c do_fchownat and chown_common): only a caller with CAP_CHOWN
// may change a file's owner (EPERM otherwise; the model's kernel.Cred
// has no CAP_CHOWN bit, so it is uid 0's, as for RootCred). The model's
// filesystems keep i_uid in the VFS inode and their ->setattr handles only
// ATTR_SIZE, so the new owner is stored as setattr_copy stores it, under
// the inode's i_rwsem (which fscrypt's set-policy ioctl holds when it
// reads the owner). Errors: EPERM, and the walk's.
func (p *Proc) Chown(t *kernel.Task, path string, uid uint32, follow bool) (err error) {
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
	// chown_ok: the owner may "change" the owner to itself; anything else
	// needs CAP_CHOWN.
	if !(cred.UID == inode.uid && uid == inode.uid) && cred.UID != 0 {
		return errno.EPERM
	}
	inode.uid = uid
	inodeChanged(t, inode, false)
	return nil
}
