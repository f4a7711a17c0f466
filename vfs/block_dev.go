package vfs

import (
	"io"
	"sync"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// Block special files (block/fops.c def_blk_fops, block/bdev.c): a block
// special file whose i_rdev is a disk the machine has (add_disk) opens
// that disk's BlockDevice (blkdev_open); its reads and writes go to the
// device's bytes at the file position (blkdev_read_iter,
// blkdev_write_iter, without the block device's own page cache: the
// model's device is always up to date). A number no disk has is ENXIO.

// disk is one registered disk: its number, its major's name (/proc/devices)
// and its device (looked up at open: a machine may give a number a new
// device, as attaching an image or sizing a scratch disk does).
type disk struct {
	dev   uint32
	major string
	bdev  func() *BlockDevice
}

type disks struct {
	mu   sync.Mutex
	devs []disk
}

// AddDisk is add_disk for the disk numbered dev (MKDEV), of the driver
// major (its /proc/devices name, "virtblk"), whose device bdev returns.
func (s *System) AddDisk(dev uint32, major string, bdev func() *BlockDevice) {
	s.disks.mu.Lock()
	defer s.disks.mu.Unlock()
	for i := range s.disks.devs {
		if s.disks.devs[i].dev == dev {
			s.disks.devs[i] = disk{dev, major, bdev}
			return
		}
	}
	s.disks.devs = append(s.disks.devs, disk{dev, major, bdev})
}

// BlockDeviceOf is blkdev_get_no_open: the device numbered dev, or nil.
func (s *System) BlockDeviceOf(dev uint32) *BlockDevice {
	s.disks.mu.Lock()
	defer s.disks.mu.Unlock()
	for _, d := range s.disks.devs {
		if d.dev == dev {
			return d.bdev()
		}
	}
	return nil
}

// defBlkFops is def_blk_fops.
var defBlkFops FileOperations = blkdevFops{}

// blkdevFops is def_blk_fops: the file's private data is its device
// (file->private_data, bdev_file_open_by_dev).
type blkdevFops struct{ NoFileOps }

// Open is blkdev_open. Errors: ENXIO when no disk has the number.
func (blkdevFops) Open(t *kernel.Task, inode *Inode, f *File) error {
	defer t.Trace("blkdev_open")()
	bdev := inode.sb.sys.BlockDeviceOf(inode.rdev)
	if bdev == nil {
		return errno.ENXIO
	}
	f.Private = bdev
	return nil
}

// ReadIter is blkdev_read_iter: up to the device's end (0 there).
func (blkdevFops) ReadIter(t *kernel.Task, f *File, buf []byte, pos *int64) (int, error) {
	bdev := f.Private.(*BlockDevice)
	size := bdev.Size()
	if *pos >= size {
		return 0, nil
	}
	if rest := size - *pos; int64(len(buf)) > rest {
		buf = buf[:rest]
	}
	n, err := bdev.ReadAt(buf, *pos)
	if err == io.EOF {
		err = nil
	}
	*pos += int64(n)
	return n, err
}

// WriteIter is blkdev_write_iter: EPERM on a write-protected device,
// ENOSPC at its end, short at its end otherwise.
func (blkdevFops) WriteIter(t *kernel.Task, f *File, buf []byte, pos *int64) (int, error) {
	bdev := f.Private.(*BlockDevice)
	if bdev.ReadOnly() {
		return 0, errno.EPERM
	}
	size := bdev.Size()
	if *pos >= size && bdev.Fixed() {
		return 0, errno.ENOSPC
	}
	if rest := size - *pos; bdev.Fixed() && int64(len(buf)) > rest {
		buf = buf[:rest]
	}
	n, err := bdev.WriteAt(buf, *pos)
	*pos += int64(n)
	return n, err
}

// Llseek is blkdev_llseek: fixed_size_llseek over the device's size.
func (blkdevFops) Llseek(t *kernel.Task, f *File, off int64, whence int) (int64, error) {
	size := f.Private.(*BlockDevice).Size()
	return GenericFileLlseek(f, off, whence, size, size)
}
