package vfs

import (
	"syscall"

	"github.com/vfslab/vfslab/events"
)

// VFS events, counted once per operation in the calling task's shard.
var (
	EvSyscall          = events.Register("syscall", "syscalls entered (vfs.Proc methods)")
	EvPathWalkRCU      = events.Register("path_walk_rcu", "path walks started in RCU mode (LOOKUP_RCU)")
	EvPathWalkFallback = events.Register("path_walk_ref_fallback", "path walks restarted in ref-walk mode after RCU-walk failed with -ECHILD")
	EvPathWalkUnlazy   = events.Register("path_walk_unlazy", "RCU-walks turned into ref-walks midway (try_to_unlazy succeeded)")
	EvLookupSlow       = events.Register("lookup_slow", "->lookup calls (dcache misses)")
	EvSymlinkFollow    = events.Register("symlink_follow", "symlinks followed by path walks")
	EvFileOpen         = events.Register("vfs_open", "files opened (vfs_open)")
	EvNokeyInvalidate  = events.Register("nokey_dentry_invalidate", "no-key dentries invalidated by d_revalidate once the key was added")
)

// Linux errno values package errno does not define.
const (
	// ECHILD (10) is what RCU-walk returns when it must be redone in
	// ref-walk mode.
	ECHILD = syscall.Errno(10)
	// ENXIO (6) is SEEK_DATA/SEEK_HOLE past the end.
	ENXIO = syscall.Errno(6)
)
