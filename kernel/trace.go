package kernel

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/vfslab/vfslab/errno"
)

// Tracer records the functions a task enters and leaves, in the manner of
// ftrace's function_graph tracer (kernel/trace/trace_functions_graph.c), so a
// reader can watch a syscall travel through the layers. A Tracer belongs to
// one task.
type Tracer struct {
	// Entries holds the trace, in order.
	Entries []TraceEntry
	// Clock returns the current time; nil means time.Now. Tests set a fake
	// clock for golden output.
	Clock func() time.Time
	depth int
	// pending is a return value TraceReturn recorded for the function
	// entered at pendingDepth, attached to its exit.
	pending      int64
	pendingDepth int
	hasPending   bool
}

// TraceEntry is one line of a function_graph trace: a function entered, a
// function left (with its duration), or a note.
type TraceEntry struct {
	Depth int
	Kind  TraceKind
	Func  string
	Note  string
	Dur   time.Duration
	// Ret is the function's return value on a TraceExit entry, as
	// funcgraph-retval records it, when HasRet says the tracer knows it
	// (TraceReturn, SetReturn): 0 or a negative errno.
	Ret    int64
	HasRet bool
	// Inline marks a TraceEnter entry (and its exit) of a function the
	// kernel declares static inline, which function_graph cannot see
	// (TraceInline): it is shown as "fn() /* inline */".
	Inline bool
	at     time.Time
}

// At is the entry's time on the tracer's clock: when the function was
// entered or left, or, for a note, the time of the entry before it.
func (e TraceEntry) At() time.Time { return e.at }

// TraceKind says what a TraceEntry records.
type TraceKind uint8

// Trace entry kinds.
const (
	TraceEnter TraceKind = iota
	TraceExit
	TraceNote
)

func (tr *Tracer) now() time.Time {
	if tr.Clock != nil {
		return tr.Clock()
	}
	return time.Now()
}

func nop() {}

// Trace records entry into the function fn and returns the function that
// records its exit, so a traced function starts with
//
//	defer t.Trace("fscrypt_file_open")()
//
// With no tracer attached it costs a nil check and returns a no-op. Trace
// layer boundaries (syscalls, VFS and filesystem operations, fscrypt and
// Crypto API entry points), not per-byte or per-dirent helpers.
func (t *Task) Trace(fn string) func() {
	tr := t.Tracer
	if tr == nil {
		return nop
	}
	return tr.enter(fn, false)
}

// TraceInline is Trace for a static inline helper in which a patch's
// difference lives (skcipher_request_alloc, SKCIPHER_REQUEST_ON_STACK,
// dget_parent): function_graph would not show it, since it has no
// mcount call of its own, so the trace marks it "/* inline */" to say
// that a real trace of the kernel would fold it into its caller.
func (t *Task) TraceInline(fn string) func() {
	tr := t.Tracer
	if tr == nil {
		return nop
	}
	return tr.enter(fn, true)
}

func (tr *Tracer) enter(fn string, inline bool) func() {
	tr.Entries = append(tr.Entries, TraceEntry{Depth: tr.depth, Kind: TraceEnter, Func: fn, Inline: inline, at: tr.now()})
	idx := len(tr.Entries) - 1
	tr.depth++
	return func() {
		tr.depth--
		start := tr.Entries[idx].at
		end := tr.now()
		e := TraceEntry{Depth: tr.depth, Kind: TraceExit, Func: fn, Inline: inline, Dur: end.Sub(start), at: end}
		if tr.hasPending && tr.pendingDepth == tr.depth {
			e.Ret, e.HasRet, tr.hasPending = tr.pending, true, false
		}
		tr.Entries = append(tr.Entries, e)
	}
}

// TraceReturn records err as the return value of the innermost traced
// function still running, shown on its closing line as funcgraph-retval
// shows it (0 or the negative errno). A traced function with a named error
// result records it with a second deferred call, which runs before the
// exit that Trace returned:
//
//	defer t.Trace("fscrypt_prepare_rename")()
//	defer func() { t.TraceReturn(err) }()
//
// The deferred closure does not escape, so err stays on the stack and an
// untraced call costs a nil check.
func (t *Task) TraceReturn(err error) {
	if tr := t.Tracer; tr != nil && tr.depth > 0 {
		tr.pending, tr.pendingDepth, tr.hasPending = ErrReturn(err), tr.depth-1, true
	}
}

