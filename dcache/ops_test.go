package dcache

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

func TestDgetParentFastAndSlow(t *testing.T) {
	e := newEnv(t, Config[tInode]{})
	tk := e.t
	dir := e.add(t, e.root, "dir", DirectoryType)
	f := e.add(t, dir, "f", RegularType)
	dir.Watch(true)

	before := tk.Ev.Clone()
	p := DgetParent(tk, f)
	if p != dir || dir.Count() != 3 {
		t.Fatalf("dget_parent = %v", p)
	}
	Dput(tk, p)
	d := tk.Ev.Sub(before)
	if got := d.Get(EvLockrefRMWWatched); got != 2 {
		t.Fatalf("fast dget_parent+dput: %d atomic ops on the parent's lockref, want 2", got)
	}
	if d.Get(EvLockrefSlow) != 0 {
		t.Fatal("fast path took a lock")
	}

	// A rename in progress (d_seq odd) sends dget_parent to the slow path:
	// the optimistic reference is dropped and the parent locked.
	before = tk.Ev.Clone()
	f.seq.WriteBegin()
	p = DgetParent(tk, f)
	f.seq.WriteEnd()
	if p != dir || dir.Count() != 3 {
		t.Fatalf("slow dget_parent = %v", p)
	}
	Dput(tk, p)
	d = tk.Ev.Sub(before)
	if got := d.Get(EvLockrefRMWWatched); got != 4 {
		t.Fatalf("slow dget_parent+dput: %d atomic ops on the parent's lockref, want 4 (get, put, lock, put)", got)
	}

	// The RCU-read alternative of fscrypt_file_open v1/v2 touches no lockref.
	before = tk.Ev.Clone()
	tk.RCU.ReadLock()
	pi := f.ParentRCU(tk).InodeRCU(tk)
	tk.RCU.ReadUnlock()
	if pi != dir.Inode() {
		t.Fatal("d_inode_rcu of the parent")
	}
	if got := tk.Ev.Sub(before).Get(EvLockrefRMW); got != 0 {
		t.Fatalf("RCU read of the parent: %d lockref operations", got)
	}
	Dput(tk, f)
	Dput(tk, dir)
}

func TestNegativeDentriesAndDDelete(t *testing.T) {
	e := newEnv(t, Config[tInode]{})
	tk := e.t
	neg := e.add(t, e.root, "missing", MissType)
	if !neg.IsNegative() || neg.Unhashed() || neg.Inode() != nil {
		t.Fatalf("negative dentry: %v", neg)
	}
	if got := e.lookup(e.root, "missing"); got != neg {
		t.Fatal("negative dentries are found by d_lookup")
	} else {
		Dput(tk, got)
	}
	Dput(tk, neg)
	if s := e.c.Stats(); s.Negative != 1 || s.LRU != 1 {
		t.Fatalf("stats %v, want one negative dentry on the LRU", s)
	}
	// Instantiating it (create) makes it positive and no longer counted.
	got := e.lookup(e.root, "missing")
	ino := newInode(RegularType)
	DInstantiate(tk, got, ino.get())
	if got.IsNegative() || e.c.Stats().Negative != 0 {
		t.Fatalf("after d_instantiate: %v %v", got, e.c.Stats())
	}
	seq := got.seq.Raw()

	// d_delete with the only reference: stays hashed, turns negative, iput.
	DDelete(tk, got)
	if !got.IsNegative() || got.Unhashed() || ino.refs.Load() != 0 || got.seq.Raw() == seq {
		t.Fatalf("d_delete of the only user: %v inode refs %d", got, ino.refs.Load())
	}
	if !ino.aliases.Empty() {
		t.Fatal("alias not removed")
	}
	// d_delete with another user: unhashed, stays positive for that user.
	ino2 := newInode(RegularType)
	DInstantiate(tk, got, ino2.get())
	other := Dget(tk, got)
	DDelete(tk, got)
	if got.IsNegative() || !got.Unhashed() || e.lookup(e.root, "missing") != nil {
		t.Fatalf("d_delete with other users: %v", got)
	}
	Dput(tk, other)
	Dput(tk, got) // last reference of an unhashed dentry: killed
	if got.Count() != LockrefDead || ino2.refs.Load() != 0 {
		t.Fatalf("not killed: %v refs %d", got, ino2.refs.Load())
	}
}

