package shell

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// commandDoc is what `help` says of one of the machine's commands: the
// package it comes from on a Linux system, its synopsis and one line on
// what it does here.
type commandDoc struct {
	group, usage, summary string
}

// commandGroups are help's groups, in the order it lists them.
var commandGroups = []string{"coreutils", "text", "diffutils", "shell", "util-linux", "e2fsprogs", "f2fs-tools", "attr", "fscrypt", "xz", "vfslab"}

// commandDocs documents every command of the commands table (a test keeps
// the two in step; the names beginning with "__" are the shell's own
// helpers, never listed).
var commandDocs = map[string]commandDoc{
	// coreutils
	"basename":  {"coreutils", "basename NAME [SUFFIX]", "strip the directory (and SUFFIX) from NAME"},
	"cat":       {"coreutils", "cat [OPTION]... [FILE]...", "concatenate files to standard output"},
	"chgrp":     {"coreutils", "chgrp [OPTION]... GROUP FILE...", "change a file's group (chown(2))"},
	"chmod":     {"coreutils", "chmod [OPTION]... MODE FILE...", "change a file's mode bits (chmod(2))"},
	"chown":     {"coreutils", "chown [OPTION]... [OWNER][:[GROUP]] FILE...", "change a file's owner and group (chown(2))"},
	"cp":        {"coreutils", "cp [OPTION]... SOURCE... DIRECTORY", "copy files"},
	"cut":       {"coreutils", "cut OPTION... [FILE]...", "print selected parts of each line"},
	"date":      {"coreutils", "date [+FORMAT]", "print the machine's clock, as strftime formats it"},
	"dd":        {"coreutils", "dd [OPERAND]...", "copy blocks, with dd's statistics"},
	"dirname":   {"coreutils", "dirname NAME...", "strip the last component from each NAME"},
	"echo":      {"coreutils", "echo [-neE] [STRING]...", "print the strings"},
	"env":       {"coreutils", "env [NAME=VALUE]... [COMMAND [ARG]...]", "print the environment, or run a command in a changed one"},
	"false":     {"coreutils", "false", "exit with status 1"},
	"groups":    {"coreutils", "groups [USER]...", "print the groups a user is in"},
	"head":      {"coreutils", "head [OPTION]... [FILE]...", "print the first lines or bytes of files"},
	"id":        {"coreutils", "id [OPTION]... [USER]", "print user and group IDs"},
	"ln":        {"coreutils", "ln [OPTION]... TARGET LINK_NAME", "make a hard or symbolic link (link(2), symlink(2))"},
	"ls":        {"coreutils", "ls [OPTION]... [FILE]...", "list directory contents (getdents64(2), lstat(2))"},
	"md5sum":    {"coreutils", "md5sum [FILE]...", "print MD5 checksums"},
	"mkdir":     {"coreutils", "mkdir [OPTION]... DIRECTORY...", "make directories (mkdir(2))"},
	"mkfifo":    {"coreutils", "mkfifo [OPTION]... NAME...", "make named pipes (mknod(2))"},
	"mknod":     {"coreutils", "mknod [OPTION]... NAME TYPE [MAJOR MINOR]", "make a device file or a named pipe (mknod(2))"},
	"mktemp":    {"coreutils", "mktemp [OPTION]... [TEMPLATE]", "make a file or directory with a unique name"},
	"mv":        {"coreutils", "mv [OPTION]... SOURCE... DIRECTORY", "move or rename files (rename(2))"},
	"readlink":  {"coreutils", "readlink [OPTION]... FILE...", "print a symbolic link's target (readlink(2))"},
	"rm":        {"coreutils", "rm [OPTION]... [FILE]...", "remove files or directories (unlink(2), rmdir(2))"},
	"rmdir":     {"coreutils", "rmdir [OPTION]... DIRECTORY...", "remove empty directories (rmdir(2))"},
	"seq":       {"coreutils", "seq [OPTION]... [FIRST [INCREMENT]] LAST", "print a sequence of numbers"},
	"sha256sum": {"coreutils", "sha256sum [FILE]...", "print SHA-256 checksums"},
	"sleep":     {"coreutils", "sleep NUMBER", "advance the machine's clock (nothing waits)"},
	"sort":      {"coreutils", "sort [OPTION]... [FILE]...", "sort lines"},
	"stat":      {"coreutils", "stat [OPTION]... FILE...", "print a file's status (statx(2))"},
	"sync":      {"coreutils", "sync [FILE]...", "write back dirty data (sync(2), syncfs(2), fsync(2))"},
	"tail":      {"coreutils", "tail [OPTION]... [FILE]...", "print the last lines or bytes of files"},
	"tee":       {"coreutils", "tee [OPTION]... [FILE]...", "copy standard input to files and to standard output"},
	"touch":     {"coreutils", "touch [OPTION]... FILE...", "create files or change their times (utimensat(2))"},
	"tr":        {"coreutils", "tr [OPTION]... SET1 [SET2]", "translate or delete characters"},
	"true":      {"coreutils", "true", "exit with status 0"},
	"truncate":  {"coreutils", "truncate OPTION... FILE...", "set a file's size (truncate(2))"},
	"uname":     {"coreutils", "uname [OPTION]...", "print the simulated system's name and release"},
	"uniq":      {"coreutils", "uniq [OPTION]... [INPUT [OUTPUT]]", "drop repeated adjacent lines"},
	"wc":        {"coreutils", "wc [OPTION]... [FILE]...", "count lines, words and bytes"},
	"yes":       {"coreutils", "yes [STRING]...", "print STRING (y) until the reader goes"},
	"whoami":    {"coreutils", "whoami", "print the current user's name"},
	// text tools
	"awk":   {"text", "awk [-F SEP] [-v NAME=VALUE] PROGRAM [FILE]...", "scan and process patterns (the subset the scenarios use)"},
	"egrep": {"text", "egrep [OPTION]... PATTERNS [FILE]...", "grep -E"},
	"find":  {"text", "find [PATH]... [EXPRESSION]", "walk directory trees"},
	"grep":  {"text", "grep [OPTION]... PATTERNS [FILE]...", "print lines that match patterns"},
	"od":    {"text", "od [OPTION]... [FILE]...", "dump files in octal and other formats"},
	"sed":   {"text", "sed [OPTION]... SCRIPT [FILE]...", "stream editor (the subset the scenarios use)"},
	"xargs": {"text", "xargs [OPTION]... [COMMAND [ARG]...]", "run a command with arguments read from standard input"},
	"xxd":   {"text", "xxd [OPTION]... [INFILE [OUTFILE]]", "make a hex dump, or turn one back into bytes"},
	// diffutils
	"cmp":  {"diffutils", "cmp [OPTION]... FILE1 [FILE2 [SKIP1 [SKIP2]]]", "compare two files byte by byte"},
	"diff": {"diffutils", "diff [OPTION]... FILES", "compare two files line by line"},
	// shells
	"bash":    {"shell", "bash [-c COMMANDS | SCRIPT [ARG]...]", "the same shell as sh"},
	"history": {"shell", "history", "list the lines typed at the prompt (kept on the host, in $XDG_STATE_HOME/vfslab/sh_history)"},
	"sh":      {"shell", "sh [-c COMMANDS | SCRIPT [ARG]...]", "run commands in a new shell on this machine"},
	// util-linux
	"blkid":    {"util-linux", "blkid [OPTION]... [DEVICE]...", "print the filesystem type and UUID found on devices"},
	"blockdev": {"util-linux", "blockdev COMMAND... DEVICE...", "block device ioctls"},
	"dmesg":    {"util-linux", "dmesg [OPTION]...", "print or clear the kernel's log"},
	"fsck":     {"util-linux", "fsck [-t TYPE] [OPTION]... DEVICE", "check a filesystem (runs fsck.TYPE)"},
	"mkfs":     {"util-linux", "mkfs [-t TYPE] [OPTION]... DEVICE [SIZE]", "make a filesystem (runs mkfs.TYPE)"},
	"mount":    {"util-linux", "mount [OPTION]... [DEVICE] DIR", "mount a filesystem, or list the mounts"},
	"su":       {"util-linux", "su [OPTION]... [USER [ARG]...]", "run commands as another user"},
	"umount":   {"util-linux", "umount DIR|DEVICE...", "unmount a filesystem"},
	// e2fsprogs
	"chattr":    {"e2fsprogs", "chattr [-R] [-+=FLAGS] FILE...", "change inode flags (FS_IOC_SETFLAGS)"},
	"debugfs":   {"e2fsprogs", "debugfs [OPTION]... DEVICE", "examine an ext4 image (the requests the scenarios use)"},
	"e2fsck":    {"e2fsprogs", "e2fsck [OPTION]... DEVICE", "check an ext4 filesystem"},
	"fsck.ext2": {"e2fsprogs", "fsck.ext2 [OPTION]... DEVICE", "e2fsck"},
	"fsck.ext3": {"e2fsprogs", "fsck.ext3 [OPTION]... DEVICE", "e2fsck"},
	"fsck.ext4": {"e2fsprogs", "fsck.ext4 [OPTION]... DEVICE", "e2fsck"},
	"lsattr":    {"e2fsprogs", "lsattr [OPTION]... [FILE]...", "list inode flags (FS_IOC_GETFLAGS)"},
	"mkfs.ext4": {"e2fsprogs", "mkfs.ext4 [OPTION]... DEVICE [SIZE]", "make an ext4 filesystem"},
	// f2fs-tools
	"dump.f2fs":   {"f2fs-tools", "dump.f2fs [OPTION]... DEVICE", "print an f2fs inode"},
	"f2fs_io":     {"f2fs-tools", "f2fs_io COMMAND [ARG]...", "f2fs ioctls (the commands the scenarios use)"},
	"fsck.f2fs":   {"f2fs-tools", "fsck.f2fs [OPTION]... DEVICE", "check an f2fs filesystem"},
	"inject.f2fs": {"f2fs-tools", "inject.f2fs --mb MEMBER --val VALUE DEVICE", "change one on-disk field of an f2fs image"},
	"mkfs.f2fs":   {"f2fs-tools", "mkfs.f2fs [OPTION]... DEVICE [SECTORS]", "make an f2fs filesystem"},
	// attr
	"attr":     {"attr", "attr [-LRSq] {-s NAME [-V VALUE] | -g NAME | -r NAME | -l} FILE", "set, get, remove or list extended attributes (IRIX style)"},
	"getfattr": {"attr", "getfattr [OPTION]... FILE...", "print extended attributes"},
	"setfattr": {"attr", "setfattr {-n NAME [-v VALUE] | -x NAME} FILE...", "set or remove an extended attribute"},
	// fscrypt
	"fscryptctl": {"fscrypt", "fscryptctl add_key|remove_key|key_status|get_policy|set_policy ...", "fscrypt's ioctls, as the fscryptctl tool"},
	"keyctl":     {"fscrypt", "keyctl add|padd|newring|request|search|update|link|unlink|revoke|invalidate|clear|read|pipe|print|describe|list|show|timeout|setperm|new_session ...", "the kernel's key management (one session keyring, shared)"},
	"xfs_io":     {"fscrypt", "xfs_io [-f] [-c COMMAND]... FILE", "file I/O and fscrypt ioctls (xfs_io -c help lists its commands)"},
	// xz
	"unxz":  {"xz", "unxz [OPTION]... [FILE]...", "xz -d"},
	"xz":    {"xz", "xz [OPTION]... [FILE]...", "compress or decompress .xz files"},
	"xzcat": {"xz", "xzcat [OPTION]... [FILE]...", "xz -dc"},
	// vfslab
	"dump":    {"vfslab", "dump DIR", "print a live ext4 or f2fs directory block by block, with the checker's verdict"},
	"events":  {"vfslab", "events [reset]", "print the events the machine counted since boot or the last reset"},
	"help":    {"vfslab", "help [COMMAND]", "list the machine's commands, or say what one does"},
	"patches": {"vfslab", "patches [id=variant,...]", "print the kernel's patch set, or boot a new machine whose kernel runs SET"},
	"trace":   {"vfslab", "trace on|off", "print each syscall's function_graph trace on standard error while on"},
}

