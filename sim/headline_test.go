package sim

import (
	"strings"
	"testing"

	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/patch"
)

// TestEveryPatchHasHeadline: every registered patch (the module's, and the
// tests' own) has one headline entry, on a registered workload, whose
// parameters and thread counts the workload accepts and whose workload
// compares that patch's variants by default or is told to.
func TestEveryPatchHasHeadline(t *testing.T) {
	all := patch.All()
	if len(all) < 5 {
		t.Fatalf("only %d patches registered", len(all))
	}
	for _, p := range all {
		h, err := HeadlineFor(p.ID)
		if err != nil {
			t.Errorf("patch %s has no headline entry beside a workload: %v", p.ID, err)
			continue
		}
		w := h.Workload()
		if reg, err := Lookup(w.Name); err != nil || reg != w {
			t.Errorf("%s: headline on unregistered workload %s", p.ID, w.Name)
		}
		for _, sd := range []bool{false, true} {
			if _, err := w.ResolveParams(h.ParamsFor(sd)); err != nil {
				t.Errorf("%s (slub_debug %v): %v", p.ID, sd, err)
			}
		}
		for _, n := range h.Threads {
			if n <= 0 {
				t.Errorf("%s: thread count %d", p.ID, n)
			}
		}
		if h.Seed == "" {
			t.Errorf("%s: headline without the seed's figure", p.ID)
		}
	}
	own := 0
	for _, h := range Headlines() {
		if len(h.Together) == 0 {
			own++
		}
	}
	if own != len(all) {
		t.Errorf("%d headlines of one patch for %d patches", own, len(all))
	}
}

