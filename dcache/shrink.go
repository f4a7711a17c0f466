package dcache

import (
	"runtime"

	"github.com/vfslab/vfslab/kernel"
)

// DisposeList is a shrinker's private list of dentries to kill (the
// LIST_HEAD(dispose) of fs/dcache.c). Dentries on it carry ShrinkList, so
// that a task that kills one meanwhile leaves freeing it to the list's
// owner.
type DisposeList[I any] struct {
	items []*Dentry[I]
}

// Len returns the number of dentries on the list.
func (l *DisposeList[I]) Len() int { return len(l.items) }

// shrinkAdd is d_shrink_add. The caller holds d_lock; d is on no list.
func (c *Cache[I]) shrinkAdd(d *Dentry[I], l *DisposeList[I]) {
	d.setFlagsLocked(ShrinkList | LRUList)
	c.nrUnused.Add(1)
	l.items = append(l.items, d)
}

// shrinkDel is d_shrink_del: the dentry leaves the dispose list (which its
// owner pops). The caller holds d_lock.
func (c *Cache[I]) shrinkDel(d *Dentry[I]) {
	d.clearFlagsLocked(ShrinkList | LRUList)
	c.nrUnused.Add(-1)
}

// toShrinkList is to_shrink_list: move an unused dentry from the LRU (if it
// is there) to l. The caller holds d_lock.
func (c *Cache[I]) toShrinkList(d *Dentry[I], l *DisposeList[I]) {
	f := d.Flags()
	if f&ShrinkList != 0 {
		return
	}
	if f&LRUList != 0 {
		c.lruDel(d)
	}
	c.shrinkAdd(d, l)
}

// ShrinkDentryList kills the dentries of a dispose list (shrink_dentry_list),
// and the ancestors whose last reference that drops: a shrinker prunes
// whole unused branches instead of leaving their parents to a later pass.
// A dentry that gained a reference since it was listed is skipped; one
// that another task killed meanwhile is freed here.
func ShrinkDentryList[I any](t *kernel.Task, c *Cache[I], l *DisposeList[I]) {
	for len(l.items) > 0 {
		d := l.items[len(l.items)-1]
		l.items[len(l.items)-1] = nil
		l.items = l.items[:len(l.items)-1]
		d.Lock(t)
		t.RCU.ReadLock()
		if !c.lockForKill(t, d) {
			t.RCU.ReadUnlock()
			c.shrinkDel(d)
			canFree := d.Flags()&DentryKilled != 0
			d.Unlock()
			if canFree {
				c.dentryFree(t, d)
			}
			continue
		}
		c.shrinkDel(d)
		c.shrinkKill(t, d)
	}
}

// shrinkKill is shrink_kill: kill the victim and every ancestor whose count
// that brings to zero. Entered inside an RCU section, with the victim
// locked for killing.
func (c *Cache[I]) shrinkKill(t *kernel.Task, victim *Dentry[I]) {
	for {
		t.RCU.ReadUnlock()
		victim = c.dentryKill(t, victim)
		t.RCU.ReadLock()
		if victim == nil || !c.lockForKill(t, victim) {
			break
		}
	}
	t.RCU.ReadUnlock()
	if victim != nil {
		victim.Unlock()
	}
}

// lruStatus is enum lru_status.
type lruStatus int

const (
	lruRemoved lruStatus = iota
	lruRotate
	lruSkip
)

// lruIsolate is dentry_lru_isolate. The caller holds the LRU lock; d_lock
// is only tried, since the usual order is d_lock then the LRU lock.
func (c *Cache[I]) lruIsolate(t *kernel.Task, d *Dentry[I], l *DisposeList[I]) lruStatus {
	if !d.TryLock(t) {
		return lruSkip
	}
	defer d.Unlock()
	if d.lockref.CountLocked() != 0 {
		// In use: lookups do not take dentries off the LRU, the shrinker
		// does it lazily (d_lru_isolate).
		d.clearFlagsLocked(LRUList)
		c.nrUnused.Add(-1)
		if d.inode.Load() == nil {
			c.nrNegative.Add(-1)
		}
		c.lruUnlink(d)
		return lruRemoved
	}
	if d.Flags()&Referenced != 0 {
		d.clearFlagsLocked(Referenced)
		return lruRotate
	}
	// d_lru_shrink_move: from the LRU to the dispose list; it stays counted
	// as unused but no longer as a negative dentry on the LRU.
	d.setFlagsLocked(ShrinkList)
	if d.inode.Load() == nil {
		c.nrNegative.Add(-1)
	}
	c.lruUnlink(d)
	l.items = append(l.items, d)
	return lruRemoved
}

