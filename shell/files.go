package shell

import (
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// File and directory commands of GNU coreutils and e2fsprogs (ls, mkdir, rm,
// ln, stat, mv, cp, chattr, lsattr, find ...), with their options, messages
// and exit statuses.

// --- ls ---

type lsEntry struct {
	name string // as printed
	path string // absolute
	st   vfs.Stat
	err  error
}

func cmdLs(c *cmd) int {
	opts, args, ok := c.flags("1alidRAFUf", "", "[OPTION]... [FILE]...")
	if !ok {
		return 2
	}
	if len(args) == 0 {
		args = []string{"."}
	}
	st := 0
	var files, dirs []lsEntry
	for _, a := range args {
		s, err := c.stat(a, true)
		if err != nil {
			if s2, err2 := c.stat(a, false); err2 == nil {
				s, err = s2, nil
			}
		}
		if err != nil {
			c.errf("cannot access '%s': %s", a, strerror(err))
			st = 2
			continue
		}
		e := lsEntry{name: a, path: c.abs(a), st: s}
		if s.Mode&vfs.S_IFMT == vfs.S_IFDIR && opts['d'] == "" {
			dirs = append(dirs, e)
		} else {
			files = append(files, e)
		}
	}
	// GNU ls sorts its operands as it sorts a directory's entries (by
	// name in the C locale), the files before the directories.
	if opts['U'] == "" && opts['f'] == "" {
		byName := func(l []lsEntry) {
			sort.SliceStable(l, func(i, j int) bool { return l[i].name < l[j].name })
		}
		byName(files)
		byName(dirs)
	}
	c.lsPrint(files, opts)
	header := len(args) > 1 || opts['R'] != ""
	for i, d := range dirs {
		if header {
			if i > 0 || len(files) > 0 {
				fmt.Fprintln(c.out)
			}
			fmt.Fprintf(c.out, "%s:\n", d.name)
		}
		if r := c.lsDir(d, opts); r > st {
			st = r
		}
	}
	return st
}

func (c *cmd) lsDir(d lsEntry, opts map[byte]string) int {
	ents, err := c.m.readDir(c.errw, c.id, c.name, d.path)
	if err != nil {
		c.errf("cannot open directory '%s': %s", d.name, strerror(err))
		return 2
	}
	var list []lsEntry
	for _, e := range ents {
		if strings.HasPrefix(e.Name, ".") && opts['a'] == "" && opts['f'] == "" {
			if opts['A'] == "" || e.Name == "." || e.Name == ".." {
				continue
			}
		}
		p := path.Join(d.path, e.Name)
		le := lsEntry{name: e.Name, path: p, st: vfs.Stat{Ino: e.Ino, Mode: uint32(e.Type) << 12}}
		if opts['l'] != "" || opts['R'] != "" || opts['F'] != "" {
			s, err := c.stat(p, false)
			if err != nil {
				c.errf("cannot access '%s': %s", path.Join(d.name, e.Name), strerror(err))
				le.err = err
			} else {
				le.st = s
			}
		}
		list = append(list, le)
	}
	if opts['U'] == "" && opts['f'] == "" {
		sort.Slice(list, func(i, j int) bool { return list[i].name < list[j].name })
	}
	if opts['l'] != "" {
		fmt.Fprintf(c.out, "total %d\n", lsTotal(list))
	}
	c.lsPrint(list, opts)
	st := 0
	for _, e := range list {
		if e.err != nil {
			// A file ls could not stat is a minor problem: status 1.
			st = 1
		}
	}
	if opts['R'] != "" {
		for _, e := range list {
			if e.st.Mode&vfs.S_IFMT != vfs.S_IFDIR || e.name == "." || e.name == ".." || e.err != nil {
				continue
			}
			sub := lsEntry{name: path.Join(d.name, e.name), path: e.path, st: e.st}
			fmt.Fprintf(c.out, "\n%s:\n", sub.name)
			if r := c.lsDir(sub, opts); r > st {
				st = r
			}
		}
	}
	return st
}

// lsTotal is ls -l's "total": GNU ls sums the entries' st_blocks (512-byte
// units) and prints the sum in 1024-byte blocks, rounded up
// (human_readable with human_ceiling), not each entry's blocks rounded.
func lsTotal(list []lsEntry) int64 {
	var blocks int64
	for _, e := range list {
		if e.err == nil {
			blocks += e.st.Blocks
		}
	}
	return (blocks + 1) / 2
}

func (c *cmd) lsPrint(list []lsEntry, opts map[byte]string) {
	inoW, linkW, sizeW, majorW, minorW := 0, 0, 0, 0, 0
	isDev := func(m uint32) bool { return m&vfs.S_IFMT == vfs.S_IFCHR || m&vfs.S_IFMT == vfs.S_IFBLK }
	for _, e := range list {
		if e.err != nil {
			continue
		}
		inoW = max(inoW, len(strconv.FormatUint(e.st.Ino, 10)))
		linkW = max(linkW, len(strconv.FormatUint(uint64(e.st.Nlink), 10)))
		if isDev(e.st.Mode) {
			// A device's size column is "MAJOR, MINOR" (gobble_file).
			majorW = max(majorW, len(strconv.FormatUint(uint64(vfs.MAJOR(e.st.Rdev)), 10)))
			minorW = max(minorW, len(strconv.FormatUint(uint64(vfs.MINOR(e.st.Rdev)), 10)))
			sizeW = max(sizeW, majorW+2+minorW)
			continue
		}
		sizeW = max(sizeW, len(strconv.FormatInt(e.st.Size, 10)))
	}
	for _, e := range list {
		var b strings.Builder
		if e.err != nil && opts['l'] != "" {
			// An entry whose lstat failed: its type from the
			// directory entry and "?" for the rest (print_long_format
			// of a file without stat_ok).
			if opts['i'] != "" {
				fmt.Fprintf(&b, "%*s ", max(inoW, 1), "?")
			}
			fmt.Fprintf(&b, "%c????????? %*s ? ? %*s %12s %s\n", modeString(e.st.Mode)[0], max(linkW, 1), "?", max(sizeW, 1), "?", "?", e.name)
			io.WriteString(c.out, b.String())
			continue
		}
		if opts['i'] != "" {
			fmt.Fprintf(&b, "%*d ", inoW, e.st.Ino)
		}
		if opts['l'] != "" {
			size := fmt.Sprintf("%*d", sizeW, e.st.Size)
			if isDev(e.st.Mode) {
				size = fmt.Sprintf("%*d, %*d", sizeW-2-minorW, vfs.MAJOR(e.st.Rdev), minorW, vfs.MINOR(e.st.Rdev))
			}
			fmt.Fprintf(&b, "%s %*d %s %s %s %s ", modeString(e.st.Mode), linkW, e.st.Nlink, userName(e.st.UID), groupName(e.st.GID), size, stamp(e.st.Mtime).Format("Jan _2 15:04"))
		}
		b.WriteString(e.name)
		if opts['F'] != "" {
			switch e.st.Mode & vfs.S_IFMT {
			case vfs.S_IFDIR:
				b.WriteByte('/')
			case vfs.S_IFLNK:
				b.WriteByte('@')
			}
		}
		if opts['l'] != "" && e.st.Mode&vfs.S_IFMT == vfs.S_IFLNK {
			if t, err := c.readlink(e.path); err == nil {
				b.WriteString(" -> " + t)
			}
		}
		fmt.Fprintln(c.out, b.String())
	}
}

// modeString is ls -l's and stat %A's -rwxr-xr-x.
func modeString(mode uint32) string {
	t := byte('?')
	switch mode & vfs.S_IFMT {
	case vfs.S_IFREG:
		t = '-'
	case vfs.S_IFDIR:
		t = 'd'
	case vfs.S_IFLNK:
		t = 'l'
	case vfs.S_IFCHR:
		t = 'c'
	case vfs.S_IFBLK:
		t = 'b'
	case vfs.S_IFIFO:
		t = 'p'
	case vfs.S_IFSOCK:
		t = 's'
	}
	b := []byte{t}
	const rwx = "rwxrwxrwx"
	for i := 0; i < 9; i++ {
		if mode&(1<<(8-i)) != 0 {
			b = append(b, rwx[i])
		} else {
			b = append(b, '-')
		}
	}
	if mode&0o1000 != 0 {
		if b[9] == 'x' {
			b[9] = 't'
		} else {
			b[9] = 'T'
		}
	}
	return string(b)
}

// --- mkdir, rmdir, rm, touch, ln, readlink, truncate ---

func cmdMkdir(c *cmd) int {
	opts, args, ok := c.flags("pv", "m", "[OPTION]... DIRECTORY...")
	if !ok {
		return 1
	}
	if len(args) == 0 {
		c.errf("missing operand")
		fmt.Fprintf(c.errw, "Try 'mkdir --help' for more information.\n")
		return 1
	}
	mode := uint32(0o755)
	if v, ok := opts['m']; ok {
		n, err := strconv.ParseUint(v, 8, 32)
		if err != nil {
			c.errf("invalid mode '%s'", v)
			return 1
		}
		mode = uint32(n)
	}
	st := 0
	for _, a := range args {
		if opts['p'] != "" {
			if err := c.mkdirP(a, mode); err != nil {
				c.errf("cannot create directory '%s': %s", a, strerror(err))
				st = 1
			}
			continue
		}
		if err := c.mkdir(a, mode); err != nil {
			c.errf("cannot create directory '%s': %s", a, strerror(err))
			st = 1
		}
	}
	return st
}

func (c *cmd) mkdir(a string, mode uint32) error {
	p := c.abs(a)
	_, err := c.sys(fmt.Sprintf("mkdir(%q, %#o)", p, mode), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
		return 0, pr.Mkdir(t, p, mode)
	})
	return err
}

