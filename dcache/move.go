package dcache

import "github.com/vfslab/vfslab/kernel"

// dAncestor is d_ancestor: if p1 is an ancestor of p2, the child of p1
// on the way to p2 (p2 itself if p1 is its parent); nil otherwise. The
// caller holds the rename_lock.
func dAncestor[I any](p1, p2 *Dentry[I]) *Dentry[I] {
	for p := p2; !p.IsRoot(); {
		parent := p.parent.Load()
		if parent == p1 {
			return p
		}
		p = parent
	}
	return nil
}

// IsSubdir reports whether d is p or a descendant of p (is_subdir).
func IsSubdir[I any](d, p *Dentry[I]) bool {
	if d == p {
		return true
	}
	c := d.cache
	for {
		seq := c.renameLock.ReadBegin()
		r := false
		for q := d; ; {
			if q == p {
				r = true
				break
			}
			parent := q.parent.Load()
			if parent == q {
				break
			}
			q = parent
		}
		if !c.renameLock.ReadRetry(seq) {
			return r
		}
	}
}

// copyName is copy_name: d takes target's name. An external name is shared
// (its count goes up); an inline name record is pointed at, which the
// model can do because records are never written once published. d's old
// external name loses a reference.
func copyName[I any](t *kernel.Task, d, target *Dentry[I]) {
	old := d.name.Load()
	n := target.name.Load()
	if n.ext != nil {
		n.ext.count.Add(1)
	}
	d.name.Store(n)
	dropExtName(t, old)
}

// swapNames is swap_names: the two dentries exchange names.
func swapNames[I any](d, target *Dentry[I]) {
	a, b := d.name.Load(), target.name.Load()
	d.name.Store(b)
	target.name.Store(a)
}

// dMove is __d_move: d takes target's place in the tree (target's parent
// and name), or with exchange the two swap places. Both d_seq counts are
// in write sections while parents and names change, so that an RCU-walk
// that read either dentry before fails its validation. Without exchange
// the parent reference moves: the new parent gains one and the old parent
// loses one; target stays a child of its parent, unhashed, for the caller
// to put. The caller holds the rename_lock.
func (c *Cache[I]) dMove(t *kernel.Task, d, target *Dentry[I], exchange bool) {
	if d.inode.Load() == nil {
		t.WarnOn(true, "d_move of a negative dentry")
	}
	if d == target {
		t.WarnOn(true, "d_move onto itself")
		return
	}
	kernel.BUGOn(dAncestor(target, d) != nil, "d_move: target is an ancestor of the dentry")
	oldParent := d.parent.Load()
	newParent := target.parent.Load()
	p := dAncestor(oldParent, target)
	switch {
	case d.IsRoot():
		kernel.BUGOn(p != nil, "d_move: root dentry with an ancestor relation")
		newParent.Lock(t)
	case p == nil:
		// target is not a descendant of d's parent.
		newParent.Lock(t)
		oldParent.Lock(t)
	default:
		kernel.BUGOn(p == d, "d_move: dentry is an ancestor of the target")
		oldParent.Lock(t)
		if p != target {
			newParent.Lock(t)
		}
	}
	d.Lock(t)
	target.Lock(t)

	d.seq.WriteBegin()
	target.seq.WriteBegin()

	// Unhash both.
	if !d.Unhashed() {
		c.unhashLocked(d)
	}
	if !target.Unhashed() {
		c.unhashLocked(target)
	}

	// Switch them in the tree.
	d.parent.Store(newParent)
	if !exchange {
		copyName(t, d, target)
		target.hashPprev.Store(nil)
		newParent.lockref.setCountLocked(newParent.lockref.CountLocked() + 1)
		if d != oldParent { // d was not a root
			n := oldParent.lockref.CountLocked() - 1
			oldParent.lockref.setCountLocked(n)
			if n <= 0 {
				t.WarnOn(true, "d_move: old parent lost its last reference")
			}
		}
	} else {
		target.parent.Store(oldParent)
		swapNames(d, target)
		target.unlinkChild()
		oldParent.linkChild(target)
		c.rehash(target)
	}
	d.unlinkChild()
	newParent.linkChild(d)
	c.rehash(d)
	// fscrypt_handle_d_move: a no-key alias moved to its plaintext name.
	d.clearFlagsLocked(NokeyName)

	target.seq.WriteEnd()
	d.seq.WriteEnd()

	if newParent != oldParent {
		newParent.Unlock()
	}
	if d != oldParent {
		oldParent.Unlock()
	}
	target.Unlock()
	d.Unlock()
}

// DMove moves d to target's place (d_move), under the rename_lock: what
// rename does once the filesystem has moved the entry. target is usually
// the negative dentry the new name was looked up as; afterwards it is
// unhashed and the caller puts it.
func DMove[I any](t *kernel.Task, d, target *Dentry[I]) {
	c := d.cache
	c.renameLock.WriteLock()
	defer c.renameLock.WriteUnlock()
	c.dMove(t, d, target, false)
}

// DExchange swaps two positive dentries (d_exchange), for
// RENAME_EXCHANGE.
func DExchange[I any](t *kernel.Task, d1, d2 *Dentry[I]) {
	c := d1.cache
	c.renameLock.WriteLock()
	defer c.renameLock.WriteUnlock()
	t.WarnOn(d1.inode.Load() == nil, "d_exchange: negative dentry")
	t.WarnOn(d2.inode.Load() == nil, "d_exchange: negative dentry")
	t.WarnOn(d1.IsRoot(), "d_exchange: root dentry")
	t.WarnOn(d2.IsRoot(), "d_exchange: root dentry")
	c.dMove(t, d1, d2, true)
}
