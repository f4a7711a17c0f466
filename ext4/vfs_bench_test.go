package ext4_test

import (
	"fmt"
	"testing"

	"github.com/vfslab/vfslab/vfs"
)

// BenchmarkCreateUnlink measures open(O_CREAT) + close + unlink of a new
// name in a directory of 1000 files through the VFS: the inode's
// allocation (one ext4 inode that embeds the VFS inode), the directory's
// add and delete, the dentry's life.
func BenchmarkCreateUnlink(b *testing.B) {
	e := boot(b, nil)
	e.Must(e.P.Mkdir(e.T, "/d", 0o755))
	for i := 0; i < 1000; i++ {
		e.Write(fmt.Sprintf("/d/file-%04d", i), "")
	}
	names := make([]string, 64)
	for i := range names {
		names[i] = fmt.Sprintf("/d/new-%02d", i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		name := names[i%len(names)]
		fd, err := e.P.Open(e.T, name, vfs.O_CREAT|vfs.O_RDWR, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		if err := e.P.Close(e.T, fd); err != nil {
			b.Fatal(err)
		}
		if err := e.P.Unlink(e.T, name); err != nil {
			b.Fatal(err)
		}
	}
}