func (c *cmd) mkdirP(a string, mode uint32) error {
	p := c.abs(a)
	parts := strings.Split(strings.Trim(p, "/"), "/")
	cur := ""
	for _, part := range parts {
		if part == "" {
			continue
		}
		cur += "/" + part
		err := c.mkdir(cur, mode)
		if err == nil {
			continue
		}
		if e, ok := errno.Of(err); ok && e == errno.EEXIST {
			s, serr := c.stat(cur, true)
			if serr == nil && s.Mode&vfs.S_IFMT == vfs.S_IFDIR {
				continue
			}
			if serr == nil {
				return errno.ENOTDIR
			}
		}
		return err
	}
	return nil
}

func cmdRmdir(c *cmd) int {
	_, args, ok := c.flags("pv", "", "[OPTION]... DIRECTORY...")
	if !ok {
		return 1
	}
	if len(args) == 0 {
		c.errf("missing operand")
		return 1
	}
	st := 0
	for _, a := range args {
		if err := c.rmdir(a); err != nil {
			c.errf("failed to remove '%s': %s", a, strerror(err))
			st = 1
		}
	}
	return st
}

func (c *cmd) rmdir(a string) error {
	p := c.abs(a)
	_, err := c.sys(fmt.Sprintf("rmdir(%q)", p), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
		return 0, pr.Rmdir(t, p)
	})
	return err
}

