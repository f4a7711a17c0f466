package ext4_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/internal/fstestutil"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// env is a machine whose root is a fresh ext4.
type env struct{ *fstestutil.Env }

func boot(tb testing.TB, opts *ext4.Options) *env {
	tb.Helper()
	return &env{fstestutil.Boot(tb, "ext4-vfs", func(t *kernel.Task) (*vfs.System, *vfs.Proc, error) {
		return ext4.Boot(t, vfs.Config{}, opts)
	})}
}

func (e *env) dir(path string) *ext4.Inode {
	e.TB.Helper()
	d, err := e.P.LookupDentry(e.T, path, true)
	e.Must(err)
	defer dcache.Dput(e.T, d)
	return ext4.EXT4_I(d.Inode())
}

func (e *env) check(path string) {
	e.TB.Helper()
	if err := ext4.CheckDir(e.T, e.dir(path)); err != nil {
		e.TB.Fatalf("%s: %v\n%s", path, err, ext4.DumpDir(e.T, e.dir(path)))
	}
}

func TestVFSSmoke(t *testing.T) {
	for _, opts := range []ext4.Options{{}, {NoDirIndex: true}, {NoMetadataCsum: true, Hash: "tea"}, {Casefold: true}} {
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
			if d := e.dir("/a"); d.IsDx() == opts.NoDirIndex {
				t.Fatalf("300 names: %v", d)
			}
			e.NamespaceSmoke(big, opts.Casefold, e.check)
		})
	}
}

// TestDirSizeIsTheInodes: a directory's i_size is the VFS inode's, so
// stat sees every block the directory code adds, at once (mkdir, creates
// that grow the htree, a rename that moves names between directories),
// and the ext4 inode is the one the VFS holds (EXT4_I).
func TestDirSizeIsTheInodes(t *testing.T) {
	e := boot(t, nil)
	e.Must(e.P.Mkdir(e.T, "/a", 0o755))
	e.Must(e.P.Mkdir(e.T, "/b", 0o755))
	size := func(path string) int64 {
		st, err := e.P.Stat(e.T, path)
		e.Must(err)
		return st.Size
	}
	if got := size("/a"); got != ext4.BlockSize {
		t.Fatalf("new directory: size %d", got)
	}
	for i := 0; i < 300; i++ {
		e.Write(fmt.Sprintf("/a/name-number-%03d", i), "x")
		d := e.dir("/a")
		if got := size("/a"); got != d.Size() || got%ext4.BlockSize != 0 {
			t.Fatalf("after %d names: stat size %d, directory %v", i+1, got, d)
		}
	}
	if size("/a") < 3*ext4.BlockSize {
		t.Fatalf("300 names in %d bytes", size("/a"))
	}
	for i := 0; i < 300; i++ {
		e.Must(e.P.Rename(e.T, fmt.Sprintf("/a/name-number-%03d", i), fmt.Sprintf("/b/moved-%03d", i), 0))
	}
	if d := e.dir("/b"); size("/b") != d.Size() || size("/b") < 3*ext4.BlockSize {
		t.Fatalf("after the renames: stat size %d, directory %v", size("/b"), d)
	}
	e.check("/a")
	e.check("/b")
}