func init() {
	// help reaches the machine's command through this name: mvdan.cc/sh
	// would run its own builtin of bash's commands.
	commands["__vfslab_help"] = cmdHelp
}

// helpHeader is what help says of the machine before its commands.
const helpHeader = `vfslab sh: a POSIX shell (mvdan.cc/sh) on one simulated machine.

The machine: a memfs root (tmpfs: no fscrypt) with /mnt/scratch, /mnt/test, /tmp, /proc, /sys;
scratch devices /dev/vdb../dev/vde (host images with --image FILE:DEV) and
/dev/null, zero, full, random, urandom (character devices);
/proc/sys/vm/drop_caches; users root, fsgqa (1000), fsgqa2 (1001), each in
its own group, fsgqa and fsgqa2 also in users (100); su -g/-G (root).
Keys: /proc/keys, /proc/key-users, /proc/sys/kernel/keys/*. Faults:
/sys/kernel/debug/failslab/*, /sys/kernel/slab/CACHE/failslab,
/proc/self/fail-nth (the Nth allocation from now on fails).

Commands ('help COMMAND' for one):
`

// helpFooter follows the command list.
const helpFooter = `
The shell's builtins (cd, pwd, export, set, test, read, ...) are mvdan.cc/sh's.
`

// cmdHelp is `help [COMMAND]`: the machine's commands by group, one line
// each, then the prelude's functions; with a name, that command's
// synopsis and what it does (bash's help message and status 1 for a name
// it does not know).
func cmdHelp(c *cmd) int {
	if len(c.args) > 0 && (c.args[0] == "--help" || c.args[0] == "-h") {
		c.args = []string{"help"}
	}
	if len(c.args) > 0 {
		st := 0
		for _, name := range c.args {
			d, ok := commandDocs[name]
			if !ok || strings.HasPrefix(name, "__") {
				fmt.Fprintf(c.errw, "help: no help topics match `%s'.  Try `help' for the machine's commands.\n", name)
				st = 1
				continue
			}
			fmt.Fprintf(c.out, "%s: %s\n    %s (%s)\n", name, d.usage, d.summary, d.group)
		}
		return st
	}
	writeHelp(c.out, c.s.preludeFuncs())
	return 0
}

