package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// Shell is one `vfslab sh` session: the machine and the interpreter's
// handlers that send everything a script does to it. Nothing reaches the
// host's filesystem: redirections, globs and tests go to the simulated VFS
// (the open, stat, readdir and access handlers), the runner's directory is
// set without the host's stat, and process substitution, which makes FIFOs
// on the host, is refused before the script runs.
type Shell struct {
	m *Machine
	// fstyp is the default filesystem of mkfs in the prelude ($FSTYP).
	fstyp string
	// prelude is the parsed prelude, run before every script.
	prelude *syntax.File
	// asLinux: vfslab's own commands say they are skipped, as on Linux
	// (--as-linux).
	asLinux bool
	// xfs is the --xfstests state (nil in a plain session).
	xfs *xfsState
	// history are the lines typed at the prompt, the host's history
	// file's first (`history` lists them).
	history []string
	// limits are the run's --timeout and --memory (bounds.go).
	limits Limits
}

// noFifoDir is the runner's $TMPDIR: the interpreter opens files in it
// with the host's os.OpenFile, bypassing the open handler, so it names a
// directory the host cannot create files in.
const noFifoDir = "/proc/vfslab-no-fifo"

// baseEnv is the environment a script starts with.
func (s *Shell) baseEnv() []string {
	env := ScriptEnv(s.fstyp, s.m.seed)
	env = append(env, "TMPDIR="+noFifoDir)
	if s.asLinux {
		env = append(env, "VFSLAB_OWN_SKIP=1")
	}
	return append(env, s.xfstestsEnv()...)
}

// ScriptEnv is the environment a script starts with for $FSTYP fstyp and
// the machine's seed (besides $TMPDIR): the one the Linux oracle gives the
// same script.
func ScriptEnv(fstyp string, seed uint64) []string {
	return []string{
		"HOME=/root", "USER=root", "LOGNAME=root", "SHELL=/bin/sh",
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"PWD=/",
		"SCRATCH_DEV=" + scratchDevs[0], "SCRATCH_MNT=/mnt/scratch",
		"TEST_DEV=" + scratchDevs[1], "TEST_DIR=/mnt/test",
		"FSTYP=" + fstyp, "qa_user=fsgqa", "here=/", "seq=vfslab",
		"tmp=/tmp/vfslab", "seqres=/tmp/vfslab.res",
		"VFSLAB_SEED=" + strconv.FormatUint(seed, 10),
	}
}

// newRunner makes an interpreter on the machine with the given standard
// streams, for a process of identity id ($UID).
func (s *Shell) newRunner(id ident, stdin io.Reader, stdout, stderr io.Writer, interactive bool, params ...string) (*interp.Runner, error) {
	stdin, stdout, stderr = unwrapStreams(stdin, stdout, stderr)
	opts := []interp.RunnerOption{
		interp.Env(machineEnv{expand.ListEnviron(s.baseEnv()...), s.m, id}),
		func(r *interp.Runner) error { r.Dir = "/"; return nil },
		interp.StdIO(stdin, stdout, stderr),
		interp.OpenHandler(s.openHandler),
		interp.StatHandler(s.statHandler),
		interp.ReadDirHandler2(s.readDirHandler),
		interp.AccessHandler(s.accessHandler),
		interp.CallHandler(s.callHandler),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc { return s.execHandler }),
		interp.Interactive(interactive),
	}
	if len(params) > 0 {
		opts = append(opts, interp.Params(append([]string{"--"}, params...)...))
	}
	return interp.New(opts...)
}

// abs makes p absolute against the shell's directory.
func abs(dir, p string) string {
	if p == "" {
		return ""
	}
	if !path.IsAbs(p) {
		p = path.Join(dir, p)
	}
	return path.Clean(p)
}

// pathErr is an error the interpreter prints and turns into status 1:
// "sh: PATH: Required key not available".
func pathErr(p string, err error) error {
	return &os.PathError{Op: "sh:", Path: p, Err: errMsg{err}}
}

// errMsg prints an errno as glibc's strerror does.
type errMsg struct{ err error }

func (e errMsg) Error() string { return strerror(e.err) }
func (e errMsg) Unwrap() error { return e.err }

