package shell

import (
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// xfstestsPrograms are the helper programs of xfstests' src/ that the
// machine has, run as $here/src/NAME (Machine.srcDir: /src in a plain
// session, whose $here is /; the checkout's src/ under --xfstests).
var xfstestsPrograms = map[string]func(c *cmd) int{
	"renameat2": cmdRenameat2,
}

// binDirs are the directories of $PATH: a command of the machine is
// found there by its path (/usr/bin/keyctl), as common/config's
// set_prog_path records it.
var binDirs = map[string]bool{"/bin": true, "/sbin": true, "/usr/bin": true, "/usr/sbin": true, "/usr/local/bin": true, "/usr/local/sbin": true}

// lookupProgram finds a command by its name or its path: /usr/bin/NAME
// (and the other directories of $PATH) for the machine's commands,
// $here/src/NAME for xfstests' programs ("$here/src/renameat2" expands
// to "//src/renameat2" when $here is /).
func (s *Shell) lookupProgram(name string) (func(c *cmd) int, bool) {
	if !strings.Contains(name, "/") {
		fn, ok := commands[name]
		return fn, ok
	}
	return s.m.program(name)
}

// program returns the program at path p: a command of the machine in a
// directory of $PATH or an xfstests program in srcDir.
func (m *Machine) program(p string) (func(c *cmd) int, bool) {
	if !path.IsAbs(p) {
		return nil, false
	}
	dir, base := path.Split(path.Clean(p))
	dir = path.Clean(dir)
	if dir == m.srcDir() {
		fn, ok := xfstestsPrograms[base]
		return fn, ok
	}
	if binDirs[dir] && !strings.HasPrefix(base, "__") {
		fn, ok := commands[base]
		return fn, ok
	}
	return nil, false
}

// srcDir is where the machine's xfstests programs are: $here/src.
func (m *Machine) srcDir() string {
	if m.here == "" {
		return "/src"
	}
	return path.Join(m.here, "src")
}

// programStat is what stat(2) says of a program's path: an executable
// file, so that `[ -x /usr/bin/keyctl ]` (_require_command) and `[ -x
// $here/src/NAME ]` (_require_test_program) see the programs the
// machine has.
func (m *Machine) programStat(p string) (vfs.Stat, bool) {
	if _, ok := m.program(p); !ok {
		return vfs.Stat{}, false
	}
	return vfs.Stat{Mode: vfs.S_IFREG | 0o755, Nlink: 1, Ino: 4}, true
}

const renameat2Usage = `usage: %s [-t] [-n|-x|-w] path1 path2
  -t  test
  -n  noreplace
  -x  exchange
  -w  whiteout
`

// cmdRenameat2 is xfstests' src/renameat2: renameat2(2) with
// RENAME_NOREPLACE (-n), RENAME_EXCHANGE (-x) or RENAME_WHITEOUT (-w); a
// failure is reported as perror("") does (the message alone), with EEXIST
// shown as ENOTEMPTY for a plain or whiteout rename; -t only probes for
// the flags (status 1 when they are unsupported).
func cmdRenameat2(c *cmd) int {
	var p1, p2 string
	var flags uint32
	test := false
	for _, a := range c.args {
		switch {
		case len(a) > 0 && a[0] == '-':
			switch a[1:min(2, len(a))] {
			case "t":
				test = true
			case "n":
				flags |= vfs.RENAME_NOREPLACE
			case "x":
				flags |= vfs.RENAME_EXCHANGE
			case "w":
				flags |= vfs.RENAME_WHITEOUT
			default:
				fmt.Fprintf(c.errw, renameat2Usage, c.argv0)
				return 1
			}
		case p1 == "":
			p1 = a
		case p2 == "":
			p2 = a
		default:
			fmt.Fprintf(c.errw, renameat2Usage, c.argv0)
			return 1
		}
	}
	if !test && (p1 == "" || p2 == "") {
		fmt.Fprintf(c.errw, renameat2Usage, c.argv0)
		return 1
	}
	sp, tp := c.abs(p1), c.abs(p2)
	_, err := c.sys(fmt.Sprintf("renameat2(%q, %q, %d)", sp, tp, flags), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
		return 0, pr.Rename(t, sp, tp, flags)
	})
	if err == nil {
		return 0
	}
	e, _ := errno.Of(err)
	if test {
		if e == errno.ENOSYS || e == errno.EINVAL {
			return 1
		}
		return 0
	}
	if e == errno.EEXIST && (flags == 0 || flags&vfs.RENAME_WHITEOUT != 0) {
		err = errno.ENOTEMPTY
	}
	io.WriteString(c.errw, strerror(err)+"\n")
	return 1
}

// revalidateRounds is how many rounds t_encrypted_d_revalidate runs.
const revalidateRounds = 2000

// cmdTEncryptedDRevalidate is xfstests' src/t_encrypted_d_revalidate DIR:
// in DIR (an encrypted directory, its key present) it makes "dir", stats
// "dir/file", which must be ENOENT, and removes "dir", over and over,
// while other threads stat "dir/file" too; a stat that succeeds or
// fails otherwise is "ERROR: ..." and status 1, the end "t_encrypted_d_
// revalidate finished". The program races a 10-second alarm with
// threads on every CPU; the machine has one task that runs one syscall
// at a time, so the threads' stats come between the loop's syscalls,
// and the loop runs revalidateRounds times.
func cmdTEncryptedDRevalidate(c *cmd) int {
	if len(c.args) != 1 {
		fmt.Fprintf(c.errw, "Usage: %s DIR\n", c.argv0)
		return 2
	}
	base := c.abs(c.args[0])
	if st, err := c.stat(base, true); err != nil || st.Mode&vfs.S_IFMT != vfs.S_IFDIR {
		if err == nil {
			err = errno.ENOTDIR
		}
		fmt.Fprintf(c.errw, "ERROR: chdir: %s\n", strerror(err))
		return 1
	}
	dir, file := base+"/dir", base+"/dir/file"
	die := func(what string, err error) int {
		if err == nil {
			fmt.Fprintf(c.errw, "ERROR: %s\n", what)
		} else {
			fmt.Fprintf(c.errw, "ERROR: %s: %s\n", what, strerror(err))
		}
		return 1
	}
	statENOENT := func() int {
		_, err := c.stat(file, true)
		if err == nil {
			return die("stat should have failed", nil)
		}
		if e, ok := errno.Of(err); !ok || e != errno.ENOENT {
			return die("stat", err)
		}
		return 0
	}
	for i := 0; i < revalidateRounds; i++ {
		if _, err := c.sys(fmt.Sprintf("mkdir(%q, 0777)", dir), func(t *kernel.Task, p *vfs.Proc) (int64, error) {
			return 0, p.Mkdir(t, dir, 0o777)
		}); err != nil {
			return die("mkdir", err)
		}
		// A thread's stat, then the loop's own, then a thread's again
		// before the rmdir.
		for j := 0; j < 3; j++ {
			if st := statENOENT(); st != 0 {
				return st
			}
		}
		if _, err := c.sys(fmt.Sprintf("rmdir(%q)", dir), func(t *kernel.Task, p *vfs.Proc) (int64, error) {
			return 0, p.Rmdir(t, dir)
		}); err != nil {
			return die("rmdir", err)
		}
		if st := statENOENT(); st != 0 {
			return st
		}
	}
	fmt.Fprintln(c.out, "t_encrypted_d_revalidate finished")
	return 0
}

func init() {
	xfstestsPrograms["t_encrypted_d_revalidate"] = cmdTEncryptedDRevalidate
}