// writeHelp lists the commands of the commands table by group, then the
// prelude's functions.
func writeHelp(w io.Writer, prelude []string) {
	io.WriteString(w, helpHeader)
	byGroup := map[string][]string{}
	for name := range commands {
		if strings.HasPrefix(name, "__") {
			continue
		}
		g := "other"
		if d, ok := commandDocs[name]; ok {
			g = d.group
		}
		byGroup[g] = append(byGroup[g], name)
	}
	for _, g := range append(slices.Clone(commandGroups), "other") {
		names := byGroup[g]
		if len(names) == 0 {
			continue
		}
		sort.Strings(names)
		fmt.Fprintf(w, "\n %s\n", g)
		for _, n := range names {
			fmt.Fprintf(w, "  %-12s %s\n", n, commandDocs[n].summary)
		}
	}
	if len(prelude) > 0 {
		fmt.Fprintf(w, "\n prelude (xfstests' common/ functions, as shell functions)\n%s", wrapWords(prelude, "  ", 78))
	}
	io.WriteString(w, helpFooter)
}

// wrapWords joins words into lines of at most width columns, each
// starting with indent.
func wrapWords(words []string, indent string, width int) string {
	var b strings.Builder
	line := indent
	for _, w := range words {
		if len(line) > len(indent) && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += w
	}
	if len(line) > len(indent) {
		b.WriteString(line + "\n")
	}
	return b.String()
}

// preludeFuncs are the names of the functions the prelude defines at its
// top level (not those it defines only when run on Linux), in its order.
func (s *Shell) preludeFuncs() []string {
	if s == nil || s.prelude == nil {
		return nil
	}
	var names []string
	for _, st := range s.prelude.Stmts {
		if fd, ok := st.Cmd.(*syntax.FuncDecl); ok {
			names = append(names, fd.Name.Value)
		}
	}
	return names
}

// usageHelp answers a lone --help or -h of a vfslab command: its synopsis
// and what it does, on standard output.
func (c *cmd) usageHelp() bool {
	if len(c.args) != 1 || (c.args[0] != "--help" && c.args[0] != "-h") {
		return false
	}
	d := commandDocs[c.name]
	fmt.Fprintf(c.out, "Usage: %s\n%s\n", d.usage, d.summary)
	return true
}
