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
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/vfs"
)

//go:embed prelude.sh
var preludeSrc string

const usage = `Usage: vfslab sh [--seed N] [--patches SET] [--fs ext4|f2fs] [--device DEV:SIZE]...
                 [--image FILE:DEV [--writable]]... [--save-image DEV:FILE]...
                 [--timeout DURATION] [--memory SIZE] [SCRIPT [ARGS...] | -c COMMANDS]
       vfslab sh [--seed N] [--patches SET] [--fs ext4|f2fs] --xfstests DIR
                 [--results DIR] [-g GROUP[,GROUP]]... [-x GROUP]... [TEST...]

Runs a POSIX shell script on one simulated machine: a memfs root (tmpfs:
no fscrypt) with /mnt/scratch, /tmp, /proc and /sys, scratch block devices /dev/vdb../dev/vde
(SCRATCH_DEV=/dev/vdb, SCRATCH_MNT=/mnt/scratch), /proc/sys/vm/drop_caches,
mkfs.ext4, mkfs.f2fs, mount, umount, su, coreutils, xfs_io, fscryptctl and
keyctl. Nothing touches the host's filesystem but the images named by
--image and --save-image. Every script runs after an
xfstests-style prelude (_scratch_mkfs_encrypted, _scratch_mount,
_add_enckey, ... with TEST_RAW_KEY and TEST_KEY_IDENTIFIER). With no script,
commands are read from standard input (a prompt when it is a terminal:
Tab completes commands and the machine's paths; its history is the host's,
kept in $XDG_STATE_HOME/vfslab/sh_history; 'help' lists the commands).

Options:
  --seed N        seed of the kernel's random source (default 0)
  --patches SET   the kernel's patch variants, id=variant,... (vfslab patches)
  --fs TYPE       $FSTYP, the filesystem the prelude's mkfs makes (default ext4)
  --device DEV:SIZE
                  make the scratch device DEV (vdb..vde, or /dev/vdb..) a disk
                  of SIZE bytes (K, M, G, T: powers of 1024; a multiple of
                  4096, up to 1T). Every scratch device is a sparse disk,
                  8G unless --device sizes it, holding memory only for the
                  blocks written, on which mkfs.ext4 and mkfs.f2fs write
                  the real on-disk format
  --image FILE:DEV
                  attach the host image FILE as the scratch device DEV
                  (/dev/vdb../dev/vde), read from FILE as blocks are needed;
                  read-only, so a mount of it is read-only with mount(8)'s
                  warning. FILE is locked (flock) against other processes
                  while the shell runs
  --writable      attach every --image read-write: umount, sync and the
                  shell's exit write the changed blocks back to FILE in
                  place, atomically: each write-back goes first to a
                  record FILE.vfslab-wal (flushed), then to FILE, then the
                  record is removed, so that after a kill or crash at any
                  moment FILE is as it was before the write-back or after
                  it, never a mix (a leftover record is completed when
                  FILE is attached again); FILE's holes, owner and links
                  stay
  --save-image DEV:FILE
                  write DEV's contents to the host file FILE when the
                  shell exits (after mkfs, an image e2fsck or fsck.f2fs
                  and --image accept): sparse, written beside FILE and
                  renamed over it, so FILE is never half-written
  -c COMMANDS     run COMMANDS instead of a script
  --as-linux      vfslab's own commands (trace, events, dump, patches) say
                  that they are skipped, as on Linux: the output that
                  vfslab linux diff compares with the real kernel's
  --xfstests DIR  run tests of the xfstests checkout DIR as its check does:
                  each TEST (a pattern under tests/: generic/395, ext4/02?)
                  and each -g group's tests (from the tests' group lists),
                  less the -x groups' (default: -g auto), each on a fresh
                  machine, printing check's lines and its summary (Ran:,
                  Not run:, Failures:); exit status 1 when a test failed
  --results DIR   where --xfstests leaves each test's .out.bad, .full,
                  .notrun, .dmesg and check.time (default: a new
                  temporary directory; never inside the checkout)
  -g GROUP        with --xfstests: run the group's tests (DIR/GROUP: from
                  tests/DIR alone)
  -x GROUP        with --xfstests: leave the group's tests out
  --timeout DURATION
                  end the run after DURATION (90s, 5m) with status 124, as
                  timeout(1) does; writable images are written back first
  --memory SIZE   the memory the run may use (512M, 4G; default half the
                  host's RAM): past it the run ends with status 137 and a
                  message, writable images written back first
  -h, --help      this help

Exit status: the script's, 2 for bad usage or a syntax error; with
--xfstests, check's: 0 when no test failed, 1 when one did.
`

// Main is `vfslab sh`: it parses the arguments, boots the machine and
// runs the script, -c COMMANDS, an xfstests test or an interactive session,
// returning the exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return mainLog(args, stdin, stdout, stderr, nil)
}

// lockedWriter serialises writes to a writer that the machine's
// background jobs and pipelines share, as the kernel serialises writes
// to one open file: an *os.File already is, a caller's bytes.Buffer is
// not.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// sameWriter reports whether a and b are one writer (false for writers
// of a type that cannot be compared).
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// lockedWriters wraps stdout and stderr in lockedWriters (one lock when
// they are the same writer); *os.File writers are left as they are, so
// that the terminal is still seen as one.
func lockedWriters(stdout, stderr io.Writer) (io.Writer, io.Writer) {
	_, outFile := stdout.(*os.File)
	_, errFile := stderr.(*os.File)
	if outFile && errFile {
		return stdout, stderr
	}
	mu := &sync.Mutex{}
	wrap := func(w io.Writer, isFile bool, m *sync.Mutex) io.Writer {
		if isFile {
			return w
		}
		return lockedWriter{mu: m, w: w}
	}
	errMu := mu
	if !sameWriter(stdout, stderr) {
		errMu = &sync.Mutex{}
	}
	return wrap(stdout, outFile, mu), wrap(stderr, errFile, errMu)
}

