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
// the kernel.
func (s *System) DropCaches(t *kernel.Task, mode int) {
	defer t.Trace("drop_caches_sysctl_handler")()
	if mode&1 != 0 {
		s.dropPagecache()
	}
	if mode&2 == 0 {
		return
	}
	var inodes []*Inode
	for _, m := range s.Mounts() {
		if i := m.Root.Inode(); i != nil {
			inodes = append(inodes, collectInodes(t, m.Root)...)
		}
	}
	dcache.ShrinkDcacheSB(t, s.Dcache)
	for _, inode := range inodes {
		evictUnused(t, inode)
	}
}
