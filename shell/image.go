package shell

import (
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/vfs"
)

// Host images as the machine's block devices.
//
// Every scratch device is a fixed-size sparse disk (DefaultDeviceSize, or
// --device DEV:SIZE: SetDeviceSize) on which mkfs writes the real on-disk
// format. An image attached to a scratch device (--image FILE:DEV,
// AttachImage) is read lazily from its file, which stays open and locked
// against other processes (vfs.OpenImage: the loop-device setup of
// losetup, reduced); the device is read-only unless the image was
// attached writable, in which case umount, sync and the machine's Close
// write the changed blocks back to the file, atomically
// (vfs.BlockDevice.Sync). --save-image DEV:FILE (SaveImageAtClose) writes
// a device's contents to a host file, sparse and replaced whole, when the
// machine closes. These are the only host files the machine touches.

// Image is one host image attached to a scratch device: Path is the host
// file, Dev the device (/dev/vdb../dev/vde), Writable whether writes go
// back to the file.
type Image struct {
	Path, Dev string
	Writable  bool
}

// ParseImageSpec parses --image's FILE:DEV (the last ':' splits them, so
// FILE may hold one). Errors name the scratch devices a DEV must be one of.
func ParseImageSpec(spec string) (path, dev string, err error) {
	i := strings.LastIndexByte(spec, ':')
	if i <= 0 || i == len(spec)-1 {
		return "", "", fmt.Errorf("--image %q: want FILE:DEV, DEV one of %s", spec, strings.Join(scratchDevs, ", "))
	}
	path, dev = spec[:i], spec[i+1:]
	if !isScratchDev(dev) {
		return "", "", fmt.Errorf("--image %q: %s is not a scratch device; want one of %s", spec, dev, strings.Join(scratchDevs, ", "))
	}
	return path, dev, nil
}

// ParseSaveSpec parses --save-image's DEV:FILE (the first ':' splits
// them).
func ParseSaveSpec(spec string) (dev, path string, err error) {
	dev, path, ok := strings.Cut(spec, ":")
	if !ok || path == "" || !isScratchDev(dev) {
		return "", "", fmt.Errorf("--save-image %q: want DEV:FILE, DEV one of %s", spec, strings.Join(scratchDevs, ", "))
	}
	return dev, path, nil
}

// ParseDeviceSpec parses --device's DEV:SIZE: DEV a scratch device, with
// or without /dev/ (vdb, /dev/vdc), SIZE bytes with an optional binary
// suffix K, M, G or T (256M, 8G; KiB, MiB... and iB-less forms accepted),
// a positive multiple of 4096 up to 1 TiB.
func ParseDeviceSpec(spec string) (dev string, size int64, err error) {
	name, sz, ok := strings.Cut(spec, ":")
	if !strings.HasPrefix(name, "/dev/") {
		name = "/dev/" + name
	}
	if !ok || !isScratchDev(name) {
		return "", 0, fmt.Errorf("--device %q: want DEV:SIZE, DEV one of %s", spec, strings.Join(scratchDevs, ", "))
	}
	size, ok = parseDeviceSize(sz)
	if !ok || size <= 0 || size%vfs.PageSize != 0 || size > vfs.MaxImageSize {
		return "", 0, fmt.Errorf("--device %q: size %q is not a positive multiple of 4096 bytes up to 1T (e.g. 256M, 8G)", spec, sz)
	}
	return name, size, nil
}

// parseDeviceSize reads a size: digits and an optional K, M, G or T (powers of
// 1024), with an optional iB or B after it.
func parseDeviceSize(s string) (int64, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i > 15 {
		return 0, false
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, false
	}
	unit := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(s[i:]), "B"), "I")
	shift := map[string]uint{"": 0, "K": 10, "M": 20, "G": 30, "T": 40}
	sh, ok := shift[unit]
	if !ok || n > vfs.MaxImageSize>>sh {
		return 0, false
	}
	return n << sh, true
}

