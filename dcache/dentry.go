package dcache

import (
	"strings"
	"sync/atomic"

	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/rcu"
)

// Flags holds d_flags bits (include/linux/dcache.h, the values of Linux
// 6.10 to 6.14). The operation bits are set by DSetDOp, the entry type by
// d_instantiate from InodeOps.Type, the others by the dcache itself and by
// the layers above (NokeyName by fscrypt_prepare_lookup).
type Flags uint32

// d_flags bits.
const (
	OpHash           Flags = 1 << 0  // DCACHE_OP_HASH: d_op has d_hash
	OpCompare        Flags = 1 << 1  // DCACHE_OP_COMPARE: d_op has d_compare
	OpRevalidate     Flags = 1 << 2  // DCACHE_OP_REVALIDATE: d_op has d_revalidate
	OpDelete         Flags = 1 << 3  // DCACHE_OP_DELETE: d_op has d_delete
	OpPrune          Flags = 1 << 4  // DCACHE_OP_PRUNE (never set by the model)
	Disconnected     Flags = 1 << 5  // DCACHE_DISCONNECTED: an anonymous root not yet connected
	Referenced       Flags = 1 << 6  // DCACHE_REFERENCED: recently used, second chance on the LRU
	DontCache        Flags = 1 << 7  // DCACHE_DONTCACHE: kill on the final dput
	CantMount        Flags = 1 << 8  // DCACHE_CANT_MOUNT
	Genocide         Flags = 1 << 9  // DCACHE_GENOCIDE
	ShrinkList       Flags = 1 << 10 // DCACHE_SHRINK_LIST: on a dispose list
	OpWeakRevalidate Flags = 1 << 11 // DCACHE_OP_WEAK_REVALIDATE
	NFSFSRenamed     Flags = 1 << 12 // DCACHE_NFSFS_RENAMED
	FsnotifyWatched  Flags = 1 << 14 // DCACHE_FSNOTIFY_PARENT_WATCHED
	DentryKilled     Flags = 1 << 15 // DCACHE_DENTRY_KILLED: unlinked from the tree by __dentry_kill
	Mounted          Flags = 1 << 16 // DCACHE_MOUNTED
	NeedAutomount    Flags = 1 << 17 // DCACHE_NEED_AUTOMOUNT
	ManageTransit    Flags = 1 << 18 // DCACHE_MANAGE_TRANSIT
	LRUList          Flags = 1 << 19 // DCACHE_LRU_LIST: on the LRU or a dispose list
	EntryType        Flags = 7 << 20 // DCACHE_ENTRY_TYPE: the type bits
	MissType         Flags = 0 << 20 // DCACHE_MISS_TYPE: negative dentry
	WhiteoutType     Flags = 1 << 20 // DCACHE_WHITEOUT_TYPE
	DirectoryType    Flags = 2 << 20 // DCACHE_DIRECTORY_TYPE
	AutodirType      Flags = 3 << 20 // DCACHE_AUTODIR_TYPE
	RegularType      Flags = 4 << 20 // DCACHE_REGULAR_TYPE
	SpecialType      Flags = 5 << 20 // DCACHE_SPECIAL_TYPE (devices, fifos, sockets)
	SymlinkType      Flags = 6 << 20 // DCACHE_SYMLINK_TYPE
	MayFree          Flags = 1 << 23 // DCACHE_MAY_FREE
	Fallthru         Flags = 1 << 24 // DCACHE_FALLTHRU
	NokeyName        Flags = 1 << 25 // DCACHE_NOKEY_NAME: encrypted name encoded without the key
	OpReal           Flags = 1 << 26 // DCACHE_OP_REAL
	ParLookup        Flags = 1 << 28 // DCACHE_PAR_LOOKUP (never set by the model)
	DentryCursor     Flags = 1 << 29 // DCACHE_DENTRY_CURSOR
	NoRCU            Flags = 1 << 30 // DCACHE_NORCU: freed without waiting for a grace period
	opFlags                = OpHash | OpCompare | OpRevalidate | OpDelete | OpPrune | OpWeakRevalidate | OpReal
	typeAndFallthru        = EntryType | Fallthru
)