// TestHeadlineAgainst: a headline compares with its Base, moved first;
// fscrypt-v1-kdf's is sync (the seed's "before"), the others' their
// patch's base.
func TestHeadlineAgainst(t *testing.T) {
	h, err := HeadlineFor("fscrypt-v1-kdf")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(h.Variants(), ","); got != "sync,base,aeslib" || h.BaseVariant() != "sync" {
		t.Fatalf("variants %s, against %s", got, h.BaseVariant())
	}
	rows, err := h.Run(Config{Ops: 50, CountOps: 50, Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Variant != "base" || rows[1].Variant != "aeslib" || rows[0].Against != "sync" || rows[1].Against != "sync" {
		t.Fatalf("rows %+v", rows)
	}
	if rows[1].SeedRatio == nil || *rows[1].SeedRatio != 7000.0/1500 || rows[0].SeedRatio != nil {
		t.Fatalf("seed ratios %+v", rows)
	}
	if rows[0].Runs != 2 || rows[0].OpsPerRun != 50 {
		t.Fatalf("what it ran: %+v", rows[0])
	}
	for _, hh := range Headlines() {
		if hh.ID() != "fscrypt-v1-kdf" && len(hh.Together) == 0 && hh.BaseVariant() != hh.Patch.Variants[0].Name {
			t.Errorf("%s compares with %s", hh.ID(), hh.BaseVariant())
		}
	}
}

// TestHeadlineFPUSections: fscrypt-v1-kdf's rows carry the FPU sections
// (kernel_fpu_begin) per key derivation of sync and of each variant, as
// its counting runs counted them. The event is added in crypto; until
// then the test skips.
func TestHeadlineFPUSections(t *testing.T) {
	const ev = "kernel_fpu_begin"
	if _, ok := events.Lookup(ev); !ok {
		t.Skip("event " + ev + " is not registered in this build")
	}
	h, _ := HeadlineFor("fscrypt-v1-kdf")
	cfg := h.Config(Config{Ops: 20, CountOps: 20, Count: 1}, false)
	rep, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rows := h.Rows(rep, false)
	g := rep.Groups[0]
	anyFPU := false
	for i, r := range rows {
		e, ok := r.Events[ev]
		if !ok || e.Against != g.Measurements[0].Events[ev] || e.Variant != g.Measurements[i+1].Events[ev] {
			t.Fatalf("row %s: %+v; measured %v", r.Variant, r.Events, g.Measurements[i+1].Events[ev])
		}
		anyFPU = anyFPU || e.Against > 0 || e.Variant > 0
		t.Logf("%s: %s per derivation: %s %v -> %s %v", r.Variant, ev, r.Against, e.Against, r.Variant, e.Variant)
	}
	if !anyFPU {
		t.Fatalf("no variant enters an FPU section: %+v", rows)
	}
}

// TestHeadlineTogether: the headline of seeds 000 and 001 together runs
// two machines, every patch at its base and both patches as posted, and
// gives one row saying which set ran and how many creates.
func TestHeadlineTogether(t *testing.T) {
	h, err := HeadlineFor("fscrypt-fname-onstack+f2fs-lookup-prealloc")
	if err != nil {
		t.Fatal(err)
	}
	cfg := h.Config(Config{Ops: 1, CountOps: 1, Count: 2}, false)
	if cfg.Params["n"] != "1000" || cfg.Params["mount"] != "lookup_mode=auto" {
		t.Fatalf("params %v", cfg.Params)
	}
	cfg.Params["n"] = "40"
	rep, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ms := rep.Groups[0].Measurements
	if len(ms) != 2 || ms[0].Variant != "base+base" || ms[1].Variant != "v2+v2" || ms[0].Patches.Changed() != "" ||
		!ms[1].Patches.Is(fscrypt.FnameOnstackPatch, "v2") || !ms[1].Patches.Is(f2fs.LookupPreallocPatch, "v2") {
		t.Fatalf("measurements %s %v, %s %v", ms[0].Variant, ms[0].Patches, ms[1].Variant, ms[1].Patches)
	}
	rows := h.Rows(rep, false)
	if len(rows) != 1 {
		t.Fatalf("rows %+v", rows)
	}
	r := rows[0]
	if r.Patch != h.ID() || r.Against != "base+base" || r.Total != 2*1*40 || r.Unit != "creates" || r.PerOp != 40 ||
		!strings.Contains(r.Patches, "f2fs-lookup-prealloc=v2") || r.SeedRatio == nil || *r.SeedRatio != 10.9/5.3 {
		t.Fatalf("row %+v", r)
	}
	// Both patches cut kmallocs: the on-stack decryption request and (v2's
	// inverted check notwithstanding) nothing else; the pair allocates
	// less than the base pair.
	if !(r.Kmallocs < r.BaseKmalloc) {
		t.Fatalf("kmalloc/op %v -> %v", r.BaseKmalloc, r.Kmallocs)
	}
}

// TestHeadlineRegistrationErrors: a headline without a patch, a second one
// for a patch, a bad metric and a seed ratio for an unknown variant panic at
// registration.
func TestHeadlineRegistrationErrors(t *testing.T) {
	for name, h := range map[string]*Headline{
		"no patch":        {Metric: MetricOps},
		"second":          {Patch: testPatch, Metric: MetricOps},
		"metric":          {Patch: &patch.Patch{ID: "zz-headline-metric", Variants: []patch.Variant{{Name: "base"}}}, Metric: "furlongs"},
		"unknown variant": {Patch: &patch.Patch{ID: "zz-headline-ratio", Variants: []patch.Variant{{Name: "base"}}}, Metric: MetricOps, SeedRatios: map[string]float64{"v9": 2}},
		"ratio vs itself": {Patch: &patch.Patch{ID: "zz-headline-self", Variants: []patch.Variant{{Name: "base"}, {Name: "v1"}}}, Metric: MetricOps, Base: "v1", SeedRatios: map[string]float64{"v1": 2}},
		"unknown base":    {Patch: &patch.Patch{ID: "zz-headline-base", Variants: []patch.Variant{{Name: "base"}}}, Metric: MetricOps, Base: "v7"},
		"together alone":  {Patch: testPatch, Together: []Choice{{testPatch, "fast"}}, Metric: MetricOps},
		"together base":   {Patch: testPatch, Together: []Choice{{testPatch, "base"}, {testPatch, "fast"}}, Metric: MetricOps},
		"bad size":        {Patch: &patch.Patch{ID: "zz-headline-size", Variants: []patch.Variant{{Name: "base"}}}, Metric: MetricOps, DebugSize: Size{Ops: -1}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			registerHeadlines(&Workload{Name: "zz-bad-" + name, Headlines: []*Headline{h}})
		}()
	}
}