// PruneDcache scans up to nrToScan dentries from the cold end of the LRU
// (prune_dcache_sb, list_lru_shrink_walk with dentry_lru_isolate): in-use
// dentries are dropped from the LRU, referenced ones lose the flag and go
// back to the warm end, the others are killed. It returns the number of
// dentries taken off the LRU to be killed.
func PruneDcache[I any](t *kernel.Task, c *Cache[I], nrToScan int) int {
	var l DisposeList[I]
	c.lruMu.Lock()
	for d := c.lruHead; d != nil && nrToScan > 0; nrToScan-- {
		next := d.lruNext
		switch c.lruIsolate(t, d, &l) {
		case lruRotate:
			c.lruUnlink(d)
			c.lruLinkTail(d)
		}
		d = next
	}
	c.lruMu.Unlock()
	n := len(l.items)
	t.Add(EvDcachePrune, uint64(n))
	ShrinkDentryList(t, c, &l)
	return n
}

// maybePrune trims the LRU back to the cache's bound, if it is over it, in
// the context of the task whose dput put it over (a stand-in for the
// superblock shrinker that memory pressure would run). One task prunes at
// a time; the others go on.
func (c *Cache[I]) maybePrune(t *kernel.Task) {
	max := c.maxUnused.Load()
	if max < 0 || c.lruLen.Load() <= max {
		return
	}
	if !c.pruning.CompareAndSwap(false, true) {
		return
	}
	defer c.pruning.Store(false)
	// Referenced dentries get a second chance; a few passes free them.
	for pass := 0; pass < 4; pass++ {
		excess := c.lruLen.Load() - max
		if excess <= 0 {
			return
		}
		PruneDcache(t, c, int(excess))
	}
}

// ShrinkDcacheSB kills every unused dentry on the LRU (shrink_dcache_sb),
// as at unmount.
func ShrinkDcacheSB[I any](t *kernel.Task, c *Cache[I]) {
	for {
		var l DisposeList[I]
		c.lruMu.Lock()
		for d := c.lruHead; d != nil; {
			next := d.lruNext
			if d.TryLock(t) {
				// dentry_lru_isolate_shrink: move it whatever its state;
				// shrink_dentry_list skips the ones in use.
				d.setFlagsLocked(ShrinkList)
				if d.inode.Load() == nil {
					c.nrNegative.Add(-1)
				}
				c.lruUnlink(d)
				l.items = append(l.items, d)
				d.Unlock()
			}
			d = next
		}
		left := c.lruLen.Load()
		c.lruMu.Unlock()
		ShrinkDentryList(t, c, &l)
		if left == 0 {
			return
		}
		runtime.Gosched()
	}
}

// dWalk visits every descendant of parent, parent first (d_walk), calling
// enter on each with its d_lock held (and its parent's) until enter
// returns false. It holds the rename_lock's lock, so nothing moves, and an
// RCU read-side section, so nothing it saw is freed while it walks.
func (c *Cache[I]) dWalk(t *kernel.Task, parent *Dentry[I], enter func(d *Dentry[I]) bool) {
	c.renameLock.LockExcl()
	defer c.renameLock.UnlockExcl()
	t.RCU.ReadLock()
	defer t.RCU.ReadUnlock()
	parent.Lock(t)
	goOn := enter(parent)
	parent.Unlock()
	if !goOn {
		return
	}
	stack := []*Dentry[I]{parent}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		p.Lock(t)
		if p.Flags()&DentryKilled != 0 {
			p.Unlock()
			continue
		}
		for d := p.children; d != nil; d = d.sibNext {
			d.Lock(t)
			goOn = enter(d)
			if d.children != nil {
				stack = append(stack, d)
			}
			d.Unlock()
			if !goOn {
				p.Unlock()
				return
			}
		}
		p.Unlock()
	}
}

// ShrinkDcacheParent kills every unused dentry below parent
// (shrink_dcache_parent): it collects them on dispose lists and shrinks
// those until nothing below parent is unused or being killed by another
// task. Dentries in use stay.
func ShrinkDcacheParent[I any](t *kernel.Task, parent *Dentry[I]) {
	c := parent.cache
	for {
		var l DisposeList[I]
		found := 0
		c.dWalk(t, parent, func(d *Dentry[I]) bool {
			if d == parent {
				return true
			}
			switch n := d.lockref.CountLocked(); {
			case d.Flags()&ShrinkList != 0:
				found++
			case n == 0:
				c.toShrinkList(d, &l)
				found++
			case n < 0:
				found++
			}
			return true
		})
		if len(l.items) > 0 {
			ShrinkDentryList(t, c, &l)
			continue
		}
		if found == 0 {
			return
		}
		// Others are killing what remains; let them finish.
		runtime.Gosched()
	}
}

// DInvalidate unhashes d and, if it is positive, kills the unused dentries
// below it (d_invalidate), as when a directory turned out to be stale. The
// model has no mounts to detach.
func DInvalidate[I any](t *kernel.Task, d *Dentry[I]) {
	d.Lock(t)
	if d.Unhashed() {
		d.Unlock()
		return
	}
	d.cache.dropLocked(d)
	d.Unlock()
	if d.inode.Load() == nil {
		return
	}
	ShrinkDcacheParent(t, d)
}
