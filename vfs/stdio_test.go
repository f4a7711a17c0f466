package vfs_test

import (
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/vfs"
)

// TestInheritStdio: a process with its standard streams opens its first
// file at 3, as under Linux; a syscall on a stream is EBADF, closing one
// frees its number for the next open, and exit leaves nothing behind.
func TestInheritStdio(t *testing.T) {
	e := boot(t)
	e.create("/f")
	p := e.sys.NewProc(e.t, nil)
	p.InheritStdio()
	fd, err := p.Open(e.t, "/f", vfs.O_RDONLY, 0)
	if err != nil || fd != 3 {
		t.Fatalf("first open: fd %d, %v; want 3", fd, err)
	}
	if _, err := p.Read(e.t, 0, make([]byte, 1)); err != errno.EBADF {
		t.Errorf("read(0): %v, want EBADF", err)
	}
	if _, err := p.Fstat(e.t, 1); err != errno.EBADF {
		t.Errorf("fstat(1): %v, want EBADF", err)
	}
	e.must(p.Close(e.t, 0))
	if err := p.Close(e.t, 0); err != errno.EBADF {
		t.Errorf("second close(0): %v, want EBADF", err)
	}
	fd2, err := p.Open(e.t, "/f", vfs.O_RDONLY, 0)
	if err != nil || fd2 != 0 {
		t.Errorf("open after close(0): fd %d, %v; want 0", fd2, err)
	}
	e.must(p.Close(e.t, fd))
	e.must(p.Close(e.t, fd2))
	p.Exit(e.t)
	// A process without them opens at 0, as before.
	q := e.sys.NewProc(e.t, nil)
	defer q.Exit(e.t)
	if fd, err := q.Open(e.t, "/f", vfs.O_RDONLY, 0); err != nil || fd != 0 {
		t.Errorf("open without stdio: fd %d, %v", fd, err)
	}
}