// TraceReturnValue is TraceReturn for a function returning a number (a
// length, a file descriptor, or a negative errno).
func (t *Task) TraceReturnValue(v int64) {
	if tr := t.Tracer; tr != nil && tr.depth > 0 {
		tr.pending, tr.pendingDepth, tr.hasPending = v, tr.depth-1, true
	}
}

// ErrReturn is the value a kernel function returning int gives for err: 0
// for nil, -errno for an errno, -EIO for any other error.
func ErrReturn(err error) int64 {
	if err == nil {
		return 0
	}
	if e, ok := errno.Of(err); ok {
		return -int64(e)
	}
	return -int64(errno.EIO)
}

// SetReturn records ret as the return value of the TraceExit entry at
// index i (a caller that knows a function's result after the fact, such as
// a syscall's, adds it here). Other entries are left alone.
func (tr *Tracer) SetReturn(i int, ret int64) {
	if i >= 0 && i < len(tr.Entries) && tr.Entries[i].Kind == TraceExit {
		tr.Entries[i].Ret, tr.Entries[i].HasRet = ret, true
	}
}

// ModelClock returns a modelled clock for Tracer.Clock: it starts at the
// Unix epoch and each reading advances it by step, so a function's
// duration is step times one more than twice the number of traced
// functions it called. Traces taken with it are the same on every run,
// for golden tests and for traces a student compares.
func ModelClock(step time.Duration) func() time.Time {
	now := time.Unix(0, 0)
	return func() time.Time {
		now = now.Add(step)
		return now
	}
}

// Tracing reports whether a tracer is attached, so that a caller builds a
// note's text only when it will be kept.
func (t *Task) Tracing() bool { return t.Tracer != nil }

// TraceNote adds a note at the current depth (like trace_printk).
func (t *Task) TraceNote(format string, args ...any) {
	if tr := t.Tracer; tr != nil {
		var at time.Time
		if n := len(tr.Entries); n > 0 {
			at = tr.Entries[n-1].at
		}
		tr.Entries = append(tr.Entries, TraceEntry{Depth: tr.depth, Kind: TraceNote, Note: fmt.Sprintf(format, args...), at: at})
	}
}

// Print writes the trace as function_graph does: a function with no traced
// callees on one line with its duration, others as "name() {" ... "}".
// Durations are omitted when withTimes is false (for golden tests).
// Return values the tracer knows follow as funcgraph-retval prints them.
func (tr *Tracer) Print(w io.Writer, withTimes bool) {
	es := tr.Entries
	for i := 0; i < len(es); i++ {
		e := es[i]
		pad := strings.Repeat("  ", e.Depth)
		dur := func(d time.Duration) string {
			if !withTimes {
				return strings.Repeat(" ", 12)
			}
			return fmt.Sprintf("%9.3f us", float64(d)/1e3)
		}
		switch e.Kind {
		case TraceEnter:
			if i+1 < len(es) && es[i+1].Kind == TraceExit && es[i+1].Func == e.Func {
				ret := ""
				if es[i+1].HasRet {
					ret = retvalComment(es[i+1].Ret)
				}
				fmt.Fprintf(w, " %s |  %s%s();%s%s\n", dur(es[i+1].Dur), pad, e.Func, inlineComment(e), ret)
				i++
				continue
			}
			fmt.Fprintf(w, " %s |  %s%s() {%s\n", strings.Repeat(" ", 12), pad, e.Func, inlineComment(e))
		case TraceExit:
			fmt.Fprintf(w, " %s |  %s}%s\n", dur(e.Dur), pad, closeComment(e))
		case TraceNote:
			fmt.Fprintf(w, " %s |  %s/* %s */\n", strings.Repeat(" ", 12), pad, e.Note)
		}
	}
}

// inlineComment is the mark after a static inline helper's name.
func inlineComment(e TraceEntry) string {
	if e.Inline {
		return " /* inline */"
	}
	return ""
}
