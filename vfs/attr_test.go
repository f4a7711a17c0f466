package vfs_test

import (
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// asUser runs fn as a process of cred on task tk (current_cred() is the
// task's, as the shell's machine sets it per syscall).
func asUser(tk *kernel.Task, sys *vfs.System, cred *kernel.Cred, fn func(p *vfs.Proc)) {
	p := sys.NewProc(tk, cred)
	tk.Cred = cred
	defer func() { tk.Cred = nil }()
	fn(p)
}

// TestChmodAndPermission: chmod is the owner's (EPERM otherwise), the
// mode bits decide open, create, delete and search for the owner, the
// group (fsgid or a supplementary group) and the others, uid 0 overrides
// them, and a sticky directory keeps others' files.
func TestChmodAndPermission(t *testing.T) {
	tk, sys, p, _ := umountMachine(t)
	p.Close(tk, writeFile(t, tk, p, "/mnt/f", "x"))
	if err := p.Mkdir(tk, "/mnt/d", 0o755); err != nil {
		t.Fatal(err)
	}
	owner := &kernel.Cred{UID: 1000, GID: 1000}
	member := &kernel.Cred{UID: 1001, GID: 1001, Groups: []uint32{1001, 100}}
	other := &kernel.Cred{UID: 1002, GID: 1002}
	if err := p.Chown(tk, "/mnt/f", 1000, true); err != nil {
		t.Fatal(err)
	}
	if err := p.Chgrp(tk, "/mnt/f", 100, true); err != nil {
		t.Fatal(err)
	}
	asUser(tk, sys, other, func(u *vfs.Proc) {
		if err := u.Chmod(tk, "/mnt/f", 0o777); err != errno.EPERM {
			t.Errorf("chmod by another user: %v, want EPERM", err)
		}
	})
	asUser(tk, sys, owner, func(u *vfs.Proc) {
		if err := u.Chmod(tk, "/mnt/f", 0o640|vfs.S_ISGID); err != nil {
			t.Errorf("chmod by the owner: %v", err)
		}
	})
	// The owner is not in group 100: setattr_prepare drops S_ISGID.
	if st, _ := p.Stat(tk, "/mnt/f"); st.Mode != vfs.S_IFREG|0o640 || st.GID != 100 {
		t.Fatalf("mode %#o gid %d, want %#o gid 100", st.Mode, st.GID, vfs.S_IFREG|0o640)
	}
	open := func(cred *kernel.Cred, flags int) error {
		var err error
		asUser(tk, sys, cred, func(u *vfs.Proc) {
			var fd int
			if fd, err = u.Open(tk, "/mnt/f", flags, 0); err == nil {
				u.Close(tk, fd)
			}
		})
		return err
	}
	for _, c := range []struct {
		name  string
		cred  *kernel.Cred
		flags int
		want  error
	}{
		{"owner writes", owner, vfs.O_WRONLY, nil},
		{"group member reads", member, vfs.O_RDONLY, nil},
		{"group member writes", member, vfs.O_WRONLY, errno.EACCES},
		{"other reads", other, vfs.O_RDONLY, errno.EACCES},
		{"root writes", kernel.RootCred, vfs.O_RDWR, nil},
	} {
		if err := open(c.cred, c.flags); err != c.want {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// A directory without search permission stops the walk; without
	// write permission nothing is created or removed in it.
	if err := p.Chmod(tk, "/mnt/d", 0o700); err != nil {
		t.Fatal(err)
	}
	asUser(tk, sys, other, func(u *vfs.Proc) {
		if _, err := u.Stat(tk, "/mnt/d/x"); err != errno.EACCES {
			t.Errorf("stat below a 0700 directory: %v, want EACCES", err)
		}
		if err := u.Mkdir(tk, "/mnt/x", 0o755); err != errno.EACCES {
			t.Errorf("mkdir in a 0755 root-owned directory: %v, want EACCES", err)
		}
		if err := u.Unlink(tk, "/mnt/f"); err != errno.EACCES {
			t.Errorf("unlink in a 0755 root-owned directory: %v, want EACCES", err)
		}
	})
	// Sticky: others may create but not remove what is not theirs.
	if err := p.Chmod(tk, "/mnt/d", 0o1777); err != nil {
		t.Fatal(err)
	}
	asUser(tk, sys, owner, func(u *vfs.Proc) {
		if err := u.Mkdir(tk, "/mnt/d/mine", 0o755); err != nil {
			t.Errorf("mkdir in a 1777 directory: %v", err)
		}
	})
	asUser(tk, sys, other, func(u *vfs.Proc) {
		if err := u.Rmdir(tk, "/mnt/d/mine"); err != errno.EPERM {
			t.Errorf("rmdir of another's directory under the sticky bit: %v, want EPERM", err)
		}
	})
	asUser(tk, sys, owner, func(u *vfs.Proc) {
		if err := u.Rmdir(tk, "/mnt/d/mine"); err != nil {
			t.Errorf("rmdir of one's own directory: %v", err)
		}
	})
}

// TestReadOnlyDeviceAndRemount: a read-write mount of a write-protected
// device is EACCES (setup_bdev_super), a read-only one works; remount,ro
// is EBUSY while a file is open for writing, and remount,rw of a
// write-protected device is EACCES.
func TestReadOnlyDeviceAndRemount(t *testing.T) {
	tk, sys, p, dev := umountMachine(t)
	fd := writeFile(t, tk, p, "/mnt/f", "x")
	if err := sys.RemountReadonly(tk, p, "/mnt", true); err != errno.EBUSY {
		t.Fatalf("remount,ro with a file open for writing: %v, want EBUSY", err)
	}
	p.Close(tk, fd)
	if err := sys.RemountReadonly(tk, p, "/mnt", true); err != nil {
		t.Fatalf("remount,ro: %v", err)
	}
	if _, err := p.Open(tk, "/mnt/g", vfs.O_CREAT|vfs.O_WRONLY, 0o644); err != errno.EROFS {
		t.Fatalf("create on a read-only remount: %v, want EROFS", err)
	}
	if _, err := sys.Umount(tk, p, "/mnt"); err != nil {
		t.Fatal(err)
	}
	dev.SetReadOnly(true)
	if _, err := sys.Mount(tk, p, ext4.Type, "/mnt", vfs.MountOptions{Source: "vdb", Device: dev}); err != errno.EACCES {
		t.Fatalf("read-write mount of a write-protected device: %v, want EACCES", err)
	}
	m, err := sys.Mount(tk, p, ext4.Type, "/mnt", vfs.MountOptions{Source: "vdb", Device: dev, ReadOnly: true})
	if err != nil || !m.IsReadonly() || !m.SB.ReadOnly() {
		t.Fatalf("read-only mount: %v", err)
	}
	if err := sys.RemountReadonly(tk, p, "/mnt", false); err != errno.EACCES {
		t.Fatalf("remount,rw of a write-protected device: %v, want EACCES", err)
	}
}

// TestMknodRules: may_mknod's answers, and the special files ext4's
// ->mknod makes (ext4_mknod).
func TestMknodRules(t *testing.T) {
	tk, sys, p, _ := umountMachine(t)
	for _, c := range []struct {
		name string
		mode uint32
		want error
	}{
		{"/mnt/r", 0o644, nil},
		{"/mnt/d", vfs.S_IFDIR | 0o755, errno.EPERM},
		{"/mnt/bad", 0o170000 | 0o644, errno.EINVAL},
		{"/mnt/fifo", vfs.S_IFIFO | 0o644, nil},
		{"/mnt/r", vfs.S_IFIFO | 0o644, errno.EEXIST},
	} {
		if err := p.Mknod(tk, c.name, c.mode, 0); err != c.want {
			t.Errorf("mknod %s %#o: %v, want %v", c.name, c.mode, err, c.want)
		}
	}
	if st, err := p.Stat(tk, "/mnt/r"); err != nil || st.Mode != vfs.S_IFREG|0o644 {
		t.Errorf("mknod of a regular file: %v %#o", err, st.Mode)
	}
	asUser(tk, sys, &kernel.Cred{UID: 1000, GID: 1000}, func(u *vfs.Proc) {
		if err := u.Mknod(tk, "/tmp-none/x", vfs.S_IFCHR|0o600, 0x0103); err != errno.ENOENT {
			t.Errorf("mknod under a missing directory: %v, want ENOENT", err)
		}
	})
}

// TestMountBugReleasesDevice: a fill_super that dies in a BUG fails the
// mount with the recovered report, and the device is not left claimed
// (the next mount of it is not EBUSY).
func TestMountBugReleasesDevice(t *testing.T) {
	tk, sys, p, _ := umountMachine(t)
	boom := &vfs.FileSystemType{Name: "boom", RequiresDev: true, FillSuper: func(t *kernel.Task, sb *vfs.SuperBlock, data string) error {
		var b []byte
		b[3] = 1 // index out of range: a KASAN-like report
		return nil
	}}
	dev := vfs.NewGrowingBlockDevice()
	for i := 0; i < 2; i++ {
		_, err := sys.Mount(tk, p, boom, "/mnt", vfs.MountOptions{Source: "vdc", Device: dev})
		if err == nil || err == errno.EBUSY {
			t.Fatalf("mount %d of a filesystem whose fill_super dies: %v, want the recovered report", i+1, err)
		}
	}
}
