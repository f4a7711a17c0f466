package sim

import (
	"testing"

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
		if _, err := w.resolveParams(h.Params); err != nil {
			t.Errorf("%s: %v", p.ID, err)
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
	if n := len(Headlines()); n != len(all) {
		t.Errorf("%d headlines for %d patches", n, len(all))
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
