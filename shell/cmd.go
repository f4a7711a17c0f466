package shell

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// cmd is one command's invocation: its arguments, streams, directory and
// the uid of the process it runs as.
type cmd struct {
	s    *Shell
	m    *Machine
	ctx  context.Context
	dir  string
	uid  uint32
	id   ident
	name string
	args []string
	in   io.Reader
	out  io.Writer
	errw io.Writer
	env  expand.Environ
}

// commands are the programs the machine has.
var commands map[string]func(c *cmd) int

func init() {
	commands = map[string]func(c *cmd) int{
		"__vfslab_which": cmdWhich,
		"__vfslab_fd":    cmdFd,
		"su":             cmdSu,
		"sh":             cmdSh,
		"bash":           cmdSh,
		"xargs":          cmdXargs,
		"chmod":          cmdChmod,
		"chown":          cmdChown,
		"chgrp":          cmdChgrp,
		"groups":         cmdGroups,
		"mknod":          cmdMknod,
		"mkfifo":         cmdMkfifo,
		"id":             cmdID,
		"whoami":         cmdWhoami,
		"sleep":          cmdSleep,
		"sync":           cmdSync,
		"blockdev":       cmdBlockdev,
		"date":           cmdDate,
		"dmesg":          cmdDmesg,
		"uname":          cmdUname,
		"basename":       cmdBasename,
		"dirname":        cmdDirname,
		"env":            cmdEnv,
	}
	for name, fn := range coreutils {
		commands[name] = fn
	}
	for name, fn := range toolCommands {
		commands[name] = fn
	}
}

// abs makes a path argument absolute.
func (c *cmd) abs(p string) string { return abs(c.dir, p) }

// errf prints "NAME: message" on standard error.
func (c *cmd) errf(format string, args ...any) {
	fmt.Fprintf(c.errw, c.name+": "+format+"\n", args...)
}

// sys runs one syscall as the command's process.
func (c *cmd) sys(desc string, fn func(t *kernel.Task, p *vfs.Proc) (int64, error)) (int64, error) {
	c.m.mu.Lock()
	p := c.m.procFor(c.id)
	c.m.mu.Unlock()
	return c.m.call(c.errw, p, c.name, desc, func(t *kernel.Task) (int64, error) { return fn(t, p) })
}

// open opens p as the command's process.
func (c *cmd) open(p string, flags int, mode uint32) (*vfsFile, error) {
	return c.m.openFile(c.errw, c.id, c.name, c.abs(p), flags, mode)
}

// stat is stat(2) (follow) or lstat(2).
func (c *cmd) stat(p string, follow bool) (vfs.Stat, error) {
	return c.m.stat(c.errw, c.id, c.name, c.abs(p), follow)
}

