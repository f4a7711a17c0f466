package shell

import (
	"fmt"

	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// The machine's /dev, as devtmpfs fills it on a small VM: the memory
// devices of drivers/char/mem.c (null, zero, full, random, urandom: major
// 1, mode 0666) and the scratch disks, virtio block devices (major 254,
// the first dynamic major, which virtio_blk gets; 16 minors a disk, so
// vdb is 254,16; mode 0660, group disk). They are special files on the
// root filesystem: opening one goes through the kernel's def_chr_fops
// and def_blk_fops to the driver (vfs/mem.go, vfs/block_dev.go).

// virtblkMajor is the virtio disks' major, diskMinors the minors of one.
const (
	virtblkMajor = 254
	diskMinors   = 16
	diskGID      = 6 // the disk group of Debian's /etc/group
)

// scratchDevNumber is the device number of scratch device i (vdb is 0):
// vda would be minor 0.
func scratchDevNumber(i int) uint32 { return vfs.MKDEV(virtblkMajor, uint32(diskMinors*(i+1))) }

// populateDev makes the machine's /dev nodes and registers its disks
// (add_disk). p is init, with root's credentials.
func (m *Machine) populateDev(t *kernel.Task, p *vfs.Proc) error {
	for _, d := range vfs.MemDevices {
		path := "/dev/" + d.Name
		if err := p.Mknod(t, path, vfs.S_IFCHR|d.Mode, vfs.NewEncodeDev(vfs.MKDEV(vfs.MEM_MAJOR, d.Minor))); err != nil {
			return fmt.Errorf("mknod %s: %w", path, err)
		}
	}
	for i, name := range scratchDevs {
		dev := scratchDevNumber(i)
		m.sys.AddDisk(dev, "virtblk", func() *vfs.BlockDevice {
			if d := m.devs[name]; d != nil {
				return d.bdev
			}
			return nil
		})
		if err := p.Mknod(t, name, vfs.S_IFBLK|0o660, vfs.NewEncodeDev(dev)); err != nil {
			return fmt.Errorf("mknod %s: %w", name, err)
		}
		if err := p.Chgrp(t, name, diskGID, true); err != nil {
			return fmt.Errorf("chgrp %s: %w", name, err)
		}
	}
	return nil
}

// sleep is the machine task's schedule() while a syscall waits (a FIFO's
// open, read or write; kernel.Task.Sleep): the machine lock is released
// so that other commands' syscalls run, and the task's per-syscall state
// (its comm, credentials and tracer) is restored when it wakes. A machine
// that closes interrupts every sleeper (EINTR).
func (m *Machine) sleep(ready <-chan struct{}) bool {
	t := m.t
	comm, cred, tr := t.Comm, t.Cred, t.Tracer
	intr, stop := m.intr, m.lim.done()
	m.mu.Unlock()
	ok := true
	select {
	case <-ready:
	case <-intr:
		ok = false
	case <-stop:
		ok = false
	}
	m.mu.Lock()
	t.Comm, t.Cred, t.Tracer = comm, cred, tr
	return ok
}
