package libfs

import (
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// FinishLookup is the end ext4_lookup and f2fs_lookup share, once the
// directory code found inode (nil for a miss; the caller's reference goes
// with it): in an encrypted directory a directory or symlink whose policy
// the directory does not permit is refused (fscrypt_has_permitted_context:
// warn logs the filesystem's "Inconsistent encryption contexts" warning,
// then EPERM); a miss in a casefolded directory leaves the dentry unhashed
// rather than caching a negative dentry, as Linux before 6.9 does (the
// model has no generic_ci_d_revalidate); otherwise d_splice_alias. The VFS
// holds dir's i_rwsem. Errors: EPERM, and d_splice_alias's.
func FinishLookup(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, inode *vfs.Inode, warn func(dir, inode *vfs.Inode)) (*vfs.Dentry, error) {
	if inode != nil && dir.IsEncrypted() && (inode.IsDir() || inode.IsLnk()) && !fscrypt.HasPermittedContext(t, dir, inode) {
		warn(dir, inode)
		vfs.Iput(t, inode)
		return nil, errno.EPERM
	}
	if inode == nil && dir.IsCasefolded() {
		return nil, nil
	}
	return vfs.DSpliceAlias(t, inode, d)
}

// PrepareRename2 is the start ext4_rename2 and f2fs_rename2 share: the
// flags the model has (RENAME_NOREPLACE, RENAME_EXCHANGE; RENAME_WHITEOUT
// is not modelled: EINVAL), then fscrypt_prepare_rename. It reports
// whether the rename is an exchange. The VFS holds both directories'
// i_rwsem. Errors: EINVAL, ENOKEY (a no-key name), EXDEV (a move the new
// directory's policy forbids), fscrypt's.
func PrepareRename2(t *kernel.Task, oldDir *vfs.Inode, oldD *vfs.Dentry, newDir *vfs.Inode, newD *vfs.Dentry, flags uint32) (exchange bool, err error) {
	if flags&^(vfs.RENAME_NOREPLACE|vfs.RENAME_EXCHANGE) != 0 {
		return false, errno.EINVAL
	}
	if err := hooks.FscryptPrepareRename(t, oldDir, oldD, newDir, newD, flags); err != nil {
		return false, err
	}
	return flags&vfs.RENAME_EXCHANGE != 0, nil
}

// LookupEvents are the counters a filesystem's directory lookup adds to:
// dirents visited, names compared, on-disk names decrypted to compare
// them (generic_ci_match), directory blocks searched.
type LookupEvents struct {
	Scanned, Compared, Decrypts, Blocks events.Event
}

// LookupStats accumulates one lookup's counts, added to the task's events
// once at the end (Flush), so that counting does not perturb the loop
// over the dirents.
type LookupStats struct {
	Scanned, Compared, Decrypts, Blocks uint64
}

// Flush adds the counts to the task's events ev (nothing when the task
// does not count).
func (st *LookupStats) Flush(t *kernel.Task, ev *LookupEvents) {
	if t.Ev == nil {
		return
	}
	t.Add(ev.Scanned, st.Scanned)
	t.Add(ev.Compared, st.Compared)
	t.Add(ev.Decrypts, st.Decrypts)
	t.Add(ev.Blocks, st.Blocks)
}
