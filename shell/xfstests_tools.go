package shell

import (
	"fmt"
	"io"
	"strings"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// openReader opens a command's input for streaming: "-" is standard
// input; /dev/zero and /dev/urandom are endless; a scratch device reads
// its bytes; a kernel file its text; anything else is opened on the
// machine. The caller closes it.
func (c *cmd) openReader(a string) (io.ReadCloser, error) {
	if a == "-" {
		return io.NopCloser(c.in), nil
	}
	p := c.abs(a)
	switch p {
	case "/dev/zero":
		return zeroFile{}, nil
	case "/dev/urandom", "/dev/random":
		return readerFile{c.m.urandom()}, nil
	case "/dev/null":
		return nullFile{}, nil
	}
	if bdev := c.m.device(p); bdev != nil {
		return io.NopCloser(&devFile{bdev: bdev}), nil
	}
	switch p {
	case "/proc/mounts", "/proc/self/mounts":
		c.m.mu.Lock()
		text := c.m.procMounts()
		c.m.mu.Unlock()
		return io.NopCloser(strings.NewReader(text)), nil
	case dropCachesPath:
		return io.NopCloser(strings.NewReader("0\n")), nil
	}
	if text, ok := c.m.kernelFile(p); ok {
		return io.NopCloser(strings.NewReader(text)), nil
	}
	if pf, ok := c.m.procFileFor(p, c.id); ok {
		return c.m.openProcFile(pf), nil
	}
	if s, err := c.stat(a, true); err == nil && s.Mode&vfs.S_IFMT == vfs.S_IFDIR {
		return nil, errno.EISDIR
	}
	return c.open(a, vfs.O_RDONLY, 0)
}

// cmdMktemp is mktemp(1): a new file (-d: directory) named after
// TEMPLATE (default tmp.XXXXXXXXXX, its trailing Xs replaced by random
// letters and digits from the machine's random source) in -p DIR or
// /tmp (the shell's $TMPDIR is the interpreter's FIFO guard, not a
// directory); -u only prints a name. It prints the path.
func cmdMktemp(c *cmd) int {
	opts, args, ok := c.flags("dqut", "p", "[OPTION]... [TEMPLATE]")
	if !ok {
		return 1
	}
	if len(args) > 1 {
		c.errf("too many templates")
		return 1
	}
	tmpl := "tmp.XXXXXXXXXX"
	dir := "/tmp"
	if len(args) == 1 {
		tmpl = args[0]
		if strings.Contains(tmpl, "/") && opts['p'] == "" && opts['t'] == "" {
			dir = ""
		}
	}
	if d := opts['p']; d != "" {
		dir = d
	}
	xs := len(tmpl) - len(strings.TrimRight(tmpl, "X"))
	if xs < 3 {
		c.errf("too few X's in template '%s'", tmpl)
		return 1
	}
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	for try := 0; try < 100; try++ {
		var rnd [64]byte
		c.m.urandom().Read(rnd[:xs])
		name := []byte(tmpl[:len(tmpl)-xs])
		for _, b := range rnd[:xs] {
			name = append(name, chars[int(b)%len(chars)])
		}
		p := string(name)
		if dir != "" {
			p = strings.TrimSuffix(dir, "/") + "/" + p
		}
		var err error
		switch {
		case opts['u'] != "":
			if _, serr := c.stat(p, false); serr == nil {
				continue
			}
		case opts['d'] != "":
			_, err = c.sys(fmt.Sprintf("mkdir(%q, 0700)", c.abs(p)), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
				return 0, pr.Mkdir(t, c.abs(p), 0o700)
			})
		default:
			var f *vfsFile
			f, err = c.open(p, vfs.O_RDWR|vfs.O_CREAT|vfs.O_EXCL, 0o600)
			if err == nil {
				f.Close()
			}
		}
		if e, ok := errno.Of(err); ok && e == errno.EEXIST {
			continue
		}
		if err != nil {
			if opts['q'] == "" {
				what := "file"
				if opts['d'] != "" {
					what = "directory"
				}
				c.errf("failed to create %s via template '%s': %s", what, p[:len(p)-xs]+strings.Repeat("X", xs), strerror(err))
			}
			return 1
		}
		fmt.Fprintln(c.out, p)
		return 0
	}
	c.errf("failed to create file via template '%s': File exists", tmpl)
	return 1
}

func init() {
	commands["mktemp"] = cmdMktemp
}

