package sim

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/memfs"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/vfs"
)

// open1 is will-it-scale's open1_processes (tests/open1.c): every worker is
// a process of its own that opens and closes its own file,
// willitscale.N, in a loop; all the files share one directory, whose
// dentry every open reaches. Seed 004 (fscrypt-file-open) is about the two
// atomic operations fscrypt_file_open's dget_parent + dput made on that
// shared dentry's lockref per open, which ext4_file_open (and
// f2fs_file_open) make on every open. The machine is the one the seed's
// figure was measured on, reduced: a tmpfs root (memfs, whose open never
// calls fscrypt_file_open) and the filesystem under test, made with the
// encrypt feature and mounted on /mnt/scratch, whose directory
// /mnt/scratch/tmp holds the files (open1Dir). The workload runs on either
// filesystem on a block device with the A/B runner's tasks; Open1Bench
// runs the same pieces on ext4 with its own tasks, for the exact-count
// tests and the paired benchmarks of open1_test.go.
var _ = Register(&Workload{
	Name:    "open1",
	Summary: "will-it-scale open1_processes: each worker opens and closes its own file; all files in one shared directory on the scratch mount, " + open1Dir,
	Patch:   hooks.FileOpenPatch,
	Params: []Param{
		{Name: "fs", Default: "ext4", Help: "the scratch mount's filesystem, one on a block device with fscrypt (" + fsRange(true).String() + ")", Range: fsRange(true)},
		{Name: "parent", Default: "plain", Help: "plain, or encrypted: " + open1Dir + " has a v2 policy (key present), so every variant takes the parent's reference", Range: OneOf("plain", "encrypted")},
	},
	DefaultThreads: open1Threads(),
	Setup:          setupOpen1,
	Headlines: []*Headline{{
		Patch:      hooks.FileOpenPatch,
		Params:     map[string]string{"fs": "ext4"},
		Threads:    []int{2},
		Metric:     MetricOps,
		SeedRatios: map[string]float64{"v2": 25575494.0 / 12539898},
		Seed:       "will-it-scale open1_processes -t 20, Sapphire Rapids: 12,539,898 -> 25,575,494 ops/s",
		// The report's budget (docs/CLI.md): opens per worker per timed run.
		Size:      Size{Ops: 100000, Count: 5},
		DebugSize: Size{Ops: 10000, Count: 5},
	}},
})

// open1Threads is 1, 2 and GOMAXPROCS.
func open1Threads() []int {
	ts := []int{1, 2}
	if p := runtime.GOMAXPROCS(0); p > 2 {
		ts = append(ts, p)
	}
	return ts
}

// open1Dir is the workers' shared directory, on the scratch mount.
const open1Dir = "/mnt/scratch/tmp"

// open1Inst is the machine: the tmpfs root, the filesystem under test on
// /mnt/scratch, open1Dir, and its dentry watched so that atomic operations
// on its lockref are counted as lockref_rmw_watched.
type open1Inst struct {
	sys     *vfs.System
	setup   *kernel.Task
	dir     *dcache.Dentry[vfs.Inode]
	workers []*open1Worker
}

func setupOpen1(env *Env) (Instance, error) {
	t := env.K.NewTask("will-it-scale")
	fst, err := fsType(env.Param("fs"), true)
	var sys *vfs.System
	var p *vfs.Proc
	if err == nil {
		sys, p, err = open1Boot(t, fst)
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
		key = bare.PlaintextStream("vfslab open1 key", 64)
	default:
		return fail(fmt.Errorf("bad parent %q: want plain or encrypted", parent))
	}
	if err := open1MakeDir(t, p, key); err != nil {
		return fail(err)
	}
	if in.dir, err = open1WatchDir(t, p); err != nil {
		return fail(err)
	}
	p.Exit(t)
	return in, nil
}

// Worker starts worker w's process, creates its file (as mkstemp does) and
// opens it once to warm the dentries; the operation is open(O_RDWR) +
// close.
func (in *open1Inst) Worker(w int, t *kernel.Task) (func(int) error, error) {
	wk, err := newOpen1Worker(t, in.sys, w)
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
		open1UnwatchDir(in.setup, in.dir)
	}
	in.setup.Exit()
	return nil
}

