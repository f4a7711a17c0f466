package shell

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// coreutils are the GNU coreutils the scenarios use, with their options,
// messages and exit statuses.
var coreutils = map[string]func(c *cmd) int{
	"ls": cmdLs, "cat": cmdCat, "mkdir": cmdMkdir, "rmdir": cmdRmdir, "rm": cmdRm,
	"mv": cmdMv, "ln": cmdLn, "touch": cmdTouch, "stat": cmdStat, "readlink": cmdReadlink,
	"truncate": cmdTruncate, "head": cmdHead, "tail": cmdTail, "cp": cmdCp, "dd": cmdDd,
	"md5sum": cmdMd5sum, "sha256sum": cmdSha256sum, "wc": cmdWc, "diff": cmdDiff,
	"sort": cmdSort, "uniq": cmdUniq, "tr": cmdTr, "cut": cmdCut, "seq": cmdSeq,
	"grep": cmdGrep, "egrep": cmdEgrep, "sed": cmdSed, "awk": cmdAwk, "od": cmdOd,
	"chattr": cmdChattr, "lsattr": cmdLsattr, "tee": cmdTee, "xxd": cmdXxd, "find": cmdFind, "cmp": cmdCmp,
	"echo": cmdEcho, "true": func(*cmd) int { return 0 }, "false": func(*cmd) int { return 1 },
}

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
		var blocks int64
		for _, e := range list {
			blocks += e.st.Blocks / 2
		}
		fmt.Fprintf(c.out, "total %d\n", blocks)
	}
	c.lsPrint(list, opts)
	st := 0
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

