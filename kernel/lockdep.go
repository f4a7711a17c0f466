package kernel

import "sync"

// MaxLockDepth is lockdep's MAX_LOCK_DEPTH (include/linux/sched.h): the
// most locks a task can hold at once.
const MaxLockDepth = 48

// HeldLock is one entry of a task's held_locks (kernel/locking/lockdep.c
// struct held_lock): the lock, its class as lockdep names it, the object
// it belongs to, and where it was taken.
type HeldLock struct {
	// Lock is the lock itself; Recover unlocks it.
	Lock sync.Locker
	// Class is the lock's class, e.g. "&type->i_mutex_dir_key".
	Class string
	// Ino is the number of the inode the lock belongs to (0 for none).
	Ino uint64
	// Site is the function that took it ("lookup_open").
	Site string
}

// heldLocks is task_struct's held_locks and lockdep_depth. Only the locks
// whose release an unwinding panic would skip are recorded (those taken
// and released in straight-line code, not by a deferred unlock), so that
// Recover can say what the dying task held and release it.
type heldLocks struct {
	locks [MaxLockDepth]HeldLock
	depth int
}

// LockAcquire records that t now holds l (lockdep's lock_acquire). Call it
// right after taking l, and LockRelease right before releasing it. class,
// ino and site name the lock in reports; they should be constants, so
// that recording allocates nothing.
func (t *Task) LockAcquire(l sync.Locker, class string, ino uint64, site string) {
	h := &t.held
	if h.depth == MaxLockDepth {
		// lockdep: "BUG: MAX_LOCK_DEPTH too low!" and it turns itself off.
		t.Printk("BUG: MAX_LOCK_DEPTH too low! depth: %d max: %d", h.depth, MaxLockDepth)
		return
	}
	h.locks[h.depth] = HeldLock{Lock: l, Class: class, Ino: ino, Site: site}
	h.depth++
}

// LockRelease forgets l (lockdep's lock_release). Locks are usually
// released in the reverse order of acquisition, but need not be.
func (t *Task) LockRelease(l sync.Locker) {
	h := &t.held
	for i := h.depth - 1; i >= 0; i-- {
		if h.locks[i].Lock == l {
			copy(h.locks[i:h.depth], h.locks[i+1:h.depth])
			h.depth--
			h.locks[h.depth] = HeldLock{}
			return
		}
	}
	// lockdep's print_unlock_imbalance_bug.
	t.Printk("WARNING: bad unlock balance detected! %s is trying to release a lock it does not hold", t)
}

// HeldLocks returns the locks t holds, oldest first.
func (t *Task) HeldLocks() []HeldLock {
	return append([]HeldLock(nil), t.held.locks[:t.held.depth]...)
}

// releaseHeldLocks is Recover's handling of the locks a task held when it
// raised b. It logs them as lockdep's debug_show_held_locks does ("1 lock
// held by comm/pid:"), then releases them, newest first.
//
// This is a deviation, stated in the log: a task that dies in a BUG (an
// oops, do_exit from die()) never releases its locks, so in the kernel
// every later taker of such a lock blocks forever (the hung-task detector
// reports it after 120 s). The simulator releases them so that the program
// goes on, and the machine is tainted (TAINT_DIE, 'D') so that nothing
// afterwards passes as a clean run. A KASAN report does not kill the task
// in the kernel (the access is reported and execution continues), so the
// kernel would have released the locks on its normal path.
func (t *Task) releaseHeldLocks(b *Bug) {
	h := &t.held
	if h.depth == 0 {
		return
	}
	if h.depth == 1 {
		t.Printk("1 lock held by %s/%d:", t.Comm, t.PID)
	} else {
		t.Printk("%d locks held by %s/%d:", h.depth, t.Comm, t.PID)
	}
	for i := 0; i < h.depth; i++ {
		l := &h.locks[i]
		t.Printk(" #%d: (%s){ino %d}, at: %s", i, l.Class, l.Ino, l.Site)
	}
	if b.Dies() {
		t.Printk("%s/%d died holding them: in the kernel they are never released and every later taker hangs; the simulator releases them", t.Comm, t.PID)
	}
	for i := h.depth - 1; i >= 0; i-- {
		h.locks[i].Lock.Unlock()
		h.locks[i] = HeldLock{}
	}
	h.depth = 0
}
