package f2fs_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/internal/fstestutil"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// env is a machine whose root is a fresh f2fs.
type env struct{ *fstestutil.Env }

func boot(tb testing.TB, opts *f2fs.Options) *env {
	tb.Helper()
	return &env{fstestutil.Boot(tb, "f2fs-vfs", func(t *kernel.Task) (*vfs.System, *vfs.Proc, error) {
		return f2fs.Boot(t, vfs.Config{}, opts)
	})}
}

func (e *env) dir(path string) *f2fs.Inode {
	e.TB.Helper()
	d, err := e.P.LookupDentry(e.T, path, true)
	e.Must(err)
	defer dcache.Dput(e.T, d)
	return f2fs.F2FS_I(d.Inode())
}

func (e *env) check(path string) {
	e.TB.Helper()
	if err := f2fs.CheckDir(e.T, e.dir(path)); err != nil {
		e.TB.Fatalf("%s: %v\n%s", path, err, f2fs.DumpDir(e.T, e.dir(path)))
	}
}

func TestVFSSmoke(t *testing.T) {
	for _, opts := range []f2fs.Options{{}, {NoInlineDentry: true}, {Casefold: true}} {
		t.Run(opts.String(), func(t *testing.T) {
			e := boot(t, &opts)
			e.Must(e.P.Mkdir(e.T, "/a", 0o755))
			big := string(bytes.Repeat([]byte("0123456789"), 1000))
			e.Write("/a/f", big)
			if got, err := e.Read("/a/f"); err != nil || got != big {
				t.Fatalf("read back %d bytes, %v", len(got), err)
			}
			for i := 0; i < 300; i++ {
				e.Write(fmt.Sprintf("/a/name-number-%03d", i), "x")
			}
			e.check("/a")
			d := e.dir("/a")
			if d.Inline {
				t.Fatal("300 names still inline")
			}
			// stat sees the directory code's i_size: one inode, one size.
			pages := d.Pages()
			if st, err := e.P.Stat(e.T, "/a"); err != nil || st.Size != int64(pages[len(pages)-1]+1)*f2fs.BlockSize || f2fs.F2FS_I(&d.Inode) != d {
				t.Fatalf("stat /a: %+v %v, pages %v", st, err, pages)
			}
			e.NamespaceSmoke(big, opts.Casefold, e.check)
		})
	}
}

// TestRenameConvertsInlineDir: a rename inside a full inline directory
// makes f2fs_add_link convert it to dentry blocks; the old dentry must be
// found again before it is deleted, as f2fs_rename does.
func TestRenameConvertsInlineDir(t *testing.T) {
	e := boot(t, &f2fs.Options{})
	e.Must(e.P.Mkdir(e.T, "/a", 0o755))
	// "." and ".." take 2 of the 182 inline slots; 8-byte names take one.
	for i := 0; i < 180; i++ {
		e.Write(fmt.Sprintf("/a/f%07d", i), "x")
	}
	if !e.dir("/a").Inline {
		t.Fatal("not inline any more")
	}
	e.Must(e.P.Rename(e.T, "/a/f0000007", "/a/g0000007", 0))
	if e.dir("/a").Inline {
		t.Fatal("still inline")
	}
	e.check("/a")
	names := e.List("/a")
	if len(names) != 182 || names[len(names)-1] != "g0000007" {
		t.Fatalf("%d names, last %q", len(names), names[len(names)-1])
	}
	if _, err := e.P.Stat(e.T, "/a/f0000007"); err != errno.ENOENT {
		t.Fatal(err)
	}
}
