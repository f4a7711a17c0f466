package dcache

import (
	"runtime"
	"sync"
	"testing"

	"github.com/vfslab/vfslab/kernel"
)

func countingTask(t testing.TB) *kernel.Task {
	k := kernel.New()
	tk := k.NewTask("lockref")
	tk.EnableCounting()
	t.Cleanup(tk.Exit)
	return tk
}

func TestLockrefFastPaths(t *testing.T) {
	tk := countingTask(t)
	var l Lockref
	if l.GetNotZero(tk) {
		t.Fatal("get_not_zero on count 0 succeeded")
	}
	if tk.Ev.Get(EvLockrefRMW) != 0 {
		t.Fatal("a refused get_not_zero must not touch the word")
	}
	l.Get(tk)
	if l.Count() != 1 || tk.Ev.Get(EvLockrefRMW) != 1 {
		t.Fatalf("lockref_get: count %d, rmw %d", l.Count(), tk.Ev.Get(EvLockrefRMW))
	}
	if !l.GetNotZero(tk) || l.Count() != 2 {
		t.Fatal("get_not_zero")
	}
	if !l.GetNotDead(tk) || l.Count() != 3 {
		t.Fatal("get_not_dead")
	}
	if r := l.PutReturn(tk); r != 2 {
		t.Fatalf("put_return = %d, want 2", r)
	}
	if !l.PutOrLock(tk) || l.Count() != 1 {
		t.Fatal("put_or_lock above 1")
	}
	// At 1, put_or_lock takes the lock instead of decrementing.
	if l.PutOrLock(tk) || !l.IsLocked() || l.Count() != 1 {
		t.Fatal("put_or_lock at 1 must return false with the lock held")
	}
	l.MarkDead()
	l.Unlock()
	if l.Count() != LockrefDead {
		t.Fatalf("dead count %d", l.Count())
	}
	if l.GetNotDead(tk) || l.GetNotZero(tk) {
		t.Fatal("a dead lockref was revived")
	}
	if r := l.PutReturn(tk); r != -1 {
		t.Fatalf("put_return on a dead lockref = %d", r)
	}
	if got := tk.Ev.Get(EvLockrefRMW); got != 6 {
		t.Fatalf("rmw count %d, want 6 (get, get_not_zero, get_not_dead, put_return, put_or_lock, lock)", got)
	}
	if tk.Ev.Get(EvLockrefSlow) != 1 {
		t.Fatalf("slow paths %d, want 1", tk.Ev.Get(EvLockrefSlow))
	}
}

func TestLockrefLockedFallback(t *testing.T) {
	tk := countingTask(t)
	var l Lockref
	l.Get(tk)
	l.Lock(tk)
	// With the lock held the lockless paths give up at once.
	if r := l.PutReturn(tk); r != -1 {
		t.Fatalf("put_return with the lock held = %d", r)
	}
	done := make(chan bool)
	go func() { done <- l.GetNotZero(nil) }()
	for i := 0; i < 100; i++ {
		runtime.Gosched()
	}
	select {
	case <-done:
		t.Fatal("get_not_zero did not wait for the lock")
	default:
	}
	l.Unlock()
	if !<-done || l.Count() != 2 {
		t.Fatalf("after the lock: count %d", l.Count())
	}
	if l.TryLock(tk) != true || l.TryLock(tk) != false {
		t.Fatal("trylock")
	}
	l.Unlock()
}

func TestLockrefConcurrent(t *testing.T) {
	var l Lockref
	tk := countingTask(t)
	l.Get(tk)
	const G, N = 4, 20000
	put := func() {
		if l.PutReturn(nil) < 0 {
			l.Lock(nil)
			l.setCountLocked(l.CountLocked() - 1)
			l.Unlock()
		}
	}
	var wg sync.WaitGroup
	for g := 0; g < G; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < N; i++ {
				switch (i + g) % 4 {
				case 0:
					l.Get(nil)
					put()
				case 1:
					if l.GetNotZero(nil) {
						if !l.PutOrLock(nil) {
							l.setCountLocked(l.CountLocked() - 1)
							l.Unlock()
						}
					}
				case 2:
					l.Lock(nil)
					l.setCountLocked(l.CountLocked() + 1)
					l.Unlock()
					put()
				case 3:
					if l.GetNotDead(nil) {
						put()
					}
				}
			}
		}(g)
	}
	wg.Wait()
	if l.Count() != 1 || l.IsLocked() {
		t.Fatalf("count %d locked %v after balanced operations", l.Count(), l.IsLocked())
	}
}

func TestSeqcount(t *testing.T) {
	var s Seqcount
	a := s.ReadBegin()
	if s.Retry(a) {
		t.Fatal("retry without a writer")
	}
	s.WriteBegin()
	if r := s.RawBegin(); !s.Retry(r) {
		t.Fatal("a read begun during a write must fail validation")
	}
	s.WriteEnd()
	if !s.Retry(a) {
		t.Fatal("a write must fail earlier readers")
	}
	b := s.ReadBegin()
	s.Invalidate()
	if !s.Retry(b) || s.Raw()&1 != 0 {
		t.Fatal("invalidate")
	}
	var sl Seqlock
	q := sl.ReadBegin()
	sl.LockExcl()
	if sl.ReadRetry(q) {
		t.Fatal("read_seqlock_excl must not fail readers")
	}
	sl.UnlockExcl()
	sl.WriteLock()
	sl.WriteUnlock()
	if !sl.ReadRetry(q) {
		t.Fatal("write_seqlock must fail readers")
	}
}
