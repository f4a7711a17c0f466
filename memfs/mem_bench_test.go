package memfs_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/vfs"
)

// heapAlloc is the live heap after a full collection.
func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

const memObjects = 20000

// BenchmarkMemoryPerDentry reports the bytes of Go heap one cached
// negative dentry costs (stat of names that do not exist; short names
// live inside the dentry). The dcache's hash table is allocated when the
// system starts and is not counted.
func BenchmarkMemoryPerDentry(b *testing.B) {
	var per float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		_, p, task := boot(b)
		if err := p.Mkdir(task, "/d", 0o755); err != nil {
			b.Fatal(err)
		}
		before := heapAlloc()
		b.StartTimer()
		for j := 0; j < memObjects; j++ {
			if _, err := p.Stat(task, fmt.Sprintf("/d/n%06d", j)); err != errno.ENOENT {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		after := heapAlloc()
		per = float64(after-before) / memObjects
		runtime.KeepAlive(p)
	}
	b.ReportMetric(per, "B/dentry")
}

// BenchmarkMemoryPerFile reports the bytes one empty memfs file costs: its
// dentry, its inode (vfs.Inode and memfs's part) and its directory entry.
func BenchmarkMemoryPerFile(b *testing.B) {
	var per float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		_, p, task := boot(b)
		if err := p.Mkdir(task, "/d", 0o755); err != nil {
			b.Fatal(err)
		}
		before := heapAlloc()
		b.StartTimer()
		for j := 0; j < memObjects; j++ {
			fd, err := p.Open(task, fmt.Sprintf("/d/f%06d", j), vfs.O_CREAT|vfs.O_WRONLY, 0o644)
			if err != nil {
				b.Fatal(err)
			}
			p.Close(task, fd)
		}
		b.StopTimer()
		after := heapAlloc()
		per = float64(after-before) / memObjects
		runtime.KeepAlive(p)
	}
	b.ReportMetric(per, "B/file")
}
