package dcache

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kmem"
	"pgregory.net/rapid"
)

// The dcache invariants, checked by a rapid state machine against a model
// that knows which references the test holds, where each dentry should be
// and which (parent, name) pairs should be hashed:
//
//   - every reference is accounted for: a live dentry's count is the
//     references the model holds, plus one per child (d_parent references),
//     plus the superblock's for the root;
//   - every child is in its parent's children and points back at it;
//   - d_lookup and __d_lookup_rcu agree with the model's map; a name the
//     model expected but the cache dropped must belong to a dentry nobody
//     held (pruned from the LRU);
//   - every positive dentry is on its inode's alias list, and each inode
//     holds exactly one reference per positive dentry;
//   - the LRU and dentry counters match the tree, the slab accounting
//     matches the counters, and once everything is put nothing leaks.

type key struct {
	p    *Dentry[tInode]
	name string
}

type model struct {
	e        *env
	held     map[*Dentry[tInode]]int
	names    map[key]*Dentry[tInode]
	parentOf map[*Dentry[tInode]]*Dentry[tInode]
	nameOf   map[*Dentry[tInode]]string
	all      []*Dentry[tInode]
	inodes   []*tInode
	maxLRU   int
}

var propNames = []string{"a", "b", "c", "d", strings.Repeat("long", 12)}

func newModel(tb tb, maxLRU int) *model {
	e := newEnv(tb, Config[tInode]{MaxUnused: maxLRU, HashShift: 4})
	m := &model{
		e:        e,
		held:     map[*Dentry[tInode]]int{},
		names:    map[key]*Dentry[tInode]{},
		parentOf: map[*Dentry[tInode]]*Dentry[tInode]{e.root: e.root},
		nameOf:   map[*Dentry[tInode]]string{e.root: "/"},
		all:      []*Dentry[tInode]{e.root},
		inodes:   []*tInode{e.ri},
		maxLRU:   maxLRU,
	}
	return m
}

func dead(d *Dentry[tInode]) bool { return d.Count() == LockrefDead }

// heldList returns the live dentries the model holds references to, in
// creation order, filtered by keep.
func (m *model) heldList(keep func(d *Dentry[tInode]) bool) []*Dentry[tInode] {
	var out []*Dentry[tInode]
	for _, d := range m.all {
		if (m.held[d] > 0 || d == m.e.root) && !dead(d) && (keep == nil || keep(d)) {
			out = append(out, d)
		}
	}
	return out
}

func (m *model) isDir(d *Dentry[tInode]) bool { return d.IsDir() }

// isAncestor reports whether a is d or an ancestor of d in the model.
func (m *model) isAncestor(a, d *Dentry[tInode]) bool {
	for {
		if d == a {
			return true
		}
		p := m.parentOf[d]
		if p == d {
			return false
		}
		d = p
	}
}

func (m *model) liveChildren(d *Dentry[tInode]) int {
	n := 0
	for _, c := range m.all {
		if c != d && m.parentOf[c] == d && !dead(c) {
			n++
		}
	}
	return n
}

// expect returns the dentry the model expects under k, forgetting one that
// the cache legitimately pruned.
func (m *model) expect(rt *rapid.T, k key) *Dentry[tInode] {
	d := m.names[k]
	if d != nil && dead(d) {
		if m.held[d] != 0 {
			rt.Fatalf("%v died while the test held %d references", d, m.held[d])
		}
		delete(m.names, k)
		return nil
	}
	return d
}

func (m *model) draw(rt *rapid.T, label string, keep func(d *Dentry[tInode]) bool) *Dentry[tInode] {
	l := m.heldList(keep)
	if len(l) == 0 {
		rt.Skip("nothing to choose")
	}
	// Draw an index, not the dentry, so that failure logs stay readable.
	i := rapid.IntRange(0, len(l)-1).Draw(rt, label)
	rt.Logf("%s = %v", label, l[i])
	return l[i]
}