// vfsFlags converts os.OpenFile flags to open(2)'s.
func vfsFlags(flag int) int {
	f := vfs.O_RDONLY
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_WRONLY:
		f = vfs.O_WRONLY
	case os.O_RDWR:
		f = vfs.O_RDWR
	}
	if flag&os.O_CREATE != 0 {
		f |= vfs.O_CREAT
	}
	if flag&os.O_TRUNC != 0 {
		f |= vfs.O_TRUNC
	}
	if flag&os.O_APPEND != 0 {
		f |= vfs.O_APPEND
	}
	if flag&os.O_EXCL != 0 {
		f |= vfs.O_EXCL
	}
	return f
}

// openHandler opens a redirection's file on the simulated machine.
func (s *Shell) openHandler(ctx context.Context, name string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
	hc := interp.HandlerCtx(ctx)
	p := abs(hc.Dir, name)
	if f, ok, err := s.openSpecial(hc, identOf(ctx), p, flag); ok {
		if err != nil {
			return nil, pathErr(name, err)
		}
		return f, nil
	}
	f, err := s.m.openFile(hc.Stderr, identOf(ctx), "sh", p, vfsFlags(flag), uint32(perm.Perm()))
	if err != nil {
		return nil, pathErr(name, err)
	}
	f.lineBuffered = true
	return f, nil
}

// openSpecial opens the files the machine's devices and procfs provide:
// /dev/null, /dev/zero, /dev/stdout, /dev/stderr, /proc/mounts and
// /proc/sys/vm/drop_caches.
func (s *Shell) openSpecial(hc interp.HandlerContext, id ident, p string, flag int) (io.ReadWriteCloser, bool, error) {
	switch p {
	case "/dev/null":
		return nullFile{}, true, nil
	case "/dev/zero":
		return zeroFile{}, true, nil
	case "/dev/urandom", "/dev/random":
		return readerFile{s.m.urandom()}, true, nil
	case "/dev/stdout":
		return writerFile{hc.Stdout}, true, nil
	case "/dev/stderr":
		return writerFile{hc.Stderr}, true, nil
	case "/dev/stdin":
		return readerFile{hc.Stdin}, true, nil
	case kmsgPath:
		return &kmsgFile{m: s.m}, true, nil
	case "/proc/mounts", "/proc/self/mounts":
		if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
			return nil, true, errno.EACCES
		}
		s.m.mu.Lock()
		text := s.m.procMounts()
		s.m.mu.Unlock()
		return readerFile{strings.NewReader(text)}, true, nil
	case dropCachesPath:
		if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
			return readerFile{strings.NewReader("0\n")}, true, nil
		}
		return &dropCachesFile{m: s.m, w: hc.Stderr}, true, nil
	}
	if bdev := s.m.device(p); bdev != nil {
		return &devFile{bdev: bdev}, true, nil
	}
	if text, ok := s.m.kernelFile(p); ok {
		if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
			return nil, true, errno.EACCES
		}
		return readerFile{strings.NewReader(text)}, true, nil
	}
	if pf, ok := s.m.procFileFor(p, id); ok {
		if pf.access != nil {
			s.m.mu.Lock()
			err := pf.access(flag&(os.O_WRONLY|os.O_RDWR) != 0)
			s.m.mu.Unlock()
			if err != nil {
				return nil, true, err
			}
		}
		f := s.m.openProcFile(pf)
		f.errw = hc.Stderr
		return f, true, nil
	}
	if n, ok := strings.CutPrefix(p, "/dev/fd/"); ok {
		fd, err := strconv.Atoi(n)
		if err == nil && fd <= 2 {
			switch fd {
			case 0:
				return readerFile{hc.Stdin}, true, nil
			case 1:
				return writerFile{hc.Stdout}, true, nil
			}
			return writerFile{hc.Stderr}, true, nil
		}
		s.m.mu.Lock()
		vfd, ok := s.m.fds[fd]
		s.m.mu.Unlock()
		if err != nil || !ok {
			return nil, true, errno.EBADF
		}
		// The shell's descriptor stays open: closing the redirection does
		// not close it.
		return &sharedFile{vfsFile{m: s.m, p: s.m.root, fd: vfd, comm: "sh", w: hc.Stderr, lineBuffered: true}}, true, nil
	}
	return nil, false, nil
}

const dropCachesPath = "/proc/sys/vm/drop_caches"

