package ext4_test

import (
	"fmt"
	"testing"

	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/internal/fstestutil"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// BenchmarkCreateUnlink measures open(O_CREAT) + close + unlink of a new
// name in a directory of 1000 files through the VFS: the inode's
// allocation (one ext4 inode that embeds the VFS inode), the directory's
// add and delete, the dentry's life.
func BenchmarkCreateUnlink(b *testing.B) {
	benchCreateUnlink(b, boot(b, nil))
}

// benchCreateUnlink is the loop of the create+unlink benchmarks on e: a
// directory of 1000 files, then b.N creates and unlinks over 64 names.
func benchCreateUnlink(b *testing.B, e *env) {
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

// BenchmarkImageCreateUnlink is BenchmarkCreateUnlink on a real image
// (vfslab's mkfs on a 64 MiB fixed-size device, 1 KiB blocks as
// mke2fs.conf's small type, or -b 4096): the same directory work, plus
// the inode bitmap, the inode's write-back to its table with its checksum
// and the group descriptor's counters.
func BenchmarkImageCreateUnlink(b *testing.B) {
	for _, args := range [][]string{nil, {"-b", "4096"}} {
		b.Run(fmt.Sprint(args), func(b *testing.B) {
			dev := vfs.NewBlockDeviceSize(64 << 20 / vfs.PageSize)
			e := &env{fstestutil.Boot(b, "ext4-img", func(t *kernel.Task) (*vfs.System, *vfs.Proc, error) {
				if err := ext4.Type.Mkfs(t, dev, args); err != nil {
					return nil, nil, err
				}
				return vfs.Boot(t, vfs.Config{}, ext4.Type, vfs.MountOptions{Device: dev, Source: "vdb", ReadOnly: dev.ReadOnly()})
			})}
			benchCreateUnlink(b, e)
		})
	}
}

// BenchmarkImageMount measures fill_super of a real image: the
// superblock and descriptor checks and the root inode read from its
// table.
func BenchmarkImageMount(b *testing.B) {
	dev := vfs.NewBlockDeviceSize(16 << 20 / vfs.PageSize)
	tk := kernel.New().NewTask("mkfs")
	defer tk.Exit()
	if err := ext4.Type.Mkfs(tk, dev, nil); err != nil {
		b.Fatal(err)
	}
	img := make([]byte, dev.Size())
	if _, err := dev.ReadAt(img, 0); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// A fresh device each time (a mounted one stays claimed); its
		// copy is not measured.
		b.StopTimer()
		d := vfs.NewBlockDeviceSize(uint32(len(img) / vfs.PageSize))
		if _, err := d.WriteAt(img, 0); err != nil {
			b.Fatal(err)
		}
		t := kernel.New().NewTask("mount")
		b.StartTimer()
		if _, _, err := vfs.Boot(t, vfs.Config{}, ext4.Type, vfs.MountOptions{Device: d, Source: "vdb", ReadOnly: d.ReadOnly()}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		t.Exit()
		b.StartTimer()
	}
}
