package dcache

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// Dcache events.
var (
	EvDget        = events.Register("dget", "dentry references taken (dget, dget_parent, d_lookup, lockref_get_not_dead)")
	EvDput        = events.Register("dput", "dput calls")
	EvDentryKill  = events.Register("dentry_kill", "dentries killed (__dentry_kill)")
	EvDLookup     = events.Register("d_lookup", "d_lookup (ref-walk) hash-table lookups")
	EvDLookupRCU  = events.Register("d_lookup_rcu", "__d_lookup_rcu (RCU-walk) hash-table lookups")
	EvDcachePrune = events.Register("dcache_pruned", "unused dentries freed by the LRU shrinker (prune_dcache_sb)")
	EvDentryUAF   = events.Register("dentry_use_after_free", "accesses to a dentry after its RCU grace period ended")
)

// Allocation sites: the dentry slab cache (struct dentry is 192 bytes on
// x86-64) and external names (struct external_name: a 16-byte header, the
// name, a NUL).
var (
	dentryCache   = kmem.NewCache("dentry", 192)
	siteExtName   = kmem.NewSite("dentry:external_name")
	extNameHeader = 16
)

// DentryKmemCache returns the kmem cache dentries are accounted to.
func DentryKmemCache() *kmem.Cache { return dentryCache }

// ExternalNameSite returns the kmalloc site of external names.
func ExternalNameSite() *kmem.Site { return siteExtName }

// InodeOps tells the dcache what it needs to know about an inode of type
// I. Every field may be nil.
type InodeOps[I any] struct {
	// Aliases returns the inode's alias list and i_lock (struct inode's
	// i_dentry and i_lock). Without it the dcache keeps no alias lists:
	// DFindAlias finds nothing and DSpliceAlias never reuses an alias.
	Aliases func(inode *I) *Aliases[I]
	// Type returns the DCACHE_*_TYPE bits for the inode (d_flags_for_inode),
	// RegularType when nil.
	Type func(inode *I) Flags
	// Iput drops the reference a positive dentry holds on its inode when
	// the dentry becomes negative or dies (iput in dentry_unlink_inode).
	Iput func(t *kernel.Task, inode *I)
	// Ino returns the inode number for the canonical dump.
	Ino func(inode *I) uint64
}

// Aliases is the part of struct inode the dcache owns: i_dentry, the list
// of the inode's dentries, and i_lock, which protects it. The inode type
// embeds one and InodeOps.Aliases returns it. The zero value is ready.
type Aliases[I any] struct {
	lock  Spinlock
	first *Dentry[I]
}

// Lock takes i_lock.
func (a *Aliases[I]) Lock() { a.lock.Lock() }

// TryLock takes i_lock if it is free.
func (a *Aliases[I]) TryLock() bool { return a.lock.TryLock() }

// Unlock releases i_lock.
func (a *Aliases[I]) Unlock() { a.lock.Unlock() }

// Empty reports whether the inode has no dentry (hlist_empty(&i_dentry));
// a racy snapshot unless i_lock is held.
func (a *Aliases[I]) Empty() bool {
	a.lock.Lock()
	defer a.lock.Unlock()
	return a.first == nil
}

// DebugMode selects what the RCU-walk accessors check.
type DebugMode int32

// Debug modes.
const (
	// DebugOff checks nothing (the default; what a benchmark runs).
	DebugOff DebugMode = iota
	// DebugCount counts accesses to poisoned dentries (Cache.UseAfterFree,
	// event dentry_use_after_free) and logs RCU accessors used outside an
	// RCU read-side section as "suspicious RCU usage".
	DebugCount
	// DebugBUG also raises a "KASAN: slab-use-after-free" *kernel.Bug on
	// an access to a poisoned dentry.
	DebugBUG
)

// Config configures a Cache.
type Config[I any] struct {
	// HashShift is log2 of the number of hash buckets (the kernel sizes
	// dentry_hashtable from memory; d_hash_shift is 32 - HashShift).
	// 0 means DefaultHashShift.
	HashShift int
	// MaxUnused bounds the number of dentries on the LRU: when a dput puts
	// the LRU over it, the putting task prunes the oldest unused dentries
	// (prune_dcache_sb), as the superblock shrinker would under memory
	// pressure. 0 means DefaultMaxUnused; negative means no bound.
	//
	// The bound is soft, as memory pressure is: the kernel's LRU has no
	// bound at all. Referenced dentries get a second chance (a few passes
	// per prune), and a dput that goes over the bound while another task
	// is pruning leaves it to that task, so under concurrent dputs the LRU
	// can exceed the bound until the next prune.
	MaxUnused int
	// Inodes describes the inode type.
	Inodes InodeOps[I]
}

