package kernel

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vfslab/vfslab/events"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// stepClock advances by the next of steps at each reading (the last step
// repeats), so that a synthetic trace's durations cross the overhead
// markers' thresholds.
func stepClock(steps ...time.Duration) func() time.Time {
	now := time.Unix(0, 0)
	i := 0
	return func() time.Time {
		now = now.Add(steps[i])
		if i < len(steps)-1 {
			i++
		}
		return now
	}
}

// syntheticTrace records a small open(2)-like call tree on task: a note,
// leaves, a function returning -ENOKEY through TraceReturn and a return value
// set afterwards on the outermost exit.
func syntheticTrace(task *Task) {
	func() {
		defer task.Trace("do_sys_openat2")()
		func() {
			defer task.Trace("path_openat")()
			task.TraceNote("dcache miss on %q: RCU-walk -> ref-walk", "secret")
			func() {
				defer task.Trace("lookup_slow")()
				task.Trace("ext4_lookup")()
			}()
			func() (err error) {
				defer task.Trace("fscrypt_file_open")()
				defer func() { task.TraceReturn(err) }()
				task.Trace("fscrypt_get_encryption_info")()
				return syscall.Errno(126) // ENOKEY
			}()
		}()
	}()
	tr := task.Tracer
	tr.SetReturn(len(tr.Entries)-1, -126)
}

