package vfs

import (
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// The memory devices (drivers/char/mem.c, drivers/char/random.c): major 1
// ("mem"), whose open (memory_open) hands the file to the device of its
// minor: /dev/null (3), /dev/zero (5), /dev/full (7), /dev/random (8) and
// /dev/urandom (9). Not modelled: /dev/mem, /dev/kmem, /dev/port and
// /dev/kmsg (memory_open gives ENXIO for them). Both random devices read
// the machine's random number generator (get_random_bytes), which the
// machine's seed determines, so a script reads the same bytes every run;
// what is written to them is accepted and, unlike the kernel's
// mix_pool_bytes, changes nothing.

// MEM_MAJOR is the memory devices' major.
const MEM_MAJOR = 1

// The memory devices' minors.
const (
	NullMinor    = 3
	ZeroMinor    = 5
	FullMinor    = 7
	RandomMinor  = 8
	URandomMinor = 9
)

// MemDevice is one entry of mem.c's devlist: its name, minor and the
// mode devtmpfs gives its node.
type MemDevice struct {
	Name  string
	Minor uint32
	Mode  uint32
}

// MemDevices is devlist, for the machine's /dev.
var MemDevices = []MemDevice{
	{"null", NullMinor, 0o666}, {"zero", ZeroMinor, 0o666}, {"full", FullMinor, 0o666},
	{"random", RandomMinor, 0o666}, {"urandom", URandomMinor, 0o666},
}

// chrDevInit is chr_dev_init: register_chrdev(MEM_MAJOR, "mem").
func (s *System) chrDevInit() {
	_ = s.RegisterChrdev(MEM_MAJOR, 0, 256, "mem", memoryFops{})
}

// memoryFops is memory_fops.
type memoryFops struct{ NoFileOps }

// Open is memory_open: the minor's device takes the file. Errors: ENXIO
// for a minor without one.
func (memoryFops) Open(t *kernel.Task, inode *Inode, f *File) error {
	var fops FileOperations
	switch MINOR(inode.rdev) {
	case NullMinor:
		fops = nullFops{}
	case ZeroMinor:
		fops = zeroFops{}
	case FullMinor:
		fops = fullFops{}
	case RandomMinor, URandomMinor:
		fops = randomFops{}
	default:
		return errno.ENXIO
	}
	f.Op = fops
	return nil
}

// Llseek is noop_llseek.
func (memoryFops) Llseek(t *kernel.Task, f *File, off int64, whence int) (int64, error) {
	return f.pos, nil
}

// nullFops is null_fops: reads end at once, writes take everything.
type nullFops struct{ NoFileOps }

// ReadIter is read_iter_null.
func (nullFops) ReadIter(t *kernel.Task, f *File, buf []byte, pos *int64) (int, error) { return 0, nil }

// WriteIter is write_iter_null.
func (nullFops) WriteIter(t *kernel.Task, f *File, buf []byte, pos *int64) (int, error) {
	return len(buf), nil
}

// Llseek is null_lseek: the position is always 0.
func (nullFops) Llseek(t *kernel.Task, f *File, off int64, whence int) (int64, error) {
	f.pos = 0
	return 0, nil
}

// zeroFops is zero_fops: reads give zeroes, writes take everything.
type zeroFops struct{ NoFileOps }

// ReadIter is read_iter_zero.
func (zeroFops) ReadIter(t *kernel.Task, f *File, buf []byte, pos *int64) (int, error) {
	clear(buf)
	return len(buf), nil
}

// WriteIter is write_zero (write_iter_null).
func (zeroFops) WriteIter(t *kernel.Task, f *File, buf []byte, pos *int64) (int, error) {
	return len(buf), nil
}

// Llseek is zero_lseek (null_lseek).
func (zeroFops) Llseek(t *kernel.Task, f *File, off int64, whence int) (int64, error) {
	f.pos = 0
	return 0, nil
}

// fullFops is full_fops: reads give zeroes, every write is ENOSPC.
type fullFops struct{ NoFileOps }

// ReadIter is read_iter_zero.
func (fullFops) ReadIter(t *kernel.Task, f *File, buf []byte, pos *int64) (int, error) {
	clear(buf)
	return len(buf), nil
}

// WriteIter is write_full.
func (fullFops) WriteIter(t *kernel.Task, f *File, buf []byte, pos *int64) (int, error) {
	return 0, errno.ENOSPC
}

// Llseek is full_lseek (null_lseek).
func (fullFops) Llseek(t *kernel.Task, f *File, off int64, whence int) (int64, error) {
	f.pos = 0
	return 0, nil
}

// randomFops is random_fops and urandom_fops: reads come from the
// machine's generator (get_random_bytes_user), writes are taken
// (random_write_iter), seeks do nothing (noop_llseek).
type randomFops struct{ NoFileOps }

// ReadIter is urandom_read_iter / random_read_iter (the crng is always
// ready in the model).
func (randomFops) ReadIter(t *kernel.Task, f *File, buf []byte, pos *int64) (int, error) {
	t.K.GetRandomBytes(buf)
	return len(buf), nil
}

// WriteIter is random_write_iter.
func (randomFops) WriteIter(t *kernel.Task, f *File, buf []byte, pos *int64) (int, error) {
	return len(buf), nil
}

// Llseek is noop_llseek.
func (randomFops) Llseek(t *kernel.Task, f *File, off int64, whence int) (int64, error) {
	return f.pos, nil
}
