package dcache

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vfslab/vfslab/kernel"
)

// String is the canonical one-line dump of a dentry:
//
//	dentry "name" hash=0x1a2b3c4d parent="p" count=2 flags=LRU_LIST|REGULAR inode=12 seq=4
//
// inode is the number InodeOps.Ino gives, "negative", or "?" without Ino.
// The fields are read without locks, each atomically.
func (d *Dentry[I]) String() string {
	if d == nil {
		return "dentry <nil>"
	}
	n := d.name.Load()
	p := d.parent.Load().name.Load()
	return fmt.Sprintf("dentry %q hash=%#08x parent=%q count=%d flags=%v inode=%s seq=%d",
		n.str(), n.hash(), p.str(), d.lockref.Count(), d.Flags(), d.cache.inodes.inoString(d.inode.Load()), d.seq.Raw())
}

// ForEachChild calls fn on each child of d, in the order of d_children,
// with d's d_lock and the child's d_lock held, until fn returns false. fn
// must not sleep or take other dentry locks; to keep a child beyond the
// call it takes a reference with DgetDlock, after checking that the child
// is not dead (Count() >= 0).
func ForEachChild[I any](t *kernel.Task, d *Dentry[I], fn func(child *Dentry[I]) bool) {
	d.Lock(t)
	defer d.Unlock()
	for c := d.children; c != nil; c = c.sibNext {
		c.Lock(t)
		goOn := fn(c)
		c.Unlock()
		if !goOn {
			return
		}
	}
}

// Children returns d's positive, hashed children, each with a reference the
// caller must put, sorted by name: a snapshot for readdir-like callers
// (dcache_readdir's walk of d_children).
func Children[I any](t *kernel.Task, d *Dentry[I]) []*Dentry[I] {
	var out []*Dentry[I]
	d.Lock(t)
	for c := d.children; c != nil; c = c.sibNext {
		c.Lock(t)
		if c.inode.Load() != nil && !c.Unhashed() && c.lockref.CountLocked() >= 0 {
			DgetDlock(t, c)
			out = append(out, c)
		}
		c.Unlock()
	}
	d.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name.Load().str() < out[j].name.Load().str() })
	return out
}

// DentryPath returns the path of d from the root of its tree, "/a/b"
// (dentry_path_raw); "/" for a root. It retries if a rename ran while it
// read. An unhashed non-root dentry gets the suffix " (deleted)" like
// d_path.
func DentryPath[I any](t *kernel.Task, d *Dentry[I]) string {
	c := d.cache
	for {
		seq := c.renameLock.ReadBegin()
		t.RCU.ReadLock()
		var parts []string
		for q := d; !q.IsRoot(); q = q.parent.Load() {
			parts = append(parts, q.name.Load().str())
		}
		deleted := !d.IsRoot() && d.Unhashed()
		t.RCU.ReadUnlock()
		if c.renameLock.ReadRetry(seq) {
			continue
		}
		var b strings.Builder
		for i := len(parts) - 1; i >= 0; i-- {
			b.WriteByte('/')
			b.WriteString(parts[i])
		}
		if b.Len() == 0 {
			b.WriteByte('/')
		}
		if deleted {
			b.WriteString(" (deleted)")
		}
		return b.String()
	}
}

// DumpTree renders the subtree at d, one dentry per line (String, with
// hash and seq left out so that dumps are stable across runs), children
// indented by two spaces and sorted by name. It holds the rename_lock's
// lock while it walks; for tests and the CLI.
func DumpTree[I any](t *kernel.Task, d *Dentry[I]) string {
	var b strings.Builder
	c := d.cache
	c.renameLock.LockExcl()
	defer c.renameLock.UnlockExcl()
	t.RCU.ReadLock()
	defer t.RCU.ReadUnlock()
	var rec func(d *Dentry[I], depth int)
	rec = func(d *Dentry[I], depth int) {
		b.WriteString(strings.Repeat("  ", depth))
		b.WriteString(d.stableString())
		b.WriteByte('\n')
		d.Lock(t)
		var kids []*Dentry[I]
		for c := d.children; c != nil; c = c.sibNext {
			kids = append(kids, c)
		}
		d.Unlock()
		sort.SliceStable(kids, func(i, j int) bool { return kids[i].name.Load().str() < kids[j].name.Load().str() })
		for _, k := range kids {
			rec(k, depth+1)
		}
	}
	rec(d, 0)
	return b.String()
}

// stableString is String without the hash (salted with an address) and
// the sequence count.
func (d *Dentry[I]) stableString() string {
	n := d.name.Load()
	hashed := ""
	if d.Unhashed() && !d.IsRoot() {
		hashed = " unhashed"
	}
	return fmt.Sprintf("dentry %q count=%d flags=%v inode=%s%s",
		n.str(), d.lockref.Count(), d.Flags(), d.cache.inodes.inoString(d.inode.Load()), hashed)
}
