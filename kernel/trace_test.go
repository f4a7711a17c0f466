package kernel

import (
	"strings"
	"testing"
	"time"
)

func TestTraceFunctionGraph(t *testing.T) {
	k := New()
	task := k.NewTask("cat")
	if task.Tracing() {
		t.Fatal("tracing without a tracer")
	}
	task.Trace("untraced")() // no tracer: a no-op
	clock := time.Unix(0, 0)
	task.Tracer = &Tracer{Clock: func() time.Time { clock = clock.Add(time.Microsecond); return clock }}
	func() {
		defer task.Trace("do_sys_openat2")()
		func() {
			defer task.Trace("path_openat")()
			task.TraceNote("name=%q", "f")
			task.Trace("fscrypt_file_open")()
		}()
	}()
	var b strings.Builder
	task.Tracer.Print(&b, false)
	want := `              |  do_sys_openat2() {
              |    path_openat() {
              |      /* name="f" */
              |      fscrypt_file_open();
              |    } /* path_openat */
              |  } /* do_sys_openat2 */
`
	if b.String() != want {
		t.Fatalf("trace:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	task.Tracer.Print(&b, true)
	if !strings.Contains(b.String(), "    1.000 us |      fscrypt_file_open();") {
		t.Fatalf("timed trace:\n%s", b.String())
	}
}

func BenchmarkTraceDisabled(b *testing.B) {
	task := New().NewTask("b")
	for i := 0; i < b.N; i++ {
		func() { defer task.Trace("f")() }()
	}
}

// TestTraceInline: an inline helper is a node of its own, marked, as a
// leaf and as a parent, in the text and ftrace forms, and a Perfetto event
// of category "inline"; untraced it is a no-op that allocates nothing.
func TestTraceInline(t *testing.T) {
	task := New().NewTask("cat")
	if n := testing.AllocsPerRun(100, func() { task.TraceInline("dget_parent")() }); n != 0 {
		t.Fatalf("untraced TraceInline allocates %v times", n)
	}
	task.Tracer = &Tracer{Clock: ModelClock(time.Microsecond)}
	func() {
		defer task.Trace("fscrypt_file_open")()
		task.TraceInline("dget_parent")()
		func() {
			defer task.TraceInline("skcipher_request_alloc")()
			task.Trace("kmalloc")()
		}()
	}()
	var b strings.Builder
	task.Tracer.Print(&b, false)
	want := `              |  fscrypt_file_open() {
              |    dget_parent(); /* inline */
              |    skcipher_request_alloc() { /* inline */
              |      kmalloc();
              |    } /* skcipher_request_alloc */
              |  } /* fscrypt_file_open */
`
	if b.String() != want {
		t.Fatalf("trace:\n%s\nwant:\n%s", b.String(), want)
	}
	x := &TraceExport{Tasks: []TraceTask{{Comm: "cat", PID: 1, Tracer: task.Tracer}}}
	var f strings.Builder
	if err := WriteTrace(&f, x, TraceFtrace); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.String(), "dget_parent(); /* inline */") || strings.Contains(f.String(), "kmalloc(); /* inline */") {
		t.Fatalf("ftrace:\n%s", f.String())
	}
	var p strings.Builder
	if err := WriteTrace(&p, x, TracePerfetto); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.String(), `"name":"dget_parent","cat":"inline"`) || !strings.Contains(p.String(), `"name":"kmalloc","cat":"function"`) {
		t.Fatalf("perfetto:\n%s", p.String())
	}
}