func (c *cmd) lsPrint(list []lsEntry, opts map[byte]string) {
	inoW, linkW, sizeW := 0, 0, 0
	for _, e := range list {
		inoW = max(inoW, len(strconv.FormatUint(e.st.Ino, 10)))
		linkW = max(linkW, len(strconv.FormatUint(uint64(e.st.Nlink), 10)))
		sizeW = max(sizeW, len(strconv.FormatInt(e.st.Size, 10)))
	}
	for _, e := range list {
		var b strings.Builder
		if opts['i'] != "" {
			fmt.Fprintf(&b, "%*d ", inoW, e.st.Ino)
		}
		if opts['l'] != "" {
			fmt.Fprintf(&b, "%s %*d %s %s %*d %s ", modeString(e.st.Mode), linkW, e.st.Nlink, userName(e.st.UID), groupName(e.st.GID), sizeW, e.st.Size, stamp(e.st.Mtime).Format("Jan _2 15:04"))
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

// --- cat, head, tail, tee ---

func cmdCat(c *cmd) int {
	_, args, ok := c.flags("uv", "", "[OPTION]... [FILE]...")
	if !ok {
		return 1
	}
	if len(args) == 0 {
		args = []string{"-"}
	}
	st := 0
	for _, a := range args {
		if err := c.copyOut(a); err != nil {
			c.errf("%s: %s", a, strerror(err))
			st = 1
		}
	}
	return st
}

// copyOut streams a file to standard output.
func (c *cmd) copyOut(a string) error {
	if a == "-" {
		_, err := io.Copy(c.out, c.in)
		return err
	}
	if s, err := c.stat(a, true); err == nil && s.Mode&vfs.S_IFMT == vfs.S_IFDIR {
		return errno.EISDIR
	}
	data, err := c.readAll(a)
	c.out.Write(data)
	return err
}

func (c *cmd) inputs(args []string) ([][]byte, []string, int) {
	if len(args) == 0 {
		args = []string{"-"}
	}
	var out [][]byte
	var names []string
	st := 0
	for _, a := range args {
		data, err := c.readAll(a)
		if err != nil {
			c.errf("%s: %s", a, strerror(err))
			st = 2
			continue
		}
		out = append(out, data)
		names = append(names, a)
	}
	return out, names, st
}

func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	s := string(data)
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

// headInputs is inputs for head: /dev/zero, endless, gives the bytes
// `head -c N` asks for (N >= 0) instead of being read to its end.
func (c *cmd) headInputs(args []string, opts map[byte]string) ([][]byte, []string, int) {
	n, err := strconv.Atoi(opts['c'])
	if err != nil || n < 0 || len(args) != 1 || c.abs(args[0]) != "/dev/zero" {
		return c.inputs(args)
	}
	return [][]byte{make([]byte, n)}, args, 0
}

func cmdHead(c *cmd) int {
	c.args = obsoleteCount(c.args)
	opts, args, ok := c.flags("qv", "nc", "[OPTION]... [FILE]...")
	if !ok {
		return 1
	}
	datas, _, st := c.headInputs(args, opts)
	for _, d := range datas {
		if v, ok := opts['c']; ok {
			n, _ := strconv.Atoi(v)
			if n < 0 {
				n = max(0, len(d)+n)
			}
			c.out.Write(d[:min(n, len(d))])
			continue
		}
		n := 10
		if v, ok := opts['n']; ok {
			n, _ = strconv.Atoi(v)
		}
		lines := strings.SplitAfter(string(d), "\n")
		if n < 0 {
			n = max(0, len(lines)-1+n)
		}
		for i := 0; i < n && i < len(lines); i++ {
			io.WriteString(c.out, lines[i])
		}
	}
	return min(st, 1)
}

func cmdTail(c *cmd) int {
	c.args = obsoleteCount(c.args)
	opts, args, ok := c.flags("qvf", "nc", "[OPTION]... [FILE]...")
	if !ok {
		return 1
	}
	datas, _, st := c.inputs(args)
	for _, d := range datas {
		if v, ok := opts['c']; ok {
			if strings.HasPrefix(v, "+") {
				n, _ := strconv.Atoi(v[1:])
				c.out.Write(d[min(max(n-1, 0), len(d)):])
				continue
			}
			n, _ := strconv.Atoi(v)
			c.out.Write(d[max(0, len(d)-n):])
			continue
		}
		lines := strings.SplitAfter(string(d), "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		v := opts['n']
		if v == "" {
			v = "10"
		}
		if strings.HasPrefix(v, "+") {
			n, _ := strconv.Atoi(v[1:])
			for i := max(n-1, 0); i < len(lines); i++ {
				io.WriteString(c.out, lines[i])
			}
			continue
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(v, "-"))
		for i := max(0, len(lines)-n); i < len(lines); i++ {
			io.WriteString(c.out, lines[i])
		}
	}
	return min(st, 1)
}

func cmdTee(c *cmd) int {
	opts, args, ok := c.flags("ai", "", "[OPTION]... [FILE]...")
	if !ok {
		return 1
	}
	data, _ := io.ReadAll(c.in)
	c.out.Write(data)
	st := 0
	flags := vfs.O_WRONLY | vfs.O_CREAT | vfs.O_TRUNC
	if opts['a'] != "" {
		flags = vfs.O_WRONLY | vfs.O_CREAT | vfs.O_APPEND
	}
	for _, a := range args {
		if err := c.writeFile(a, data, flags); err != nil {
			c.errf("%s: %s", a, strerror(err))
			st = 1
		}
	}
	return st
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
		// (utimensat with UTIME_NOW); a directory is EISDIR to the
		// open, and only the times change.
		f, err := c.open(a, vfs.O_WRONLY|vfs.O_CREAT, 0o644)
		if err != nil {
			if e, ok := errno.Of(err); !ok || e != errno.EISDIR {
				c.errf("cannot touch '%s': %s", a, strerror(err))
				st = 1
				continue
			}
		} else {
			f.Close()
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
		c.errf("failed to create hard link '%s' => '%s': %s", link, target, strerror(err))
		return 1
	}
	if opts['v'] != "" {
		fmt.Fprintf(c.out, "'%s' => '%s'\n", link, target)
	}
	return 0
}

func cmdReadlink(c *cmd) int {
	opts, args, ok := c.flags("fenqsv", "", "[OPTION]... FILE...")
	if !ok {
		return 1
	}
	if len(args) == 0 {
		c.errf("missing operand")
		return 1
	}
	st := 0
	for _, a := range args {
		if opts['f'] != "" || opts['e'] != "" {
			fmt.Fprintln(c.out, c.abs(a))
			continue
		}
		t, err := c.readlink(a)
		if err != nil {
			if opts['v'] != "" {
				c.errf("%s: %s", a, strerror(err))
			}
			st = 1
			continue
		}
		if opts['n'] != "" {
			io.WriteString(c.out, t)
		} else {
			fmt.Fprintln(c.out, t)
		}
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
	opts, args, ok := c.flags("Lt", "c", "[OPTION]... FILE...")
	if !ok {
		return 1
	}
	if len(args) == 0 {
		c.errf("missing operand")
		fmt.Fprintf(c.errw, "Try 'stat --help' for more information.\n")
		return 1
	}
	st := 0
	for _, a := range args {
		s, err := c.stat(a, opts['L'] != "")
		if err != nil {
			c.errf("cannot stat '%s': %s", a, strerror(err))
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
		fmt.Fprintf(c.out, "Device: %d,%d\tInode: %-11d Links: %d\n", s.Dev>>8, s.Dev&0xff, s.Ino, s.Nlink)
		fmt.Fprintf(c.out, "Access: (%04o/%s)  Uid: (%5d/%8s)   Gid: (%5d/%8s)\n", s.Mode&0o7777, modeString(s.Mode), s.UID, userName(s.UID), s.GID, groupName(s.GID))
		const layout = "2006-01-02 15:04:05.000000000 -0700"
		fmt.Fprintf(c.out, "Access: %s\nModify: %s\nChange: %s\n Birth: -\n", stamp(s.Atime).Format(layout), stamp(s.Mtime).Format(layout), stamp(s.Ctime).Format(layout))
	}
	return st
}

func (c *cmd) statFormat(f, name string, s vfs.Stat) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		switch f[i] {
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
			fmt.Fprint(&b, s.Size)
		case 'i':
			fmt.Fprint(&b, s.Ino)
		case 'h':
			fmt.Fprint(&b, s.Nlink)
		case 'F':
			b.WriteString(fileType(s.Mode, s.Size))
		case 'a':
			fmt.Fprintf(&b, "%o", s.Mode&0o7777)
		case 'A':
			b.WriteString(modeString(s.Mode))
		case 'f':
			fmt.Fprintf(&b, "%x", s.Mode)
		case 'u':
			fmt.Fprint(&b, s.UID)
		case 'g':
			fmt.Fprint(&b, s.GID)
		case 'U':
			b.WriteString(userName(s.UID))
		case 'G':
			b.WriteString(groupName(s.GID))
		case 'b':
			fmt.Fprint(&b, s.Blocks)
		case 'B':
			b.WriteString("512")
		case 'o':
			fmt.Fprint(&b, s.Blksize)
		case 'd':
			fmt.Fprint(&b, s.Dev)
		case 'D':
			fmt.Fprintf(&b, "%x", s.Dev)
		case 'X':
			fmt.Fprint(&b, stamp(s.Atime).Unix())
		case 'Y':
			fmt.Fprint(&b, stamp(s.Mtime).Unix())
		case 'Z':
			fmt.Fprint(&b, stamp(s.Ctime).Unix())
		case 'x', 'y', 'z':
			ts := map[byte]int64{'x': s.Atime, 'y': s.Mtime, 'z': s.Ctime}[f[i]]
			b.WriteString(stamp(ts).Format("2006-01-02 15:04:05.000000000 -0700"))
		case 'W':
			// The birth time is not modelled: stat(1) prints 0.
			b.WriteString("0")
		case 'w':
			b.WriteString("-")
		case '%':
			b.WriteByte('%')
		default:
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
			c.errf("cannot move '%s' to '%s': %s", src, to, strerror(err))
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

// --- dd ---

func cmdDd(c *cmd) int {
	ifile, ofile := "", ""
	bs, ibs, obs := int64(512), int64(0), int64(0)
	count, skip, seek := int64(-1), int64(0), int64(0)
	var conv, oflag []string
	status := ""
	for _, a := range c.args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			c.errf("unrecognized operand '%s'", a)
			fmt.Fprintf(c.errw, "Try 'dd --help' for more information.\n")
			return 1
		}
		num := func() int64 {
			n, ok := parseSize(v)
			if !ok {
				c.errf("invalid number: '%s'", v)
				return -2
			}
			return n
		}
		switch k {
		case "if":
			ifile = v
		case "of":
			ofile = v
		case "bs":
			bs = num()
		case "ibs":
			ibs = num()
		case "obs":
			obs = num()
		case "count":
			count = num()
		case "skip":
			skip = num()
		case "seek":
			seek = num()
		case "conv":
			conv = strings.Split(v, ",")
		case "oflag", "iflag":
			oflag = append(oflag, strings.Split(v, ",")...)
		case "status":
			status = v
		default:
			c.errf("unrecognized operand '%s'", a)
			fmt.Fprintf(c.errw, "Try 'dd --help' for more information.\n")
			return 1
		}
		if bs == -2 || count == -2 || skip == -2 || seek == -2 || ibs == -2 || obs == -2 {
			return 1
		}
	}
	_ = ibs
	_ = obs
	_ = oflag
	has := func(s string) bool {
		for _, x := range conv {
			if x == s {
				return true
			}
		}
		return false
	}
	var in io.Reader = c.in
	var inf *vfsFile
	if ifile != "" {
		switch c.abs(ifile) {
		case "/dev/zero":
			in = zeroFile{}
		case "/dev/urandom", "/dev/random":
			in = c.m.urandom()
		case "/dev/null":
			in = nullFile{}
		default:
			if bdev := c.m.device(c.abs(ifile)); bdev != nil {
				in = io.NewSectionReader(&devFile{bdev: bdev}, skip*bs, 1<<62)
				break
			}
			f, err := c.open(ifile, vfs.O_RDONLY, 0)
			if err != nil {
				c.errf("failed to open '%s': %s", ifile, strerror(err))
				return 1
			}
			defer f.Close()
			in, inf = f, f
		}
	}
	var out io.Writer = c.out
	var outf *vfsFile
	if bdev := c.m.device(c.abs(ofile)); ofile != "" && bdev != nil {
		// A block device: written in place at seek*bs, never truncated.
		out = io.NewOffsetWriter(&devFile{bdev: bdev}, seek*bs)
	} else if ofile != "" && c.abs(ofile) != "/dev/null" {
		flags := vfs.O_WRONLY | vfs.O_CREAT
		if !has("notrunc") && seek == 0 {
			flags |= vfs.O_TRUNC
		}
		f, err := c.open(ofile, flags, 0o644)
		if err != nil {
			c.errf("failed to open '%s': %s", ofile, strerror(err))
			return 1
		}
		defer f.Close()
		out, outf = f, f
	} else if ofile != "" {
		out = io.Discard
	}
	buf := make([]byte, bs)
	var inPos, outPos int64 = skip * bs, seek * bs
	var full, partial, total int64
	for count < 0 || full+partial < count {
		var n int
		var err error
		if inf != nil {
			var n64 int64
			n64, err = c.sys(fmt.Sprintf("pread64(%d, %d, %d)", inf.fd, bs, inPos), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
				n, err := inf.p.Pread(t, inf.fd, buf, inPos)
				return int64(n), err
			})
			n = int(n64)
		} else {
			n, err = io.ReadFull(in, buf)
			if err == io.ErrUnexpectedEOF || err == io.EOF {
				err = nil
			}
		}
		if err != nil {
			c.errf("error reading '%s': %s", ifile, strerror(err))
			return 1
		}
		if n == 0 {
			break
		}
		inPos += int64(n)
		if int64(n) == bs {
			full++
		} else {
			partial++
		}
		if outf != nil {
			_, err = c.sys(fmt.Sprintf("pwrite64(%d, %d, %d)", outf.fd, n, outPos), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
				n, err := outf.p.Pwrite(t, outf.fd, buf[:n], outPos)
				return int64(n), err
			})
		} else {
			_, err = out.Write(buf[:n])
		}
		if err != nil {
			c.errf("error writing '%s': %s", ofile, strerror(err))
			return 1
		}
		outPos += int64(n)
		total += int64(n)
	}
	if status != "none" {
		fmt.Fprintf(c.errw, "%d+%d records in\n%d+%d records out\n", full, partial, full, partial)
		fmt.Fprintf(c.errw, "%d bytes copied, 0 s, 0 B/s\n", total)
	}
	return 0
}

// detRandom is the machine's /dev/urandom: one xorshift stream per
// machine, started from the seed, so that a script's output does not
// change from run to run.
type detRandom struct {
	mu sync.Mutex
	s  uint64
}

// urandom returns the machine's /dev/urandom stream.
func (m *Machine) urandom() *detRandom {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rnd == nil {
		m.rnd = &detRandom{s: m.seed*0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D}
	}
	return m.rnd
}

func (r *detRandom) Read(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.s == 0 {
		r.s = 0x9E3779B97F4A7C15
	}
	for i := range b {
		r.s ^= r.s << 13
		r.s ^= r.s >> 7
		r.s ^= r.s << 17
		b[i] = byte(r.s)
	}
	return len(b), nil
}

// --- checksums, wc ---

func (c *cmd) sums(h func([]byte) string) int {
	args := c.args
	if len(args) == 0 {
		args = []string{"-"}
	}
	st := 0
	for _, a := range args {
		data, err := c.readAll(a)
		if err != nil {
			c.errf("%s: %s", a, strerror(err))
			st = 1
			continue
		}
		fmt.Fprintf(c.out, "%s  %s\n", h(data), a)
	}
	return st
}

func cmdMd5sum(c *cmd) int {
	return c.sums(func(b []byte) string { s := md5.Sum(b); return hex.EncodeToString(s[:]) })
}

func cmdSha256sum(c *cmd) int {
	return c.sums(func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) })
}

func cmdWc(c *cmd) int {
	opts, args, ok := c.flags("lwcm", "", "[OPTION]... [FILE]...")
	if !ok {
		return 1
	}
	if opts['l'] == "" && opts['w'] == "" && opts['c'] == "" && opts['m'] == "" {
		opts['l'], opts['w'], opts['c'] = "1", "1", "1"
	}
	datas, names, st := c.inputs(args)
	type row struct {
		v    []int
		name string
	}
	var rows []row
	tot := make([]int, 3)
	for i, d := range datas {
		l, w := bytes.Count(d, []byte{'\n'}), len(bytes.Fields(d))
		var v []int
		for j, on := range []bool{opts['l'] != "", opts['w'] != "", opts['c'] != "" || opts['m'] != ""} {
			x := []int{l, w, len(d)}[j]
			tot[j] += x
			if on {
				v = append(v, x)
			}
		}
		name := names[i]
		if name == "-" && len(args) == 0 {
			name = ""
		}
		rows = append(rows, row{v, name})
	}
	if len(datas) > 1 {
		var v []int
		for j, on := range []bool{opts['l'] != "", opts['w'] != "", opts['c'] != "" || opts['m'] != ""} {
			if on {
				v = append(v, tot[j])
			}
		}
		rows = append(rows, row{v, "total"})
	}
	width := 1
	for _, r := range rows {
		for _, x := range r.v {
			width = max(width, len(strconv.Itoa(x)))
		}
	}
	if len(rows) > 0 && len(rows[0].v) > 1 && len(args) == 0 {
		width = max(width, 7)
	}
	for _, r := range rows {
		var parts []string
		for _, x := range r.v {
			if len(r.v) == 1 && len(rows) == 1 {
				parts = append(parts, strconv.Itoa(x))
			} else {
				parts = append(parts, fmt.Sprintf("%*d", width, x))
			}
		}
		line := strings.Join(parts, " ")
		if r.name != "" {
			line += " " + r.name
		}
		fmt.Fprintln(c.out, line)
	}
	return min(st, 1)
}

// --- diff ---

func cmdDiff(c *cmd) int {
	opts, args, ok := c.flags("uqabBwNr", "U", "[OPTION]... FILES")
	if !ok {
		return 2
	}
	if len(args) != 2 {
		if len(args) < 2 {
			c.errf("missing operand after '%s'", strings.Join(args, " "))
		} else {
			c.errf("extra operand '%s'", args[2])
		}
		fmt.Fprintf(c.errw, "diff: Try 'diff --help' for more information.\n")
		return 2
	}
	if opts['r'] != "" {
		return c.diffTree(args[0], args[1], opts, "diff -r")
	}
	return c.diffFiles(args[0], args[1], opts, "")
}

// diffTree is diff -r: two directories compared name by name (symlinks
// followed, as diff does by default), "Only in DIR: NAME" for a name on
// one side, the files' diffs each under a "diff -r A B" line. The status
// is the worst of the comparisons: 0 same, 1 different, 2 trouble.
func (c *cmd) diffTree(a, b string, opts map[byte]string, header string) int {
	sa, err := c.stat(a, true)
	if err != nil {
		c.errf("%s: %s", a, strerror(err))
		return 2
	}
	sb, err := c.stat(b, true)
	if err != nil {
		c.errf("%s: %s", b, strerror(err))
		return 2
	}
	aDir, bDir := sa.Mode&vfs.S_IFMT == vfs.S_IFDIR, sb.Mode&vfs.S_IFMT == vfs.S_IFDIR
	switch {
	case aDir && bDir:
	case aDir || bDir:
		kind := func(dir bool) string {
			if dir {
				return "a directory"
			}
			return "a regular file"
		}
		fmt.Fprintf(c.out, "File %s is %s while file %s is %s\n", a, kind(aDir), b, kind(bDir))
		return 1
	default:
		return c.diffFiles(a, b, opts, header+" "+a+" "+b)
	}
	names := func(dir string) (map[string]bool, bool) {
		ents, err := c.m.readDir(c.errw, c.id, c.name, c.abs(dir))
		if err != nil {
			c.errf("%s: %s", dir, strerror(err))
			return nil, false
		}
		out := map[string]bool{}
		for _, e := range ents {
			if e.Name != "." && e.Name != ".." {
				out[e.Name] = true
			}
		}
		return out, true
	}
	na, okA := names(a)
	nb, okB := names(b)
	if !okA || !okB {
		return 2
	}
	var all []string
	for n := range na {
		all = append(all, n)
	}
	for n := range nb {
		if !na[n] {
			all = append(all, n)
		}
	}
	sort.Strings(all)
	st := 0
	for _, n := range all {
		r := 0
		switch {
		case !nb[n]:
			fmt.Fprintf(c.out, "Only in %s: %s\n", a, n)
			r = 1
		case !na[n]:
			fmt.Fprintf(c.out, "Only in %s: %s\n", b, n)
			r = 1
		default:
			r = c.diffTree(path.Join(a, n), path.Join(b, n), opts, header)
		}
		st = max(st, r)
	}
	return st
}

// diffFiles compares two files (header, when not empty, is printed
// before a difference, as diff -r names each pair).
func (c *cmd) diffFiles(an, bn string, opts map[byte]string, header string) int {
	a, err := c.readAll(an)
	if err != nil {
		c.errf("%s: %s", an, strerror(err))
		return 2
	}
	b, err := c.readAll(bn)
	if err != nil {
		c.errf("%s: %s", bn, strerror(err))
		return 2
	}
	if bytes.Equal(a, b) {
		return 0
	}
	if opts['q'] != "" {
		fmt.Fprintf(c.out, "Files %s and %s differ\n", an, bn)
		return 1
	}
	if header != "" {
		fmt.Fprintln(c.out, header)
	}
	x, y := splitLines(a), splitLines(b)
	if opts['u'] != "" || opts['U'] != "" {
		fmt.Fprintf(c.out, "--- %s\n+++ %s\n", an, bn)
		unifiedDiff(c.out, x, y)
		return 1
	}
	normalDiff(c.out, x, y)
	return 1
}

// lcsEdits returns the edit script between x and y: for each line, ' ',
// '-' or '+'.
type edit struct {
	op   byte
	text string
	i, j int // 1-based line numbers in x and y after the edit
}

func lcsEdits(x, y []string) []edit {
	n, m := len(x), len(y)
	dp := make([][]int, n+1)
	for i := range dp {
		dp[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	var out []edit
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			i, j = i+1, j+1
			out = append(out, edit{' ', x[i-1], i, j})
		case j < m && (i == n || dp[i][j+1] >= dp[i+1][j]):
			j++
			out = append(out, edit{'+', y[j-1], i, j})
		default:
			i++
			out = append(out, edit{'-', x[i-1], i, j})
		}
	}
	return out
}

func rangeStr(a, b int) string {
	if a == b {
		return strconv.Itoa(a)
	}
	return fmt.Sprintf("%d,%d", a, b)
}

func normalDiff(w io.Writer, x, y []string) {
	es := lcsEdits(x, y)
	for k := 0; k < len(es); {
		if es[k].op == ' ' {
			k++
			continue
		}
		start := k
		for k < len(es) && es[k].op != ' ' {
			k++
		}
		var del, add []edit
		for _, e := range es[start:k] {
			if e.op == '-' {
				del = append(del, e)
			} else {
				add = append(add, e)
			}
		}
		prevI, prevJ := 0, 0
		if start > 0 {
			prevI, prevJ = es[start-1].i, es[start-1].j
		}
		switch {
		case len(add) == 0:
			fmt.Fprintf(w, "%sd%d\n", rangeStr(del[0].i, del[len(del)-1].i), prevJ)
		case len(del) == 0:
			fmt.Fprintf(w, "%da%s\n", prevI, rangeStr(add[0].j, add[len(add)-1].j))
		default:
			fmt.Fprintf(w, "%sc%s\n", rangeStr(del[0].i, del[len(del)-1].i), rangeStr(add[0].j, add[len(add)-1].j))
		}
		for _, e := range del {
			fmt.Fprintf(w, "< %s\n", e.text)
		}
		if len(del) > 0 && len(add) > 0 {
			fmt.Fprintln(w, "---")
		}
		for _, e := range add {
			fmt.Fprintf(w, "> %s\n", e.text)
		}
	}
}

func unifiedDiff(w io.Writer, x, y []string) {
	es := lcsEdits(x, y)
	const ctx = 3
	for k := 0; k < len(es); {
		if es[k].op == ' ' {
			k++
			continue
		}
		start := max(0, k-ctx)
		end := k
		for end < len(es) {
			if es[end].op != ' ' {
				end++
				continue
			}
			run := end
			for run < len(es) && es[run].op == ' ' {
				run++
			}
			if run-end > 2*ctx || run == len(es) {
				end = min(end+ctx, len(es))
				break
			}
			end = run
		}
		ai, bj := 1, 1
		if start > 0 {
			ai, bj = es[start-1].i+1, es[start-1].j+1
		}
		na, nb := 0, 0
		for _, e := range es[start:end] {
			if e.op != '+' {
				na++
			}
			if e.op != '-' {
				nb++
			}
		}
		if na == 0 {
			ai--
		}
		if nb == 0 {
			bj--
		}
		fmt.Fprintf(w, "@@ -%d,%d +%d,%d @@\n", ai, na, bj, nb)
		for _, e := range es[start:end] {
			fmt.Fprintf(w, "%c%s\n", e.op, e.text)
		}
		k = end
	}
}

// --- sort, uniq, tr, cut, seq ---

func cmdSort(c *cmd) int {
	opts, args, ok := c.flags("nrufb", "kt", "[OPTION]... [FILE]...")
	if !ok {
		return 2
	}
	datas, _, st := c.inputs(args)
	var lines []string
	for _, d := range datas {
		lines = append(lines, splitLines(d)...)
	}
	key := func(s string) string {
		k, ok := opts['k']
		if !ok {
			return s
		}
		f, _ := strconv.Atoi(strings.Split(k, ",")[0])
		var fields []string
		if sep, ok := opts['t']; ok {
			fields = strings.Split(s, sep)
		} else {
			fields = strings.Fields(s)
		}
		if f >= 1 && f <= len(fields) {
			return strings.Join(fields[f-1:], " ")
		}
		return ""
	}
	less := func(a, b string) bool {
		ka, kb := key(a), key(b)
		if opts['n'] != "" {
			na, _ := strconv.ParseFloat(strings.Fields(ka + " 0")[0], 64)
			nb, _ := strconv.ParseFloat(strings.Fields(kb + " 0")[0], 64)
			if na != nb {
				return na < nb
			}
			return a < b
		}
		if opts['f'] != "" {
			ka, kb = strings.ToUpper(ka), strings.ToUpper(kb)
		}
		if ka != kb {
			return ka < kb
		}
		return a < b
	}
	sort.SliceStable(lines, func(i, j int) bool {
		if opts['r'] != "" {
			return less(lines[j], lines[i])
		}
		return less(lines[i], lines[j])
	})
	prev := ""
	for i, l := range lines {
		if opts['u'] != "" && i > 0 && key(l) == key(prev) {
			continue
		}
		fmt.Fprintln(c.out, l)
		prev = l
	}
	return st
}

func cmdUniq(c *cmd) int {
	opts, args, ok := c.flags("cdu", "", "[OPTION]... [INPUT [OUTPUT]]")
	if !ok {
		return 1
	}
	datas, _, st := c.inputs(args[:min(1, len(args))])
	if len(datas) == 0 {
		return 1
	}
	lines := splitLines(datas[0])
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && lines[j] == lines[i] {
			j++
		}
		n := j - i
		if (opts['d'] == "" || n > 1) && (opts['u'] == "" || n == 1) {
			if opts['c'] != "" {
				fmt.Fprintf(c.out, "%7d %s\n", n, lines[i])
			} else {
				fmt.Fprintln(c.out, lines[i])
			}
		}
		i = j
	}
	return min(st, 1)
}

