package vfs

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// Character devices (fs/char_dev.c): drivers register ranges of device
// numbers with their file operations (register_chrdev_region and
// cdev_add, the cdev_map); opening a character special file looks its
// i_rdev up there (chrdev_open), replaces the file's operations with the
// driver's and calls the driver's open. A number no driver has is ENXIO,
// whatever the filesystem the special file lives on.

// cdev is one registered range (struct char_device_struct with its cdev).
type cdev struct {
	major, baseminor, count uint32
	name                    string
	fops                    FileOperations
}

// chrdevs is the machine's cdev_map.
type chrdevs struct {
	mu   sync.Mutex
	devs []cdev
}

// RegisterChrdev is __register_chrdev: minors [baseminor, baseminor+count)
// of major open with fops under name (/proc/devices). Errors: EBUSY when
// the range overlaps one already registered.
func (s *System) RegisterChrdev(major, baseminor, count uint32, name string, fops FileOperations) error {
	c := &s.chrdevs
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range c.devs {
		if d.major == major && baseminor < d.baseminor+d.count && d.baseminor < baseminor+count {
			return errno.EBUSY
		}
	}
	c.devs = append(c.devs, cdev{major: major, baseminor: baseminor, count: count, name: name, fops: fops})
	return nil
}

// UnregisterChrdev is __unregister_chrdev.
func (s *System) UnregisterChrdev(major, baseminor, count uint32) {
	c := &s.chrdevs
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, d := range c.devs {
		if d.major == major && d.baseminor == baseminor && d.count == count {
			c.devs = append(c.devs[:i], c.devs[i+1:]...)
			return
		}
	}
}

// lookupChrdev is kobj_lookup on the cdev_map.
func (s *System) lookupChrdev(dev uint32) FileOperations {
	c := &s.chrdevs
	c.mu.Lock()
	defer c.mu.Unlock()
	major, minor := MAJOR(dev), MINOR(dev)
	for _, d := range c.devs {
		if d.major == major && minor >= d.baseminor && minor < d.baseminor+d.count {
			return d.fops
		}
	}
	return nil
}

// ProcDevices renders /proc/devices: the character majors (chrdev_show),
// then the block ones (blkdev_show), each in order.
func (s *System) ProcDevices() string {
	var b strings.Builder
	b.WriteString("Character devices:\n")
	s.chrdevs.mu.Lock()
	type md struct {
		major uint32
		name  string
	}
	var cs []md
	seen := map[md]bool{}
	for _, d := range s.chrdevs.devs {
		k := md{d.major, d.name}
		if !seen[k] {
			seen[k] = true
			cs = append(cs, k)
		}
	}
	s.chrdevs.mu.Unlock()
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].major < cs[j].major })
	for _, d := range cs {
		fmt.Fprintf(&b, "%3d %s\n", d.major, d.name)
	}
	b.WriteString("\nBlock devices:\n")
	s.disks.mu.Lock()
	var bs []md
	seen = map[md]bool{}
	for _, d := range s.disks.devs {
		k := md{MAJOR(d.dev), d.major}
		if !seen[k] {
			seen[k] = true
			bs = append(bs, k)
		}
	}
	s.disks.mu.Unlock()
	sort.SliceStable(bs, func(i, j int) bool { return bs[i].major < bs[j].major })
	for _, d := range bs {
		fmt.Fprintf(&b, "%3d %s\n", d.major, d.name)
	}
	return b.String()
}

// defChrFops is def_chr_fops: open is chrdev_open.
var defChrFops FileOperations = chrdevFops{}

type chrdevFops struct{ NoFileOps }

// Open is chrdev_open: the driver of i_rdev takes the file over (its
// operations replace these, and its open runs). Errors: ENXIO when no
// driver has the number, the driver's.
func (chrdevFops) Open(t *kernel.Task, inode *Inode, f *File) error {
	defer t.Trace("chrdev_open")()
	fops := inode.sb.sys.lookupChrdev(inode.rdev)
	if fops == nil {
		return errno.ENXIO
	}
	f.Op = fops
	return fops.Open(t, inode, f)
}