func TestDMove(t *testing.T) {
	e := newEnv(t, Config[tInode]{})
	tk := e.t
	a := e.add(t, e.root, "a", DirectoryType)
	b := e.add(t, e.root, "b", DirectoryType)
	f := e.add(t, a, "f", RegularType)
	aCount, bCount := a.Count(), b.Count()
	seqF := f.seq.Raw()

	target := e.add(t, b, "g", MissType)
	DMove(tk, f, target)
	if f.Parent() != b || f.Name().Name != "g" || f.Unhashed() {
		t.Fatalf("moved dentry: %v", f)
	}
	if a.Count() != aCount-1 || b.Count() != bCount+2 {
		// b: +1 for target (still its child) and +1 for f.
		t.Fatalf("parent counts a=%d (was %d) b=%d (was %d)", a.Count(), aCount, b.Count(), bCount)
	}
	if f.seq.Raw() != seqF+2 {
		t.Fatal("d_move must run a d_seq write section on the moved dentry")
	}
	if !target.Unhashed() || target.Parent() != b {
		t.Fatalf("target after d_move: %v", target)
	}
	if e.lookup(a, "f") != nil {
		t.Fatal("old name still found")
	}
	if got := e.lookup(b, "g"); got != f {
		t.Fatalf("new name finds %v", got)
	} else {
		Dput(tk, got)
	}
	tk.RCU.ReadLock()
	q := MakeQstr(b, "g")
	got, seq := DLookupRCU(tk, b, &q)
	if got != f || f.seq.Retry(seq) {
		t.Fatal("RCU lookup of the new name")
	}
	tk.RCU.ReadUnlock()
	Dput(tk, target)
	if target.Count() != LockrefDead || b.Count() != bCount+1 {
		t.Fatalf("target not killed or b's count wrong: %v", b)
	}

	// Names of 40 bytes and more are external and shared by copy_name.
	long := strings.Repeat("L", 50)
	t2 := e.add(t, a, long, MissType)
	DMove(tk, f, t2)
	if f.Name().Name != long || f.Parent() != a {
		t.Fatalf("move to a long name: %v", f)
	}
	if got := e.t.Stats.Site(siteExtName).Live(); got != 1 {
		t.Fatalf("live external names %d, want 1 (shared)", got)
	}
	Dput(tk, t2)
	if got := e.t.Stats.Site(siteExtName).Live(); got != 1 {
		t.Fatalf("live external names %d after the target died, want 1", got)
	}
	t3 := e.add(t, a, "short", MissType)
	DMove(tk, f, t3)
	Dput(tk, t3)
	if got := e.t.Stats.Site(siteExtName).Live(); got != 0 {
		t.Fatalf("live external names %d, want 0", got)
	}
	Dput(tk, f)
	Dput(tk, a)
	Dput(tk, b)
}

func TestDExchange(t *testing.T) {
	e := newEnv(t, Config[tInode]{})
	tk := e.t
	a := e.add(t, e.root, "a", DirectoryType)
	b := e.add(t, e.root, "b", DirectoryType)
	x := e.add(t, a, "x", RegularType)
	y := e.add(t, b, "y", DirectoryType)
	ac, bc := a.Count(), b.Count()
	DExchange(tk, x, y)
	if x.Parent() != b || x.Name().Name != "y" || y.Parent() != a || y.Name().Name != "x" {
		t.Fatalf("exchange: %v / %v", x, y)
	}
	if a.Count() != ac || b.Count() != bc {
		t.Fatal("exchange must not change parent counts")
	}
	for _, c := range []struct {
		dir  *Dentry[tInode]
		name string
		want *Dentry[tInode]
	}{{a, "x", y}, {b, "y", x}} {
		got := e.lookup(c.dir, c.name)
		if got != c.want {
			t.Fatalf("lookup %s = %v", c.name, got)
		}
		Dput(tk, got)
	}
	if !children(tk, a)["x"] || !children(tk, b)["y"] {
		t.Fatal("children lists not updated")
	}
}

func children(tk *kernel.Task, d *Dentry[tInode]) map[string]bool {
	m := map[string]bool{}
	ForEachChild(tk, d, func(c *Dentry[tInode]) bool { m[c.Name().Name] = true; return true })
	return m
}