// trSet expands a tr set: ranges, escapes and [:class:].
func trSet(s string) []byte {
	var out []byte
	classes := map[string]string{
		"[:upper:]": "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "[:lower:]": "abcdefghijklmnopqrstuvwxyz",
		"[:digit:]": "0123456789", "[:space:]": " \t\n\r\v\f", "[:blank:]": " \t",
		"[:alpha:]": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
		"[:alnum:]": "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
	}
	var raw []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '[' {
			if j := strings.Index(s[i:], ":]"); j > 0 {
				if cl, ok := classes[s[i:i+j+2]]; ok {
					raw = append(raw, cl...)
					i += j + 1
					continue
				}
			}
		}
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				raw = append(raw, '\n')
			case 't':
				raw = append(raw, '\t')
			case 'r':
				raw = append(raw, '\r')
			case '0', '1', '2', '3':
				v := 0
				k := i
				for ; k < len(s) && k < i+3 && s[k] >= '0' && s[k] <= '7'; k++ {
					v = v*8 + int(s[k]-'0')
				}
				raw = append(raw, byte(v))
				i = k - 1
			default:
				raw = append(raw, s[i])
			}
			continue
		}
		raw = append(raw, s[i])
	}
	for i := 0; i < len(raw); i++ {
		if i+2 < len(raw) && raw[i+1] == '-' && raw[i+2] >= raw[i] {
			for ch := int(raw[i]); ch <= int(raw[i+2]); ch++ {
				out = append(out, byte(ch))
			}
			i += 2
			continue
		}
		out = append(out, raw[i])
	}
	return out
}

