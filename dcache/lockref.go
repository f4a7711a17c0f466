package dcache

import (
	"runtime"
	"sync/atomic"

	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/kernel"
)

// Lockref events.
var (
	// EvLockrefRMW counts atomic read-modify-writes on lockref words: every
	// cmpxchg attempt of the lockless fast paths and every attempt to take
	// the spinlock half of the word.
	EvLockrefRMW = events.Register("lockref_rmw", "atomic read-modify-writes (cmpxchg attempts, spinlock acquisitions) on dentry lockrefs")
	// EvLockrefRMWWatched counts the same operations on the lockrefs of
	// dentries marked with Dentry.Watch (the shared parent directory of a
	// benchmark).
	EvLockrefRMWWatched = events.Register("lockref_rmw_watched", "atomic read-modify-writes on the lockrefs of watched dentries (Dentry.Watch)")
	// EvLockrefRetry counts cmpxchg attempts that lost a race and retried.
	EvLockrefRetry = events.Register("lockref_retry", "lockref cmpxchg attempts that failed because another CPU changed the word")
	// EvLockrefSlow counts lockref operations that fell back to the spinlock.
	EvLockrefSlow = events.Register("lockref_slowpath", "lockref operations that fell back to taking the spinlock")
)

// LockrefDead is the count lockref_mark_dead stores: a dead lockref can
// never be revived by the lockless paths.
const LockrefDead = -128

// lockrefRetries is the bound on cmpxchg attempts of CMPXCHG_LOOP
// (lib/lockref.c) before it falls back to the spinlock.
const lockrefRetries = 100

// lockrefLocked is the spinlock half of the word when held (the locked byte
// of a qspinlock). The count lives in the high 32 bits, as on little-endian
// x86-64 where struct lockref is { spinlock_t lock; int count; }.
const lockrefLocked = 1

// Lockref is struct lockref (include/linux/lockref.h): a spinlock and a
// reference count in one 64-bit word, so that the count can be changed with
// a single cmpxchg while the lock is free (CONFIG_CMPXCHG_LOCKREF), and
// under the lock otherwise. The zero value is unlocked with count 0.
//
// Methods take the calling task to count their atomic operations; a nil
// task counts nothing.
type Lockref struct {
	w atomic.Uint64
}

func lrPack(count int32, lock uint32) uint64 { return uint64(uint32(count))<<32 | uint64(lock) }
func lrCount(w uint64) int32                 { return int32(uint32(w >> 32)) }
func lrLocked(w uint64) bool                 { return w&0xffffffff != 0 }

// countRMW counts n read-modify-writes of a lockref.
func countRMW(t *kernel.Task, watched bool) {
	if t == nil || t.Ev == nil {
		return
	}
	t.Ev.Inc(EvLockrefRMW)
	if watched {
		t.Ev.Inc(EvLockrefRMWWatched)
	}
}

func countEv(t *kernel.Task, e events.Event) {
	if t != nil {
		t.Ev.Inc(e)
	}
}

// cmpxchgLoop is CMPXCHG_LOOP: while the lock is free, try up to 100 times
// to replace the word with the one step computes from the current count.
// step returns the new count and whether to go on (false: give up with
// result abort). It returns done=true with the new count when a cmpxchg
// succeeded; done=false when the lock was seen held, the retries ran out,
// or step asked to stop (aborted=true then).
func (l *Lockref) cmpxchgLoop(t *kernel.Task, watched bool, step func(old int32) (int32, bool)) (newCount int32, done, aborted bool) {
	old := l.w.Load()
	for retry := lockrefRetries; !lrLocked(old); {
		n, ok := step(lrCount(old))
		if !ok {
			return 0, false, true
		}
		countRMW(t, watched)
		nw := lrPack(n, 0)
		if l.w.CompareAndSwap(old, nw) {
			return n, true, false
		}
		countEv(t, EvLockrefRetry)
		retry--
		if retry == 0 {
			break
		}
		old = l.w.Load()
	}
	return 0, false, false
}

