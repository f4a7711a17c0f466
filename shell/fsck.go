package shell

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// The filesystem checkers inside the machine: e2fsck (fsck.ext4),
// fsck.f2fs and fsck(8), which picks one by the device's type. They run
// vfslab's own checkers, not e2fsprogs' or f2fs-tools': the filesystem
// is mounted read-only where nothing else sees it, and every directory
// goes through the type's directory checker (ext4.CheckDir: e2fsck's
// pass 2 rules, the htree, the checksums, names twice; f2fs.CheckDir:
// fsck.f2fs's dentry checks), with no key, as the real tools have none.
// The other passes of the real tools (inodes and blocks, connectivity,
// reference counts, group summaries, f2fs's NAT/SIT/checkpoint) are not
// modelled, and nothing is repaired: a problem is reported, with the real
// tools' exit status for errors left uncorrected.

// toolIdent is the credentials of the checkers and debuggers: root
// without the session keyring.
var toolIdent = ident{groups: "0", noKeyring: true}

// fsckMountDir is where a checker mounts the device: a directory of the
// root memfs that exists only while the checker runs.
const fsckMountDir = "/proc/vfslab-fsck"

// fsckExit are e2fsck's and fsck's exit statuses (e2fsck(8)).
const (
	fsckOK          = 0
	fsckCorrected   = 1
	fsckUncorrected = 4
	fsckError       = 8
	fsckUsage       = 16
)

// fsckReport is what one check found.
type fsckReport struct {
	dirs, files int
	problems    []string
}

// checkDevice mounts device devName read-only in private (or uses its
// mount when it is mounted) and checks every directory. It returns the
// report, the type found on the device ("" for none), and an error for a
// device it could not check.
func (c *cmd) checkDevice(devName string) (*fsckReport, string, error) {
	p := c.abs(devName)
	c.m.mu.Lock()
	d, ok := c.m.devs[p]
	r := c.m.mountOf(p)
	c.m.mu.Unlock()
	if !ok {
		return nil, "", errno.ENOENT
	}
	if r != nil {
		rep, err := c.walkCheck(r.dir)
		return rep, r.fstype, err
	}
	c.m.mu.Lock()
	fstype := Blkid(d.bdev)
	c.m.mu.Unlock()
	if fstype == "" {
		return nil, "", nil
	}
	rep := &fsckReport{}
	err := c.m.privateMount(c, d, fstype, func(dir string) error {
		var err error
		rep, err = c.walkCheck(dir)
		return err
	})
	return rep, fstype, err
}

// privateMount mounts device d (of type fstype) read-only on
// fsckMountDir for fn, then unmounts it; a superblock the model kept for
// the device since its last umount is attached and kept again.
func (m *Machine) privateMount(c *cmd, d *device, fstype string, fn func(dir string) error) error {
	fs, err := vfs.GetFsType(fstype)
	if err != nil {
		return err
	}
	m.mu.Lock()
	sb := d.sb
	m.mu.Unlock()
	_, err = c.sys(fmt.Sprintf("mount(%q, %q, %q, MS_RDONLY)", d.name, fsckMountDir, fstype), func(t *kernel.Task, p *vfs.Proc) (int64, error) {
		if err := m.root.Mkdir(t, fsckMountDir, 0o700); err != nil {
			return 0, err
		}
		var mnt *vfs.Mount
		var err error
		if sb != nil && sb.Type == fs {
			mnt, err = m.sys.MountSuper(t, m.root, sb, fsckMountDir)
		} else {
			mnt, err = m.sys.Mount(t, m.root, fs, fsckMountDir, vfs.MountOptions{Source: strings.TrimPrefix(d.name, "/dev/"), Device: d.bdev, ReadOnly: true})
		}
		if err != nil {
			m.root.Rmdir(t, fsckMountDir)
			return 0, err
		}
		mnt.SetReadonly(true)
		return 0, nil
	})
	if err != nil {
		return err
	}
	ferr := fn(fsckMountDir)
	var usb *vfs.SuperBlock
	_, err = c.sys(fmt.Sprintf("umount2(%q, 0)", fsckMountDir), func(t *kernel.Task, p *vfs.Proc) (int64, error) {
		var err error
		if usb, err = m.sys.Umount(t, m.root, fsckMountDir); err != nil {
			return 0, err
		}
		return 0, m.root.Rmdir(t, fsckMountDir)
	})
	if usb != nil {
		m.mu.Lock()
		d.sb = usb
		m.mu.Unlock()
	}
	if ferr != nil {
		return ferr
	}
	return err
}

