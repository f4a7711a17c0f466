package shell

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/vfs"
)

//go:embed prelude.sh
var preludeSrc string

const usage = `Usage: vfslab sh [--seed N] [--patches SET] [--fs ext4|f2fs] [--image FILE:DEV [--writable]]...
                 [--save-image DEV:FILE]... [SCRIPT [ARGS...] | -c COMMANDS]
       vfslab sh [--seed N] [--patches SET] --xfstests DIR TEST

Runs a POSIX shell script on one simulated machine: a memfs root with
/mnt/scratch, /tmp, /proc and /sys, scratch block devices /dev/vdb../dev/vde
(SCRATCH_DEV=/dev/vdb, SCRATCH_MNT=/mnt/scratch), /proc/sys/vm/drop_caches,
mkfs.ext4, mkfs.f2fs, mount, umount, su, coreutils, xfs_io, fscryptctl and
keyctl. Nothing touches the host's filesystem but the images named by
--image and --save-image. Every script runs after an
xfstests-style prelude (_scratch_mkfs_encrypted, _scratch_mount,
_add_enckey, ... with TEST_RAW_KEY and TEST_KEY_IDENTIFIER). With no script,
commands are read from standard input (a prompt when it is a terminal).

Options:
  --seed N        seed of the kernel's random source (default 0)
  --patches SET   the kernel's patch variants, id=variant,... (vfslab patches)
  --fs TYPE       $FSTYP, the filesystem the prelude's mkfs makes (default ext4)
  --image FILE:DEV
                  attach the host image FILE as the scratch device DEV
                  (/dev/vdb../dev/vde), read into memory; read-only, so a
                  mount of it is read-only with mount(8)'s warning
  --writable      attach every --image read-write: umount, sync and the
                  shell's exit write the device back to its FILE
  --save-image DEV:FILE
                  write DEV's contents to the host file FILE when the
                  shell exits (mkfs and commands in the run make an image)
  -c COMMANDS     run COMMANDS instead of a script
  --xfstests DIR  run test TEST (generic/NNN) of the xfstests checkout DIR
                  and compare its output with TEST.out
  -h, --help      this help

Exit status: the script's, 2 for bad usage or a syntax error.
`

// Main is `vfslab sh`: it parses the arguments, boots the machine and
// runs the script, -c COMMANDS, an xfstests test or an interactive session,
// returning the exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) (status int) {
	// A panic outside the commands (the interpreter's own) is reported as
	// an internal error, never a Go panic reaching the user.
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "vfslab sh: internal error: %v\n", r)
			status = 70
		}
	}()
	var seed uint64
	var set patch.Set
	fstyp := "ext4"
	var command, xfstests string
	hasCommand, writable := false, false
	var images, saves [][2]string
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		val := func() (string, bool) {
			if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "--") {
				return v, true
			}
			if i+1 >= len(args) {
				fmt.Fprintf(stderr, "vfslab sh: option %s needs a value\n", a)
				return "", false
			}
			i++
			return args[i], true
		}
		name, _, _ := strings.Cut(a, "=")
		switch name {
		case "-h", "--help", "-help":
			io.WriteString(stdout, usage)
			return 0
		case "--seed", "-seed":
			v, ok := val()
			if !ok {
				return 2
			}
			n, err := strconv.ParseUint(v, 0, 64)
			if err != nil {
				fmt.Fprintf(stderr, "vfslab sh: invalid seed %q\n", v)
				return 2
			}
			seed = n
		case "--patches", "-patches":
			v, ok := val()
			if !ok {
				return 2
			}
			s, err := patch.Parse(v)
			if err != nil {
				fmt.Fprintln(stderr, "vfslab sh:", err)
				return 2
			}
			set = s
		case "--fs", "-fs":
			v, ok := val()
			if !ok {
				return 2
			}
			if fst, err := vfs.GetFsType(v); err != nil || !fst.RequiresDev {
				var names []string
				for _, f := range vfs.Filesystems() {
					if f.RequiresDev {
						names = append(names, f.Name)
					}
				}
				fmt.Fprintf(stderr, "vfslab sh: unknown filesystem %q; valid: %s\n", v, strings.Join(names, ", "))
				return 2
			}
			fstyp = v
		case "--image", "-image":
			v, ok := val()
			if !ok {
				return 2
			}
			path, dev, err := ParseImageSpec(v)
			if err != nil {
				fmt.Fprintln(stderr, "vfslab sh:", err)
				return 2
			}
			for _, im := range images {
				if im[1] == dev {
					fmt.Fprintf(stderr, "vfslab sh: --image %s: %s is attached twice\n", v, dev)
					return 2
				}
			}
			images = append(images, [2]string{path, dev})
		case "--writable", "-writable":
			writable = true
		case "--save-image", "-save-image":
			v, ok := val()
			if !ok {
				return 2
			}
			dev, path, err := ParseSaveSpec(v)
			if err != nil {
				fmt.Fprintln(stderr, "vfslab sh:", err)
				return 2
			}
			saves = append(saves, [2]string{dev, path})
		case "--xfstests":
			v, ok := val()
			if !ok {
				return 2
			}
			xfstests = v
		case "-c":
			v, ok := val()
			if !ok {
				return 2
			}
			command, hasCommand = v, true
		case "--":
			i++
			goto done
		default:
			if strings.HasPrefix(a, "-") && a != "-" {
				fmt.Fprintf(stderr, "vfslab sh: unknown option %s; see vfslab sh --help\n", a)
				return 2
			}
			goto done
		}
	}