func TestDSpliceAlias(t *testing.T) {
	e := newEnv(t, Config[tInode]{})
	tk := e.t
	// A negative result.
	d, _ := DAlloc(tk, e.root, MakeQstr(e.root, "n"))
	if a, err := DSpliceAlias(tk, nil, d); a != nil || err != nil || d.Unhashed() || !d.IsNegative() {
		t.Fatalf("splice nil: %v %v %v", a, err, d)
	}
	// A regular file: no alias reuse.
	ino := newInode(RegularType)
	d2, _ := DAlloc(tk, e.root, MakeQstr(e.root, "r"))
	if a, err := DSpliceAlias(tk, ino.get(), d2); a != nil || err != nil || d2.Inode() != ino {
		t.Fatal("splice regular file")
	}
	// A directory already known under a stale (no-key) name moves to the
	// new one and keeps its identity; the no-key flag is cleared.
	dirIno := newInode(DirectoryType)
	old, _ := DAlloc(tk, e.root, MakeQstr(e.root, "AAAAnokey"))
	old.SetFlags(tk, NokeyName)
	DAdd(tk, old, dirIno.get())
	sub := e.add(t, old, "child", RegularType)
	fresh, _ := DAlloc(tk, e.root, MakeQstr(e.root, "plain"))
	alias, err := DSpliceAlias(tk, dirIno.get(), fresh)
	if err != nil || alias != old {
		t.Fatalf("splice dir: %v %v", alias, err)
	}
	if old.Name().Name != "plain" || old.IsNokeyName() || dirIno.refs.Load() != 1 {
		t.Fatalf("alias after splice: %v refs %d", old, dirIno.refs.Load())
	}
	if sub.Parent() != old {
		t.Fatal("the subtree must follow its directory")
	}
	Dput(tk, fresh)
	// ELOOP: the directory's alias is an ancestor of the new dentry.
	loop, _ := DAlloc(tk, sub.Parent(), MakeQstr(old, "loop"))
	if _, err := DSpliceAlias(tk, dirIno.get(), loop); !errors.Is(err, errno.ELOOP) {
		t.Fatalf("err = %v, want ELOOP", err)
	}
	dirIno.refs.Add(-1) // the caller's reference on ELOOP
	Dput(tk, loop)
	for _, x := range []*Dentry[tInode]{d, d2, old, alias, sub} {
		Dput(tk, x)
	}
}

func TestShrinkDcacheParentAndInvalidate(t *testing.T) {
	e := newEnv(t, Config[tInode]{})
	tk := e.t
	dir := e.add(t, e.root, "dir", DirectoryType)
	var names []string
	for _, n := range []string{"a", "b", "c"} {
		d := e.add(t, dir, n, DirectoryType)
		for _, m := range []string{"1", "2"} {
			Dput(tk, e.add(t, d, m, RegularType))
		}
		Dput(tk, d)
		names = append(names, n)
	}
	busy := e.lookup(dir, "b")
	if got := e.c.Stats().Dentries; got != 1+1+3+6 {
		t.Fatalf("dentries %d", got)
	}
	ShrinkDcacheParent(tk, dir)
	// Only the busy child survives (its own children were unused).
	if got, want := e.c.Stats().Dentries, int64(1+1+1); got != want {
		t.Fatalf("after shrink_dcache_parent: %d dentries, want %d\n%s", got, want, DumpTree(tk, e.root))
	}
	if dir.Count() != 2 {
		t.Fatalf("dir count %d, want 2 (caller + busy child)", dir.Count())
	}
	Dput(tk, busy)
	DInvalidate(tk, dir)
	if !dir.Unhashed() || e.c.Stats().Dentries != 2 {
		t.Fatalf("d_invalidate: %v %v", dir, e.c.Stats())
	}
	Dput(tk, dir)
	if e.c.Stats().Dentries != 1 || e.root.Count() != 1 {
		t.Fatalf("after the last dput: %v root %v", e.c.Stats(), e.root)
	}
	_ = names
}

