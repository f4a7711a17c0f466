package shell

import (
	"fmt"
	"strings"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// mkfsArgOpts are the options that take an argument, by tool, as their
// getopt strings have them (e2fsprogs 1.47 misc/mke2fs.c PRS, f2fs-tools
// 1.15 mkfs/f2fs_format_main.c f2fs_parse_options): the word after one is
// its value, not the device.
var mkfsArgOpts = map[string]string{
	"ext4": "bdegilmorstCEGIJLMNORTUz",
	"f2fs": "acCdeEgloOtTRsSzUwZ",
}

// cmdMkfs is mkfs.ext4 and mkfs.f2fs (and mkfs [-t TYPE]): the
// command line read as the tool's getopt reads it, every option passed to
// the type's Mkfs (which parses them as mke2fs or mkfs.f2fs does and
// refuses what it does not model), then the device and the optional size
// operand (mke2fs's fs-size, mkfs.f2fs's sector count), which Mkfs gets
// last.
func cmdMkfs(c *cmd) int {
	fstype := strings.TrimPrefix(c.name, "mkfs.")
	if c.name == "mkfs" {
		fstype = ""
	}
	var args, operands []string
	force := false // mkfs.f2fs -f: overwrite an existing filesystem
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		if a == "--" {
			operands = append(operands, c.args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			operands = append(operands, a)
			continue
		}
		if c.name == "mkfs" && fstype == "" && a == "-t" && i+1 < len(c.args) {
			// mkfs(8)'s own -t; the rest goes to mkfs.TYPE.
			fstype = c.args[i+1]
			i++
			continue
		}
		if fstype == "" {
			fstype = "ext4"
		}
		// One word of clustered flags, each with its value where the
		// tool's getopt says it takes one (-Fq, -b4096).
		for j := 1; j < len(a); j++ {
			ch := a[j]
			if strings.IndexByte(mkfsArgOpts[fstype], ch) >= 0 {
				v := a[j+1:]
				if v == "" {
					if i+1 >= len(c.args) {
						fmt.Fprintf(c.errw, "%s: option requires an argument -- '%c'\n", c.name, ch)
						return 1
					}
					i++
					v = c.args[i]
				}
				args = append(args, "-"+string(ch), v)
				break
			}
			switch {
			case ch == 'f' && fstype == "f2fs":
				force = true
			case ch == 'q' || ch == 'F' || ch == 'v':
				// Quiet, force and verbose change nothing here.
			default:
				args = append(args, "-"+string(ch))
			}
		}
	}
	var dev string
	if len(operands) > 0 {
		dev = operands[0]
	}
	if len(operands) > 2 {
		fmt.Fprintf(c.errw, "%s: too many arguments: %s\n", c.name, strings.Join(operands[2:], " "))
		return 1
	}
	args = append(args, operands[min(len(operands), 1):]...)
	if fstype == "" {
		fstype = "ext4"
	}
	if dev == "" {
		fmt.Fprintf(c.errw, "Usage: mkfs.%s [-O feature[,...]] [-E extended-option[,...]] device [fs-size]\n", fstype)
		return 1
	}
	fs, err := vfs.GetFsType(fstype)
	if err != nil || fs.Mkfs == nil {
		fmt.Fprintf(c.errw, "mkfs: failed to execute mkfs.%s: No such file or directory\n", fstype)
		return 1
	}
	c.m.mu.Lock()
	d, ok := c.m.devs[c.abs(dev)]
	mounted := ok && c.m.mountOf(d.name) != nil
	c.m.mu.Unlock()
	if !ok {
		fmt.Fprintf(c.errw, "The file %s does not exist and no size was specified.\n", dev)
		return 1
	}
	if mounted {
		fmt.Fprintf(c.errw, "%s is mounted; will not make a filesystem here!\n", d.name)
		return 1
	}
	if fstype == "f2fs" && !force {
		c.m.mu.Lock()
		existing := Blkid(d.bdev)
		c.m.mu.Unlock()
		if existing != "" {
			// f2fs-tools 1.15's f2fs_dev_is_umounted/f2fs_check_fs:
			// its banner, then the refusal, on standard output, and
			// status 255 (exit(-1)).
			fmt.Fprintf(c.out, "\n    F2FS-tools: mkfs.f2fs Ver: 1.15.0 (2022-05-13)\n\nInfo: Disable heap-based policy\nInfo: Debug level = 0\nInfo: Trim is enabled\n")
			fmt.Fprintf(c.out, "\t%s appears to contain an existing filesystem (%s).\n\tUse the -f option to force overwrite.\n", dev, existing)
			return 255
		}
	}
	// Every scratch device is a fixed-size disk, formatted in place with
	// the real on-disk layout; a write-protected one refuses the writes
	// (blkdev_write_iter's EPERM).
	bdev := d.bdev
	if bdev.ReadOnly() {
		fmt.Fprintf(c.errw, "%s: %s: %s while setting up superblock\n", c.name, d.name, strerror(errno.EPERM))
		return 1
	}
	_, err = c.sys(fmt.Sprintf("mkfs.%s(%q)", fstype, d.name), func(t *kernel.Task, p *vfs.Proc) (int64, error) {
		return 0, fs.Mkfs(t, bdev, args)
	})
	if err != nil {
		msg := err.Error()
		if !strings.HasPrefix(msg, "mkfs") {
			msg = c.name + ": " + msg
		}
		fmt.Fprintln(c.errw, msg)
		return 1
	}
	c.m.mu.Lock()
	d.bdev, d.sb = bdev, nil
	c.m.used = true
	c.m.mu.Unlock()
	return 0
}

// genericMountOpts are the options mount(8) turns into MS_* flags; the
// rest go to the filesystem as its option string.
var genericMountOpts = map[string]bool{
	"ro": true, "rw": true, "noatime": true, "relatime": true, "strictatime": true, "lazytime": true,
	"nolazytime": true, "norelatime": true, "diratime": true,
	"nodiratime": true, "atime": true, "defaults": true, "nosuid": true, "nodev": true, "noexec": true,
	"suid": true, "dev": true, "exec": true, "sync": true, "async": true, "remount": true,
}

// mountErr is mount(8)'s message for a failed mount(2) (sys-utils/mount.c
// mk_exit_code: "mount: TARGET: MESSAGE." and, since the system call was
// made, the hint to read the kernel log), with mount's status 32.
func mountErr(c *cmd, dir, format string, args ...any) int {
	fmt.Fprintf(c.errw, "mount: %s: "+format+"\n", append([]any{dir}, args...)...)
	fmt.Fprintf(c.errw, "       dmesg(1) may have more information after failed mount system call.\n")
	return 32
}

// alreadyMounted is libmount's EBUSY message: "already mounted on DIR"
// when the device is mounted there, else "already mounted or mount point
// busy".
func alreadyMounted(c *cmd, dir, dev string) int {
	c.m.mu.Lock()
	r := c.m.mountAt(c.abs(dir))
	c.m.mu.Unlock()
	if r != nil && r.source == c.abs(dev) {
		return mountErr(c, dir, "%s already mounted on %s.", dev, c.abs(dir))
	}
	return mountErr(c, dir, "%s already mounted or mount point busy.", dev)
}

func mountFail(c *cmd, dir, dev string) int {
	fmt.Fprintf(c.errw, "mount: %s: wrong fs type, bad option, bad superblock on %s, missing codepage or helper program, or other error.\n", dir, dev)
	fmt.Fprintf(c.errw, "       dmesg(1) may have more information after failed mount system call.\n")
	return 32
}

// cmdMount is mount(8): without -t the type is the one mkfs wrote on the
// device (blkid).
func cmdMount(c *cmd) int {
	fstype, opts := "", ""
	var rest []string
	bind := false
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		switch {
		case a == "--bind" || a == "-B":
			bind = true
		case (a == "-t" || a == "-o") && i+1 < len(c.args):
			if a == "-t" {
				fstype = c.args[i+1]
			} else if opts == "" {
				opts = c.args[i+1]
			} else {
				opts += "," + c.args[i+1]
			}
			i++
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if a != "-n" && a != "-v" {
				fmt.Fprintf(c.errw, "mount: invalid option -- '%s'\n", strings.TrimPrefix(a, "-"))
				fmt.Fprintf(c.errw, "Usage:\n mount [-lhV]\n mount -a [options]\n mount [options] [--source] <source> | [--target] <directory>\n mount [options] <source> <directory>\n")
				return 1
			}
		default:
			rest = append(rest, a)
		}
	}
	var generic, data []string
	remount := false
	for _, o := range strings.Split(opts, ",") {
		switch {
		case o == "":
		case o == "bind":
			bind = true
		case o == "remount":
			remount = true
		case genericMountOpts[o]:
			generic = append(generic, o)
		default:
			data = append(data, o)
		}
	}
	if len(rest) == 0 && !remount {
		c.m.mu.Lock()
		defer c.m.mu.Unlock()
		for _, r := range c.m.mounts {
			fmt.Fprintf(c.out, "%s on %s type %s (%s)\n", r.source, r.dir, r.fstype, r.optsNow())
		}
		return 0
	}
	if bind {
		return c.mountBind(rest, remount, generic)
	}
	if remount {
		if len(rest) == 0 {
			fmt.Fprintln(c.errw, "mount: no mount point specified.")
			return 1
		}
		dir := c.abs(rest[len(rest)-1])
		c.m.mu.Lock()
		r := c.m.mountAt(dir)
		if r == nil {
			r = c.m.mountOf(dir)
		}
		c.m.mu.Unlock()
		if r == nil {
			return mountErr(c, rest[len(rest)-1], "mount point not mounted or bad option.")
		}
		// MS_RDONLY sets or clears the mount's MNT_READONLY (without ro
		// or rw the mount keeps its mode, as mount(8) passes it on); the
		// other generic flags are recorded only. The filesystem's own
		// options go to its reconfigure.
		ro := strings.HasPrefix(r.optsNow(), "ro")
		if last := lastOf(generic, "ro", "rw"); last != "" {
			ro = last == "ro"
		}
		var err error
		if len(data) > 0 {
			_, err = c.sys(fmt.Sprintf("mount(%q, MS_REMOUNT, %q)", r.dir, strings.Join(data, ",")), func(t *kernel.Task, p *vfs.Proc) (int64, error) {
				return 0, c.m.sys.Remount(t, p, r.dir, strings.Join(data, ","))
			})
		}
		if err != nil {
			return mountFail(c, r.dir, r.source)
		}
		flag := "0"
		if ro {
			flag = "MS_RDONLY"
		}
		_, err = c.sys(fmt.Sprintf("mount(%q, MS_REMOUNT|%s)", r.dir, flag), func(t *kernel.Task, p *vfs.Proc) (int64, error) {
			return 0, c.m.sys.RemountReadonly(t, p, r.dir, ro)
		})
		if e, ok := errno.Of(err); ok && e == errno.EBUSY {
			return mountErr(c, rest[len(rest)-1], "mount point is busy.")
		} else if ok && e == errno.EACCES {
			return mountErr(c, rest[len(rest)-1], "cannot remount %s read-write, is write-protected.", r.source)
		} else if err != nil {
			return mountFail(c, r.dir, r.source)
		}
		c.m.mu.Lock()
		mnt := r.m
		if mnt == nil {
			mnt = c.m.sys.RootMount()
		}
		// The atime flags stay as they are unless the remount names one
		// (path_mount), and so does lazytime.
		if fl, given := atimeFlags(generic, mnt.AtimeFlags()); given {
			mnt.SetAtimeFlags(fl)
		}
		if l := lastOf(generic, "lazytime", "nolazytime"); l != "" {
			mnt.SB.SetLazytime(l == "lazytime")
		}
		if ro {
			generic = append(generic, "ro")
		}
		r.opts = mountOptsString(generic, data)
		c.m.mu.Unlock()
		return 0
	}
	if len(rest) != 2 {
		fmt.Fprintf(c.errw, "mount: bad usage\nTry 'mount --help' for more information.\n")
		return 1
	}
	devName, dir := c.abs(rest[0]), c.abs(rest[1])
	c.m.mu.Lock()
	d, isDev := c.m.devs[devName]
	busy := c.m.mountOf(devName) != nil
	c.m.mu.Unlock()
	if !isDev {
		return mountErr(c, rest[1], "special device %s does not exist.", rest[0])
	}
	if busy {
		// mount(2) resolves the mount point first (path_mount's
		// user_path_at), then finds the device in use.
		if st, err := c.stat(rest[1], true); err != nil {
			return mountErr(c, rest[1], "mount point does not exist.")
		} else if st.Mode&vfs.S_IFMT != vfs.S_IFDIR {
			return mountErr(c, rest[1], "mount point is not a directory.")
		}
		return alreadyMounted(c, rest[1], rest[0])
	}
	if fstype == "" {
		c.m.mu.Lock()
		fstype = Blkid(d.bdev)
		c.m.mu.Unlock()
		if fstype == "" {
			return mountFail(c, rest[1], rest[0])
		}
	}
	fs, err := vfs.GetFsType(fstype)
	if err != nil {
		return mountErr(c, rest[1], "unknown filesystem type '%s'.", fstype)
	}
	var m *vfs.Mount
	ro := lastOf(generic, "ro", "rw") == "ro"
	try := func(ro bool) error {
		flags := "0"
		if ro {
			flags = "MS_RDONLY"
		}
		desc := fmt.Sprintf("mount(%q, %q, %q, %s, %q)", devName, dir, fstype, flags, strings.Join(data, ","))
		if d.sb != nil && d.sb.Type == fs {
			sb := d.sb
			_, err := c.sys(desc, func(t *kernel.Task, p *vfs.Proc) (int64, error) {
				// setup_bdev_super's EACCES, for the superblock the
				// model kept since the umount.
				if !ro && d.bdev.ReadOnly() {
					return 0, errno.EACCES
				}
				var err error
				m, err = c.m.sys.MountSuper(t, p, sb, dir)
				return 0, err
			})
			return err
		}
		_, err := c.sys(desc, func(t *kernel.Task, p *vfs.Proc) (int64, error) {
			var err error
			m, err = c.m.sys.Mount(t, p, fs, dir, vfs.MountOptions{Source: strings.TrimPrefix(devName, "/dev/"), Device: d.bdev, Data: strings.Join(data, ","), ReadOnly: ro})
			return 0, err
		})
		return err
	}
	err = try(ro)
	// mount(8) (libmount's do_mount) retries a mount that failed with
	// EACCES or EROFS read-only, unless rw was asked for explicitly, and
	// warns that it did.
	if e, ok := errno.Of(err); ok && !ro && (e == errno.EACCES || e == errno.EROFS) {
		if contains(generic, "rw") {
			return mountErr(c, rest[1], "%s is write-protected but explicit read-write mode requested.", rest[0])
		}
		if err = try(true); err == nil {
			ro = true
			generic = append(generic, "ro")
			fmt.Fprintf(c.errw, "mount: %s: WARNING: source write-protected, mounted read-only.\n", rest[1])
		}
	}
	if err != nil {
		if e, ok := errno.Of(err); ok {
			switch e {
			case errno.ENOENT:
				return mountErr(c, rest[1], "mount point does not exist.")
			case errno.ENOTDIR:
				return mountErr(c, rest[1], "mount point is not a directory.")
			case errno.EBUSY:
				return alreadyMounted(c, rest[1], rest[0])
			case errno.EACCES, errno.EROFS:
				return mountErr(c, rest[1], "cannot mount %s read-only.", rest[0])
			}
		}
		return mountFail(c, rest[1], rest[0])
	}
	m.SetReadonly(ro)
	fl, _ := atimeFlags(generic, vfs.MNT_RELATIME)
	m.SetAtimeFlags(fl)
	m.SB.SetLazytime(lastOf(generic, "lazytime", "nolazytime") == "lazytime")
	c.m.mu.Lock()
	c.m.mounts = append(c.m.mounts, &mountRec{source: devName, dir: dir, fstype: fstype, opts: mountOptsString(generic, data), dev: d, m: m})
	d.sb = nil
	c.m.used = true
	c.m.mu.Unlock()
	return 0
}