var flagNames = []struct {
	f    Flags
	name string
}{
	{OpHash, "OP_HASH"}, {OpCompare, "OP_COMPARE"}, {OpRevalidate, "OP_REVALIDATE"},
	{OpDelete, "OP_DELETE"}, {OpPrune, "OP_PRUNE"}, {Disconnected, "DISCONNECTED"},
	{Referenced, "REFERENCED"}, {DontCache, "DONTCACHE"}, {CantMount, "CANT_MOUNT"},
	{Genocide, "GENOCIDE"}, {ShrinkList, "SHRINK_LIST"}, {OpWeakRevalidate, "OP_WEAK_REVALIDATE"},
	{NFSFSRenamed, "NFSFS_RENAMED"}, {FsnotifyWatched, "FSNOTIFY_PARENT_WATCHED"},
	{DentryKilled, "DENTRY_KILLED"}, {Mounted, "MOUNTED"}, {NeedAutomount, "NEED_AUTOMOUNT"},
	{ManageTransit, "MANAGE_TRANSIT"}, {LRUList, "LRU_LIST"}, {MayFree, "MAY_FREE"},
	{Fallthru, "FALLTHRU"}, {NokeyName, "NOKEY_NAME"}, {OpReal, "OP_REAL"},
	{ParLookup, "PAR_LOOKUP"}, {DentryCursor, "DENTRY_CURSOR"}, {NoRCU, "NORCU"},
}

var typeNames = [8]string{"MISS", "WHITEOUT", "DIRECTORY", "AUTODIR", "REGULAR", "SPECIAL", "SYMLINK", "TYPE7"}

// Type returns the entry type bits (f & EntryType).
func (f Flags) Type() Flags { return f & EntryType }

// String names the bits without their DCACHE_ prefix, joined by '|', the
// entry type last ("LRU_LIST|REFERENCED|REGULAR"); "0" when f is zero. A
// negative dentry's MISS type is not shown.
func (f Flags) String() string {
	var parts []string
	rest := f &^ EntryType
	for _, n := range flagNames {
		if rest&n.f != 0 {
			parts = append(parts, n.name)
			rest &^= n.f
		}
	}
	if rest != 0 {
		parts = append(parts, "0x"+strings.ToLower(hex32(uint32(rest))))
	}
	if t := f.Type(); t != MissType {
		parts = append(parts, typeNames[t>>20])
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, "|")
}

func hex32(v uint32) string {
	const digits = "0123456789ABCDEF"
	var b [8]byte
	i := len(b)
	for {
		i--
		b[i] = digits[v&15]
		v >>= 4
		if v == 0 {
			return string(b[i:])
		}
	}
}

// DnameInlineLen is DNAME_INLINE_LEN on 64-bit (include/linux/dcache.h):
// names shorter than this are stored inside the dentry.
const DnameInlineLen = 40

// dname is one immutable name record: the qstr's hash_len and its bytes.
// A dentry's d_name is an atomic pointer to one; renames swap pointers and
// never write to a published record, so a reader always sees a consistent
// triple (the kernel instead copies inline names in place and lets d_seq
// tell readers that they raced).
type dname struct {
	hashLen uint64
	ptr     *byte    // the name's bytes; the length is in hashLen
	ext     *extName // non-nil for an external (kmalloc'd) name
}

func (n *dname) hash() uint32 { return HashlenHash(n.hashLen) }

// extName is struct external_name: a refcounted kmalloc'd name shared by
// the dentries that copy_name made point at it.
type extName struct {
	rec   dname
	count atomic.Int32
	buf   []byte // the kmalloc'd region: 16-byte header, name, NUL
}