// walkCheck checks every directory under dir with its filesystem's
// checker, as root.
func (c *cmd) walkCheck(dir string) (*fsckReport, error) {
	rep := &fsckReport{}
	var walk func(p string, depth int) error
	walk = func(p string, depth int) error {
		if depth > 4096 {
			rep.problems = append(rep.problems, fmt.Sprintf("%s: directories nested past 4096 levels", p))
			return nil
		}
		rep.dirs++
		if prob := c.checkOneDir(p); prob != "" {
			rep.problems = append(rep.problems, prob)
		}
		ents, err := c.m.readDir(c.errw, toolIdent, c.name, p)
		if err != nil {
			rep.problems = append(rep.problems, fmt.Sprintf("%s: cannot read the directory: %s", p, strerror(err)))
			return nil
		}
		sort.Slice(ents, func(i, j int) bool { return ents[i].Name < ents[j].Name })
		for _, e := range ents {
			if e.Name == "." || e.Name == ".." {
				continue
			}
			if e.Type != vfs.DT_DIR {
				rep.files++
				continue
			}
			if err := walk(p+"/"+e.Name, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return rep, walk(dir, 0)
}

// checkOneDir runs the directory checker of p's filesystem on p ("" when
// it finds nothing wrong).
func (c *cmd) checkOneDir(p string) string {
	var prob string
	c.sys(fmt.Sprintf("check_dir(%q)", p), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
		d, err := c.m.procFor(toolIdent).LookupDentry(t, p, false)
		if err != nil {
			prob = fmt.Sprintf("%s: lookup: %s", p, strerror(err))
			return 0, nil
		}
		defer dcache.Dput(t, d)
		inode := d.Inode()
		if inode == nil || !inode.IsDir() {
			return 0, nil
		}
		inode.Rwsem.Lock()
		defer inode.Rwsem.Unlock()
		var cerr error
		switch inode.SB().Type {
		case ext4.Type:
			cerr = ext4.CheckDir(t, ext4.EXT4_I(inode))
		case f2fs.Type:
			cerr = f2fs.CheckDir(t, f2fs.F2FS_I(inode))
		}
		if cerr != nil {
			prob = fmt.Sprintf("%s (inode %d): %v", strings.TrimPrefix(strings.TrimPrefix(p, fsckMountDir), "/"), inode.Ino(), cerr)
		}
		return 0, nil
	})
	return prob
}

// e2fsckVersion is the e2fsprogs release the model's ext4 follows.
const e2fsckVersion = "e2fsck 1.47.0 (5-Feb-2023)"

// cmdE2fsck is e2fsck(8) (fsck.ext4): -n (check only), -y and -p (fix,
// which the model cannot: problems are left uncorrected), -f (force; the
// model always checks), -D (optimize directories: not done, the
// directories are checked only), -v, -t. Exit status 0 clean, 4 errors
// left uncorrected, 8 operational error, 16 usage error.
func cmdE2fsck(c *cmd) int {
	var dev string
	for _, a := range c.args {
		switch {
		case len(a) > 1 && a[0] == '-':
			for _, ch := range a[1:] {
				if !strings.ContainsRune("nypfDvtC0", ch) {
					fmt.Fprintf(c.errw, "%s: invalid option -- '%c'\n", c.name, ch)
					fmt.Fprintf(c.errw, "Usage: %s [-panyrcdfktvDFV] [-b superblock] [-B blocksize]\n\t\t[-l|-L bad_blocks_file] [-C fd] [-j external_journal]\n\t\t[-E extended-options] [-z undo_file] device\n", c.name)
					return fsckUsage
				}
			}
		case dev == "":
			dev = a
		default:
			fmt.Fprintf(c.errw, "Usage: %s [-panyrcdfktvDFV] device\n", c.name)
			return fsckUsage
		}
	}
	if dev == "" {
		fmt.Fprintf(c.errw, "Usage: %s [-panyrcdfktvDFV] device\n", c.name)
		return fsckUsage
	}
	fmt.Fprintln(c.errw, e2fsckVersion)
	rep, fstype, err := c.checkDevice(dev)
	switch {
	case err == errno.ENOENT && rep == nil:
		fmt.Fprintf(c.out, "%s: No such file or directory while trying to open %s\nPossibly non-existent device?\n", c.name, dev)
		return fsckError
	case err != nil:
		fmt.Fprintf(c.out, "%s: %s while trying to open %s\n", c.name, strerror(err), dev)
		return fsckError
	case fstype != "ext4":
		fmt.Fprintf(c.out, "%s: Bad magic number in super-block while trying to open %s\n", c.name, dev)
		return fsckError
	}
	fmt.Fprintln(c.out, "Pass 2: Checking directory structure")
	for _, p := range rep.problems {
		fmt.Fprintf(c.out, "Problem in directory %s\n", p)
	}
	if len(rep.problems) > 0 {
		fmt.Fprintf(c.out, "\n%s: ********** WARNING: Filesystem still has errors **********\n\n", dev)
		return fsckUncorrected
	}
	fmt.Fprintf(c.out, "%s: %d directories, %d other files checked\n", dev, rep.dirs, rep.files)
	return fsckOK
}

// cmdFsck is fsck(8): -t TYPE (or the device's type) picks fsck.TYPE,
// which gets the other options.
func cmdFsck(c *cmd) int {
	var fstype string
	var args []string
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		switch {
		case a == "-t" && i+1 < len(c.args):
			fstype = c.args[i+1]
			i++
		case strings.HasPrefix(a, "-t") && len(a) > 2:
			fstype = a[2:]
		default:
			args = append(args, a)
		}
	}
	if fstype == "" {
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				continue
			}
			c.m.mu.Lock()
			if d, ok := c.m.devs[c.abs(a)]; ok {
				fstype = Blkid(d.bdev)
			}
			c.m.mu.Unlock()
		}
	}
	fn, ok := commands["fsck."+fstype]
	if fstype == "" || !ok {
		fmt.Fprintf(c.errw, "fsck: fsck.%s: not found\nfsck: error 2 while executing fsck.%s for %s\n", fstype, fstype, strings.Join(args, " "))
		return fsckError
	}
	sub := *c
	sub.name, sub.args = "fsck."+fstype, args
	return fn(&sub)
}

