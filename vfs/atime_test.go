package vfs_test

import (
	"testing"
	"time"

	"github.com/vfslab/vfslab/vfs"
)

// TestRelatime: under the default relatime a read updates the atime once
// after a change, then not again until a day passed; noatime never.
func TestRelatime(t *testing.T) {
	tk, sys, p, _ := umountMachine(t)
	fd := writeFile(t, tk, p, "/mnt/f", "data")
	p.Close(tk, fd)
	read := func() int64 {
		fd, err := p.Open(tk, "/mnt/f", vfs.O_RDONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		p.Read(tk, fd, make([]byte, 8))
		p.Close(tk, fd)
		st, _ := p.Stat(tk, "/mnt/f")
		return st.Atime
	}
	t0 := sys.Now()
	if a := read(); a != t0 {
		t.Fatalf("atime %d after a read at the creation time %d", a, t0)
	}
	sys.AdvanceClock(time.Minute)
	if a := read(); a != t0+int64(time.Minute) {
		t.Fatalf("first read after the change: atime %d, want %d", a, t0+int64(time.Minute))
	}
	sys.AdvanceClock(time.Minute)
	if a := read(); a != t0+int64(time.Minute) {
		t.Fatalf("second read: atime %d moved", a)
	}
	sys.AdvanceClock(24 * time.Hour)
	if a := read(); a != sys.Now() {
		t.Fatalf("a day later: atime %d, want %d", a, sys.Now())
	}
	st, _ := p.Stat(tk, "/mnt/f")
	if st.Mtime != t0 || st.Ctime != t0 {
		t.Fatalf("reads moved mtime %d or ctime %d", st.Mtime, st.Ctime)
	}
}
