package dcache

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/vfslab/vfslab/kernel"
)

// iterations scales the concurrent tests down in -short mode.
func iterations(n int) int {
	if testing.Short() {
		return n / 10
	}
	return n
}

// renameWriter moves two files between four slots (dirs a and b, names f
// and g): a rename to a free slot (a fresh negative target, d_move, dput
// of the target) or a RENAME_EXCHANGE of the two, holding both parents as
// rename does.
func renameWriter(t *kernel.Task, dirs [2]*Dentry[tInode], files [2]*Dentry[tInode], n int, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 1))
	names := [2]string{"f", "g"}
	for i := 0; i < n; i++ {
		if r.IntN(4) == 0 {
			px, py := DgetParent(t, files[0]), DgetParent(t, files[1])
			DExchange(t, files[0], files[1])
			Dput(t, px)
			Dput(t, py)
			continue
		}
		f := files[r.IntN(2)]
		// Pick a free slot: one not occupied by either file.
		var dir *Dentry[tInode]
		var name string
		for {
			dir, name = dirs[r.IntN(2)], names[r.IntN(2)]
			busy := false
			for _, x := range files {
				if x.Parent() == dir && x.Name().Name == name {
					busy = true
				}
			}
			if !busy {
				break
			}
		}
		q := MakeQstr(dir, name)
		target := DLookup(t, dir, &q)
		if target == nil {
			var err error
			if target, err = DAlloc(t, dir, q); err != nil {
				panic(err)
			}
			DAdd(t, target, nil)
		}
		old := DgetParent(t, f)
		DMove(t, f, target)
		Dput(t, target)
		Dput(t, old)
	}
}

// TestRenameNeverExposesTwoOrNone runs readers that look both files up in
// all four slots with __d_lookup_rcu, validating each dentry found with
// its d_seq and the whole view with the rename_lock, while a writer renames
// them around. Every validated view must show each file in exactly one
// slot, under the parent and name it was looked up with, and the two in
// different slots. Readers never touch a freed dentry (poison checks on).
func TestRenameNeverExposesTwoOrNone(t *testing.T) {
	e := newEnv(t, Config[tInode]{})
	e.c.SetDebug(DebugCount)
	tk := e.t
	a := e.add(t, e.root, "a", DirectoryType)
	b := e.add(t, e.root, "b", DirectoryType)
	f := e.add(t, a, "f", RegularType)
	g := e.add(t, b, "g", RegularType)
	dirs := [2]*Dentry[tInode]{a, b}
	files := [2]*Dentry[tInode]{f, g}
	inodes := [2]*tInode{f.Inode(), g.Inode()}

	var stop atomic.Bool
	var views, retries atomic.Int64
	errc := make(chan error, 4)
	var wg sync.WaitGroup
	for rd := 0; rd < 3; rd++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rt := e.k.NewTask(fmt.Sprintf("reader%d", rd))
			defer rt.Exit()
			for !stop.Load() {
				rt.RCU.ReadLock()
				seq := e.c.RenameLock().ReadBegin()
				var where [2][]string
				ok := true
				for _, dir := range dirs {
					for _, name := range []string{"f", "g"} {
						q := MakeQstr(dir, name)
						d, s := DLookupRCU(rt, dir, &q)
						if d == nil {
							continue
						}
						ino := d.InodeRCU(rt)
						parent := d.ParentRCU(rt)
						got := d.NameRCU(rt).Name
						if d.Seq().Retry(s) {
							ok = false
							break
						}
						if parent != dir || got != name {
							rt.RCU.ReadUnlock()
							errc <- fmt.Errorf("validated %v found as %s/%s", d, dir.Name().Name, name)
							return
						}
						for i, x := range inodes {
							if ino == x {
								where[i] = append(where[i], dir.Name().Name+"/"+name)
							}
						}
					}
					if !ok {
						break
					}
				}
				retry := e.c.RenameLock().ReadRetry(seq)
				rt.RCU.ReadUnlock()
				if !ok || retry {
					retries.Add(1)
					continue
				}
				views.Add(1)
				if len(where[0]) != 1 || len(where[1]) != 1 || where[0][0] == where[1][0] {
					errc <- fmt.Errorf("validated view: f at %v, g at %v", where[0], where[1])
					return
				}
			}
		}()
	}
	wt := e.k.NewTask("writer")
	renameWriter(wt, dirs, files, iterations(20000), 1)
	wt.Exit()
	stop.Store(true)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if views.Load() == 0 {
		t.Fatal("no view was ever validated")
	}
	t.Logf("%d validated views, %d retried", views.Load(), retries.Load())
	e.k.RCU.Barrier()
	if n := e.c.UseAfterFree(); n != 0 {
		t.Fatalf("%d accesses to freed dentries", n)
	}
	if e.k.Log.Contains("WARNING") {
		t.Fatal(e.k.Log.Lines())
	}
	// Both directories: the test's reference, one per file inside.
	if a.Count()+b.Count() != 2+2 {
		t.Fatalf("parent counts a=%d b=%d", a.Count(), b.Count())
	}
	for _, x := range []*Dentry[tInode]{f, g, a, b} {
		Dput(tk, x)
	}
}

