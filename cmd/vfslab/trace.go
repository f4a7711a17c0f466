package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/memfs"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/vfs"
)

func init() {
	register(&command{
		name:    "trace",
		summary: "run one syscall on a small in-memory system and print its function_graph trace through the VFS, fscrypt and the Crypto API",
		run:     runTrace,
	})
}

const traceUsage = `Usage: vfslab trace [flags] SYSCALL [ARGS...]

Runs one syscall on a small machine whose root filesystem is memfs (an
in-memory filesystem that supports fscrypt the way ext4 does), ext4 or f2fs
(--fs; their directories are byte-exact blocks), with an ftrace-style
function_graph tracer attached to the calling task, and prints the trace:
the syscall entry, the path walk, the VFS and filesystem operations, the
fscrypt hooks and entry points, and the Crypto API calls, nested as they
ran. Then it prints the syscall's result.

The machine holds:
  /tmp/hello       a file ("hello world\n")
  /tmp/dir/        a directory
  /tmp/link        a symlink to hello
  /secret/         an encrypted directory (v2 policy, AES-256-XTS and
                   AES-256-CTS-CBC; its key is added unless --nokey)
  /secret/note     a file in it ("top secret\n")

Syscalls:
  open PATH [FLAGS]        FLAGS: comma list of rdonly, wronly, rdwr, creat,
                           excl, trunc, directory, nofollow, append
  stat PATH | lstat PATH
  read PATH [N]            open (untraced), read N bytes (default 64), close
  write PATH DATA          open O_WRONLY|O_CREAT (untraced), write, close
  getdents PATH            open the directory (untraced), getdents64, close
  mkdir PATH | rmdir PATH | unlink PATH | readlink PATH
  rename OLD NEW [FLAGS]   FLAGS: comma list of noreplace, exchange, whiteout
  link OLD NEW | symlink TARGET PATH | truncate PATH LENGTH

Flags:
`

