package vfs

import (
	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
)

// Umount is umount(2) without flags (fs/namespace.c path_umount and
// do_umount, then the superblock's shutdown, fs/super.c
// generic_shutdown_super): target must be the root of a mount other than
// the namespace's root. The superblock's unused dentries are shrunk
// (shrink_dcache_for_umount); a dentry still in use below the mount (an
// open file, a working directory, a mount on it) makes it EBUSY, as the
// mount's reference count does in the kernel (the model counts no mount
// references, so the dentries stand in for them, and the unused ones are
// dropped even when the answer is EBUSY). Otherwise the mount leaves the
// table, the unused inodes are evicted (evict_inodes), the keyring is
// destroyed (fscrypt_destroy_keyring: every key added to the filesystem is
// gone) and the device is released.
//
// The model's disk filesystems keep their inodes in memory rather than on
// the device, so the detached superblock is returned: it stands for what the
// device holds, and MountSuper attaches it again (as a later mount of the
// device finds its contents). A superblock that has other mounts (bind
// mounts) stays: only this mount goes, and the superblock returned is nil.
// Errors: the walk's, EINVAL (not a mount root), EBUSY.
func (s *System) Umount(t *kernel.Task, proc *Proc, target string) (sb *SuperBlock, err error) {
	defer t.Recover(&err)
	defer t.Trace("path_umount")()
	t.Inc(EvSyscall)
	pa, err := proc.lookupPath(t, AT_FDCWD, target, LOOKUP_FOLLOW)
	if err != nil {
		return nil, err
	}
	m := pa.Mnt
	if pa.Dentry != m.Root {
		pa.put(t)
		return nil, errno.EINVAL
	}
	s.mu.Lock()
	isRoot := m == s.rootMnt
	hasChild := false
	for k := range *s.mounts.Load() {
		if k.parent == m {
			hasChild = true
		}
	}
	s.mu.Unlock()
	if isRoot || hasChild {
		pa.put(t)
		return nil, errno.EBUSY
	}
	// A superblock with other mounts (a bind mount, or the mount a bind
	// was made from) only loses this one (namespace_bind.go).
	s.mu.Lock()
	if len(s.othersOf(m)) > 0 {
		err := s.detachMnt(t, m)
		s.mu.Unlock()
		pa.put(t)
		return nil, err
	}
	s.mu.Unlock()
	sb = m.SB
	inodes := collectInodes(t, sb.Root)
	if m.source != nil {
		// The last mount is a bind mount: busy are the files open
		// through it; its root's references (the walk's, the mount's)
		// go before the superblock shuts down.
		if m.files.Load() > 0 {
			pa.put(t)
			return nil, errno.EBUSY
		}
		pa.put(t)
		dcache.Dput(t, m.Root)
		dcache.ShrinkDcacheParent(t, sb.Root)
	} else {
		dcache.ShrinkDcacheParent(t, sb.Root)
		busy := false
		dcache.ForEachChild(t, sb.Root, func(*Dentry) bool { busy = true; return false })
		pa.put(t)
		if busy {
			return nil, errno.EBUSY
		}
	}
	s.mu.Lock()
	old := *s.mounts.Load()
	nm := make(map[mountKey]*Mount, len(old))
	for k, v := range old {
		if v != m {
			nm[k] = v
		}
	}
	s.mounts.Store(&nm)
	s.mu.Unlock()
	m.mountpoint.ClearFlags(t, dcache.Mounted)
	Path{Mnt: m.parent, Dentry: m.mountpoint}.put(t)
	// generic_shutdown_super: sync_filesystem before the inodes go (its
	// error is not the umount's; the filesystem logs what failed).
	if err := SyncFilesystem(t, sb); err != nil {
		t.Printk("VFS: sync of %s at umount failed: %v", sb.ID(), err)
	}
	for _, inode := range inodes {
		evictUnused(t, inode)
	}
	if ps, ok := sb.op.(SuperPutter); ok {
		ps.PutSuper(t)
	}
	fscrypt.DestroyKeyring(t, sb)
	sb.keyring = fscrypt.NewKeyring()
	if sb.bdev != nil {
		sb.bdev.release()
	}
	return sb, nil
}