func (c *cmd) unlink(a string) error {
	p := c.abs(a)
	_, err := c.sys(fmt.Sprintf("unlink(%q)", p), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
		return 0, pr.Unlink(t, p)
	})
	return err
}

func cmdRm(c *cmd) int {
	opts, args, ok := c.flags("rRfvid", "", "[OPTION]... [FILE]...")
	if !ok {
		return 1
	}
	force, rec := opts['f'] != "", opts['r'] != "" || opts['R'] != ""
	if len(args) == 0 && !force {
		c.errf("missing operand")
		fmt.Fprintf(c.errw, "Try 'rm --help' for more information.\n")
		return 1
	}
	st := 0
	for _, a := range args {
		if err := c.remove(a, rec, opts['d'] != ""); err != nil {
			if e, ok := errno.Of(err); ok && e == errno.ENOENT && force {
				continue
			}
			c.errf("cannot remove '%s': %s", a, strerror(err))
			st = 1
		}
	}
	return st
}

// remove is rm's removal of one operand (recursive with rec).
func (c *cmd) remove(a string, rec, emptyDirs bool) error {
	s, err := c.stat(a, false)
	if err != nil {
		return err
	}
	if s.Mode&vfs.S_IFMT != vfs.S_IFDIR {
		return c.unlink(a)
	}
	if !rec {
		if emptyDirs {
			return c.rmdir(a)
		}
		return errno.EISDIR
	}
	ents, err := c.m.readDir(c.errw, c.id, c.name, c.abs(a))
	if err != nil {
		return err
	}
	var firstErr error
	for _, e := range ents {
		if e.Name == "." || e.Name == ".." {
			continue
		}
		sub := path.Join(a, e.Name)
		if err := c.remove(sub, true, false); err != nil {
			c.errf("cannot remove '%s': %s", sub, strerror(err))
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	if firstErr != nil {
		return c.rmdir(a)
	}
	return c.rmdir(a)
}

func cmdTouch(c *cmd) int {
	_, args, ok := c.flags("acm", "dtr", "[OPTION]... FILE...")
	if !ok {
		return 1
	}
	if len(args) == 0 {
		c.errf("missing file operand")
		return 1
	}
	st := 0
	for _, a := range args {
		// touch opens (creating) the file, then sets its times to now
		// through the descriptor (fdutimensat: futimens), with no
		// second lookup of the name; a directory is EISDIR to the
		// open, and its times are set by name (utimensat).
		f, err := c.open(a, vfs.O_WRONLY|vfs.O_CREAT, 0o644)
		if err != nil {
			if e, ok := errno.Of(err); !ok || e != errno.EISDIR {
				c.errf("cannot touch '%s': %s", a, strerror(err))
				st = 1
				continue
			}
		} else {
			_, err := c.sys(fmt.Sprintf("utimensat(%d, NULL, NULL, 0)", f.fd), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
				return 0, f.p.Futimens(t, f.fd)
			})
			f.Close()
			if err != nil {
				c.errf("setting times of '%s': %s", a, strerror(err))
				st = 1
			}
			continue
		}
		p := c.abs(a)
		if _, err := c.sys(fmt.Sprintf("utimensat(AT_FDCWD, %q, NULL, 0)", p), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
			return 0, pr.Utimens(t, p, true)
		}); err != nil {
			c.errf("setting times of '%s': %s", a, strerror(err))
			st = 1
		}
	}
	return st
}

// twoOperands checks the SOURCE and DEST operands of ln, mv and cp as
// coreutils does: "missing file operand" or "missing destination file
// operand after ...", then the "Try 'PROG --help'" line when try names
// the program.
func (c *cmd) twoOperands(args []string, try string) bool {
	if len(args) >= 2 {
		return true
	}
	if len(args) == 0 {
		c.errf("missing file operand")
	} else {
		c.errf("missing destination file operand after '%s'", args[0])
	}
	if try != "" {
		fmt.Fprintf(c.errw, "Try '%s --help' for more information.\n", try)
	}
	return false
}