// readAll reads a whole file ("-": standard input).
func (c *cmd) readAll(p string) ([]byte, error) {
	if p == "-" {
		return io.ReadAll(c.in)
	}
	switch c.abs(p) {
	case "/dev/null":
		return nil, nil
	case "/proc/mounts", "/proc/self/mounts":
		c.m.mu.Lock()
		defer c.m.mu.Unlock()
		return []byte(c.m.procMounts()), nil
	case dropCachesPath:
		return []byte("0\n"), nil
	}
	if bdev := c.m.device(c.abs(p)); bdev != nil {
		return io.ReadAll(&devFile{bdev: bdev})
	}
	if pf, ok := c.m.faultFile(c.abs(p)); ok {
		return io.ReadAll(c.m.openProcFile(pf))
	}
	f, err := c.open(p, vfs.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// writeFile writes data to p, created or truncated.
func (c *cmd) writeFile(p string, data []byte, flags int) error {
	if c.abs(p) == dropCachesPath {
		f := &dropCachesFile{m: c.m, w: c.errw}
		_, err := f.Write(data)
		return err
	}
	if c.abs(p) == "/dev/null" {
		return nil
	}
	if pf, ok := c.m.faultFile(c.abs(p)); ok {
		f := c.m.openProcFile(pf)
		if _, err := f.Write(data); err != nil {
			return err
		}
		return f.Close()
	}
	f, err := c.open(p, flags, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// readlink is readlink(2).
func (c *cmd) readlink(p string) (string, error) {
	buf := make([]byte, vfs.PATH_MAX)
	n, err := c.sys(fmt.Sprintf("readlink(%q)", c.abs(p)), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
		n, err := pr.Readlink(t, c.abs(p), buf)
		return int64(n), err
	})
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// flags parses single-letter options from the front of the arguments
// (getopt without long options): known are the letters that take no
// value, withArg those that do. It stops at "--" or the first operand. An
// unknown option prints "invalid option" and the usage line.
func (c *cmd) flags(known, withArg string, usage string) (map[byte]string, []string, bool) {
	opts := map[byte]string{}
	args := c.args
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' || (a[1] >= '0' && a[1] <= '9' && strings.IndexByte(withArg+known, a[1]) < 0) {
			rest = append(rest, a)
			continue
		}
		if strings.HasPrefix(a, "--") {
			c.errf("unrecognized option '%s'", a)
			c.usage(usage)
			return nil, nil, false
		}
		for j := 1; j < len(a); j++ {
			ch := a[j]
			switch {
			case strings.IndexByte(known, ch) >= 0:
				opts[ch] = opts[ch] + "1"
			case strings.IndexByte(withArg, ch) >= 0:
				v := a[j+1:]
				if v == "" {
					if i+1 >= len(args) {
						c.errf("option requires an argument -- '%c'", ch)
						c.usage(usage)
						return nil, nil, false
					}
					i++
					v = args[i]
				}
				opts[ch] = v
				j = len(a)
			default:
				c.errf("invalid option -- '%c'", ch)
				c.usage(usage)
				return nil, nil, false
			}
		}
	}
	return opts, rest, true
}

// usage prints a tool's usage line to standard error.
func (c *cmd) usage(u string) {
	if u == "" {
		return
	}
	fmt.Fprintf(c.errw, "Usage: %s %s\n", c.name, u)
	fmt.Fprintf(c.errw, "Try '%s --help' for more information.\n", c.name)
}

// cmdWhich is `command -v`, `type` and `which` over the machine's commands
// and the script's functions.
func cmdWhich(c *cmd) int {
	if len(c.args) == 0 {
		return 1
	}
	mode, names := c.args[0], c.args[1:]
	st := 0
	for _, n := range names {
		if mode == "-v" && isShellBuiltin(n) {
			fmt.Fprintln(c.out, n)
			continue
		}
		if (mode == "-type" || mode == "-V") && isShellBuiltin(n) {
			fmt.Fprintf(c.out, "%s is a shell builtin\n", n)
			continue
		}
		_, ok := commands[n]
		if ok && !strings.HasPrefix(n, "__") {
			switch mode {
			case "-type", "-V":
				fmt.Fprintf(c.out, "%s is /usr/bin/%s\n", n, n)
			default:
				fmt.Fprintf(c.out, "/usr/bin/%s\n", n)
			}
			continue
		}
		if mode == "-v" && isShellBuiltin(n) {
			fmt.Fprintln(c.out, n)
			continue
		}
		if mode == "-type" {
			fmt.Fprintf(c.errw, "type: %s: not found\n", n)
		}
		st = 1
	}
	return st
}

func isShellBuiltin(n string) bool {
	switch n {
	case "echo", "printf", "cd", "pwd", "test", "[", "true", "false", "read", "set", "shift", "exit", "export", "local", "eval", "exec", "trap", "wait", "getopts", "source", ".":
		return true
	}
	return false
}

// cmdFd is what `exec N<file`, `exec N>file` and `exec N<&-` run: the
// shell's process opens or closes its descriptor N.
func cmdFd(c *cmd) int {
	for i := 0; i+2 < len(c.args); i += 3 {
		n, _ := strconv.Atoi(c.args[i])
		op, word := c.args[i+1], c.args[i+2]
		c.m.mu.Lock()
		old, had := c.m.fds[n]
		c.m.mu.Unlock()
		if had {
			c.sys(fmt.Sprintf("close(%d)", old), func(t *kernel.Task, p *vfs.Proc) (int64, error) { return 0, p.Close(t, old) })
			c.m.mu.Lock()
			delete(c.m.fds, n)
			c.m.mu.Unlock()
		}
		var flags int
		switch op {
		case "<&", ">&":
			if word == "-" {
				continue
			}
			fmt.Fprintf(c.errw, "sh: %s: duplicating descriptors above 2 is not supported\n", word)
			return 1
		case "<":
			flags = vfs.O_RDONLY
		case ">", ">|":
			flags = vfs.O_WRONLY | vfs.O_CREAT | vfs.O_TRUNC
		case ">>":
			flags = vfs.O_WRONLY | vfs.O_CREAT | vfs.O_APPEND
		case "<>":
			flags = vfs.O_RDWR | vfs.O_CREAT
		default:
			fmt.Fprintf(c.errw, "sh: unsupported redirection %s on descriptor %d\n", op, n)
			return 1
		}
		f, err := c.m.openFile(c.errw, rootIdent, "sh", c.abs(word), flags, 0o644)
		if err != nil {
			fmt.Fprintf(c.errw, "sh: %s: %s\n", word, strerror(err))
			return 1
		}
		c.m.mu.Lock()
		c.m.fds[n] = f.fd
		c.m.mu.Unlock()
	}
	return 0
}

// cmdSu is `su USER -c COMMAND`: the command runs in a shell whose
// process has USER's credentials (su(1) without a login environment).
func cmdSu(c *cmd) int {
	var user, command string
	var rest []string
	var primary uint32
	var supp []uint32
	hasPrimary := false
	for i := 0; i < len(c.args); i++ {
		switch a := c.args[i]; {
		case a == "-c" && i+1 < len(c.args):
			command = c.args[i+1]
			i++
		case a == "-s" && i+1 < len(c.args):
			i++
		case (a == "-g" || a == "-G" || a == "--group" || a == "--supp-group") && i+1 < len(c.args):
			gid, ok := lookupGroup(c.args[i+1])
			if !ok {
				fmt.Fprintf(c.errw, "su: group %s does not exist\n", c.args[i+1])
				return 1
			}
			if c.uid != 0 {
				fmt.Fprintln(c.errw, "su: only root can specify alternative groups")
				return 1
			}
			if a == "-g" || a == "--group" {
				primary, hasPrimary = gid, true
			} else {
				supp = append(supp, gid)
			}
			i++
		case a == "-" || a == "-l" || a == "-m" || a == "-p":
		default:
			rest = append(rest, a)
		}
	}
	if len(rest) > 0 {
		user = rest[0]
	} else {
		user = "root"
	}
	uid, ok := users[user]
	if !ok {
		if n, err := strconv.ParseUint(user, 10, 32); err == nil {
			uid = uint32(n)
		} else {
			fmt.Fprintf(c.errw, "su: user %s does not exist or the user entry does not contain all the required fields\n", user)
			return 1
		}
	}
	// su's groups: the user's (initgroups); -g sets the primary group
	// and -G adds supplementary ones (util-linux su, root only). With -g
	// and no -G the supplementary groups are just the primary one.
	id := userIdent(uid)
	if hasPrimary {
		id.gid = primary
		gids := []uint32{primary}
		if len(supp) == 0 {
			id.groups = gidList(gids)
		}
	}
	if len(supp) > 0 {
		id.groups = gidList(append([]uint32{id.gid}, supp...))
	}
	var src io.Reader = strings.NewReader(command)
	if command == "" {
		src = c.in
	}
	f, err := syntax.NewParser().Parse(src, "su")
	if err != nil {
		fmt.Fprintln(c.errw, err)
		return 2
	}
	if err := rewrite(f); err != nil {
		fmt.Fprintln(c.errw, err)
		return 2
	}
	r, err := c.s.newRunner(c.in, c.out, c.errw, false)
	if err != nil {
		fmt.Fprintln(c.errw, "su:", err)
		return 1
	}
	r.Dir = c.dir
	ctx := withIdent(c.ctx, id)
	if c.s.prelude != nil {
		r.Run(ctx, c.s.prelude)
	}
	return exitCode(r.Run(ctx, f), c.errw)
}

// cmdSh is `sh -c COMMAND [NAME [ARGS...]]` and `sh` reading commands
// from standard input: a child shell of the same user on the machine.
func cmdSh(c *cmd) int {
	var src io.Reader = c.in
	var params []string
	name := c.name
	args := c.args
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-c" {
		args = args[1:]
	}
	in := c.in
	if len(args) > 0 && args[0] == "-c" {
		if len(args) < 2 {
			fmt.Fprintf(c.errw, "%s: -c: option requires an argument\n", c.name)
			return 2
		}
		src = strings.NewReader(args[1])
		if len(args) > 2 {
			name, params = args[2], args[3:]
		}
	} else if len(args) > 0 {
		data, err := c.readAll(args[0])
		if err != nil {
			fmt.Fprintf(c.errw, "%s: %s: %s\n", c.name, args[0], strerror(err))
			return 127
		}
		src, name, params = strings.NewReader(string(data)), args[0], args[1:]
	} else {
		in = strings.NewReader("")
	}
	f, err := syntax.NewParser().Parse(src, name)
	if err != nil {
		fmt.Fprintln(c.errw, err)
		return 2
	}
	if err := rewrite(f); err != nil {
		fmt.Fprintln(c.errw, err)
		return 2
	}
	r, err := c.s.newRunner(in, c.out, c.errw, false, params...)
	if err != nil {
		fmt.Fprintln(c.errw, c.name+":", err)
		return 1
	}
	r.Dir = c.dir
	ctx := withIdent(c.ctx, c.id)
	if c.s.prelude != nil {
		r.Run(ctx, c.s.prelude)
	}
	return exitCode(r.Run(ctx, f), c.errw)
}

// cmdXargs is xargs [-n N] [-I REPL] CMD...: the machine's command with
// the words of standard input appended (or substituted for REPL).
func cmdXargs(c *cmd) int {
	n, repl := 0, ""
	args := c.args
	for len(args) > 1 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "-n":
			n, _ = strconv.Atoi(args[1])
			args = args[2:]
		case args[0] == "-I":
			repl = args[1]
			args = args[2:]
		case args[0] == "-0" || args[0] == "-r":
			args = args[1:]
		default:
			fmt.Fprintf(c.errw, "xargs: invalid option -- '%s'\n", strings.TrimPrefix(args[0], "-"))
			return 1
		}
	}
	if len(args) == 0 {
		args = []string{"echo"}
	}
	data, _ := io.ReadAll(c.in)
	var words []string
	if repl != "" {
		words = splitLines(data)
		n = 1
	} else {
		words = strings.Fields(string(data))
	}
	if n <= 0 {
		n = len(words)
	}
	st := 0
	for i := 0; i < len(words) || (i == 0 && len(words) == 0 && repl == ""); i += max(n, 1) {
		var argv []string
		batch := words[i:min(i+n, len(words))]
		if repl != "" {
			for _, a := range args {
				argv = append(argv, strings.ReplaceAll(a, repl, batch[0]))
			}
		} else {
			argv = append(append(argv, args...), batch...)
		}
		fn, ok := commands[argv[0]]
		if !ok {
			fmt.Fprintf(c.errw, "xargs: %s: No such file or directory\n", argv[0])
			return 127
		}
		sub := *c
		sub.name, sub.args, sub.in = argv[0], argv[1:], strings.NewReader("")
		if r := fn(&sub); r != 0 {
			st = 123
		}
		if len(words) == 0 {
			break
		}
	}
	return st
}