// atimeFlags computes the mount's atime flags from mount(8)'s options in
// order over the default def (path_mount: MS_NOATIME sets MNT_NOATIME,
// MS_STRICTATIME clears MNT_RELATIME and MNT_NOATIME, relatime sets
// MNT_RELATIME, nodiratime MNT_NODIRATIME; atime, norelatime and diratime
// clear theirs). given reports whether any atime option was named.
func atimeFlags(opts []string, def uint32) (uint32, bool) {
	fl, given := def, false
	for _, o := range opts {
		given = given || o == "noatime" || o == "atime" || o == "relatime" || o == "norelatime" || o == "strictatime" || o == "nodiratime" || o == "diratime"
	}
	if given {
		fl = vfs.MNT_RELATIME
	}
	for _, o := range opts {
		switch o {
		case "noatime":
			fl |= vfs.MNT_NOATIME
		case "atime":
			fl &^= vfs.MNT_NOATIME
		case "relatime":
			fl |= vfs.MNT_RELATIME
		case "norelatime":
			fl &^= vfs.MNT_RELATIME
		case "strictatime":
			fl &^= vfs.MNT_RELATIME | vfs.MNT_NOATIME
		case "nodiratime":
			fl |= vfs.MNT_NODIRATIME
		case "diratime":
			fl &^= vfs.MNT_NODIRATIME
		}
	}
	return fl, given
}