func cmdLn(c *cmd) int {
	opts, args, ok := c.flags("sfnvT", "", "[OPTION]... TARGET LINK_NAME")
	if !ok {
		return 1
	}
	if !c.twoOperands(args, "") {
		return 1
	}
	target, link := args[0], args[1]
	if s, err := c.stat(link, true); err == nil && s.Mode&vfs.S_IFMT == vfs.S_IFDIR && opts['T'] == "" {
		link = path.Join(link, path.Base(target))
	}
	if opts['f'] != "" {
		c.unlink(link)
	}
	lp := c.abs(link)
	if opts['s'] != "" {
		_, err := c.sys(fmt.Sprintf("symlink(%q, %q)", target, lp), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
			return 0, pr.Symlink(t, target, lp)
		})
		if err != nil {
			c.errf("failed to create symbolic link '%s': %s", link, strerror(err))
			return 1
		}
		if opts['v'] != "" {
			fmt.Fprintf(c.out, "'%s' -> '%s'\n", link, target)
		}
		return 0
	}
	tp := c.abs(target)
	_, err := c.sys(fmt.Sprintf("link(%q, %q)", tp, lp), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
		return 0, pr.Link(t, tp, lp)
	})
	if err != nil {
		// coreutils' do_link: a failed link looks at the target (lstat,
		// ln's -P default), and one that is not there is "failed to
		// access".
		if _, serr := c.stat(target, false); serr != nil {
			c.errf("failed to access '%s': %s", target, strerror(serr))
			return 1
		}
		c.errf("failed to create hard link '%s' => '%s': %s", link, target, strerror(err))
		return 1
	}
	if opts['v'] != "" {
		fmt.Fprintf(c.out, "'%s' => '%s'\n", link, target)
	}
	return 0
}

func cmdReadlink(c *cmd) int {
	opts, args, ok := c.flags("femnqsvz", "", "[OPTION]... FILE...")
	if !ok {
		return 1
	}
	if len(args) == 0 {
		c.errf("missing operand")
		return 1
	}
	end := "\n"
	if opts['z'] != "" {
		end = "\x00"
	} else if opts['n'] != "" {
		if len(args) == 1 {
			end = ""
		} else {
			c.errf("ignoring --no-newline with multiple arguments")
		}
	}
	st := 0
	for _, a := range args {
		var t string
		var err error
		switch {
		case opts['e'] != "":
			t, err = c.canonicalize(a, canExisting)
		case opts['m'] != "":
			t, err = c.canonicalize(a, canMissing)
		case opts['f'] != "":
			t, err = c.canonicalize(a, canAllButLast)
		default:
			t, err = c.readlink(a)
		}
		if err != nil {
			if opts['v'] != "" {
				c.errf("%s: %s", a, strerror(err))
			}
			st = 1
			continue
		}
		io.WriteString(c.out, t+end)
	}
	return st
}

// parseSize reads a size with coreutils' suffixes (K, M, G: powers of
// 1024; KB, MB: powers of 1000).
func parseSize(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	mult := int64(1)
	for _, sf := range []struct {
		s string
		m int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1000}, {"MB", 1000000}, {"GB", 1000000000}, {"K", 1 << 10}, {"k", 1 << 10}, {"M", 1 << 20}, {"m", 1 << 20}, {"G", 1 << 30}, {"g", 1 << 30}, {"b", 512}} {
		if strings.HasSuffix(s, sf.s) {
			mult = sf.m
			s = strings.TrimSuffix(s, sf.s)
			break
		}
	}
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return 0, false
	}
	return n * mult, true
}

func cmdTruncate(c *cmd) int {
	opts, args, ok := c.flags("co", "sr", "OPTION... FILE...")
	if !ok {
		return 1
	}
	sz, has := opts['s']
	if !has {
		c.errf("you must specify either '--size' or '--reference'")
		fmt.Fprintf(c.errw, "Try 'truncate --help' for more information.\n")
		return 1
	}
	if len(args) == 0 {
		c.errf("missing file operand")
		fmt.Fprintf(c.errw, "Try 'truncate --help' for more information.\n")
		return 1
	}
	n, ok := parseSize(sz)
	if !ok {
		c.errf("Invalid number: '%s'", sz)
		return 1
	}
	st := 0
	for _, a := range args {
		flags := vfs.O_WRONLY | vfs.O_CREAT
		if opts['c'] != "" {
			flags = vfs.O_WRONLY
		}
		f, err := c.open(a, flags, 0o644)
		if err != nil {
			if e, ok := errno.Of(err); ok && e == errno.ENOENT && opts['c'] != "" {
				continue
			}
			c.errf("cannot open '%s' for writing: %s", a, strerror(err))
			st = 1
			continue
		}
		_, err = c.sys(fmt.Sprintf("ftruncate(%d, %d)", f.fd, n), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
			return 0, f.p.Ftruncate(t, f.fd, n)
		})
		f.Close()
		if err != nil {
			c.errf("failed to truncate '%s' at %d bytes: %s", a, n, strerror(err))
			st = 1
		}
	}
	return st
}

// --- stat ---

func fileType(mode uint32, size int64) string {
	switch mode & vfs.S_IFMT {
	case vfs.S_IFREG:
		if size == 0 {
			return "regular empty file"
		}
		return "regular file"
	case vfs.S_IFDIR:
		return "directory"
	case vfs.S_IFLNK:
		return "symbolic link"
	case vfs.S_IFCHR:
		return "character special file"
	case vfs.S_IFBLK:
		return "block special file"
	case vfs.S_IFIFO:
		return "fifo"
	case vfs.S_IFSOCK:
		return "socket"
	}
	return "weird file"
}