// Defaults.
const (
	DefaultHashShift = 16
	DefaultMaxUnused = 1 << 16
)

// bucket is an hlist_bl_head: the chain's first dentry and its bit lock
// (a separate word in the model, since Go pointers cannot carry a bit).
type bucket[I any] struct {
	first atomic.Pointer[Dentry[I]]
	lock  Spinlock
}

// Cache is one dentry cache: the hash table (dentry_hashtable), the
// rename_lock seqlock, the LRU of unused dentries (a superblock's
// s_dentry_lru) and the dentry-state counters. A simulated system may use
// one Cache for all its superblocks, as the kernel does, or one for each.
type Cache[I any] struct {
	table  []bucket[I]
	shift  uint32 // d_hash_shift: hash >> shift indexes the table
	inodes InodeOps[I]

	renameLock Seqlock

	lruMu     sync.Mutex
	lruHead   *Dentry[I] // oldest
	lruTail   *Dentry[I] // newest
	lruLen    atomic.Int64
	maxUnused atomic.Int64
	pruning   atomic.Bool

	nrDentry   atomic.Int64 // nr_dentry
	nrUnused   atomic.Int64 // nr_dentry_unused: LRU plus dispose lists
	nrNegative atomic.Int64 // nr_dentry_negative: negative dentries on the LRU

	debug atomic.Int32
	uaf   atomic.Int64
}

// NewCache returns an empty cache configured by cfg.
func NewCache[I any](cfg Config[I]) *Cache[I] {
	shift := cfg.HashShift
	if shift <= 0 {
		shift = DefaultHashShift
	}
	if shift > 24 {
		shift = 24
	}
	max := int64(cfg.MaxUnused)
	if max == 0 {
		max = DefaultMaxUnused
	}
	c := &Cache[I]{
		table:  make([]bucket[I], 1<<shift),
		shift:  uint32(32 - shift),
		inodes: cfg.Inodes,
	}
	c.maxUnused.Store(max)
	return c
}

// RenameLock returns the cache's rename_lock.
func (c *Cache[I]) RenameLock() *Seqlock { return &c.renameLock }

// Inodes returns the inode operations the cache was configured with.
func (c *Cache[I]) Inodes() InodeOps[I] { return c.inodes }

// SetDebug selects the RCU-walk checks.
func (c *Cache[I]) SetDebug(m DebugMode) { c.debug.Store(int32(m)) }

// UseAfterFree returns the number of accesses to poisoned dentries seen
// with debugging on.
func (c *Cache[I]) UseAfterFree() int64 { return c.uaf.Load() }

// Stats is the dentry state (/proc/sys/fs/dentry-state).
type Stats struct {
	Dentries int64 // nr_dentry: allocated and not yet killed
	Unused   int64 // nr_dentry_unused: on the LRU or a dispose list
	LRU      int64 // on the LRU (list_lru_count)
	Negative int64 // nr_dentry_negative: negative dentries on the LRU
}

// String renders the state as "dentries=N unused=N lru=N negative=N".
func (s Stats) String() string {
	return fmt.Sprintf("dentries=%d unused=%d lru=%d negative=%d", s.Dentries, s.Unused, s.LRU, s.Negative)
}

// Stats returns the dentry state.
func (c *Cache[I]) Stats() Stats {
	return Stats{Dentries: c.nrDentry.Load(), Unused: c.nrUnused.Load(), LRU: c.lruLen.Load(), Negative: c.nrNegative.Load()}
}

// MaxUnused returns the LRU bound (negative: none).
func (c *Cache[I]) MaxUnused() int64 { return c.maxUnused.Load() }

// SetMaxUnused changes the LRU bound (negative: none) and prunes down to it.
func (c *Cache[I]) SetMaxUnused(t *kernel.Task, n int) {
	c.maxUnused.Store(int64(n))
	c.maybePrune(t)
}

func (c *Cache[I]) aliases(inode *I) *Aliases[I] {
	if inode == nil || c.inodes.Aliases == nil {
		return nil
	}
	return c.inodes.Aliases(inode)
}

