package vfs

import (
	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/kernel"
)

// DropCaches is a write of mode to /proc/sys/vm/drop_caches
// (fs/drop_caches.c drop_caches_sysctl_handler): bit 0 drops the clean
// page cache (iterate_supers(drop_pagecache_sb): invalidate_mapping_pages
// of every inode; folios under read stay, and the model's page cache only
// holds the folios of filesystems with ->readahead), bit 1 the slab caches
// (drop_slab: the unused dentries of every superblock, prune_dcache_sb,
// then the inodes nothing holds any more, prune_icache_sb, which frees
// their in-core state: their keys). Dentries and inodes in use stay, as in
// the kernel, and so do dirty inodes (writeback.go): drop_caches drops
// only clean caches, so right after a change `sync` comes first. Then it logs "COMM (PID): drop_caches: MODE", unless bit 2
// (4, "stfu") was ever set, which silences it for the rest of the boot.
func (s *System) DropCaches(t *kernel.Task, mode int) {
	defer t.Trace("drop_caches_sysctl_handler")()
	if mode&1 != 0 {
		s.dropPagecache()
	}
	if mode&2 != 0 {
		s.dropSlab(t)
	}
	if !s.dropCachesQuiet.Load() {
		t.Printk("%s (%d): drop_caches: %d", t.Comm, t.PID, mode)
	}
	if mode&4 != 0 {
		s.dropCachesQuiet.Store(true)
	}
}

// dropSlab is drop_slab as far as the model's caches go: the dentries,
// then the inodes nothing holds.
func (s *System) dropSlab(t *kernel.Task) {
	var inodes []*Inode
	for _, m := range s.Mounts() {
		if i := m.Root.Inode(); i != nil {
			inodes = append(inodes, collectInodes(t, m.Root)...)
		}
	}
	dcache.ShrinkDcacheSB(t, s.Dcache)
	for _, inode := range inodes {
		// prune_icache_sb: a dirty inode is not on the LRU (it stays
		// cached, with its key, until writeback cleans it).
		if inode.DirtyState() != 0 {
			continue
		}
		evictUnused(t, inode)
	}
}
