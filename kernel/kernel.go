// Package kernel holds what every layer of the simulator shares: the
// simulated machine (Kernel: its RCU domain, kernel log and BUG records) and
// the task (Task: the model of `current`, carrying the task's allocation
// context, event counters and RCU reader).
//
// Every operation that can allocate, count or enter an RCU section takes the
// calling *Task as its first argument, the way gVisor threads a context
// through its VFS: a Task is owned by one goroutine, so its counters and
// allocation statistics are plain memory that no other goroutine writes.
package kernel

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/rcu"
)

// Kernel is one simulated machine: the state shared by all its tasks.
type Kernel struct {
	// RCU is the machine's RCU domain.
	RCU *rcu.Domain
	// Log is the kernel log (dmesg).
	Log *Log
	// Bugs records every BUG and KASAN report raised by the machine's tasks.
	Bugs *BugLog
	// Warnings records every WARN and WARN_ON report (warn.go).
	Warnings *WarnLog
	// SlubDebug makes the tasks created afterwards allocate as a kernel
	// booted with slub_debug=FZPU does (kmem.SlubDebug), as debug and
	// Android userdebug kernels do.
	SlubDebug bool
	// Failslab is the machine's failslab (mm/failslab.c): the knobs of
	// /sys/kernel/debug/failslab/, consulted by every task's allocations.
	Failslab *kmem.FailslabAttr
	// Tracker is the machine's object tracker (Config.Track), or nil.
	Tracker *kmem.Tracker

	nextPID atomic.Int64
	// patches is the machine's patch selection, fixed when it is made.
	patches patch.Set
	// counting makes every task count (Config.Counting); counted lists
	// the counting tasks, under countedMu.
	counting  bool
	countedMu sync.Mutex
	counted   []*Task

	workqueues workqueues    // alloc_workqueue's list (workqueue.go)
	random     random        // get_random_bytes (random.go)
	statics    statics       // subsystems' per-machine state (static.go)
	tainted    atomic.Uint64 // tainted_mask (panic.go)
}

// Config is what a machine is made with (NewWith).
type Config struct {
	// Patches selects the variant of every modelled patch that the
	// machine's code runs, in every layer (dcache, kmem, crypto, fscrypt,
	// the filesystems): the kernel that was built with those patches.
	Patches patch.Set
	// SlubDebug sets Kernel.SlubDebug.
	SlubDebug bool
	// Counting makes every task created on the machine count events and
	// allocations (EnableCounting) and keeps the list of those tasks
	// (CountedTasks), so that a measurement sees the tasks a workload
	// starts on its own (block device completions, workqueue workers,
	// crypto engine threads) as well as the ones it is handed.
	Counting bool
	// Track gives the machine a kmem.Tracker (Kernel.Tracker) that every
	// task's allocations go through: KASAN's and kmemleak's per-object
	// records, for vfslab review and debug runs. Off, it costs a nil
	// check per kmalloc and kfree.
	Track bool
}

// New returns a machine with its own RCU domain, log and BUG records,
// running every patch's base variant and counting nothing.
func New() *Kernel { return NewWith(Config{}) }

// NewWith returns a machine made with cfg.
func NewWith(cfg Config) *Kernel {
	k := &Kernel{RCU: &rcu.Domain{}, Log: &Log{}, Bugs: &BugLog{}, Warnings: &WarnLog{}, Failslab: kmem.NewFailslab(0),
		SlubDebug: cfg.SlubDebug, patches: cfg.Patches, counting: cfg.Counting}
	k.Failslab.Printk = k.Log.append
	if cfg.Track {
		k.Tracker = kmem.NewTracker()
	}
	return k
}

// Patches is the machine's patch selection, which every layer reads its
// variant from (through the Selector its patch's Bind returned): one load
// of the task's kernel and one array load. It never changes.
func (k *Kernel) Patches() *patch.Set { return &k.patches }

// Counting reports whether every task of the machine counts
// (Config.Counting).
func (k *Kernel) Counting() bool { return k.counting }

// CountedTasks returns, on a counting machine, every task that has counted
// so far, in creation order, exited ones included; nil otherwise. Reading
// a task's counters is safe once nothing runs on it (its operation
// returned and synchronised with the reader).
func (k *Kernel) CountedTasks() []*Task {
	k.countedMu.Lock()
	defer k.countedMu.Unlock()
	return append([]*Task(nil), k.counted...)
}

