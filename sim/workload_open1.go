package sim

import (
	"fmt"
	"runtime"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/fscrypt/fstest"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/hooks/open1"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
	"github.com/vfslab/vfslab/vfs/memfs"
)

// open1 is will-it-scale's open1_processes (tests/open1.c): every worker is
// a process of its own that opens and closes its own file,
// /tmp/willitscale.N, in a loop; all the files share /tmp, whose dentry
// every open reaches. Seed 004 (fscrypt-file-open) is about the two atomic
// operations fscrypt_file_open's dget_parent + dput made on that shared
// dentry's lockref per open. Package hooks/open1 has the workload (and a
// paired benchmark of it on memfs); this one runs its pieces on any of the
// filesystems with the A/B runner's tasks, which the counting run needs,
// and reports through the runner.
var _ = Register(&Workload{
	Name:    "open1",
	Summary: "will-it-scale open1_processes: each worker opens and closes its own file; all files in one shared directory /tmp",
	Patch:   hooks.FileOpenPatch,
	Params: []Param{
		{Name: "fs", Default: "ext4", Help: "memfs, ext4 or f2fs", Range: OneOf("memfs", "ext4", "f2fs")},
		{Name: "parent", Default: "plain", Help: "plain, or encrypted: /tmp has a v2 policy (key present), so every variant takes the parent's reference", Range: OneOf("plain", "encrypted")},
	},
	DefaultThreads: open1Threads(),
	Setup:          setupOpen1,
})

// open1Threads is 1, 2 and GOMAXPROCS.
func open1Threads() []int {
	ts := []int{1, 2}
	if p := runtime.GOMAXPROCS(0); p > 2 {
		ts = append(ts, p)
	}
	return ts
}

// open1Inst is the machine: the filesystem as root, /tmp, and its dentry
// watched so that atomic operations on its lockref are counted as
// lockref_rmw_watched.
type open1Inst struct {
	sys     *vfs.System
	setup   *kernel.Task
	dir     *dcache.Dentry[vfs.Inode]
	workers []*open1.Worker
}

func setupOpen1(env *Env) (Instance, error) {
	t := env.K.NewTask("will-it-scale")
	cfg := vfs.Config{Patches: env.Patches}
	var sys *vfs.System
	var p *vfs.Proc
	var err error
	switch fs := env.Param("fs"); fs {
	case "memfs":
		sys, p, err = memfs.Boot(t, cfg, nil)
	case "ext4":
		sys, p, err = ext4.Boot(t, cfg, nil)
	case "f2fs":
		sys, p, err = f2fs.Boot(t, cfg, nil)
	default:
		err = fmt.Errorf("bad fs %q: want memfs, ext4 or f2fs", fs)
	}
	if err != nil {
		t.Exit()
		return nil, fmt.Errorf("open1: %w", err)
	}
	in := &open1Inst{sys: sys, setup: t}
	fail := func(err error) (Instance, error) {
		p.Exit(t)
		in.Close()
		return nil, fmt.Errorf("open1: %w", err)
	}
	var key []byte
	switch parent := env.Param("parent"); parent {
	case "plain":
	case "encrypted":
		key = fstest.PlaintextStream("vfslab open1 key", 64)
	default:
		return fail(fmt.Errorf("bad parent %q: want plain or encrypted", parent))
	}
	if err := open1.MakeDir(t, p, key); err != nil {
		return fail(err)
	}
	if in.dir, err = open1.WatchDir(t, p); err != nil {
		return fail(err)
	}
	p.Exit(t)
	return in, nil
}

// Worker starts worker w's process, creates its file (as mkstemp does) and
// opens it once to warm the dentries; the operation is open(O_RDWR) +
// close.
func (in *open1Inst) Worker(w int, t *kernel.Task) (func(int) error, error) {
	wk, err := open1.NewWorker(t, in.sys, w)
	if err != nil {
		return nil, err
	}
	in.workers = append(in.workers, wk)
	op := func(i int) (err error) {
		defer t.Recover(&err)
		return wk.Op()
	}
	return op, op(0)
}

func (in *open1Inst) Close() error {
	for _, w := range in.workers {
		w.Exit()
	}
	if in.dir != nil {
		open1.UnwatchDir(in.setup, in.dir)
	}
	in.setup.Exit()
	return nil
}