// Dentry is struct dentry (include/linux/dcache.h), generic over the inode
// type I. Create dentries with DAlloc, DAllocName or DMakeRoot; a Dentry
// must not be copied.
//
// Layout (checked by a test): the first 64-byte line holds what RCU-walk
// reads (d_flags, d_seq, d_hash, d_parent, d_name, d_inode, and the cache
// whose hash table a lookup searches), the second the inline name and
// d_op, and the lockref starts the third line at offset 128, with the
// lists that are only touched under locks. The whole is 256 bytes, a Go
// size class, so dentries are allocated 64-byte aligned.
type Dentry[I any] struct {
	// Cache line 0: RCU lookup touched fields.
	flags     atomic.Uint32                             // d_flags (Flags); written under d_lock
	seq       Seqcount                                  // d_seq
	hashNext  atomic.Pointer[Dentry[I]]                 // d_hash.next
	hashPprev atomic.Pointer[atomic.Pointer[Dentry[I]]] // d_hash.pprev; nil when unhashed
	parent    atomic.Pointer[Dentry[I]]                 // d_parent; the dentry itself for a root
	name      atomic.Pointer[dname]                     // d_name
	inode     atomic.Pointer[I]                         // d_inode; nil for a negative dentry
	cache     *Cache[I]                                 // the cache (and hash table) the dentry belongs to

	// Cache line 1: the inline name and the operations.
	iname dname                // the inline name record (d_shortname's qstr)
	ibuf  [DnameInlineLen]byte // d_shortname
	op    *Operations[I]       // d_op

	// Cache line 2: the lockref and what is only touched under locks.
	lockref   Lockref       // d_lockref
	watch     atomic.Bool   // count this dentry's lockref operations as watched
	poison    atomic.Uint32 // set when the RCU grace period after the free ended
	lruPrev   *Dentry[I]    // d_lru (under the cache's LRU lock)
	lruNext   *Dentry[I]    //
	sibNext   *Dentry[I]    // d_sib (under the parent's d_lock)
	sibPprev  **Dentry[I]   //
	children  *Dentry[I]    // d_children (under d_lock)
	aliasNext *Dentry[I]    // d_u.d_alias (under the inode's i_lock)
	aliasPrev **Dentry[I]   //
	sb        any           // d_sb
	// Fsdata is d_fsdata, private to the filesystem.
	Fsdata any
	// rcu is d_u.d_rcu, queued by dentry_free's call_rcu; the kernel
	// overlays it on d_alias, the model keeps it apart (it is what the
	// padding to 256 bytes held).
	rcu rcu.Head
}

// Flags returns d_flags (READ_ONCE).
func (d *Dentry[I]) Flags() Flags { return Flags(d.flags.Load()) }

// Seq returns the dentry's d_seq.
func (d *Dentry[I]) Seq() *Seqcount { return &d.seq }

// Name returns d_name as a Qstr: a consistent snapshot, but one that only
// stays current while the caller holds d_lock, the rename_lock or the
// parent directory's lock, as in the kernel.
func (d *Dentry[I]) Name() Qstr {
	n := d.name.Load()
	return Qstr{Hash: n.hash(), Name: n.str()}
}

// NameRCU is Name for RCU-walk: it checks the dentry's poison when the
// cache's debugging is on.
func (d *Dentry[I]) NameRCU(t *kernel.Task) Qstr {
	d.cache.checkRCU(t, d, "d_name")
	return d.Name()
}

// Inode returns d_inode (d_inode()); nil for a negative dentry.
func (d *Dentry[I]) Inode() *I { return d.inode.Load() }

// InodeRCU is d_inode_rcu: READ_ONCE(dentry->d_inode) for a caller inside
// an RCU read-side section that holds no reference to the dentry. With
// debugging on it reports a poisoned dentry and warns outside RCU.
func (d *Dentry[I]) InodeRCU(t *kernel.Task) *I {
	d.cache.checkRCU(t, d, "d_inode_rcu")
	return d.inode.Load()
}

// Parent returns d_parent; it is stable while the caller holds d_lock, the
// rename_lock, or the parent directory's lock.
func (d *Dentry[I]) Parent() *Dentry[I] { return d.parent.Load() }

// ParentRCU is READ_ONCE(dentry->d_parent) for RCU-walk: with debugging on
// it reports a poisoned dentry and warns outside RCU.
func (d *Dentry[I]) ParentRCU(t *kernel.Task) *Dentry[I] {
	d.cache.checkRCU(t, d, "d_parent")
	return d.parent.Load()
}

