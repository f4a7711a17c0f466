package vfs_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// TestXattrSyscalls: fs/xattr.c's checks in their order on ext4 (the
// flags, the name's length, the value's size, then the walk, the mount,
// xattr_permission and the handler), XATTR_CREATE and XATTR_REPLACE, the
// size query and ERANGE of getxattr and listxattr, and removal.
func TestXattrSyscalls(t *testing.T) {
	tk, _, p, _ := umountMachine(t)
	p.Close(tk, writeFile(t, tk, p, "/mnt/f", "x"))
	for _, c := range []struct {
		path, name string
		value      []byte
		flags      int
		want       error
	}{
		{"/mnt/f", "user.a", []byte("1"), 0, nil},
		{"/mnt/f", "user.a", []byte("2"), vfs.XATTR_CREATE, errno.EEXIST},
		{"/mnt/f", "user.b", []byte("2"), vfs.XATTR_REPLACE, errno.ENODATA},
		{"/mnt/f", "user.a", []byte("22"), vfs.XATTR_REPLACE, nil},
		{"/mnt/f", "user.e", nil, 0, nil},
		{"/mnt/missing", "user.a", nil, 4, errno.EINVAL}, // flags before the walk
		{"/mnt/missing", "", nil, 0, errno.ERANGE},
		{"/mnt/missing", "user." + strings.Repeat("n", 251), nil, 0, errno.ERANGE},
		{"/mnt/missing", "user.a", make([]byte, vfs.XATTR_SIZE_MAX+1), 0, errno.E2BIG},
		{"/mnt/missing", "user.a", nil, 0, errno.ENOENT},
		{"/mnt/f", "user.", nil, 0, errno.EINVAL},
		{"/mnt/f", "nospace.a", nil, 0, errno.EOPNOTSUPP},
		{"/mnt/f", "system.posix_acl_access", []byte{2}, 0, errno.EOPNOTSUPP},
		{"/mnt/f", "user." + strings.Repeat("n", 250), []byte("v"), 0, nil},
		{"/mnt/f", "user.big", make([]byte, 5000), 0, errno.ENOSPC},
	} {
		if err := p.Setxattr(tk, c.path, c.name, c.value, c.flags, true); err != c.want {
			t.Errorf("setxattr(%s, %.20q, %d bytes, %#x): %v, want %v", c.path, c.name, len(c.value), c.flags, err, c.want)
		}
	}
	if n, err := p.Getxattr(tk, "/mnt/f", "user.a", nil, true); n != 2 || err != nil {
		t.Errorf("size query: %d %v", n, err)
	}
	buf := make([]byte, 1)
	if _, err := p.Getxattr(tk, "/mnt/f", "user.a", buf, true); err != errno.ERANGE {
		t.Errorf("short buffer: %v, want ERANGE", err)
	}
	if n, err := p.Getxattr(tk, "/mnt/f", "user.e", make([]byte, 4), true); n != 0 || err != nil {
		t.Errorf("empty value: %d %v", n, err)
	}
	n, err := p.Listxattr(tk, "/mnt/f", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	list := make([]byte, n)
	if _, err := p.Listxattr(tk, "/mnt/f", list, true); err != nil {
		t.Fatal(err)
	}
	if want := "user.a\x00user.e\x00user." + strings.Repeat("n", 250) + "\x00"; string(list) != want {
		t.Errorf("list %q", list)
	}
	if _, err := p.Listxattr(tk, "/mnt/f", list[:3], true); err != errno.ERANGE {
		t.Errorf("short list: %v, want ERANGE", err)
	}
	if err := p.Removexattr(tk, "/mnt/f", "user.a", true); err != nil {
		t.Fatal(err)
	}
	if err := p.Removexattr(tk, "/mnt/f", "user.a", true); err != errno.ENODATA {
		t.Errorf("remove again: %v, want ENODATA", err)
	}
	if _, err := p.Getxattr(tk, "/mnt/f", "user.a", nil, true); err != errno.ENODATA {
		t.Errorf("get removed: %v, want ENODATA", err)
	}
	// The f- variants: EBADF first.
	if err := p.Fsetxattr(tk, 99, "", nil, 7); err != errno.EBADF {
		t.Errorf("fsetxattr on a bad fd: %v, want EBADF", err)
	}
	fd, err := p.Open(tk, "/mnt/f", vfs.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(tk, fd)
	if err := p.Fsetxattr(tk, fd, "user.fd", []byte("v"), 0); err != nil {
		t.Errorf("fsetxattr on a read-only fd: %v", err)
	}
	if n, err := p.Fgetxattr(tk, fd, "user.fd", make([]byte, 8)); n != 1 || err != nil {
		t.Errorf("fgetxattr: %d %v", n, err)
	}
	if n, err := p.Flistxattr(tk, fd, nil); n == 0 || err != nil {
		t.Errorf("flistxattr: %d %v", n, err)
	}
	if err := p.Fremovexattr(tk, fd, "user.fd"); err != nil {
		t.Errorf("fremovexattr: %v", err)
	}
}

// TestXattrPermission: xattr_permission's rules: trusted. needs
// CAP_SYS_ADMIN (EPERM to set, ENODATA to get, not listed), user. is only
// for regular files and directories (EPERM, ENODATA) and a sticky
// directory's is its owner's, security. is left to the filesystem, an
// immutable file is EPERM, the mode bits decide the rest; a read-only
// mount is EROFS.
func TestXattrPermission(t *testing.T) {
	tk, sys, p, _ := umountMachine(t)
	p.Close(tk, writeFile(t, tk, p, "/mnt/f", "x"))
	if err := p.Mkdir(tk, "/mnt/sticky", 0o1777); err != nil {
		t.Fatal(err)
	}
	if err := p.Chmod(tk, "/mnt/sticky", 0o1777); err != nil {
		t.Fatal(err)
	}
	if err := p.Symlink(tk, "f", "/mnt/lnk"); err != nil {
		t.Fatal(err)
	}
	if err := p.Mknod(tk, "/mnt/fifo", vfs.S_IFIFO|0o666, 0); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"trusted.t", "security.s", "user.u"} {
		if err := p.Setxattr(tk, "/mnt/f", n, []byte("v"), 0, true); err != nil {
			t.Fatal(n, err)
		}
	}
	if err := p.Setxattr(tk, "/mnt/lnk", "user.l", []byte("v"), 0, false); err != errno.EPERM {
		t.Errorf("user. on a symlink: %v, want EPERM", err)
	}
	if _, err := p.Getxattr(tk, "/mnt/fifo", "user.l", nil, false); err != errno.ENODATA {
		t.Errorf("user. get on a FIFO: %v, want ENODATA", err)
	}
	if err := p.Setxattr(tk, "/mnt/lnk", "trusted.l", []byte("v"), 0, false); err != nil {
		t.Errorf("trusted. on a symlink: %v", err)
	}
	other := &kernel.Cred{UID: 1000, GID: 1000}
	asUser(tk, sys, other, func(u *vfs.Proc) {
		if err := u.Setxattr(tk, "/mnt/f", "trusted.x", []byte("v"), 0, true); err != errno.EPERM {
			t.Errorf("trusted. set as a user: %v, want EPERM", err)
		}
		if _, err := u.Getxattr(tk, "/mnt/f", "trusted.t", nil, true); err != errno.ENODATA {
			t.Errorf("trusted. get as a user: %v, want ENODATA", err)
		}
		if _, err := u.Getxattr(tk, "/mnt/f", "security.s", nil, true); err != nil {
			t.Errorf("security. get as a user: %v", err)
		}
		if err := u.Setxattr(tk, "/mnt/f", "user.x", []byte("v"), 0, true); err != errno.EACCES {
			t.Errorf("user. set on another's 0644 file: %v, want EACCES", err)
		}
		if err := u.Setxattr(tk, "/mnt/sticky", "user.x", []byte("v"), 0, true); err != errno.EPERM {
			t.Errorf("user. set on another's sticky directory: %v, want EPERM", err)
		}
		buf := make([]byte, 256)
		n, err := u.Listxattr(tk, "/mnt/f", buf, true)
		if err != nil || bytes.Contains(buf[:n], []byte("trusted.")) || !bytes.Contains(buf[:n], []byte("security.s")) {
			t.Errorf("list as a user: %q %v", buf[:n], err)
		}
	})
	sys.RootMount() // the root stays writable
	if err := sys.RemountReadonly(tk, p, "/mnt", true); err != nil {
		t.Fatal(err)
	}
	if err := p.Setxattr(tk, "/mnt/f", "user.u", []byte("w"), 0, true); err != errno.EROFS {
		t.Errorf("set on a read-only mount: %v, want EROFS", err)
	}
	if err := p.Removexattr(tk, "/mnt/f", "user.u", true); err != errno.EROFS {
		t.Errorf("remove on a read-only mount: %v, want EROFS", err)
	}
	if n, err := p.Getxattr(tk, "/mnt/f", "user.u", make([]byte, 4), true); n != 1 || err != nil {
		t.Errorf("get on a read-only mount: %d %v", n, err)
	}
}