// lastOf returns the last of opts that is a or b ("" if neither is), as
// mount(8) lets a later option override an earlier one.
func lastOf(opts []string, a, b string) string {
	last := ""
	for _, o := range opts {
		if o == a || o == b {
			last = o
		}
	}
	return last
}

func mountOptsString(generic, data []string) string {
	out := []string{"rw"}
	for _, g := range generic {
		if g == "ro" || g == "rw" {
			out[0] = g
		} else if g != "defaults" {
			out = append(out, g)
		}
	}
	if len(generic) == 0 || !contains(generic, "noatime") && !contains(generic, "strictatime") {
		if !contains(out, "relatime") {
			out = append(out, "relatime")
		}
	}
	return strings.Join(append(out, data...), ",")
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// cmdUmount is umount(8) of a mountpoint or a device.
func cmdUmount(c *cmd) int {
	var rest []string
	for _, a := range c.args {
		if !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
		}
	}
	if len(rest) == 0 {
		fmt.Fprintln(c.errw, "umount: bad usage\nTry 'umount --help' for more information.")
		return 1
	}
	st := 0
	for _, a := range rest {
		p := c.abs(a)
		c.m.mu.Lock()
		r := c.m.mountAt(p)
		if r == nil {
			r = c.m.mountOf(p)
		}
		c.m.mu.Unlock()
		if r == nil || r.dev == nil && !r.bind {
			fmt.Fprintf(c.errw, "umount: %s: not mounted.\n", a)
			st = 32
			continue
		}
		// The shell's working directory is only the interpreter's (cd does
		// not chdir a process), so a shell inside the mount keeps it busy
		// here, as its cwd reference would in the kernel.
		if c.dir == r.dir || strings.HasPrefix(c.dir, r.dir+"/") {
			fmt.Fprintf(c.errw, "umount: %s: target is busy.\n", a)
			st = 32
			continue
		}
		var sb *vfs.SuperBlock
		_, err := c.sys(fmt.Sprintf("umount2(%q, 0)", r.dir), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
			var err error
			sb, err = c.m.sys.Umount(t, pr, r.dir)
			return 0, err
		})
		if err != nil {
			if e, ok := errno.Of(err); ok && e == errno.EBUSY {
				fmt.Fprintf(c.errw, "umount: %s: target is busy.\n", a)
			} else {
				fmt.Fprintf(c.errw, "umount: %s: %s.\n", a, strerror(err))
			}
			st = 32
			continue
		}
		c.m.mu.Lock()
		for i, x := range c.m.mounts {
			if x == r {
				c.m.mounts = append(c.m.mounts[:i], c.m.mounts[i+1:]...)
				break
			}
		}
		// The last close of the device writes it back (blkdev_put's
		// sync_blockdev): a writable image goes back to its host file.
		// A mount whose superblock has others (a bind mount) leaves it
		// as it is (sb nil).
		err = nil
		if sb != nil && r.dev != nil {
			r.dev.sb = sb
			err = r.dev.bdev.Sync()
		}
		c.m.mu.Unlock()
		if err != nil {
			fmt.Fprintf(c.errw, "umount: %s: writing the image back: %v\n", a, err)
			st = 32
		}
	}
	return st
}