// PreludeSource is the prelude every script runs after.
func PreludeSource() string { return preludeSrc }

// Run is Main that also returns the kernel log the machine kept (what
// dmesg would print at the end), for comparing a run with Linux's.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) (status int, klog []string) {
	status = mainLog(args, stdin, stdout, stderr, &klog)
	return status, klog
}

// mainLog is Main, leaving the kernel log in *klog when klog is not nil.
func mainLog(args []string, stdin io.Reader, stdout, stderr io.Writer, klog *[]string) (status int) {
	stdout, stderr = lockedWriters(stdout, stderr)
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
	var command, xfstests, results string
	var groups, xgroups []string
	hasCommand, writable, asLinux := false, false, false
	var images, saves [][2]string
	sizes := map[string]int64{}
	var lim Limits
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
		case "--device", "-device":
			v, ok := val()
			if !ok {
				return 2
			}
			dev, size, err := ParseDeviceSpec(v)
			if err != nil {
				fmt.Fprintln(stderr, "vfslab sh:", err)
				return 2
			}
			sizes[dev] = size
		case "--writable", "-writable":
			writable = true
		case "--as-linux":
			asLinux = true
		case "--timeout", "--memory":
			v, ok := val()
			if !ok {
				return 2
			}
			if err := lim.set(name, v); err != nil {
				fmt.Fprintln(stderr, "vfslab sh:", err)
				return 2
			}
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
		case "--results", "-results":
			v, ok := val()
			if !ok {
				return 2
			}
			results = v
		case "-g", "-x":
			v, ok := val()
			if !ok {
				return 2
			}
			for _, g := range strings.Split(v, ",") {
				if g == "" {
					continue
				}
				if name == "-g" {
					groups = append(groups, g)
				} else {
					xgroups = append(xgroups, g)
				}
			}
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
	for _, im := range images {
		if _, ok := sizes[im[1]]; ok {
			fmt.Fprintf(stderr, "vfslab sh: --device %s and --image %s:%s name one device\n", im[1], im[0], im[1])
			return 2
		}
	}
	if xfstests == "" && (results != "" || len(groups) > 0 || len(xgroups) > 0) {
		fmt.Fprintln(stderr, "vfslab sh: --results, -g and -x go with --xfstests DIR")
		return 2
	}
	if xfstests != "" {
		if hasCommand || len(images) > 0 || len(saves) > 0 {
			fmt.Fprintln(stderr, "vfslab sh: --xfstests runs each test on a fresh machine of its own: -c, --image and --save-image do not go with it")
			return 2
		}
		// check takes options before the tests; -g and -x may follow
		// them too.
		var tests []string
		for j := 0; j < len(rest); j++ {
			switch a := rest[j]; {
			case (a == "-g" || a == "-x") && j+1 < len(rest):
				for _, g := range strings.Split(rest[j+1], ",") {
					if g == "" {
						continue
					}
					if a == "-g" {
						groups = append(groups, g)
					} else {
						xgroups = append(xgroups, g)
					}
				}
				j++
			case strings.HasPrefix(a, "-"):
				fmt.Fprintf(stderr, "vfslab sh: --xfstests: unknown option %s among the tests; see vfslab sh --help\n", a)
				return 2
			default:
				tests = append(tests, a)
			}
		}
		return XfstestsMain(XfstestsConfig{Dir: xfstests, Fstyp: fstyp, Results: results,
			Tests: tests, Groups: groups, XGroups: xgroups, Patches: set, Seed: seed}, stdout, stderr)
	}
	m, err := NewMachine(set, seed)
	if err != nil {
		fmt.Fprintln(stderr, "vfslab sh: booting the machine:", err)
		return 1
	}
	if klog != nil {
		defer func() { *klog = m.k.Log.Lines() }()
	}
	for _, dev := range scratchDevs {
		if size, ok := sizes[dev]; ok {
			if err := m.SetDeviceSize(dev, size); err != nil {
				m.close()
				fmt.Fprintf(stderr, "vfslab sh: --device %s: %v\n", dev, err)
				return 2
			}
		}
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
	s := &Shell{m: m, fstyp: fstyp, asLinux: asLinux, limits: lim}
	switch {
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
	src := preludeSrc
	if s.xfs != nil {
		src += "\n" + xfstestsPreludeSrc
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "prelude")
	if err != nil {
		return err
	}
	syntax.Walk(f, func(n syntax.Node) bool { rewritePids(n); return true })
	s.prelude = f
	return nil
}

// run runs one script with the prelude before it.
func (s *Shell) run(src io.Reader, name string, stdin io.Reader, stdout, stderr io.Writer, params []string) int {
	if err := s.loadPrelude(); err != nil {
		fmt.Fprintln(stderr, "vfslab sh: prelude:", err)
		return 1
	}
	r, err := s.newRunner(rootIdent, stdin, stdout, stderr, false, params...)
	if err != nil {
		fmt.Fprintln(stderr, "vfslab sh:", err)
		return 1
	}
	ctx, end := s.watch(context.Background(), s.limits, stderr)
	defer end()
	if err := r.Run(ctx, s.prelude); err != nil {
		if _, ok := interpExit(err); !ok {
			fmt.Fprintln(stderr, "vfslab sh: prelude:", err)
			return 1
		}
	}
	return s.finish(s.runFile(ctx, r, src, name, stderr), stderr)
}
