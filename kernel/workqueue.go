package kernel

import (
	"fmt"
	"sync"

	"github.com/vfslab/vfslab/events"
)

// Workqueues (kernel/workqueue.c), reduced to what the read path needs: a
// named queue of work items run by kworkers, each a task of its own, at
// most max_active of them at once. A work item queued while it is pending
// is not queued again (queue_work returns false), so a driver that queues
// one work item per device (the loop device's rootcg_work) gets one worker
// at a time.
//
// A kworker is a goroutine started when work is queued and fewer than
// max_active workers run; it runs work items until the queue is empty,
// then returns its task to the queue's idle pool and exits (the worker
// pool's idle workers, reduced). Queueing to a queue whose workers are all
// busy costs a list append; queueing to an idle queue costs the start of
// a worker: the wake-up of an idle kworker. A queue thus needs no
// destruction: an idle queue holds no goroutine.

// Workqueue events.
var (
	EvQueueWork  = events.Register("queue_work", "work items queued (queue_work that queued: the work was not already pending)")
	EvWorkerWake = events.Register("workqueue_worker_wake", "kworkers woken to run queued work (a queue_work that found fewer than max_active workers running)")
)

// WorkFunc is what a work item runs (work_func_t): RunWork(t, w) runs on
// the kworker's task t. An implementation is usually the structure that
// embeds the Work, so queueing allocates nothing.
type WorkFunc interface {
	RunWork(t *Task, w *Work)
}

// Work is struct work_struct: embed it, set Func (INIT_WORK) and queue it
// with Workqueue.QueueWork. Its pending bit and list link belong to the
// queue it is on.
type Work struct {
	// Func is work->func.
	Func    WorkFunc
	pending bool
	next    *Work
}

// Workqueue is struct workqueue_struct.
type Workqueue struct {
	// Name is the queue's name (alloc_workqueue's fmt), which the
	// kworkers' comm carries ("kworker/u:fscrypt_read_queue").
	Name string
	// MaxActive is max_active: the most work items run at once.
	MaxActive int

	k          *Kernel
	mu         sync.Mutex
	head, tail *Work
	active     int
	idle       []*kworker
	tasks      int
	drained    *sync.Cond
}

// kworker is one worker of a queue: its task, and the function its
// goroutine runs (made once, so that waking the worker allocates
// nothing).
type kworker struct {
	t  *Task
	fn func()
}

// workqueues is the kernel's list of workqueues (the workqueues list of
// kernel/workqueue.c), for flush_workqueue of all of them.
type workqueues struct {
	mu     sync.Mutex
	list   []*Workqueue
	byName map[string]*Workqueue
}

// AllocWorkqueue is alloc_workqueue(name, WQ_UNBOUND, maxActive): a new
// queue on k (maxActive <= 0 means 1).
func (k *Kernel) AllocWorkqueue(name string, maxActive int) *Workqueue {
	if maxActive <= 0 {
		maxActive = 1
	}
	wq := &Workqueue{Name: name, MaxActive: maxActive, k: k}
	wq.drained = sync.NewCond(&wq.mu)
	k.workqueues.mu.Lock()
	k.workqueues.list = append(k.workqueues.list, wq)
	k.workqueues.mu.Unlock()
	return wq
}

// Workqueue returns k's queue called name, allocating it with maxActive on
// first use: a queue a subsystem allocates once at boot (fscrypt_init's
// fscrypt_read_workqueue), which the model allocates when first needed.
func (k *Kernel) Workqueue(name string, maxActive int) *Workqueue {
	k.workqueues.mu.Lock()
	wq := k.workqueues.byName[name]
	k.workqueues.mu.Unlock()
	if wq != nil {
		return wq
	}
	k.workqueues.mu.Lock()
	defer k.workqueues.mu.Unlock()
	if wq = k.workqueues.byName[name]; wq != nil {
		return wq
	}
	if maxActive <= 0 {
		maxActive = 1
	}
	wq = &Workqueue{Name: name, MaxActive: maxActive, k: k}
	wq.drained = sync.NewCond(&wq.mu)
	if k.workqueues.byName == nil {
		k.workqueues.byName = map[string]*Workqueue{}
	}
	k.workqueues.byName[name] = wq
	k.workqueues.list = append(k.workqueues.list, wq)
	return wq
}