// Open1Bench and its pieces are will-it-scale's open1 (tests/open1.c, run
// as open1_processes) on open1's machine with ext4 on the scratch mount
// and tasks of its own: T tasks, each a process with its own file
// willitscale.N in open1Dir, open it O_RDWR and close it in a loop.
// NewOpen1Bench builds the machine, Run times the loop, and a bench with
// counting on also gives the
// events per open (per-task shards, merged after the run):
// lockref_rmw_watched (atomic operations on the shared directory's
// lockref), dget, rcu_read_lock and the rest. The open1 workload above runs
// the same pieces (open1MakeDir, open1WatchDir, newOpen1Worker) with the
// A/B runner's tasks.

// Open1Config describes one open1 run.
type Open1Config struct {
	// Variant is the fscrypt-file-open variant ("base", "v1", "v2").
	Variant string
	// Encrypted makes open1Dir an encrypted directory (key present), so
	// that every variant takes the reference on it.
	Encrypted bool
	// Tasks is the number of tasks (will-it-scale's -t).
	Tasks int
	// Counting gives every task its own event counters.
	Counting bool
}

// String names the configuration as the benchmarks do.
func (c Open1Config) String() string {
	parent := "plain"
	if c.Encrypted {
		parent = "encrypted"
	}
	return fmt.Sprintf("%s/parent=%s/T=%d", c.Variant, parent, c.Tasks)
}

// open1Worker is one will-it-scale process: a task, the process it runs and
// its own file in open1Dir.
type open1Worker struct {
	t    *kernel.Task
	p    *vfs.Proc
	path string
}

// open1Boot boots open1's machine: a tmpfs (memfs) root, and a new
// filesystem of type fst made with the encrypt feature (mkfs -O encrypt)
// and mounted on /mnt/scratch, as an xfstests machine's scratch device
// is. It returns the machine and a root process on it.
func open1Boot(t *kernel.Task, fst *vfs.FileSystemType) (*vfs.System, *vfs.Proc, error) {
	sys, p, err := memfs.Boot(t, vfs.Config{}, nil)
	if err != nil {
		return nil, nil, err
	}
	err = p.Mkdir(t, "/mnt", 0o755)
	if err == nil {
		err = p.Mkdir(t, "/mnt/scratch", 0o755)
	}
	var opts vfs.MountOptions
	if err == nil {
		opts, err = vfs.FormatFeatures(t, fst, vfs.Features{Encrypt: true}, "")
	}
	if err == nil {
		_, err = sys.Mount(t, p, fst, "/mnt/scratch", opts)
	}
	if err != nil {
		p.Exit(t)
		return nil, nil, err
	}
	return sys, p, nil
}

// open1MakeDir makes will-it-scale's shared directory open1Dir (mode
// 01777, as /tmp is) through p. With key (a raw master key) it becomes an
// encrypted directory, v2 policy with the key added, so that every
// variant of seed 004 takes the reference on it.
func open1MakeDir(t *kernel.Task, p *vfs.Proc, key []byte) error {
	if err := p.Mkdir(t, open1Dir, 0o1777); err != nil {
		return err
	}
	if key != nil {
		if _, err := p.EncryptDir(t, open1Dir, key, 0, 0); err != nil {
			return err
		}
	}
	return nil
}

// open1WatchDir looks open1Dir up through p and marks its dentry so that
// atomic operations on its lockref also count as lockref_rmw_watched. It
// returns the dentry with a reference, which open1UnwatchDir drops.
func open1WatchDir(t *kernel.Task, p *vfs.Proc) (*dcache.Dentry[vfs.Inode], error) {
	d, err := p.LookupDentry(t, open1Dir, true)
	if err != nil {
		return nil, err
	}
	d.Watch(true)
	return d, nil
}

// open1UnwatchDir ends open1WatchDir.
func open1UnwatchDir(t *kernel.Task, d *dcache.Dentry[vfs.Inode]) {
	d.Watch(false)
	dcache.Dput(t, d)
}

// newOpen1Worker starts worker i: a process on sys run by task t, whose file
// willitscale.<i> in open1Dir it creates as mkstemp does (O_CREAT|O_EXCL,
// 0600) and closes.
func newOpen1Worker(t *kernel.Task, sys *vfs.System, i int) (*open1Worker, error) {
	w := &open1Worker{t: t, p: sys.NewProc(t, nil), path: fmt.Sprintf("%s/willitscale.%06d", open1Dir, i)}
	fd, err := w.p.Open(t, w.path, vfs.O_CREAT|vfs.O_RDWR|vfs.O_EXCL, 0o600)
	if err == nil {
		err = w.p.Close(t, fd)
	}
	if err != nil {
		w.Exit()
		return nil, err
	}
	return w, nil
}

