package dcache

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/kernel"
)

// benchDir makes a directory with n regular files f0..f(n-1) whose dentries
// stay referenced (like open files), the directory watched.
func benchDir(b *testing.B, n int) (*env, *Dentry[tInode], []*Dentry[tInode]) {
	e := newEnv(b, Config[tInode]{HashShift: 16, MaxUnused: -1})
	dir := e.add(b, e.root, "tmp", DirectoryType)
	dir.Watch(true)
	files := make([]*Dentry[tInode], n)
	for i := range files {
		files[i] = e.add(b, dir, fmt.Sprintf("f%d", i), RegularType)
	}
	return e, dir, files
}

// reportPerOp reports the watched lockref operations and RCU sections per
// operation from the merged task shards.
func reportPerOp(b *testing.B, ev *events.Counters, ops int) {
	if ops == 0 {
		return
	}
	b.ReportMetric(float64(ev.Get(EvLockrefRMWWatched))/float64(ops), "parent-rmw/op")
	b.ReportMetric(float64(ev.Get(EvLockrefRetry))/float64(ops), "cas-retry/op")
}

// parallel runs body in b.RunParallel with one counting task per
// goroutine, each goroutine given its own index, and merges the counts.
func parallel(b *testing.B, k *kernel.Kernel, body func(t *kernel.Task, idx int, pb *testing.PB)) *events.Counters {
	var shards events.Shards
	var next atomic.Int32
	var mu sync.Mutex
	var tasks []*kernel.Task
	b.RunParallel(func(pb *testing.PB) {
		t := k.NewTask("bench")
		t.Ev = shards.Shard()
		mu.Lock()
		tasks = append(tasks, t)
		mu.Unlock()
		body(t, int(next.Add(1)-1), pb)
	})
	for _, t := range tasks {
		t.Exit()
	}
	return shards.Total()
}

// BenchmarkDgetParentDput is base fscrypt_file_open's parent check:
// dget_parent + dput on the file's parent, one goroutine.
func BenchmarkDgetParentDput(b *testing.B) {
	e, _, files := benchDir(b, 1)
	t := e.t
	f := files[0]
	before := t.Ev.Clone()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Dput(t, DgetParent(t, f))
	}
	b.StopTimer()
	reportPerOp(b, t.Ev.Sub(before), b.N)
}

// BenchmarkDgetParentDputParallel is the same with GOMAXPROCS goroutines,
// each on its own file in one shared directory (will-it-scale open1): the
// shared parent's lockref is the contended cache line seed 004 removes.
func BenchmarkDgetParentDputParallel(b *testing.B) {
	e, _, files := benchDir(b, 256)
	b.ReportAllocs()
	b.ResetTimer()
	ev := parallel(b, e.k, func(t *kernel.Task, idx int, pb *testing.PB) {
		f := files[idx%len(files)]
		for pb.Next() {
			Dput(t, DgetParent(t, f))
		}
	})
	b.StopTimer()
	reportPerOp(b, ev, b.N)
}

// BenchmarkParentInodeRCU is the v1/v2 fast path: READ_ONCE(d_parent) and
// d_inode_rcu inside an RCU section, no reference taken.
func BenchmarkParentInodeRCU(b *testing.B) {
	e, _, files := benchDir(b, 1)
	t := e.t
	f := files[0]
	var sink *tInode
	before := t.Ev.Clone()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t.RCU.ReadLock()
		sink = f.ParentRCU(t).InodeRCU(t)
		t.RCU.ReadUnlock()
	}
	b.StopTimer()
	_ = sink
	reportPerOp(b, t.Ev.Sub(before), b.N)
}

