package sim

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/patch"
)

// A toy patch, declared the way docs/ADDING-A-PATCH.md says, one place at
// a time. Its base kmallocs a buffer per operation; its variant does not.

// Place 1, the registry entry (a real patch: <pkg>/patch_<id>.go).
var toyPatch = patch.Register(&patch.Patch{
	ID: "zz-toy-walkthrough", Seed: "998", Subject: "toy: stop allocating per operation",
	Variants: []patch.Variant{{Name: "base", Summary: "kmalloc + kfree per op"}, {Name: "onstack", Summary: "a stack buffer"}},
})

// toyVariant is toyPatch's variant enum, in Variants order.
type toyVariant uint8

const (
	toyBase toyVariant = iota
	toyOnstack
)

var toySel = patch.Bind[toyVariant](toyPatch)

var (
	evToyOp   = events.Register("toy_walkthrough_op", "operations of the walk-through's toy patch")
	siteToyOp = kmem.NewSite("toy_walkthrough:buf")
)

// Place 2, the variant code (a real patch: the changed kernel function).
func toyOp(t *kernel.Task) error {
	t.Inc(evToyOp)
	switch toySel.Of(t.K.Patches()) {
	case toyBase:
		buf, err := t.Kmalloc(siteToyOp, 128, kmem.GFPKernel)
		if err != nil {
			return err
		}
		t.Kfree(siteToyOp, buf)
	case toyOnstack:
	}
	return nil
}

type toyInst struct{}

func (toyInst) Worker(w int, t *kernel.Task) (func(int) error, error) {
	return func(int) (err error) {
		defer t.Recover(&err)
		return toyOp(t)
	}, nil
}

func (toyInst) Close() error { return nil }

// Place 3, the headline entry beside its workload (a real patch: a sim
// workload_*.go file).
var toyWorkload = Register(&Workload{
	Name: "zz-toy-walkthrough", Summary: "one call of the toy patch's function", Patch: toyPatch,
	Setup: func(env *Env) (Instance, error) { return toyInst{}, nil },
	Headlines: []*Headline{{
		Patch: toyPatch, Metric: MetricOps, SeedRatios: map[string]float64{"onstack": 1.5},
		Seed: "the toy's posting: 1.5x",
	}},
})

// TestAddingAPatch walks the toy patch through the places a new patch
// touches and checks each one did its part: registered with its enum
// bound, the variant code switching on the kernel's set, the headline
// beside the workload run by Headline.Run (what `vfslab report` does) with
// a tiny operation count, and its report row carrying the measurement and
// the seed's figure. The number of places is the number of steps here,
// and docs/ADDING-A-PATCH.md must list as many.
func TestAddingAPatch(t *testing.T) {
	steps := []walkStep{
		{"the registry entry (patch.Register + enum + patch.Bind)", func(t *testing.T) {
			p, err := patch.Find("zz-toy-walkthrough")
			if err != nil || p != toyPatch || p.Enum() != "github.com/vfslab/vfslab/sim.toyVariant" {
				t.Fatalf("Find: %v, %v, enum %q", p, err, toyPatch.Enum())
			}
		}},
		{"the variant code (a switch over every constant)", func(t *testing.T) {
			for _, v := range toyPatch.VariantNames() {
				task := kernel.NewWith(kernel.Config{Patches: patch.Set{}.MustWith(toyPatch, v), Counting: true}).NewTask("toy")
				if err := toyOp(task); err != nil {
					t.Fatal(err)
				}
				want := uint64(0)
				if v == "base" {
					want = 1
				}
				if got := task.Stats.Totals().Allocs; got != want {
					t.Errorf("%s: %d kmallocs, want %d", v, got, want)
				}
				task.Exit()
			}
		}},
		{"the headline entry beside the workload", func(t *testing.T) {
			h, err := HeadlineFor("zz-toy-walkthrough")
			if err != nil || h.Workload() != toyWorkload {
				t.Fatalf("HeadlineFor: %v, %v", h, err)
			}
			rows, err := h.Run(Config{Ops: 20, CountOps: 20, Count: 2})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1 {
				t.Fatalf("rows = %+v", rows)
			}
			r := rows[0]
			if r.Patch != "zz-toy-walkthrough" || r.Workload != "zz-toy-walkthrough" || r.Variant != "onstack" ||
				r.Metric != MetricOps || r.SeedRatio == nil || *r.SeedRatio != 1.5 || r.Kmallocs != 0 || !(r.Value > 0) {
				t.Fatalf("report row = %+v", r)
			}
			t.Logf("report row: %s %s T=%d %s ratio x%.2f seed x%.2f kmalloc/op %.2f", r.Patch, r.Workload, r.Threads, r.Variant, r.Ratio, *r.SeedRatio, r.Kmallocs)
		}},
	}
	for _, s := range steps {
		t.Run(strings.Fields(s.place)[1], s.check)
	}
	doc, err := os.ReadFile("../docs/ADDING-A-PATCH.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := docPlaces(string(doc))
	if listed != len(steps) {
		t.Errorf("docs/ADDING-A-PATCH.md lists %d places, the walk-through has %d steps", listed, len(steps))
	}
	t.Logf("a new patch touches %d places: %s", len(steps), placeNames(steps))
}

// docPlaces counts the numbered items of the "## The places" section.
func docPlaces(doc string) int {
	_, sec, ok := strings.Cut(doc, "\n## The places\n")
	if !ok {
		return 0
	}
	if i := strings.Index(sec, "\n## "); i >= 0 {
		sec = sec[:i]
	}
	return len(regexp.MustCompile(`(?m)^\d+\. `).FindAllString(sec, -1))
}

// walkStep is one place of the walk-through.
type walkStep struct {
	place string
	check func(t *testing.T)
}

func placeNames(steps []walkStep) string {
	var names []string
	for i, s := range steps {
		names = append(names, fmt.Sprintf("%d. %s", i+1, s.place))
	}
	return strings.Join(names, "; ")
}