func (m *model) actions() map[string]func(*rapid.T) {
	e := m.e
	tk := e.t
	return map[string]func(*rapid.T){
		"alloc": func(rt *rapid.T) {
			p := m.draw(rt, "parent", func(d *Dentry[tInode]) bool { return m.isDir(d) })
			name := rapid.SampledFrom(propNames).Draw(rt, "name")
			k := key{p, name}
			if m.expect(rt, k) != nil {
				rt.Skip("name exists")
			}
			typ := rapid.SampledFrom([]Flags{MissType, RegularType, DirectoryType}).Draw(rt, "type")
			if rapid.IntRange(0, 9).Draw(rt, "fail") == 0 {
				tk.Fail = kmem.FailNth(1)
				_, err := DAlloc(tk, p, MakeQstr(p, name))
				tk.Fail = nil
				if !errors.Is(err, errno.ENOMEM) {
					rt.Fatalf("injected failure: err %v", err)
				}
				return
			}
			d, err := DAlloc(tk, p, MakeQstr(p, name))
			if err != nil {
				rt.Fatal(err)
			}
			var ino *tInode
			if typ != MissType {
				ino = newInode(typ)
				m.inodes = append(m.inodes, ino)
				ino.get()
			}
			DAdd(tk, d, ino)
			m.all = append(m.all, d)
			m.held[d] = 1
			m.names[k] = d
			m.parentOf[d] = p
			m.nameOf[d] = name
		},
		"dget": func(rt *rapid.T) {
			d := m.draw(rt, "d", nil)
			if Dget(tk, d) != d {
				rt.Fatal("dget")
			}
			m.held[d]++
		},
		"dput": func(rt *rapid.T) {
			d := m.draw(rt, "d", func(d *Dentry[tInode]) bool { return m.held[d] > 0 })
			m.held[d]--
			Dput(tk, d)
		},
		"d_lookup": func(rt *rapid.T) {
			p := m.draw(rt, "parent", func(d *Dentry[tInode]) bool { return m.isDir(d) })
			name := rapid.SampledFrom(propNames).Draw(rt, "name")
			want := m.expect(rt, key{p, name})
			got := e.lookup(p, name)
			if got != want {
				rt.Fatalf("d_lookup(%v, %q) = %v, model %v", p, name, got, want)
			}
			if got != nil {
				m.held[got]++
			}
		},
		"dget_parent": func(rt *rapid.T) {
			d := m.draw(rt, "d", func(d *Dentry[tInode]) bool { return !d.IsRoot() })
			p := DgetParent(tk, d)
			if p != m.parentOf[d] {
				rt.Fatalf("dget_parent(%v) = %v, model %v", d, p, m.parentOf[d])
			}
			m.held[p]++
		},
		"d_delete": func(rt *rapid.T) {
			d := m.draw(rt, "d", func(d *Dentry[tInode]) bool {
				return !d.IsRoot() && d.IsPositive() && m.held[d] > 0 && m.liveChildren(d) == 0
			})
			only := m.held[d] == 1
			wasHashed := !d.Unhashed()
			DDelete(tk, d)
			if only {
				if !d.IsNegative() || d.Unhashed() == wasHashed {
					rt.Fatalf("d_delete of the only user: %v", d)
				}
			} else {
				if d.IsNegative() || !d.Unhashed() {
					rt.Fatalf("d_delete with other users: %v", d)
				}
				m.forget(d)
			}
		},
		"d_drop": func(rt *rapid.T) {
			d := m.draw(rt, "d", func(d *Dentry[tInode]) bool { return !d.IsRoot() && m.held[d] > 0 })
			DDrop(tk, d)
			m.forget(d)
		},
		"d_move": func(rt *rapid.T) {
			d := m.draw(rt, "d", func(d *Dentry[tInode]) bool {
				return !d.IsRoot() && d.IsPositive() && m.held[d] > 0 && !d.Unhashed()
			})
			dir := m.draw(rt, "newdir", func(x *Dentry[tInode]) bool { return m.isDir(x) && !m.isAncestor(d, x) })
			name := rapid.SampledFrom(propNames).Draw(rt, "name")
			k := key{dir, name}
			var target *Dentry[tInode]
			if x := m.expect(rt, k); x != nil {
				if x == d || m.liveChildren(x) > 0 || m.isAncestor(x, d) {
					rt.Skip("target busy")
				}
				target = e.lookup(dir, name)
				if target != x {
					rt.Fatalf("lookup of the target = %v, model %v", target, x)
				}
			} else {
				var err error
				target, err = DAlloc(tk, dir, MakeQstr(dir, name))
				if err != nil {
					rt.Fatal(err)
				}
				DAdd(tk, target, nil)
				m.all = append(m.all, target)
				m.parentOf[target] = dir
				m.nameOf[target] = name
			}
			// rename holds both directories (lock_rename on referenced
			// paths); d_move relies on it.
			oldDir := DgetParent(tk, d)
			DMove(tk, d, target)
			Dput(tk, target)
			Dput(tk, oldDir)
			m.forget(d)
			m.names[k] = d
			m.parentOf[d] = dir
			m.nameOf[d] = name
		},
		"d_exchange": func(rt *rapid.T) {
			ok := func(x *Dentry[tInode]) bool {
				return !x.IsRoot() && x.IsPositive() && m.held[x] > 0 && !x.Unhashed()
			}
			x := m.draw(rt, "x", ok)
			y := m.draw(rt, "y", ok)
			if x == y || m.isAncestor(x, y) || m.isAncestor(y, x) {
				rt.Skip("related")
			}
			px, py := DgetParent(tk, x), DgetParent(tk, y)
			DExchange(tk, x, y)
			Dput(tk, px)
			Dput(tk, py)
			kx, ky := key{m.parentOf[x], m.nameOf[x]}, key{m.parentOf[y], m.nameOf[y]}
			m.names[kx], m.names[ky] = y, x
			m.parentOf[x], m.parentOf[y] = ky.p, kx.p
			m.nameOf[x], m.nameOf[y] = ky.name, kx.name
		},
		"prune": func(rt *rapid.T) {
			PruneDcache(tk, e.c, rapid.IntRange(1, 8).Draw(rt, "n"))
		},
		"shrink_dcache_parent": func(rt *rapid.T) {
			ShrinkDcacheParent(tk, m.draw(rt, "p", func(d *Dentry[tInode]) bool { return m.isDir(d) }))
		},
		"": m.check,
	}
}