// Get increments the count unconditionally (lockref_get). The caller must
// already hold a reference.
func (l *Lockref) Get(t *kernel.Task) { l.get(t, false) }

func (l *Lockref) get(t *kernel.Task, watched bool) {
	// Open-coded CMPXCHG_LOOP: this is the hot path of dget.
	old := l.w.Load()
	for retry := lockrefRetries; !lrLocked(old); {
		countRMW(t, watched)
		if l.w.CompareAndSwap(old, old+1<<32) {
			return
		}
		countEv(t, EvLockrefRetry)
		if retry--; retry == 0 {
			break
		}
		old = l.w.Load()
	}
	countEv(t, EvLockrefSlow)
	l.lock(t, watched)
	l.setCountLocked(l.CountLocked() + 1)
	l.Unlock()
}

// GetNotZero increments the count unless it is zero or negative
// (lockref_get_not_zero) and reports whether it did.
func (l *Lockref) GetNotZero(t *kernel.Task) bool { return l.getNotZero(t, false) }

func (l *Lockref) getNotZero(t *kernel.Task, watched bool) bool {
	old := l.w.Load()
	for retry := lockrefRetries; !lrLocked(old); {
		c := lrCount(old)
		if c <= 0 {
			return false
		}
		countRMW(t, watched)
		if l.w.CompareAndSwap(old, old+1<<32) {
			return true
		}
		countEv(t, EvLockrefRetry)
		if retry--; retry == 0 {
			break
		}
		old = l.w.Load()
	}
	countEv(t, EvLockrefSlow)
	l.lock(t, watched)
	ok := false
	if c := l.CountLocked(); c > 0 {
		l.setCountLocked(c + 1)
		ok = true
	}
	l.Unlock()
	return ok
}

// GetNotDead increments the count unless the lockref is dead (negative)
// (lockref_get_not_dead) and reports whether it did. RCU-walk uses it to
// turn a dentry it found without a reference into a referenced one.
func (l *Lockref) GetNotDead(t *kernel.Task) bool { return l.getNotDead(t, false) }

func (l *Lockref) getNotDead(t *kernel.Task, watched bool) bool {
	_, done, aborted := l.cmpxchgLoop(t, watched, func(old int32) (int32, bool) {
		return old + 1, old >= 0
	})
	if done {
		return true
	}
	if aborted {
		return false
	}
	countEv(t, EvLockrefSlow)
	l.lock(t, watched)
	ok := false
	if c := l.CountLocked(); c >= 0 {
		l.setCountLocked(c + 1)
		ok = true
	}
	l.Unlock()
	return ok
}

// PutReturn decrements the count locklessly and returns the new count, or
// -1 if it could not: the lock was held, the count was already zero or
// negative, or the retries ran out (lockref_put_return). It never takes
// the lock.
func (l *Lockref) PutReturn(t *kernel.Task) int { return l.putReturn(t, false) }

func (l *Lockref) putReturn(t *kernel.Task, watched bool) int {
	old := l.w.Load()
	for retry := lockrefRetries; !lrLocked(old); {
		c := lrCount(old)
		if c <= 0 {
			return -1
		}
		countRMW(t, watched)
		if l.w.CompareAndSwap(old, old-1<<32) {
			return int(c - 1)
		}
		countEv(t, EvLockrefRetry)
		if retry--; retry == 0 {
			break
		}
		old = l.w.Load()
	}
	return -1
}

// PutOrLock decrements the count unless it is 1 or less
// (lockref_put_or_lock). It returns true if it decremented; false with the
// lock held otherwise.
func (l *Lockref) PutOrLock(t *kernel.Task) bool { return l.putOrLock(t, false) }

