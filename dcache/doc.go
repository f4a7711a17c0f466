// Package dcache models the Linux dentry cache (fs/dcache.c,
// include/linux/dcache.h) with its locking primitives: the lockref that
// packs a spinlock and a reference count into one 64-bit word
// (lib/lockref.c), the d_seq sequence counts and the rename_lock seqlock
// (include/linux/seqlock.h), the hlist_bl hash table that RCU-walk reads
// without taking a lock, the per-cache LRU of unused dentries, and the name
// hashes of fs/namei.c.
//
// # Dentries
//
// A Dentry is generic over the inode type, so that d_inode is a single
// atomic pointer load (d_inode_rcu) with no interface box:
//
//	type Dentry = dcache.Dentry[Inode] // in package vfs
//
// The fields RCU-walk reads (d_flags, d_seq, d_hash, d_parent, d_name,
// d_inode) sit on the first cache line and the lockref on the third, at
// offset 128, as in the kernel, so that taking a reference does not bounce
// the line that lockless readers of the same dentry share. A Dentry is 256
// bytes (the kernel's is 192); short names (up to DnameInlineLen-1 bytes)
// live inside it, longer ones in a separately allocated external name.
//
// Names are immutable records swapped by pointer: d_move gives the moved
// dentry the target's name record (copy_name) or exchanges the two
// (swap_names). A reader therefore always sees a consistent (hash, len,
// bytes) triple; whether that triple still belongs to the dentry's current
// place in the tree is what d_seq tells, exactly as in the kernel.
//
// # Operations
//
// Functions are named after their kernel counterparts: DAlloc (d_alloc),
// DAllocName, DMakeRoot, DInstantiate, DAdd, DSpliceAlias, Dget, DgetDlock,
// Dput, DgetParent, DLookup, DLookupRCU (__d_lookup_rcu), DHashAndLookup,
// DDelete, DDrop, DRehash, DMove, DExchange, DInvalidate,
// ShrinkDcacheParent, ShrinkDentryList and PruneDcache (prune_dcache_sb).
// Each takes the calling *kernel.Task first: it counts events in the task's
// shard, allocates through the task's kmem context (the "dentry" cache and
// the "dentry:external_name" kmalloc site, both subject to fault injection)
// and enters RCU read-side sections with the task's reader.
//
// Every atomic read-modify-write on a dentry's lockref (each cmpxchg
// attempt, and each attempt to take its spinlock) is counted as
// "lockref_rmw"; those on a dentry marked with Dentry.Watch are also counted
// as "lockref_rmw_watched". The second is the figure seed 004 reports: the
// atomic operations fscrypt_file_open performs on the shared parent
// directory's lockref (2 per open before the patch, 0 after it when the
// parent is not encrypted).
//
// # RCU and poisoning
//
// Killed dentries are freed after an RCU grace period (call_rcu, through
// the task's machine's rcu.Domain). When the grace period ends the callback
// poisons the dentry. With Cache.SetDebug(DebugCount or DebugBUG), the
// RCU-walk accessors (ParentRCU, InodeRCU, NameRCU, DLookupRCU, the
// case-insensitive d_compare) check the poison: touching a poisoned dentry
// is the use-after-free the kernel's KASAN would report, and is counted
// (Cache.UseAfterFree, event "dentry_use_after_free") or raised as a
// "KASAN: slab-use-after-free" *kernel.Bug.
//
// # What is not modelled
//
// d_alloc_parallel and in-lookup dentries (the VFS serialises lookups of
// one directory with the directory's lock, as before Linux 4.7), mounts
// (d_mountpoint is always false), d_time, d_prune and d_iput operations,
// fsnotify flags, and per-CPU counters (the counts are atomics on the
// Cache).
package dcache
