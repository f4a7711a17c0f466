package vfs_test

import (
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/vfs"
)

// TestBindMount: a bind mount of a mounted directory sees the same files;
// remounted read-only with MS_BIND it gives EROFS (mnt_want_write) while
// the superblock and the first mount stay writable; a file open through
// it makes it busy, and making it read-only while a file is open for
// writing through it is EBUSY; it unmounts before or after the mount it
// was made from, the superblock going with the last one.
func TestBindMount(t *testing.T) {
	tk, sys, p, _ := umountMachine(t)
	for _, d := range []string{"/mnt/sub", "/mnt/ro", "/b"} {
		if err := p.Mkdir(tk, d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p.Close(tk, writeFile(t, tk, p, "/mnt/sub/file", "hello"))
	if _, err := sys.BindMount(tk, p, "/mnt", "/mnt/ro"); err != nil {
		t.Fatal(err)
	}
	if err := sys.ReconfigureMount(tk, p, "/mnt/ro", true); err != nil {
		t.Fatal(err)
	}
	if err := sys.ReconfigureMount(tk, p, "/mnt/ro/sub", true); err != errno.EINVAL {
		t.Errorf("reconfigure below a mount's root: %v, want EINVAL", err)
	}
	if _, err := p.Open(tk, "/mnt/ro/new", vfs.O_CREAT|vfs.O_WRONLY, 0o644); err != errno.EROFS {
		t.Errorf("create through the read-only bind: %v, want EROFS", err)
	}
	if err := p.Setxattr(tk, "/mnt/ro/sub/file", "user.x", []byte("1"), 0, true); err != errno.EROFS {
		t.Errorf("setxattr through the read-only bind: %v, want EROFS", err)
	}
	if err := p.Mkdir(tk, "/mnt/ro/d", 0o755); err != errno.EROFS {
		t.Errorf("mkdir through the read-only bind: %v, want EROFS", err)
	}
	p.Close(tk, writeFile(t, tk, p, "/mnt/new", "x"))
	if _, err := p.Stat(tk, "/mnt/ro/new"); err != nil {
		t.Errorf("a file made through the first mount, seen through the bind: %v", err)
	}
	var first, bind *vfs.Mount
	for _, m := range sys.Mounts() {
		switch m.MountPoint(tk) {
		case "/mnt":
			first = m
		case "/mnt/ro":
			bind = m
		}
	}
	if first == nil || bind == nil || first.MntIsReadonly() || !bind.MntIsReadonly() || bind.SB != first.SB || bind.SB.ReadOnly() {
		t.Fatalf("mounts: %v %v", first, bind)
	}
	if err := sys.ReconfigureMount(tk, p, "/mnt/ro", false); err != nil {
		t.Fatal(err)
	}
	fd, err := p.Open(tk, "/mnt/ro/sub/file", vfs.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := sys.ReconfigureMount(tk, p, "/mnt/ro", true); err != errno.EBUSY {
		t.Errorf("read-only with a writer: %v, want EBUSY", err)
	}
	if _, err := sys.Umount(tk, p, "/mnt/ro"); err != errno.EBUSY {
		t.Errorf("umount with an open file: %v, want EBUSY", err)
	}
	p.Close(tk, fd)
	if sb, err := sys.Umount(tk, p, "/mnt/ro"); err != nil || sb != nil {
		t.Errorf("umount of the bind: %v %v, want the superblock kept", sb, err)
	}
	if _, err := p.Stat(tk, "/mnt/sub/file"); err != nil {
		t.Errorf("the first mount after the bind's umount: %v", err)
	}
	// A bind of a subdirectory outlives the mount it came from.
	if _, err := sys.BindMount(tk, p, "/mnt/sub", "/b"); err != nil {
		t.Fatal(err)
	}
	if _, err := sys.BindMount(tk, p, "/mnt/sub/file", "/b"); err != errno.ENOTDIR {
		t.Errorf("a file on a directory: %v, want ENOTDIR", err)
	}
	if _, err := sys.Umount(tk, p, "/mnt"); err != nil {
		t.Fatalf("umount of the first mount: %v", err)
	}
	buf := make([]byte, 8)
	fd, err = p.Open(tk, "/b/file", vfs.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := p.Read(tk, fd, buf); string(buf[:n]) != "hello" {
		t.Errorf("read through the bind: %q", buf[:n])
	}
	p.Close(tk, fd)
	if sb, err := sys.Umount(tk, p, "/b"); err != nil || sb == nil {
		t.Errorf("umount of the last mount: %v %v, want the superblock", sb, err)
	}
	if _, err := p.Stat(tk, "/b/file"); err != errno.ENOENT {
		t.Errorf("after the last umount: %v, want ENOENT", err)
	}
}
