package main

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/shell"
	"github.com/vfslab/vfslab/teach"
	"github.com/vfslab/vfslab/vfs"
)

const traceLong = `Runs one syscall on a small machine whose root filesystem is ext4
(the default), f2fs (--fs; their directories are byte-exact blocks) or
memfs (an in-memory filesystem that is tmpfs: no fscrypt, so no encrypted
directories and no fscrypt_file_open), with an ftrace-style
function_graph tracer attached to the calling task, and prints the trace:
the syscall entry, the path walk, the VFS and filesystem operations, the
fscrypt hooks and entry points, and the Crypto API calls, nested as they
ran. Then it prints the syscall's result (an errno the syscall returns is
its result, exit status 0).

With --image FILE the root filesystem is that ext4 or f2fs image instead
(its type from --fs, or what blkid finds on it), read into memory so that
the syscall may change the copy but never the file, and none of the files
below is made.

The machine holds (the encrypted directories on ext4 and f2fs only):
  /tmp/hello       a file ("hello world\n")
  /tmp/dir/        a directory
  /tmp/link        a symlink to hello
  /secret/         an encrypted directory (v2 policy, AES-256-XTS and
                   AES-256-CTS-CBC; its key is added unless --no-key)
  /secret/note     a file in it ("top secret\n")
  /v1secret/       an encrypted directory with a v1 policy (AES-256-XTS,
                   AES-256-CTS-CBC; its key added by descriptor, removed
                   with --no-key): each file's key is derived from the
                   master key with AES-128-ECB under the file's nonce
                   (seed 002, fscrypt-v1-kdf; --cold shows the derivation)
  /v1secret/note   a file in it ("v1 secret\n")
  /cisecret/       with --fs ext4 or f2fs (mkfs'd with casefold): a
                   casefolded encrypted directory (chattr +F, then
                   /secret's policy and key), where seed 001's f2fs
                   lookup differs, e.g.
                   vfslab trace --fs f2fs --cold --diff base f2fs-lookup-prealloc=v2 stat /cisecret/NOTE.TXT
  /cisecret/Note.txt  a file in it ("casefolded secret\n")

Syscalls:
  open PATH [FLAGS]        FLAGS: comma list of rdonly, wronly, rdwr, creat,
                           excl, trunc, directory, nofollow, append
  stat PATH | lstat PATH
  read PATH [N]            open (untraced), read N bytes (default 64,
                           0..1048576), close: the filesystem's ->read_iter
                           (memfs and f2fs read each page with ->read_folio,
                           decrypting it in place; ext4 reads through the
                           page cache: filemap_read, readahead, its bios
                           and their completion, the decryption where the
                           crypto-bio variant runs it; with --loop the bios
                           go to the loop device's worker; the kworkers'
                           trees follow)
  readbio PATH             an encrypted file's first page read the way
                           ext4 and f2fs read it: a bio submitted, completed
                           by the block device task, decrypted by
                           fscrypt_decrypt_bio as the crypto-bio variant says
                           (on the fscrypt read workqueue, or inline); the
                           device and workqueue tasks' trees follow
  write PATH DATA          open O_WRONLY|O_CREAT (untraced), write, close
  getdents PATH            open the directory (untraced), getdents64, close
  mkdir PATH | rmdir PATH | unlink PATH | readlink PATH
  rename OLD NEW [FLAGS]   FLAGS: comma list of noreplace, exchange, whiteout
  link OLD NEW | symlink TARGET PATH | truncate PATH LENGTH

Static inline helpers in which a patch's difference lives
(skcipher_request_alloc/free, SKCIPHER_REQUEST_ON_STACK, rcu_read_lock,
crypto_wait_req, fscrypt_encrypt_symlink) are nodes marked /* inline */:
function_graph itself would not show them.

--diff A B runs the syscall twice, under the variant sets A and B (each
id=variant,... over --patches, or base), on the modelled clock and
without durations, and prints a unified diff of the two trees (with
--side-by-side, two columns as diff -y prints them), e.g.
  vfslab trace --diff fscrypt-file-open=base fscrypt-file-open=v2 open /tmp/hello
  vfslab trace --cold --diff base fscrypt-fname-onstack=v2 stat /secret/note
  vfslab trace --cold --diff base fscrypt-v1-kdf=aeslib open /v1secret/note
  vfslab trace --diff crypto-bio=workqueue crypto-bio=bio readbio /secret/note
  vfslab trace --fs ext4 --loop --cold --diff crypto-bio=workqueue crypto-bio=bio read /secret/note

Flags may come before or after the syscall; put DATA that starts with '-'
after '--'.`

