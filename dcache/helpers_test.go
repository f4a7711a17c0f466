package dcache

import (
	"sync/atomic"

	"github.com/vfslab/vfslab/kernel"
)

// tInode is the test inode: a number, a type, the alias list and the count
// of references the dcache holds (d_instantiate takes one, iput drops it).
type tInode struct {
	ino     uint64
	typ     Flags
	cf      bool // casefolded directory
	aliases Aliases[tInode]
	refs    atomic.Int32
}

var nextIno atomic.Uint64

func newInode(typ Flags) *tInode {
	i := &tInode{ino: nextIno.Add(1) + 100, typ: typ}
	return i
}

// get takes the reference the dentry will hold.
func (i *tInode) get() *tInode { i.refs.Add(1); return i }

func testOps() InodeOps[tInode] {
	return InodeOps[tInode]{
		Aliases: func(i *tInode) *Aliases[tInode] { return &i.aliases },
		Type:    func(i *tInode) Flags { return i.typ },
		Iput:    func(t *kernel.Task, i *tInode) { i.refs.Add(-1) },
		Ino:     func(i *tInode) uint64 { return i.ino },
	}
}

// tb is what the helpers need from *testing.T, *testing.B and *rapid.T.
type tb interface {
	Fatal(args ...any)
	Cleanup(func())
}

type env struct {
	k    *kernel.Kernel
	t    *kernel.Task
	c    *Cache[tInode]
	root *Dentry[tInode]
	ri   *tInode
}

func newEnv(tb tb, cfg Config[tInode]) *env {
	k := kernel.New()
	t := k.NewTask("test")
	t.EnableCounting()
	tb.Cleanup(t.Exit)
	if cfg.Inodes.Aliases == nil {
		cfg.Inodes = testOps()
	}
	if cfg.HashShift == 0 {
		cfg.HashShift = 10
	}
	c := NewCache(cfg)
	ri := newInode(DirectoryType)
	root, err := DMakeRoot(t, c, ri.get(), "sb", nil)
	if err != nil {
		tb.Fatal(err)
	}
	return &env{k: k, t: t, c: c, root: root, ri: ri}
}

// add creates name in dir as a hashed dentry with a new inode of type typ
// (nil typ 0 means negative) and returns it with the caller's reference.
func (e *env) add(tb tb, dir *Dentry[tInode], name string, typ Flags) *Dentry[tInode] {
	d, err := DAlloc(e.t, dir, MakeQstr(dir, name))
	if err != nil {
		tb.Fatal(err)
	}
	if typ == MissType {
		DAdd(e.t, d, nil)
	} else {
		DAdd(e.t, d, newInode(typ).get())
	}
	return d
}

func (e *env) lookup(dir *Dentry[tInode], name string) *Dentry[tInode] {
	q := MakeQstr(dir, name)
	return DLookup(e.t, dir, &q)
}