// cmdChmod is chmod(1): MODE is octal or symbolic ([ugoa]*[-+=][rwxXst]*
// or [ugo], comma-separated; without ugoa the umask, 022, is respected as
// coreutils does), applied with chmod(2) to each FILE (-R: and below each
// directory; symlinks found there are not followed, as chmod -R does).
func cmdChmod(c *cmd) int {
	var args []string
	recursive, verbose, quiet := false, false, false
	for i, a := range c.args {
		switch {
		case a == "--":
			args = append(args, c.args[i+1:]...)
		case a == "-R" || a == "--recursive":
			recursive = true
		case a == "-v" || a == "-c":
			verbose = a == "-v"
		case a == "-f" || a == "--silent" || a == "--quiet":
			quiet = true
		default:
			args = append(args, a)
			continue
		}
		if a == "--" {
			break
		}
	}
	if len(args) < 2 {
		if len(args) == 0 {
			c.errf("missing operand")
		} else {
			c.errf("missing operand after '%s'", args[0])
		}
		fmt.Fprintf(c.errw, "Try 'chmod --help' for more information.\n")
		return 1
	}
	spec := args[0]
	if _, ok := applyMode(spec, 0, false); !ok {
		c.errf("invalid mode: '%s'", spec)
		fmt.Fprintf(c.errw, "Try 'chmod --help' for more information.\n")
		return 1
	}
	st := 0
	var walk func(p string, top bool)
	walk = func(p string, top bool) {
		s, err := c.stat(p, top)
		if err != nil {
			if !quiet {
				c.errf("cannot access '%s': %s", p, strerror(err))
			}
			st = 1
			return
		}
		if s.Mode&vfs.S_IFMT == vfs.S_IFLNK {
			return
		}
		mode, _ := applyMode(spec, s.Mode, s.Mode&vfs.S_IFMT == vfs.S_IFDIR)
		ap := c.abs(p)
		_, err = c.sys(fmt.Sprintf("fchmodat(AT_FDCWD, %q, %#o)", ap, mode), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
			return 0, pr.Chmod(t, ap, mode)
		})
		if err != nil {
			if !quiet {
				c.errf("changing permissions of '%s': %s", p, strerror(err))
			}
			st = 1
		} else if verbose {
			fmt.Fprintf(c.out, "mode of '%s' changed from %04o (%s) to %04o (%s)\n", p, s.Mode&0o7777, modeString(s.Mode)[1:], mode, modeString(s.Mode&vfs.S_IFMT | mode)[1:])
		}
		if recursive && s.Mode&vfs.S_IFMT == vfs.S_IFDIR {
			ents, err := c.m.readDir(c.errw, c.id, c.name, ap)
			if err != nil {
				if !quiet {
					c.errf("cannot read directory '%s': %s", p, strerror(err))
				}
				st = 1
				return
			}
			for _, e := range ents {
				if e.Name != "." && e.Name != ".." {
					walk(strings.TrimSuffix(p, "/")+"/"+e.Name, false)
				}
			}
		}
	}
	for _, a := range args[1:] {
		walk(a, true)
	}
	return st
}