// maxTraceRead bounds read's N: the buffer is allocated before the call.
const maxTraceRead = 1 << 20

// traceImageBoot boots a machine whose root is the host image path,
// mounted as filesystem name (what blkid finds on it when name is ""):
// each boot reads the file into a private in-memory device that the
// syscall may change (the file itself is never written). Errors: the
// host's, and a usage error when no type is known.
func traceImageBoot(path, name string) (func(*kernel.Task, vfs.Config) (*vfs.System, *vfs.Proc, error), string, error) {
	dev, err := vfs.OpenImage(path, false)
	if err != nil {
		return nil, "", fmt.Errorf("--image: %w", err)
	}
	if name == "" {
		if name = shell.Blkid(dev); name == "" {
			return nil, "", fmt.Errorf("%s: blkid finds no ext4 or f2fs superblock on it; name the type with --fs", path)
		}
	}
	fst, err := vfs.GetFsType(name)
	if err != nil || !fst.RequiresDev {
		return nil, "", usagef("--fs %q: not a filesystem on a device, which an --image needs", name)
	}
	return func(t *kernel.Task, cfg vfs.Config) (*vfs.System, *vfs.Proc, error) {
		dev, err := vfs.OpenImage(path, false)
		if err != nil {
			return nil, nil, err
		}
		dev.SetReadOnly(false)
		sys, p, err := vfs.Boot(t, cfg, fst, vfs.MountOptions{Source: "vdb", Device: dev})
		if err != nil {
			if t.K.Log != nil {
				if l := t.K.Log.Lines(); len(l) > 0 {
					err = fmt.Errorf("%w (kernel: %s)", err, l[len(l)-1])
				}
			}
			return nil, nil, fmt.Errorf("%s: cannot mount it as %s: %w", path, name, err)
		}
		return sys, p, nil
	}, name, nil
}

// traceFlags are the flags of `vfslab trace`.
type traceFlags struct {
	patches, fsType, format, clock, diff string
	cold, noKey, times, show, loop       bool
	sideBySide                           bool
	width                                int
	image                                string
}

func newTraceCmd() *cobra.Command {
	f := &traceFlags{}
	cmd := &cobra.Command{
		Use:   "trace [flags] SYSCALL [ARGS...]",
		Short: "run one syscall on a small in-memory system and print its function_graph trace through the VFS, fscrypt and the Crypto API",
		Long:  traceLong,
		Example: `  vfslab trace open /tmp/hello
  vfslab trace --fs ext4 --cold open /secret/note rdonly
  vfslab trace getdents /secret --no-key
  vfslab trace --diff fscrypt-file-open=base fscrypt-file-open=v2 open /tmp/hello`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("a SYSCALL is required: open, stat, lstat, read, write, getdents, mkdir, rmdir, unlink, readlink, rename, link, symlink, truncate")
			}
			return nil
		},
		RunE:              func(cmd *cobra.Command, args []string) error { return runTrace(cmd, f, args) },
		ValidArgsFunction: completeTraceArgs,
	}
	fs := cmd.Flags()
	fs.StringVar(&f.patches, "patches", "", "patch variants as id=variant,... (e.g. fscrypt-file-open=v2)")
	choiceFlag(fs, &f.fsType, "fs", teach.DefaultFS, vfs.FilesystemNames(), "root filesystem")
	choiceFlag(fs, &f.format, "format", "text", []string{"text", "ftrace", "perfetto"},
		"output: text (the call tree), ftrace (function_graph's CPU, DURATION and FUNCTION CALLS columns) or perfetto (Chrome Trace Event JSON for ui.perfetto.dev)")
	choiceFlag(fs, &f.clock, "clock", "real", []string{"real", "model"},
		"durations from the real clock, or a modelled one (1 µs per step) that gives the same output every run")
	fs.BoolVar(&f.cold, "cold", false, "drop the caches first (drop_caches 3: unused dentries and inodes, with their keys), so that the walk asks the filesystem (->lookup) and key setup shows")
	fs.BoolVar(&f.noKey, "no-key", false, "remove /secret's key first (names become no-key names; --nokey also works)")
	fs.BoolVar(&f.noKey, "nokey", false, "the old spelling of --no-key")
	fs.MarkHidden("nokey")
	boolFlagNo(fs, &f.times, "times", true, "print each function's duration")
	fs.BoolVar(&f.show, "events", false, "print the events the syscall counted")
	fs.BoolVar(&f.loop, "loop", false, "put the filesystem on a loop device over memory (losetup of a tmpfs file, as seed 003's experiment): its bios go to the loop worker, whose tree the trace prints (a filesystem on a block device: ext4, f2fs)")
	fs.BoolVarP(&f.sideBySide, "side-by-side", "y", false, "with --diff: the two trees in two columns, as diff -y -t prints them, instead of a unified diff")
	fs.IntVarP(&f.width, "width", "W", 130, "with --side-by-side: the output's width in columns, as diff -W")
	fs.StringVar(&f.image, "image", "", "boot with the ext4 or f2fs image FILE as the root filesystem (read into memory; the syscall may change the copy, never the file), instead of the machine below; --fs names its type when blkid cannot")
	fs.StringVar(&f.diff, "diff", "", "--diff A B: trace the syscall under variant sets A and B (each id=variant,... over --patches, or base) and print a unified diff of the two trees on the modelled clock; B is the first argument after the flags")
	return cmd
}