func cmdStat(c *cmd) int {
	opts, args, ok := c.flags("Ltf", "c", "[OPTION]... FILE...")
	if !ok {
		return 1
	}
	if len(args) == 0 {
		c.errf("missing operand")
		fmt.Fprintf(c.errw, "Try 'stat --help' for more information.\n")
		return 1
	}
	if opts['f'] != "" {
		return c.statFS(args, opts)
	}
	st := 0
	for _, a := range args {
		s, err := c.stat(a, opts['L'] != "")
		if err != nil {
			// coreutils 9.1's stat calls statx(2) and says so.
			c.errf("cannot statx '%s': %s", a, strerror(err))
			st = 1
			continue
		}
		if f, ok := opts['c']; ok {
			fmt.Fprintln(c.out, c.statFormat(f, a, s))
			continue
		}
		name := a
		if s.Mode&vfs.S_IFMT == vfs.S_IFLNK {
			if t, err := c.readlink(a); err == nil {
				name = fmt.Sprintf("%s -> %s", a, t)
			}
		}
		fmt.Fprintf(c.out, "  File: %s\n", name)
		fmt.Fprintf(c.out, "  Size: %-15d Blocks: %-10d IO Block: %-6d %s\n", s.Size, s.Blocks, s.Blksize, fileType(s.Mode, s.Size))
		if m := s.Mode & vfs.S_IFMT; m == vfs.S_IFCHR || m == vfs.S_IFBLK {
			fmt.Fprintf(c.out, "Device: %d,%d\tInode: %-11d Links: %-5d Device type: %d,%d\n", s.Dev>>8, s.Dev&0xff, s.Ino, s.Nlink, vfs.MAJOR(s.Rdev), vfs.MINOR(s.Rdev))
		} else {
			fmt.Fprintf(c.out, "Device: %d,%d\tInode: %-11d Links: %d\n", s.Dev>>8, s.Dev&0xff, s.Ino, s.Nlink)
		}
		fmt.Fprintf(c.out, "Access: (%04o/%s)  Uid: (%5d/%8s)   Gid: (%5d/%8s)\n", s.Mode&0o7777, modeString(s.Mode), s.UID, userName(s.UID), s.GID, groupName(s.GID))
		const layout = "2006-01-02 15:04:05.000000000 -0700"
		fmt.Fprintf(c.out, "Access: %s\nModify: %s\nChange: %s\n Birth: -\n", stamp(s.Atime).Format(layout), stamp(s.Mtime).Format(layout), stamp(s.Ctime).Format(layout))
	}
	return st
}

func (c *cmd) statFormat(f, name string, s vfs.Stat) string {
	return expandStatFormat(f, func(b *strings.Builder, ch byte) bool {
		switch ch {
		case 'n':
			b.WriteString(name)
		case 'N':
			b.WriteString("'" + name + "'")
			if s.Mode&vfs.S_IFMT == vfs.S_IFLNK {
				if t, err := c.readlink(name); err == nil {
					b.WriteString(" -> '" + t + "'")
				}
			}
		case 's':
			fmt.Fprint(b, s.Size)
		case 'i':
			fmt.Fprint(b, s.Ino)
		case 'h':
			fmt.Fprint(b, s.Nlink)
		case 'F':
			b.WriteString(fileType(s.Mode, s.Size))
		case 'a':
			fmt.Fprintf(b, "%o", s.Mode&0o7777)
		case 'A':
			b.WriteString(modeString(s.Mode))
		case 'f':
			fmt.Fprintf(b, "%x", s.Mode)
		case 'u':
			fmt.Fprint(b, s.UID)
		case 'g':
			fmt.Fprint(b, s.GID)
		case 'U':
			b.WriteString(userName(s.UID))
		case 'G':
			b.WriteString(groupName(s.GID))
		case 'b':
			fmt.Fprint(b, s.Blocks)
		case 'B':
			b.WriteString("512")
		case 'o':
			fmt.Fprint(b, s.Blksize)
		case 'd':
			fmt.Fprint(b, s.Dev)
		case 'D':
			fmt.Fprintf(b, "%x", s.Dev)
		case 't':
			fmt.Fprintf(b, "%x", vfs.MAJOR(s.Rdev))
		case 'T':
			fmt.Fprintf(b, "%x", vfs.MINOR(s.Rdev))
		case 'X':
			fmt.Fprint(b, stamp(s.Atime).Unix())
		case 'Y':
			fmt.Fprint(b, stamp(s.Mtime).Unix())
		case 'Z':
			fmt.Fprint(b, stamp(s.Ctime).Unix())
		case 'x', 'y', 'z':
			ts := map[byte]int64{'x': s.Atime, 'y': s.Mtime, 'z': s.Ctime}[ch]
			b.WriteString(stamp(ts).Format("2006-01-02 15:04:05.000000000 -0700"))
		case 'W':
			// The birth time is not modelled: stat(1) prints 0.
			b.WriteString("0")
		case 'w':
			b.WriteString("-")
		default:
			return false
		}
		return true
	})
}