// forget removes d's name from the map if d is what the map has there.
func (m *model) forget(d *Dentry[tInode]) {
	k := key{m.parentOf[d], m.nameOf[d]}
	if m.names[k] == d {
		delete(m.names, k)
	}
}

func (m *model) check(rt *rapid.T) {
	e := m.e
	tk := e.t
	// Walk the real tree.
	reach := map[*Dentry[tInode]]bool{}
	lru := int64(0)
	var walk func(d *Dentry[tInode])
	walk = func(d *Dentry[tInode]) {
		reach[d] = true
		if dead(d) {
			rt.Fatalf("dead dentry in the tree: %v", d)
		}
		kids := 0
		for c := d.children; c != nil; c = c.sibNext {
			kids++
			if c.Parent() != d {
				rt.Fatalf("%v is in the children of %v but its parent is %v", c, d, c.Parent())
			}
			walk(c)
		}
		want := m.held[d] + kids
		if d == e.root {
			want++ // s_root
		}
		if d.Count() != want {
			rt.Fatalf("%v: count %d, want %d (held %d + children %d)", d, d.Count(), want, m.held[d], kids)
		}
		if p := m.parentOf[d]; p != d.Parent() {
			rt.Fatalf("%v: parent %v, model %v", d, d.Parent(), p)
		}
		if n := m.nameOf[d]; n != d.Name().Name {
			rt.Fatalf("%v: name, model %q", d, n)
		}
		if !d.IsRoot() && !d.Unhashed() {
			if x := m.names[key{d.Parent(), d.Name().Name}]; x != d {
				rt.Fatalf("%v is hashed but the model has %v there", d, x)
			}
		}
		if ino := d.Inode(); ino != nil {
			found := false
			for a := ino.aliases.first; a != nil; a = a.aliasNext {
				found = found || a == d
			}
			if !found {
				rt.Fatalf("%v not on its inode's alias list", d)
			}
		}
		if f := d.Flags(); f&LRUList != 0 && f&ShrinkList == 0 {
			lru++
		}
	}
	walk(e.root)
	if e.k.Log.Contains("WARNING") {
		rt.Fatalf("kernel warning: %v", e.k.Log.Lines())
	}
	for _, d := range m.all {
		if m.held[d] > 0 && !reach[d] {
			rt.Fatalf("%v is held but not in the tree", d)
		}
		if !reach[d] && !dead(d) {
			rt.Fatalf("%v is alive but not in the tree", d)
		}
	}
	st := e.c.Stats()
	if st.Dentries != int64(len(reach)) || st.LRU != lru {
		rt.Fatalf("stats %v, tree has %d dentries, %d on the LRU", st, len(reach), lru)
	}
	if m.maxLRU > 0 && st.LRU > int64(m.maxLRU) {
		rt.Fatalf("LRU %d over its bound %d", st.LRU, m.maxLRU)
	}
	if live := tk.Stats.Site(dentryCache.Site()).Live(); live != st.Dentries {
		rt.Fatalf("slab has %d live dentries, counters %d", live, st.Dentries)
	}
	for _, ino := range m.inodes {
		n := int32(0)
		for a := ino.aliases.first; a != nil; a = a.aliasNext {
			n++
		}
		if ino.refs.Load() != n {
			rt.Fatalf("inode %d: %d references for %d dentries", ino.ino, ino.refs.Load(), n)
		}
	}
	// The map model against both lookups.
	tk.RCU.ReadLock()
	defer tk.RCU.ReadUnlock()
	for k := range m.names {
		want := m.expect(rt, k)
		if want == nil {
			continue
		}
		q := MakeQstr(k.p, k.name)
		got, seq := DLookupRCU(tk, k.p, &q)
		if got != want || got.Seq().Retry(seq) {
			rt.Fatalf("__d_lookup_rcu(%q) = %v, model %v", k.name, got, want)
		}
	}
	for d := range reach {
		if !d.IsDir() {
			continue
		}
		for _, n := range propNames {
			if m.names[key{d, n}] != nil {
				continue
			}
			q := MakeQstr(d, n)
			if got, _ := DLookupRCU(tk, d, &q); got != nil {
				rt.Fatalf("__d_lookup_rcu(%v, %q) found %v, the model has nothing", d, n, got)
			}
		}
	}
}