done:
	rest := args[i:]
	m, err := NewMachine(set, seed)
	if err != nil {
		fmt.Fprintln(stderr, "vfslab sh: booting the machine:", err)
		return 1
	}
	for _, im := range images {
		if err := m.AttachImage(im[1], im[0], writable); err != nil {
			m.close()
			fmt.Fprintf(stderr, "vfslab sh: --image %s:%s: %v\n", im[0], im[1], err)
			return 2
		}
	}
	for _, sv := range saves {
		if err := m.SaveImageAtClose(sv[0], sv[1]); err != nil {
			m.close()
			fmt.Fprintln(stderr, "vfslab sh: --save-image:", err)
			return 2
		}
	}
	// The images are written back (and saved) when the shell ends.
	defer func() {
		if err := m.Close(); err != nil {
			fmt.Fprintln(stderr, "vfslab sh:", err)
			if status == 0 {
				status = 1
			}
		}
	}()
	s := &Shell{m: m, fstyp: fstyp}
	switch {
	case xfstests != "":
		if len(rest) != 1 {
			fmt.Fprintln(stderr, "vfslab sh: --xfstests DIR needs one TEST (generic/NNN)")
			return 2
		}
		return s.runXfstest(xfstests, rest[0], stdout, stderr)
	case hasCommand:
		return s.run(strings.NewReader(command), "-c", stdin, stdout, stderr, rest)
	case len(rest) > 0 && rest[0] != "-":
		// The script is a host file: the one thing read from the host.
		src, err := os.ReadFile(rest[0])
		if err != nil {
			fmt.Fprintf(stderr, "vfslab sh: %s: %v\n", rest[0], err)
			return 2
		}
		return s.run(bytes.NewReader(src), rest[0], stdin, stdout, stderr, rest[1:])
	}
	if f, ok := stdin.(*os.File); ok && isTerminal(f) {
		return s.interactive(f, stdout, stderr)
	}
	src, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintln(stderr, "vfslab sh:", err)
		return 1
	}
	return s.run(bytes.NewReader(src), "stdin", strings.NewReader(""), stdout, stderr, nil)
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// loadPrelude parses the prelude once per shell.
func (s *Shell) loadPrelude() error {
	if s.prelude != nil {
		return nil
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(preludeSrc), "prelude")
	if err != nil {
		return err
	}
	s.prelude = f
	return nil
}

// run runs one script with the prelude before it.
func (s *Shell) run(src io.Reader, name string, stdin io.Reader, stdout, stderr io.Writer, params []string) int {
	if err := s.loadPrelude(); err != nil {
		fmt.Fprintln(stderr, "vfslab sh: prelude:", err)
		return 1
	}
	r, err := s.newRunner(stdin, stdout, stderr, false, params...)
	if err != nil {
		fmt.Fprintln(stderr, "vfslab sh:", err)
		return 1
	}
	ctx := context.Background()
	if err := r.Run(ctx, s.prelude); err != nil {
		if _, ok := interpExit(err); !ok {
			fmt.Fprintln(stderr, "vfslab sh: prelude:", err)
			return 1
		}
	}
	return s.runFile(ctx, r, src, name, stderr)
}