type nullFile struct{}

func (nullFile) Read([]byte) (int, error)    { return 0, io.EOF }
func (nullFile) Write(b []byte) (int, error) { return len(b), nil }
func (nullFile) Close() error                { return nil }

type zeroFile struct{}

func (zeroFile) Read(b []byte) (int, error) {
	clear(b)
	return len(b), nil
}
func (zeroFile) Write(b []byte) (int, error) { return len(b), nil }
func (zeroFile) Close() error                { return nil }

type writerFile struct{ w io.Writer }

func (f writerFile) Read([]byte) (int, error)    { return 0, errno.EBADF }
func (f writerFile) Write(b []byte) (int, error) { return f.w.Write(b) }
func (f writerFile) Close() error                { return nil }

type readerFile struct{ r io.Reader }

func (f readerFile) Read(b []byte) (int, error) {
	if f.r == nil {
		return 0, io.EOF
	}
	return f.r.Read(b)
}
func (f readerFile) Write([]byte) (int, error) { return 0, errno.EBADF }
func (f readerFile) Close() error              { return nil }

// dropCachesFile is /proc/sys/vm/drop_caches opened for writing: each
// write is one sysctl write, "1", "2" or "3".
type dropCachesFile struct {
	m    *Machine
	w    io.Writer
	comm string // the writer: the command, or the shell's redirection ("sh")
}

func (f *dropCachesFile) Read([]byte) (int, error) { return 0, errno.EBADF }
func (f *dropCachesFile) Write(b []byte) (int, error) {
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || v < 1 || v > 4 {
		return 0, errno.EINVAL
	}
	comm := f.comm
	if comm == "" {
		comm = "sh"
	}
	f.m.call(f.w, nil, comm, fmt.Sprintf("write(%q, %q)", dropCachesPath, strings.TrimSpace(string(b))), func(t *kernel.Task) (int64, error) {
		f.m.sys.DropCaches(t, v)
		return int64(len(b)), nil
	})
	return len(b), nil
}
func (f *dropCachesFile) Close() error { return nil }

// vfsFile is an open file of the simulated machine as the interpreter and
// the commands read and write it.
type vfsFile struct {
	m    *Machine
	p    *vfs.Proc
	fd   int
	comm string
	w    io.Writer
	// lineBuffered makes the writes of a redirection one write(2) per
	// line, as a real shell's builtins do (mvdan's echo writes its
	// arguments and the newline separately); pending holds the tail.
	lineBuffered bool
	pending      []byte
}

// isPseudoPath reports whether p is under /proc or /sys, whose files the
// kernel makes: no new file can be created there.
func isPseudoPath(p string) bool {
	return strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/sys/")
}

// openFile opens path as uid's process, for command comm.
func (m *Machine) openFile(w io.Writer, id ident, comm, p string, flags int, mode uint32) (*vfsFile, error) {
	if flags&vfs.O_CREAT != 0 && isPseudoPath(p) {
		// procfs and sysfs directories have no ->create: open(O_CREAT)
		// of a name they lack is EACCES (lookup_open).
		if _, err := m.stat(nil, id, comm, p, true); errors.Is(err, errno.ENOENT) {
			return nil, errno.EACCES
		}
	}
	m.mu.Lock()
	proc := m.procFor(id)
	m.mu.Unlock()
	fd, err := m.call(w, proc, comm, fmt.Sprintf("open(%q, %s)", p, openFlagsString(flags)), func(t *kernel.Task) (int64, error) {
		fd, err := proc.Open(t, p, flags, mode)
		return int64(fd), err
	})
	if err != nil {
		return nil, err
	}
	return &vfsFile{m: m, p: proc, fd: int(fd), comm: comm, w: w}, nil
}

func (f *vfsFile) Read(b []byte) (int, error) {
	n, err := f.m.call(f.w, f.p, f.comm, fmt.Sprintf("read(%d, %d)", f.fd, len(b)), func(t *kernel.Task) (int64, error) {
		n, err := f.p.Read(t, f.fd, b)
		return int64(n), err
	})
	if err == nil && n == 0 && len(b) > 0 {
		return 0, io.EOF
	}
	return int(n), err
}