func cmdTr(c *cmd) int {
	opts, args, ok := c.flags("dsc", "", "[OPTION]... SET1 [SET2]")
	if !ok {
		return 1
	}
	if len(args) == 0 || (opts['d'] == "" && opts['s'] == "" && len(args) < 2) {
		if len(args) == 0 {
			c.errf("missing operand")
		} else {
			c.errf("missing operand after '%s'", args[0])
		}
		fmt.Fprintf(c.errw, "Try 'tr --help' for more information.\n")
		return 1
	}
	data, _ := io.ReadAll(c.in)
	s1 := trSet(args[0])
	var in1 [256]bool
	for _, b := range s1 {
		in1[b] = true
	}
	if opts['c'] != "" {
		for i := range in1 {
			in1[i] = !in1[i]
		}
	}
	var out []byte
	switch {
	case opts['d'] != "":
		for _, b := range data {
			if !in1[b] {
				out = append(out, b)
			}
		}
	case opts['s'] != "" && len(args) == 1:
		for i, b := range data {
			if i > 0 && in1[b] && data[i-1] == b {
				continue
			}
			out = append(out, b)
		}
	default:
		s2 := trSet(args[1])
		var m [256]byte
		for i := range m {
			m[i] = byte(i)
		}
		for i, b := range s1 {
			if len(s2) == 0 {
				break
			}
			m[b] = s2[min(i, len(s2)-1)]
		}
		for _, b := range data {
			out = append(out, m[b])
		}
	}
	c.out.Write(out)
	return 0
}

