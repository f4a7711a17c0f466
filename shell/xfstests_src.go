package shell

import (
	"fmt"
	"io"
	"path"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// xfstestsPrograms are the helper programs of xfstests' src/ that the
// model provides, run as $here/src/NAME (the prelude's $here is /).
var xfstestsPrograms = map[string]func(c *cmd) int{
	"/src/renameat2": cmdRenameat2,
}

func init() {
	for name, fn := range xfstestsPrograms {
		commands[name] = fn
	}
}

// lookupProgram finds a command named by a path ("//src/renameat2", as
// "$here/src/renameat2" expands) under its cleaned name.
func lookupProgram(name string) (func(c *cmd) int, bool) {
	if fn, ok := commands[name]; ok {
		return fn, true
	}
	if len(name) > 0 && name[0] == '/' {
		fn, ok := xfstestsPrograms[path.Clean(name)]
		return fn, ok
	}
	return nil, false
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
				fmt.Fprintf(c.errw, renameat2Usage, c.name)
				return 1
			}
		case p1 == "":
			p1 = a
		case p2 == "":
			p2 = a
		default:
			fmt.Fprintf(c.errw, renameat2Usage, c.name)
			return 1
		}
	}
	if !test && (p1 == "" || p2 == "") {
		fmt.Fprintf(c.errw, renameat2Usage, c.name)
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