// SetDeviceSize makes scratch device dev a blank sparse disk of size
// bytes (--device DEV:SIZE), now and on every later boot. Errors: an
// unknown device, EBUSY when it is mounted.
func (m *Machine) SetDeviceSize(dev string, size int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.devs[dev]
	if !ok {
		return fmt.Errorf("%s: not a scratch device (want one of %s)", dev, strings.Join(scratchDevs, ", "))
	}
	if m.mountOf(dev) != nil {
		return fmt.Errorf("%s: %w", dev, errno.EBUSY)
	}
	if m.sizes == nil {
		m.sizes = map[string]int64{}
	}
	m.sizes[dev] = size
	d.bdev.Close()
	d.bdev, d.sb, d.image = m.blankDevice(dev), nil, ""
	return nil
}

func isScratchDev(dev string) bool {
	for _, d := range scratchDevs {
		if d == dev {
			return true
		}
	}
	return false
}

// AttachImage attaches the host image path as the scratch device dev,
// replacing what the device held; read-only unless writable. It is kept
// across `patches`, which boots a new machine. Errors: an unknown device,
// EBUSY when dev is mounted, the host's errors opening or reading path,
// EINVAL for a size that is not a positive multiple of 512.
func (m *Machine) AttachImage(dev, path string, writable bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.attach(Image{Path: path, Dev: dev, Writable: writable}, true)
}

// attach opens img onto its device; record keeps it for the next boot.
// The caller holds mu.
func (m *Machine) attach(img Image, record bool) error {
	d, ok := m.devs[img.Dev]
	if !ok {
		return fmt.Errorf("%s: not a scratch device (want one of %s)", img.Dev, strings.Join(scratchDevs, ", "))
	}
	if m.mountOf(img.Dev) != nil {
		return fmt.Errorf("%s: %w", img.Dev, errno.EBUSY)
	}
	bdev, err := vfs.OpenImage(img.Path, img.Writable)
	if err != nil {
		return err
	}
	d.bdev.Close()
	d.bdev, d.sb, d.image = bdev, nil, img.Path
	if record {
		for i, x := range m.images {
			if x.Dev == img.Dev {
				m.images = append(m.images[:i], m.images[i+1:]...)
				break
			}
		}
		m.images = append(m.images, img)
	}
	return nil
}

// SaveImageAtClose makes Close write device dev's contents to the host
// file path (--save-image DEV:FILE). Errors: an unknown device.
func (m *Machine) SaveImageAtClose(dev, path string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.devs[dev]; !ok {
		return fmt.Errorf("%s: not a scratch device (want one of %s)", dev, strings.Join(scratchDevs, ", "))
	}
	m.saves = append(m.saves, Image{Path: path, Dev: dev})
	return nil
}

// syncImages writes every writable attached image back to its file
// (sync(1), and the machine's end). The caller holds mu.
func (m *Machine) syncImages() error {
	var first error
	for _, name := range m.deviceNames() {
		if err := m.devs[name].bdev.Sync(); err != nil && first == nil {
			first = fmt.Errorf("%s: %w", name, err)
		}
	}
	return first
}

// Close ends the machine: the writable images are written back, each
// --save-image device is written to its file, and the processes exit.
// It returns the first host error writing an image.
func (m *Machine) Close() error {
	m.mu.Lock()
	err := m.syncImages()
	for _, s := range m.saves {
		if e := m.devs[s.Dev].bdev.SaveImage(s.Path); e != nil && err == nil {
			err = fmt.Errorf("--save-image %s:%s: %w", s.Dev, s.Path, e)
		}
	}
	m.saves = nil
	m.closeDevices()
	m.mu.Unlock()
	m.close()
	return err
}

// Blkid is what blkid(8) finds on dev: the type whose mkfs the model ran
// on it (vfs.DeviceSuper), or else the type whose superblock magic the
// device holds, probed as libblkid does (ext2/3/4: s_magic 0xEF53 at byte
// 1080; f2fs: F2FS_SUPER_MAGIC 0xF2F52010 at byte 1024). "" when none.
// A filesystem registered under the name found must still accept the
// image at mount.
func Blkid(dev *vfs.BlockDevice) string {
	if t := dev.Super().FsType; t != "" {
		return t
	}
	var b [60]byte
	if n, _ := dev.ReadAt(b[:], 1024); n < len(b) {
		return ""
	}
	if binary.LittleEndian.Uint32(b[0:4]) == 0xF2F52010 {
		return "f2fs"
	}
	if binary.LittleEndian.Uint16(b[56:58]) == 0xEF53 {
		return "ext4"
	}
	return ""
}

