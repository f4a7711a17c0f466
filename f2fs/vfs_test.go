package f2fs_test

import (
	"bytes"
	"fmt"
	"sort"
	"testing"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

type env struct {
	tb testing.TB
	t  *kernel.Task
	p  *vfs.Proc
}

func boot(tb testing.TB, opts *f2fs.Options) *env {
	tb.Helper()
	k := kernel.New()
	t := k.NewTask("f2fs-vfs")
	t.EnableCounting()
	tb.Cleanup(t.Exit)
	_, p, err := f2fs.Boot(t, vfs.Config{}, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return &env{tb: tb, t: t, p: p}
}

func (e *env) must(err error) {
	e.tb.Helper()
	if err != nil {
		e.tb.Fatal(err)
	}
}

func (e *env) write(path, data string) {
	e.tb.Helper()
	fd, err := e.p.Open(e.t, path, vfs.O_CREAT|vfs.O_RDWR|vfs.O_TRUNC, 0o600)
	e.must(err)
	if n, err := e.p.Write(e.t, fd, []byte(data)); err != nil || n != len(data) {
		e.tb.Fatalf("write %s: %d %v", path, n, err)
	}
	e.must(e.p.Close(e.t, fd))
}

func (e *env) read(path string) (string, error) {
	fd, err := e.p.Open(e.t, path, vfs.O_RDONLY, 0)
	if err != nil {
		return "", err
	}
	defer e.p.Close(e.t, fd)
	var out []byte
	buf := make([]byte, 3000)
	for {
		n, err := e.p.Read(e.t, fd, buf)
		if err != nil {
			return "", err
		}
		if n == 0 {
			return string(out), nil
		}
		out = append(out, buf[:n]...)
	}
}

func (e *env) list(path string) []string {
	e.tb.Helper()
	fd, err := e.p.Open(e.t, path, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	e.must(err)
	defer e.p.Close(e.t, fd)
	var names []string
	buf := make([]byte, 512)
	for {
		n, err := e.p.Getdents64(e.t, fd, buf)
		e.must(err)
		if n == 0 {
			break
		}
		ds, err := vfs.ParseDirents(buf[:n])
		e.must(err)
		for _, d := range ds {
			names = append(names, d.Name)
		}
	}
	sort.Strings(names)
	return names
}

func (e *env) dir(path string) *f2fs.Inode {
	e.tb.Helper()
	d, err := e.p.LookupDentry(e.t, path, true)
	e.must(err)
	defer dcache.Dput(e.t, d)
	return f2fs.DirOf(d.Inode())
}

func (e *env) check(path string) {
	e.tb.Helper()
	if err := f2fs.CheckDir(e.t, e.dir(path)); err != nil {
		e.tb.Fatalf("%s: %v\n%s", path, err, f2fs.DumpDir(e.t, e.dir(path)))
	}
}

func TestVFSSmoke(t *testing.T) {
	for _, opts := range []f2fs.Options{{}, {NoInlineDentry: true}, {Casefold: true}} {
		t.Run(opts.String(), func(t *testing.T) {
			e := boot(t, &opts)
			e.must(e.p.Mkdir(e.t, "/a", 0o755))
			big := string(bytes.Repeat([]byte("0123456789"), 1000))
			e.write("/a/f", big)
			if got, err := e.read("/a/f"); err != nil || got != big {
				t.Fatalf("read back %d bytes, %v", len(got), err)
			}
			for i := 0; i < 300; i++ {
				e.write(fmt.Sprintf("/a/name-number-%03d", i), "x")
			}
			e.check("/a")
			if d := e.dir("/a"); d.Inline {
				t.Fatal("300 names still inline")
			}
			if got := len(e.list("/a")); got != 303 {
				t.Fatalf("%d entries listed", got)
			}
			for i := 0; i < 300; i += 2 {
				e.must(e.p.Unlink(e.t, fmt.Sprintf("/a/name-number-%03d", i)))
			}
			e.must(e.p.Rename(e.t, "/a/f", "/g", 0))
			e.must(e.p.Mkdir(e.t, "/a/sub", 0o755))
			e.must(e.p.Rename(e.t, "/a/sub", "/sub2", 0))
			e.check("/a")
			e.check("/")
			e.check("/sub2")
			if st, err := e.p.Stat(e.t, "/"); err != nil || st.Nlink != 4 {
				t.Fatalf("root: %v %v", st, err)
			}
			if err := e.p.Rmdir(e.t, "/a"); err != errno.ENOTEMPTY {
				t.Fatal(err)
			}
			e.must(e.p.Symlink(e.t, "g", "/l"))
			if got, err := e.read("/l"); err != nil || got != big {
				t.Fatal(err)
			}
			e.must(e.p.Link(e.t, "/g", "/a/hard"))
			if st, _ := e.p.Stat(e.t, "/g"); st.Nlink != 2 {
				t.Fatal(st)
			}
			e.must(e.p.Rename(e.t, "/g", "/a/hard", vfs.RENAME_EXCHANGE))
			e.must(e.p.Rename(e.t, "/sub2", "/l", vfs.RENAME_EXCHANGE))
			e.check("/")
			e.check("/a")
			if _, err := e.p.Stat(e.t, "/sub2/../a/hard"); err != errno.ENOTDIR && err != errno.ENOENT {
				t.Log(err)
			}
			if opts.Casefold {
				var fl uint32 = f2fs.FS_CASEFOLD_FL
				e.must(e.p.Mkdir(e.t, "/ci", 0o755))
				fd, err := e.p.Open(e.t, "/ci", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
				e.must(err)
				_, err = e.p.Ioctl(e.t, fd, f2fs.FS_IOC_SETFLAGS, &fl)
				e.must(err)
				e.must(e.p.Close(e.t, fd))
				e.write("/ci/Straße", "s")
				if got, err := e.read("/ci/STRASSE"); err != nil || got != "s" {
					t.Fatalf("casefolded lookup: %q %v", got, err)
				}
				if got := e.list("/ci"); fmt.Sprint(got) != "[. .. Straße]" {
					t.Fatal(got)
				}
				e.check("/ci")
			}
		})
	}
}

// TestRenameConvertsInlineDir: a rename inside a full inline directory
// makes f2fs_add_link convert it to dentry blocks; the old dentry must be
// found again before it is deleted, as f2fs_rename does.
func TestRenameConvertsInlineDir(t *testing.T) {
	e := boot(t, &f2fs.Options{})
	e.must(e.p.Mkdir(e.t, "/a", 0o755))
	// "." and ".." take 2 of the 182 inline slots; 8-byte names take one.
	for i := 0; i < 180; i++ {
		e.write(fmt.Sprintf("/a/f%07d", i), "x")
	}
	if !e.dir("/a").Inline {
		t.Fatal("not inline any more")
	}
	e.must(e.p.Rename(e.t, "/a/f0000007", "/a/g0000007", 0))
	if e.dir("/a").Inline {
		t.Fatal("still inline")
	}
	e.check("/a")
	names := e.list("/a")
	if len(names) != 182 || names[len(names)-1] != "g0000007" {
		t.Fatalf("%d names, last %q", len(names), names[len(names)-1])
	}
	if _, err := e.p.Stat(e.t, "/a/f0000007"); err != errno.ENOENT {
		t.Fatal(err)
	}
}
