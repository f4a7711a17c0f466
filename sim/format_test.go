package sim

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/vfslab/vfslab/fscrypt"
)

// smallReport runs the test workload briefly: 2 thread counts, 2 variants.
func smallReport(t *testing.T) *Report {
	t.Helper()
	rep, err := Run(Config{Workload: testWorkload, Threads: []int{1, 2}, Ops: 100, Count: 4})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestNsPerOpIsGoConvention: ns/op is wall time over all workers'
// operations, as Go's testing counts it, so ns/op x ops/s = 1e9 at every
// thread count.
func TestNsPerOpIsGoConvention(t *testing.T) {
	for _, g := range smallReport(t).Groups {
		for _, m := range g.Measurements {
			for i := range m.NsPerOp {
				if p := m.NsPerOp[i] * m.OpsPerSec[i]; math.Abs(p-1e9) > 1e3 {
					t.Errorf("T=%d %s run %d: ns/op %v x ops/s %v = %v", g.Threads, m.Variant, i, m.NsPerOp[i], m.OpsPerSec[i], p)
				}
			}
		}
	}
}

// TestBenchstatFormat: the benchstat output parses as Go benchmark
// results, one per timed run, with the variants and thread counts as
// sub-benchmark keys and the events as units.
func TestBenchstatFormat(t *testing.T) {
	rep := smallReport(t)
	var b bytes.Buffer
	if err := rep.WriteBenchstat(&b); err != nil {
		t.Fatal(err)
	}
	r := benchfmt.NewReader(&b, "test")
	n := 0
	keys := map[string]bool{}
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			if se, ok := r.Result().(*benchfmt.SyntaxError); ok {
				t.Fatalf("syntax error: %v", se)
			}
			continue
		}
		n++
		name := string(res.Name)
		if !strings.HasPrefix(name, "Zz-test/variant=") {
			t.Errorf("name %q", name)
		}
		keys[name[:strings.LastIndex(name, "-")]] = true
		units := map[string]float64{}
		for _, v := range res.Values {
			units[v.Unit] = v.Value
		}
		for _, u := range []string{"sec/op", "ops/s", "allocs/op", "B/op", "kmalloc/op", "sim_test_op/op"} {
			if _, ok := units[u]; !ok {
				t.Errorf("%s lacks unit %s: %v", name, u, units)
			}
		}
		if units["sim_test_op/op"] != 1 {
			t.Errorf("%s: sim_test_op/op = %v", name, units["sim_test_op/op"])
		}
		if res.GetConfig("workload") != "zz-test" || res.GetConfig("patch") != "zz-sim-test" {
			t.Errorf("config %v", res.Config)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 2*2*4 || len(keys) != 4 {
		t.Errorf("%d results, %d names; want 16 and 4", n, len(keys))
	}
}

// TestJSONRoundTrip: ReadJSON gets back what WriteJSON wrote, runs and
// events included, and Compare works on it.
func TestJSONRoundTrip(t *testing.T) {
	rep := smallReport(t)
	var b bytes.Buffer
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Groups) != 2 || back.Workload != rep.Workload || back.Count != 4 {
		t.Fatalf("read back %+v", back)
	}
	for gi, g := range back.Groups {
		for mi, m := range g.Measurements {
			o := rep.Groups[gi].Measurements[mi]
			if m.Variant != o.Variant || len(m.NsPerOp) != len(o.NsPerOp) || m.NsPerOp[0] != o.NsPerOp[0] || m.Events["sim_test_op"] != 1 || m.Kmallocs != o.Kmallocs {
				t.Errorf("T=%d %s: %+v, want %+v", g.Threads, m.Variant, m, o)
			}
		}
	}
	var out bytes.Buffer
	if err := Compare(&out, rep, back); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "events per operation: the same") || !strings.Contains(out.String(), "~") {
		t.Errorf("a report compared with itself:\n%s", out.String())
	}
	if _, err := ReadJSON(strings.NewReader(`{"schema":"other"}`)); err == nil {
		t.Error("ReadJSON accepted another schema")
	}
}

// TestCSV: a header, then one row per variant and thread count with the
// event columns filled.
func TestCSV(t *testing.T) {
	var b bytes.Buffer
	if err := smallReport(t).WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 || recs[0][4] != "variant" {
		t.Fatalf("%d records: %v", len(recs), recs)
	}
	col := -1
	for i, h := range recs[0] {
		if h == "sim_test_op" {
			col = i
		}
	}
	if col < 0 || recs[1][col] != "1" {
		t.Errorf("sim_test_op column %d: %v", col, recs)
	}
}

