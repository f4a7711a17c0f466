package kernel

import (
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/events"
)

// EvBug counts BUG and KASAN reports.
var EvBug = events.Register("bug", "BUG()/BUG_ON() and KASAN reports raised")

// Bug is a kernel BUG or KASAN report. In the kernel either kills the task
// (an oops); in the simulator the operation that raised it fails with the
// *Bug as its error, the report is kept in the machine's BugLog, and the
// program goes on.
type Bug struct {
	// Kind is "BUG" for BUG()/BUG_ON(), "KASAN: slab-out-of-bounds" for an
	// access past the end of an allocation, "BUG: kernel NULL pointer
	// dereference" and "BUG: unexpected panic" for other faults.
	Kind string
	// Msg says what went wrong (the BUG_ON condition, the runtime message).
	Msg string
	// Func, File and Line locate the faulting code.
	Func string
	File string
	Line int
	// Size and Offset describe an out-of-bounds access: the region's size
	// and the offset accessed (-1 when unknown).
	Size   int
	Offset int
	// Task is the task that raised it ("comm[pid]").
	Task string
}

// Error renders the report's first line as the kernel would print it, e.g.
// "KASAN: slab-out-of-bounds in generic_ci_match: access at offset 300 of
// 128-byte region".
func (b *Bug) Error() string {
	var s strings.Builder
	s.WriteString(b.Kind)
	if b.Func != "" {
		fmt.Fprintf(&s, " in %s", b.Func)
	}
	if b.Offset >= 0 && b.Size >= 0 {
		fmt.Fprintf(&s, ": access at offset %d of %d-byte region", b.Offset, b.Size)
	}
	if b.Msg != "" {
		fmt.Fprintf(&s, ": %s", b.Msg)
	}
	return s.String()
}

// String is the canonical one-line dump of the report, with its location.
func (b *Bug) String() string {
	return fmt.Sprintf("%s at %s:%d task=%s", b.Error(), b.File, b.Line, b.Task)
}

// Dies reports whether the kernel would kill the task that raised b: a
// BUG()/BUG_ON() or a fault oopses (die(), then do_exit), while a KASAN
// report is printed and execution goes on (unless panic_on_warn or
// kasan.fault=panic).
func (b *Bug) Dies() bool { return !strings.HasPrefix(b.Kind, "KASAN") }

// Is makes errors.Is(err, ErrBug) true for every *Bug.
func (b *Bug) Is(target error) bool { return target == ErrBug }

// ErrBug matches any *Bug with errors.Is.
var ErrBug = errors.New("kernel BUG")

// AsBug returns the *Bug in err's chain, if any.
func AsBug(err error) (*Bug, bool) {
	var b *Bug
	ok := errors.As(err, &b)
	return b, ok
}

// BugLog keeps every report raised on a machine.
type BugLog struct {
	mu   sync.Mutex
	bugs []*Bug
}

// Add records b.
func (l *BugLog) Add(b *Bug) {
	l.mu.Lock()
	l.bugs = append(l.bugs, b)
	l.mu.Unlock()
}

// All returns the reports recorded so far.
func (l *BugLog) All() []*Bug {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*Bug(nil), l.bugs...)
}

// Len returns the number of reports.
func (l *BugLog) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.bugs)
}

// BUG raises a kernel BUG (include/asm-generic/bug.h BUG()): it panics with
// a *Bug that Recover turns into a report at the simulator boundary.
func BUG(msg string) {
	b := &Bug{Kind: "BUG", Msg: msg, Size: -1, Offset: -1}
	b.locate(1)
	panic(b)
}

// BUGOn raises a BUG when cond is true (BUG_ON). msg names the condition.
func BUGOn(cond bool, msg string) {
	if cond {
		b := &Bug{Kind: "BUG", Msg: msg, Size: -1, Offset: -1}
		b.locate(1)
		panic(b)
	}
}

// WarnOn logs a warning when cond is true (WARN_ON) and returns cond, like
// the kernel macro; the operation goes on. The warning is recorded in the
// machine's Warnings (its Func is the calling model function, its Msg the
// condition) and taints the machine with TAINT_WARN, as __warn does.
func (t *Task) WarnOn(cond bool, msg string) bool {
	if cond {
		pc, file, line, _ := runtime.Caller(1)
		t.Printk("WARNING: CPU: 0 PID: %d at %s:%d %s", t.PID, file, line, msg)
		fn := ""
		if f := runtime.FuncForPC(pc); f != nil {
			fn = shortFunc(f.Name())
		}
		t.addWarning(&Warning{Func: fn, Msg: msg, File: file, Line: line})
	}
	return cond
}

