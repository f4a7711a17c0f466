package dcache

import (
	"fmt"

	"github.com/vfslab/vfslab/kernel"
)

// CheckTree checks the dentry tree below root against the dcache's
// structural invariants and describes every violation, for a debug check
// after a syscall has returned (the model's counterpart of what
// CONFIG_DEBUG_LIST and d_walk-based sanity checks catch):
//
//   - every child's d_parent is the dentry whose d_children holds it, and
//     its d_sib links point back at it;
//   - no child on a d_children list is dead (lockref_mark_dead) or
//     freed (its RCU grace period over: the poison a use-after-free
//     would touch), and no count is negative;
//   - a dentry's type bits agree with d_inode (negative exactly when it
//     has no inode);
//   - a hashed dentry is on the hash chain its name's hash selects, its
//     d_hash.pprev pointing at the link that points at it;
//   - a positive dentry is on its inode's alias list (when the cache
//     keeps them), and a directory's inode has at most one hashed alias.
//
// The walk takes each parent's and child's d_lock as ForEachChild does,
// and goes at most maxDepth levels below root. It returns nil when the
// tree is consistent.
func CheckTree[I any](t *kernel.Task, root *Dentry[I], maxDepth int) []string {
	var out []string
	dirAliases := map[*I]*Dentry[I]{}
	var walk func(d *Dentry[I], path string, depth int)
	walk = func(d *Dentry[I], path string, depth int) {
		type kid struct {
			d    *Dentry[I]
			path string
		}
		var kids []kid
		d.Lock(t)
		for c := d.children; c != nil; c = c.sibNext {
			c.Lock(t)
			p := path + "/" + c.name.Load().str()
			bad := func(format string, args ...any) {
				out = append(out, fmt.Sprintf("dentry %q: ", p)+fmt.Sprintf(format, args...))
			}
			if par := c.parent.Load(); par != d {
				bad("d_parent is %q, but %q's d_children holds it", par.name.Load().str(), path)
			}
			if c.sibPprev == nil || *c.sibPprev != c {
				bad("d_sib.pprev does not point at it")
			}
			n := c.lockref.CountLocked()
			switch {
			case n == LockrefDead:
				bad("dead (lockref_mark_dead) but still on its parent's d_children")
			case n < 0:
				bad("d_lockref.count = %d", n)
			}
			if c.Poisoned() {
				bad("freed (its RCU grace period is over) but still in the tree")
			}
			inode := c.inode.Load()
			if (inode == nil) != (c.Flags().Type() == MissType) {
				bad("d_inode %v but type %v", inode != nil, c.Flags().Type())
			}
			if !c.Unhashed() {
				if pp := c.hashPprev.Load(); pp.Load() != c {
					bad("hashed, but d_hash.pprev does not point at it")
				} else if !c.cache.onChain(c) {
					bad("hashed, but not on the hash chain of its name's hash %#08x", c.name.Load().hash())
				}
			}
			if inode != nil {
				if al := c.cache.aliases(inode); al != nil && (c.aliasPrev == nil || *c.aliasPrev != c) {
					bad("positive, but not on its inode's alias list")
				}
				if isDirType(c.Flags().Type()) && !c.Unhashed() {
					if o := dirAliases[inode]; o != nil {
						bad("a second hashed alias of a directory inode (the first is %q)", o.name.Load().str())
					}
					dirAliases[inode] = c
				}
			}
			if depth < maxDepth && n >= 0 {
				kids = append(kids, kid{c, p})
			}
			c.Unlock()
		}
		d.Unlock()
		for _, k := range kids {
			walk(k.d, k.path, depth+1)
		}
	}
	walk(root, root.name.Load().str(), 1)
	return out
}

// onChain reports whether d is on the hash chain of its name's hash.
func (c *Cache[I]) onChain(d *Dentry[I]) bool {
	b := c.dHash(d.name.Load().hash())
	b.lock.Lock()
	defer b.lock.Unlock()
	for e := b.first.Load(); e != nil; e = e.hashNext.Load() {
		if e == d {
			return true
		}
	}
	return false
}
