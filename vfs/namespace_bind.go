package vfs

import (
	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// Bind mounts and per-mount flags (fs/namespace.c do_loopback,
// clone_mnt, do_reconfigure_mnt, mnt_make_readonly): a bind mount is a
// second mount of a superblock already mounted, whose root is the
// directory (or file) bound, with the flags of the mount it was made from.
// Its MNT_READONLY is its own: `mount -o remount,ro,bind` makes it
// read-only (mnt_want_write's EROFS through it) while the superblock and
// its other mounts stay writable. A umount detaches one mount; the
// superblock shuts down with its last one. Not modelled: recursive binds
// (copy_tree), propagation, MNT_DETACH.

// BindMount is mount(2) with MS_BIND (do_loopback): source's mount is
// cloned (clone_mnt: the same superblock, root source's dentry, the same
// read-only and atime flags) and grafted on target. Errors: the walks',
// EINVAL (an empty source), ENOTDIR (a directory on a non-directory or
// the other way round, graft_tree), EBUSY.
func (s *System) BindMount(t *kernel.Task, proc *Proc, source, target string) (m *Mount, err error) {
	defer t.Recover(&err)
	defer t.Trace("do_loopback")()
	t.Inc(EvSyscall)
	if source == "" {
		return nil, errno.EINVAL
	}
	mp, err := proc.lookupPath(t, AT_FDCWD, target, LOOKUP_FOLLOW)
	if err != nil {
		return nil, err
	}
	old, err := proc.lookupPath(t, AT_FDCWD, source, LOOKUP_FOLLOW|LOOKUP_AUTOMOUNT)
	if err != nil {
		mp.put(t)
		return nil, err
	}
	if mp.Dentry.IsDir() != old.Dentry.IsDir() {
		old.put(t)
		mp.put(t)
		return nil, errno.ENOTDIR
	}
	// clone_mnt: the mount keeps the walk's reference on its root.
	m = &Mount{SB: old.Mnt.SB, Root: old.Dentry, source: old.Mnt}
	m.readonly.Store(old.Mnt.IsReadonly())
	m.atimeFlags.Store(old.Mnt.atimeFlags.Load())
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.attachMnt(t, m, mp); err != nil {
		dcache.Dput(t, old.Dentry)
		return nil, err
	}
	return m, nil
}

// ReconfigureMount is mount(2) with MS_REMOUNT|MS_BIND
// (do_reconfigure_mnt): only the mount's own MNT_READONLY changes
// (change_mount_ro_state); making it read-only while one of its files is
// open for writing is EBUSY (mnt_make_readonly). Errors: the walk's,
// EINVAL (target is not a mount's root), EBUSY.
func (s *System) ReconfigureMount(t *kernel.Task, proc *Proc, target string, ro bool) (err error) {
	defer t.Recover(&err)
	defer t.Trace("do_reconfigure_mnt")()
	t.Inc(EvSyscall)
	pa, err := proc.lookupPath(t, AT_FDCWD, target, LOOKUP_FOLLOW)
	if err != nil {
		return err
	}
	defer pa.put(t)
	m := pa.Mnt
	if pa.Dentry != m.Root {
		return errno.EINVAL
	}
	if ro == (m.IsReadonly() || m.SB.ReadOnly()) {
		return nil
	}
	if ro {
		// mnt_make_readonly: mnt_hold_writers fails while the mount
		// has writers.
		if m.writers.Load() > 0 {
			return errno.EBUSY
		}
	}
	m.readonly.Store(ro)
	return nil
}

// MntIsReadonly is __mnt_is_readonly: the mount's MNT_READONLY or its
// superblock's SB_RDONLY (what /proc/mounts shows as "ro").
func (m *Mount) MntIsReadonly() bool { return m.IsReadonly() || m.SB.ReadOnly() }

// othersOf lists the mounts of m's superblock other than m (s_mounts).
// The caller holds s.mu.
func (s *System) othersOf(m *Mount) []*Mount {
	var out []*Mount
	if s.rootMnt != nil && s.rootMnt != m && s.rootMnt.SB == m.SB {
		out = append(out, s.rootMnt)
	}
	for _, o := range *s.mounts.Load() {
		if o != m && o.SB == m.SB {
			out = append(out, o)
		}
	}
	return out
}

// detachMnt is umount_tree of one mount whose superblock has other
// mounts: it leaves the table, its mountpoint is no longer one unless
// another mount sits there, and its root's and mountpoint's references
// go (mntput without deactivate_super). Busy (EBUSY): a file open
// through it. The caller holds s.mu.
func (s *System) detachMnt(t *kernel.Task, m *Mount) error {
	if m.files.Load() > 0 {
		return errno.EBUSY
	}
	old := *s.mounts.Load()
	nm := make(map[mountKey]*Mount, len(old))
	stillMounted := false
	for k, v := range old {
		if v == m {
			continue
		}
		nm[k] = v
		if k.d == m.mountpoint {
			stillMounted = true
		}
	}
	s.mounts.Store(&nm)
	if !stillMounted {
		m.mountpoint.ClearFlags(t, dcache.Mounted)
	}
	Path{Mnt: m.parent, Dentry: m.mountpoint}.put(t)
	if m.Root != m.SB.Root || m.source != nil {
		dcache.Dput(t, m.Root)
	}
	return nil
}

// SourceMount is the mount a bind mount was cloned from (nil for a new
// mount).
func (m *Mount) SourceMount() *Mount { return m.source }