func TestLRUBound(t *testing.T) {
	e := newEnv(t, Config[tInode]{MaxUnused: 8})
	tk := e.t
	for i := 0; i < 50; i++ {
		Dput(tk, e.add(t, e.root, "f"+strconv.Itoa(i), RegularType))
	}
	s := e.c.Stats()
	if s.LRU > 8 || s.Dentries > 9 {
		t.Fatalf("LRU over its bound: %v", s)
	}
	if tk.Ev.Get(EvDcachePrune) < 40 {
		t.Fatalf("pruned %d", tk.Ev.Get(EvDcachePrune))
	}
	// Recently looked-up dentries get a second chance.
	hot := e.lookup(e.root, "f49")
	if hot == nil {
		t.Fatal("the newest dentry was pruned")
	}
	Dput(tk, hot)
	for i := 50; i < 55; i++ {
		Dput(tk, e.add(t, e.root, "f"+strconv.Itoa(i), RegularType))
	}
	if hot.Count() == LockrefDead {
		t.Fatal("a referenced dentry was pruned before colder ones")
	}
	ShrinkDcacheSB(tk, e.c)
	if s := e.c.Stats(); s.LRU != 0 || s.Dentries != 1 || s.Unused != 0 {
		t.Fatalf("after shrink_dcache_sb: %v", s)
	}
	e.c.SetMaxUnused(tk, -1)
	for i := 0; i < 20; i++ {
		Dput(tk, e.add(t, e.root, "g"+strconv.Itoa(i), RegularType))
	}
	if e.c.Stats().LRU != 20 {
		t.Fatal("unbounded LRU pruned")
	}
}

func TestPoisonDetection(t *testing.T) {
	e := newEnv(t, Config[tInode]{})
	tk := e.t
	e.c.SetDebug(DebugCount)
	d := e.add(t, e.root, "gone", RegularType)
	// A buggy reader keeps the pointer beyond its RCU section.
	tk.RCU.ReadLock()
	q := MakeQstr(e.root, "gone")
	stale, _ := DLookupRCU(tk, e.root, &q)
	tk.RCU.ReadUnlock()
	DDrop(tk, d)
	Dput(tk, d)
	e.k.RCU.Barrier()
	if e.c.UseAfterFree() != 0 {
		t.Fatal("no access yet")
	}
	tk.RCU.ReadLock()
	_ = stale.InodeRCU(tk)
	tk.RCU.ReadUnlock()
	if e.c.UseAfterFree() != 1 || tk.Ev.Get(EvDentryUAF) != 1 {
		t.Fatalf("use after free not counted: %d", e.c.UseAfterFree())
	}
	// Outside an RCU section the accessors warn.
	_ = e.root.ParentRCU(tk)
	if !e.k.Log.Contains("suspicious RCU usage") {
		t.Fatal("no lockdep-like warning")
	}
	// DebugBUG raises a KASAN report through the simulator boundary.
	e.c.SetDebug(DebugBUG)
	err := func() (err error) {
		defer tk.Recover(&err)
		tk.RCU.ReadLock()
		defer tk.RCU.ReadUnlock()
		_ = stale.ParentRCU(tk)
		return nil
	}()
	b, ok := kernel.AsBug(err)
	if !ok || b.Kind != "KASAN: slab-use-after-free" || !strings.Contains(b.Msg, `"gone"`) {
		t.Fatalf("err = %v", err)
	}
	if e.k.Bugs.Len() != 1 {
		t.Fatal("report not recorded")
	}
}

func TestReadersInsideRCUNeverSeePoison(t *testing.T) {
	// A reader that holds its RCU section across the free keeps the dentry
	// alive: the grace period waits for it.
	e := newEnv(t, Config[tInode]{})
	tk := e.t
	e.c.SetDebug(DebugCount)
	d := e.add(t, e.root, "x", RegularType)
	reader := e.k.NewTask("reader")
	defer reader.Exit()
	reader.RCU.ReadLock()
	q := MakeQstr(e.root, "x")
	found, _ := DLookupRCU(reader, e.root, &q)
	DDrop(tk, d)
	Dput(tk, d)
	done := make(chan struct{})
	go func() { e.k.RCU.Barrier(); close(done) }()
	_ = found.InodeRCU(reader)
	if found.Poisoned() {
		t.Fatal("poisoned while a reader is inside its section")
	}
	reader.RCU.ReadUnlock()
	<-done
	if !found.Poisoned() || e.c.UseAfterFree() != 0 {
		t.Fatal("poisoning")
	}
}