// applyMode applies chmod's MODE to old (the file's i_mode; isDir for X
// and for keeping a directory's set-id bits under an octal mode, as
// coreutils does) and returns the new permission bits.
func applyMode(spec string, old uint32, isDir bool) (uint32, bool) {
	const umask = 0o022
	cur := old & 0o7777
	if spec != "" && strings.Trim(spec, "01234567") == "" {
		if len(spec) > 5 {
			return 0, false
		}
		n, err := strconv.ParseUint(spec, 8, 32)
		if err != nil || n > 0o7777 {
			return 0, false
		}
		m := uint32(n)
		if isDir && len(spec) < 5 {
			// Fewer than five digits keep a directory's set-id bits.
			m |= cur & (vfs.S_ISUID | vfs.S_ISGID)
		}
		return m, true
	}
	for _, clause := range strings.Split(spec, ",") {
		i := 0
		var who uint32
		for i < len(clause) && strings.IndexByte("ugoa", clause[i]) >= 0 {
			who |= map[byte]uint32{'u': 0o4700, 'g': 0o2070, 'o': 0o1007, 'a': 0o7777}[clause[i]]
			i++
		}
		if i == len(clause) {
			return 0, false
		}
		masked := who == 0
		if masked {
			who = 0o7777
		}
		for i < len(clause) {
			op := clause[i]
			if op != '+' && op != '-' && op != '=' {
				return 0, false
			}
			i++
			var perm uint32
			switch {
			case i < len(clause) && strings.IndexByte("ugo", clause[i]) >= 0:
				shift := map[byte]uint{'u': 6, 'g': 3, 'o': 0}[clause[i]]
				b := (cur >> shift) & 7
				perm = b<<6 | b<<3 | b
				i++
			default:
				for i < len(clause) && strings.IndexByte("rwxXst", clause[i]) >= 0 {
					switch clause[i] {
					case 'r':
						perm |= 0o444
					case 'w':
						perm |= 0o222
					case 'x':
						perm |= 0o111
					case 'X':
						if isDir || cur&0o111 != 0 {
							perm |= 0o111
						}
					case 's':
						perm |= vfs.S_ISUID | vfs.S_ISGID
					case 't':
						perm |= vfs.S_ISVTX
					}
					i++
				}
			}
			bits := perm & who
			if masked {
				bits &^= umask
			}
			switch op {
			case '+':
				cur |= bits
			case '-':
				cur &^= bits
			case '=':
				keep := ^who & 0o7777
				if masked {
					keep = 0
				}
				if isDir {
					keep |= cur & (vfs.S_ISUID | vfs.S_ISGID) &^ (perm & who)
				}
				cur = cur&keep | bits
			}
		}
	}
	return cur, true
}

