package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
	"mvdan.cc/sh/v3/syntax"

	"github.com/vfslab/vfslab/errno"
)

// A run's bounds: what stops a command that writes to a pipe whose reader
// has gone (SIGPIPE), and what stops the whole run or the foreground
// command (--timeout, the memory backstop, ^C at the prompt).
//
// The commands are Go functions, not processes, so a signal that would
// kill a process is a panic of a sentinel value raised inside the
// command's own goroutine, at its next read or write of a standard
// stream (the execHandler recovers it and returns the signal's status);
// a syscall of a stopped run fails with EINTR, and a syscall asleep in a
// wait (a FIFO) wakes. The interpreter itself stops at its next statement
// when the run's context is cancelled.

// sigpipeStatus is the status of a process killed by SIGPIPE (128+13), as
// the shell reports it.
const sigpipeStatus = 128 + 13

// sigpipe is the panic of a command that wrote to a pipe without readers:
// pipe_write's EPIPE with the SIGPIPE that kills the writer
// (fs/pipe.c: send_sig(SIGPIPE, current, 0)).
type sigpipe struct{}

// stopped is the panic of a command whose run was stopped (--timeout, the
// memory limit, ^C).
type stopped struct{ status int }

// stopReason says why a run or its foreground command was stopped.
type stopReason struct {
	// msg is printed on standard error when the run ends ("" for ^C).
	msg string
	// status is the run's exit status (124 timeout, 137 memory, 130 ^C).
	status int
	// interrupt is ^C: only the foreground command stops, the prompt
	// goes on (runLimits.reset).
	interrupt bool
}

// runLimits is one machine's stop switch. The zero value is running.
type runLimits struct {
	mu  sync.Mutex
	ch  chan struct{}
	why *stopReason
}

// done is closed once the run is stopped.
func (l *runLimits) done() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ch == nil {
		l.ch = make(chan struct{})
	}
	return l.ch
}

// reason is why the run was stopped, nil while it runs.
func (l *runLimits) reason() *stopReason {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.why
}

// stop stops the run (the first reason wins).
func (l *runLimits) stop(r stopReason) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.why != nil {
		return
	}
	if l.ch == nil {
		l.ch = make(chan struct{})
	}
	l.why = &r
	close(l.ch)
}

// reset clears an interrupt (^C) once the foreground command has ended:
// the prompt's next command runs. A timeout or the memory limit stays.
func (l *runLimits) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.why != nil && l.why.interrupt {
		l.why = nil
		l.ch = make(chan struct{})
	}
}

// isEPIPE reports whether err is a write to a pipe without readers.
func isEPIPE(err error) bool { return errors.Is(err, errno.EPIPE) }

// cmdWriter is a command's standard output or error: a write that meets
// EPIPE kills the command as SIGPIPE does, and a stopped run stops it.
type cmdWriter struct {
	w   io.Writer
	lim *runLimits
}

func (w *cmdWriter) Write(b []byte) (int, error) {
	if r := w.lim.reason(); r != nil {
		panic(stopped{r.status})
	}
	n, err := w.w.Write(b)
	if err != nil && isEPIPE(err) {
		panic(sigpipe{})
	}
	return n, err
}

// cmdReader is a command's standard input: a stopped run stops the
// command at its next read.
type cmdReader struct {
	r   io.Reader
	lim *runLimits
}

func (r *cmdReader) Read(b []byte) (int, error) {
	if why := r.lim.reason(); why != nil {
		panic(stopped{why.status})
	}
	return r.r.Read(b)
}

// unwrapStreams gives a child shell (sh -c, su) the streams beneath a
// command's: the child's own commands get wrappers of their own, and its
// builtins, some on goroutines of the interpreter, must not panic.
func unwrapStreams(in io.Reader, out, errw io.Writer) (io.Reader, io.Writer, io.Writer) {
	if r, ok := in.(*cmdReader); ok {
		in = r.r
	}
	if w, ok := out.(*cmdWriter); ok {
		out = w.w
	}
	if w, ok := errw.(*cmdWriter); ok {
		errw = w.w
	}
	return in, out, errw
}