func (b *Bug) locate(skip int) {
	pc, file, line, ok := runtime.Caller(skip + 1)
	if !ok {
		return
	}
	b.File, b.Line = file, line
	if f := runtime.FuncForPC(pc); f != nil {
		b.Func = shortFunc(f.Name())
	}
}

// shortFunc strips the import path: "github.com/x/vfslab/f2fs.findInBlock"
// becomes "f2fs.findInBlock".
func shortFunc(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// Recover is deferred at the simulator boundary (a syscall entry, a CLI
// command, a benchmark operation):
//
//	func (s *System) Open(t *kernel.Task, ...) (fd int, err error) {
//		defer t.Recover(&err)
//		...
//	}
//
// It turns a panic raised below it into a BUG report: a *Bug from BUG or
// BUGOn, a runtime bounds error (a write past the end of a kmalloc buffer,
// reported as KASAN slab-out-of-bounds with the region size and offset), or
// any other runtime fault. The report is recorded in the machine's BugLog,
// logged, counted, and stored in *errp; the program goes on.
//
// The machine is tainted as the kernel taints it: TAINT_DIE ('D') for a
// task that oopses (oops_end), TAINT_BAD_PAGE ('B') for a KASAN report
// (mm/kasan/report.c end_report). The locks the task recorded with
// LockAcquire and did not release are listed and released (see
// releaseHeldLocks), so that a later taker does not hang.
func (t *Task) Recover(errp *error) {
	r := recover()
	if r == nil {
		return
	}
	b := bugFromPanic(r)
	b.Task = t.String()
	t.K.Bugs.Add(b)
	t.Inc(EvBug)
	// The report's first line: a KASAN report begins "BUG: KASAN: ..."
	// (mm/kasan/report.c print_error_description), as the other kinds
	// begin with "BUG", so log scanners (xfstests' _check_dmesg) find it.
	if strings.HasPrefix(b.Kind, "KASAN") {
		t.Printk("BUG: %s", b.String())
	} else {
		t.Printk("%s", b.String())
	}
	t.Printk("CPU: 0 PID: %d Comm: %s %s", t.PID, t.Comm, t.K.PrintTainted())
	if b.Dies() {
		t.K.AddTaint(TAINT_DIE)
	} else {
		t.K.AddTaint(TAINT_BAD_PAGE)
	}
	t.releaseHeldLocks(b)
	if errp != nil {
		*errp = b
	}
}

var boundsRE = regexp.MustCompile(`\[(?:\d*:)?(\d+)(?::\d*)?\] with (?:length|capacity) (\d+)`)

func bugFromPanic(r any) *Bug {
	if b, ok := r.(*Bug); ok {
		return b
	}
	b := &Bug{Size: -1, Offset: -1}
	switch v := r.(type) {
	case runtime.Error:
		msg := v.Error()
		b.Msg = strings.TrimPrefix(msg, "runtime error: ")
		switch {
		case strings.Contains(msg, "out of range"):
			b.Kind = "KASAN: slab-out-of-bounds"
			if m := boundsRE.FindStringSubmatch(msg); m != nil {
				b.Offset, _ = strconv.Atoi(m[1])
				b.Size, _ = strconv.Atoi(m[2])
			}
		case strings.Contains(msg, "nil pointer"):
			b.Kind = "BUG: kernel NULL pointer dereference"
		default:
			b.Kind = "BUG: unexpected panic"
		}
	case error:
		b.Kind, b.Msg = "BUG: unexpected panic", v.Error()
	default:
		b.Kind, b.Msg = "BUG: unexpected panic", fmt.Sprint(v)
	}
	b.faultSite()
	return b
}

// faultSite finds the frame that panicked: the first frame after the
// runtime's panic machinery that is neither the runtime nor this package.
func (b *Bug) faultSite() {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	sawPanic := false
	for {
		f, more := frames.Next()
		switch {
		case strings.HasPrefix(f.Function, "runtime."):
			if strings.HasPrefix(f.Function, "runtime.gopanic") || strings.HasPrefix(f.Function, "runtime.panic") || strings.HasPrefix(f.Function, "runtime.goPanic") {
				sawPanic = true
			}
		case sawPanic:
			b.Func, b.File, b.Line = shortFunc(f.Function), f.File, f.Line
			return
		}
		if !more {
			return
		}
	}
}

// ErrnoOrBug returns the errno of err, or EFAULT for a BUG report (the
// nearest errno to "the task oopsed"), for interfaces that must return an
// errno.
func ErrnoOrBug(err error) error {
	if _, ok := AsBug(err); ok {
		return errno.EFAULT
	}
	return err
}
