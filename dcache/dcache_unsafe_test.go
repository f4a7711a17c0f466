package dcache

import (
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kmem"
)

func TestLayout(t *testing.T) {
	var d Dentry[tInode]
	if got := unsafe.Sizeof(d); got != 256 {
		t.Errorf("sizeof(Dentry) = %d, want 256 (a size class, so dentries are 64-byte aligned)", got)
	}
	if got := unsafe.Offsetof(d.lockref); got != 128 {
		t.Errorf("offsetof(d_lockref) = %d, want 128", got)
	}
	for name, off := range map[string]uintptr{
		"d_flags": unsafe.Offsetof(d.flags), "d_seq": unsafe.Offsetof(d.seq),
		"d_hash": unsafe.Offsetof(d.hashNext), "d_parent": unsafe.Offsetof(d.parent),
		"d_name": unsafe.Offsetof(d.name), "d_inode": unsafe.Offsetof(d.inode),
	} {
		if off/64 == 128/64 {
			t.Errorf("%s at offset %d shares the lockref's cache line", name, off)
		}
		if off >= 64 {
			t.Errorf("%s at offset %d is not on the first cache line", name, off)
		}
	}
}

func TestAllocAddLookupPut(t *testing.T) {
	e := newEnv(t, Config[tInode]{})
	tk := e.t
	base := tk.Stats.Clone()

	d := e.add(t, e.root, "foo", RegularType)
	if d.Count() != 1 || e.root.Count() != 2 {
		t.Fatalf("counts: child %d root %d, want 1 and 2", d.Count(), e.root.Count())
	}
	if d.Parent() != e.root || d.Unhashed() || !d.IsReg() || d.Inode() == nil {
		t.Fatalf("bad child: %v", d)
	}
	got := e.lookup(e.root, "foo")
	if got != d || d.Count() != 2 {
		t.Fatalf("d_lookup = %v, count %d", got, d.Count())
	}
	Dput(tk, got)
	if e.lookup(e.root, "bar") != nil {
		t.Fatal("d_lookup found a name never added")
	}
	// The last reference of a hashed dentry keeps it cached on the LRU.
	Dput(tk, d)
	if d.Count() != 0 || d.Flags()&LRUList == 0 {
		t.Fatalf("after the last dput: %v", d)
	}
	if s := e.c.Stats(); s.Dentries != 2 || s.LRU != 1 {
		t.Fatalf("stats %v", s)
	}
	// Found again from the cache.
	got = e.lookup(e.root, "foo")
	if got != d {
		t.Fatal("cached dentry not found")
	}
	Dput(tk, got)
	if d.Flags()&Referenced == 0 {
		t.Fatalf("second final dput must mark it referenced: %v", d)
	}
	// Unhash and put: killed, and the root loses the child's reference.
	got = e.lookup(e.root, "foo")
	DDrop(tk, got)
	Dput(tk, got)
	if d.Count() != LockrefDead || d.Flags()&DentryKilled == 0 {
		t.Fatalf("not killed: %v", d)
	}
	if e.root.Count() != 1 {
		t.Fatalf("root count %d after its child died, want 1", e.root.Count())
	}
	if l := tk.Stats.Leaks(base); len(l) != 0 {
		t.Fatalf("leaks: %v", l)
	}
	e.k.RCU.Barrier()
	if !d.Poisoned() {
		t.Fatal("dentry not poisoned after the grace period")
	}
}

func TestDAllocENOMEM(t *testing.T) {
	e := newEnv(t, Config[tInode]{})
	e.t.Fail = kmem.FailSites("dentry")
	_, err := DAlloc(e.t, e.root, MakeQstr(e.root, "x"))
	if !errors.Is(err, errno.ENOMEM) {
		t.Fatalf("err = %v, want ENOMEM", err)
	}
	if e.root.Count() != 1 {
		t.Fatalf("root count %d, want 1", e.root.Count())
	}
	long := strings.Repeat("n", 100)
	e.t.Fail = kmem.FailSites("dentry:external_name")
	base := e.t.Stats.Clone()
	_, err = DAlloc(e.t, e.root, MakeQstr(e.root, long))
	if !errors.Is(err, errno.ENOMEM) {
		t.Fatalf("err = %v, want ENOMEM", err)
	}
	if l := e.t.Stats.Leaks(base); len(l) != 0 {
		t.Fatalf("leaks after a failed external name: %v", l)
	}
	e.t.Fail = nil
	d, err := DAlloc(e.t, e.root, MakeQstr(e.root, long))
	if err != nil {
		t.Fatal(err)
	}
	if d.Name().Name != long {
		t.Fatal("long name mangled")
	}
	if e.t.Stats.Site(siteExtName).Live() != 1 {
		t.Fatal("external name not accounted")
	}
	Dput(e.t, d) // unhashed: killed
	if e.t.Stats.Site(siteExtName).Live() != 0 {
		t.Fatal("external name not freed")
	}
}