// pipeBroken reports whether w is the write end of a host pipe (a
// pipeline's, made by the interpreter) whose read end is closed: poll(2)
// gives POLLERR for it (pipe_poll). The shell's own standard output and
// error are the host's, whose broken pipe the Go runtime answers with
// SIGPIPE itself.
func pipeBroken(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || f == os.Stdout || f == os.Stderr {
		return false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	broken := false
	rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		if n, err := unix.Poll(fds, 0); err == nil && n > 0 && fds[0].Revents&unix.POLLERR != 0 {
			broken = true
		}
	})
	return broken
}

// writingBuiltin reports whether the interpreter's builtin name always
// writes to its standard output: the ones whose write would meet SIGPIPE
// and end the (sub)shell that runs them.
func writingBuiltin(name string) bool {
	switch name {
	case "echo", "printf", "pwd":
		return true
	}
	return false
}

// maxTasks is the machine's RLIMIT_NPROC (a variable for the tests): how many goroutines the run may
// have (each background job and each pipeline's left side is one, as a
// forked shell is a process) before a fork fails with EAGAIN.
var maxTasks atomic.Int64

func init() { maxTasks.Store(4096) }

// cmdFork is __vfslab_fork, which the rewritten script runs where bash
// forks a background job or a pipeline's left side: past maxTasks it
// fails as fork(2) does under RLIMIT_NPROC, with bash's message.
func cmdFork(c *cmd) int {
	if int64(runtime.NumGoroutine()) <= maxTasks.Load() {
		return 0
	}
	// bash retries a fork that failed with EAGAIN after a pause
	// (make_child's forksleep), so that other children may end first;
	// the pause here is the host's, short, and not on the machine's
	// clock.
	for pause := time.Millisecond; pause <= 8*time.Millisecond; pause *= 2 {
		time.Sleep(pause)
		if int64(runtime.NumGoroutine()) <= maxTasks.Load() {
			return 0
		}
	}
	fmt.Fprintln(c.errw, "sh: fork: Resource temporarily unavailable")
	return 1
}

// forkStatus is the status of a job whose fork failed (bash's EX_NOEXEC
// would be the parent's; the job never runs).
const forkStatus = 254

// forkCheck is `__vfslab_fork || exit 254`: the statement a forked job
// starts with.
func forkCheck() *syntax.Stmt {
	return &syntax.Stmt{Cmd: &syntax.BinaryCmd{Op: syntax.OrStmt,
		X: &syntax.Stmt{Cmd: &syntax.CallExpr{Args: []*syntax.Word{litWord("__vfslab_fork")}}},
		Y: &syntax.Stmt{Cmd: &syntax.CallExpr{Args: []*syntax.Word{litWord("exit"), litWord(strconv.Itoa(forkStatus))}}},
	}}
}

// rewriteFork puts forkCheck before a background job and at the start of
// a pipeline's left side: they are the interpreter's goroutines, bash's
// children.
func rewriteFork(n syntax.Node, done map[*syntax.Stmt]bool) {
	wrap := func(st *syntax.Stmt) {
		inner := &syntax.Stmt{Cmd: st.Cmd, Redirs: st.Redirs}
		st.Cmd = &syntax.Block{Stmts: []*syntax.Stmt{forkCheck(), inner}}
		st.Redirs = nil
	}
	switch n := n.(type) {
	case *syntax.Stmt:
		if n.Background && n.Cmd != nil && !done[n] {
			// The parent checks before it forks, and a failed fork
			// ends the (sub)shell, as bash's throw_to_top_level does.
			job := &syntax.Stmt{Cmd: n.Cmd, Redirs: n.Redirs, Background: true, Disown: n.Disown}
			done[job] = true
			n.Cmd = &syntax.Block{Stmts: []*syntax.Stmt{forkCheck(), job}}
			n.Redirs, n.Background, n.Disown = nil, false, false
		}
	case *syntax.BinaryCmd:
		if (n.Op == syntax.Pipe || n.Op == syntax.PipeAll) && n.X != nil && n.X.Cmd != nil {
			wrap(n.X)
		}
	}
}

// Limits are the bounds of one `vfslab sh` run (--timeout, --memory).
type Limits struct {
	// Timeout ends the run after this long (0: none), with status 124
	// as timeout(1) gives.
	Timeout time.Duration
	// Memory is the Go heap the run may use (0: the default, half the
	// host's RAM); past it the run ends with status 137.
	Memory int64
}