func (f *vfsFile) Write(b []byte) (int, error) {
	if !f.lineBuffered {
		return f.write(b)
	}
	f.pending = append(f.pending, b...)
	if i := bytes.LastIndexByte(f.pending, '\n'); i >= 0 {
		if _, err := f.write(f.pending[:i+1]); err != nil {
			f.pending = f.pending[:0]
			return 0, err
		}
		f.pending = append(f.pending[:0], f.pending[i+1:]...)
	}
	return len(b), nil
}

// flush writes what a line-buffered file holds.
func (f *vfsFile) flush() error {
	if len(f.pending) == 0 {
		return nil
	}
	_, err := f.write(f.pending)
	f.pending = f.pending[:0]
	return err
}

func (f *vfsFile) write(b []byte) (int, error) {
	n, err := f.m.call(f.w, f.p, f.comm, fmt.Sprintf("write(%d, %d)", f.fd, len(b)), func(t *kernel.Task) (int64, error) {
		n, err := f.p.Write(t, f.fd, b)
		return int64(n), err
	})
	return int(n), err
}

func (f *vfsFile) Close() error {
	ferr := f.flush()
	_, err := f.m.call(f.w, f.p, f.comm, fmt.Sprintf("close(%d)", f.fd), func(t *kernel.Task) (int64, error) {
		return 0, f.p.Close(t, f.fd)
	})
	if ferr != nil {
		return ferr
	}
	return err
}

// sharedFile is a descriptor of the shell used by a redirection: its
// Close leaves it open.
type sharedFile struct{ vfsFile }

func (f *sharedFile) Close() error { return f.flush() }

// openFlagsString prints open(2) flags as strace does.
func openFlagsString(f int) string {
	var parts []string
	switch f & vfs.O_ACCMODE {
	case vfs.O_RDONLY:
		parts = append(parts, "O_RDONLY")
	case vfs.O_WRONLY:
		parts = append(parts, "O_WRONLY")
	case vfs.O_RDWR:
		parts = append(parts, "O_RDWR")
	}
	for _, fl := range []struct {
		bit  int
		name string
	}{{vfs.O_CREAT, "O_CREAT"}, {vfs.O_EXCL, "O_EXCL"}, {vfs.O_TRUNC, "O_TRUNC"}, {vfs.O_APPEND, "O_APPEND"}, {vfs.O_DIRECTORY, "O_DIRECTORY"}, {vfs.O_NOFOLLOW, "O_NOFOLLOW"}} {
		if f&fl.bit != 0 {
			parts = append(parts, fl.name)
		}
	}
	return strings.Join(parts, "|")
}

// fileInfo is a stat result as the interpreter's tests and globs see it.
type fileInfo struct {
	name string
	st   vfs.Stat
}

func (fi fileInfo) Name() string       { return fi.name }
func (fi fileInfo) Size() int64        { return fi.st.Size }
func (fi fileInfo) Mode() fs.FileMode  { return goMode(fi.st.Mode) }
func (fi fileInfo) ModTime() time.Time { return stamp(fi.st.Mtime) }
func (fi fileInfo) IsDir() bool        { return fi.st.Mode&vfs.S_IFMT == vfs.S_IFDIR }
func (fi fileInfo) Sys() any           { return fi.st }

// stamp converts a timestamp of the machine (nanoseconds since the Unix
// epoch) to a time.Time in UTC, the machine's time zone.
func stamp(ns int64) time.Time { return time.Unix(0, ns).UTC() }

// goMode converts st_mode to an fs.FileMode.
func goMode(mode uint32) fs.FileMode {
	m := fs.FileMode(mode & 0o777)
	switch mode & vfs.S_IFMT {
	case vfs.S_IFDIR:
		m |= fs.ModeDir
	case vfs.S_IFLNK:
		m |= fs.ModeSymlink
	case vfs.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case vfs.S_IFBLK:
		m |= fs.ModeDevice
	case vfs.S_IFIFO:
		m |= fs.ModeNamedPipe
	case vfs.S_IFSOCK:
		m |= fs.ModeSocket
	}
	return m
}

