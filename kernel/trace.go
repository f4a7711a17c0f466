package kernel

import (
	"fmt"
	"io"
	"strings"
	"time"
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
}

// TraceEntry is one line of a function_graph trace: a function entered, a
// function left (with its duration), or a note.
type TraceEntry struct {
	Depth int
	Kind  TraceKind
	Func  string
	Note  string
	Dur   time.Duration
	at    time.Time
}

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
	tr.Entries = append(tr.Entries, TraceEntry{Depth: tr.depth, Kind: TraceEnter, Func: fn, at: tr.now()})
	idx := len(tr.Entries) - 1
	tr.depth++
	return func() {
		tr.depth--
		start := tr.Entries[idx].at
		tr.Entries = append(tr.Entries, TraceEntry{Depth: tr.depth, Kind: TraceExit, Func: fn, Dur: tr.now().Sub(start)})
	}
}

// Tracing reports whether a tracer is attached, so that a caller builds a
// note's text only when it will be kept.
func (t *Task) Tracing() bool { return t.Tracer != nil }

// TraceNote adds a note at the current depth (like trace_printk).
func (t *Task) TraceNote(format string, args ...any) {
	if tr := t.Tracer; tr != nil {
		tr.Entries = append(tr.Entries, TraceEntry{Depth: tr.depth, Kind: TraceNote, Note: fmt.Sprintf(format, args...)})
	}
}

// Print writes the trace as function_graph does: a function with no traced
// callees on one line with its duration, others as "name() {" ... "}".
// Durations are omitted when withTimes is false (for golden tests).
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
				fmt.Fprintf(w, " %s |  %s%s();\n", dur(es[i+1].Dur), pad, e.Func)
				i++
				continue
			}
			fmt.Fprintf(w, " %s |  %s%s() {\n", strings.Repeat(" ", 12), pad, e.Func)
		case TraceExit:
			fmt.Fprintf(w, " %s |  %s} /* %s */\n", dur(e.Dur), pad, e.Func)
		case TraceNote:
			fmt.Fprintf(w, " %s |  %s/* %s */\n", strings.Repeat(" ", 12), pad, e.Note)
		}
	}
}