func TestDumpAndPath(t *testing.T) {
	e := newEnv(t, Config[tInode]{})
	tk := e.t
	// Deterministic inode numbers for the golden dump.
	e.ri.ino = 1
	mk := func(dir *Dentry[tInode], name string, typ Flags, ino uint64) *Dentry[tInode] {
		d := e.add(t, dir, name, typ)
		if i := d.Inode(); i != nil {
			i.ino = ino
		}
		return d
	}
	usr := mk(e.root, "usr", DirectoryType, 2)
	bin := mk(usr, "bin", DirectoryType, 3)
	ls := mk(bin, "ls", RegularType, 4)
	neg := mk(bin, "nope", MissType, 0)
	Dput(tk, neg)
	want := `dentry "/" count=2 flags=DIRECTORY inode=1
  dentry "usr" count=2 flags=DIRECTORY inode=2
    dentry "bin" count=3 flags=DIRECTORY inode=3
      dentry "ls" count=1 flags=REGULAR inode=4
      dentry "nope" count=0 flags=LRU_LIST inode=negative
`
	if diff := cmp.Diff(want, DumpTree(tk, e.root)); diff != "" {
		t.Errorf("tree dump (-want +got):\n%s", diff)
	}
	if got := DentryPath(tk, ls); got != "/usr/bin/ls" {
		t.Errorf("path %q", got)
	}
	DDrop(tk, ls)
	if got := DentryPath(tk, ls); got != "/usr/bin/ls (deleted)" {
		t.Errorf("path %q", got)
	}
	line := ls.String()
	wantLine := fmt.Sprintf(`dentry "ls" hash=%#08x parent="bin" count=1 flags=REGULAR inode=4 seq=`, FullNameHash(bin.Salt(), "ls"))
	if !strings.HasPrefix(line, wantLine) {
		t.Errorf("String:\n got %s\nwant %s...", line, wantLine)
	}
	if f := (LRUList | Referenced | NokeyName | SymlinkType).String(); f != "REFERENCED|LRU_LIST|NOKEY_NAME|SYMLINK" {
		t.Errorf("flags %s", f)
	}
	if Flags(0).String() != "0" {
		t.Error("zero flags")
	}
	_ = usr
}

func TestChildrenSnapshot(t *testing.T) {
	e := newEnv(t, Config[tInode]{})
	tk := e.t
	for _, n := range []string{"c", "a", "b"} {
		Dput(tk, e.add(t, e.root, n, RegularType))
	}
	Dput(tk, e.add(t, e.root, "neg", MissType))
	kids := Children(tk, e.root)
	var names []string
	for _, k := range kids {
		names = append(names, k.Name().Name)
		if k.Count() != 1 {
			t.Fatalf("%v not referenced", k)
		}
		Dput(tk, k)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, names); diff != "" {
		t.Fatal(diff)
	}
}

func TestOperationsDeleteReleaseRevalidate(t *testing.T) {
	e := newEnv(t, Config[tInode]{})
	tk := e.t
	var released []string
	ops := &Operations[tInode]{
		Delete:  func(d *Dentry[tInode]) bool { return d.Name().Name == "tmp" },
		Release: func(d *Dentry[tInode]) { released = append(released, d.Name().Name) },
		Revalidate: func(t *kernel.Task, dir *tInode, name *Qstr, d *Dentry[tInode], flags uint32) (bool, error) {
			if flags != 0 {
				return false, syscall.Errno(10) // ECHILD: cannot decide in RCU mode
			}
			return name.Name != "stale", nil
		},
	}
	DSetDOp(tk, e.root, ops)
	keep := e.add(t, e.root, "keep", RegularType)
	tmp := e.add(t, e.root, "tmp", RegularType)
	if f := keep.Flags(); f&(OpDelete|OpRevalidate) != OpDelete|OpRevalidate || f&OpHash != 0 {
		t.Fatalf("op flags %v", f)
	}
	// A parent whose own DCACHE_OP_REVALIDATE was cleared (as
	// fscrypt_prepare_dentry does for a dentry with a real name) still
	// gives its children the flags of the operations: d_alloc derives
	// them with d_set_d_op, it does not copy the parent's.
	keep.ClearFlags(tk, OpRevalidate)
	child := e.add(t, keep, "child", RegularType)
	if f := child.Flags(); f&(OpDelete|OpRevalidate) != OpDelete|OpRevalidate {
		t.Fatalf("child of a parent without OpRevalidate: op flags %v", f)
	}
	DDrop(tk, child)
	Dput(tk, child) // unhashed: killed, dropping its reference on keep
	released = nil
	keep.SetFlags(tk, OpRevalidate)
	Dput(tk, keep)
	Dput(tk, tmp) // d_delete says kill it, hashed or not
	if keep.Count() != 0 || tmp.Count() != LockrefDead {
		t.Fatalf("keep %v tmp %v", keep, tmp)
	}
	if len(released) != 1 || released[0] != "tmp" {
		t.Fatalf("d_release calls %v", released)
	}
	for _, c := range []struct {
		name  string
		flags uint32
		valid bool
		err   bool
	}{{"keep", 0, true, false}, {"stale", 0, false, false}, {"keep", 1, false, true}} {
		q := Qstr{Name: c.name}
		valid, err := DRevalidate(tk, e.ri, &q, keep, c.flags)
		if valid != c.valid || (err != nil) != c.err {
			t.Errorf("d_revalidate(%s, %d) = %v, %v", c.name, c.flags, valid, err)
		}
	}
	plain := newEnv(t, Config[tInode]{})
	d := plain.add(t, plain.root, "x", RegularType)
	if ok, err := DRevalidate(plain.t, plain.ri, &Qstr{Name: "x"}, d, 1); !ok || err != nil {
		t.Fatal("no d_revalidate: always valid")
	}
}