// Op is one iteration of open1's loop on the worker's task: open its file
// O_RDWR and close it.
func (w *open1Worker) Op() error {
	fd, err := w.p.Open(w.t, w.path, vfs.O_RDWR, 0)
	if err != nil {
		return err
	}
	return w.p.Close(w.t, fd)
}

// Exit ends the worker's process; its task is the caller's to end.
func (w *open1Worker) Exit() { w.p.Exit(w.t) }

// Open1Bench is a machine set up for open1.
type Open1Bench struct {
	Cfg Open1Config
	K   *kernel.Kernel
	Sys *vfs.System
	// Dir is open1Dir's dentry, watched so that atomic operations on its
	// lockref count as lockref_rmw_watched.
	Dir     *dcache.Dentry[vfs.Inode]
	setup   *kernel.Task
	workers []*open1Worker
}

// NewOpen1Bench builds the machine: open1Boot's with ext4 and the variant
// selected, open1Dir (encrypted if asked), and one process per task with
// its file created (mkstemp) and closed.
func NewOpen1Bench(cfg Open1Config) (*Open1Bench, error) {
	set, err := patch.Set{}.With(hooks.FileOpenPatch, cfg.Variant)
	if err != nil {
		return nil, err
	}
	if cfg.Tasks < 1 {
		return nil, fmt.Errorf("open1: %d tasks", cfg.Tasks)
	}
	k := kernel.NewWith(kernel.Config{Patches: set})
	st := k.NewTask("will-it-scale")
	fst, err := fsType("ext4", true)
	if err != nil {
		return nil, err
	}
	sys, p, err := open1Boot(st, fst)
	if err != nil {
		return nil, err
	}
	defer p.Exit(st)
	var key []byte
	if cfg.Encrypted {
		key = make([]byte, 64)
		for i := range key {
			key[i] = byte(i + 1)
		}
	}
	if err := open1MakeDir(st, p, key); err != nil {
		return nil, err
	}
	b := &Open1Bench{Cfg: cfg, K: k, Sys: sys, setup: st}
	for i := 0; i < cfg.Tasks; i++ {
		t := k.NewTask(fmt.Sprintf("open1_processes/%d", i))
		if cfg.Counting {
			t.EnableCounting()
		}
		w, err := newOpen1Worker(t, sys, i)
		if err != nil {
			return nil, err
		}
		b.workers = append(b.workers, w)
	}
	if b.Dir, err = open1WatchDir(st, p); err != nil {
		return nil, err
	}
	// Warm every task's path once, then forget what setup counted.
	for i := range b.workers {
		if err := b.Op(i); err != nil {
			return nil, err
		}
		b.workers[i].t.Ev.Reset()
	}
	return b, nil
}

// Op is one iteration of task i: open its file O_RDWR and close it.
func (b *Open1Bench) Op(i int) error { return b.workers[i].Op() }

// Open1Result is what a Run measured.
type Open1Result struct {
	Ops     int
	Elapsed time.Duration
	// Events holds the merged counts of every task (empty without
	// Counting).
	Events *events.Counters
}

// OpsPerSec is the throughput.
func (r Open1Result) OpsPerSec() float64 { return float64(r.Ops) / r.Elapsed.Seconds() }

// PerOp returns the count of e per open.
func (r Open1Result) PerOp(e events.Event) float64 {
	return float64(r.Events.Get(e)) / float64(r.Ops)
}

// Run makes every task do n iterations at once (released together) and
// measures the wall time until the last one is done.
func (b *Open1Bench) Run(n int) (Open1Result, error) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, len(b.workers))
	before := make([]*events.Counters, len(b.workers))
	for i, w := range b.workers {
		before[i] = w.t.Ev.Clone()
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			for j := 0; j < n; j++ {
				if err := b.Op(i); err != nil {
					errs[i] = err
					return
				}
			}
		}(i)
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	r := Open1Result{Ops: n * len(b.workers), Elapsed: time.Since(t0), Events: events.New()}
	for i, w := range b.workers {
		if errs[i] != nil {
			return r, errs[i]
		}
		r.Events.Merge(w.t.Ev.Sub(before[i]))
	}
	return r, nil
}

// Close ends the tasks and processes.
func (b *Open1Bench) Close() {
	for _, w := range b.workers {
		w.Exit()
		w.t.Exit()
	}
	open1UnwatchDir(b.setup, b.Dir)
	b.setup.Exit()
}