func (l *Lockref) putOrLock(t *kernel.Task, watched bool) bool {
	_, done, _ := l.cmpxchgLoop(t, watched, func(old int32) (int32, bool) {
		return old - 1, old > 1
	})
	if done {
		return true
	}
	countEv(t, EvLockrefSlow)
	l.lock(t, watched)
	if c := l.CountLocked(); c > 1 {
		l.setCountLocked(c - 1)
		l.Unlock()
		return true
	}
	return false
}

// Lock takes the spinlock half of the word (spin_lock(&lockref->lock)).
func (l *Lockref) Lock(t *kernel.Task) { l.lock(t, false) }

func (l *Lockref) lock(t *kernel.Task, watched bool) {
	for spins := 0; ; spins++ {
		old := l.w.Load()
		if !lrLocked(old) {
			countRMW(t, watched)
			if l.w.CompareAndSwap(old, old|lockrefLocked) {
				return
			}
		}
		relax(spins)
	}
}

// TryLock takes the lock if it is free (spin_trylock) and reports whether
// it did.
func (l *Lockref) TryLock(t *kernel.Task) bool { return l.tryLock(t, false) }

func (l *Lockref) tryLock(t *kernel.Task, watched bool) bool {
	for {
		old := l.w.Load()
		if lrLocked(old) {
			return false
		}
		countRMW(t, watched)
		if l.w.CompareAndSwap(old, old|lockrefLocked) {
			return true
		}
	}
}

// Unlock releases the lock (spin_unlock): a release store, not a
// read-modify-write, on x86.
func (l *Lockref) Unlock() {
	old := l.w.Load()
	if !lrLocked(old) {
		panic("dcache: unlock of an unlocked lockref")
	}
	l.w.Store(old &^ 0xffffffff)
}

// IsLocked reports whether the lock is held (spin_is_locked).
func (l *Lockref) IsLocked() bool { return lrLocked(l.w.Load()) }

// Count returns the count as a racy snapshot (d_count without d_lock).
func (l *Lockref) Count() int { return int(lrCount(l.w.Load())) }

// CountLocked returns the count; the caller holds the lock.
func (l *Lockref) CountLocked() int32 { return lrCount(l.w.Load()) }

// setCountLocked stores a new count; the caller holds the lock, so no
// lockless cmpxchg can succeed concurrently and a plain store suffices.
func (l *Lockref) setCountLocked(c int32) {
	l.w.Store(lrPack(c, lockrefLocked))
}

// MarkDead sets the count to LockrefDead (lockref_mark_dead). The caller
// holds the lock.
func (l *Lockref) MarkDead() {
	if !l.IsLocked() {
		panic("dcache: lockref_mark_dead without the lock")
	}
	l.setCountLocked(LockrefDead)
}

// relax is cpu_relax in a spin loop. Goroutines can be descheduled while
// holding a spinlock (the kernel disables preemption), so after a few
// spins the waiter yields instead of burning its time slice.
func relax(spins int) {
	if spins >= 16 {
		runtime.Gosched()
	}
}

// Spinlock is a spinlock_t for the locks the model keeps outside lockrefs:
// hash-bucket locks (the bit lock of hlist_bl), the inode's i_lock, the
// rename_lock's lock. The zero value is unlocked. It does not count.
type Spinlock struct {
	v atomic.Uint32
}

// Lock takes the lock (spin_lock).
func (s *Spinlock) Lock() {
	for spins := 0; ; spins++ {
		if s.v.Load() == 0 && s.v.CompareAndSwap(0, 1) {
			return
		}
		relax(spins)
	}
}

// TryLock takes the lock if it is free (spin_trylock).
func (s *Spinlock) TryLock() bool { return s.v.Load() == 0 && s.v.CompareAndSwap(0, 1) }

// Unlock releases the lock (spin_unlock).
func (s *Spinlock) Unlock() {
	if s.v.Load() == 0 {
		panic("dcache: unlock of an unlocked spinlock")
	}
	s.v.Store(0)
}

// IsLocked reports whether the lock is held.
func (s *Spinlock) IsLocked() bool { return s.v.Load() != 0 }