// QueueWork is queue_work(wq, w): it appends w to the queue unless it is
// already pending (then it returns false) and wakes a kworker if fewer
// than MaxActive run. t is the queueing task, which counts the events.
func (wq *Workqueue) QueueWork(t *Task, w *Work) bool {
	wq.mu.Lock()
	if w.pending {
		wq.mu.Unlock()
		return false
	}
	w.pending, w.next = true, nil
	if wq.tail == nil {
		wq.head = w
	} else {
		wq.tail.next = w
	}
	wq.tail = w
	t.Inc(EvQueueWork)
	var kw *kworker
	if wq.active < wq.MaxActive {
		wq.active++
		if n := len(wq.idle); n > 0 {
			kw = wq.idle[n-1]
			wq.idle = wq.idle[:n-1]
		} else {
			wq.tasks++
			kw = &kworker{t: wq.k.NewTask(fmt.Sprintf("kworker/u%d:%s", wq.tasks-1, wq.Name))}
			kw.fn = func() { wq.worker(kw) }
		}
	}
	wq.mu.Unlock()
	if kw != nil {
		t.Inc(EvWorkerWake)
		if t.Tracer != nil && kw.t.Tracer == nil {
			kw.t.Tracer = &Tracer{Clock: t.Tracer.Clock}
		}
		go kw.fn()
	}
	return true
}

// worker is a kworker's loop (worker_thread, process_one_work): it runs
// the queue's work items until none is left.
func (wq *Workqueue) worker(kw *kworker) {
	t := kw.t
	wq.mu.Lock()
	for wq.head != nil {
		w := wq.head
		wq.head = w.next
		if wq.head == nil {
			wq.tail = nil
		}
		w.next, w.pending = nil, false
		wq.mu.Unlock()
		w.Func.RunWork(t, w)
		wq.mu.Lock()
	}
	wq.active--
	wq.idle = append(wq.idle, kw)
	if wq.active == 0 {
		wq.drained.Broadcast()
	}
	wq.mu.Unlock()
}

// Flush is flush_workqueue reduced to draining: it waits until the queue
// is empty and no kworker runs.
func (wq *Workqueue) Flush() {
	wq.mu.Lock()
	for wq.head != nil || wq.active > 0 {
		wq.drained.Wait()
	}
	wq.mu.Unlock()
}

// busy reports whether work is queued or running.
func (wq *Workqueue) busy() bool {
	wq.mu.Lock()
	defer wq.mu.Unlock()
	return wq.head != nil || wq.active > 0
}

// Workers returns the kworker tasks the queue has started so far (idle
// ones; for their tracers and counters once the queue is flushed).
func (wq *Workqueue) Workers() []*Task {
	wq.mu.Lock()
	defer wq.mu.Unlock()
	ts := make([]*Task, len(wq.idle))
	for i, kw := range wq.idle {
		ts[i] = kw.t
	}
	return ts
}

// FlushWorkqueues waits until every workqueue of k is idle: work that
// queues more work (a loop device's completion queueing decryption) is
// drained too. It is how a caller outside the kernel waits for the I/O it
// started to settle (what a syscall's end does not wait for: asynchronous
// readahead).
func (k *Kernel) FlushWorkqueues() {
	for {
		for i := 0; ; i++ {
			wq := k.workqueueAt(i)
			if wq == nil {
				break
			}
			wq.Flush()
		}
		again := false
		for i := 0; ; i++ {
			wq := k.workqueueAt(i)
			if wq == nil {
				break
			}
			again = again || wq.busy()
		}
		if !again {
			return
		}
	}
}

// workqueueAt returns k's i-th workqueue, nil past the last.
func (k *Kernel) workqueueAt(i int) *Workqueue {
	k.workqueues.mu.Lock()
	defer k.workqueues.mu.Unlock()
	if i >= len(k.workqueues.list) {
		return nil
	}
	return k.workqueues.list[i]
}

// WorkqueueTasks returns the kworker tasks of every workqueue of k (idle
// ones), in queue order.
func (k *Kernel) WorkqueueTasks() []*Task {
	k.workqueues.mu.Lock()
	list := append([]*Workqueue(nil), k.workqueues.list...)
	k.workqueues.mu.Unlock()
	var ts []*Task
	for _, wq := range list {
		ts = append(ts, wq.Workers()...)
	}
	return ts
}