// cmdChown is chown(1) for the owner (OWNER[:GROUP]; groups are not
// modelled): chown(2), or lchown(2) with -h.
func cmdChown(c *cmd) int {
	opts, args, ok := c.flags("hRfv", "", "[OPTION]... [OWNER][:[GROUP]] FILE...")
	if !ok {
		return 1
	}
	if len(args) < 2 {
		c.errf("missing operand")
		fmt.Fprintf(c.errw, "Try 'chown --help' for more information.\n")
		return 1
	}
	owner, group, hasGroup := strings.Cut(args[0], ":")
	if !hasGroup {
		owner, group, hasGroup = strings.Cut(args[0], ".")
	}
	var uid uint32
	if owner != "" {
		var known bool
		uid, known = users[owner]
		if !known {
			n, err := strconv.ParseUint(owner, 10, 32)
			if err != nil {
				c.errf("invalid user: '%s'", args[0])
				return 1
			}
			uid = uint32(n)
		}
	}
	var gid uint32
	if hasGroup && group == "" && owner != "" {
		// OWNER: is OWNER and OWNER's login group.
		gid, group = userIdent(uid).gid, "login"
	} else if group != "" {
		var ok bool
		if gid, ok = lookupGroup(group); !ok {
			c.errf("invalid group: '%s'", args[0])
			return 1
		}
	}
	return c.chownFiles(args[1:], owner != "", uid, group != "", gid, opts['h'] == "", "ownership")
}