func cmdCut(c *cmd) int {
	opts, args, ok := c.flags("s", "dfcb", "OPTION... [FILE]...")
	if !ok {
		return 1
	}
	list, isField := opts['f']
	if !isField {
		if list, ok = opts['c']; !ok {
			if list, ok = opts['b']; !ok {
				c.errf("you must specify a list of bytes, characters, or fields")
				fmt.Fprintf(c.errw, "Try 'cut --help' for more information.\n")
				return 1
			}
		}
	}
	sel := func(n int) bool {
		for _, part := range strings.Split(list, ",") {
			lo, hi, isRange := strings.Cut(part, "-")
			a, _ := strconv.Atoi(lo)
			if !isRange {
				if a == n {
					return true
				}
				continue
			}
			if lo == "" {
				a = 1
			}
			b := 1 << 30
			if hi != "" {
				b, _ = strconv.Atoi(hi)
			}
			if n >= a && n <= b {
				return true
			}
		}
		return false
	}
	delim := "\t"
	if d, ok := opts['d']; ok {
		delim = d
	}
	datas, _, st := c.inputs(args)
	for _, d := range datas {
		for _, l := range splitLines(d) {
			if !isField {
				var b []byte
				for i := 0; i < len(l); i++ {
					if sel(i + 1) {
						b = append(b, l[i])
					}
				}
				fmt.Fprintln(c.out, string(b))
				continue
			}
			if !strings.Contains(l, delim) {
				if opts['s'] == "" {
					fmt.Fprintln(c.out, l)
				}
				continue
			}
			var out []string
			for i, f := range strings.Split(l, delim) {
				if sel(i + 1) {
					out = append(out, f)
				}
			}
			fmt.Fprintln(c.out, strings.Join(out, delim))
		}
	}
	return min(st, 1)
}