// Ops returns d_op.
func (d *Dentry[I]) Ops() *Operations[I] { return d.op }

// SB returns d_sb, the superblock value given to DMakeRoot.
func (d *Dentry[I]) SB() any { return d.sb }

// Cache returns the cache the dentry belongs to.
func (d *Dentry[I]) Cache() *Cache[I] { return d.cache }

// Count returns the reference count (d_count) as a racy snapshot;
// LockrefDead once killed.
func (d *Dentry[I]) Count() int { return d.lockref.Count() }

// Lockref returns the dentry's d_lockref.
func (d *Dentry[I]) Lockref() *Lockref { return &d.lockref }

// Lock takes d_lock (spin_lock(&dentry->d_lock)), counting the atomic
// operation on the lockref word.
func (d *Dentry[I]) Lock(t *kernel.Task) { d.lockref.lock(t, d.watch.Load()) }

// TryLock takes d_lock if it is free (spin_trylock).
func (d *Dentry[I]) TryLock(t *kernel.Task) bool { return d.lockref.tryLock(t, d.watch.Load()) }

// Unlock releases d_lock.
func (d *Dentry[I]) Unlock() { d.lockref.Unlock() }

// Watch marks (or unmarks) the dentry so that atomic operations on its
// lockref are also counted as "lockref_rmw_watched": the way a benchmark
// counts the operations on one shared directory's dentry.
func (d *Dentry[I]) Watch(on bool) { d.watch.Store(on) }

// Watched reports whether Watch marked the dentry.
func (d *Dentry[I]) Watched() bool { return d.watch.Load() }

// SetFlags sets bits in d_flags under d_lock.
func (d *Dentry[I]) SetFlags(t *kernel.Task, f Flags) {
	d.Lock(t)
	d.flags.Store(d.flags.Load() | uint32(f))
	d.Unlock()
}

// ClearFlags clears bits in d_flags under d_lock.
func (d *Dentry[I]) ClearFlags(t *kernel.Task, f Flags) {
	d.Lock(t)
	d.flags.Store(d.flags.Load() &^ uint32(f))
	d.Unlock()
}

// setFlagsLocked and clearFlagsLocked change d_flags; the caller holds
// d_lock.
func (d *Dentry[I]) setFlagsLocked(f Flags)   { d.flags.Store(d.flags.Load() | uint32(f)) }
func (d *Dentry[I]) clearFlagsLocked(f Flags) { d.flags.Store(d.flags.Load() &^ uint32(f)) }

// IsRoot reports IS_ROOT: the dentry is its own parent.
func (d *Dentry[I]) IsRoot() bool { return d.parent.Load() == d }

// Unhashed reports d_unhashed: the dentry is not in the hash table, so
// lookups cannot find it.
func (d *Dentry[I]) Unhashed() bool { return d.hashPprev.Load() == nil }

// IsNegative reports d_is_negative (d_is_miss): no inode.
func (d *Dentry[I]) IsNegative() bool { return d.Flags().Type() == MissType }

// IsPositive reports d_is_positive.
func (d *Dentry[I]) IsPositive() bool { return !d.IsNegative() }

// IsDir reports d_is_dir: a directory (or automount directory).
func (d *Dentry[I]) IsDir() bool {
	t := d.Flags().Type()
	return t == DirectoryType || t == AutodirType
}

// IsReg reports d_is_reg.
func (d *Dentry[I]) IsReg() bool { return d.Flags().Type() == RegularType }

// IsSymlink reports d_is_symlink.
func (d *Dentry[I]) IsSymlink() bool { return d.Flags().Type() == SymlinkType }

// IsNokeyName reports the DCACHE_NOKEY_NAME flag (fscrypt_is_nokey_name).
func (d *Dentry[I]) IsNokeyName() bool { return d.Flags()&NokeyName != 0 }

// Poisoned reports whether the dentry was freed and its RCU grace period
// has ended: any further access is a use-after-free.
func (d *Dentry[I]) Poisoned() bool { return d.poison.Load() != 0 || d.rcu.Done() }