// expandStatFormat is stat(1)'s reading of a --format string (print_it):
// text is copied, each %X goes to directive, which writes it and says
// whether it knows X; %% is a percent sign and an unknown directive
// prints '?'.
func expandStatFormat(f string, directive func(b *strings.Builder, ch byte) bool) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		if f[i] == '%' {
			b.WriteByte('%')
		} else if !directive(&b, f[i]) {
			b.WriteByte('?')
		}
	}
	return b.String()
}

// --- mv, cp ---

// sourceTargets pairs each SOURCE of mv or cp with where it goes: into
// DEST when DEST is a directory, else DEST itself, which several sources
// cannot share ("target '...' is not a directory").
func (c *cmd) sourceTargets(args []string) ([][2]string, bool) {
	dst := args[len(args)-1]
	srcs := args[:len(args)-1]
	ds, derr := c.stat(dst, true)
	dstDir := derr == nil && ds.Mode&vfs.S_IFMT == vfs.S_IFDIR
	if len(srcs) > 1 && !dstDir {
		c.errf("target '%s' is not a directory", dst)
		return nil, false
	}
	pairs := make([][2]string, 0, len(srcs))
	for _, src := range srcs {
		to := dst
		if dstDir {
			to = path.Join(dst, path.Base(src))
		}
		pairs = append(pairs, [2]string{src, to})
	}
	return pairs, true
}

func cmdMv(c *cmd) int {
	_, args, ok := c.flags("fivnT", "", "[OPTION]... SOURCE... DIRECTORY")
	if !ok {
		return 1
	}
	if !c.twoOperands(args, "mv") {
		return 1
	}
	pairs, ok := c.sourceTargets(args)
	if !ok {
		return 1
	}
	st := 0
	for _, pair := range pairs {
		src, to := pair[0], pair[1]
		sp, tp := c.abs(src), c.abs(to)
		// coreutils' same_file_ok: a source and destination that are
		// one file (hard links, or one name spelled twice, or two
		// spellings of a name in a casefolded directory) are refused
		// before any rename.
		if ss, err := c.stat(src, false); err == nil {
			if ts, err := c.stat(to, false); err == nil && ss.Dev == ts.Dev && ss.Ino == ts.Ino {
				c.errf("'%s' and '%s' are the same file", src, to)
				st = 1
				continue
			}
		}
		_, err := c.sys(fmt.Sprintf("renameat2(%q, %q, 0)", sp, tp), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
			return 0, pr.Rename(t, sp, tp, 0)
		})
		if e, ok := errno.Of(err); ok && e == errno.EXDEV {
			// coreutils' mv: a rename across filesystems (or into a
			// directory with another encryption policy) is a copy and an
			// unlink of the source.
			c.remove(to, true, false)
			if err := c.copyTree(src, to, true, "mv"); err != nil {
				st = 1
				continue
			}
			if err := c.remove(src, true, false); err != nil {
				c.errf("cannot remove '%s': %s", src, strerror(err))
				st = 1
			}
			continue
		}
		if err != nil {
			// coreutils' copy_internal: after a failed rename the source
			// is looked at (follow_fstatat), and a source that is not
			// there is "cannot stat", not "cannot move".
			if _, serr := c.stat(src, false); serr != nil {
				c.errf("cannot stat '%s': %s", src, strerror(serr))
			} else if e, ok := errno.Of(err); ok && e == errno.EINVAL {
				// copy_internal's reading of rename(2)'s EINVAL.
				c.errf("cannot move '%s' to a subdirectory of itself, '%s'", src, to)
			} else {
				c.errf("cannot move '%s' to '%s': %s", src, to, strerror(err))
			}
			st = 1
		}
	}
	return st
}

// copyTree copies src to dst (directories with rec), printing cp's errors.
func (c *cmd) copyTree(src, dst string, rec bool, who string) error {
	s, err := c.stat(src, false)
	if err != nil {
		fmt.Fprintf(c.errw, "%s: cannot stat '%s': %s\n", who, src, strerror(err))
		return err
	}
	switch s.Mode & vfs.S_IFMT {
	case vfs.S_IFDIR:
		if !rec {
			fmt.Fprintf(c.errw, "%s: -r not specified; omitting directory '%s'\n", who, src)
			return errno.EISDIR
		}
		if err := c.mkdir(dst, s.Mode&0o7777); err != nil {
			if e, ok := errno.Of(err); !ok || e != errno.EEXIST {
				fmt.Fprintf(c.errw, "%s: cannot create directory '%s': %s\n", who, dst, strerror(err))
				return err
			}
		}
		ents, err := c.m.readDir(c.errw, c.id, c.name, c.abs(src))
		if err != nil {
			fmt.Fprintf(c.errw, "%s: cannot access '%s': %s\n", who, src, strerror(err))
			return err
		}
		var first error
		for _, e := range ents {
			if e.Name == "." || e.Name == ".." {
				continue
			}
			if err := c.copyTree(path.Join(src, e.Name), path.Join(dst, e.Name), rec, who); err != nil && first == nil {
				first = err
			}
		}
		return first
	case vfs.S_IFLNK:
		t, err := c.readlink(src)
		if err != nil {
			fmt.Fprintf(c.errw, "%s: cannot read symbolic link '%s': %s\n", who, src, strerror(err))
			return err
		}
		dp := c.abs(dst)
		if _, err := c.sys(fmt.Sprintf("symlink(%q, %q)", t, dp), func(tk *kernel.Task, pr *vfs.Proc) (int64, error) {
			return 0, pr.Symlink(tk, t, dp)
		}); err != nil {
			fmt.Fprintf(c.errw, "%s: cannot create symbolic link '%s': %s\n", who, dst, strerror(err))
			return err
		}
		return nil
	}
	in, err := c.open(src, vfs.O_RDONLY, 0)
	if err != nil {
		fmt.Fprintf(c.errw, "%s: cannot open '%s' for reading: %s\n", who, src, strerror(err))
		return err
	}
	defer in.Close()
	out, err := c.open(dst, vfs.O_WRONLY|vfs.O_CREAT|vfs.O_TRUNC, s.Mode&0o7777)
	if err != nil {
		fmt.Fprintf(c.errw, "%s: cannot create regular file '%s': %s\n", who, dst, strerror(err))
		return err
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		fmt.Fprintf(c.errw, "%s: error copying '%s' to '%s': %s\n", who, src, dst, strerror(err))
		return err
	}
	return nil
}

