package dcache

import (
	"strconv"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// dAlloc is __d_alloc: a new dentry with one reference, no parent (it is
// its own), no inode, unhashed, named name. Errors: ENOMEM when the slab
// or the external name allocation fails.
func (c *Cache[I]) dAlloc(t *kernel.Task, sb any, name Qstr) (*Dentry[I], error) {
	if err := dentryCache.Alloc(&t.Ctx, kmem.GFPKernel); err != nil {
		return nil, err
	}
	d := new(Dentry[I])
	n := len(name.Name)
	hl := HashlenCreate(name.Hash, uint32(n))
	if n < DnameInlineLen {
		copy(d.ibuf[:], name.Name)
		d.iname = dname{hashLen: hl, ptr: &d.ibuf[0]}
		d.name.Store(&d.iname)
	} else {
		buf, err := t.Kmalloc(siteExtName, extNameHeader+n+1, kmem.GFPKernel)
		if err != nil {
			dentryCache.Free(&t.Ctx)
			return nil, err
		}
		copy(buf[extNameHeader:], name.Name)
		e := &extName{buf: buf}
		e.rec = dname{hashLen: hl, ptr: &buf[extNameHeader], ext: e}
		e.count.Store(1)
		d.name.Store(&e.rec)
	}
	d.lockref.w.Store(lrPack(1, 0))
	d.parent.Store(d)
	d.cache = c
	d.sb = sb
	c.nrDentry.Add(1)
	return d, nil
}

// DAlloc allocates a dentry named name (whose Hash the caller computed, as
// with MakeQstr or DHash) as a child of parent (d_alloc). The new dentry
// has one reference, no inode and is unhashed; it holds a reference on
// parent and inherits its superblock and operations: d_alloc sets
// sb->s_d_op, and the model keeps the superblock's operations on every
// dentry, so the parent's are the superblock's. The DCACHE_OP_* flags are
// derived from the operations, as d_set_d_op does, never copied from the
// parent (whose own flags may have been cleared, e.g. by
// fscrypt_prepare_dentry). Errors: ENOMEM.
func DAlloc[I any](t *kernel.Task, parent *Dentry[I], name Qstr) (*Dentry[I], error) {
	defer t.Trace("d_alloc")()
	d, err := parent.cache.dAlloc(t, parent.sb, name)
	if err != nil {
		return nil, err
	}
	if op := parent.op; op != nil {
		d.op = op
		d.flags.Store(uint32(dOpFlags(op)))
	}
	parent.Lock(t)
	// dget_dlock: the parent is locked and referenced by the caller.
	parent.lockref.setCountLocked(parent.lockref.CountLocked() + 1)
	d.parent.Store(parent)
	parent.linkChild(d)
	parent.Unlock()
	return d, nil
}

// DAllocName is d_alloc_name: DAlloc with the name hashed by hashlen_string
// salted with parent (no d_hash).
func DAllocName[I any](t *kernel.Task, parent *Dentry[I], name string) (*Dentry[I], error) {
	hl := HashlenString(parent.Salt(), name)
	return DAlloc(t, parent, Qstr{Hash: HashlenHash(hl), Name: name[:HashlenLen(hl)]})
}

// DMakeRoot makes the root dentry of a superblock (d_make_root): named
// "/", its own parent, instantiated with inode, with one reference (the
// superblock's s_root). op becomes the operations of every dentry below
// it (sb->s_d_op). Errors: ENOMEM (the caller keeps its inode reference).
func DMakeRoot[I any](t *kernel.Task, c *Cache[I], inode *I, sb any, op *Operations[I]) (*Dentry[I], error) {
	if inode == nil {
		return nil, errno.ENOMEM
	}
	d, err := c.dAlloc(t, sb, Qstr{Name: "/"})
	if err != nil {
		return nil, err
	}
	if op != nil {
		DSetDOp(t, d, op)
	}
	DInstantiate(t, d, inode)
	return d, nil
}

// DAllocAnon makes a disconnected anonymous root (d_alloc_anon): named
// "/", its own parent, flagged Disconnected, not hashed.
func DAllocAnon[I any](t *kernel.Task, c *Cache[I], sb any, op *Operations[I]) (*Dentry[I], error) {
	d, err := c.dAlloc(t, sb, Qstr{Name: "/"})
	if err != nil {
		return nil, err
	}
	if op != nil {
		DSetDOp(t, d, op)
	}
	d.flags.Store(d.flags.Load() | uint32(Disconnected))
	return d, nil
}

// linkChild adds d to p's children (hlist_add_head(&d->d_sib,
// &p->d_children)). The caller holds p's d_lock.
func (p *Dentry[I]) linkChild(d *Dentry[I]) {
	d.sibNext = p.children
	if p.children != nil {
		p.children.sibPprev = &d.sibNext
	}
	p.children = d
	d.sibPprev = &p.children
}

// unlinkChild removes d from its parent's children (__hlist_del of d_sib).
// The caller holds the parent's d_lock.
func (d *Dentry[I]) unlinkChild() {
	if d.sibPprev == nil {
		return
	}
	*d.sibPprev = d.sibNext
	if d.sibNext != nil {
		d.sibNext.sibPprev = d.sibPprev
	}
	d.sibNext, d.sibPprev = nil, nil
}

// setInodeAndType is __d_set_inode_and_type inside a d_seq write section.
// The caller holds d_lock.
func (c *Cache[I]) setInodeAndType(d *Dentry[I], inode *I) {
	f := Flags(d.flags.Load())
	if f&(LRUList|ShrinkList) == LRUList {
		c.nrNegative.Add(-1)
	}
	d.seq.WriteBegin()
	d.inode.Store(inode)
	d.flags.Store(uint32(f&^typeAndFallthru | c.typeFor(inode)))
	d.seq.WriteEnd()
}

// addAlias links d into the inode's alias list. The caller holds i_lock
// and d_lock.
func (a *Aliases[I]) addAlias(d *Dentry[I]) {
	d.aliasNext = a.first
	if a.first != nil {
		a.first.aliasPrev = &d.aliasNext
	}
	a.first = d
	d.aliasPrev = &a.first
}

// delAlias unlinks d from its inode's alias list (hlist_del_init).
func (d *Dentry[I]) delAlias() {
	if d.aliasPrev == nil {
		return
	}
	*d.aliasPrev = d.aliasNext
	if d.aliasNext != nil {
		d.aliasNext.aliasPrev = d.aliasPrev
	}
	d.aliasNext, d.aliasPrev = nil, nil
}

// instantiateLocked is __d_instantiate without taking i_lock.
func (c *Cache[I]) instantiateLocked(t *kernel.Task, d *Dentry[I], inode *I, al *Aliases[I]) {
	d.Lock(t)
	kernel.BUGOn(d.inode.Load() != nil, "d_instantiate: dentry is already positive")
	if al != nil {
		al.addAlias(d)
	}
	c.setInodeAndType(d, inode)
	d.Unlock()
}

// DInstantiate attaches inode to the negative dentry d (d_instantiate): the
// dentry takes over the caller's inode reference, and gets the type bits
// of InodeOps.Type. It does not hash d. A nil inode does nothing.
func DInstantiate[I any](t *kernel.Task, d *Dentry[I], inode *I) {
	if inode == nil {
		return
	}
	c := d.cache
	al := c.aliases(inode)
	if al != nil {
		al.Lock()
	}
	c.instantiateLocked(t, d, inode, al)
	if al != nil {
		al.Unlock()
	}
}

// DAdd instantiates d with inode (nil: a negative dentry) and hashes it,
// making it visible to lookups (d_add).
func DAdd[I any](t *kernel.Task, d *Dentry[I], inode *I) {
	c := d.cache
	al := c.aliases(inode)
	if al != nil {
		al.Lock()
	}
	d.Lock(t)
	if inode != nil {
		kernel.BUGOn(d.inode.Load() != nil, "d_add: dentry is already positive")
		if al != nil {
			al.addAlias(d)
		}
		c.setInodeAndType(d, inode)
	}
	c.rehash(d)
	d.Unlock()
	if al != nil {
		al.Unlock()
	}
}

// DRehash hashes an unhashed dentry again (d_rehash).
func DRehash[I any](t *kernel.Task, d *Dentry[I]) {
	d.Lock(t)
	if d.Unhashed() {
		d.cache.rehash(d)
	}
	d.Unlock()
}

// findAnyAlias is __d_find_any_alias: the first alias of the inode, with a
// reference. The caller holds i_lock.
func (a *Aliases[I]) findAnyAlias(t *kernel.Task) *Dentry[I] {
	d := a.first
	if d == nil {
		return nil
	}
	d.lockref.get(t, d.watch.Load())
	t.Inc(EvDget)
	return d
}

// DFindAnyAlias returns some dentry of inode with a reference, or nil
// (d_find_any_alias).
func DFindAnyAlias[I any](t *kernel.Task, c *Cache[I], inode *I) *Dentry[I] {
	al := c.aliases(inode)
	if al == nil {
		return nil
	}
	al.Lock()
	defer al.Unlock()
	return al.findAnyAlias(t)
}

// DFindAlias returns a hashed dentry of inode (or, for a directory, any
// dentry), preferring connected ones, with a reference; nil if none
// (d_find_alias).
func DFindAlias[I any](t *kernel.Task, c *Cache[I], inode *I) *Dentry[I] {
	al := c.aliases(inode)
	if al == nil {
		return nil
	}
	al.Lock()
	defer al.Unlock()
	var discon *Dentry[I]
	for d := al.first; d != nil; d = d.aliasNext {
		d.Lock(t)
		if d.IsDir() || !d.Unhashed() {
			if d.IsRoot() && d.Flags()&Disconnected != 0 {
				discon = d
			} else {
				d.lockref.setCountLocked(d.lockref.CountLocked() + 1)
				d.Unlock()
				t.Inc(EvDget)
				return d
			}
		}
		d.Unlock()
	}
	if discon != nil {
		discon.Lock(t)
		discon.lockref.setCountLocked(discon.lockref.CountLocked() + 1)
		discon.Unlock()
		t.Inc(EvDget)
	}
	return discon
}

// DSpliceAlias connects an inode that a filesystem's lookup found to the
// unhashed dentry the lookup was called with (d_splice_alias). A nil inode
// makes d a hashed negative dentry. For a directory that already has a
// dentry elsewhere (a disconnected root, or a stale name such as a no-key
// name replaced once the key was added), that alias is moved to d's place
// and returned with a reference, the inode reference being dropped; the
// caller then uses it instead of d. Otherwise d is instantiated and
// hashed and DSpliceAlias returns nil. Errors: ELOOP when the alias is an
// ancestor of d.
//
// The kernel's __d_unalias also trylocks s_vfs_rename_mutex and the old
// parent's i_rwsem (failing with ESTALE); those locks belong to the VFS
// and are not modelled here.
func DSpliceAlias[I any](t *kernel.Task, inode *I, d *Dentry[I]) (*Dentry[I], error) {
	defer t.Trace("d_splice_alias")()
	kernel.BUGOn(!d.Unhashed(), "d_splice_alias: dentry is hashed")
	c := d.cache
	if inode != nil && isDirType(c.typeFor(inode)) {
		if al := c.aliases(inode); al != nil {
			al.Lock()
			alias := al.findAnyAlias(t)
			al.Unlock()
			if alias != nil {
				c.renameLock.WriteLock()
				if dAncestor(alias, d) != nil {
					c.renameLock.WriteUnlock()
					Dput(t, alias)
					t.Printk("VFS: Lookup of '%s' in %v would have caused loop", d.Name().Name, c.inodes.inoString(d.parent.Load().inode.Load()))
					return nil, errno.ELOOP
				}
				c.dMove(t, alias, d, false)
				c.renameLock.WriteUnlock()
				if c.inodes.Iput != nil {
					c.inodes.Iput(t, inode)
				}
				return alias, nil
			}
		}
	}
	DAdd(t, d, inode)
	return nil, nil
}

// isDirType reports whether an entry type is a directory (d_is_dir).
func isDirType(f Flags) bool { return f == DirectoryType || f == AutodirType }

// Dget takes a reference on d (dget) and returns it; nil stays nil.
func Dget[I any](t *kernel.Task, d *Dentry[I]) *Dentry[I] {
	if d != nil {
		d.lockref.get(t, d.watch.Load())
		t.Inc(EvDget)
	}
	return d
}

// DgetDlock takes a reference on d whose d_lock the caller holds
// (dget_dlock).
func DgetDlock[I any](t *kernel.Task, d *Dentry[I]) *Dentry[I] {
	d.lockref.setCountLocked(d.lockref.CountLocked() + 1)
	t.Inc(EvDget)
	return d
}

// DgetNotDead takes a reference on a dentry found without one, unless it
// is being killed (lockref_get_not_dead): how RCU-walk makes its dentries
// referenced (legitimize_path). The caller validates d_seq afterwards.
func DgetNotDead[I any](t *kernel.Task, d *Dentry[I]) bool {
	if d.lockref.getNotDead(t, d.watch.Load()) {
		t.Inc(EvDget)
		return true
	}
	return false
}

// DgetParent returns d's parent with a reference (dget_parent). The fast
// path reads d_parent inside an RCU section between a d_seq read and a
// d_seq recheck and takes the reference with lockref_get_not_zero: one
// cmpxchg on the parent's lockref when nobody holds its lock. If d was
// renamed meanwhile it drops that reference and takes the slow path: lock
// the parent it reads, check that it is still d's parent, and increment
// the count under the lock.
func DgetParent[I any](t *kernel.Task, d *Dentry[I]) *Dentry[I] {
	t.Inc(EvDget)
	t.RCU.ReadLock()
	seq := d.seq.RawBegin()
	ret := d.parent.Load()
	if ret.cache.debug.Load() != int32(DebugOff) {
		ret.cache.checkRCUSlow(t, ret, "d_parent")
	}
	gotref := ret.lockref.getNotZero(t, ret.watch.Load())
	t.RCU.ReadUnlock()
	if gotref {
		if !d.seq.Retry(seq) {
			return ret
		}
		Dput(t, ret)
	}
	for {
		t.RCU.ReadLock()
		ret = d.parent.Load()
		ret.Lock(t)
		if ret != d.parent.Load() {
			ret.Unlock()
			t.RCU.ReadUnlock()
			continue
		}
		t.RCU.ReadUnlock()
		n := ret.lockref.CountLocked()
		if n <= 0 {
			ret.Unlock()
			kernel.BUG("dget_parent: parent has no reference")
		}
		ret.lockref.setCountLocked(n + 1)
		ret.Unlock()
		return ret
	}
}

// retainDentry is retain_dentry: whether a dentry whose count reached 0
// stays cached. Without the lock it can only say yes when nothing needs
// doing (hashed, on the LRU, already referenced); with d_lock held it puts
// the dentry on the LRU (added is then true) or marks it referenced.
func (c *Cache[I]) retainDentry(d *Dentry[I], locked bool) (keep, added bool) {
	f := Flags(d.flags.Load())
	if d.Unhashed() {
		return false, false
	}
	if f&Disconnected != 0 {
		return false, false
	}
	if f&OpDelete != 0 {
		if !locked || d.op.Delete(d) {
			return false, false
		}
	}
	if f&DontCache != 0 {
		return false, false
	}
	if f&LRUList == 0 {
		if !locked {
			return false, false
		}
		c.lruAdd(d)
		return true, true
	} else if f&Referenced == 0 {
		if !locked {
			return false, false
		}
		d.setFlagsLocked(Referenced)
	}
	return true, false
}

// fastDput is fast_dput: drop the reference locklessly when that is all
// there is to do. It returns false with d_lock held and the count at zero
// when the dentry must be killed. The caller is inside an RCU section, so
// d stays allocated even if another task kills it once the count is 0.
// added reports that the dentry went onto the LRU.
func (c *Cache[I]) fastDput(t *kernel.Task, d *Dentry[I]) (done, added bool) {
	watched := d.watch.Load()
	ret := d.lockref.putReturn(t, watched)
	if ret < 0 {
		d.lockref.lock(t, watched)
		n := d.lockref.CountLocked()
		if n <= 0 {
			d.Unlock()
			t.WarnOn(true, "dput: dentry \""+d.name.Load().str()+"\" has no reference")
			return true, false
		}
		d.lockref.setCountLocked(n - 1)
	} else {
		if ret > 0 {
			return true, false
		}
		if keep, _ := c.retainDentry(d, false); keep {
			return true, false
		}
		d.lockref.lock(t, watched)
	}
	if d.lockref.CountLocked() != 0 {
		d.Unlock()
		return true, false
	}
	if keep, added := c.retainDentry(d, true); keep {
		d.Unlock()
		return true, added
	}
	return false, false
}

// lockForKill is lock_for_kill: with d_lock held and the count at zero,
// take the inode's i_lock too (dropping and retaking d_lock if the
// trylock fails) and check that the count is still zero. It returns false,
// with only d_lock held, if the dentry gained a reference meanwhile.
func (c *Cache[I]) lockForKill(t *kernel.Task, d *Dentry[I]) bool {
	if d.lockref.CountLocked() != 0 {
		return false
	}
	inode := d.inode.Load()
	al := c.aliases(inode)
	if al == nil || al.TryLock() {
		return true
	}
	for {
		d.Unlock()
		al.Lock()
		d.Lock(t)
		if d.inode.Load() == inode {
			break
		}
		al.Unlock()
		inode = d.inode.Load()
		al = c.aliases(inode)
		if al == nil {
			break
		}
	}
	if d.lockref.CountLocked() == 0 {
		return true
	}
	if al != nil {
		al.Unlock()
	}
	return false
}

// Dput drops a reference to d (dput); nil does nothing. The last reference
// to a hashed dentry leaves it cached on the LRU; the last reference to an
// unhashed one kills it, which drops its reference on its parent, which
// may kill the parent in turn, up the tree (the dput loop). If the LRU
// grew past the cache's bound, the task then prunes it.
//
// Like the kernel's (might_sleep), Dput must not be called inside an RCU
// read-side section: killing a dentry calls InodeOps.Iput, which may wait
// for a grace period.
func Dput[I any](t *kernel.Task, d *Dentry[I]) {
	if d == nil {
		return
	}
	t.Inc(EvDput)
	c := d.cache
	t.RCU.ReadLock()
	if done, added := c.fastDput(t, d); done {
		t.RCU.ReadUnlock()
		if added {
			c.maybePrune(t)
		}
		return
	}
	for c.lockForKill(t, d) {
		t.RCU.ReadUnlock()
		d = c.dentryKill(t, d)
		if d == nil {
			return
		}
		if keep, added := c.retainDentry(d, true); keep {
			d.Unlock()
			if added {
				c.maybePrune(t)
			}
			return
		}
		t.RCU.ReadLock()
	}
	t.RCU.ReadUnlock()
	d.Unlock()
}

// dentryUnlinkInode is dentry_unlink_inode: make d negative. The caller
// holds d_lock and the inode's i_lock; both are released, then the
// dentry's inode reference is dropped.
func (c *Cache[I]) dentryUnlinkInode(t *kernel.Task, d *Dentry[I]) {
	inode := d.inode.Load()
	al := c.aliases(inode)
	f := Flags(d.flags.Load())
	d.seq.WriteBegin()
	d.flags.Store(uint32(f &^ typeAndFallthru))
	d.inode.Store(nil)
	if f&(LRUList|ShrinkList) == LRUList {
		c.nrNegative.Add(1)
	}
	d.delAlias()
	d.seq.WriteEnd()
	d.Unlock()
	if al != nil {
		al.Unlock()
	}
	if c.inodes.Iput != nil {
		c.inodes.Iput(t, inode)
	}
}

// dropLocked is __d_drop: unhash d and invalidate its d_seq so that RCU
// walkers that found it fail their validation. The caller holds d_lock.
func (c *Cache[I]) dropLocked(d *Dentry[I]) {
	if d.Unhashed() {
		return
	}
	if !d.IsRoot() {
		c.unhashLocked(d)
	}
	d.hashPprev.Store(nil)
	d.seq.Invalidate()
}

// dentryKill is __dentry_kill. The caller holds d_lock and, for a positive
// dentry, its inode's i_lock (lockForKill). The dentry is marked dead,
// taken off the LRU and the hash, made negative, detached from its parent
// and freed after an RCU grace period (unless a shrinker's dispose list
// still holds it). It returns the parent, locked, if dropping the dead
// dentry's reference brought the parent's count to zero; nil otherwise.
func (c *Cache[I]) dentryKill(t *kernel.Task, d *Dentry[I]) *Dentry[I] {
	t.Inc(EvDentryKill)
	d.lockref.MarkDead()
	f := Flags(d.flags.Load())
	if f&LRUList != 0 && f&ShrinkList == 0 {
		c.lruDel(d)
	}
	c.dropLocked(d)
	if d.inode.Load() != nil {
		c.dentryUnlinkInode(t, d)
	} else {
		d.Unlock()
	}
	c.nrDentry.Add(-1)
	if op := d.op; op != nil && op.Release != nil {
		op.Release(d)
	}
	// Now that it is negative, d_parent is stable.
	var parent *Dentry[I]
	if !d.IsRoot() {
		parent = d.parent.Load()
		parent.Lock(t)
	}
	d.Lock(t)
	d.setFlagsLocked(DentryKilled)
	d.unlinkChild()
	canFree := d.Flags()&ShrinkList == 0
	d.Unlock()
	if canFree {
		c.dentryFree(t, d)
	}
	if parent != nil {
		n := parent.lockref.CountLocked() - 1
		parent.lockref.setCountLocked(n)
		if n != 0 {
			parent.Unlock()
			return nil
		}
	}
	return parent
}

// dentryFree is dentry_free: release the external name if this was its
// last user and free the dentry after an RCU grace period (call_rcu on
// its embedded rcu_head: no allocation); the dentry is poisoned once the
// grace period has ended. The allocation is accounted as freed now, by the
// task that frees it.
func (c *Cache[I]) dentryFree(t *kernel.Task, d *Dentry[I]) {
	if d.aliasPrev != nil {
		t.WarnOn(true, "dentry_free: dentry still on its inode's alias list")
	}
	if e := d.name.Load().ext; e != nil && e.count.Add(-1) == 0 {
		t.Kfree(siteExtName, e.buf)
	}
	dentryCache.Free(&t.Ctx)
	if d.Flags()&NoRCU != 0 {
		d.poison.Store(1)
		return
	}
	t.K.RCU.CallHeadCounted(t.Ev, &d.rcu, nil)
}

// dropExtName drops a reference to an external name record.
func dropExtName(t *kernel.Task, n *dname) {
	if e := n.ext; e != nil && e.count.Add(-1) == 0 {
		t.Kfree(siteExtName, e.buf)
	}
}

// DDelete turns a positive dentry negative after its file was unlinked
// (d_delete): if the caller holds the only reference it keeps the dentry
// as a negative one, otherwise it unhashes it so that lookups no longer
// find the name while the other holders finish with it.
func DDelete[I any](t *kernel.Task, d *Dentry[I]) {
	c := d.cache
	inode := d.inode.Load()
	al := c.aliases(inode)
	if al != nil {
		al.Lock()
	}
	d.Lock(t)
	if d.lockref.CountLocked() == 1 && inode != nil {
		d.clearFlagsLocked(CantMount)
		c.dentryUnlinkInode(t, d)
		return
	}
	c.dropLocked(d)
	d.Unlock()
	if al != nil {
		al.Unlock()
	}
}

// DDrop unhashes d (d_drop): lookups stop finding it, and its last dput
// kills it.
func DDrop[I any](t *kernel.Task, d *Dentry[I]) {
	d.Lock(t)
	d.cache.dropLocked(d)
	d.Unlock()
}

// DDropLocked is __d_drop for a caller that holds d_lock.
func DDropLocked[I any](d *Dentry[I]) { d.cache.dropLocked(d) }

// inoString renders an inode for log lines.
func (o InodeOps[I]) inoString(inode *I) string {
	if inode == nil {
		return "negative"
	}
	if o.Ino == nil {
		return "?"
	}
	return strconv.FormatUint(o.Ino(inode), 10)
}