// orBase names an empty variant selection.
func orBase(s string) string {
	if s == "" {
		return "base"
	}
	return s
}

func runTrace(cmd *cobra.Command, f *traceFlags, args []string) error {
	stdout := cmd.OutOrStdout()
	set, err := patch.Parse(f.patches)
	if err != nil {
		return usageError{"--patches: " + err.Error()}
	}
	// The machine is teach's (newTraceMachine); boot is set only for an
	// --image.
	fst, err := vfs.GetFsType(f.fsType)
	if err != nil {
		return usagef("--fs %q: want one of %s", f.fsType, strings.Join(vfs.FilesystemNames(), ", "))
	}
	if f.loop && f.image != "" {
		return usagef("--loop and --image do not go together: the image is the device")
	}
	if f.loop && !fst.RequiresDev {
		return usagef("--loop: --fs %s has no block device to put on a loop device", f.fsType)
	}
	var boot func(*kernel.Task, vfs.Config) (*vfs.System, *vfs.Proc, error)
	if (f.sideBySide || cmd.Flags().Changed("width")) && f.diff == "" {
		return usagef("--side-by-side and --width go with --diff A B")
	}
	if f.width < 10 || f.width > 1000 {
		return usagef("--width %d: want 10 to 1000 columns", f.width)
	}
	if f.image != "" {
		if f.noKey {
			return usagef("--no-key removes the key of the built machine's /secret; an --image has none")
		}
		name := ""
		if cmd.Flags().Changed("fs") {
			name = f.fsType
		}
		if boot, f.fsType, err = traceImageBoot(f.image, name); err != nil {
			return err
		}
	}
	if f.diff != "" {
		return runTraceDiff(cmd, f, set, boot, args)
	}
	// The syscall's arguments are checked before the machine boots.
	if err := checkTraceArgs(args); err != nil {
		return err
	}
	clock := f.clock == "model"
	r, err := traceOnce(f, set, boot, args, clock)
	if err != nil {
		return err
	}
	header := traceHeader(f, set)
	if f.format == "text" {
		// The header the ftrace format prints, as "# key: value"
		// comments: what ran, so that a saved trace says so.
		for _, h := range header {
			fmt.Fprintf(stdout, "# %s\n", h)
		}
		stdout.Write(r.text(f.times, f.show))
		return nil
	}
	x := &kernel.TraceExport{
		Header:   header,
		Tasks:    append([]kernel.TraceTask{{Comm: r.comm, PID: r.pid, Tracer: r.tr}}, r.others...),
		Result:   r.desc + " = " + r.result,
		Counters: kernel.CountersOf(r.counted),
		Times:    f.times,
		Process:  "vfslab trace",
		Log:      r.log,
	}
	format, err := kernel.ParseTraceFormat(f.format)
	if err != nil {
		return usageError{"--format: " + err.Error()}
	}
	return kernel.WriteTrace(stdout, x, format)
}

// traceHeader names what a trace ran on: the filesystem, the patches
// changed from their base, every patch's variant, the cache and key
// state, and the clock.
func traceHeader(f *traceFlags, set patch.Set) []string {
	return []string{"fs: " + f.fsType, "patches: " + orBase(set.Changed()), "variants: " + set.String(),
		"cold: " + strconv.FormatBool(f.cold), "key: " + strconv.FormatBool(!f.noKey), "clock: " + f.clock}
}

