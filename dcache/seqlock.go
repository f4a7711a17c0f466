package dcache

import "sync/atomic"

// Seqcount is seqcount_t (include/linux/seqlock.h): a sequence number that
// writers make odd while they change the data it protects, so that
// lockless readers can tell whether what they read was stable. Writers must
// be serialised by a lock of their own (d_lock for d_seq). The zero value
// is ready to use.
//
// Go's atomics are sequentially consistent, so the smp_rmb/smp_wmb pairs
// of the kernel's implementation are implied.
type Seqcount struct {
	v atomic.Uint32
}

// ReadBegin waits until no write is in progress and returns the sequence
// to validate with Retry (read_seqcount_begin).
func (s *Seqcount) ReadBegin() uint32 {
	for spins := 0; ; spins++ {
		v := s.v.Load()
		if v&1 == 0 {
			return v
		}
		relax(spins)
	}
}

// RawBegin returns the sequence without waiting, with its low bit cleared
// so that a read that started during a write fails Retry
// (raw_seqcount_begin). RCU-walk uses it: it must not spin.
func (s *Seqcount) RawBegin() uint32 { return s.v.Load() &^ 1 }

// Retry reports whether the data read since start may have changed and
// the read must be redone (read_seqcount_retry).
func (s *Seqcount) Retry(start uint32) bool { return s.v.Load() != start }

// Raw returns the current sequence (raw_read_seqcount).
func (s *Seqcount) Raw() uint32 { return s.v.Load() }

// WriteBegin starts a write section (write_seqcount_begin): the sequence
// becomes odd. The caller holds the lock that serialises writers.
func (s *Seqcount) WriteBegin() {
	v := s.v.Load()
	if v&1 != 0 {
		panic("dcache: nested write_seqcount_begin")
	}
	s.v.Store(v + 1)
}

// WriteEnd ends a write section (write_seqcount_end): the sequence becomes
// even again.
func (s *Seqcount) WriteEnd() {
	v := s.v.Load()
	if v&1 == 0 {
		panic("dcache: write_seqcount_end without write_seqcount_begin")
	}
	s.v.Store(v + 1)
}

// Invalidate advances the sequence by two, so that every reader holding an
// older sequence fails Retry (write_seqcount_invalidate), as __d_drop does
// to the dropped dentry's d_seq.
func (s *Seqcount) Invalidate() {
	s.v.Store(s.v.Load() + 2)
}

// Seqlock is seqlock_t: a sequence count with the spinlock that serialises
// its writers. The dcache's rename_lock is one.
type Seqlock struct {
	seq  Seqcount
	lock Spinlock
}

// ReadBegin starts a lockless read section (read_seqbegin).
func (s *Seqlock) ReadBegin() uint32 { return s.seq.ReadBegin() }

// ReadRetry reports whether a writer ran since start (read_seqretry).
func (s *Seqlock) ReadRetry(start uint32) bool { return s.seq.Retry(start) }

// Seq returns the sequence count, for readers that validate it later
// (the path walk's nd->r_seq).
func (s *Seqlock) Seq() *Seqcount { return &s.seq }

// WriteLock takes the lock and starts a write section (write_seqlock).
func (s *Seqlock) WriteLock() {
	s.lock.Lock()
	s.seq.WriteBegin()
}

// WriteUnlock ends the write section and releases the lock
// (write_sequnlock).
func (s *Seqlock) WriteUnlock() {
	s.seq.WriteEnd()
	s.lock.Unlock()
}

// LockExcl takes the lock without touching the sequence
// (read_seqlock_excl): it excludes writers without failing lockless
// readers.
func (s *Seqlock) LockExcl() { s.lock.Lock() }

// UnlockExcl releases LockExcl (read_sequnlock_excl).
func (s *Seqlock) UnlockExcl() { s.lock.Unlock() }
