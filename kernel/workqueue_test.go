package kernel

import (
	"sync"
	"sync/atomic"
	"testing"
)

// countWork counts its runs and the most that ran at once.
type countWork struct {
	runs, now, peak *atomic.Int64
	gate            chan struct{}
}

func (c *countWork) RunWork(t *Task, w *Work) {
	n := c.now.Add(1)
	for {
		p := c.peak.Load()
		if n <= p || c.peak.CompareAndSwap(p, n) {
			break
		}
	}
	if c.gate != nil {
		<-c.gate
	}
	c.now.Add(-1)
	c.runs.Add(1)
}

// TestWorkqueueMaxActive: at most max_active works run at once, every
// queued work runs once, a pending work is not queued twice, and Flush
// returns once all ran.
func TestWorkqueueMaxActive(t *testing.T) {
	k := New()
	tk := k.NewTask("q")
	wq := k.AllocWorkqueue("test", 2)
	var runs, now, peak atomic.Int64
	gate := make(chan struct{})
	works := make([]Work, 6)
	for i := range works {
		works[i].Func = &countWork{&runs, &now, &peak, gate}
		if !wq.QueueWork(tk, &works[i]) {
			t.Fatalf("work %d not queued", i)
		}
	}
	if wq.QueueWork(tk, &works[5]) {
		t.Error("a pending work was queued again")
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); wq.Flush() }()
	for range works {
		gate <- struct{}{}
	}
	wg.Wait()
	if runs.Load() != 6 || peak.Load() > 2 || peak.Load() < 1 {
		t.Errorf("%d runs, at most %d at once; want 6, at most 2", runs.Load(), peak.Load())
	}
	if n := len(wq.Workers()); n != 2 {
		t.Errorf("%d kworkers started for max_active 2", n)
	}
	// Queued again after running: it runs again, on an idle kworker.
	works[0].Func.(*countWork).gate = nil
	wq.QueueWork(tk, &works[0])
	k.FlushWorkqueues()
	if runs.Load() != 7 || len(k.WorkqueueTasks()) != 2 {
		t.Errorf("%d runs, %d kworkers after a requeue", runs.Load(), len(k.WorkqueueTasks()))
	}
	if k.Workqueue("named", 3) != k.Workqueue("named", 9) || k.Workqueue("named", 0).MaxActive != 3 {
		t.Error("Workqueue does not return the queue allocated first")
	}
}