// statHandler is stat(2)/lstat(2) for `[ -e ]` and friends.
func (s *Shell) statHandler(ctx context.Context, name string, follow bool) (fs.FileInfo, error) {
	hc := interp.HandlerCtx(ctx)
	p := abs(hc.Dir, name)
	st, err := s.m.stat(hc.Stderr, identOf(ctx), "sh", p, follow)
	if err != nil {
		return nil, &os.PathError{Op: "stat", Path: name, Err: err}
	}
	return fileInfo{name: path.Base(p), st: st}, nil
}

// stat is stat(2) or lstat(2) of p, with the machine's special files.
func (m *Machine) stat(w io.Writer, id ident, comm, p string, follow bool) (vfs.Stat, error) {
	if p == "/dev/stdout" || p == "/dev/stderr" || p == "/dev/stdin" {
		return vfs.Stat{Mode: vfs.S_IFCHR | 0o666, Nlink: 1, Ino: 1}, nil
	}
	if p == dropCachesPath || p == "/proc/mounts" {
		return vfs.Stat{Mode: vfs.S_IFREG | 0o644, Nlink: 1, Ino: 3}, nil
	}
	if st, ok := m.programStat(p); ok {
		return st, nil
	}
	if st, ok := m.kernelStat(p); ok {
		return st, nil
	}
	if st, ok := m.faultStat(p); ok {
		return st, nil
	}
	if st, ok := m.keysStat(p); ok {
		return st, nil
	}
	m.mu.Lock()
	proc := m.procFor(id)
	m.mu.Unlock()
	var st vfs.Stat
	call := "stat"
	if !follow {
		call = "lstat"
	}
	_, err := m.call(w, proc, comm, fmt.Sprintf("%s(%q)", call, p), func(t *kernel.Task) (int64, error) {
		var err error
		if follow {
			st, err = proc.Stat(t, p)
		} else {
			st, err = proc.Lstat(t, p)
		}
		return 0, err
	})
	return st, err
}

// accessHandler is access(2): permissions are not modelled, so a file
// that exists may be read, written and searched.
func (s *Shell) accessHandler(ctx context.Context, name string, mode interp.AccessMode) error {
	_, err := s.statHandler(ctx, name, true)
	return err
}

// dirEntry is one entry of a directory listing.
type dirEntry struct {
	name  string
	dtype uint8
}

func (d dirEntry) Name() string { return d.name }
func (d dirEntry) IsDir() bool  { return d.dtype == vfs.DT_DIR }
func (d dirEntry) Type() fs.FileMode {
	return goMode(uint32(d.dtype) << 12).Type()
}
func (d dirEntry) Info() (fs.FileInfo, error) {
	return fileInfo{name: d.name, st: vfs.Stat{Mode: uint32(d.dtype) << 12}}, nil
}

