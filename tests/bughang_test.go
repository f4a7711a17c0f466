package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/vfs"
)

// TestNoHangAfterBug reproduces issue 13's hang: a KASAN report inside
// ->lookup (f2fs casefold+encrypt, f2fs-lookup-prealloc=v2,
// lookup_mode=compat, a 200-byte name) used to leave the directory's
// i_rwsem held, so the next open(O_CREAT) there blocked forever.
func TestNoHangAfterBug(t *testing.T) {
	p, ok := patch.Lookup("f2fs-lookup-prealloc")
	if !ok {
		t.Fatal("no patch f2fs-lookup-prealloc")
	}
	s := mustBoot(t, config{fs: kF2fs, casefold: true, encrypt: true,
		f2fs:    &f2fs.Options{LookupMode: f2fs.LookupCompat},
		patches: patch.Set{}.MustWith(p, "v2")})
	// A 200-byte name on disk, then a lookup of a short one: v2 decrypts
	// the long name into a buffer sized for the short one.
	if err := s.creat(testDir+"/"+strings.Repeat("a", 200), nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() {
		_, err := s.p.Open(s.t, testDir+"/b", vfs.O_RDWR|vfs.O_CREAT, 0o600)
		done <- err
	}()
	var first error
	select {
	case first = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("first open hung")
	}
	if _, ok := kernel.AsBug(first); !ok {
		t.Fatalf("first open: %v, want a BUG/KASAN report", first)
	}
	go func() {
		_, err := s.p.Open(s.t, testDir+"/c", vfs.O_RDWR|vfs.O_CREAT, 0o600)
		done <- err
	}()
	select {
	case err := <-done:
		// The same overflow: every lookup in the directory compares
		// against the 200-byte name.
		if _, ok := kernel.AsBug(err); !ok {
			t.Fatalf("second open: %v, want the same report", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("open(O_CREAT) after the report hangs: the directory's i_rwsem was left held")
	}
	// The report names the lock the task held, and the machine is tainted.
	for _, want := range []string{"KASAN: slab-out-of-bounds in vfs.GenericCIMatch", "1 lock held by tests/", "(&type->i_mutex_dir_key)", "at: open_last_lookups"} {
		if !s.k.Log.Contains(want) {
			t.Errorf("log lacks %q", want)
		}
	}
	if !s.k.TestTaint(kernel.TAINT_BAD_PAGE) {
		t.Errorf("machine not tainted: %s", s.k.PrintTainted())
	}
	if t.Failed() {
		for _, l := range s.k.Log.Lines() {
			t.Log(l)
		}
	}
}

// bugLookup is a directory's ->lookup that raises a BUG for one name, as a
// BUG_ON in a filesystem's lookup would.
type bugLookup struct {
	vfs.InodeOperations
	name string
}

func (b bugLookup) Lookup(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, flags uint32) (*vfs.Dentry, error) {
	if d.Name().Name == b.name {
		kernel.BUG("lookup of " + b.name)
	}
	return b.InodeOperations.Lookup(t, dir, d, flags)
}

// TestNoHangAfterBugInCreate: a BUG inside ->lookup from open(O_CREAT)
// (open_last_lookups) and from mkdir (filename_create) kills the task in
// the kernel with the directory's i_rwsem held, so every later creation
// there would hang. The simulator reports the lock the task held, says
// that the kernel would never release it, taints the machine with
// TAINT_DIE, releases it, and later creations go on.
func TestNoHangAfterBugInCreate(t *testing.T) {
	for _, cfg := range []config{{fs: kMemfs}, {fs: kExt4}, {fs: kF2fs, encrypt: true}} {
		s := mustBoot(t, cfg)
		dir, err := s.inode(testDir)
		if err != nil {
			t.Fatal(err)
		}
		dir.Op = bugLookup{dir.Op, "boom"}
		for _, op := range []struct {
			name, site string
			do         func(path string) error
		}{
			{"open(O_CREAT)", "open_last_lookups", func(path string) error {
				fd, err := s.p.Open(s.t, path, vfs.O_RDWR|vfs.O_CREAT, 0o600)
				if err == nil {
					s.p.Close(s.t, fd)
				}
				return err
			}},
			{"mkdir", "filename_create", func(path string) error { return s.p.Mkdir(s.t, path, 0o755) }},
		} {
			done := make(chan error, 1)
			go func() { done <- op.do(testDir + "/boom") }()
			if b, ok := kernel.AsBug(<-done); !ok || b.Kind != "BUG" {
				t.Fatalf("%s: %s boom: want a BUG report", cfg, op.name)
			}
			for _, want := range []string{"1 lock held by tests/", "at: " + op.site, "died holding them"} {
				if !s.k.Log.Contains(want) {
					t.Errorf("%s: %s: log lacks %q", cfg, op.name, want)
				}
			}
			go func() { done <- op.do(testDir + "/after-" + op.site) }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("%s: %s after the BUG: %v", cfg, op.name, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: %s after a BUG in ->lookup hangs on the directory's i_rwsem", cfg, op.name)
			}
		}
		if !s.k.TestTaint(kernel.TAINT_DIE) {
			t.Errorf("%s: not tainted D: %s", cfg, s.k.PrintTainted())
		}
	}
}
