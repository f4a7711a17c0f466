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