// TestConcurrentDgetParentDputMove hammers one shared parent's lockref from
// several tasks with dget_parent and dput while another task renames the
// child back and forth between two directories; at the end every
// reference is accounted for.
func TestConcurrentDgetParentDputMove(t *testing.T) {
	e := newEnv(t, Config[tInode]{})
	e.c.SetDebug(DebugCount)
	a := e.add(t, e.root, "a", DirectoryType)
	b := e.add(t, e.root, "b", DirectoryType)
	f := e.add(t, a, "f", RegularType)
	g := e.add(t, a, "g", RegularType)
	var stop atomic.Bool
	var wg sync.WaitGroup
	var bad atomic.Int64
	shards := make([]*kernel.Task, 4)
	for i := range shards {
		shards[i] = e.k.NewTask("opener")
		shards[i].EnableCounting()
		wg.Add(1)
		go func(tk *kernel.Task) {
			defer wg.Done()
			n := 0
			for !stop.Load() || n < 100 {
				n++
				p := DgetParent(tk, f)
				if p != a && p != b {
					bad.Add(1)
				}
				if p.Count() < 2 {
					bad.Add(1)
				}
				// The RCU-read alternative.
				tk.RCU.ReadLock()
				if pi := f.ParentRCU(tk).InodeRCU(tk); pi == nil {
					bad.Add(1)
				}
				tk.RCU.ReadUnlock()
				Dput(tk, p)
			}
		}(shards[i])
	}
	wt := e.k.NewTask("mover")
	renameWriter(wt, [2]*Dentry[tInode]{a, b}, [2]*Dentry[tInode]{f, g}, iterations(5000), 2)
	stop.Store(true)
	wg.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d bad parents", bad.Load())
	}
	for _, s := range shards {
		s.Exit()
	}
	wt.Exit()
	if got := a.Count() + b.Count(); got != 2+2 {
		t.Fatalf("a=%d b=%d, want the test's reference plus one per file", a.Count(), b.Count())
	}
	if f.Count() != 1 || g.Count() != 1 {
		t.Fatalf("file counts %d %d", f.Count(), g.Count())
	}
	e.k.RCU.Barrier()
	if e.c.UseAfterFree() != 0 || e.k.Log.Contains("WARNING") {
		t.Fatalf("uaf %d log %v", e.c.UseAfterFree(), e.k.Log.Lines())
	}
}

// TestConcurrentChurn creates, looks up, deletes and puts dentries in one
// directory from several tasks with a small LRU bound, so that pruning,
// killing and lookups race; afterwards the cache drains to the root.
func TestConcurrentChurn(t *testing.T) {
	e := newEnv(t, Config[tInode]{MaxUnused: 16})
	e.c.SetDebug(DebugCount)
	dir := e.add(t, e.root, "dir", DirectoryType)
	var wg sync.WaitGroup
	var mu sync.Mutex // the directory's i_rwsem for creations and deletions
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			tk := e.k.NewTask("churn")
			defer tk.Exit()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for i := 0; i < iterations(4000); i++ {
				name := fmt.Sprintf("n%d", r.IntN(64))
				q := MakeQstr(dir, name)
				switch r.IntN(4) {
				case 0, 1:
					tk.RCU.ReadLock()
					d, s := DLookupRCU(tk, dir, &q)
					if d != nil {
						_ = d.InodeRCU(tk)
						_ = d.Seq().Retry(s)
					}
					tk.RCU.ReadUnlock()
				case 2:
					mu.Lock()
					d := DLookup(tk, dir, &q)
					if d == nil {
						var err error
						if d, err = DAlloc(tk, dir, q); err != nil {
							panic(err)
						}
						DAdd(tk, d, newInode(RegularType).get())
					}
					mu.Unlock()
					Dput(tk, d)
				case 3:
					mu.Lock()
					if d := DLookup(tk, dir, &q); d != nil {
						if d.IsPositive() {
							DDelete(tk, d)
						} else {
							DDrop(tk, d)
						}
						mu.Unlock()
						Dput(tk, d)
					} else {
						mu.Unlock()
					}
				}
			}
		}(w)
	}
	wg.Wait()
	// The bound is not a hard one, in the model as in the kernel (whose
	// dcache LRU has none: the superblock shrinker trims it when memory
	// pressure runs it): a dput that goes over it while another task
	// prunes leaves the pruning to that task, and referenced dentries get
	// a second chance. What the model promises is that pruning, once the
	// churn stops, brings the LRU back within the bound.
	for i := 0; e.c.Stats().LRU > 16; i++ {
		if i == 64 {
			t.Fatalf("pruning does not bring the LRU back within its bound: %v", e.c.Stats())
		}
		e.c.SetMaxUnused(e.t, 16)
	}
	ShrinkDcacheParent(e.t, dir)
	if s := e.c.Stats(); s.Dentries != 2 || dir.Count() != 1 {
		t.Fatalf("after draining: %v\n%s", s, DumpTree(e.t, e.root))
	}
	e.k.RCU.Barrier()
	if e.c.UseAfterFree() != 0 || e.k.Log.Contains("WARNING") {
		t.Fatalf("uaf %d log %v", e.c.UseAfterFree(), e.k.Log.Lines())
	}
}