func syntheticExport(t *testing.T) *TraceExport {
	k := New()
	a := k.NewTask("cat")
	a.Tracer = &Tracer{Clock: stepClock(time.Microsecond, 20*time.Microsecond, 300*time.Microsecond,
		2*time.Millisecond, 500*time.Nanosecond, 1234567*time.Nanosecond)}
	syntheticTrace(a)
	b := k.NewTask("kworker/0:1")
	b.Tracer = &Tracer{Clock: ModelClock(time.Microsecond)}
	func() {
		defer b.Trace("fscrypt_decrypt_bio")()
		b.Trace("crypto_skcipher_decrypt")()
	}()
	return &TraceExport{
		Header:   []string{"fs: ext4", "patches: fscrypt-file-open=base"},
		Tasks:    []TraceTask{{Comm: a.Comm, PID: a.PID, CPU: 0, Tracer: a.Tracer}, {Comm: b.Comm, PID: b.PID, CPU: 1, Tracer: b.Tracer}},
		Result:   `open("/secret/note", O_RDONLY) = -1 ENOKEY`,
		Counters: []TraceCounter{{"dget", 1}, {"lockref_rmw", 2}},
		Times:    true, ShowCounters: true,
		Log: []string{"fscrypt: key not present"},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestTraceFormatsGolden(t *testing.T) {
	for _, f := range TraceFormats {
		t.Run(string(f), func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteTrace(&b, syntheticExport(t), f); err != nil {
				t.Fatal(err)
			}
			golden(t, "trace."+string(f)+".golden", b.Bytes())
		})
	}
}

func TestParseTraceFormat(t *testing.T) {
	for _, f := range TraceFormats {
		if g, err := ParseTraceFormat(string(f)); err != nil || g != f {
			t.Errorf("ParseTraceFormat(%q) = %q, %v", f, g, err)
		}
	}
	if _, err := ParseTraceFormat("json"); err == nil || !strings.Contains(err.Error(), "valid: text, ftrace, perfetto") {
		t.Errorf("ParseTraceFormat(json): %v", err)
	}
	if err := WriteTrace(&bytes.Buffer{}, &TraceExport{}, "xml"); err == nil {
		t.Error("WriteTrace accepted format xml")
	}
}

// TestTraceFindMark pins trace_find_mark's thresholds: a duration must
// exceed a threshold to take its marker.
func TestTraceFindMark(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want byte
	}{
		{0, ' '}, {10 * time.Microsecond, ' '}, {10*time.Microsecond + 1, '+'},
		{100*time.Microsecond + 1, '!'}, {time.Millisecond + 1, '#'},
		{10*time.Millisecond + 1, '*'}, {100*time.Millisecond + 1, '@'}, {time.Second + 1, '$'},
	}
	for _, c := range cases {
		if got := TraceFindMark(c.d); got != c.want {
			t.Errorf("TraceFindMark(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

// TestTracePrintGraphDuration pins the duration column: seven digits at
// most, " us ", padded to eight characters before the unit.
func TestTracePrintGraphDuration(t *testing.T) {
	cases := map[time.Duration]string{
		431:                     "0.431 us    ",
		12345 * time.Nanosecond: "12.345 us   ",
		1234567:                 "1234.567 us ",
		123456789:               "123456.7 us ",
		1234567890:              "1234567 us  ",
		12345678901:             "12345678 us ",
	}
	for d, want := range cases {
		if got := TracePrintGraphDuration(d); got != want {
			t.Errorf("TracePrintGraphDuration(%d) = %q, want %q", d, got, want)
		}
	}
}

func TestTraceReturnRecordsErrno(t *testing.T) {
	task := New().NewTask("t")
	task.Tracer = &Tracer{Clock: ModelClock(time.Microsecond)}
	traced := func(fn string, ret error) (err error) {
		defer task.Trace(fn)()
		defer func() { task.TraceReturn(err) }()
		// A callee's exit must not take its caller's return value.
		task.Trace("inner")()
		return ret
	}
	traced("vfs_rename", syscall.Errno(18)) // EXDEV
	traced("vfs_open", nil)
	traced("odd", errors.New("not an errno"))
	func() {
		defer task.Trace("ksys_read")()
		task.TraceReturnValue(11)
	}()
	var rets []string
	for _, e := range task.Tracer.Entries {
		if e.Kind == TraceExit {
			if e.Func == "inner" && e.HasRet {
				t.Errorf("inner took a return value %d", e.Ret)
			}
			if e.HasRet {
				rets = append(rets, e.Func+"="+strconv.FormatInt(e.Ret, 10))
			}
		}
	}
	if got, want := strings.Join(rets, " "), "vfs_rename=-18 vfs_open=0 odd=-5 ksys_read=11"; got != want {
		t.Errorf("returns %q, want %q", got, want)
	}
	var b strings.Builder
	task.Tracer.Print(&b, false)
	for _, want := range []string{"} /* vfs_rename = -18 */", "} /* vfs_open = 0x0 */", "ksys_read(); /* = 0xb */"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
}

// TestTraceReturnUntracedAllocatesNothing checks the pattern's cost
// without a tracer: no Go heap allocation.
func TestTraceReturnUntracedAllocatesNothing(t *testing.T) {
	task := New().NewTask("t")
	f := func() (err error) {
		defer task.Trace("f")()
		defer func() { task.TraceReturn(err) }()
		return syscall.Errno(2)
	}
	if n := testing.AllocsPerRun(100, func() { f() }); n != 0 {
		t.Errorf("%v allocations per untraced call", n)
	}
}

func TestModelClockIsDeterministic(t *testing.T) {
	run := func() string {
		task := New().NewTask("t")
		task.Tracer = &Tracer{Clock: ModelClock(time.Microsecond)}
		syntheticTrace(task)
		var b bytes.Buffer
		if err := WriteTrace(&b, &TraceExport{Tasks: []TraceTask{{Comm: "t", PID: 1, Tracer: task.Tracer}}}, TraceFtrace); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	a, b := run(), run()
	if a != b {
		t.Fatalf("two runs differ:\n%s\n%s", a, b)
	}
	// do_sys_openat2 encloses 5 traced functions: 2*5+1 readings.
	if !strings.Contains(a, "+ 11.000 us   |  } /* do_sys_openat2 = -126 */") {
		t.Errorf("modelled durations:\n%s", a)
	}
}

// TestPerfettoFollowsTheFormat parses the perfetto output back with
// encoding/json and checks it against the Trace Event Format rules, and
// checks that the checker catches each rule broken.
func TestPerfettoFollowsTheFormat(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTrace(&b, syntheticExport(t), TracePerfetto); err != nil {
		t.Fatal(err)
	}
	if err := ValidatePerfetto(b.Bytes()); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	var pt PerfettoTrace
	if err := json.Unmarshal(b.Bytes(), &pt); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	tids := map[int]bool{}
	for _, ev := range pt.TraceEvents {
		count[ev.Ph]++
		if ev.Ph == "X" {
			tids[ev.Tid] = true
		}
	}
	// 6 functions on one task, 2 on the other; 1 note; 2 counter
	// samples; the process and two threads named.
	if count["X"] != 8 || count["i"] != 1 || count["C"] != 2 || count["M"] != 3 || len(tids) != 2 {
		t.Errorf("events by phase %v on threads %v", count, tids)
	}
	if pt.OtherData["result"] == "" || pt.OtherData["fs"] != "ext4" {
		t.Errorf("otherData %v", pt.OtherData)
	}
	for _, ev := range pt.TraceEvents {
		if ev.Name == "fscrypt_file_open" && (ev.Args["ret"] != float64(-126)) {
			t.Errorf("fscrypt_file_open args %v, want ret -126", ev.Args)
		}
	}

	bad := map[string]string{
		"not json":      `{"traceEvents":[`,
		"no array":      `{"events":[]}`,
		"no tid":        `{"traceEvents":[{"name":"f","ph":"X","ts":0,"dur":1,"pid":1}]}`,
		"bad phase":     `{"traceEvents":[{"name":"f","ph":"Q","ts":0,"pid":1,"tid":1}]}`,
		"no dur":        `{"traceEvents":[{"name":"f","ph":"X","ts":0,"pid":1,"tid":1}]}`,
		"overlap":       `{"traceEvents":[{"name":"a","ph":"X","ts":0,"dur":5,"pid":1,"tid":1},{"name":"b","ph":"X","ts":2,"dur":5,"pid":1,"tid":1}]}`,
		"ts backwards":  `{"traceEvents":[{"name":"a","ph":"X","ts":5,"dur":1,"pid":1,"tid":1},{"name":"b","ph":"X","ts":2,"dur":1,"pid":1,"tid":1}]}`,
		"scope":         `{"traceEvents":[{"name":"n","ph":"i","ts":0,"pid":1,"tid":1}]}`,
		"unnamed M":     `{"traceEvents":[{"name":"thread_name","ph":"M","ts":0,"pid":1,"tid":1,"args":{}}]}`,
		"empty counter": `{"traceEvents":[{"name":"c","ph":"C","ts":0,"pid":1,"tid":0,"args":{}}]}`,
	}
	for what, doc := range bad {
		if err := ValidatePerfetto([]byte(doc)); err == nil {
			t.Errorf("%s: accepted %s", what, doc)
		}
	}
	// Overlapping tracks on different threads are fine.
	ok := `{"traceEvents":[{"name":"a","ph":"X","ts":0,"dur":5,"pid":1,"tid":1},{"name":"b","ph":"X","ts":2,"dur":5,"pid":1,"tid":2}]}`
	if err := ValidatePerfetto([]byte(ok)); err != nil {
		t.Errorf("two threads: %v", err)
	}
}

var (
	evTestA = events.Register("trace_format_test_a", "a test event of kernel's trace formats")
	evTestB = events.Register("trace_format_test_b", "another")
)

func TestCountersOf(t *testing.T) {
	c := events.New()
	c.Add(evTestB, 3)
	c.Inc(evTestA)
	cs := CountersOf(c)
	want := []TraceCounter{{"trace_format_test_a", 1}, {"trace_format_test_b", 3}}
	if len(cs) != 2 || cs[0] != want[0] || cs[1] != want[1] {
		t.Errorf("CountersOf = %v, want %v", cs, want)
	}
}
