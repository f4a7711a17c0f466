package vfs

import (
	"runtime"
	"testing"

	"github.com/vfslab/vfslab/kernel"
)

// BenchmarkMemoryPerInode reports the bytes of Go heap one vfs.Inode costs
// (the slice that keeps them alive is allocated beforehand); a
// filesystem's own inode data comes on top.
func BenchmarkMemoryPerInode(b *testing.B) {
	const n = 20000
	k := kernel.New()
	t := k.NewTask("mem")
	defer t.Exit()
	sb := &SuperBlock{blkbits: 12}
	var per float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		keep := make([]*Inode, 0, n)
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		b.StartTimer()
		for j := 0; j < n; j++ {
			in, err := NewInode(t, sb, uint64(j), S_IFREG|0o644)
			if err != nil {
				b.Fatal(err)
			}
			keep = append(keep, in)
		}
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&m1)
		per = float64(m1.HeapAlloc-m0.HeapAlloc) / n
		runtime.KeepAlive(keep)
	}
	b.ReportMetric(per, "B/inode")
}
