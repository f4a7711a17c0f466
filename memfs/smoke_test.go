package memfs_test

import (
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/memfs"
	"github.com/vfslab/vfslab/vfs"
)

func TestSmoke(t *testing.T) {
	k := kernel.New()
	task := k.NewTask("smoke")
	defer task.Exit()
	_, p, err := memfs.Boot(task, vfs.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Mkdir(task, "/a", 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := p.Open(task, "/a/f", vfs.O_CREAT|vfs.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := p.Write(task, fd, []byte("hello")); n != 5 || err != nil {
		t.Fatal(n, err)
	}
	if _, err := p.Lseek(task, fd, 0, vfs.SEEK_SET); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	if n, err := p.Read(task, fd, buf); n != 5 || err != nil || string(buf[:5]) != "hello" {
		t.Fatal(n, err, buf)
	}
	if err := p.Close(task, fd); err != nil {
		t.Fatal(err)
	}
	if err := p.Mkdir(task, "/a", 0o755); err != errno.EEXIST {
		t.Fatal(err)
	}
	if err := p.Rmdir(task, "/a"); err != errno.ENOTEMPTY {
		t.Fatal(err)
	}
	if err := p.Symlink(task, "a/f", "/l"); err != nil {
		t.Fatal(err)
	}
	st, err := p.Stat(task, "/l")
	if err != nil || st.Size != 5 {
		t.Fatal(st, err)
	}
	if err := p.Rename(task, "/a/f", "/g", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stat(task, "/l"); err != errno.ENOENT {
		t.Fatal(err)
	}
	dfd, err := p.Open(task, "/", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	dbuf := make([]byte, 4096)
	n, err := p.Getdents64(task, dfd, dbuf)
	if err != nil {
		t.Fatal(err)
	}
	ds, _ := vfs.ParseDirents(dbuf[:n])
	t.Log(ds)
	if len(ds) != 5 {
		t.Fatal(ds)
	}
}
