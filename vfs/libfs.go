package vfs

import (
	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// ShrinkDcacheInode is shrink_dcache_inode (fs/crypto/keyring.c): drop the
// unused dentries below a directory, and the unused dentries of the
// inode itself (d_prune_aliases), so that an inode whose key was removed
// can be evicted and its plaintext names forgotten.
//
// The dcache exports no d_prune_aliases; this one kills aliases found by
// d_find_any_alias while the first is unused (an alias in use stops it,
// which can leave unused hard-link aliases behind).
func ShrinkDcacheInode(t *kernel.Task, inode *Inode) {
	c := inode.sb.sys.Dcache
	if inode.IsDir() {
		if d := dcache.DFindAnyAlias(t, c, inode); d != nil {
			dcache.ShrinkDcacheParent(t, d)
			dcache.Dput(t, d)
		}
	}
	for range 64 {
		d := dcache.DFindAnyAlias(t, c, inode)
		if d == nil {
			return
		}
		if d.Count() != 1 || d.IsRoot() {
			dcache.Dput(t, d)
			return
		}
		dcache.DDrop(t, d)
		dcache.Dput(t, d)
	}
}

// EvictDecryptedInode is what FS_IOC_REMOVE_ENCRYPTION_KEY does to each
// inode the removed key unlocked (fs/crypto/keyring.c,
// evict_dentries_for_decrypted_inodes, then the inode cache's eviction of
// unused inodes): the inode's unused dentries go, and an inode nothing
// holds any more has its in-core state (its key) evicted through the
// filesystem's ->drop_inode and ->evict_inode. An inode kept busy by an
// open file stays; fscrypt then reports the removal as incomplete. The
// fscrypt_operations callback of ext4, f2fs and memfs.
func EvictDecryptedInode(t *kernel.Task, inode *Inode) {
	ShrinkDcacheInode(t, inode)
	EvictIfUnused(t, inode)
}

// DSpliceAlias is d_splice_alias as a filesystem's ->lookup ends with it
// (fs/dcache.c): dcache.DSpliceAlias, which hashes d with inode (nil for a
// negative dentry) or moves an existing directory alias to its place;
// the inode reference the lookup took goes with the dentry, and is
// dropped when splicing fails, as the kernel's d_splice_alias drops it.
func DSpliceAlias(t *kernel.Task, inode *Inode, d *Dentry) (*Dentry, error) {
	alias, err := dcache.DSpliceAlias(t, inode, d)
	if err != nil && inode != nil {
		Iput(t, inode)
	}
	return alias, err
}

// Chdir is chdir(2). Errors: ENOENT, ENOTDIR, and the walk's.
func (p *Proc) Chdir(t *kernel.Task, path string) (err error) {
	defer t.Recover(&err)
	defer t.Trace("do_chdir")()
	return p.setFSPath(t, path, false)
}

// Chroot is chroot(2) (ksys_chroot, set_fs_root): path becomes the
// process's root directory, which absolute paths start from and ".."
// never climbs above; the working directory stays where it is. The
// model has no capabilities to check (CAP_SYS_CHROOT). Errors: ENOENT,
// ENOTDIR, and the walk's.
func (p *Proc) Chroot(t *kernel.Task, path string) (err error) {
	defer t.Recover(&err)
	defer t.Trace("ksys_chroot")()
	return p.setFSPath(t, path, true)
}

// setFSPath is set_fs_pwd or, with root, set_fs_root: the directory path
// becomes the process's working directory or root, and the old one's
// reference goes.
func (p *Proc) setFSPath(t *kernel.Task, path string, root bool) error {
	t.Inc(EvSyscall)
	pa, err := p.lookupPath(t, AT_FDCWD, path, LOOKUP_FOLLOW|LOOKUP_DIRECTORY)
	if err != nil {
		return err
	}
	p.fsMu.Lock()
	old := p.fs.Load()
	if old == nil {
		p.fsMu.Unlock()
		pa.put(t)
		return errno.ENOENT
	}
	nfs, drop := &fsStruct{root: old.root, pwd: pa}, old.pwd
	if root {
		nfs, drop = &fsStruct{root: pa, pwd: old.pwd}, old.root
	}
	p.fs.Store(nfs)
	p.fsMu.Unlock()
	drop.put(t)
	return nil
}

// LookupDentry resolves path for in-kernel users and tests
// (kern_path): the dentry with a reference the caller drops with
// dcache.Dput. follow follows a trailing symlink.
func (p *Proc) LookupDentry(t *kernel.Task, path string, follow bool) (d *Dentry, err error) {
	defer t.Recover(&err)
	var flags uint32
	if follow {
		flags = LOOKUP_FOLLOW
	}
	pa, err := p.lookupPath(t, AT_FDCWD, path, flags)
	if err != nil {
		return nil, err
	}
	return pa.Dentry, nil
}