// chownFiles is chown(2) (lchown(2) unless follow) of each file: the
// owner when setUID, the group when setGID.
func (c *cmd) chownFiles(files []string, setUID bool, uid uint32, setGID bool, gid uint32, follow bool, what string) int {
	st := 0
	for _, a := range files {
		p := c.abs(a)
		uidArg, gidArg := int64(-1), int64(-1)
		if setUID {
			uidArg = int64(uid)
		}
		if setGID {
			gidArg = int64(gid)
		}
		_, err := c.sys(fmt.Sprintf("fchownat(%q, %d, %d)", p, uidArg, gidArg), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
			if setUID {
				if err := pr.Chown(t, p, uid, follow); err != nil {
					return 0, err
				}
			}
			if setGID {
				return 0, pr.Chgrp(t, p, gid, follow)
			}
			return 0, nil
		})
		if err != nil {
			c.errf("changing %s of '%s': %s", what, a, strerror(err))
			st = 1
		}
	}
	return st
}

// cmdChgrp is chgrp(1): GROUP for each FILE (chown(2) with uid -1).
func cmdChgrp(c *cmd) int {
	opts, args, ok := c.flags("hRfv", "", "[OPTION]... GROUP FILE...")
	if !ok {
		return 1
	}
	if len(args) < 2 {
		c.errf("missing operand")
		fmt.Fprintf(c.errw, "Try 'chgrp --help' for more information.\n")
		return 1
	}
	gid, ok := lookupGroup(args[0])
	if !ok {
		c.errf("invalid group: '%s'", args[0])
		return 1
	}
	return c.chownFiles(args[1:], false, 0, true, gid, opts['h'] == "", "group")
}

