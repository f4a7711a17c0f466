package vfs

import (
	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/kernel"
)

// LookupOneUncached looks name up in the directory base as
// lookup_one_unlocked does (fs/namei.c: the name hashed with the
// directory's d_hash, the dcache, then the filesystem's ->lookup on a new
// dentry under the directory's i_rwsem), then invalidates the dentry it
// got (d_invalidate), so that the next lookup of the name reaches the
// filesystem again. A benchmark of a filesystem's ->lookup uses it, so that
// the dcache never answers for the filesystem and no caller below the VFS
// takes the directory lock by hand. It returns whether the name exists.
// The caller holds a reference on base. Errors: the d_hash's (EINVAL for a
// name a strict casefolded directory refuses), ->lookup's, ENOMEM.
func LookupOneUncached(t *kernel.Task, base *Dentry, name string) (found bool, err error) {
	defer t.Recover(&err)
	q := dcache.Qstr{Name: name}
	if err := dcache.DHash(t, base, &q); err != nil {
		return false, err
	}
	dir := base.Inode()
	dir.Rwsem.Lock()
	d, err := lookupSlowLocked(t, &q, base, 0)
	dir.Rwsem.Unlock()
	if err != nil {
		return false, err
	}
	found = d.Inode() != nil
	dcache.DInvalidate(t, d)
	dcache.Dput(t, d)
	return found, nil
}