// fsTypeNames are stat -f's names of the filesystem magics (coreutils'
// human_fstype).
var fsTypeNames = map[int64]string{0xEF53: "ext2/ext3", 0xF2F52010: "f2fs", 0x858458f6: "ramfs", 0x01021994: "tmpfs"}

// statFS is stat -f: statfs(2) of each FILE, with -c's %a %b %c %d %f
// %l %n %s %S %t %T, or coreutils' default layout.
func (c *cmd) statFS(args []string, opts map[byte]string) int {
	st := 0
	for _, a := range args {
		var fs vfs.Statfs
		_, err := c.sys(fmt.Sprintf("statfs(%q)", c.abs(a)), func(t *kernel.Task, p *vfs.Proc) (int64, error) {
			var err error
			fs, err = p.Statfs(t, c.abs(a))
			return 0, err
		})
		if err != nil {
			c.errf("cannot read file system information for '%s': %s", a, strerror(err))
			st = 1
			continue
		}
		typeName, ok := fsTypeNames[fs.Type]
		if !ok {
			typeName = fmt.Sprintf("UNKNOWN (0x%x)", fs.Type)
		}
		f, hasFormat := opts['c']
		if !hasFormat {
			fmt.Fprintf(c.out, "  File: \"%s\"\n    ID: %-8x Namelen: %-7d Type: %s\n", a, 0, fs.Namelen, typeName)
			fmt.Fprintf(c.out, "Block size: %-10d Fundamental block size: %d\n", fs.Bsize, fs.Frsize)
			fmt.Fprintf(c.out, "Blocks: Total: %-10d Free: %-10d Available: %d\n", fs.Blocks, fs.Bfree, fs.Bavail)
			fmt.Fprintf(c.out, "Inodes: Total: %-10d Free: %d\n", fs.Files, fs.Ffree)
			continue
		}
		out := expandStatFormat(f, func(b *strings.Builder, ch byte) bool {
			switch ch {
			case 'a':
				fmt.Fprint(b, fs.Bavail)
			case 'b':
				fmt.Fprint(b, fs.Blocks)
			case 'c':
				fmt.Fprint(b, fs.Files)
			case 'd':
				fmt.Fprint(b, fs.Ffree)
			case 'f':
				fmt.Fprint(b, fs.Bfree)
			case 'i':
				b.WriteString("0")
			case 'l':
				fmt.Fprint(b, fs.Namelen)
			case 'n':
				b.WriteString(a)
			case 's':
				fmt.Fprint(b, fs.Bsize)
			case 'S':
				fmt.Fprint(b, fs.Frsize)
			case 't':
				fmt.Fprintf(b, "%x", fs.Type)
			case 'T':
				b.WriteString(typeName)
			default:
				return false
			}
			return true
		})
		fmt.Fprintln(c.out, out)
	}
	return st
}

// blkidTags are the tags blkid finds on device d, in its order: UUID
// (from the superblock on the device, or from the one the model keeps
// for a growing device; libblkid leaves an all-zero UUID out) and TYPE.
// The machine's lock is held.
func (m *Machine) blkidTags(d *device) [][2]string {
	typ := Blkid(d.bdev)
	var tags [][2]string
	var uuid [16]byte
	var b [16]byte
	switch typ {
	case "ext4":
		if n, _ := d.bdev.ReadAt(b[:], 1024+0x78); n == 16 && b[0] != 0 {
			// s_volume_name, NUL-padded (mke2fs -L).
			label, _, _ := strings.Cut(string(b[:]), "\x00")
			tags = append(tags, [2]string{"LABEL", label})
		}
		if n, _ := d.bdev.ReadAt(b[:], 1024+0x68); n == 16 {
			uuid = b
		}
	case "f2fs":
		if n, _ := d.bdev.ReadAt(b[:], 1024+108); n == 16 {
			uuid = b
		}
	}
	if uuid == ([16]byte{}) {
		if sb := d.sb; sb != nil {
			uuid = sb.UUID()
		} else if r := m.mountOf(d.name); r != nil && r.m != nil {
			uuid = r.m.SB.UUID()
		}
	}
	if uuid != ([16]byte{}) {
		tags = append(tags, [2]string{"UUID", fmt.Sprintf("%x-%x-%x-%x-%x", uuid[0:4], uuid[4:6], uuid[6:8], uuid[8:10], uuid[10:16])})
	}
	return append(tags, [2]string{"TYPE", typ})
}
