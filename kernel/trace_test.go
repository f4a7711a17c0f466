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
