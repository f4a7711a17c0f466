package rcu

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vfslab/vfslab/events"
)

type obj struct {
	freed atomic.Bool
}

// A reader that found an object before the updater unpublished it must be
// able to use it until its section ends; the free (call_rcu) must wait.
func TestGracePeriodProtectsReaders(t *testing.T) {
	d := &Domain{}
	var ptr atomic.Pointer[obj]
	ptr.Store(&obj{})
	stop := make(chan struct{})
	var bad atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		r := d.NewReader(nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer r.Close()
			for {
				select {
				case <-stop:
					return
				default:
				}
				r.ReadLock()
				o := ptr.Load()
				for j := 0; j < 50; j++ {
					if o.freed.Load() {
						bad.Add(1)
					}
				}
				r.ReadUnlock()
			}
		}()
	}
	for i := 0; i < 300; i++ {
		old := ptr.Swap(&obj{})
		d.Call(func() { old.freed.Store(true) })
	}
	d.Barrier()
	close(stop)
	wg.Wait()
	if n := bad.Load(); n != 0 {
		t.Fatalf("readers saw %d freed objects", n)
	}
}

func TestSynchronizeWaitsForReader(t *testing.T) {
	d := &Domain{}
	r := d.NewReader(nil)
	r.ReadLock()
	done := make(chan struct{})
	go func() {
		d.Synchronize()
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("synchronize_rcu returned while a pre-existing reader was in its section")
	case <-time.After(20 * time.Millisecond):
	}
	r.ReadUnlock()
	<-done
}

func TestNestingAndCounting(t *testing.T) {
	d := &Domain{}
	ev := events.New()
	r := d.NewReader(ev)
	r.ReadLock()
	r.ReadLock()
	if !r.Held() {
		t.Fatal("not held")
	}
	r.ReadUnlock()
	if !r.Held() {
		t.Fatal("inner unlock ended the section")
	}
	r.ReadUnlock()
	if r.Held() {
		t.Fatal("still held")
	}
	if ev.Get(EvReadLock) != 1 {
		t.Fatalf("rcu_read_lock counted %d times, want 1 (outermost only)", ev.Get(EvReadLock))
	}
	defer func() {
		if recover() == nil {
			t.Fatal("unbalanced unlock did not panic")
		}
	}()
	r.ReadUnlock()
}

func BenchmarkReadLockUnlock(b *testing.B) {
	d := &Domain{}
	b.RunParallel(func(pb *testing.PB) {
		r := d.NewReader(nil)
		defer r.Close()
		for pb.Next() {
			r.ReadLock()
			r.ReadUnlock()
		}
	})
}