func (c *Cache[I]) typeFor(inode *I) Flags {
	if c.inodes.Type == nil {
		return RegularType
	}
	return c.inodes.Type(inode) & EntryType
}

// dHash returns the bucket of a hash (d_hash): its top bits.
func (c *Cache[I]) dHash(hash uint32) *bucket[I] { return &c.table[hash>>c.shift] }

// rehash inserts d at the head of its bucket (__d_rehash,
// hlist_bl_add_head_rcu). The caller holds d_lock.
func (c *Cache[I]) rehash(d *Dentry[I]) {
	b := c.dHash(d.name.Load().hash())
	b.lock.Lock()
	first := b.first.Load()
	d.hashNext.Store(first)
	d.hashPprev.Store(&b.first)
	if first != nil {
		first.hashPprev.Store(&d.hashNext)
	}
	b.first.Store(d) // rcu_assign_pointer: publishes d to RCU readers
	b.lock.Unlock()
}

// unhashLocked removes d from its bucket without marking it unhashed
// (___d_drop, hlist_bl_del_rcu): its next pointer stays, so an RCU reader
// standing on it can go on walking. The caller holds d_lock.
func (c *Cache[I]) unhashLocked(d *Dentry[I]) {
	b := c.dHash(d.name.Load().hash())
	b.lock.Lock()
	pprev := d.hashPprev.Load()
	next := d.hashNext.Load()
	pprev.Store(next)
	if next != nil {
		next.hashPprev.Store(pprev)
	}
	b.lock.Unlock()
}

// lruAdd puts d at the tail of the LRU (d_lru_add). The caller holds
// d_lock.
func (c *Cache[I]) lruAdd(d *Dentry[I]) {
	d.setFlagsLocked(LRUList)
	c.nrUnused.Add(1)
	if d.inode.Load() == nil {
		c.nrNegative.Add(1)
	}
	c.lruMu.Lock()
	c.lruLinkTail(d)
	c.lruMu.Unlock()
}

// lruDel removes d from the LRU (d_lru_del). The caller holds d_lock.
func (c *Cache[I]) lruDel(d *Dentry[I]) {
	d.clearFlagsLocked(LRUList)
	c.nrUnused.Add(-1)
	if d.inode.Load() == nil {
		c.nrNegative.Add(-1)
	}
	c.lruMu.Lock()
	c.lruUnlink(d)
	c.lruMu.Unlock()
}

func (c *Cache[I]) lruLinkTail(d *Dentry[I]) {
	d.lruNext = nil
	d.lruPrev = c.lruTail
	if c.lruTail != nil {
		c.lruTail.lruNext = d
	} else {
		c.lruHead = d
	}
	c.lruTail = d
	c.lruLen.Add(1)
}

func (c *Cache[I]) lruUnlink(d *Dentry[I]) {
	if d.lruPrev != nil {
		d.lruPrev.lruNext = d.lruNext
	} else {
		c.lruHead = d.lruNext
	}
	if d.lruNext != nil {
		d.lruNext.lruPrev = d.lruPrev
	} else {
		c.lruTail = d.lruPrev
	}
	d.lruPrev, d.lruNext = nil, nil
	c.lruLen.Add(-1)
}

// checkRCU is the debugging check of the RCU-walk accessors.
func (c *Cache[I]) checkRCU(t *kernel.Task, d *Dentry[I], what string) {
	if c.debug.Load() == int32(DebugOff) {
		return
	}
	c.checkRCUSlow(t, d, what)
}

func (c *Cache[I]) checkRCUSlow(t *kernel.Task, d *Dentry[I], what string) {
	if t != nil && !t.RCU.Held() {
		t.WarnOn(true, "suspicious RCU usage: "+what+" read outside rcu_read_lock")
	}
	if !d.Poisoned() {
		return
	}
	c.uaf.Add(1)
	if t != nil {
		t.Inc(EvDentryUAF)
	}
	if DebugMode(c.debug.Load()) == DebugBUG {
		b := &kernel.Bug{
			Kind:   "KASAN: slab-use-after-free",
			Msg:    fmt.Sprintf("read of %s of dentry %q freed after an RCU grace period", what, d.name.Load().str()),
			Size:   -1,
			Offset: -1,
		}
		if pc, file, line, ok := runtime.Caller(3); ok {
			b.File, b.Line = file, line
			if f := runtime.FuncForPC(pc); f != nil {
				b.Func = f.Name()
			}
		}
		panic(b)
	}
}
