package shell

import (
	"fmt"
	"strconv"

	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// cmdMkfifo is mkfifo(1) [-m MODE] NAME...: mknod(2) with S_IFIFO (mode
// 0666 less the umask, 022, unless -m).
func cmdMkfifo(c *cmd) int {
	opts, args, ok := c.flags("", "mZ", "[OPTION]... NAME...")
	if !ok {
		return 1
	}
	if len(args) == 0 {
		c.errf("missing operand")
		fmt.Fprintf(c.errw, "Try 'mkfifo --help' for more information.\n")
		return 1
	}
	mode, ok := c.mknodMode(opts['m'])
	if !ok {
		return 1
	}
	st := 0
	for _, a := range args {
		if err := c.mknod(a, vfs.S_IFIFO|mode, 0); err != nil {
			c.errf("cannot create fifo '%s': %s", a, strerror(err))
			st = 1
		}
	}
	return st
}

// cmdMknod is mknod(1) [-m MODE] NAME TYPE [MAJOR MINOR]: TYPE p (FIFO),
// b (block device), c or u (character device).
func cmdMknod(c *cmd) int {
	opts, args, ok := c.flags("", "mZ", "[OPTION]... NAME TYPE [MAJOR MINOR]")
	if !ok {
		return 1
	}
	if len(args) < 2 {
		if len(args) == 0 {
			c.errf("missing operand")
		} else {
			c.errf("missing operand after '%s'", args[len(args)-1])
		}
		fmt.Fprintf(c.errw, "Try 'mknod --help' for more information.\n")
		return 1
	}
	mode, ok := c.mknodMode(opts['m'])
	if !ok {
		return 1
	}
	var typ uint32
	switch args[1] {
	case "p":
		typ = vfs.S_IFIFO
	case "b":
		typ = vfs.S_IFBLK
	case "c", "u":
		typ = vfs.S_IFCHR
	default:
		c.errf("invalid device type '%s'", args[1])
		fmt.Fprintf(c.errw, "Try 'mknod --help' for more information.\n")
		return 1
	}
	var dev uint32
	if typ == vfs.S_IFIFO {
		if len(args) != 2 {
			c.errf("Fifos do not have major and minor device numbers.")
			fmt.Fprintf(c.errw, "Try 'mknod --help' for more information.\n")
			return 1
		}
	} else {
		if len(args) != 4 {
			c.errf("missing operand after '%s'", args[len(args)-1])
			fmt.Fprintf(c.errw, "Special files require major and minor device numbers.\n")
			fmt.Fprintf(c.errw, "Try 'mknod --help' for more information.\n")
			return 1
		}
		major, err1 := strconv.ParseUint(args[2], 0, 32)
		minor, err2 := strconv.ParseUint(args[3], 0, 32)
		if err1 != nil || major > 0xfff {
			c.errf("invalid major device number '%s'", args[2])
			return 1
		}
		if err2 != nil || minor > 0xfffff {
			c.errf("invalid minor device number '%s'", args[3])
			return 1
		}
		// new_encode_dev.
		dev = uint32(minor&0xff | major<<8 | (minor&^0xff)<<12)
	}
	if err := c.mknod(args[0], typ|mode, dev); err != nil {
		c.errf("%s: %s", args[0], strerror(err))
		return 1
	}
	return 0
}

// mknodMode parses -m (octal or symbolic, over a=rw), or gives 0666 less
// the umask.
func (c *cmd) mknodMode(m string) (uint32, bool) {
	if m == "" {
		return 0o644, true
	}
	mode, ok := applyMode(m, 0o666, false)
	if !ok {
		c.errf("invalid mode")
		return 0, false
	}
	return mode, true
}

// mknod is mknod(2).
func (c *cmd) mknod(name string, mode, dev uint32) error {
	p := c.abs(name)
	_, err := c.sys(fmt.Sprintf("mknodat(AT_FDCWD, %q, %#o, %#x)", p, mode, dev), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
		return 0, pr.Mknod(t, p, mode, dev)
	})
	return err
}