func cmdCp(c *cmd) int {
	opts, args, ok := c.flags("rRafpvdL", "", "[OPTION]... SOURCE... DIRECTORY")
	if !ok {
		return 1
	}
	if !c.twoOperands(args, "cp") {
		return 1
	}
	rec := opts['r'] != "" || opts['R'] != "" || opts['a'] != ""
	pairs, ok := c.sourceTargets(args)
	if !ok {
		return 1
	}
	st := 0
	for _, pair := range pairs {
		src, to := pair[0], pair[1]
		if err := c.copyTree(src, to, rec, "cp"); err != nil {
			st = 1
		}
	}
	return st
}

// --- chattr, lsattr ---

// attrLetters are e2fsprogs' flag letters in lsattr's order (lib/e2p/pf.c)
// with the FS_*_FL bits.
var attrLetters = []struct {
	bit  uint32
	ch   byte
	long string // lsattr -l's name (lib/e2p/pf.c flags_array)
}{
	{0x1, 's', "Secure_Deletion"}, {0x2, 'u', "Undelete"}, {0x8, 'S', "Synchronous_Updates"},
	{0x10000, 'D', "Synchronous_Directory_Updates"}, {0x10, 'i', "Immutable"}, {0x20, 'a', "Append_Only"},
	{0x40, 'd', "No_Dump"}, {0x80, 'A', "No_Atime"}, {0x4, 'c', "Compression_Requested"},
	{vfs.FS_ENCRYPT_FL, 'E', "Encrypted"}, {0x4000, 'j', "Journaled_Data"}, {vfs.FS_INDEX_FL, 'I', "Indexed_directory"},
	{0x8000, 't', "No_Tailmerging"}, {0x20000, 'T', "Top_of_Directory_Hierarchies"}, {0x80000, 'e', "Extents"},
	{0x800000, 'C', "No_COW"}, {0x2000000, 'x', "DAX"}, {vfs.FS_CASEFOLD_FL, 'F', "Casefold"},
	{vfs.FS_INLINE_DATA_FL, 'N', "Inline_Data"}, {0x20000000, 'P', "Project_Hierarchy"}, {0x100000, 'V', "Verity"},
	{0x400, 'm', "Dont_Compress"},
}

func (c *cmd) getflags(p string) (uint32, error) {
	f, err := c.open(p, vfs.O_RDONLY, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var v uint32
	_, err = c.sys(fmt.Sprintf("ioctl(%d, FS_IOC_GETFLAGS)", f.fd), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
		n, err := f.p.Ioctl(t, f.fd, vfs.FS_IOC_GETFLAGS, &v)
		return int64(n), err
	})
	return v, err
}

func cmdChattr(c *cmd) int {
	if len(c.args) < 2 {
		fmt.Fprintf(c.errw, "Usage: chattr [-RVf] [-+=aAcCdDeijPsStTuFx] [-p project] [-v version] files...\n")
		return 1
	}
	mode := c.args[0]
	if len(mode) < 2 || (mode[0] != '+' && mode[0] != '-' && mode[0] != '=') {
		fmt.Fprintf(c.errw, "Usage: chattr [-RVf] [-+=aAcCdDeijPsStTuFx] [-p project] [-v version] files...\n")
		return 1
	}
	var bits uint32
	for _, ch := range []byte(mode[1:]) {
		found := false
		for _, l := range attrLetters {
			if l.ch == ch {
				bits |= l.bit
				found = true
			}
		}
		if !found {
			fmt.Fprintf(c.errw, "chattr: bad attribute in %s\n", mode)
			fmt.Fprintf(c.errw, "Usage: chattr [-RVf] [-+=aAcCdDeijPsStTuFx] [-p project] [-v version] files...\n")
			return 1
		}
	}
	st := 0
	for _, a := range c.args[1:] {
		f, err := c.open(a, vfs.O_RDONLY, 0)
		if err != nil {
			c.errf("%s while trying to stat %s", strerror(err), a)
			st = 1
			continue
		}
		var v uint32
		_, err = c.sys(fmt.Sprintf("ioctl(%d, FS_IOC_GETFLAGS)", f.fd), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
			n, err := f.p.Ioctl(t, f.fd, vfs.FS_IOC_GETFLAGS, &v)
			return int64(n), err
		})
		if err == nil {
			switch mode[0] {
			case '+':
				v |= bits
			case '-':
				v &^= bits
			case '=':
				v = bits
			}
			_, err = c.sys(fmt.Sprintf("ioctl(%d, FS_IOC_SETFLAGS, %#x)", f.fd, v), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
				n, err := f.p.Ioctl(t, f.fd, vfs.FS_IOC_SETFLAGS, &v)
				return int64(n), err
			})
			if err != nil {
				c.errf("%s while setting flags on %s", strerror(err), a)
				st = 1
			}
		} else {
			c.errf("%s while reading flags on %s", strerror(err), a)
			st = 1
		}
		f.Close()
	}
	return st
}