// readDirHandler lists a directory for globbing (getdents64).
func (s *Shell) readDirHandler(ctx context.Context, name string) ([]fs.DirEntry, error) {
	hc := interp.HandlerCtx(ctx)
	ents, err := s.m.readDir(hc.Stderr, identOf(ctx), "sh", abs(hc.Dir, name))
	if err != nil {
		return nil, &os.PathError{Op: "readdir", Path: name, Err: err}
	}
	out := make([]fs.DirEntry, 0, len(ents))
	for _, e := range ents {
		if e.Name == "." || e.Name == ".." {
			continue
		}
		out = append(out, dirEntry{e.Name, e.Type})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

// readDir lists p in getdents64 order, "." and ".." included.
func (m *Machine) readDir(w io.Writer, id ident, comm, p string) ([]vfs.Dirent, error) {
	if ents, ok := faultDirents(p); ok {
		return ents, nil
	}
	if ents, ok := keysDirents(p); ok {
		return ents, nil
	}
	if names, ok := m.kernelDir(p); ok {
		ents := []vfs.Dirent{{Name: ".", Type: vfs.DT_DIR}, {Name: "..", Type: vfs.DT_DIR}}
		for _, n := range names {
			typ := uint8(vfs.DT_REG)
			if _, dir := m.kernelDir(path.Join(p, n)); dir {
				typ = vfs.DT_DIR
			}
			ents = append(ents, vfs.Dirent{Name: n, Type: typ})
		}
		return ents, nil
	}
	f, err := m.openFile(w, id, comm, p, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []vfs.Dirent
	buf := make([]byte, 32<<10)
	for {
		n, err := m.call(w, f.p, comm, fmt.Sprintf("getdents64(%d, %d)", f.fd, len(buf)), func(t *kernel.Task) (int64, error) {
			n, err := f.p.Getdents64(t, f.fd, buf)
			return int64(n), err
		})
		if err != nil {
			return nil, err
		}
		if n == 0 {
			if e, ok := faultParentDirent(p); ok {
				out = append(out, e)
			}
			out = append(out, keysParentDirents(p)...)
			return out, nil
		}
		ds, err := vfs.ParseDirents(buf[:n])
		if err != nil {
			return nil, err
		}
		out = append(out, ds...)
	}
}

// callHandler closes the gaps between mvdan's builtins and the shells
// xfstests runs on: a combined `echo -ne` is split into `echo -n -e`
// (mvdan's echo knows the options only one at a time), `command -v`,
// `type` and `which` look commands up among the machine's instead of the
// host's PATH, and sourcing xfstests' common/* files is a no-op (the
// prelude stands in for them).
func (s *Shell) callHandler(ctx context.Context, args []string) ([]string, error) {
	args = s.xfstestsCall(args)
	if writingBuiltin(args[0]) && pipeBroken(interp.HandlerCtx(ctx).Stdout) {
		// A builtin writing to a pipe whose reader is gone: SIGPIPE
		// kills the (sub)shell that runs it, as `y | head -c 4` ends
		// bash's loop in y.
		return []string{"exit", strconv.Itoa(sigpipeStatus)}, nil
	}
	args = peelBuiltin(args)
	switch args[0] {
	case "echo":
		return splitEchoFlags(args), nil
	case "[", "test":
		return s.classicTest(ctx, args), nil
	case "command":
		if len(args) > 1 && (args[1] == "-v" || args[1] == "-V") {
			return append([]string{"__vfslab_which", args[1]}, args[2:]...), nil
		}
	case "type", "which":
		return append([]string{"__vfslab_which", "-" + args[0]}, args[1:]...), nil
	case "help", "history":
		// The machine's help, not mvdan.cc/sh's list of bash builtins;
		// the prompt's history, which mvdan.cc/sh lacks.
		return append([]string{"__vfslab_" + args[0]}, args[1:]...), nil
	case ".", "source":
		if len(args) > 1 && isCommonFile(args[1]) {
			return []string{"true"}, nil
		}
		if len(args) > 1 {
			args = append([]string{args[0], s.sourcePath(ctx, args[1])}, args[2:]...)
		}
	}
	return args, nil
}

// isCommonFile reports whether p is one of xfstests' common/* files.
func isCommonFile(p string) bool {
	p = strings.TrimPrefix(p, "./")
	return strings.HasPrefix(p, "common/") || strings.Contains(p, "/common/")
}

// splitEchoFlags splits echo's leading combined options (-ne, -en, -neE).
func splitEchoFlags(args []string) []string {
	out := []string{args[0]}
	i := 1
	for ; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' || strings.Trim(a[1:], "neE") != "" {
			break
		}
		for _, c := range a[1:] {
			out = append(out, "-"+string(c))
		}
	}
	return append(out, args[i:]...)
}

// execHandler runs one command on the machine. A panic in a command is
// caught here, reported, and turned into status 1: the shell goes on.
func (s *Shell) execHandler(ctx context.Context, args []string) (err error) {
	hc := interp.HandlerCtx(ctx)
	id := identOf(ctx)
	var in io.Reader = strings.NewReader("")
	if hc.Stdin != nil {
		in = hc.Stdin
	}
	lim := &s.m.lim
	c := &cmd{s: s, m: s.m, ctx: ctx, dir: hc.Dir, uid: id.uid, id: id, name: args[0], args: args[1:],
		in: &cmdReader{in, lim}, out: &cmdWriter{hc.Stdout, lim}, errw: &cmdWriter{hc.Stderr, lim}, env: hc.Env}
	fn, ok := s.lookupProgram(args[0])
	if !ok {
		if err := s.missingHelperErr(args[0]); err != nil {
			return err
		}
		fmt.Fprintf(hc.Stderr, "%s: command not found\n", args[0])
		return interp.ExitStatus(127)
	}
	// A program run by its path (/usr/bin/xfs_io, as xfstests'
	// $XFS_IO_PROG names it) knows itself by its base name.
	c.name, c.argv0 = path.Base(args[0]), args[0]
	defer func() {
		switch r := recover().(type) {
		case nil:
		case sigpipe:
			// Killed by SIGPIPE: no message, as a shell prints none.
			err = interp.ExitStatus(sigpipeStatus)
		case stopped:
			err = interp.ExitStatus(uint8(r.status))
		default:
			fmt.Fprintf(hc.Stderr, "%s: internal error: %v\n%s", args[0], r, debug.Stack())
			err = interp.ExitStatus(1)
		}
	}()
	if st := fn(c); st != 0 {
		return interp.ExitStatus(uint8(st))
	}
	return nil
}

// rewrite closes the gaps of mvdan's interpreter in the parsed script
// before it runs: `exec N<file`, `exec N>file` and `exec N<&-` with N above
// 2, which the interpreter rejects ("unsupported redirect fd"), become the
// machine's __vfslab_fd command, which opens and closes the descriptor on
// the shell's process. Process substitution is refused: it would make
// FIFOs on the host.
func rewrite(f *syntax.File) error {
	var bad error
	forked := map[*syntax.Stmt]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ProcSubst:
			if bad == nil {
				bad = fmt.Errorf("%s:%d:%d: process substitution is not supported (it makes FIFOs on the host)", f.Name, n.Pos().Line(), n.Pos().Col())
			}
		case *syntax.Stmt:
			rewriteExecFd(n)
			rewriteDupFd(n)
		}
		rewriteFork(n, forked)
		rewritePids(n)
		rewriteTests(n)
		return true
	})
	return bad
}