// traceResult is one traced syscall: its trace, what it returned, the
// events it counted and the kernel log it left.
type traceResult struct {
	tr           *kernel.Tracer
	comm         string
	pid          int
	desc, result string
	counted      *events.Counters
	log          []string
	// others are the traces of the other tasks the call ran work on.
	others []kernel.TraceTask
}

// text is the text form: the call tree, the result line, the events
// when asked for, and the kernel log.
func (r *traceResult) text(times, showEvents bool) []byte {
	var b bytes.Buffer
	r.tr.Print(&b, times)
	for _, o := range r.others {
		if len(o.Tracer.Entries) == 0 {
			continue
		}
		fmt.Fprintf(&b, " ------------------------------------------\n  %s-%d\n ------------------------------------------\n", o.Comm, o.PID)
		o.Tracer.Print(&b, times)
	}
	fmt.Fprintf(&b, "%s = %s\n", r.desc, r.result)
	if showEvents {
		fmt.Fprintf(&b, "events: %v\n", r.counted)
	}
	for _, line := range r.log {
		fmt.Fprintf(&b, "dmesg: %s\n", line)
	}
	return b.Bytes()
}

// traceOnce boots a trace machine with the variant set, prepares the
// syscall untraced, and runs it with a tracer attached (on the modelled
// clock when model is set).
func traceOnce(f *traceFlags, set patch.Set, boot func(*kernel.Task, vfs.Config) (*vfs.System, *vfs.Proc, error), args []string, model bool) (*traceResult, error) {
	m, err := newTraceMachine(set, f, boot)
	if err != nil {
		return nil, fmt.Errorf("setting up the machine: %w", err)
	}
	defer m.close()
	if f.cold {
		// echo 3 > /proc/sys/vm/drop_caches: dentries and inodes, so
		// key setup shows for existing encrypted files.
		m.sys.DropCachesAfterWriteback(m.t, 3)
	}
	call, err := m.prepare(args)
	if err != nil {
		return nil, err
	}
	m.t.EnableCounting()
	before := m.t.Ev.Clone()
	m.t.Tracer = &kernel.Tracer{}
	if model {
		m.t.Tracer.Clock = kernel.ModelClock(time.Microsecond)
	}
	result := call.run()
	tr := m.t.Tracer
	m.t.Tracer = nil
	counted := m.t.Ev.Sub(before)
	call.cleanup()
	r := &traceResult{tr: tr, comm: m.t.Comm, pid: m.t.PID, desc: call.desc, result: result, counted: counted, log: m.k.Log.Lines()}
	if call.tasks != nil {
		r.others = call.tasks()
	}
	return r, nil
}

// runTraceDiff is --diff A B: the syscall traced under two variant sets
// (each over --patches), on the modelled clock and without durations so
// that only the structure can differ, printed as a unified diff of the
// two text trees.
func runTraceDiff(cmd *cobra.Command, f *traceFlags, base patch.Set, boot func(*kernel.Task, vfs.Config) (*vfs.System, *vfs.Proc, error), args []string) error {
	if f.format != "text" {
		return usagef("--diff prints a diff of the text trees; --format %s does not go with it", f.format)
	}
	if len(args) < 2 {
		return usagef("--diff A B SYSCALL [ARGS...]: want the second variant set B and a SYSCALL after --diff A")
	}
	nameB, args := args[0], args[1:]
	setA, err := overlayPatches(base, f.diff)
	if err != nil {
		return usageError{"--diff A: " + err.Error()}
	}
	setB, err := overlayPatches(base, nameB)
	if err != nil {
		return usageError{"--diff B: " + err.Error()}
	}
	if err := checkTraceArgs(args); err != nil {
		return err
	}
	var sides [2][]string
	for i, set := range []patch.Set{setA, setB} {
		r, err := traceOnce(f, set, boot, args, true)
		if err != nil {
			return err
		}
		sides[i] = strings.Split(strings.TrimSuffix(string(r.text(false, f.show)), "\n"), "\n")
	}
	stdout := cmd.OutOrStdout()
	nA, nB := "patches: "+orBase(setA.Changed()), "patches: "+orBase(setB.Changed())
	if f.sideBySide {
		writeSideBySide(stdout, append([]string{nA, ""}, sides[0]...), append([]string{nB, ""}, sides[1]...), f.width)
		return nil
	}
	if !writeUnifiedDiff(stdout, nA, nB, sides[0], sides[1], 3) {
		fmt.Fprintf(stdout, "/* %s and %s give the same trace */\n", nA, nB)
		for _, l := range sides[0] {
			fmt.Fprintf(stdout, " %s\n", l)
		}
	}
	return nil
}

