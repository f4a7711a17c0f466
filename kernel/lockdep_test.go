package kernel

import (
	"strings"
	"sync"
	"testing"
)

func bugHolding(t *Task, mu *sync.Mutex, die bool) (err error) {
	defer t.Recover(&err)
	mu.Lock()
	t.LockAcquire(mu, "&type->i_mutex_dir_key", 12, "lookup_open")
	if die {
		BUG("dies holding the lock")
	}
	var b []byte
	_ = b[:3] // KASAN-style bounds fault
	t.LockRelease(mu)
	mu.Unlock()
	return nil
}

func TestRecoverReleasesHeldLocksAndTaints(t *testing.T) {
	for _, die := range []bool{true, false} {
		k := New()
		task := k.NewTask("test")
		var mu sync.Mutex
		if k.Tainted() != 0 || k.PrintTainted() != "Not tainted" {
			t.Fatalf("fresh machine tainted: %q", k.PrintTainted())
		}
		if err := bugHolding(task, &mu, die); err == nil {
			t.Fatal("no report")
		}
		if !mu.TryLock() {
			t.Fatalf("die=%v: the lock the task held is still held", die)
		}
		mu.Unlock()
		if n := len(task.HeldLocks()); n != 0 {
			t.Fatalf("%d held locks after Recover", n)
		}
		flag, letter := uint(TAINT_BAD_PAGE), "B"
		if die {
			flag, letter = TAINT_DIE, "D"
		}
		if !k.TestTaint(flag) || k.Tainted() != 1<<flag {
			t.Fatalf("die=%v: taint %#x", die, k.Tainted())
		}
		want := "Tainted: G" + strings.Repeat(" ", int(flag)-1) + letter + strings.Repeat(" ", TAINT_FLAGS_COUNT-int(flag)-1)
		if got := k.PrintTainted(); got != want {
			t.Fatalf("PrintTainted = %q, want %q", got, want)
		}
		for _, s := range []string{"1 lock held by test/1:", " #0: (&type->i_mutex_dir_key){ino 12}, at: lookup_open"} {
			if !k.Log.Contains(s) {
				t.Fatalf("log lacks %q: %q", s, k.Log.Lines())
			}
		}
		if got := k.Log.Contains("died holding them"); got != die {
			t.Fatalf("die=%v: 'died holding' in log = %v", die, got)
		}
	}
}

func TestLockReleaseOutOfOrder(t *testing.T) {
	k := New()
	task := k.NewTask("test")
	var a, b, c sync.Mutex
	task.LockAcquire(&a, "a", 1, "x")
	task.LockAcquire(&b, "b", 2, "x")
	task.LockAcquire(&c, "c", 3, "x")
	task.LockRelease(&b)
	h := task.HeldLocks()
	if len(h) != 2 || h[0].Class != "a" || h[1].Class != "c" {
		t.Fatalf("held = %+v", h)
	}
	task.LockRelease(&b)
	if !k.Log.Contains("bad unlock balance") {
		t.Fatal("releasing a lock not held is not reported")
	}
}

func TestLockAcquireAllocatesNothing(t *testing.T) {
	k := New()
	task := k.NewTask("test")
	var mu sync.Mutex
	if n := testing.AllocsPerRun(100, func() {
		task.LockAcquire(&mu, "&type->i_mutex_dir_key", 4, "lookup_open")
		task.LockRelease(&mu)
	}); n != 0 {
		t.Fatalf("%v allocations per acquire/release", n)
	}
}
