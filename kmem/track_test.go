package kmem

import (
	"strings"
	"testing"
)

var (
	trackSiteA = NewSite("track_test:a")
	trackSiteB = NewSite("track_test:b")
)

// leakyHelper allocates at site B and loses the buffer: the allocation
// stack must name it.
func leakyHelper(c *Ctx) {
	if _, err := Kmalloc(c, trackSiteB, 48, GFPKernel); err != nil {
		panic(err)
	}
}

func TestTrackerDoubleFree(t *testing.T) {
	c := &Ctx{Stats: new(Stats), Track: NewTracker()}
	c.Track.SetStep(3)
	buf, err := Kmalloc(c, trackSiteA, 32, GFPKernel)
	if err != nil {
		t.Fatal(err)
	}
	Kfree(c, trackSiteA, buf)
	if r := c.Track.Check(); len(r) != 0 {
		t.Fatalf("one free: reports %v", r)
	}
	Kfree(c, trackSiteA, buf)
	r := c.Track.Check()
	if len(r) != 1 || r[0].Kind != "double-free" || r[0].Object.Site != "track_test:a" || r[0].Object.Step != 3 {
		t.Fatalf("double free: reports %+v", r)
	}
	if len(r[0].Object.AllocStack()) == 0 || !strings.Contains(r[0].Object.AllocStack()[0], "TestTrackerDoubleFree") {
		t.Errorf("allocation stack %v does not start at the test", r[0].Object.AllocStack())
	}
	if len(r[0].Stack) == 0 || len(r[0].Object.FreeStack()) == 0 {
		t.Errorf("double free without both free stacks: %v / %v", r[0].Stack, r[0].Object.FreeStack())
	}
	// The second free was not performed: one free counted.
	if s := c.Stats.Site(trackSiteA); s.Frees != 1 {
		t.Errorf("frees counted %d, want 1", s.Frees)
	}
}

func TestTrackerUseAfterFree(t *testing.T) {
	c := &Ctx{Track: NewTracker()}
	buf, _ := Kmalloc(c, trackSiteA, 16, GFPKernel)
	other, _ := Kmalloc(c, trackSiteA, 16, GFPKernel)
	Kfree(c, trackSiteA, buf)
	Kfree(c, trackSiteA, other)
	if buf[0] != PoisonFree || buf[15] != PoisonEnd {
		t.Fatalf("freed object not poisoned: % x", buf)
	}
	buf[5] = 1 // the write after free
	r := c.Track.Check()
	if len(r) != 1 || r[0].Kind != "use-after-free" || r[0].Offset != 5 || r[0].Object.Size != 16 {
		t.Fatalf("use after free: reports %+v", r)
	}
	if r := c.Track.Check(); len(r) != 0 {
		t.Errorf("reported twice: %+v", r)
	}
}

func TestTrackerLive(t *testing.T) {
	c := &Ctx{Track: NewTracker()}
	c.Track.SetStep(7)
	leakyHelper(c)
	keep, _ := Kmalloc(c, trackSiteA, 8, GFPKernel)
	Kfree(c, trackSiteA, keep)
	live := c.Track.Live()
	if len(live) != 1 || live[0].Site != "track_test:b" || live[0].Step != 7 || live[0].FreeStep != -1 {
		t.Fatalf("live objects %+v, want the leaked one", live)
	}
	if st := live[0].AllocStack(); len(st) == 0 || !strings.HasSuffix(st[0], "leakyHelper") {
		t.Errorf("allocation stack %v, want leakyHelper first", st)
	}
}

// TestTrackerOffIsFree: with no tracker a kmalloc/kfree pair makes the
// one Go allocation of its buffer and nothing else.
func TestTrackerOffIsFree(t *testing.T) {
	c := &Ctx{Stats: new(Stats)}
	Kfree(c, trackSiteA, make([]byte, 1)) // size the Stats slice
	n := testing.AllocsPerRun(100, func() {
		buf, _ := Kmalloc(c, trackSiteA, 64, GFPKernel)
		Kfree(c, trackSiteA, buf)
	})
	if n > 1 {
		t.Errorf("%v allocations per kmalloc/kfree without a tracker, want at most 1", n)
	}
}
