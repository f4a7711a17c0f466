package kernel

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/vfslab/vfslab/events"
)

// EvWarn counts WARN() and WARN_ON() reports.
var EvWarn = events.Register("warn", "WARN()/WARN_ON() reports raised")

// Warning is one WARN() or WARN_ON() report (include/asm-generic/bug.h,
// kernel/panic.c __warn). Unlike a BUG, a warning does not stop the task:
// the kernel prints it, taints itself with TAINT_WARN ('W') and goes on,
// and so does the model (unless panic_on_warn, which the model does not
// set).
type Warning struct {
	// Func is the kernel function that raised it (what __warn prints
	// after "at", as %pS), e.g. "check_for_stack".
	Func string
	// Msg is the message: WARN()'s formatted text, or WARN_ON()'s
	// condition.
	Msg string
	// File and Line locate the model code that raised it.
	File string
	Line int
	// Task is the task that raised it ("comm[pid]").
	Task string
}

// Error is the report as one line: "WARNING in check_for_stack: DMA-API:
// ...", the form of a syzbot title.
func (w *Warning) Error() string {
	if w.Func == "" {
		return "WARNING: " + w.Msg
	}
	return fmt.Sprintf("WARNING in %s: %s", w.Func, w.Msg)
}

// String is the canonical one-line dump, with the location and task.
func (w *Warning) String() string {
	return fmt.Sprintf("%s at %s:%d task=%s", w.Error(), w.File, w.Line, w.Task)
}

// WarnLog keeps every warning raised on a machine, in order.
type WarnLog struct {
	mu    sync.Mutex
	warns []*Warning
}

// Add records w.
func (l *WarnLog) Add(w *Warning) {
	l.mu.Lock()
	l.warns = append(l.warns, w)
	l.mu.Unlock()
}

// All returns the warnings recorded so far.
func (l *WarnLog) All() []*Warning {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*Warning(nil), l.warns...)
}

// Len returns the number of warnings.
func (l *WarnLog) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.warns)
}

// Warn is WARN(1, format, args...) raised by the kernel function fn: the
// message and the "WARNING: CPU: 0 PID: ... at fn" line are logged, the
// warning is recorded in the machine's Warnings, counted (EvWarn), and the
// machine is tainted with TAINT_WARN, as __warn does. The task goes on.
func (t *Task) Warn(fn, format string, args ...any) {
	_, file, line, _ := runtime.Caller(1)
	msg := fmt.Sprintf(format, args...)
	t.Printk("%s", msg)
	t.Printk("WARNING: CPU: 0 PID: %d at %s:%d %s", t.PID, file, line, fn)
	t.addWarning(&Warning{Func: fn, Msg: msg, File: file, Line: line})
}

func (t *Task) addWarning(w *Warning) {
	w.Task = t.String()
	t.K.Warnings.Add(w)
	t.Inc(EvWarn)
	t.K.AddTaint(TAINT_WARN)
}
