package shell

import (
	"context"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/vfslab/vfslab/errno"
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
	// argv0 is the name the command was run by (a path for a program run
	// by its path), which programs print in their usage.
	argv0 string
	args  []string
	in    io.Reader
	out   io.Writer
	errw  io.Writer
	env   expand.Environ
}

// commands are the programs the machine has.
var commands map[string]func(c *cmd) int

func init() {
	commands = map[string]func(c *cmd) int{
		"__vfslab_which": cmdWhich,
		"__vfslab_fd":    cmdFd,
		"__vfslab_fork":  cmdFork,
		"__vfslab_test":  cmdTest,
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
	for name, fn := range xattrCommands {
		commands[name] = fn
	}
}

// abs makes a path argument absolute.
func (c *cmd) abs(p string) string { return abs(c.dir, p) }

// errf prints "NAME: message" on standard error. For a command that
// imitates GNU coreutils, the file names in the message are quoted as
// coreutils quotes them (gnuQuoteArgs: '%s' is quoteaf, a leading "%s: "
// is quotef).
func (c *cmd) errf(format string, args ...any) {
	if gnuQuoting[c.name] {
		format, args = gnuQuoteArgs(format, args)
	}
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
		return c.readBounded(c.in)
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
	if text, ok := c.m.kernelFile(c.abs(p)); ok {
		return []byte(text), nil
	}
	if bdev := c.m.device(c.abs(p)); bdev != nil {
		return c.readBounded(&devFile{bdev: bdev})
	}
	if pf, ok := c.m.procFileFor(c.abs(p), c.id); ok {
		return io.ReadAll(c.m.openProcFile(pf))
	}
	f, err := c.open(p, vfs.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var st vfs.Stat
	_, err = c.m.call(c.errw, f.p, c.name, fmt.Sprintf("fstat(%d)", f.fd), func(t *kernel.Task) (int64, error) {
		var err error
		st, err = f.p.Fstat(t, f.fd)
		return 0, err
	})
	if err == nil && st.Mode&vfs.S_IFMT == vfs.S_IFCHR {
		// A character device may never end (/dev/zero, /dev/urandom):
		// what does not fit the command's buffer is ENOMEM, not the
		// host's memory.
		data, err := io.ReadAll(io.LimitReader(f, maxDeviceRead+1))
		if err == nil && len(data) > maxDeviceRead {
			return nil, errno.ENOMEM
		}
		return data, err
	}
	return c.readBounded(f)
}

// readBounded reads r to its end, up to a quarter of the run's memory:
// a command that needs its whole input (sort, diff, sed) gets ENOMEM
// past that, inside the machine, instead of exhausting the host's.
func (c *cmd) readBounded(r io.Reader) ([]byte, error) {
	limit := c.s.memoryLimit() / 4
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err == nil && int64(len(data)) > limit {
		return nil, errno.ENOMEM
	}
	return data, err
}

// maxDeviceRead bounds what readAll takes from a character device.
const maxDeviceRead = 64 << 20

// writeFile writes data to p, created or truncated.
func (c *cmd) writeFile(p string, data []byte, flags int) error {
	if c.abs(p) == dropCachesPath {
		f := &dropCachesFile{m: c.m, w: c.errw, comm: c.name}
		_, err := f.Write(data)
		return err
	}
	if c.abs(p) == "/dev/null" {
		return nil
	}
	if c.abs(p) == kmsgPath {
		f := &kmsgFile{m: c.m}
		_, err := f.Write(data)
		f.Close()
		return err
	}
	if pf, ok := c.m.procFileFor(c.abs(p), c.id); ok {
		if pf.access != nil {
			c.m.mu.Lock()
			err := pf.access(true)
			c.m.mu.Unlock()
			if err != nil {
				return err
			}
		}
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
// badOption prints what GNU's getopt and coreutils print for an option a
// command does not take: "unrecognized option" for a long one, "invalid
// option" with the first letter for a short one, then the --help hint.
func (c *cmd) badOption(a string) {
	if strings.HasPrefix(a, "--") {
		c.errf("unrecognized option '%s'", a)
	} else {
		c.errf("invalid option -- '%c'", a[1])
	}
	fmt.Fprintf(c.errw, "Try '%s --help' for more information.\n", c.name)
}

func (c *cmd) usage(u string) {
	if u == "" {
		return
	}
	fmt.Fprintf(c.errw, "Usage: %s %s\n", c.name, u)
	fmt.Fprintf(c.errw, "Try '%s --help' for more information.\n", c.name)
}

// cmdWhich is `command -v`, `command -V`, `type` (with -t, -p, -P, -a)
// and `which` over the machine's commands, the shell's builtins and
// keywords: never the host's PATH.
func cmdWhich(c *cmd) int {
	if len(c.args) == 0 {
		return 1
	}
	mode, names := c.args[0], c.args[1:]
	tflag := ""
	if mode == "-type" {
		for len(names) > 0 && len(names[0]) > 1 && names[0][0] == '-' {
			for _, f := range names[0][1:] {
				switch f {
				case 't', 'p', 'P':
					tflag = string(f)
				case 'a', 'f':
				default:
					fmt.Fprintf(c.errw, "type: -%c: invalid option\ntype: usage: type [-afptP] name [name ...]\n", f)
					return 2
				}
			}
			names = names[1:]
		}
	}
	st := 0
	for _, n := range names {
		_, isCmd := commands[n]
		isCmd = isCmd && !strings.HasPrefix(n, "__")
		switch {
		case mode == "-which":
			if !isCmd {
				st = 1
				continue
			}
			fmt.Fprintf(c.out, "/usr/bin/%s\n", n)
		case tflag == "p" || tflag == "P":
			// -p prints nothing for a builtin; -P searches PATH.
			if isCmd && (tflag == "P" || !isShellBuiltin(n)) {
				fmt.Fprintf(c.out, "/usr/bin/%s\n", n)
			} else if !isShellBuiltin(n) || tflag == "P" {
				st = 1
			}
		case syntax.IsKeyword(n) && mode != "-v":
			if tflag == "t" {
				fmt.Fprintln(c.out, "keyword")
			} else {
				fmt.Fprintf(c.out, "%s is a shell keyword\n", n)
			}
		case isShellBuiltin(n) || (mode == "-v" && syntax.IsKeyword(n)):
			switch {
			case mode == "-v":
				fmt.Fprintln(c.out, n)
			case tflag == "t":
				fmt.Fprintln(c.out, "builtin")
			default:
				fmt.Fprintf(c.out, "%s is a shell builtin\n", n)
			}
		case isCmd:
			switch {
			case mode == "-v":
				fmt.Fprintf(c.out, "/usr/bin/%s\n", n)
			case tflag == "t":
				fmt.Fprintln(c.out, "file")
			default:
				fmt.Fprintf(c.out, "%s is /usr/bin/%s\n", n, n)
			}
		default:
			switch {
			case mode == "-type" && tflag == "":
				fmt.Fprintf(c.errw, "type: %s: not found\n", n)
			case mode == "-V":
				fmt.Fprintf(c.errw, "command: %s: not found\n", n)
			}
			st = 1
		}
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
	r, err := c.s.newRunner(id, c.in, c.out, c.errw, false)
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
	r, err := c.s.newRunner(c.id, in, c.out, c.errw, false, params...)
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

// The machine's uname(2) fields.
const (
	unameSysname = "Linux"
	unameNode    = "vfslab"
	unameRelease = "6.12.0-vfslab"
	unameVersion = "#1 SMP"
	unameMachine = "x86_64"
)

// cmdUname is uname(1): -s, -n, -r, -v, -m (in that order whatever the
// order given), -a for all with the OS name; no option is -s.
func cmdUname(c *cmd) int {
	var sel [5]bool
	all := false
	for _, a := range c.args {
		if len(a) < 2 || a[0] != '-' {
			c.errf("extra operand '%s'", a)
			return 1
		}
		for _, ch := range a[1:] {
			switch ch {
			case 's':
				sel[0] = true
			case 'n':
				sel[1] = true
			case 'r':
				sel[2] = true
			case 'v':
				sel[3] = true
			case 'm':
				sel[4] = true
			case 'a':
				all = true
			default:
				c.errf("invalid option -- '%c'", ch)
				return 1
			}
		}
	}
	fields := []string{unameSysname, unameNode, unameRelease, unameVersion, unameMachine}
	var out []string
	for i, f := range fields {
		if sel[i] || all {
			out = append(out, f)
		}
	}
	if all {
		out = append(out, "GNU/Linux")
	}
	if len(out) == 0 {
		out = fields[:1]
	}
	fmt.Fprintln(c.out, strings.Join(out, " "))
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

// cmdEnv is env(1): [-i] [-u NAME]... [NAME=VALUE]... [COMMAND [ARG]...].
// Without a command it prints the environment (one line a variable,
// sorted: the machine's environ has no order of its own); with one it
// runs the machine's COMMAND in the changed environment (127 and env's
// message for a command it does not have).
func cmdEnv(c *cmd) int {
	vars := map[string]string{}
	args := c.args
	clear := false
	var unset []string
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" {
		a := args[0]
		args = args[1:]
		switch {
		case a == "--":
			goto assignments
		case a == "-i" || a == "--ignore-environment":
			clear = true
		case a == "-u" || a == "--unset":
			if len(args) == 0 {
				c.errf("option requires an argument -- 'u'")
				fmt.Fprintf(c.errw, "Try 'env --help' for more information.\n")
				return 125
			}
			unset, args = append(unset, args[0]), args[1:]
		case strings.HasPrefix(a, "--unset="):
			unset = append(unset, strings.TrimPrefix(a, "--unset="))
		default:
			c.badOption(a)
			return 125
		}
	}
	if len(args) > 0 && args[0] == "-" {
		clear, args = true, args[1:]
	}
assignments:
	if !clear {
		c.env.Each(func(name string, vr expand.Variable) bool {
			// Each may yield a name once per scope: the value is
			// the one in force.
			if v := c.env.Get(name); v.Exported && v.IsSet() {
				vars[name] = v.String()
			}
			return true
		})
	}
	for _, n := range unset {
		delete(vars, n)
	}
	for len(args) > 0 && strings.Contains(args[0], "=") && !strings.HasPrefix(args[0], "=") {
		k, v, _ := strings.Cut(args[0], "=")
		vars[k], args = v, args[1:]
	}
	lines := make([]string, 0, len(vars))
	for k, v := range vars {
		lines = append(lines, k+"="+v)
	}
	sort.Strings(lines)
	if len(args) == 0 {
		for _, l := range lines {
			fmt.Fprintln(c.out, l)
		}
		return 0
	}
	fn, ok := c.s.lookupProgram(args[0])
	if !ok || strings.HasPrefix(args[0], "__") {
		c.errf("'%s': No such file or directory", args[0])
		return 127
	}
	sub := *c
	sub.name, sub.argv0, sub.args, sub.env = path.Base(args[0]), args[0], args[1:], expand.ListEnviron(lines...)
	return fn(&sub)
}