// cmdFsckF2fs is fsck.f2fs: --dry-run (check only; the model never
// writes but for --nolinear-lookup), -f, -a, -p, and
// --nolinear-lookup=0|1, which sets or clears the superblock's
// F2FS_ENC_NO_COMPAT_FALLBACK_FL (fsck_update_sb_flags) on a real image.
// It prints fsck.f2fs's "Info:" lines for the superblock it reads and
// "[FSCK]" lines for the directories; exit status 0, or 1 for
// inconsistencies it could not fix (f2fs-tools' FSCK_ERROR_CORRECTED is
// not given: nothing is fixed).
func cmdFsckF2fs(c *cmd) int {
	var dev string
	nolinear := -1
	for _, a := range c.args {
		switch {
		case a == "--dry-run" || a == "-f" || a == "-a" || a == "-p" || a == "-y" || a == "-n" || a == "--debug-cache":
		case strings.HasPrefix(a, "--nolinear-lookup"):
			v := strings.TrimPrefix(strings.TrimPrefix(a, "--nolinear-lookup"), "=")
			switch v {
			case "1", "":
				nolinear = 1
			case "0":
				nolinear = 0
			default:
				fmt.Fprintf(c.errw, "\tError: Wrong option --nolinear-lookup=%s\n", v)
				return 1
			}
		case strings.HasPrefix(a, "-"):
			fmt.Fprintf(c.errw, "\tError: Unknown option %s\n", a)
			return 1
		case dev == "":
			dev = a
		default:
			fmt.Fprintf(c.errw, "\tError: Device not specified\n")
			return 1
		}
	}
	if dev == "" {
		fmt.Fprintf(c.errw, "\tError: Device not specified\n")
		return 1
	}
	fmt.Fprintf(c.out, "Info: Dry run: the model's fsck.f2fs only checks\n")
	if nolinear >= 0 {
		if code := c.f2fsSetNolinearLookup(dev, nolinear == 1); code != 0 {
			return code
		}
	} else {
		c.f2fsLinearLookupInfo(dev)
	}
	rep, fstype, err := c.checkDevice(dev)
	switch {
	case err != nil:
		fmt.Fprintf(c.out, "\tError: Failed to open the device: %s\n", strerror(err))
		return 1
	case fstype != "f2fs":
		fmt.Fprintf(c.out, "\tInvalid SB CRC offset or magic: no f2fs superblock on %s\n\tCan't find a valid F2FS superblock at 0x0\n", dev)
		return 1
	}
	for _, p := range rep.problems {
		fmt.Fprintf(c.out, "[ASSERT] %s\n", p)
	}
	res := "[Ok..]"
	if len(rep.problems) > 0 {
		res = "[Fail]"
	}
	fmt.Fprintf(c.out, "[FSCK] directory entries of %d directories                %s\n", rep.dirs, res)
	fmt.Fprintln(c.out, "\nDone")
	if len(rep.problems) > 0 {
		return 1
	}
	return 0
}

func init() {
	for name, fn := range map[string]func(*cmd) int{
		"e2fsck": cmdE2fsck, "fsck.ext4": cmdE2fsck, "fsck.ext2": cmdE2fsck, "fsck.ext3": cmdE2fsck,
		"fsck": cmdFsck, "fsck.f2fs": cmdFsckF2fs,
	} {
		commands[name] = fn
	}
}
