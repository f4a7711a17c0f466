package dcache

import "github.com/vfslab/vfslab/kernel"

// DLookupRCU is __d_lookup_rcu: the RCU-walk hash lookup of name (with its
// hash already computed, d_hash applied) among parent's children. It makes
// no stores to shared memory and takes no reference: it returns the dentry
// found and the d_seq value read before its parent and name were checked,
// which the caller must validate with d.Seq().Retry(seq) after reading
// whatever else it needs from the dentry (its inode, its flags). A nil
// result can be a spurious miss caused by a concurrent rename; the path
// walk then falls back to DLookup, which retries under the rename_lock.
//
// The caller must be inside an RCU read-side section. When the directory
// has a d_compare, the name and length are read together and checked
// against d_seq before the comparison, and unhashed dentries are skipped
// (__d_lookup_rcu_op_compare).
func DLookupRCU[I any](t *kernel.Task, parent *Dentry[I], name *Qstr) (*Dentry[I], uint32) {
	t.Inc(EvDLookupRCU)
	c := parent.cache
	if parent.Flags()&OpCompare != 0 {
		return c.lookupRCUOpCompare(t, parent, name)
	}
	hl := name.HashLen()
	debug := c.debug.Load() != int32(DebugOff)
	for d := c.dHash(name.Hash).first.Load(); d != nil; d = d.hashNext.Load() {
		if debug {
			c.checkRCUSlow(t, d, "__d_lookup_rcu")
		}
		seq := d.seq.RawBegin()
		if d.parent.Load() != parent {
			continue
		}
		n := d.name.Load()
		if n.hashLen != hl {
			continue
		}
		if n.str() != name.Name {
			continue
		}
		return d, seq
	}
	return nil, 0
}

func (c *Cache[I]) lookupRCUOpCompare(t *kernel.Task, parent *Dentry[I], name *Qstr) (*Dentry[I], uint32) {
	debug := c.debug.Load() != int32(DebugOff)
	for d := c.dHash(name.Hash).first.Load(); d != nil; d = d.hashNext.Load() {
		if debug {
			c.checkRCUSlow(t, d, "__d_lookup_rcu_op_compare")
		}
		for {
			seq := d.seq.RawBegin()
			if d.parent.Load() != parent || d.Unhashed() {
				break
			}
			n := d.name.Load()
			if n.hash() != name.Hash {
				break
			}
			str := n.str()
			// A consistent (name, len) pair: the record is immutable, but
			// whether it is still d's name is what d_seq says.
			if d.seq.Retry(seq) {
				continue
			}
			if parent.op.Compare(t, d, str, name) != 0 {
				break
			}
			return d, seq
		}
	}
	return nil, 0
}

// dSameName is d_same_name: does d (in parent) have name? The caller holds
// d_lock.
func dSameName[I any](t *kernel.Task, d, parent *Dentry[I], name *Qstr) bool {
	n := d.name.Load()
	if parent.Flags()&OpCompare == 0 {
		return n.str() == name.Name
	}
	return parent.op.Compare(t, d, n.str(), name) == 0
}

// dLookup is __d_lookup: walk the bucket under RCU, and for each dentry
// with the right hash take its d_lock, check parent, hashed state and
// name, and take the reference with the lock held.
func (c *Cache[I]) dLookup(t *kernel.Task, parent *Dentry[I], name *Qstr) *Dentry[I] {
	t.RCU.ReadLock()
	defer t.RCU.ReadUnlock()
	for d := c.dHash(name.Hash).first.Load(); d != nil; d = d.hashNext.Load() {
		if d.name.Load().hash() != name.Hash {
			continue
		}
		d.Lock(t)
		if d.parent.Load() == parent && !d.Unhashed() && dSameName(t, d, parent, name) {
			d.lockref.setCountLocked(d.lockref.CountLocked() + 1)
			d.Unlock()
			t.Inc(EvDget)
			return d
		}
		d.Unlock()
	}
	return nil
}

// DLookup is d_lookup: the ref-walk lookup of name (hash computed, d_hash
// applied) in parent. It returns the dentry with a reference, or nil. A
// miss is only trusted if no rename ran meanwhile (read_seqretry on the
// rename_lock), since a rename can move a dentry between hash chains under
// a reader's feet.
func DLookup[I any](t *kernel.Task, parent *Dentry[I], name *Qstr) *Dentry[I] {
	t.Inc(EvDLookup)
	c := parent.cache
	for {
		seq := c.renameLock.ReadBegin()
		d := c.dLookup(t, parent, name)
		if d != nil || !c.renameLock.ReadRetry(seq) {
			return d
		}
	}
}

// DHashAndLookup hashes name for dir (full_name_hash, then the directory's
// d_hash) and looks it up (d_hash_and_lookup). Errors: those of d_hash.
func DHashAndLookup[I any](t *kernel.Task, dir *Dentry[I], name string) (*Dentry[I], error) {
	q := Qstr{Name: name}
	if err := DHash(t, dir, &q); err != nil {
		return nil, err
	}
	return DLookup(t, dir, &q), nil
}
