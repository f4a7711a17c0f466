package vfs_test

import (
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/memfs"
	"github.com/vfslab/vfslab/vfs"
)

// umountMachine is a memfs root with ext4 (encryption on) mounted on /mnt.
func umountMachine(t *testing.T) (*kernel.Task, *vfs.System, *vfs.Proc, *vfs.BlockDevice) {
	t.Helper()
	tk := kernel.New().NewTask("test")
	sys, p, err := memfs.Boot(tk, vfs.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Mkdir(tk, "/mnt", 0o755); err != nil {
		t.Fatal(err)
	}
	dev := vfs.NewGrowingBlockDevice()
	if err := ext4.Type.Mkfs(tk, dev, []string{"-O", "encrypt"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sys.Mount(tk, p, ext4.Type, "/mnt", vfs.MountOptions{Source: "vdb", Device: dev}); err != nil {
		t.Fatal(err)
	}
	return tk, sys, p, dev
}

func writeFile(t *testing.T, tk *kernel.Task, p *vfs.Proc, path, data string) int {
	t.Helper()
	fd, err := p.Open(tk, path, vfs.O_CREAT|vfs.O_RDWR, 0o644)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	if _, err := p.Write(tk, fd, []byte(data)); err != nil {
		t.Fatal(err)
	}
	return fd
}

// TestUmount: umount refuses the root, a non-root path and a busy mount;
// it destroys the keyring; MountSuper attaches the superblock again with
// the files still there.
func TestUmount(t *testing.T) {
	tk, sys, p, dev := umountMachine(t)
	if _, err := sys.Umount(tk, p, "/"); err != errno.EBUSY {
		t.Errorf("umount /: %v, want EBUSY", err)
	}
	if err := p.Mkdir(tk, "/mnt/d", 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := sys.Umount(tk, p, "/mnt/d"); err != errno.EINVAL {
		t.Errorf("umount of a directory that is not a mount root: %v, want EINVAL", err)
	}
	raw := make([]byte, 64)
	id, err := p.EncryptDir(tk, "/mnt/d", raw, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	fd := writeFile(t, tk, p, "/mnt/d/f", "kept")
	if _, err := sys.Umount(tk, p, "/mnt"); err != errno.EBUSY {
		t.Errorf("umount with a file open: %v, want EBUSY", err)
	}
	p.Close(tk, fd)
	sb, err := sys.Umount(tk, p, "/mnt")
	if err != nil {
		t.Fatalf("umount: %v", err)
	}
	if _, err := p.Stat(tk, "/mnt/d"); err != errno.ENOENT {
		t.Errorf("stat /mnt/d after umount: %v, want ENOENT (the mountpoint is empty)", err)
	}
	if _, err := sys.Mount(tk, p, ext4.Type, "/mnt", vfs.MountOptions{Source: "vdb", Device: dev}); err != nil {
		t.Fatalf("the device is released: a new mount works: %v", err)
	}
	if _, err := sys.Umount(tk, p, "/mnt"); err != nil {
		t.Fatal(err)
	}
	if _, err := sys.MountSuper(tk, p, sb, "/mnt"); err != nil {
		t.Fatalf("MountSuper: %v", err)
	}
	dfd, err := p.Open(tk, "/mnt", vfs.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(tk, dfd)
	if st, err := p.KeyStatus(tk, dfd, id); err != nil || st != fscrypt.KeyStatusAbsent {
		t.Errorf("key status after umount: %d, %v; want absent (the keyring was destroyed)", st, err)
	}
	if _, err := p.Stat(tk, "/mnt/d/f"); err != errno.ENOENT {
		t.Errorf("plaintext name without the key after the cycle: %v, want ENOENT", err)
	}
	if _, err := p.AddEncryptionKey(tk, dfd, raw); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	rfd, err := p.Open(tk, "/mnt/d/f", vfs.O_RDONLY, 0)
	if err != nil {
		t.Fatalf("the file survives the cycle: %v", err)
	}
	n, _ := p.Read(tk, rfd, buf)
	p.Close(tk, rfd)
	if string(buf[:n]) != "kept" {
		t.Errorf("contents after the cycle: %q", buf[:n])
	}
}

// TestDropCaches: drop_caches 2 frees unused dentries, and the inodes
// nothing holds lose their key (fscrypt_put_encryption_info), so that a key
// removed while a file was open no longer unlocks the file once it is
// closed and the caches dropped; mode 1 drops nothing the model keeps.
func TestDropCaches(t *testing.T) {
	tk, sys, p, _ := umountMachine(t)
	if err := p.Mkdir(tk, "/mnt/d", 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := p.EncryptDir(tk, "/mnt/d", make([]byte, 64), 0, 0); err != nil {
		t.Fatal(err)
	}
	p.Close(tk, writeFile(t, tk, p, "/mnt/d/f", "x"))
	before := sys.Dcache.Stats()
	sys.DropCaches(tk, 1)
	if sys.Dcache.Stats() != before {
		t.Errorf("drop_caches 1 changed the dcache")
	}
	sys.DropCaches(tk, 2)
	after := sys.Dcache.Stats()
	if after == before {
		t.Errorf("drop_caches 2 freed no dentry: %+v", after)
	}
	if _, err := p.Stat(tk, "/mnt/d/f"); err != nil {
		t.Errorf("the file is looked up again after drop_caches: %v", err)
	}
}

// TestChown: root gives a file away; another user may not, but may "give"
// its own file to itself.
func TestChown(t *testing.T) {
	tk, sys, p, _ := umountMachine(t)
	p.Close(tk, writeFile(t, tk, p, "/mnt/f", ""))
	if err := p.Chown(tk, "/mnt/f", 1000, true); err != nil {
		t.Fatal(err)
	}
	st, _ := p.Stat(tk, "/mnt/f")
	if st.UID != 1000 {
		t.Fatalf("uid %d after chown 1000", st.UID)
	}
	u := sys.NewProc(tk, &kernel.Cred{UID: 1000})
	if err := u.Chown(tk, "/mnt/f", 1000, true); err != nil {
		t.Errorf("owner to itself: %v", err)
	}
	if err := u.Chown(tk, "/mnt/f", 0, true); err != errno.EPERM {
		t.Errorf("user gives its file to root: %v, want EPERM", err)
	}
	o := sys.NewProc(tk, &kernel.Cred{UID: 1001})
	if err := o.Chown(tk, "/mnt/f", 1000, true); err != errno.EPERM {
		t.Errorf("another user: %v, want EPERM", err)
	}
}