// traceArity is each syscall's argument count, least and most.
var traceArity = map[string][2]int{
	"open": {1, 2}, "stat": {1, 1}, "lstat": {1, 1}, "read": {1, 2}, "readbio": {1, 1}, "getdents": {1, 1}, "write": {2, 2},
	"mkdir": {1, 1}, "rmdir": {1, 1}, "unlink": {1, 1}, "readlink": {1, 1}, "rename": {2, 3},
	"link": {2, 2}, "symlink": {2, 2}, "truncate": {2, 2},
}

// checkTraceArgs checks the syscall name, its argument count and its
// numbers.
func checkTraceArgs(args []string) error {
	ar, ok := traceArity[args[0]]
	if !ok {
		return usagef("unknown syscall %q; want one of %s", args[0], strings.Join(traceSyscalls(), ", "))
	}
	if n := len(args) - 1; n < ar[0] || n > ar[1] {
		if ar[0] == ar[1] {
			return usagef("%s takes %d argument(s), got %d: %q", args[0], ar[0], n, args[1:])
		}
		return usagef("%s takes %d to %d arguments, got %d: %q", args[0], ar[0], ar[1], n, args[1:])
	}
	switch args[0] {
	case "read":
		if len(args) > 2 {
			if v, err := strconv.Atoi(args[2]); err != nil || v < 0 || v > maxTraceRead {
				return usagef("read N %q: want 0..%d bytes", args[2], maxTraceRead)
			}
		}
	case "truncate":
		if _, err := strconv.ParseInt(args[2], 10, 64); err != nil {
			return usagef("truncate LENGTH %q: want a signed 64-bit integer (loff_t)", args[2])
		}
	}
	return nil
}

// traceMachine is the small system the traced syscall runs on.
type traceMachine struct {
	k   *kernel.Kernel
	t   *kernel.Task
	sys *vfs.System
	p   *vfs.Proc
}

// newTraceMachine boots the machine a traced syscall runs on: the teaching
// machine (teach.NewMachine: the files the help lists, on ext4 and f2fs
// the casefold feature and /cisecret, on a loop device with --loop), or
// with --image that image as its maker left it (boot).
func newTraceMachine(set patch.Set, f *traceFlags, boot func(*kernel.Task, vfs.Config) (*vfs.System, *vfs.Proc, error)) (*traceMachine, error) {
	if f.image == "" {
		fst, err := vfs.GetFsType(f.fsType)
		if err != nil {
			return nil, fmt.Errorf("--fs %s: %w", f.fsType, err)
		}
		// /cisecret where the type's build has encrypted casefolded
		// directories, as userspace learns it from /sys/fs/TYPE/features.
		tm, err := teach.NewMachine(teach.Config{FS: f.fsType, Patches: set, NoKey: f.noKey, Comm: "vfslab-trace", Loop: f.loop,
			Features: vfs.Features{Casefold: slices.Contains(fst.SysfsFeatures, "encrypted_casefold")}})
		if err != nil {
			return nil, err
		}
		return &traceMachine{k: tm.K, t: tm.T, sys: tm.Sys, p: tm.P}, nil
	}
	k := kernel.NewWith(kernel.Config{Patches: set})
	t := k.NewTask("vfslab-trace")
	sys, p, err := boot(t, vfs.Config{})
	if err != nil {
		return nil, err
	}
	k.Log = &kernel.Log{}
	return &traceMachine{k: k, t: t, sys: sys, p: p}, nil
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
	// tasks, when set, are other tasks the call ran work on (readbio's
	// device and workqueue kernel threads): run attaches a tracer to
	// each and they are printed after the caller's tree.
	tasks func() []kernel.TraceTask
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
			return 0, nil, usagef("unknown flag %q", f)
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
			return usagef("%s needs %d argument(s)", args[0], n)
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
				return nil, usagef("bad length %q", args[2])
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
			f, _ := p.File(fd)
			_, readahead := f.Inode().Data.Ops.(vfs.Readaheader)
			call.run = func() string {
				if !readahead {
					t.TraceNote("read: the generic path (->read_folio per page), not fscrypt_decrypt_bio; readbio takes the bio path")
				}
				k, err := p.Read(t, fd, buf)
				// The bio's completion work may still run on a
				// kworker (the workqueue variant): let it finish.
				m.k.FlushWorkqueues()
				if err != nil {
					return result(0, err)
				}
				return fmt.Sprintf("%d %q", k, buf[:k])
			}
			call.tasks = func() []kernel.TraceTask {
				var ts []kernel.TraceTask
				for _, w := range m.k.WorkqueueTasks() {
					if w.Tracer != nil {
						ts = append(ts, kernel.TraceTask{Comm: w.Comm, PID: w.PID, Tracer: w.Tracer})
					}
				}
				return ts
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
	case "readbio":
		return m.prepareReadBio(args[1])
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
			return nil, usagef("bad length %q", args[2])
		}
		return &traceCall{desc: fmt.Sprintf("truncate(%q, %d)", args[1], n), cleanup: nop, run: func() string { return result(0, p.Truncate(t, args[1], n)) }}, nil
	}
	return nil, usagef("unknown syscall %q", args[0])
}