// seqFormatError checks seq -f's FORMAT as seq does: exactly one
// floating-point directive (%f, %e or %g, with flags, width and
// precision), "%%" aside. It returns the complaint, or "".
func seqFormatError(format string) string {
	n := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		if i+1 < len(format) && format[i+1] == '%' {
			i++
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("-+ #0'123456789.", format[j]) >= 0 {
			j++
		}
		if j == len(format) || strings.IndexByte("feEgGaA", format[j]) < 0 {
			return "has unknown %" + format[i+1:min(j+1, len(format))] + " directive"
		}
		n++
		i = j
	}
	switch {
	case n == 0:
		return "has no % directive"
	case n > 1:
		return "has too many % directives"
	}
	return ""
}

func cmdSeq(c *cmd) int {
	opts, args, ok := c.flags("w", "sf", "[OPTION]... LAST")
	if !ok {
		return 1
	}
	var nums []int64
	for _, a := range args {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil {
			c.errf("invalid floating point argument: '%s'", a)
			fmt.Fprintf(c.errw, "Try 'seq --help' for more information.\n")
			return 1
		}
		nums = append(nums, n)
	}
	first, inc, last := int64(1), int64(1), int64(0)
	switch len(nums) {
	case 1:
		last = nums[0]
	case 2:
		first, last = nums[0], nums[1]
	case 3:
		first, inc, last = nums[0], nums[1], nums[2]
	default:
		c.errf("missing operand")
		fmt.Fprintf(c.errw, "Try 'seq --help' for more information.\n")
		return 1
	}
	if inc == 0 {
		c.errf("invalid Zero increment value: '0'")
		return 1
	}
	sep := "\n"
	if s, ok := opts['s']; ok {
		sep = s
	}
	w := 0
	if opts['w'] != "" {
		w = max(len(strconv.FormatInt(first, 10)), len(strconv.FormatInt(last, 10)))
	}
	format, hasFormat := opts['f']
	if hasFormat {
		if msg := seqFormatError(format); msg != "" {
			c.errf("format '%s' %s", format, msg)
			return 1
		}
	}
	var b strings.Builder
	n := 0
	for i := first; (inc > 0 && i <= last) || (inc < 0 && i >= last); i += inc {
		if n > 0 {
			b.WriteString(sep)
		}
		if hasFormat {
			fmt.Fprintf(&b, format, float64(i))
		} else {
			fmt.Fprintf(&b, "%0*d", w, i)
		}
		n++
		if b.Len() > 1<<16 {
			io.WriteString(c.out, b.String())
			b.Reset()
		}
	}
	if n > 0 {
		b.WriteString("\n")
	}
	io.WriteString(c.out, b.String())
	return 0
}

