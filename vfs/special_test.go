package vfs_test

import (
	"testing"
	"time"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// TestDeviceNumbers: the dev_t encodings of include/linux/kdev_t.h.
func TestDeviceNumbers(t *testing.T) {
	for _, c := range []struct{ major, minor, newEnc uint32 }{
		{1, 3, 0x0103}, {8, 1, 0x0801}, {254, 16, 0xfe10}, {300, 70000, 0x11112c70},
	} {
		d := vfs.MKDEV(c.major, c.minor)
		if vfs.MAJOR(d) != c.major || vfs.MINOR(d) != c.minor {
			t.Errorf("MKDEV(%d, %d) = %#x: %d, %d", c.major, c.minor, d, vfs.MAJOR(d), vfs.MINOR(d))
		}
		if e := vfs.NewEncodeDev(d); e != c.newEnc || vfs.NewDecodeDev(e) != d {
			t.Errorf("new_encode_dev(%d:%d) = %#x, want %#x", c.major, c.minor, e, c.newEnc)
		}
		if vfs.OldValidDev(d) != (c.major < 256 && c.minor < 256) {
			t.Errorf("old_valid_dev(%d:%d)", c.major, c.minor)
		}
		if vfs.OldValidDev(d) && vfs.OldDecodeDev(vfs.OldEncodeDev(d)) != d {
			t.Errorf("old encoding of %d:%d", c.major, c.minor)
		}
	}
}

// TestMemDevices: device nodes on ext4 open drivers/char/mem.c's devices
// (chrdev_open, memory_open): /dev/null reads nothing and takes every
// write, /dev/zero reads zeroes, /dev/full refuses writes with ENOSPC,
// /dev/urandom reads the machine's generator; a minor without a device
// and a major without a driver are ENXIO, a socket node too; stat shows
// the numbers; a device node needs CAP_MKNOD.
func TestMemDevices(t *testing.T) {
	tk, sys, p, _ := umountMachine(t)
	mk := func(name string, mode, major, minor uint32) {
		t.Helper()
		if err := p.Mknod(tk, name, mode|0o666, vfs.NewEncodeDev(vfs.MKDEV(major, minor))); err != nil {
			t.Fatalf("mknod %s: %v", name, err)
		}
	}
	mk("/mnt/null", vfs.S_IFCHR, 1, 3)
	mk("/mnt/zero", vfs.S_IFCHR, 1, 5)
	mk("/mnt/full", vfs.S_IFCHR, 1, 7)
	mk("/mnt/urandom", vfs.S_IFCHR, 1, 9)
	mk("/mnt/mem", vfs.S_IFCHR, 1, 1)
	mk("/mnt/nodrv", vfs.S_IFCHR, 42, 0)
	mk("/mnt/nodisk", vfs.S_IFBLK, 42, 0)
	mk("/mnt/sock", vfs.S_IFSOCK, 0, 0)
	open := func(name string, flags int) int {
		t.Helper()
		fd, err := p.Open(tk, name, flags, 0)
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		return fd
	}
	buf := []byte{9, 9, 9, 9}
	fd := open("/mnt/null", vfs.O_RDWR)
	if n, err := p.Read(tk, fd, buf); n != 0 || err != nil {
		t.Errorf("read null: %d %v", n, err)
	}
	if n, err := p.Write(tk, fd, buf); n != 4 || err != nil {
		t.Errorf("write null: %d %v", n, err)
	}
	if pos, err := p.Lseek(tk, fd, 100, vfs.SEEK_SET); pos != 0 || err != nil {
		t.Errorf("lseek null: %d %v", pos, err)
	}
	p.Close(tk, fd)
	fd = open("/mnt/zero", vfs.O_RDONLY)
	if n, err := p.Read(tk, fd, buf); n != 4 || err != nil || buf[0] != 0 || buf[3] != 0 {
		t.Errorf("read zero: %d %v %v", n, err, buf)
	}
	p.Close(tk, fd)
	fd = open("/mnt/full", vfs.O_WRONLY)
	if _, err := p.Write(tk, fd, buf); err != errno.ENOSPC {
		t.Errorf("write full: %v, want ENOSPC", err)
	}
	p.Close(tk, fd)
	fd = open("/mnt/urandom", vfs.O_RDONLY)
	a, b := make([]byte, 16), make([]byte, 16)
	p.Read(tk, fd, a)
	p.Read(tk, fd, b)
	if string(a) == string(b) {
		t.Errorf("urandom repeats: %x", a)
	}
	p.Close(tk, fd)
	for _, name := range []string{"/mnt/mem", "/mnt/nodrv", "/mnt/nodisk", "/mnt/sock"} {
		if _, err := p.Open(tk, name, vfs.O_RDONLY, 0); err != errno.ENXIO {
			t.Errorf("open %s: %v, want ENXIO", name, err)
		}
	}
	st, err := p.Stat(tk, "/mnt/zero")
	if err != nil || st.Mode != vfs.S_IFCHR|0o666 || st.Rdev != vfs.MKDEV(1, 5) {
		t.Errorf("stat zero: %+v %v", st, err)
	}
	asUser(tk, sys, &kernel.Cred{UID: 1000, GID: 1000}, func(u *vfs.Proc) {
		if err := u.Chmod(tk, "/mnt", 0o777); err != errno.EPERM {
			t.Logf("chmod as a user: %v", err)
		}
		if err := u.Mknod(tk, "/mnt/c", vfs.S_IFCHR|0o600, 0x103); err != errno.EACCES && err != errno.EPERM {
			t.Errorf("mknod c as a user: %v, want EACCES or EPERM", err)
		}
	})
	// A registered disk opens through a block special file.
	dev := vfs.NewBlockDeviceSize(4)
	dev.WriteAt([]byte("disk"), 0)
	sys.AddDisk(vfs.MKDEV(254, 16), "virtblk", func() *vfs.BlockDevice { return dev })
	mk("/mnt/vdb", vfs.S_IFBLK, 254, 16)
	fd = open("/mnt/vdb", vfs.O_RDONLY)
	if n, err := p.Read(tk, fd, buf); n != 4 || err != nil || string(buf) != "disk" {
		t.Errorf("read the disk: %d %v %q", n, err, buf)
	}
	if pos, err := p.Lseek(tk, fd, 0, vfs.SEEK_END); pos != 4*vfs.PageSize || err != nil {
		t.Errorf("SEEK_END: %d %v", pos, err)
	}
	p.Close(tk, fd)
}

// TestFifo: fifo_open's rules (O_RDWR never waits, O_WRONLY|O_NONBLOCK
// without a reader is ENXIO, O_RDONLY|O_NONBLOCK does not wait), a reader
// that waits for a writer, data in order, EAGAIN on an empty pipe with a
// writer and O_NONBLOCK, end of file once the writers are gone, EPIPE
// without readers, ESPIPE for lseek; the pipe goes with its last file.
func TestFifo(t *testing.T) {
	tk, sys, p, _ := umountMachine(t)
	if err := p.Mknod(tk, "/mnt/fifo", vfs.S_IFIFO|0o666, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Open(tk, "/mnt/fifo", vfs.O_WRONLY|vfs.O_NONBLOCK, 0); err != errno.ENXIO {
		t.Errorf("O_WRONLY|O_NONBLOCK without a reader: %v, want ENXIO", err)
	}
	r, err := p.Open(tk, "/mnt/fifo", vfs.O_RDONLY|vfs.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := p.Read(tk, r, buf); n != 0 || err != nil {
		t.Errorf("read with no writer ever: %d %v, want end of file", n, err)
	}
	w, err := p.Open(tk, "/mnt/fifo", vfs.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Read(tk, r, buf); err != errno.EAGAIN {
		t.Errorf("empty with a writer, O_NONBLOCK: %v, want EAGAIN", err)
	}
	p.Write(tk, w, []byte("one"))
	p.Write(tk, w, []byte("two"))
	if n, err := p.Read(tk, r, buf); string(buf[:n]) != "onetwo" || err != nil {
		t.Errorf("read %q %v", buf[:n], err)
	}
	if _, err := p.Lseek(tk, r, 0, vfs.SEEK_SET); err != errno.ESPIPE {
		t.Errorf("lseek: %v, want ESPIPE", err)
	}
	if _, err := p.Pread(tk, r, buf, 0); err != errno.ESPIPE {
		t.Errorf("pread: %v, want ESPIPE", err)
	}
	p.Close(tk, w)
	if n, err := p.Read(tk, r, buf); n != 0 || err != nil {
		t.Errorf("after the writer: %d %v, want end of file", n, err)
	}
	p.Close(tk, r)
	rw, err := p.Open(tk, "/mnt/fifo", vfs.O_RDWR, 0)
	if err != nil {
		t.Fatalf("O_RDWR: %v", err)
	}
	p.Close(tk, rw)
	// A blocking reader waits for a writer in another task.
	k := tk.K
	done := make(chan string)
	rt := k.NewTask("reader")
	go func() {
		fd, err := p.Open(rt, "/mnt/fifo", vfs.O_RDONLY, 0)
		if err != nil {
			done <- err.Error()
			return
		}
		n, _ := p.Read(rt, fd, buf)
		p.Close(rt, fd)
		done <- string(buf[:n])
	}()
	time.Sleep(10 * time.Millisecond)
	wt := k.NewTask("writer")
	w, err = p.Open(wt, "/mnt/fifo", vfs.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	p.Write(wt, w, []byte("hello"))
	if got := <-done; got != "hello" {
		t.Errorf("blocking reader got %q", got)
	}
	if _, err := p.Write(wt, w, []byte("x")); err != errno.EPIPE {
		t.Errorf("write without readers: %v, want EPIPE", err)
	}
	p.Close(wt, w)
	_ = sys
}