// MountSuper attaches a superblock that Umount detached at target, as a
// mount of a device finds what the filesystem left on it (the superblock's
// fill_super ran when it was first mounted). data is not parsed again.
// Errors: the walk's, EBUSY (the device is mounted, or target is a
// mountpoint).
func (s *System) MountSuper(t *kernel.Task, proc *Proc, sb *SuperBlock, target string) (m *Mount, err error) {
	defer t.Recover(&err)
	defer t.Trace("do_new_mount")()
	if sb.bdev != nil && !sb.bdev.claim() {
		return nil, errno.EBUSY
	}
	mp, err := proc.lookupPath(t, AT_FDCWD, target, LOOKUP_FOLLOW|LOOKUP_DIRECTORY)
	if err != nil {
		if sb.bdev != nil {
			sb.bdev.release()
		}
		return nil, err
	}
	m = &Mount{SB: sb, Root: sb.Root}
	m.atimeFlags.Store(MNT_RELATIME)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.attachMnt(t, m, mp); err != nil {
		if sb.bdev != nil {
			sb.bdev.release()
		}
		return nil, err
	}
	if ml, ok := sb.op.(MountLogger); ok {
		ml.Mounted(t)
	}
	return m, nil
}

// SuperPutter is a superblock's ->put_super, which generic_shutdown_super
// calls at umount once the inodes are gone (ext4_put_super logs
// "unmounting filesystem UUID.").
type SuperPutter interface {
	PutSuper(t *kernel.Task)
}

// MountLogger is a superblock whose fill_super logs a line at its end
// (ext4's "mounted filesystem UUID r/w ..."): MountSuper, which stands
// for a new fill_super of what the device holds, logs it again.
type MountLogger interface {
	Mounted(t *kernel.Task)
}

// MountPoint returns the path at which m is mounted ("/" for the root
// mount), as /proc/mounts shows it.
func (m *Mount) MountPoint(t *kernel.Task) string {
	if m.mountpoint == nil {
		return "/"
	}
	var parts []string
	mm, d := m, m.Root
	for {
		for d != mm.Root {
			parts = append(parts, d.Name().Name)
			d = d.Parent()
		}
		if mm.parent == nil {
			break
		}
		d, mm = mm.mountpoint, mm.parent
	}
	out := ""
	for i := len(parts) - 1; i >= 0; i-- {
		out += "/" + parts[i]
	}
	return out
}

// collectInodes lists the inodes of root's cached descendants (the
// superblock's s_inodes list, which the model does not keep, as far as the
// dcache reaches).
func collectInodes(t *kernel.Task, root *Dentry) []*Inode {
	var out []*Inode
	var walk func(d *Dentry)
	walk = func(d *Dentry) {
		var kids []*Dentry
		dcache.ForEachChild(t, d, func(c *Dentry) bool {
			if i := c.Inode(); i != nil {
				out = append(out, i)
				kids = append(kids, c)
			}
			return true
		})
		for _, c := range kids {
			if dcache.DgetNotDead(t, c) {
				walk(c)
				dcache.Dput(t, c)
			}
		}
	}
	walk(root)
	return out
}

// evictUnused evicts the in-core state of a linked inode nothing holds, as
// the inode cache's shrinker (prune_icache_sb) and evict_inodes do, whatever
// ->drop_inode would say.
func evictUnused(t *kernel.Task, inode *Inode) {
	inode.ilock.Lock()
	defer inode.ilock.Unlock()
	if inode.count.Load() != 0 || inode.nlink.Load() == 0 {
		return
	}
	evict(t, inode)
}
