package vfs

import (
	"time"

	"github.com/vfslab/vfslab/kernel"
)

// Inode writeback (fs/fs-writeback.c), as far as the model needs it: which
// inodes are dirty. The model's filesystems put every change on their
// device at once, so writing an inode back only makes it clean; what
// depends on it is drop_caches, whose prune_icache_sb keeps dirty inodes
// (inode_lru_isolate: an inode with i_state bits is not reclaimed), and
// with them their fscrypt keys.
//
// An inode is dirtied by every timestamp update (markInodeDirty: a create,
// link, unlink, rename, write, setattr) and is clean again when
//   - sync(2) or syncfs writes the superblock back (SyncFilesystem:
//     sync_inodes_sb, I_DIRTY_TIME inodes too),
//   - the flusher finds it dirty for longer than dirty_expire_centisecs
//     (3000: 30 s) on the machine clock, or lazytime's I_DIRTY_TIME for
//     longer than dirtytime_expire_seconds (43200: 12 h) — the model runs
//     the flusher whenever the clock moves (System.AdvanceClock), where
//     the kernel's wakes every dirty_writeback_centisecs (5 s),
//   - it is evicted.

// Writeback expiry intervals (mm/page-writeback.c, fs/fs-writeback.c).
const (
	dirtyExpireInterval     = 30 * time.Second
	dirtytimeExpireInterval = 12 * time.Hour
)

// writebackInodes writes back (cleans) the superblock's dirty inodes that
// were dirtied at or before olderThan (for every inode: all = true), as
// wb_writeback does for the flusher's expired inodes and sync_inodes_sb
// for all.
func (sb *SuperBlock) writebackInodes(now int64, all bool) {
	sb.dirtyMu.Lock()
	var done []*Inode
	for inode, when := range sb.dirtyInodes {
		expire := dirtyExpireInterval
		if inode.dirty.Load() == I_DIRTY_TIME {
			expire = dirtytimeExpireInterval
		}
		if all || now-when >= int64(expire) {
			done = append(done, inode)
		}
	}
	sb.dirtyMu.Unlock()
	for _, inode := range done {
		inode.ClearDirty()
	}
}

// flushExpired is the flusher's periodic writeback (wb_workfn ->
// wb_check_old_data_flush) on every superblock: the inodes dirty for
// longer than dirty_expire_centisecs are written back.
func (s *System) flushExpired() {
	now := s.Now()
	for _, sb := range s.superBlocks() {
		sb.writebackInodes(now, false)
	}
}

// DirtyInodes is the number of the superblock's inodes waiting for
// writeback.
func (sb *SuperBlock) DirtyInodes() int {
	sb.dirtyMu.Lock()
	defer sb.dirtyMu.Unlock()
	return len(sb.dirtyInodes)
}

// DropCachesAfterWriteback is `sync; echo MODE > /proc/sys/vm/drop_caches`
// as far as the caches go: every dirty inode of every superblock written
// back (without ->sync_fs), then DropCaches, so that every unused inode
// goes. It is what the workloads, review's steps and trace --cold use to
// start cold.
func (s *System) DropCachesAfterWriteback(t *kernel.Task, mode int) {
	now := s.Now()
	for _, sb := range s.superBlocks() {
		sb.writebackInodes(now, true)
	}
	s.DropCaches(t, mode)
}