// prepareReadBio prepares readbio PATH: the file's first page, read
// (untraced) as plaintext and encrypted (untraced) into the ciphertext a
// disk would hold, then read back through fscrypt.NewReadPath, the model
// of ext4's and f2fs's read bios that sim's read workload measures: the
// caller builds and submits the bio, the device task completes it, and
// fscrypt_decrypt_bio runs where the crypto-bio variant puts it.
func (m *traceMachine) prepareReadBio(path string) (*traceCall, error) {
	t, p := m.t, m.p
	fd, err := p.Open(t, path, vfs.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("open(%q): %w", path, err)
	}
	defer p.Close(t, fd)
	f, err := p.File(fd)
	if err != nil {
		return nil, err
	}
	inode := f.Inode()
	if !inode.IsEncrypted() {
		return nil, usagef("readbio %q: not an encrypted file (the bio decryption path is fscrypt's); try /secret/note", path)
	}
	if inode.CryptInfo() == nil {
		return nil, fmt.Errorf("readbio %q: %w (the file's key is not set up)", path, errno.ENOKEY)
	}
	folio := block.NewFolio(0, 0)
	folio.Host = fscrypt.Inode(inode)
	n, err := p.Read(t, fd, folio.Data)
	if err != nil {
		return nil, fmt.Errorf("read(%q): %w", path, err)
	}
	bounce, err := fscrypt.EncryptPagecacheBlocks(t, folio, block.PageSize, 0)
	if err != nil {
		return nil, fmt.Errorf("encrypting %q's page: %w", path, err)
	}
	disk := append([]byte(nil), bounce...)
	fscrypt.FreeBouncePage(t, bounce)
	rp, err := fscrypt.NewReadPath(m.k, inode, 0, disk, fscrypt.ReadPathOptions{DeviceWorkers: 1, WorkqueueMaxActive: 1, Readahead: 1})
	if err != nil {
		return nil, err
	}
	closed := false
	dst := make([]byte, block.PageSize)
	call := &traceCall{desc: fmt.Sprintf("readbio(%q, 1 page, %s=%s)", path, fscrypt.CryptoBioPatch.ID, m.k.Patches().Variant(fscrypt.CryptoBioPatch))}
	call.run = func() string {
		// The workers' tracers are set before the bio is submitted:
		// the channel send orders the writes before their reads.
		for _, w := range rp.Tasks() {
			w.Tracer = &kernel.Tracer{Clock: t.Tracer.Clock}
		}
		t.TraceNote("readbio: the bio path (submit_bio, the device's completion, fscrypt_decrypt_bio), not the generic page read")
		err := rp.Read(t, dst, 0)
		rp.Close()
		closed = true
		if err != nil {
			return result(0, err)
		}
		return fmt.Sprintf("0 %q", dst[:n])
	}
	call.cleanup = func() {
		if !closed {
			rp.Close()
		}
	}
	call.tasks = func() []kernel.TraceTask {
		var ts []kernel.TraceTask
		for _, w := range rp.Tasks() {
			if w.Tracer != nil {
				ts = append(ts, kernel.TraceTask{Comm: w.Comm, PID: w.PID, Tracer: w.Tracer})
			}
		}
		return ts
	}
	return call, nil
}