func userName(uid uint32) string {
	for n, u := range users {
		if u == uid {
			return n
		}
	}
	return strconv.Itoa(int(uid))
}

func cmdID(c *cmd) int {
	opts, _, ok := c.flags("ugnr", "", "[OPTION]... [USER]")
	if !ok {
		return 1
	}
	switch {
	case opts['u'] != "" && opts['n'] != "":
		fmt.Fprintln(c.out, userName(c.uid))
	case opts['u'] != "":
		fmt.Fprintln(c.out, c.uid)
	case opts['g'] != "" && opts['n'] != "":
		fmt.Fprintln(c.out, groupName(c.id.gid))
	case opts['g'] != "":
		fmt.Fprintln(c.out, c.id.gid)
	default:
		var gs []string
		for _, g := range c.id.groupIDs() {
			gs = append(gs, fmt.Sprintf("%d(%s)", g, groupName(g)))
		}
		fmt.Fprintf(c.out, "uid=%d(%s) gid=%d(%s) groups=%s\n", c.uid, userName(c.uid), c.id.gid, groupName(c.id.gid), strings.Join(gs, ","))
	}
	return 0
}

func cmdWhoami(c *cmd) int { fmt.Fprintln(c.out, userName(c.uid)); return 0 }

// cmdSync is sync(1): the model writes pages back to the device as soon
// as they change, so what is left to flush is the devices themselves: a
// writable attached image is written back to its host file.
func cmdSync(c *cmd) int {
	c.m.mu.Lock()
	err := c.m.sys.Sync(c.m.t)
	if e := c.m.syncImages(); err == nil {
		err = e
	}
	c.m.mu.Unlock()
	if err != nil {
		fmt.Fprintf(c.errw, "sync: %v\n", err)
		return 1
	}
	return 0
}

// cmdDmesg prints the kernel log; -c clears it.
func cmdDmesg(c *cmd) int {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	for _, l := range c.m.k.Log.Lines() {
		fmt.Fprintln(c.out, l)
	}
	if len(c.args) > 0 && (c.args[0] == "-c" || c.args[0] == "-C") {
		c.m.k.Log = &kernel.Log{}
	}
	return 0
}

func cmdUname(c *cmd) int {
	if len(c.args) > 0 && c.args[0] == "-r" {
		fmt.Fprintln(c.out, "6.12.0-vfslab")
		return 0
	}
	if len(c.args) > 0 && c.args[0] == "-a" {
		fmt.Fprintln(c.out, "Linux vfslab 6.12.0-vfslab #1 SMP x86_64 GNU/Linux")
		return 0
	}
	fmt.Fprintln(c.out, "Linux")
	return 0
}

func cmdBasename(c *cmd) int {
	if len(c.args) == 0 {
		c.errf("missing operand")
		return 1
	}
	b := c.args[0]
	for len(b) > 1 && strings.HasSuffix(b, "/") {
		b = b[:len(b)-1]
	}
	if i := strings.LastIndexByte(b, '/'); i >= 0 && len(b) > 1 {
		b = b[i+1:]
	}
	if len(c.args) > 1 {
		b = strings.TrimSuffix(b, c.args[1])
	}
	fmt.Fprintln(c.out, b)
	return 0
}

func cmdDirname(c *cmd) int {
	if len(c.args) == 0 {
		c.errf("missing operand")
		return 1
	}
	d := strings.TrimRight(c.args[0], "/")
	i := strings.LastIndexByte(d, '/')
	switch {
	case c.args[0] != "" && d == "":
		d = "/"
	case i < 0:
		d = "."
	case i == 0:
		d = "/"
	default:
		d = strings.TrimRight(d[:i], "/")
		if d == "" {
			d = "/"
		}
	}
	fmt.Fprintln(c.out, d)
	return 0
}

func cmdEnv(c *cmd) int {
	var lines []string
	c.env.Each(func(name string, vr expand.Variable) bool {
		if vr.Exported {
			lines = append(lines, name+"="+vr.String())
		}
		return true
	})
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(c.out, l)
	}
	return 0
}
