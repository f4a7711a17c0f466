package dcache

import (
	"strings"
	"testing"
)

// TestCheckTree: a tree built by the dcache's own operations (add,
// move, delete, put) is consistent; a child whose d_parent is not the
// dentry holding it, a negative count and a hashed dentry missing from
// its chain are each reported.
func TestCheckTree(t *testing.T) {
	e := newEnv(t, Config[tInode]{})
	sub := e.add(t, e.root, "sub", DirectoryType)
	a := e.add(t, e.root, "a", RegularType)
	b := e.add(t, sub, "b", RegularType)
	neg := e.add(t, sub, "missing", MissType)
	target, err := DAlloc(e.t, e.root, MakeQstr(e.root, "moved"))
	if err != nil {
		t.Fatal(err)
	}
	DAdd(e.t, target, nil)
	DMove(e.t, b, target)
	Dput(e.t, target)
	Dput(e.t, neg)
	if got := CheckTree(e.t, e.root, 8); len(got) != 0 {
		t.Fatalf("a consistent tree: %v", got)
	}
	// d_parent pointing elsewhere.
	b.parent.Store(a)
	if got := CheckTree(e.t, e.root, 8); len(got) != 1 || !strings.Contains(got[0], "d_parent") {
		t.Errorf("wrong d_parent: %v", got)
	}
	b.parent.Store(e.root)
	// A negative count (a dput too many).
	a.Lock(e.t)
	a.lockref.setCountLocked(-1)
	a.Unlock()
	if got := CheckTree(e.t, e.root, 8); len(got) != 1 || !strings.Contains(got[0], "count = -1") {
		t.Errorf("negative count: %v", got)
	}
	a.Lock(e.t)
	a.lockref.setCountLocked(1)
	a.Unlock()
	// Unlinked from its hash chain but still looking hashed.
	a.Lock(e.t)
	e.c.unhashLocked(a)
	a.Unlock()
	if got := CheckTree(e.t, e.root, 8); len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), "hash") {
		t.Errorf("off its chain: %v", got)
	}
	_ = sub
}
