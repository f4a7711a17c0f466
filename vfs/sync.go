package vfs

import "github.com/vfslab/vfslab/kernel"

// SyncFser is the optional ->sync_fs super operation: a filesystem that
// keeps metadata of its own to write (f2fs's checkpoint on an image)
// implements it on the object it gives SetOps.
type SyncFser interface {
	SyncFs(t *kernel.Task) error
}

// SyncFilesystem is sync_filesystem (fs/sync.c): nothing for a read-only
// superblock; else the filesystem's ->sync_fs, then the device written
// back (sync_blockdev: an attached image's host file). generic_shutdown_super
// calls it at umount and sync(2) for every superblock. Errors: ->sync_fs's
// and the device's.
func SyncFilesystem(t *kernel.Task, sb *SuperBlock) error {
	if sb == nil || sb.ReadOnly() {
		return nil
	}
	defer t.Trace("sync_filesystem")()
	// writeback_inodes_sb, sync_inodes_sb: every dirty inode written.
	sb.writebackInodes(0, true)
	if s, ok := sb.op.(SyncFser); ok {
		if err := s.SyncFs(t); err != nil {
			return err
		}
	}
	if sb.bdev != nil {
		return sb.bdev.Sync()
	}
	return nil
}

// Sync is sync(2) (ksys_sync): every mounted superblock synced, the first
// error returned (the kernel's sync(2) returns nothing; sync(1) and the
// shell report what failed).
func (s *System) Sync(t *kernel.Task) error {
	var first error
	for _, sb := range s.superBlocks() {
		if err := SyncFilesystem(t, sb); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// superBlocks is iterate_supers over the system's mounts: each mounted
// superblock once, the root's first.
func (s *System) superBlocks() []*SuperBlock {
	s.mu.Lock()
	root := s.rootMnt
	mounts := s.mounts.Load()
	s.mu.Unlock()
	var sbs []*SuperBlock
	seen := map[*SuperBlock]bool{}
	add := func(sb *SuperBlock) {
		if !seen[sb] {
			seen[sb] = true
			sbs = append(sbs, sb)
		}
	}
	if root != nil {
		add(root.SB)
	}
	if mounts != nil {
		for _, mnt := range *mounts {
			add(mnt.SB)
		}
	}
	return sbs
}