// cmdBlkid prints the type mkfs wrote on each device.
func cmdBlkid(c *cmd) int {
	var tags []string
	format := "full"
	var names []string
	for i := 0; i < len(c.args); i++ {
		switch a := c.args[i]; {
		case (a == "-s" || a == "-o") && i+1 < len(c.args):
			if a == "-s" {
				tags = append(tags, c.args[i+1])
			} else {
				format = c.args[i+1]
			}
			i++
		case strings.HasPrefix(a, "-"):
		default:
			names = append(names, c.abs(a))
		}
	}
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if len(names) == 0 {
		names = c.m.deviceNames()
	}
	st := 2
	for _, n := range names {
		d, ok := c.m.devs[n]
		if !ok || Blkid(d.bdev) == "" {
			continue
		}
		found := c.m.blkidTags(d)
		var out []string
		for _, kv := range found {
			if len(tags) > 0 && !contains(tags, kv[0]) {
				continue
			}
			switch format {
			case "value":
				out = append(out, kv[1])
			case "export":
				out = append(out, kv[0]+"="+kv[1])
			default:
				out = append(out, fmt.Sprintf("%s=\"%s\"", kv[0], kv[1]))
			}
		}
		if len(out) == 0 {
			continue
		}
		st = 0
		switch format {
		case "value", "export":
			fmt.Fprintln(c.out, strings.Join(out, "\n"))
		default:
			fmt.Fprintf(c.out, "%s: %s\n", n, strings.Join(out, " "))
		}
	}
	return st
}