// TestConfigErrors: what Run refuses before it sets anything up, each a
// *ConfigError naming the field.
func TestConfigErrors(t *testing.T) {
	create, _ := Lookup("create")
	for _, c := range []struct {
		cfg   Config
		field string
	}{
		{Config{Workload: testWorkload, Threads: []int{0}}, "--threads"},
		{Config{Workload: testWorkload, Threads: []int{MaxThreads + 1}}, "--threads"},
		{Config{Workload: testWorkload, Threads: []int{2, 2}}, "--threads"},
		{Config{Workload: testWorkload, Count: -1}, "--count"},
		{Config{Workload: testWorkload, Count: MaxCount + 1}, "--count"},
		{Config{Workload: testWorkload, Ops: -1}, "--ops"},
		{Config{Workload: testWorkload, RunTime: -time.Second}, "--runtime"},
		{Config{Workload: testWorkload, Variants: []string{"fast", "fast"}}, "--variants"},
		{Config{Workload: testWorkload, Patch: fscrypt.V1KDFPatch}, "--patch fscrypt-v1-kdf"},
		{Config{Workload: create, Params: map[string]string{"n": "0"}}, "--param n=0"},
		{Config{Workload: create, Params: map[string]string{"casefold": "yes"}}, "--param casefold=yes"},
		{Config{Workload: create, Ops: 1000}, "--ops"},
		{Config{Workload: create, Params: map[string]string{"n": "100000"}, Threads: []int{4}}, "--threads 4"},
	} {
		_, err := Run(c.cfg)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != c.field {
			t.Errorf("%+v: error %v, want a ConfigError on %s", c.cfg, err, c.field)
		}
	}
	// Another patch the workload runs is accepted.
	if err := checkConfig(&Config{Patch: fscrypt.FnameOnstackPatch}, create, fscrypt.FnameOnstackPatch, map[string]string{"n": "10"}); err != nil {
		t.Errorf("create with fscrypt-fname-onstack: %v", err)
	}
}

// TestRanges: Range.Check accepts exactly its words and integers.
func TestRanges(t *testing.T) {
	r := Range{Words: []string{"1-255"}, Min: 1, Max: 255}
	for v, ok := range map[string]bool{"1-255": true, "1": true, "255": true, "0": false, "256": false, "x": false, "": false} {
		if err := r.Check(v); (err == nil) != ok {
			t.Errorf("Check(%q) = %v", v, err)
		}
	}
	if s := r.String(); s != "1-255|1..255" {
		t.Errorf("String = %q", s)
	}
	for _, w := range Workloads() {
		for _, p := range w.Params {
			if err := p.Range.Check(p.Default); err != nil {
				t.Errorf("%s: default %s=%s out of its range: %v", w.Name, p.Name, p.Default, err)
			}
			// A patch's variant (checked against the patch) and free text
			// that says what it is are ranges too.
			if w.Name != testWorkload.Name && p.Range.Max == 0 && len(p.Range.Words) == 0 && p.Patch == nil && p.Range.Desc == "" {
				t.Errorf("%s: parameter %s has no range", w.Name, p.Name)
			}
		}
	}
}

// TestRunContextStops: a cancelled context stops Run between runs; the
// report holds the runs measured and says it was interrupted.
func TestRunContextStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	runs := 0
	rep, err := RunContext(ctx, Config{Workload: testWorkload, Ops: 50, Count: 100, OnProgress: func(e ProgressEvent) {
		if e.Phase == PhaseRun {
			if runs++; runs == 5 {
				cancel()
			}
		}
	}})
	if !errors.Is(err, context.Canceled) || rep == nil || !rep.Interrupted {
		t.Fatalf("err %v, report %+v", err, rep)
	}
	g := rep.Groups[0]
	if len(g.Measurements) != 2 || len(g.Measurements[0].NsPerOp) != 3 || len(g.Measurements[1].NsPerOp) != 2 {
		t.Fatalf("measurements after 5 runs: %d variants, %d and %d runs", len(g.Measurements), len(g.Measurements[0].NsPerOp), len(g.Measurements[1].NsPerOp))
	}
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil || !strings.Contains(b.String(), "INTERRUPTED") {
		t.Errorf("text of an interrupted report: %v\n%s", err, b.String())
	}
	if err := rep.WriteBenchstat(&b); err != nil {
		t.Error(err)
	}
}

// TestProgressSteps: every step is reported once, numbered up to Steps.
func TestProgressSteps(t *testing.T) {
	var evs []ProgressEvent
	_, err := Run(Config{Workload: testWorkload, Threads: []int{1, 2}, Count: 3, RunTime: time.Millisecond, OnProgress: func(e ProgressEvent) { evs = append(evs, e) }})
	if err != nil {
		t.Fatal(err)
	}
	// Per thread count: 2 setups, 1 calibration, 3x2 runs, 2 counting runs.
	if len(evs) != 2*11 || evs[len(evs)-1].Step != evs[0].Steps || evs[0].Steps != 22 {
		t.Fatalf("%d events, last step %d of %d", len(evs), evs[len(evs)-1].Step, evs[0].Steps)
	}
	phases := map[Phase]int{}
	for _, e := range evs {
		phases[e.Phase]++
	}
	if phases[PhaseSetup] != 4 || phases[PhaseCalibrate] != 2 || phases[PhaseRun] != 12 || phases[PhaseCount] != 4 {
		t.Errorf("phases %v", phases)
	}
}
