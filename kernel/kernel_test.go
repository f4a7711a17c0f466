package kernel

import (
	"errors"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/patch"
)

var siteT = kmem.NewSite("kernel_test:buf")

func oobWrite(t *Task, n int) (err error) {
	defer t.Recover(&err)
	buf, err := t.Kmalloc(siteT, 64, kmem.GFPKernel)
	if err != nil {
		return err
	}
	dst := buf[:n] // past the end when n > 64: KASAN
	dst[0] = 1
	return nil
}

func TestRecoverTurnsOOBIntoKASANReport(t *testing.T) {
	k := New()
	task := k.NewTask("test")
	defer task.Exit()
	if err := oobWrite(task, 10); err != nil {
		t.Fatal(err)
	}
	err := oobWrite(task, 100)
	b, ok := AsBug(err)
	if !ok {
		t.Fatalf("err = %v, want a *Bug", err)
	}
	if b.Kind != "KASAN: slab-out-of-bounds" || b.Size != 64 || b.Offset != 100 {
		t.Fatalf("bug = %+v", b)
	}
	if b.Func != "kernel.oobWrite" {
		t.Fatalf("fault site = %q, want kernel.oobWrite", b.Func)
	}
	if !errors.Is(err, ErrBug) {
		t.Fatal("errors.Is(err, ErrBug) is false")
	}
	if k.Bugs.Len() != 1 || !k.Log.Contains("slab-out-of-bounds") {
		t.Fatalf("bugs=%d log=%v", k.Bugs.Len(), k.Log.Lines())
	}
}

func bugOn(t *Task, cond bool) (err error) {
	defer t.Recover(&err)
	BUGOn(cond, "MAX_SKCIPHER_REQSIZE < crypto_skcipher_reqsize(tfm)")
	return nil
}

func TestBUGOn(t *testing.T) {
	k := New()
	task := k.NewTask("test")
	if err := bugOn(task, false); err != nil {
		t.Fatal(err)
	}
	err := bugOn(task, true)
	b, ok := AsBug(err)
	if !ok || b.Kind != "BUG" || !strings.Contains(b.Msg, "reqsize") || b.Func != "kernel.bugOn" {
		t.Fatalf("err = %#v", err)
	}
	if !strings.HasPrefix(b.String(), "BUG in kernel.bugOn: MAX_SKCIPHER_REQSIZE") {
		t.Fatalf("String() = %q", b.String())
	}
}

func TestNilDerefBecomesBug(t *testing.T) {
	k := New()
	task := k.NewTask("test")
	err := func() (err error) {
		defer task.Recover(&err)
		var p *Task
		_ = p.Comm
		return nil
	}()
	if b, ok := AsBug(err); !ok || !strings.Contains(b.Kind, "NULL pointer") {
		t.Fatalf("err = %v", err)
	}
}

func TestTaskCounting(t *testing.T) {
	k := New()
	task := k.NewTask("w")
	task.Inc(EvBug) // counting off: a no-op
	task.EnableCounting()
	buf, _ := task.Kmalloc(siteT, 8, kmem.GFPKernel)
	task.Kfree(siteT, buf)
	if task.Ev.Get(kmem.EvKmalloc) != 1 || task.Stats.Live() != 0 {
		t.Fatalf("ev=%v stats=%v", task.Ev, task.Stats)
	}
	task.RCU.ReadLock()
	task.RCU.ReadUnlock()
	if !strings.Contains(task.Ev.String(), "rcu_read_lock=1") {
		t.Fatalf("events = %v", task.Ev)
	}
	if task.String() != "w[1]" {
		t.Fatalf("String() = %q", task.String())
	}
	task.Exit()
}

func TestWarnOn(t *testing.T) {
	k := New()
	task := k.NewTask("t")
	if !task.WarnOn(true, "!fscrypt_has_encryption_key(parent)") || task.WarnOn(false, "x") {
		t.Fatal("WarnOn result")
	}
	if !k.Log.Contains("WARNING") || k.Log.Total() != 1 {
		t.Fatalf("log = %v", k.Log.Lines())
	}
}

// TestCountingKernel: on a counting machine every task counts from its
// creation and is listed, EnableCounting does not list a task twice, and
// the patch set given is the one read back; a plain machine lists nothing.
func TestCountingKernel(t *testing.T) {
	p := patch.Register(&patch.Patch{ID: "zz-kernel-test", Variants: []patch.Variant{{Name: "base"}, {Name: "v1"}}})
	set := patch.Set{}.MustWith(p, "v1")
	k := NewWith(Config{Patches: set, Counting: true})
	if *k.Patches() != set || !k.Counting() {
		t.Fatalf("Patches %v, Counting %t", k.Patches(), k.Counting())
	}
	a := k.NewTask("a")
	b := k.NewTask("b")
	b.EnableCounting()
	if a.Ev == nil || a.Stats == nil {
		t.Fatal("a task of a counting machine does not count")
	}
	if _, err := a.Kmalloc(siteT, 8, kmem.GFPKernel); err != nil {
		t.Fatal(err)
	}
	got := k.CountedTasks()
	if len(got) != 2 || got[0] != a || got[1] != b {
		t.Fatalf("CountedTasks = %v", got)
	}
	if got[0].Stats.Totals().Allocs != 1 {
		t.Fatalf("a's allocations: %+v", got[0].Stats.Totals())
	}
	plain := New()
	c := plain.NewTask("c")
	c.EnableCounting()
	if plain.CountedTasks() != nil || plain.Counting() || *plain.Patches() != (patch.Set{}) {
		t.Fatalf("plain machine: counted %v, patches %v", plain.CountedTasks(), plain.Patches())
	}
}
