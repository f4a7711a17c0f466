package sim

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/patch"
)

var (
	testPatch = patch.Register(&patch.Patch{ID: "zz-sim-test", Seed: "999",
		Variants: []patch.Variant{{Name: "base", Summary: "allocates"}, {Name: "fast", Summary: "does not"}}})
	testSel    = patch.Bind[testVariant](testPatch)
	evTestOp   = events.Register("sim_test_op", "operations of the sim test workload")
	siteTestOp = kmem.NewSite("sim_test:op")
)

// testVariant is testPatch's variant enum.
type testVariant uint8

const (
	testBase testVariant = iota
	testFast
)

type testInst struct{}

func (ti *testInst) Worker(w int, t *kernel.Task) (func(int) error, error) {
	fast := false
	switch testSel.Of(t.K.Patches()) {
	case testBase:
	case testFast:
		fast = true
	}
	return func(i int) error {
		t.Inc(evTestOp)
		if !fast {
			buf, err := t.Kmalloc(siteTestOp, 64, kmem.GFPKernel)
			if err != nil {
				return err
			}
			t.Kfree(siteTestOp, buf)
			time.Sleep(time.Microsecond)
		}
		return nil
	}, nil
}

func (ti *testInst) Close() error { return nil }

var testWorkload = Register(&Workload{
	Name: "zz-test", Summary: "test", Patch: testPatch,
	Params: []Param{{Name: "size", Default: "1", Help: "unused"}},
	Setup:  func(env *Env) (Instance, error) { return &testInst{}, nil },
	Headlines: []*Headline{{Patch: testPatch, Metric: MetricOps, SeedRatios: map[string]float64{"fast": 2},
		Seed: "the test's own figure"}},
})

func TestRunComparesVariants(t *testing.T) {
	var progress bytes.Buffer
	rep, err := Run(Config{Workload: testWorkload, Threads: []int{1, 2}, Ops: 200, Count: 5, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 2 || len(rep.Groups[0].Measurements) != 2 {
		t.Fatalf("groups = %+v", rep.Groups)
	}
	g := rep.Groups[0]
	base, fast := g.Measurements[0], g.Measurements[1]
	if base.Variant != "base" || fast.Variant != "fast" {
		t.Fatalf("variants %s %s", base.Variant, fast.Variant)
	}
	if base.Kmallocs != 1 || fast.Kmallocs != 0 {
		t.Fatalf("kmallocs/op: base %v fast %v", base.Kmallocs, fast.Kmallocs)
	}
	if base.Events["sim_test_op"] != 1 || base.Events["kmalloc"] != 1 || fast.Events["kmalloc"] != 0 {
		t.Fatalf("events: base %v fast %v", base.Events, fast.Events)
	}
	if r := g.Ratio("fast"); !(r > 1.5) {
		t.Fatalf("fast/base throughput ratio = %v; the base sleeps a microsecond per op", r)
	}
	if !strings.Contains(progress.String(), "zz-test zz-sim-test=fast T=2 run 5/5") {
		t.Fatalf("progress:\n%s", progress.String())
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	for _, want := range []string{"workload zz-test", "threads (T) = 2", "sim_test_op", "kmalloc/op"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, js.String())
	}
	if !strings.Contains(js.String(), `"ratio_to_base"`) {
		t.Fatalf("JSON lacks comparisons:\n%s", js.String())
	}
}

func TestBadInput(t *testing.T) {
	if _, err := Lookup("nope"); err == nil || !strings.Contains(err.Error(), "zz-test") {
		t.Fatalf("Lookup error = %v", err)
	}
	if _, err := Run(Config{Workload: testWorkload, Params: map[string]string{"bogus": "1"}}); err == nil || !strings.Contains(err.Error(), "valid: size") {
		t.Fatalf("bad param error = %v", err)
	}
	if _, err := Run(Config{Workload: testWorkload, Variants: []string{"v9"}}); err == nil || !strings.Contains(err.Error(), "valid: base, fast") {
		t.Fatalf("bad variant error = %v", err)
	}
}

func TestCalibrate(t *testing.T) {
	rep, err := Run(Config{Workload: testWorkload, Variants: []string{"fast"}, Count: 1, RunTime: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if ops := rep.Groups[0].Measurements[0].Ops; ops < 100 {
		t.Fatalf("calibrated to %d ops for a 5ms run of a no-op", ops)
	}
}
