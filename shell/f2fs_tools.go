package shell

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// f2fs-tools' programs of the machine that work on an image's bytes
// (inject.f2fs, fsck.f2fs --nolinear-lookup) or on a mounted f2fs
// (f2fs_io). The image ones need a device that holds a real image; a
// change they write makes the next mount read the image again.

// f2fsImage returns device devName when it holds an f2fs image, with the
// tool's message printed when it does not.
func (c *cmd) f2fsImage(devName string) (*device, bool) {
	p := c.abs(devName)
	c.m.mu.Lock()
	d, ok := c.m.devs[p]
	mounted := c.m.mountOf(p) != nil
	c.m.mu.Unlock()
	if !ok {
		fmt.Fprintf(c.errw, "\tError: Failed to open the device: %s\n", devName)
		return nil, false
	}
	if mounted {
		fmt.Fprintf(c.errw, "\tError: Not available on mounted device!\n")
		return nil, false
	}
	if f2fs.RawSuperOf(d.bdev) == nil {
		fmt.Fprintf(c.errw, "\tError: %s holds no f2fs image (a growing scratch device of the model keeps its filesystem in memory)\n", devName)
		return nil, false
	}
	return d, true
}

// imageWritten is what a tool's write to an image means for the model: a
// superblock kept since the last umount no longer stands for the device,
// so the next mount reads the image.
func (c *cmd) imageWritten(d *device) {
	c.m.mu.Lock()
	if d.bdev.Fixed() {
		d.sb = nil
	}
	c.m.mu.Unlock()
}

// f2fsLinearLookupInfo prints fsck.f2fs's line for the casefold linear
// lookup flag of the image's superblock.
func (c *cmd) f2fsLinearLookupInfo(devName string) {
	c.m.mu.Lock()
	d, ok := c.m.devs[c.abs(devName)]
	c.m.mu.Unlock()
	if !ok {
		return
	}
	s := f2fs.RawSuperOf(d.bdev)
	if s == nil || !s.HasFeature(f2fs.FeatCasefold) {
		return
	}
	state := "enable"
	if s.EncodingFlags&f2fs.EncNoCompatFallbackFL != 0 {
		state = "disable"
	}
	fmt.Fprintf(c.out, "Info: Casefold: linear_lookup [%s]\n", state)
}

// f2fsSetNolinearLookup is fsck.f2fs --nolinear-lookup=1|0
// (fsck_update_sb_flags): set or clear F2FS_ENC_NO_COMPAT_FALLBACK_FL in
// both superblock copies.
func (c *cmd) f2fsSetNolinearLookup(devName string, disable bool) int {
	d, ok := c.f2fsImage(devName)
	if !ok {
		return 1
	}
	word := "enable"
	if disable {
		word = "disable"
	}
	fmt.Fprintf(c.out, "Info: linear_lookup option: %s\n", word)
	s := f2fs.RawSuperOf(d.bdev)
	if !s.HasFeature(f2fs.FeatCasefold) {
		fmt.Fprintf(c.out, "Info: Not support Casefold feature\n")
		return 0
	}
	flags := s.EncodingFlags
	if disable {
		flags |= f2fs.EncNoCompatFallbackFL
	} else {
		flags &^= f2fs.EncNoCompatFallbackFL
	}
	if flags == s.EncodingFlags {
		return 0
	}
	c.m.mu.Lock()
	err := f2fs.SetEncodingFlags(d.bdev, flags)
	c.m.mu.Unlock()
	if err != nil {
		fmt.Fprintf(c.errw, "\tError: updating the superblock: %s\n", strerror(err))
		return 1
	}
	c.imageWritten(d)
	fmt.Fprintf(c.out, "Info: Casefold: %s linear lookup\n", word)
	return 0
}

// injectMembers are the members inject.f2fs can change in each area,
// as its -h lists them ("member: description").
var injectMembers = map[string][]string{
	"dent": {"d_bitmap: inject dentry bitmap", "d_hash: inject dentry hash", "d_ino: inject dentry ino", "d_ftype: inject dentry ftype"},
}