func runTrace(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("trace", flag.ContinueOnError)
	fs.SetOutput(stderr)
	patches := fs.String("patches", "", "patch variants as id=variant,... (e.g. fscrypt-file-open=v2)")
	fsType := fs.String("fs", "memfs", "root filesystem: memfs, ext4 or f2fs")
	cold := fs.Bool("cold", false, "drop the unused dentries first, so that the walk asks the filesystem (->lookup)")
	nokey := fs.Bool("nokey", false, "remove /secret's key first (names become no-key names)")
	times := fs.Bool("times", true, "print each function's duration")
	showEvents := fs.Bool("events", false, "print the events the syscall counted")
	fs.Usage = func() {
		fmt.Fprint(stderr, traceUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	set, err := patch.Parse(*patches)
	if err != nil {
		fmt.Fprintln(stderr, "vfslab trace:", err)
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	boot, ok := traceBoots[*fsType]
	if !ok {
		fmt.Fprintf(stderr, "vfslab trace: unknown filesystem %q; valid: memfs, ext4, f2fs\n", *fsType)
		return 2
	}
	m, err := newTraceMachine(set, *nokey, boot)
	if err != nil {
		fmt.Fprintln(stderr, "vfslab trace: setting up the machine:", err)
		return 1
	}
	defer m.close()
	if *cold {
		dcache.ShrinkDcacheSB(m.t, m.sys.Dcache)
	}
	call, err := m.prepare(fs.Args())
	if err != nil {
		var ue *usageError
		if errors.As(err, &ue) {
			fmt.Fprintln(stderr, "vfslab trace:", ue.msg)
			return 2
		}
		fmt.Fprintln(stderr, "vfslab trace:", err)
		return 1
	}
	m.t.EnableCounting()
	before := m.t.Ev.Clone()
	m.t.Tracer = &kernel.Tracer{}
	result := call.run()
	tr := m.t.Tracer
	m.t.Tracer = nil
	counted := m.t.Ev.Sub(before)
	call.cleanup()
	var b bytes.Buffer
	tr.Print(&b, *times)
	stdout.Write(b.Bytes())
	fmt.Fprintf(stdout, "%s = %s\n", call.desc, result)
	if *showEvents {
		fmt.Fprintf(stdout, "events: %v\n", counted)
	}
	for _, line := range m.k.Log.Lines() {
		fmt.Fprintf(stdout, "dmesg: %s\n", line)
	}
	return 0
}

// traceMachine is the small system the traced syscall runs on.
type traceMachine struct {
	k   *kernel.Kernel
	t   *kernel.Task
	sys *vfs.System
	p   *vfs.Proc
}

// traceBoots make the machine's root filesystem, with default options.
var traceBoots = map[string]func(*kernel.Task, vfs.Config) (*vfs.System, *vfs.Proc, error){
	"memfs": func(t *kernel.Task, cfg vfs.Config) (*vfs.System, *vfs.Proc, error) { return memfs.Boot(t, cfg, nil) },
	"ext4":  func(t *kernel.Task, cfg vfs.Config) (*vfs.System, *vfs.Proc, error) { return ext4.Boot(t, cfg, nil) },
	"f2fs":  func(t *kernel.Task, cfg vfs.Config) (*vfs.System, *vfs.Proc, error) { return f2fs.Boot(t, cfg, nil) },
}

func newTraceMachine(set patch.Set, nokey bool, boot func(*kernel.Task, vfs.Config) (*vfs.System, *vfs.Proc, error)) (*traceMachine, error) {
	k := kernel.NewWith(kernel.Config{Patches: set})
	t := k.NewTask("vfslab-trace")
	sys, p, err := boot(t, vfs.Config{})
	if err != nil {
		return nil, err
	}
	m := &traceMachine{k: k, t: t, sys: sys, p: p}
	write := func(path, data string) error {
		fd, err := p.Open(t, path, vfs.O_CREAT|vfs.O_WRONLY|vfs.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		defer p.Close(t, fd)
		_, err = p.Write(t, fd, []byte(data))
		return err
	}
	steps := []func() error{
		func() error { return p.Mkdir(t, "/tmp", 0o1777) },
		func() error { return write("/tmp/hello", "hello world\n") },
		func() error { return p.Mkdir(t, "/tmp/dir", 0o755) },
		func() error { return p.Symlink(t, "hello", "/tmp/link") },
		func() error { return p.Mkdir(t, "/secret", 0o700) },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return nil, err
		}
	}
	raw := make([]byte, 64)
	for i := range raw {
		raw[i] = byte(i + 1)
	}
	id, err := p.EncryptDir(t, "/secret", raw, 0, 0)
	if err != nil {
		return nil, err
	}
	if err := write("/secret/note", "top secret\n"); err != nil {
		return nil, err
	}
	if nokey {
		fd, err := p.Open(t, "/", vfs.O_RDONLY, 0)
		if err != nil {
			return nil, err
		}
		_, err = p.RemoveEncryptionKey(t, fd, id)
		p.Close(t, fd)
		if err != nil {
			return nil, err
		}
	}
	k.Log = &kernel.Log{}
	return m, nil
}

func (m *traceMachine) close() {
	m.p.Exit(m.t)
	m.t.Exit()
}

// traceCall is a prepared syscall: run is traced, cleanup is not.
type traceCall struct {
	desc    string
	run     func() string
	cleanup func()
}

func result(n int64, err error) string {
	if err != nil {
		if e, ok := errno.Of(err); ok {
			return "-1 " + errno.Name(e)
		}
		return "-1 (" + err.Error() + ")"
	}
	return strconv.FormatInt(n, 10)
}

var openFlagNames = map[string]int{
	"rdonly": vfs.O_RDONLY, "wronly": vfs.O_WRONLY, "rdwr": vfs.O_RDWR, "creat": vfs.O_CREAT,
	"excl": vfs.O_EXCL, "trunc": vfs.O_TRUNC, "directory": vfs.O_DIRECTORY,
	"nofollow": vfs.O_NOFOLLOW, "append": vfs.O_APPEND,
}

var renameFlagNames = map[string]int{
	"noreplace": vfs.RENAME_NOREPLACE, "exchange": vfs.RENAME_EXCHANGE, "whiteout": vfs.RENAME_WHITEOUT,
}

func parseFlagList(s string, names map[string]int) (int, []string, error) {
	if s == "" {
		return 0, nil, nil
	}
	v := 0
	var shown []string
	for _, f := range strings.Split(s, ",") {
		bit, ok := names[strings.ToLower(f)]
		if !ok {
			return 0, nil, &usageError{fmt.Sprintf("unknown flag %q", f)}
		}
		v |= bit
		shown = append(shown, strings.ToUpper(f))
	}
	return v, shown, nil
}

func (m *traceMachine) prepare(args []string) (*traceCall, error) {
	t, p := m.t, m.p
	nop := func() {}
	need := func(n int) error {
		if len(args)-1 < n {
			return &usageError{fmt.Sprintf("%s needs %d argument(s); see vfslab trace --help", args[0], n)}
		}
		return nil
	}
	switch args[0] {
	case "open":
		if err := need(1); err != nil {
			return nil, err
		}
		flagArg := ""
		if len(args) > 2 {
			flagArg = args[2]
		}
		flags, shown, err := parseFlagList(flagArg, openFlagNames)
		if err != nil {
			return nil, err
		}
		if len(shown) == 0 {
			shown = []string{"RDONLY"}
		}
		fd := -1
		return &traceCall{
			desc: fmt.Sprintf("open(%q, O_%s)", args[1], strings.Join(shown, "|O_")),
			run: func() string {
				var err error
				fd, err = p.Open(t, args[1], flags, 0o644)
				return result(int64(fd), err)
			},
			cleanup: func() {
				if fd >= 0 {
					p.Close(t, fd)
				}
			},
		}, nil
	case "stat", "lstat":
		if err := need(1); err != nil {
			return nil, err
		}
		return &traceCall{desc: fmt.Sprintf("%s(%q)", args[0], args[1]), cleanup: nop, run: func() string {
			var st vfs.Stat
			var err error
			if args[0] == "stat" {
				st, err = p.Stat(t, args[1])
			} else {
				st, err = p.Lstat(t, args[1])
			}
			if err != nil {
				return result(0, err)
			}
			return "0 (" + st.String() + ")"
		}}, nil
	case "read", "getdents":
		if err := need(1); err != nil {
			return nil, err
		}
		n := 64
		if len(args) > 2 {
			v, err := strconv.Atoi(args[2])
			if err != nil || v < 0 {
				return nil, &usageError{fmt.Sprintf("bad length %q", args[2])}
			}
			n = v
		}
		flags := vfs.O_RDONLY
		if args[0] == "getdents" {
			flags |= vfs.O_DIRECTORY
			n = 4096
		}
		fd, err := p.Open(t, args[1], flags, 0)
		if err != nil {
			return nil, fmt.Errorf("open(%q): %w", args[1], err)
		}
		buf := make([]byte, n)
		call := &traceCall{cleanup: func() { p.Close(t, fd) }}
		if args[0] == "read" {
			call.desc = fmt.Sprintf("read(%d, buf, %d)", fd, n)
			call.run = func() string {
				k, err := p.Read(t, fd, buf)
				if err != nil {
					return result(0, err)
				}
				return fmt.Sprintf("%d %q", k, buf[:k])
			}
		} else {
			call.desc = fmt.Sprintf("getdents64(%d, buf, %d)", fd, n)
			call.run = func() string {
				k, err := p.Getdents64(t, fd, buf)
				if err != nil {
					return result(0, err)
				}
				ds, _ := vfs.ParseDirents(buf[:k])
				var names []string
				for _, d := range ds {
					names = append(names, strconv.Quote(d.Name))
				}
				return fmt.Sprintf("%d [%s]", k, strings.Join(names, " "))
			}
		}
		return call, nil
	case "write":
		if err := need(2); err != nil {
			return nil, err
		}
		fd, err := p.Open(t, args[1], vfs.O_WRONLY|vfs.O_CREAT, 0o644)
		if err != nil {
			return nil, fmt.Errorf("open(%q): %w", args[1], err)
		}
		return &traceCall{desc: fmt.Sprintf("write(%d, %q, %d)", fd, args[2], len(args[2])), cleanup: func() { p.Close(t, fd) },
			run: func() string { k, err := p.Write(t, fd, []byte(args[2])); return result(int64(k), err) }}, nil
	case "mkdir", "rmdir", "unlink":
		if err := need(1); err != nil {
			return nil, err
		}
		fn := map[string]func() error{
			"mkdir":  func() error { return p.Mkdir(t, args[1], 0o755) },
			"rmdir":  func() error { return p.Rmdir(t, args[1]) },
			"unlink": func() error { return p.Unlink(t, args[1]) },
		}[args[0]]
		return &traceCall{desc: fmt.Sprintf("%s(%q)", args[0], args[1]), cleanup: nop, run: func() string { return result(0, fn()) }}, nil
	case "readlink":
		if err := need(1); err != nil {
			return nil, err
		}
		return &traceCall{desc: fmt.Sprintf("readlink(%q)", args[1]), cleanup: nop, run: func() string {
			buf := make([]byte, vfs.PATH_MAX)
			k, err := p.Readlink(t, args[1], buf)
			if err != nil {
				return result(0, err)
			}
			return fmt.Sprintf("%d %q", k, buf[:k])
		}}, nil
	case "rename":
		if err := need(2); err != nil {
			return nil, err
		}
		flagArg := ""
		if len(args) > 3 {
			flagArg = args[3]
		}
		flags, shown, err := parseFlagList(flagArg, renameFlagNames)
		if err != nil {
			return nil, err
		}
		desc := fmt.Sprintf("renameat2(%q, %q, 0)", args[1], args[2])
		if len(shown) > 0 {
			desc = fmt.Sprintf("renameat2(%q, %q, RENAME_%s)", args[1], args[2], strings.Join(shown, "|RENAME_"))
		}
		return &traceCall{desc: desc, cleanup: nop, run: func() string { return result(0, p.Rename(t, args[1], args[2], uint32(flags))) }}, nil
	case "link", "symlink":
		if err := need(2); err != nil {
			return nil, err
		}
		return &traceCall{desc: fmt.Sprintf("%s(%q, %q)", args[0], args[1], args[2]), cleanup: nop, run: func() string {
			if args[0] == "link" {
				return result(0, p.Link(t, args[1], args[2]))
			}
			return result(0, p.Symlink(t, args[1], args[2]))
		}}, nil
	case "truncate":
		if err := need(2); err != nil {
			return nil, err
		}
		n, err := strconv.ParseInt(args[2], 10, 64)
		if err != nil {
			return nil, &usageError{fmt.Sprintf("bad length %q", args[2])}
		}
		return &traceCall{desc: fmt.Sprintf("truncate(%q, %d)", args[1], n), cleanup: nop, run: func() string { return result(0, p.Truncate(t, args[1], n)) }}, nil
	}
	return nil, &usageError{fmt.Sprintf("unknown syscall %q; see vfslab trace --help", args[0])}
}