// rewriteExecFd turns `exec 3<file` into `__vfslab_fd 3 < file`.
func rewriteExecFd(st *syntax.Stmt) {
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) != 1 || len(call.Assigns) != 0 || call.Args[0].Lit() != "exec" {
		return
	}
	var keep []*syntax.Redirect
	var args []*syntax.Word
	for _, rd := range st.Redirs {
		if rd.N == nil {
			keep = append(keep, rd)
			continue
		}
		n, err := strconv.Atoi(rd.N.Value)
		if err != nil || n <= 2 || rd.Word == nil {
			keep = append(keep, rd)
			continue
		}
		args = append(args, litWord(rd.N.Value), litWord(rd.Op.String()), rd.Word)
	}
	if len(args) == 0 {
		return
	}
	st.Redirs = keep
	call.Args = append([]*syntax.Word{litWord("__vfslab_fd")}, args...)
}

// rewriteDupFd turns `cmd >&3` and `cmd <&3` (a descriptor above 2 that
// `exec 3>file` opened) into redirections of /dev/fd/3, which the open
// handler gives the shell's descriptor: mvdan's interpreter knows only 0, 1
// and 2 as dup targets.
func rewriteDupFd(st *syntax.Stmt) {
	for _, rd := range st.Redirs {
		if (rd.Op != syntax.DplOut && rd.Op != syntax.DplIn) || rd.Word == nil {
			continue
		}
		n, err := strconv.Atoi(rd.Word.Lit())
		if err != nil || n <= 2 {
			continue
		}
		if rd.Op == syntax.DplOut {
			rd.Op = syntax.AppOut
		} else {
			rd.Op = syntax.RdrIn
		}
		rd.Word = litWord("/dev/fd/" + strconv.Itoa(n))
	}
}

func litWord(s string) *syntax.Word {
	return &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: s}}}
}

// runFile parses and runs one script on r, printing a syntax error as
// file:line:col.
func (s *Shell) runFile(ctx context.Context, r *interp.Runner, src io.Reader, name string, stderr io.Writer) int {
	f, err := syntax.NewParser().Parse(src, name)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if err := rewrite(f); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	return exitCode(r.Run(ctx, f), stderr)
}

// exitCode turns a Run error into the shell's exit status.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, context.Canceled) {
		// The run was stopped (--timeout, --memory, ^C): its message
		// is the caller's.
		return 1
	}
	var es interp.ExitStatus
	if errors.As(err, &es) {
		return int(es)
	}
	var ps syntax.ParseError
	if errors.As(err, &ps) {
		fmt.Fprintln(stderr, err)
		return 2
	}
	fmt.Fprintln(stderr, "sh:", err)
	return 1
}