func cmdLsattr(c *cmd) int {
	opts, args, ok := c.flags("adRVlpv", "", "")
	if !ok {
		return 1
	}
	if len(args) == 0 {
		args = []string{"."}
	}
	st := 0
	show := func(p string) {
		v, err := c.getflags(p)
		if err != nil {
			c.errf("%s While reading flags on %s", strerror(err), p)
			st = 1
			return
		}
		if opts['l'] != "" {
			// print_flags with PFOPT_LONG: the names joined by ", ",
			// "---" for none, after the path padded to 28 columns.
			var names []string
			for _, l := range attrLetters {
				if v&l.bit != 0 {
					names = append(names, l.long)
				}
			}
			if len(names) == 0 {
				names = []string{"---"}
			}
			fmt.Fprintf(c.out, "%-28s %s\n", p, strings.Join(names, ", "))
			return
		}
		b := make([]byte, len(attrLetters))
		for i, l := range attrLetters {
			b[i] = '-'
			if v&l.bit != 0 {
				b[i] = l.ch
			}
		}
		fmt.Fprintf(c.out, "%s %s\n", b, p)
	}
	for _, a := range args {
		s, err := c.stat(a, true)
		if err != nil {
			c.errf("%s while trying to stat %s", strerror(err), a)
			st = 1
			continue
		}
		if s.Mode&vfs.S_IFMT != vfs.S_IFDIR || opts['d'] != "" {
			show(a)
			continue
		}
		ents, err := c.m.readDir(c.errw, c.id, c.name, c.abs(a))
		if err != nil {
			c.errf("%s While reading flags on %s", strerror(err), a)
			st = 1
			continue
		}
		var names []string
		for _, e := range ents {
			if strings.HasPrefix(e.Name, ".") && opts['a'] == "" {
				continue
			}
			names = append(names, e.Name)
		}
		sort.Strings(names)
		for _, n := range names {
			show(path.Join(a, n))
		}
	}
	return st
}

// cmdFind is find(1) with the tests scenarios use: -type f|d|l, -name
// PATTERN, -maxdepth N, -print.
func cmdFind(c *cmd) int {
	var roots []string
	i := 0
	for ; i < len(c.args) && !strings.HasPrefix(c.args[i], "-"); i++ {
		roots = append(roots, c.args[i])
	}
	if len(roots) == 0 {
		roots = []string{"."}
	}
	typ, name, minDepth, maxDepth := byte(0), "", 0, -1
	for ; i < len(c.args); i++ {
		a := c.args[i]
		if a == "-print" {
			continue
		}
		if i+1 >= len(c.args) {
			c.errf("missing argument to `%s'", a)
			return 1
		}
		v := c.args[i+1]
		i++
		switch a {
		case "-type":
			typ = v[0]
		case "-name":
			name = v
		case "-maxdepth", "-mindepth":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				c.errf("Expected a positive decimal integer argument to %s, but got `%s'", a, v)
				return 1
			}
			if a == "-maxdepth" {
				maxDepth = n
			} else {
				minDepth = n
			}
		default:
			c.errf("unknown predicate `%s'", a)
			return 1
		}
	}
	st := 0
	var walk func(p string, depth int)
	walk = func(p string, depth int) {
		s, err := c.stat(p, false)
		if err != nil {
			c.errf("'%s': %s", p, strerror(err))
			st = 1
			return
		}
		t := map[uint32]byte{vfs.S_IFREG: 'f', vfs.S_IFDIR: 'd', vfs.S_IFLNK: 'l'}[s.Mode&vfs.S_IFMT]
		ok := (typ == 0 || typ == t) && depth >= minDepth
		if ok && name != "" {
			ok, _ = path.Match(name, path.Base(p))
		}
		if ok {
			fmt.Fprintln(c.out, p)
		}
		if t != 'd' || (maxDepth >= 0 && depth >= maxDepth) {
			return
		}
		ents, err := c.m.readDir(c.errw, c.id, c.name, c.abs(p))
		if err != nil {
			c.errf("'%s': %s", p, strerror(err))
			st = 1
			return
		}
		for _, e := range ents {
			if e.Name == "." || e.Name == ".." {
				continue
			}
			walk(strings.TrimSuffix(p, "/")+"/"+e.Name, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	return st
}

// cmdCmp is cmp(1): status 0 when the files are the same, 1 when they
// differ (with the first difference), 2 on trouble.
