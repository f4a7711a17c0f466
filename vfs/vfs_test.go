package vfs_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/memfs"
	"github.com/vfslab/vfslab/vfs"
)

type env struct {
	tb  testing.TB
	k   *kernel.Kernel
	t   *kernel.Task
	sys *vfs.System
	p   *vfs.Proc
}

func boot(tb testing.TB) *env {
	tb.Helper()
	k := kernel.New()
	t := k.NewTask("vfs-test")
	t.EnableCounting()
	tb.Cleanup(t.Exit)
	sys, p, err := memfs.Boot(t, vfs.Config{}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return &env{tb: tb, k: k, t: t, sys: sys, p: p}
}

func (e *env) must(err error) {
	e.tb.Helper()
	if err != nil {
		e.tb.Fatal(err)
	}
}

func (e *env) create(path string) {
	e.tb.Helper()
	fd, err := e.p.Open(e.t, path, vfs.O_CREAT|vfs.O_WRONLY, 0o644)
	e.must(err)
	e.must(e.p.Close(e.t, fd))
}

func (e *env) delta(fn func()) func(string) uint64 {
	before := e.t.Ev.Clone()
	fn()
	d := e.t.Ev.Sub(before)
	return func(name string) uint64 {
		for _, ev := range []struct {
			n string
			v uint64
		}{
			{"rcu", d.Get(vfs.EvPathWalkRCU)}, {"fallback", d.Get(vfs.EvPathWalkFallback)},
			{"unlazy", d.Get(vfs.EvPathWalkUnlazy)}, {"lookup_slow", d.Get(vfs.EvLookupSlow)},
			{"lockref", d.Get(dcache.EvLockrefRMW)}, {"dget", d.Get(dcache.EvDget)},
		} {
			if ev.n == name {
				return ev.v
			}
		}
		panic(name)
	}
}

// TestRCUWalkCachedPath: a path whose dentries are all cached resolves
// in RCU mode without a slow lookup or a fallback; references are taken
// only on the final dentry.
func TestRCUWalkCachedPath(t *testing.T) {
	e := boot(t)
	e.must(e.p.Mkdir(e.t, "/a", 0o755))
	e.must(e.p.Mkdir(e.t, "/a/b", 0o755))
	e.create("/a/b/f")
	e.must(e.p.Chdir(e.t, "/a"))
	for _, path := range []string{"/a/b/f", "b/f", "./b/../b/f", "/a/b/../../a/b/f"} {
		ev := e.delta(func() {
			if _, err := e.p.Stat(e.t, path); err != nil {
				t.Fatal(err)
			}
		})
		if ev("rcu") != 1 || ev("fallback") != 0 || ev("lookup_slow") != 0 || ev("unlazy") != 1 {
			t.Errorf("stat(%q): rcu=%d fallback=%d unlazy=%d lookup_slow=%d", path, ev("rcu"), ev("fallback"), ev("unlazy"), ev("lookup_slow"))
		}
		// complete_walk's legitimize and the final dput: one reference
		// taken, on the file's own dentry.
		if ev("dget") != 1 {
			t.Errorf("stat(%q): %d references taken", path, ev("dget"))
		}
	}
}

// TestRCUWalkFallsBackAfterRename renames a directory while an RCU-walk
// stands on it: the walk notices the changed d_seq, restarts in ref mode
// and answers from the new tree.
func TestRCUWalkFallsBackAfterRename(t *testing.T) {
	e := boot(t)
	e.must(e.p.Mkdir(e.t, "/a", 0o755))
	e.must(e.p.Mkdir(e.t, "/a/b", 0o755))
	e.create("/a/b/f")
	other := e.k.NewTask("renamer")
	defer other.Exit()
	p2 := e.sys.NewProc(other, nil)
	defer p2.Exit(other)
	fired := false
	vfs.SetTestHookStep(func(rcu bool) {
		if rcu && !fired {
			fired = true
			if err := p2.Rename(other, "/a", "/z", 0); err != nil {
				t.Errorf("rename: %v", err)
			}
		}
	})
	defer vfs.SetTestHookStep(nil)
	var err error
	ev := e.delta(func() { _, err = e.p.Stat(e.t, "/a/b/f") })
	if err != errno.ENOENT {
		t.Fatalf("stat after the rename: %v", err)
	}
	if ev("fallback") != 1 {
		t.Fatalf("fallbacks: %d", ev("fallback"))
	}
	if _, err := e.p.Stat(e.t, "/z/b/f"); err != nil {
		t.Fatal(err)
	}
}

func TestSymlinkLimits(t *testing.T) {
	e := boot(t)
	e.create("/f")
	// A chain of 40 links resolves, 41 is ELOOP.
	e.must(e.p.Symlink(e.t, "/f", "/l0"))
	for i := 1; i <= 40; i++ {
		e.must(e.p.Symlink(e.t, fmt.Sprintf("l%d", i-1), fmt.Sprintf("/l%d", i)))
	}
	if _, err := e.p.Stat(e.t, "/l39"); err != nil {
		t.Fatalf("40 links: %v", err)
	}
	if _, err := e.p.Stat(e.t, "/l40"); err != errno.ELOOP {
		t.Fatalf("41 links: %v", err)
	}
	if _, err := e.p.Lstat(e.t, "/l40"); err != nil {
		t.Fatalf("lstat does not follow: %v", err)
	}
	e.must(e.p.Symlink(e.t, "loop", "/loop"))
	if _, err := e.p.Open(e.t, "/loop", vfs.O_RDONLY, 0); err != errno.ELOOP {
		t.Fatalf("self loop: %v", err)
	}
	if _, err := e.p.Open(e.t, "/l0", vfs.O_RDONLY|vfs.O_NOFOLLOW, 0); err != errno.ELOOP {
		t.Fatalf("O_NOFOLLOW on a symlink: %v", err)
	}
	// A dangling symlink with O_CREAT creates its target.
	e.must(e.p.Symlink(e.t, "/target", "/dangling"))
	fd, err := e.p.Open(e.t, "/dangling", vfs.O_CREAT|vfs.O_WRONLY, 0o644)
	e.must(err)
	e.p.Close(e.t, fd)
	if _, err := e.p.Lstat(e.t, "/target"); err != nil {
		t.Fatalf("O_CREAT through a dangling symlink: %v", err)
	}
}

func TestNameLimits(t *testing.T) {
	e := boot(t)
	long := strings.Repeat("n", 255)
	e.create("/" + long)
	if err := e.p.Mkdir(e.t, "/"+long+"x", 0o755); err != errno.ENAMETOOLONG {
		t.Fatalf("256-byte name: %v", err)
	}
	if _, err := e.p.Stat(e.t, "/"+strings.Repeat("a/", 2047)+"b"); err != errno.ENAMETOOLONG {
		t.Fatalf("4096-byte path: %v", err)
	}
	if _, err := e.p.Stat(e.t, "/"+strings.Repeat("./", 2046)+"b"); err != errno.ENOENT {
		t.Fatalf("4094-byte path: %v", err)
	}
	if _, err := e.p.Stat(e.t, ""); err != errno.ENOENT {
		t.Fatalf("empty path: %v", err)
	}
}

func TestMounts(t *testing.T) {
	e := boot(t)
	e.must(e.p.Mkdir(e.t, "/mnt", 0o755))
	e.create("/f")
	if _, err := e.sys.Mount(e.t, e.p, memfs.Type, "/f", vfs.MountOptions{Source: "other"}); err != errno.ENOTDIR {
		t.Fatalf("mount on a file: %v", err)
	}
	m, err := e.sys.Mount(e.t, e.p, memfs.Type, "/mnt", vfs.MountOptions{Source: "other"})
	e.must(err)
	t.Log(m)
	if _, err := e.sys.Mount(e.t, e.p, memfs.Type, "/mnt", vfs.MountOptions{Source: "third"}); err != nil {
		t.Fatalf("mount over a mount: %v", err)
	}
	e.create("/mnt/g")
	root, _ := e.p.Stat(e.t, "/")
	g, err := e.p.Stat(e.t, "/mnt/g")
	e.must(err)
	if g.Dev == root.Dev {
		t.Errorf("same device on both sides of the mount")
	}
	if st, err := e.p.Stat(e.t, "/mnt/../f"); err != nil || st.Dev != root.Dev {
		t.Errorf(".. out of the mount: %v %v", st, err)
	}
	if err := e.p.Rename(e.t, "/f", "/mnt/f", 0); err != errno.EXDEV {
		t.Errorf("rename across mounts: %v", err)
	}
	if err := e.p.Link(e.t, "/f", "/mnt/f"); err != errno.EXDEV {
		t.Errorf("link across mounts: %v", err)
	}
	if err := e.p.Rmdir(e.t, "/mnt"); err != errno.EBUSY {
		t.Errorf("rmdir of a mountpoint: %v", err)
	}
	if err := e.p.Rename(e.t, "/mnt", "/mnt2", 0); err != errno.EBUSY {
		t.Errorf("rename of a mountpoint: %v", err)
	}
	if err := e.p.Chdir(e.t, "/mnt"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.p.Stat(e.t, "g"); err != nil {
		t.Errorf("relative path in the mount: %v", err)
	}
}

func TestReaddirResumesAcrossChanges(t *testing.T) {
	e := boot(t)
	e.must(e.p.Mkdir(e.t, "/d", 0o755))
	for i := 0; i < 20; i++ {
		e.create(fmt.Sprintf("/d/f%02d", i))
	}
	fd, err := e.p.Open(e.t, "/d", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	e.must(err)
	defer e.p.Close(e.t, fd)
	buf := make([]byte, 24*3) // three short records at a time
	var seen []string
	for round := 0; ; round++ {
		n, err := e.p.Getdents64(e.t, fd, buf)
		e.must(err)
		if n == 0 {
			break
		}
		ds, _ := vfs.ParseDirents(buf[:n])
		for _, d := range ds {
			seen = append(seen, d.Name)
		}
		if round == 1 {
			// Remove an entry already listed and one still ahead, add one.
			e.must(e.p.Unlink(e.t, "/d/f00"))
			e.must(e.p.Unlink(e.t, "/d/f10"))
			e.create("/d/new")
		}
	}
	want := []string{".", ".."}
	for i := 0; i < 20; i++ {
		if i != 10 {
			want = append(want, fmt.Sprintf("f%02d", i))
		}
	}
	want = append(want, "new")
	if strings.Join(seen, " ") != strings.Join(want, " ") {
		t.Fatalf("listing:\n got %v\nwant %v", seen, want)
	}
	if _, err := e.p.Getdents64(e.t, fd, make([]byte, 10)); err != nil {
		t.Fatalf("at the end a small buffer is fine: %v", err)
	}
	e.p.Lseek(e.t, fd, 0, vfs.SEEK_SET)
	if _, err := e.p.Getdents64(e.t, fd, make([]byte, 10)); err != errno.EINVAL {
		t.Fatalf("buffer too small for \".\": %v", err)
	}
}

// TestTraceOpen shows a traced open crossing the layers; memfs is tmpfs,
// whose ->open is generic_file_open (no fscrypt_file_open).
func TestTraceOpen(t *testing.T) {
	e := boot(t)
	e.must(e.p.Mkdir(e.t, "/tmp", 0o755))
	e.create("/tmp/f")
	clock := time.Unix(0, 0)
	e.t.Tracer = &kernel.Tracer{Clock: func() time.Time { clock = clock.Add(time.Microsecond); return clock }}
	fd, err := e.p.Open(e.t, "/tmp/f", vfs.O_RDWR, 0)
	e.must(err)
	var b strings.Builder
	e.t.Tracer.Print(&b, false)
	e.t.Tracer = nil
	e.p.Close(e.t, fd)
	want := `              |  do_sys_openat2() {
              |    path_openat() {
              |      lookup_fast() {
              |        /* dcache hit on "tmp" in RCU-walk (__d_lookup_rcu, no reference) */
              |      } /* lookup_fast */
              |      lookup_fast() {
              |        /* dcache hit on "f" in RCU-walk (__d_lookup_rcu, no reference) */
              |      } /* lookup_fast */
              |      /* complete_walk: RCU-walk ends, reference taken on "f" */
              |      vfs_open() {
              |        generic_file_open();
              |      } /* vfs_open */
              |    } /* path_openat */
              |  } /* do_sys_openat2 */
`
	if b.String() != want {
		t.Fatalf("trace:\n%s\nwant:\n%s", b.String(), want)
	}
}