func TestSmallerHelpers(t *testing.T) {
	e := newEnv(t, Config[tInode]{})
	tk := e.t
	// d_alloc_name hashes with hashlen_string and stops at a NUL.
	d, err := DAllocName(tk, e.root, "name\x00junk")
	if err != nil || d.Name().Name != "name" || d.Name().Hash != FullNameHash(e.root.Salt(), "name") {
		t.Fatalf("d_alloc_name: %v %v", d, err)
	}
	DAdd(tk, d, newInode(DirectoryType).get())
	if got, _ := DHashAndLookup(tk, e.root, "name"); got != d {
		t.Fatal("d_alloc_name dentry not found by d_hash_and_lookup")
	} else {
		Dput(tk, got)
	}
	sub := e.add(t, d, "sub", RegularType)
	if !IsSubdir(sub, e.root) || !IsSubdir(sub, d) || IsSubdir(d, sub) || !IsSubdir(d, d) {
		t.Fatal("is_subdir")
	}
	// d_find_alias / d_find_any_alias.
	ino := d.Inode()
	if a := DFindAlias(tk, e.c, ino); a != d {
		t.Fatal("d_find_alias")
	} else {
		Dput(tk, a)
	}
	if a := DFindAnyAlias(tk, e.c, ino); a != d {
		t.Fatal("d_find_any_alias")
	} else {
		Dput(tk, a)
	}
	// Drop, then rehash.
	d.Lock(tk)
	DDropLocked(d)
	d.Unlock()
	if !d.Unhashed() || e.lookup(e.root, "name") != nil {
		t.Fatal("__d_drop")
	}
	DRehash(tk, d)
	if got := e.lookup(e.root, "name"); got != d {
		t.Fatal("d_rehash")
	} else {
		Dput(tk, got)
	}
	// dget_dlock and lockref_get_not_dead.
	d.Lock(tk)
	DgetDlock(tk, d)
	d.Unlock()
	if !DgetNotDead(tk, d) || d.Count() != 4 { // caller, sub, dget_dlock, get_not_dead
		t.Fatalf("count %d", d.Count())
	}
	Dput(tk, d)
	Dput(tk, d)
	// An anonymous disconnected root is killed by its last dput.
	anon, err := DAllocAnon(tk, e.c, "sb", nil)
	if err != nil || !anon.IsRoot() || anon.Flags()&Disconnected == 0 {
		t.Fatalf("d_alloc_anon: %v", anon)
	}
	Dput(tk, anon)
	if anon.Count() != LockrefDead {
		t.Fatal("disconnected dentries are not cached")
	}
	Dput(tk, sub)
	Dput(tk, d)
	if _, err := DMakeRoot[tInode](tk, e.c, nil, "sb", nil); !errors.Is(err, errno.ENOMEM) {
		t.Fatal("d_make_root(NULL)")
	}
}