// --- chattr, lsattr ---

// attrLetters are e2fsprogs' flag letters in lsattr's order (lib/e2p/pf.c)
// with the FS_*_FL bits.
var attrLetters = []struct {
	bit uint32
	ch  byte
}{
	{0x1, 's'}, {0x2, 'u'}, {0x8, 'S'}, {0x10000, 'D'}, {0x10, 'i'}, {0x20, 'a'}, {0x40, 'd'},
	{0x80, 'A'}, {0x4, 'c'}, {vfs.FS_ENCRYPT_FL, 'E'}, {0x4000, 'j'}, {vfs.FS_INDEX_FL, 'I'},
	{0x8000, 't'}, {0x20000, 'T'}, {0x80000, 'e'}, {0x800000, 'C'}, {0x2000000, 'x'},
	{vfs.FS_CASEFOLD_FL, 'F'}, {vfs.FS_INLINE_DATA_FL, 'N'}, {0x20000000, 'P'}, {0x100000, 'V'}, {0x400, 'm'},
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
func cmdCmp(c *cmd) int {
	opts, args, ok := c.flags("sl", "", "[OPTION]... FILE1 [FILE2 [SKIP1 [SKIP2]]]")
	if !ok {
		return 2
	}
	if len(args) == 1 {
		args = append(args, "-")
	}
	if len(args) < 2 {
		c.errf("missing operand after '%s'", strings.Join(args, " "))
		return 2
	}
	a, err := c.readAll(args[0])
	if err != nil {
		c.errf("%s: %s", args[0], strerror(err))
		return 2
	}
	b, err := c.readAll(args[1])
	if err != nil {
		c.errf("%s: %s", args[1], strerror(err))
		return 2
	}
	line := 1
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			if opts['s'] == "" {
				fmt.Fprintf(c.out, "%s %s differ: byte %d, line %d\n", args[0], args[1], i+1, line)
			}
			return 1
		}
		if a[i] == '\n' {
			line++
		}
	}
	if len(a) != len(b) {
		if opts['s'] == "" {
			short := args[0]
			if len(b) < len(a) {
				short = args[1]
			}
			fmt.Fprintf(c.errw, "cmp: EOF on %s after byte %d\n", short, min(len(a), len(b)))
		}
		return 1
	}
	return 0
}

// obsoleteCount turns head's and tail's obsolete -N (and +N for tail)
// into -n N.
func obsoleteCount(args []string) []string {
	var out []string
	for i, a := range args {
		if len(a) > 1 && (a[0] == '-' || (a[0] == '+' && i == 0)) && strings.Trim(a[1:], "0123456789") == "" {
			n := a[1:]
			if a[0] == '+' {
				n = a
			}
			out = append(out, "-n", n)
			continue
		}
		out = append(out, a)
	}
	return out
}

// cmdEcho is /bin/echo, for the programs that run commands themselves
// (xargs); a script's echo is the shell's builtin.
func cmdEcho(c *cmd) int {
	args := splitEchoFlags(append([]string{"echo"}, c.args...))[1:]
	newline, esc := true, false
	for len(args) > 0 && (args[0] == "-n" || args[0] == "-e" || args[0] == "-E") {
		switch args[0] {
		case "-n":
			newline = false
		case "-e":
			esc = true
		case "-E":
			esc = false
		}
		args = args[1:]
	}
	out := strings.Join(args, " ")
	if esc {
		out = string(trSet(out))
	}
	if newline {
		out += "\n"
	}
	io.WriteString(c.out, out)
	return 0
}
