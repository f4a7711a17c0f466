package kernel

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vfslab/vfslab/events"
)

// The output formats of a recorded trace. A Tracer records what ftrace's
// function_graph tracer records (kernel/trace/trace_functions_graph.c);
// these write it as the simulator's own text, as
// /sys/kernel/tracing/trace prints a function_graph trace, or as Chrome
// Trace Event JSON, the format ui.perfetto.dev and chrome://tracing open.

// TraceFormat names an output format of WriteTrace.
type TraceFormat string

// The trace formats.
const (
	// TraceText is what `vfslab trace` prints: Tracer.Print's tree, the
	// syscall's result and the events it counted.
	TraceText TraceFormat = "text"
	// TraceFtrace is function_graph's own layout: the CPU, DURATION and
	// FUNCTION CALLS columns, the overhead markers, the funcgraph-tail
	// comment on closing braces and funcgraph-retval return values.
	TraceFtrace TraceFormat = "ftrace"
	// TracePerfetto is Chrome Trace Event JSON: an X (complete) event per
	// function, i (instant) events for notes, C (counter) events for the
	// counted events and M (metadata) events naming the process and one
	// thread per task.
	TracePerfetto TraceFormat = "perfetto"
)

// TraceFormats lists the formats in the order help texts name them.
var TraceFormats = []TraceFormat{TraceText, TraceFtrace, TracePerfetto}

// ParseTraceFormat reads a --format value. Errors: a one-line message
// naming the valid formats.
func ParseTraceFormat(s string) (TraceFormat, error) {
	for _, f := range TraceFormats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown trace format %q; valid: text, ftrace, perfetto", s)
}

// TraceTask is one task's trace in an export: its tracer and how the
// viewers label it.
type TraceTask struct {
	// Comm and PID name the task (the thread's name and tid in perfetto,
	// the task column of ftrace's funcgraph-proc).
	Comm string
	PID  int
	// CPU is the CPU column ftrace prints for the task's lines.
	CPU    int
	Tracer *Tracer
}

// TraceCounter is one counted event, written as a C event (perfetto) or
// in the events line (text).
type TraceCounter struct {
	Name  string
	Value int64
}