// teardown puts every reference and checks that the cache empties.
func (m *model) teardown(rt *rapid.T) {
	e := m.e
	tk := e.t
	for _, d := range m.all {
		for ; m.held[d] > 0; m.held[d]-- {
			Dput(tk, d)
		}
	}
	ShrinkDcacheSB(tk, e.c)
	if st := e.c.Stats(); st.Dentries != 1 || st.Unused != 0 || st.Negative != 0 {
		rt.Fatalf("after putting everything: %v\n%s", st, DumpTree(tk, e.root))
	}
	Dput(tk, e.root)
	e.k.RCU.Barrier()
	for _, d := range m.all {
		if !d.Poisoned() {
			rt.Fatalf("%v never freed", d)
		}
	}
	if live := tk.Stats.Live(); live != 0 {
		rt.Fatalf("leaks: %s", tk.Stats)
	}
	for _, ino := range m.inodes {
		want := int32(0)
		if ino == e.ri {
			want = 0
		}
		if ino.refs.Load() != want {
			rt.Fatalf("inode %d keeps %d references", ino.ino, ino.refs.Load())
		}
	}
}

func TestDcacheInvariants(t *testing.T) {
	for _, maxLRU := range []int{-1, 3} {
		t.Run(fmt.Sprintf("maxLRU=%d", maxLRU), func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				m := newModel(rt, maxLRU)
				rt.Repeat(m.actions())
				m.teardown(rt)
			})
		})
	}
}