// Task is the model of a kernel task (struct task_struct, `current`). It is
// owned by one goroutine. The embedded kmem.Ctx carries its allocation
// statistics (Stats), fault injector (Fail) and event counters (Ev); each is
// nil when disabled.
type Task struct {
	kmem.Ctx
	// K is the machine the task runs on.
	K *Kernel
	// PID and Comm identify the task in log lines and BUG reports.
	PID  int
	Comm string
	// RCU is the task's RCU reader.
	RCU *rcu.Reader
	// Tracer, when not nil, records the functions the task runs (see
	// Trace).
	Tracer *Tracer
	// Cred is current->cred, the credentials of the process whose
	// syscall the task runs (current_cred()); nil reads as RootCred.
	Cred *Cred
	// Sleep, when set, is how the task sleeps in a wait_event loop until
	// ready is closed (Schedule); it returns false when a signal
	// interrupted the sleep. A machine that runs its syscalls under a
	// lock of its own releases it while the task sleeps.
	Sleep func(ready <-chan struct{}) bool

	counted bool
	held    heldLocks // lockdep's held_locks (lockdep.go)
}

// CurrentCred is current_cred(): t.Cred, or RootCred when the task has
// none.
func (t *Task) CurrentCred() *Cred {
	if t.Cred == nil {
		return RootCred
	}
	return t.Cred
}

// NewTask creates a task named comm on k. It counts nothing until
// EnableCounting is called, unless k is a counting machine
// (Config.Counting). Call Exit when the task is done.
func (k *Kernel) NewTask(comm string) *Task {
	t := &Task{K: k, PID: int(k.nextPID.Add(1)), Comm: comm}
	t.RCU = k.RCU.NewReader(nil)
	t.Slab = k.Failslab
	t.Track = k.Tracker
	if k.SlubDebug {
		t.Debug = &kmem.SlubDebug{}
	}
	if k.counting {
		t.EnableCounting()
	}
	return t
}

// EnableCounting gives the task fresh event counters and allocation
// statistics; on a counting machine the task joins CountedTasks.
func (t *Task) EnableCounting() {
	t.Ev = events.New()
	t.Stats = new(kmem.Stats)
	t.RCU.Close()
	t.RCU = t.K.RCU.NewReader(t.Ev)
	if t.K.counting && !t.counted {
		t.counted = true
		t.K.countedMu.Lock()
		t.K.counted = append(t.K.counted, t)
		t.K.countedMu.Unlock()
	}
}

// Schedule is the schedule() of a wait_event_interruptible loop: the
// task sleeps until ready is closed, through Sleep when the machine set
// one. false means a signal ended the sleep (-ERESTARTSYS).
func (t *Task) Schedule(ready <-chan struct{}) bool {
	if t.Sleep != nil {
		return t.Sleep(ready)
	}
	<-ready
	return true
}

// Exit unregisters the task's RCU reader.
func (t *Task) Exit() { t.RCU.Close() }

// Kmalloc is kmem.Kmalloc in the task's allocation context.
func (t *Task) Kmalloc(site *kmem.Site, size int, flags kmem.GFP) ([]byte, error) {
	return kmem.Kmalloc(&t.Ctx, site, size, flags)
}

// Kzalloc is kmem.Kzalloc in the task's allocation context.
func (t *Task) Kzalloc(site *kmem.Site, size int, flags kmem.GFP) ([]byte, error) {
	return kmem.Kzalloc(&t.Ctx, site, size, flags)
}

// Kfree is kmem.Kfree in the task's allocation context.
func (t *Task) Kfree(site *kmem.Site, buf []byte) { kmem.Kfree(&t.Ctx, site, buf) }

// KfreeSensitive is kmem.KfreeSensitive in the task's allocation context.
func (t *Task) KfreeSensitive(site *kmem.Site, buf []byte) { kmem.KfreeSensitive(&t.Ctx, site, buf) }

// Inc counts one e in the task's shard (a nil check when counting is off).
func (t *Task) Inc(e events.Event) { t.Ev.Inc(e) }

// Add counts n e in the task's shard.
func (t *Task) Add(e events.Event, n uint64) { t.Ev.Add(e, n) }

// String renders the task as the kernel's log prefix does: "comm[pid]".
func (t *Task) String() string { return fmt.Sprintf("%s[%d]", t.Comm, t.PID) }

// Log is the kernel log ring (printk). It keeps the last MaxLines lines.
type Log struct {
	mu    sync.Mutex
	lines []string
	total int
}

// MaxLines bounds the kernel log.
const MaxLines = 4096

// Printk appends a line to the machine's log (printk). Lines are prefixed
// with their level as dmesg shows them ("<3>" for KERN_ERR) stripped: the
// model stores the text only, with the task that logged it.
func (t *Task) Printk(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	t.K.Log.append(line)
}

func (l *Log) append(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total++
	if len(l.lines) >= MaxLines {
		copy(l.lines, l.lines[1:])
		l.lines = l.lines[:len(l.lines)-1]
	}
	l.lines = append(l.lines, line)
}

// Lines returns a copy of the lines kept.
func (l *Log) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// Contains reports whether some kept line contains s.
func (l *Log) Contains(s string) bool {
	for _, line := range l.Lines() {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}

// Total returns the number of lines ever logged.
func (l *Log) Total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}