// defaultMemory is half the host's RAM (sysinfo(2)), 4 GiB if unknown.
func defaultMemory() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil || si.Totalram == 0 {
		return 4 << 30
	}
	return int64(uint64(si.Totalram)*uint64(si.Unit)) / 2
}

// stopGrace is how long a stopped run has to unwind (the interpreter at
// its next statement, the commands at their next read, write or
// syscall) before the images are written back and the process exits.
const stopGrace = 10 * time.Second

// watch enforces l on the machine: it stops the run at the timeout or
// when the heap passes the memory limit (runtime/debug.SetMemoryLimit
// makes the collector work hard before that; runtime/metrics is polled),
// cancelling ctx. The returned function ends the watch.
func (s *Shell) watch(ctx context.Context, l Limits, stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	limit := l.Memory
	if limit <= 0 {
		limit = defaultMemory()
	}
	old := debug.SetMemoryLimit(limit)
	done := make(chan struct{})
	var timeout <-chan time.Time
	if l.Timeout > 0 {
		timeout = time.After(l.Timeout)
	}
	stop := func(r stopReason) {
		s.m.lim.stop(r)
		cancel()
		go func() {
			select {
			case <-done:
			case <-time.After(stopGrace):
				// The run did not unwind: write the images back
				// under the machine's lock, between syscalls, and end.
				fmt.Fprintln(stderr, r.msg)
				if err := s.m.Close(); err != nil {
					fmt.Fprintln(stderr, "vfslab sh:", err)
				}
				os.Exit(r.status)
			}
		}()
	}
	go func() {
		samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-timeout:
				stop(stopReason{msg: fmt.Sprintf("vfslab sh: the run timed out after %v (--timeout)", l.Timeout), status: 124})
				timeout = nil
			case <-tick.C:
				metrics.Read(samples)
				if v := samples[0].Value; v.Kind() == metrics.KindUint64 && int64(v.Uint64()) > limit && s.m.lim.reason() == nil {
					stop(stopReason{msg: fmt.Sprintf("vfslab sh: killed: the run's memory passed its limit of %s (--memory)", sizeString(limit)), status: 137})
				}
			}
		}
	}()
	return ctx, func() {
		close(done)
		cancel()
		debug.SetMemoryLimit(old)
	}
}

// sizeString prints n bytes as 512M or 4G, as --memory takes it.
func sizeString(n int64) string {
	switch {
	case n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "G"
	case n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "M"
	}
	return strconv.FormatInt(n, 10)
}

// finish turns a stopped run's status into the run's: the message and
// 124 or 137.
func (s *Shell) finish(status int, stderr io.Writer) int {
	if r := s.m.lim.reason(); r != nil && !r.interrupt {
		fmt.Fprintln(stderr, r.msg)
		return r.status
	}
	return status
}

// set parses --timeout DURATION or --memory SIZE.
func (l *Limits) set(opt, v string) error {
	if opt == "--timeout" {
		d, err := time.ParseDuration(v)
		if err != nil {
			// timeout(1)'s plain number of seconds.
			n, nerr := strconv.ParseFloat(v, 64)
			if nerr != nil {
				return fmt.Errorf("--timeout %q: want a duration (90s, 5m)", v)
			}
			d = time.Duration(n * float64(time.Second))
		}
		if d <= 0 {
			return fmt.Errorf("--timeout %q: want a duration above 0", v)
		}
		l.Timeout = d
		return nil
	}
	n, ok := parseSize(v)
	if !ok || n < 64<<20 {
		return fmt.Errorf("--memory %q: want a size of 64M or more (512M, 4G)", v)
	}
	l.Memory = n
	return nil
}

// memoryLimit is the run's --memory, or its default.
func (s *Shell) memoryLimit() int64 {
	if s == nil || s.limits.Memory <= 0 {
		return defaultMemory()
	}
	return s.limits.Memory
}

// humanIEC prints n as gnulib's human_readable does with autoscale and
// powers of 1024 ("100 GiB", "1.5 GiB").
func humanIEC(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v := float64(n)
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	if v < 10 && v != float64(int64(v)) {
		return fmt.Sprintf("%.1f %s", math.Ceil(v*10)/10, units[i])
	}
	return fmt.Sprintf("%.0f %s", math.Ceil(v), units[i])
}