// CountersOf lists the non-zero counts of c, sorted by event name, as
// TraceExport.Counters.
func CountersOf(c *events.Counters) []TraceCounter {
	m := c.Map()
	out := make([]TraceCounter, 0, len(m))
	for name, n := range m {
		out = append(out, TraceCounter{Name: name, Value: int64(n)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// TraceExport is a recorded trace with what the formats print around it.
type TraceExport struct {
	// Header lines are printed first: "# key: value" comments in ftrace,
	// "/* ... */" lines in text, metadata args in perfetto.
	Header []string
	// Tasks are the traced tasks, in the order they are written.
	Tasks []TraceTask
	// Result is the syscall and its result ("open(...) = 3"), printed
	// after the tree in text.
	Result string
	// Counters are the events the traced code counted; text prints them
	// when ShowCounters is set, perfetto always.
	Counters     []TraceCounter
	ShowCounters bool
	// Times prints durations in text (false for golden output with the
	// real clock).
	Times bool
	// Process names the process track in perfetto ("vfslab" when empty).
	Process string
	// Log lines (dmesg) follow the text output.
	Log []string
}

// WriteTrace writes x in format f. Errors: the writer's; an unknown
// format.
func WriteTrace(w io.Writer, x *TraceExport, f TraceFormat) error {
	bw := bufio.NewWriter(w)
	switch f {
	case TraceText:
		writeText(bw, x)
	case TraceFtrace:
		writeFtrace(bw, x)
	case TracePerfetto:
		if err := writePerfetto(bw, x); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown trace format %q; valid: text, ftrace, perfetto", string(f))
	}
	return bw.Flush()
}

// retvalComment is funcgraph-retval's comment: print_graph_retval prints a
// value that is an error code in decimal, any other in hex.
func retvalComment(ret int64) string {
	if ret < 0 && ret >= -4095 { // IS_ERR_VALUE
		return " /* = " + strconv.FormatInt(ret, 10) + " */"
	}
	return " /* = 0x" + strconv.FormatUint(uint64(ret), 16) + " */"
}

// closeComment is the comment on a closing brace: the function's name
// (funcgraph-tail), with its return value when known.
func closeComment(e TraceEntry) string {
	if e.HasRet {
		ret := retvalComment(e.Ret)
		return " /* " + e.Func + ret[3:]
	}
	return " /* " + e.Func + " */"
}

func writeText(w io.Writer, x *TraceExport) {
	for _, h := range x.Header {
		fmt.Fprintf(w, "/* %s */\n", h)
	}
	multi := len(x.Tasks) > 1
	for _, tt := range x.Tasks {
		if multi {
			fmt.Fprintf(w, "/* task %s-%d */\n", tt.Comm, tt.PID)
		}
		if tt.Tracer != nil {
			tt.Tracer.Print(w, x.Times)
		}
	}
	if x.Result != "" {
		fmt.Fprintln(w, x.Result)
	}
	if x.ShowCounters {
		parts := make([]string, 0, len(x.Counters))
		for _, c := range x.Counters {
			parts = append(parts, fmt.Sprintf("%s=%d", c.Name, c.Value))
		}
		if len(parts) == 0 {
			parts = []string{"(none)"} // as events.Counters prints nothing counted
		}
		fmt.Fprintf(w, "events: %s\n", strings.Join(parts, " "))
	}
	for _, l := range x.Log {
		fmt.Fprintf(w, "dmesg: %s\n", l)
	}
}

// Overhead markers, trace_find_mark (kernel/trace/trace_output.c): the
// first whose threshold the duration exceeds.
var traceMarks = []struct {
	ns  time.Duration
	sym byte
}{
	{time.Second, '$'},
	{100 * time.Millisecond, '@'},
	{10 * time.Millisecond, '*'},
	{time.Millisecond, '#'},
	{100 * time.Microsecond, '!'},
	{10 * time.Microsecond, '+'},
}

// TraceFindMark is trace_find_mark: the overhead marker function_graph
// prints before a duration, or ' '.
func TraceFindMark(d time.Duration) byte {
	for _, m := range traceMarks {
		if d > m.ns {
			return m.sym
		}
	}
	return ' '
}

// TracePrintGraphDuration is trace_print_graph_duration: the duration in
// microseconds with at most seven digits ("12.345 us "), padded to the
// column's width.
func TracePrintGraphDuration(d time.Duration) string {
	ns := d.Nanoseconds()
	if ns < 0 {
		ns = 0
	}
	usecs, rem := ns/1000, ns%1000
	s := strconv.FormatInt(usecs, 10)
	n := len(s)
	if n < 7 {
		frac := fmt.Sprintf("%03d", rem)
		// snprintf(nsecs_str, min(sizeof(nsecs_str), 8 - len), ...)
		// keeps at most 7-len digits.
		if keep := 7 - n; keep < len(frac) {
			frac = frac[:keep]
		}
		s += "." + frac
		n += len(frac) + 1
	}
	s += " us "
	for ; n < 8; n++ {
		s += " "
	}
	return s
}

// printGraphDuration is print_graph_duration with the overhead flag: the
// marker, the duration and the column's bar.
func printGraphDuration(d time.Duration) string {
	return string(TraceFindMark(d)) + " " + TracePrintGraphDuration(d) + "|  "
}

// ftraceFill is FLAGS_FILL_FULL: the duration column of a line that has
// none (a function's entry, a comment).
const ftraceFill = "              |  "

func writeFtrace(w io.Writer, x *TraceExport) {
	fmt.Fprintln(w, "# tracer: function_graph")
	for _, h := range x.Header {
		fmt.Fprintf(w, "# %s\n", h)
	}
	fmt.Fprintln(w, "#")
	maxCPU := 0
	for _, tt := range x.Tasks {
		if tt.CPU > maxCPU {
			maxCPU = tt.CPU
		}
	}
	cpuw := len(strconv.Itoa(maxCPU))
	fmt.Fprintf(w, "# %-*s DURATION                  FUNCTION CALLS\n", cpuw+3, "CPU")
	fmt.Fprintf(w, "# %-*s  |   |                     |   |   |   |\n", cpuw+3, "|")
	for ti, tt := range x.Tasks {
		if tt.Tracer == nil {
			continue
		}
		cpu := fmt.Sprintf(" %*d) ", cpuw, tt.CPU)
		if ti > 0 {
			// print_graph_proc's context-switch banner.
			prev := x.Tasks[ti-1]
			fmt.Fprintf(w, " ------------------------------------------\n")
			fmt.Fprintf(w, " %*d)  %s-%d  =>  %s-%d\n", cpuw, tt.CPU, prev.Comm, prev.PID, tt.Comm, tt.PID)
			fmt.Fprintf(w, " ------------------------------------------\n\n")
		}
		es := tt.Tracer.Entries
		for i := 0; i < len(es); i++ {
			e := es[i]
			pad := strings.Repeat("  ", e.Depth)
			switch e.Kind {
			case TraceEnter:
				if i+1 < len(es) && es[i+1].Kind == TraceExit && es[i+1].Func == e.Func {
					ex := es[i+1]
					ret := ""
					if ex.HasRet {
						ret = retvalComment(ex.Ret)
					}
					fmt.Fprintf(w, "%s%s%s%s();%s%s\n", cpu, printGraphDuration(ex.Dur), pad, e.Func, inlineComment(e), ret)
					i++
					continue
				}
				fmt.Fprintf(w, "%s%s%s%s() {%s\n", cpu, ftraceFill, pad, e.Func, inlineComment(e))
			case TraceExit:
				fmt.Fprintf(w, "%s%s%s}%s\n", cpu, printGraphDuration(e.Dur), pad, closeComment(e))
			case TraceNote:
				// trace_printk in a function_graph trace: a comment.
				fmt.Fprintf(w, "%s%s%s/* %s */\n", cpu, ftraceFill, pad, e.Note)
			}
		}
	}
}

// PerfettoEvent is one event of the Chrome Trace Event Format (the JSON
// Array/Object format ui.perfetto.dev and chrome://tracing read): Ph is
// the phase, Ts and Dur are microseconds.
type PerfettoEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  *float64       `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	S    string         `json:"s,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// PerfettoTrace is the JSON Object Format's top level.
type PerfettoTrace struct {
	TraceEvents     []PerfettoEvent   `json:"traceEvents"`
	DisplayTimeUnit string            `json:"displayTimeUnit"`
	OtherData       map[string]string `json:"otherData,omitempty"`
}

// perfettoPID is the process every task's track belongs to.
const perfettoPID = 1

// PerfettoEvents converts x to trace events: M events naming the process
// and each task's thread, then per task its X events in the order the
// functions were entered (so a viewer nests them by ts and dur) and i
// events for its notes, then C events with the counters at the trace's
// start (zero) and end. Times are microseconds since the earliest entry
// of any task.
func PerfettoEvents(x *TraceExport) []PerfettoEvent {
	proc := x.Process
	if proc == "" {
		proc = "vfslab"
	}
	var t0, tEnd time.Time
	first := true
	for _, tt := range x.Tasks {
		if tt.Tracer == nil {
			continue
		}
		for _, e := range tt.Tracer.Entries {
			if first || e.at.Before(t0) {
				t0 = e.at
			}
			if first || e.at.After(tEnd) {
				tEnd = e.at
			}
			first = false
		}
	}
	us := func(t time.Time) float64 { return float64(t.Sub(t0).Nanoseconds()) / 1e3 }
	evs := []PerfettoEvent{{Name: "process_name", Ph: "M", Pid: perfettoPID, Args: map[string]any{"name": proc}}}
	for _, tt := range x.Tasks {
		evs = append(evs, PerfettoEvent{Name: "thread_name", Ph: "M", Pid: perfettoPID, Tid: tt.PID,
			Args: map[string]any{"name": fmt.Sprintf("%s-%d", tt.Comm, tt.PID)}})
	}
	for _, tt := range x.Tasks {
		if tt.Tracer == nil {
			continue
		}
		es := tt.Tracer.Entries
		// Match each exit with its entry, as function_graph pairs them by
		// depth.
		var stack []int
		xev := make(map[int]int) // entry index -> event index
		for i, e := range es {
			switch e.Kind {
			case TraceEnter:
				stack = append(stack, i)
				xev[i] = len(evs)
				cat := "function"
				if e.Inline {
					cat = "inline"
				}
				evs = append(evs, PerfettoEvent{Name: e.Func, Cat: cat, Ph: "X", Ts: us(e.at), Pid: perfettoPID, Tid: tt.PID})
			case TraceExit:
				if len(stack) == 0 {
					continue
				}
				start := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				ev := &evs[xev[start]]
				d := float64(e.at.Sub(es[start].at).Nanoseconds()) / 1e3
				ev.Dur = &d
				if e.HasRet {
					ev.Args = map[string]any{"ret": e.Ret}
				}
			case TraceNote:
				evs = append(evs, PerfettoEvent{Name: e.Note, Cat: "note", Ph: "i", S: "t", Ts: us(e.at), Pid: perfettoPID, Tid: tt.PID})
			}
		}
		// A function still running when the trace ended lasts to the end.
		for _, i := range stack {
			d := float64(tEnd.Sub(es[i].at).Nanoseconds()) / 1e3
			evs[xev[i]].Dur = &d
		}
	}
	if len(x.Counters) > 0 {
		zero := make(map[string]any, len(x.Counters))
		end := make(map[string]any, len(x.Counters))
		for _, c := range x.Counters {
			zero[c.Name] = 0
			end[c.Name] = c.Value
		}
		evs = append(evs,
			PerfettoEvent{Name: "events", Cat: "counter", Ph: "C", Ts: 0, Pid: perfettoPID, Args: zero},
			PerfettoEvent{Name: "events", Cat: "counter", Ph: "C", Ts: us(tEnd), Pid: perfettoPID, Args: end})
	}
	return evs
}

func writePerfetto(w io.Writer, x *TraceExport) error {
	pt := PerfettoTrace{TraceEvents: PerfettoEvents(x), DisplayTimeUnit: "ns"}
	if len(x.Header) > 0 || x.Result != "" {
		pt.OtherData = map[string]string{}
		for i, h := range x.Header {
			k, v, ok := strings.Cut(h, ": ")
			if !ok {
				k, v = "header"+strconv.Itoa(i), h
			}
			pt.OtherData[k] = v
		}
		if x.Result != "" {
			pt.OtherData["result"] = x.Result
		}
	}
	// One event per line: legible, and still one JSON document.
	if _, err := io.WriteString(w, "{\"traceEvents\":[\n"); err != nil {
		return err
	}
	for i, ev := range pt.TraceEvents {
		b, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		sep := ",\n"
		if i == len(pt.TraceEvents)-1 {
			sep = "\n"
		}
		if _, err := fmt.Fprintf(w, "%s%s", b, sep); err != nil {
			return err
		}
	}
	tail := map[string]any{"displayTimeUnit": pt.DisplayTimeUnit}
	if pt.OtherData != nil {
		tail["otherData"] = pt.OtherData
	}
	keys := make([]string, 0, len(tail))
	for k := range tail {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if _, err := io.WriteString(w, "]"); err != nil {
		return err
	}
	for _, k := range keys {
		b, err := json.Marshal(tail[k])
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, ",\n%q:%s", k, b); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "}\n")
	return err
}

// ValidatePerfetto checks data against the rules of the Trace Event
// Format that the viewers rely on: one JSON object with a traceEvents
// array; every event has name, ph, ts, pid and tid; ph is one this package
// writes (X, i, C, M); X events have a non-negative dur and nest properly
// on their thread (an event that starts inside another ends inside it);
// X and i events of a thread come in non-decreasing ts order; i events
// have a scope; M events name something; C events carry numeric args.
// It returns the first violation found.
func ValidatePerfetto(data []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	raw, ok := top["traceEvents"]
	if !ok {
		return fmt.Errorf("no traceEvents array")
	}
	var evs []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &evs); err != nil {
		return fmt.Errorf("traceEvents: %w", err)
	}
	type open struct {
		name       string
		start, end float64
	}
	stacks := map[int64][]open{}
	last := map[int64]float64{}
	for i, ev := range evs {
		for _, k := range []string{"name", "ph", "ts", "pid", "tid"} {
			if _, ok := ev[k]; !ok {
				return fmt.Errorf("event %d: no %q", i, k)
			}
		}
		var name, ph string
		var ts float64
		var pid, tid int64
		if json.Unmarshal(ev["name"], &name) != nil || json.Unmarshal(ev["ph"], &ph) != nil ||
			json.Unmarshal(ev["ts"], &ts) != nil || json.Unmarshal(ev["pid"], &pid) != nil ||
			json.Unmarshal(ev["tid"], &tid) != nil {
			return fmt.Errorf("event %d: name, ph, ts, pid or tid of the wrong type", i)
		}
		if ts < 0 {
			return fmt.Errorf("event %d (%s): negative ts", i, name)
		}
		switch ph {
		case "X", "i":
			if ts < last[tid] {
				return fmt.Errorf("event %d (%s): ts %v before the thread's previous %v", i, name, ts, last[tid])
			}
			last[tid] = ts
			if ph == "i" {
				var s string
				if json.Unmarshal(ev["s"], &s) != nil || (s != "g" && s != "p" && s != "t") {
					return fmt.Errorf("event %d (%s): instant event without scope g, p or t", i, name)
				}
				continue
			}
			var dur float64
			if json.Unmarshal(ev["dur"], &dur) != nil || dur < 0 {
				return fmt.Errorf("event %d (%s): X event without a non-negative dur", i, name)
			}
			st := stacks[tid]
			for len(st) > 0 && ts >= st[len(st)-1].end {
				st = st[:len(st)-1]
			}
			if n := len(st); n > 0 && ts+dur > st[n-1].end+1e-9 {
				return fmt.Errorf("event %d (%s): [%v, %v] starts inside %s [%v, %v] but ends after it",
					i, name, ts, ts+dur, st[n-1].name, st[n-1].start, st[n-1].end)
			}
			stacks[tid] = append(st, open{name, ts, ts + dur})
		case "M":
			var args struct {
				Name *string `json:"name"`
			}
			if json.Unmarshal(ev["args"], &args) != nil || args.Name == nil {
				return fmt.Errorf("event %d (%s): metadata event without args.name", i, name)
			}
		case "C":
			var args map[string]float64
			if json.Unmarshal(ev["args"], &args) != nil || len(args) == 0 {
				return fmt.Errorf("event %d (%s): counter event without numeric args", i, name)
			}
		default:
			return fmt.Errorf("event %d (%s): unknown phase %q", i, name, ph)
		}
	}
	return nil
}
