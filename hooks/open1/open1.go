// Package open1 is will-it-scale's open1 workload (tests/open1.c, run as
// open1_processes) on the simulator: T tasks, each a process of its own
// with its own file /tmp/willitscale.N, open it O_RDWR and close it in a
// loop. All the files share one directory, whose dentry every open of
// every task reaches: before seed 004 (fscrypt-file-open), ext4's
// fscrypt_file_open took and dropped a reference on it per open, two
// atomic read-modify-writes on one cache line that every CPU writes.
//
// The memfs root stands in for ext4 (its ->open calls fscrypt_file_open
// as ext4_file_open does). Setup builds the machine, Run times the loop,
// and a Bench with counting on also gives the events per open (per-task
// shards, merged after the run): lockref_rmw_watched (atomic operations on
// the shared directory's lockref), dget, rcu_read_lock and the rest.
//
// MakeDir, WatchDir, NewWorker and Worker.Op are the workload's pieces on
// any filesystem and with the caller's tasks, for runners that own both
// (package sim's open1 runs them on memfs, ext4 or f2fs).
package open1

import (
	"fmt"
	"sync"
	"time"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/memfs"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/vfs"
)

// Config describes one open1 run.
type Config struct {
	// Variant is the fscrypt-file-open variant ("base", "v1", "v2").
	Variant string
	// Encrypted makes /tmp an encrypted directory (key present), so that
	// every variant takes the reference on it.
	Encrypted bool
	// Tasks is the number of tasks (will-it-scale's -t).
	Tasks int
	// Counting gives every task its own event counters.
	Counting bool
}

// String names the configuration as the benchmarks do.
func (c Config) String() string {
	parent := "plain"
	if c.Encrypted {
		parent = "encrypted"
	}
	return fmt.Sprintf("%s/parent=%s/T=%d", c.Variant, parent, c.Tasks)
}

// Worker is one will-it-scale process: a task, the process it runs and
// its own file in /tmp.
type Worker struct {
	t    *kernel.Task
	p    *vfs.Proc
	path string
}

// MakeDir makes will-it-scale's shared directory /tmp (mode 01777) through
// p. With key (a raw master key) it becomes an encrypted directory, v2
// policy with the key added, so that every variant of seed 004 takes the
// reference on it.
func MakeDir(t *kernel.Task, p *vfs.Proc, key []byte) error {
	if err := p.Mkdir(t, "/tmp", 0o1777); err != nil {
		return err
	}
	if key != nil {
		if _, err := p.EncryptDir(t, "/tmp", key, 0, 0); err != nil {
			return err
		}
	}
	return nil
}

// WatchDir looks /tmp up through p and marks its dentry so that atomic
// operations on its lockref also count as lockref_rmw_watched. It returns
// the dentry with a reference, which UnwatchDir drops.
func WatchDir(t *kernel.Task, p *vfs.Proc) (*dcache.Dentry[vfs.Inode], error) {
	d, err := p.LookupDentry(t, "/tmp", true)
	if err != nil {
		return nil, err
	}
	d.Watch(true)
	return d, nil
}

// UnwatchDir ends WatchDir.
func UnwatchDir(t *kernel.Task, d *dcache.Dentry[vfs.Inode]) {
	d.Watch(false)
	dcache.Dput(t, d)
}

// NewWorker starts worker i: a process on sys run by task t, whose file
// /tmp/willitscale.<i> it creates as mkstemp does (O_CREAT|O_EXCL, 0600)
// and closes.
func NewWorker(t *kernel.Task, sys *vfs.System, i int) (*Worker, error) {
	w := &Worker{t: t, p: sys.NewProc(t, nil), path: fmt.Sprintf("/tmp/willitscale.%06d", i)}
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
func (w *Worker) Op() error {
	fd, err := w.p.Open(w.t, w.path, vfs.O_RDWR, 0)
	if err != nil {
		return err
	}
	return w.p.Close(w.t, fd)
}

// Exit ends the worker's process; its task is the caller's to end.
func (w *Worker) Exit() { w.p.Exit(w.t) }

// Bench is a machine set up for open1.
type Bench struct {
	Cfg Config
	K   *kernel.Kernel
	Sys *vfs.System
	// Dir is /tmp's dentry, watched so that atomic operations on its
	// lockref count as lockref_rmw_watched.
	Dir     *dcache.Dentry[vfs.Inode]
	setup   *kernel.Task
	workers []*Worker
}

// Setup builds the machine: a memfs root with the variant selected, /tmp
// (encrypted if asked), and one process per task with its file created
// (mkstemp) and closed.
func Setup(cfg Config) (*Bench, error) {
	set, err := patch.Set{}.With(hooks.FileOpenPatch, cfg.Variant)
	if err != nil {
		return nil, err
	}
	if cfg.Tasks < 1 {
		return nil, fmt.Errorf("open1: %d tasks", cfg.Tasks)
	}
	k := kernel.New()
	st := k.NewTask("will-it-scale")
	sys, p, err := memfs.Boot(st, vfs.Config{Patches: set}, nil)
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
	if err := MakeDir(st, p, key); err != nil {
		return nil, err
	}
	b := &Bench{Cfg: cfg, K: k, Sys: sys, setup: st}
	for i := 0; i < cfg.Tasks; i++ {
		t := k.NewTask(fmt.Sprintf("open1_processes/%d", i))
		if cfg.Counting {
			t.EnableCounting()
		}
		w, err := NewWorker(t, sys, i)
		if err != nil {
			return nil, err
		}
		b.workers = append(b.workers, w)
	}
	if b.Dir, err = WatchDir(st, p); err != nil {
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
func (b *Bench) Op(i int) error { return b.workers[i].Op() }

// Result is what a Run measured.
type Result struct {
	Ops     int
	Elapsed time.Duration
	// Events holds the merged counts of every task (empty without
	// Counting).
	Events *events.Counters
}

// OpsPerSec is the throughput.
func (r Result) OpsPerSec() float64 { return float64(r.Ops) / r.Elapsed.Seconds() }

// PerOp returns the count of e per open.
func (r Result) PerOp(e events.Event) float64 {
	return float64(r.Events.Get(e)) / float64(r.Ops)
}

// Run makes every task do n iterations at once (released together) and
// measures the wall time until the last one is done.
func (b *Bench) Run(n int) (Result, error) {
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
	r := Result{Ops: n * len(b.workers), Elapsed: time.Since(t0), Events: events.New()}
	for i, w := range b.workers {
		if errs[i] != nil {
			return r, errs[i]
		}
		r.Events.Merge(w.t.Ev.Sub(before[i]))
	}
	return r, nil
}

// Close ends the tasks and processes.
func (b *Bench) Close() {
	for _, w := range b.workers {
		w.Exit()
		w.t.Exit()
	}
	UnwatchDir(b.setup, b.Dir)
	b.setup.Exit()
}
