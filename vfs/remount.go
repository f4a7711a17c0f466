package vfs

import (
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// RemountReadonly is mount(2) with MS_REMOUNT, setting (ro) or clearing
// MS_RDONLY on the mount whose root is target (fs/namespace.c do_remount,
// fs/super.c reconfigure_super):
//
//   - going read-write on a write-protected device is EACCES
//     (reconfigure_super's bdev_read_only check), which mount(8) reports
//     as "cannot remount ... read-write, is write-protected";
//   - going read-only while a file of the superblock is open for writing
//     is EBUSY (sb_prepare_remount_readonly, which finds mnt_writers
//     raised on one of the superblock's mounts).
//
// Then SB_RDONLY and the mount's MNT_READONLY follow ro. The model has no
// s_remove_count: an unlinked file still open read-only does not make
// the remount EBUSY as it does in Linux. Errors: the walk's, EINVAL
// (target is not a mount's root), EACCES, EBUSY.
func (s *System) RemountReadonly(t *kernel.Task, proc *Proc, target string, ro bool) (err error) {
	defer t.Recover(&err)
	defer t.Trace("do_remount")()
	t.Inc(EvSyscall)
	pa, err := proc.lookupPath(t, AT_FDCWD, target, LOOKUP_FOLLOW|LOOKUP_DIRECTORY)
	if err != nil {
		return err
	}
	defer pa.put(t)
	if pa.Dentry != pa.Mnt.Root {
		return errno.EINVAL
	}
	sb := pa.Mnt.SB
	if !ro && sb.bdev != nil && sb.bdev.ReadOnly() {
		return errno.EACCES
	}
	if ro && !sb.ReadOnly() || ro && !pa.Mnt.IsReadonly() {
		if err := s.sbPrepareRemountReadonly(sb); err != nil {
			return err
		}
	}
	sb.rdonly.Store(ro)
	pa.Mnt.readonly.Store(ro)
	return nil
}

// sbPrepareRemountReadonly is sb_prepare_remount_readonly: EBUSY when any
// mount of sb has a file open for writing (mnt_get_writers).
func (s *System) sbPrepareRemountReadonly(sb *SuperBlock) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rootMnt != nil && s.rootMnt.SB == sb && s.rootMnt.writers.Load() > 0 {
		return errno.EBUSY
	}
	for _, m := range *s.mounts.Load() {
		if m.SB == sb && m.writers.Load() > 0 {
			return errno.EBUSY
		}
	}
	return nil
}