// BenchmarkParentInodeRCUParallel is the RCU fast path with GOMAXPROCS
// goroutines on one shared directory.
func BenchmarkParentInodeRCUParallel(b *testing.B) {
	e, _, files := benchDir(b, 256)
	b.ReportAllocs()
	b.ResetTimer()
	ev := parallel(b, e.k, func(t *kernel.Task, idx int, pb *testing.PB) {
		f := files[idx%len(files)]
		var sink *tInode
		for pb.Next() {
			t.RCU.ReadLock()
			sink = f.ParentRCU(t).InodeRCU(t)
			t.RCU.ReadUnlock()
		}
		_ = sink
	})
	b.StopTimer()
	reportPerOp(b, ev, b.N)
}

// lookupBench prepares a directory of n files and their qstrs.
func lookupBench(b *testing.B, n int) (*env, *Dentry[tInode], []Qstr) {
	e, dir, files := benchDir(b, n)
	qs := make([]Qstr, n)
	for i, f := range files {
		qs[i] = MakeQstr(dir, f.Name().Name)
		Dput(e.t, f)
	}
	return e, dir, qs
}

// BenchmarkDLookup is the ref-walk lookup (d_lookup + dput) in a directory
// of 1000 cached files.
func BenchmarkDLookup(b *testing.B) {
	e, dir, qs := lookupBench(b, 1000)
	t := e.t
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := DLookup(t, dir, &qs[i%len(qs)])
		Dput(t, d)
	}
}

// BenchmarkDLookupRCU is the RCU-walk lookup (__d_lookup_rcu and the d_seq
// validation) in a directory of 1000 cached files.
func BenchmarkDLookupRCU(b *testing.B) {
	e, dir, qs := lookupBench(b, 1000)
	t := e.t
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t.RCU.ReadLock()
		d, seq := DLookupRCU(t, dir, &qs[i%len(qs)])
		if d == nil || d.Seq().Retry(seq) {
			b.Fatal("miss")
		}
		t.RCU.ReadUnlock()
	}
}

// BenchmarkDLookupRCUParallel is __d_lookup_rcu from GOMAXPROCS goroutines.
func BenchmarkDLookupRCUParallel(b *testing.B) {
	e, dir, qs := lookupBench(b, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	parallel(b, e.k, func(t *kernel.Task, idx int, pb *testing.PB) {
		i := idx * 7
		for pb.Next() {
			t.RCU.ReadLock()
			d, seq := DLookupRCU(t, dir, &qs[i%len(qs)])
			if d == nil || d.Seq().Retry(seq) {
				panic("miss")
			}
			t.RCU.ReadUnlock()
			i++
		}
	})
}

// BenchmarkFullNameHash hashes a typical 12-byte component.
func BenchmarkFullNameHash(b *testing.B) {
	var h uint32
	for i := 0; i < b.N; i++ {
		h += FullNameHash(uint64(i), "Makefile.txt")
	}
	_ = h
}

// BenchmarkDentryMemory measures the Go heap a cached dentry costs: 100k
// unused dentries named like "file000123" (inline names) are kept on an
// unbounded LRU, and the heap growth (runtime.MemStats.HeapAlloc after a
// GC) is divided by their number. The hash table is allocated before and
// not counted; its cost is reported per bucket. The kernel's struct dentry
// is 192 bytes in a slab.
func BenchmarkDentryMemory(b *testing.B) {
	const n = 100_000
	for i := 0; i < b.N; i++ {
		e := newEnv(b, Config[tInode]{HashShift: 17, MaxUnused: -1})
		dir := e.add(b, e.root, "big", DirectoryType)
		names := make([]Qstr, n)
		for j := range names {
			names[j] = MakeQstr(dir, fmt.Sprintf("file%06d", j))
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for j := range names {
			d, err := DAlloc(e.t, dir, names[j])
			if err != nil {
				b.Fatal(err)
			}
			DAdd(e.t, d, nil) // negative: no inode to count
			Dput(e.t, d)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if e.c.Stats().LRU != n {
			b.Fatalf("stats %v", e.c.Stats())
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/dentry")
		b.ReportMetric(float64(sizeofBucket), "B/bucket")
		runtime.KeepAlive(e)
		runtime.KeepAlive(names)
	}
}