// devFile is a scratch device opened as a file (/dev/vdb): reads and
// writes go to the device's bytes at the file position, as a block
// device node's do (blkdev_read_iter, blkdev_write_iter, without the
// device's page cache: the model's device is always up to date). Writing
// a write-protected device is EPERM, as blkdev_write_iter returns.
type devFile struct {
	bdev *vfs.BlockDevice
	pos  int64
}

func (f *devFile) Read(b []byte) (int, error) {
	n, err := f.ReadAt(b, f.pos)
	f.pos += int64(n)
	return n, err
}

// ReadAt reads up to the device's size (io.EOF there).
func (f *devFile) ReadAt(b []byte, off int64) (int, error) {
	size := f.bdev.Size()
	if off >= size {
		return 0, io.EOF
	}
	if rest := size - off; int64(len(b)) > rest {
		b = b[:rest]
	}
	n, err := f.bdev.ReadAt(b, off)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (f *devFile) Write(b []byte) (int, error) {
	n, err := f.WriteAt(b, f.pos)
	f.pos += int64(n)
	return n, err
}

// WriteAt writes at off: EPERM on a write-protected device, ENOSPC past
// its end.
func (f *devFile) WriteAt(b []byte, off int64) (int, error) {
	if f.bdev.ReadOnly() {
		return 0, errno.EPERM
	}
	if off+int64(len(b)) > f.bdev.Size() && f.bdev.Fixed() {
		return 0, errno.ENOSPC
	}
	return f.bdev.WriteAt(b, off)
}

func (f *devFile) Close() error { return nil }

// device returns the scratch device named p, or nil.
func (m *Machine) device(p string) *vfs.BlockDevice {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d, ok := m.devs[p]; ok {
		return d.bdev
	}
	return nil
}

// cmdBlockdev is blockdev(8) for the ioctls scripts use: --getsize64
// (BLKGETSIZE64), --getsz (512-byte sectors), --getss (BLKSSZGET),
// --getbsz (BLKBSZGET), --getro (BLKROGET), --setro and --setrw
// (BLKROSET, which needs CAP_SYS_ADMIN). The commands apply in order to
// every device named.
func cmdBlockdev(c *cmd) int {
	var ops, devs []string
	for _, a := range c.args {
		if strings.HasPrefix(a, "-") {
			ops = append(ops, a)
		} else {
			devs = append(devs, a)
		}
	}
	usage := func() int {
		fmt.Fprintln(c.errw, "Usage:\n  blockdev -V\n  blockdev --report [devices]\n  blockdev [-v|-q] commands devices")
		return 1
	}
	if len(ops) == 0 || len(devs) == 0 {
		return usage()
	}
	for _, op := range ops {
		switch op {
		case "--getsize64", "--getsz", "--getss", "--getbsz", "--getro", "--setro", "--setrw", "-q", "-v":
		default:
			fmt.Fprintf(c.errw, "blockdev: Unknown command: %s\n", op)
			return usage()
		}
	}
	st := 0
	for _, dv := range devs {
		bdev := c.m.device(c.abs(dv))
		if bdev == nil {
			fmt.Fprintf(c.errw, "blockdev: cannot open %s: No such file or directory\n", dv)
			st = 1
			continue
		}
		for _, op := range ops {
			switch op {
			case "--getsize64":
				fmt.Fprintln(c.out, bdev.Size())
			case "--getsz":
				fmt.Fprintln(c.out, bdev.Size()/512)
			case "--getss":
				fmt.Fprintln(c.out, 512)
			case "--getbsz":
				fmt.Fprintln(c.out, vfs.PageSize)
			case "--getro":
				if bdev.ReadOnly() {
					fmt.Fprintln(c.out, 1)
				} else {
					fmt.Fprintln(c.out, 0)
				}
			case "--setro", "--setrw":
				if c.uid != 0 {
					fmt.Fprintln(c.errw, "blockdev: ioctl error on BLKROSET: Permission denied")
					st = 1
					continue
				}
				c.m.mu.Lock()
				bdev.SetReadOnly(op == "--setro")
				c.m.mu.Unlock()
			}
		}
	}
	return st
}