// cmdInjectF2fs is inject.f2fs for the dentry area's d_hash: --dent
// --mb d_hash --nid INO --val VALUE DEVICE changes the hash of inode
// INO's dentry in its parent directory on the image; --AREA ... -h lists
// the area's members.
func cmdInjectF2fs(c *cmd) int {
	var area, member, dev string
	nid, val := int64(-1), int64(-1)
	help := false
	areas := []string{"sb", "cp", "nat", "sit", "ssa", "node", "dent"}
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		next := func() string {
			if i+1 < len(c.args) {
				i++
				return c.args[i]
			}
			return ""
		}
		switch {
		case a == "-h" || a == "--help":
			help = true
		case a == "--mb":
			member = next()
		case a == "--nid":
			nid, _ = strconv.ParseInt(next(), 0, 64)
		case a == "--val":
			val, _ = strconv.ParseInt(next(), 0, 64)
		case strings.HasPrefix(a, "--") && contains(areas, a[2:]):
			area = a[2:]
			// --sb, --cp, --nat and --sit take the copy to change.
			if area == "sb" || area == "cp" || area == "nat" || area == "sit" {
				next()
			}
		case strings.HasPrefix(a, "-"):
			fmt.Fprintf(c.errw, "\tError: Unknown option %s\n", a)
			return 1
		default:
			dev = a
		}
	}
	if help || dev == "" {
		fmt.Fprintf(c.out, "\nUsage: inject.f2fs [options] device\n[options]:\n  -d debug level [default:0]\n  -V print the version number and exit\n  --mb <member name> which member is injected\n  --val <new value> new value to set\n")
		if ms, ok := injectMembers[area]; ok {
			fmt.Fprintf(c.out, "[%s]:\n", area)
			for _, m := range ms {
				fmt.Fprintf(c.out, "  %s\n", m)
			}
		}
		if help {
			return 0
		}
		return 1
	}
	if area != "dent" || member != "d_hash" {
		fmt.Fprintf(c.errw, "\tError: the model's inject.f2fs changes only --dent --mb d_hash\n")
		return 1
	}
	if nid <= 0 || val < 0 || val > 0xffffffff {
		fmt.Fprintf(c.errw, "\tError: --dent needs --nid and --val\n")
		return 1
	}
	d, ok := c.f2fsImage(dev)
	if !ok {
		return 1
	}
	var old uint32
	_, err := c.sys(fmt.Sprintf("inject_dentry(%q, %d, %#x)", dev, nid, val), func(t *kernel.Task, p *vfs.Proc) (int64, error) {
		var err error
		old, err = f2fs.InjectDentHash(t, d.bdev, strings.TrimPrefix(d.name, "/dev/"), uint32(nid), uint32(val))
		return 0, err
	})
	if err != nil {
		fmt.Fprintf(c.errw, "\tError: inject dentry of ino %d: %v\n", nid, err)
		return 1
	}
	c.imageWritten(d)
	fmt.Fprintf(c.out, "Info: inject dentry d_hash of ino %d: 0x%x -> 0x%x\n", nid, old, val)
	return 0
}

// f2fsIoFlags are f2fs_io's flag names and the FS_*_FL bits the model's
// f2fs keeps.
var f2fsIoFlags = map[string]uint32{"casefold": vfs.FS_CASEFOLD_FL}

// cmdF2fsIo is f2fs_io for the subcommands the model supports: setflags
// FLAG FILE and getflags FILE (FS_IOC_SETFLAGS / FS_IOC_GETFLAGS with
// f2fs_io's flag names; casefold is the one the model's f2fs sets).
func cmdF2fsIo(c *cmd) int {
	usage := func() int {
		fmt.Fprintf(c.errw, "f2fs_io: the model's f2fs_io has setflags and getflags\n\tsetflags [flag] [file]\n\tgetflags [file]\n")
		return 1
	}
	if len(c.args) == 0 {
		return usage()
	}
	switch c.args[0] {
	case "setflags", "clearflags":
		if len(c.args) != 3 {
			return usage()
		}
		var bits uint32
		for _, n := range strings.Split(c.args[1], ",") {
			b, ok := f2fsIoFlags[n]
			if !ok {
				fmt.Fprintf(c.errw, "f2fs_io: flag %s is not supported by the model\n", n)
				return 1
			}
			bits |= b
		}
		f, err := c.open(c.args[2], vfs.O_RDONLY, 0)
		if err != nil {
			fmt.Fprintf(c.errw, "open failed: %s\n", strerror(err))
			return 1
		}
		defer f.Close()
		var fl uint32
		if err := c.ioctl(f, "FS_IOC_GETFLAGS", vfs.FS_IOC_GETFLAGS, &fl); err != nil {
			fmt.Fprintf(c.errw, "failed to issue F2FS_IOC_GETFLAGS: %s\n", strerror(err))
			return 1
		}
		if c.args[0] == "setflags" {
			fl |= bits
		} else {
			fl &^= bits
		}
		err = c.ioctl(f, "FS_IOC_SETFLAGS", vfs.FS_IOC_SETFLAGS, &fl)
		fmt.Fprintf(c.out, "%s a flag: %s ret=%d, flags=%s\n", strings.TrimSuffix(c.args[0], "flags"), c.args[1], errnoRet(err), f2fsFlagNames(fl))
		if err != nil {
			fmt.Fprintf(c.errw, "failed to issue F2FS_IOC_SETFLAGS: %s\n", strerror(err))
			return 1
		}
		return 0
	case "getflags":
		if len(c.args) != 2 {
			return usage()
		}
		f, err := c.open(c.args[1], vfs.O_RDONLY, 0)
		if err != nil {
			fmt.Fprintf(c.errw, "open failed: %s\n", strerror(err))
			return 1
		}
		defer f.Close()
		var fl uint32
		if err := c.ioctl(f, "FS_IOC_GETFLAGS", vfs.FS_IOC_GETFLAGS, &fl); err != nil {
			fmt.Fprintf(c.errw, "failed to issue F2FS_IOC_GETFLAGS: %s\n", strerror(err))
			return 1
		}
		fmt.Fprintf(c.out, "get a flag on %s flags=%s\n", c.args[1], f2fsFlagNames(fl))
		return 0
	}
	return usage()
}

// f2fsFlagNames renders flags as f2fs_io prints them.
func f2fsFlagNames(fl uint32) string {
	var names []string
	for _, n := range []struct {
		bit  uint32
		name string
	}{{vfs.FS_ENCRYPT_FL, "encrypt"}, {vfs.FS_INLINE_DATA_FL, "inline_data"}, {vfs.FS_CASEFOLD_FL, "casefold"}} {
		if fl&n.bit != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ",")
}

// errnoRet is a syscall's return as f2fs_io prints it: 0 or -1.
func errnoRet(err error) int {
	if err != nil {
		return -1
	}
	return 0
}

var _ = errno.EIO

func init() {
	commands["inject.f2fs"] = cmdInjectF2fs
	commands["f2fs_io"] = cmdF2fsIo
}
