package kmem

import (
	"errors"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/events"
)

var (
	siteA  = NewSite("test:a")
	siteB  = NewSite("test:b")
	cacheD = NewCache("test_dentry", 192)
)

func newCtx() *Ctx { return &Ctx{Stats: new(Stats), Ev: events.New()} }

func TestKmallocExactSizeAndAccounting(t *testing.T) {
	c := newCtx()
	buf, err := Kmalloc(c, siteA, 80+384, GFPNoFS)
	if err != nil {
		t.Fatal(err)
	}
	if len(buf) != 464 || cap(buf) != 464 {
		t.Fatalf("len/cap = %d/%d, want 464/464", len(buf), cap(buf))
	}
	if s := c.Stats.Site(siteA); s.Allocs != 1 || s.Bytes != 464 || s.Live() != 1 {
		t.Fatalf("stats = %+v", s)
	}
	if c.Stats.Live() != 1 {
		t.Fatalf("Live = %d", c.Stats.Live())
	}
	KfreeSensitive(c, siteA, buf)
	if c.Stats.Live() != 0 {
		t.Fatalf("Live after free = %d", c.Stats.Live())
	}
	if c.Ev.Get(EvKmalloc) != 1 || c.Ev.Get(EvKfree) != 1 || c.Ev.Get(EvKmallocBytes) != 464 {
		t.Fatalf("events = %v", c.Ev)
	}
}

func TestWritePastEndPanics(t *testing.T) {
	buf, _ := Kmalloc(nil, siteA, 16, GFPKernel)
	defer func() {
		if recover() == nil {
			t.Fatal("write past a kmalloc buffer did not panic")
		}
	}()
	n := 17
	_ = buf[:n]
}

func TestKfreeSensitiveWipes(t *testing.T) {
	buf, _ := Kmalloc(nil, siteA, 32, GFPKernel)
	for i := range buf {
		buf[i] = 0xaa
	}
	KfreeSensitive(nil, siteA, buf)
	for i, b := range buf {
		if b != 0 {
			t.Fatalf("byte %d = %#x after kfree_sensitive", i, b)
		}
	}
}

func TestZeroSizeAndNil(t *testing.T) {
	c := newCtx()
	buf, err := Kmalloc(c, siteA, 0, GFPKernel)
	if err != nil || buf == nil || len(buf) != 0 {
		t.Fatalf("kmalloc(0) = %v, %v", buf, err)
	}
	Kfree(c, siteA, buf)
	Kfree(c, siteA, nil)
	if s := c.Stats.Site(siteA); s != (SiteStats{}) {
		t.Fatalf("kmalloc(0)/kfree(NULL) counted: %+v", s)
	}
	if _, err := Kmalloc(c, siteA, KmallocMaxSize+1, GFPKernel); !errors.Is(err, errno.ENOMEM) {
		t.Fatalf("oversized kmalloc err = %v", err)
	}
}

func TestFailNth(t *testing.T) {
	c := newCtx()
	c.Fail = FailNth(3)
	var errs []error
	for i := 0; i < 5; i++ {
		_, err := Kmalloc(c, siteB, 8, GFPKernel)
		errs = append(errs, err)
	}
	for i, err := range errs {
		if (i == 2) != (err != nil) {
			t.Fatalf("call %d: err = %v", i+1, err)
		}
	}
	if len(c.Fail.Injected) != 1 || c.Fail.Injected[0].Call != 3 || c.Fail.Injected[0].Site != "test:b" {
		t.Fatalf("injected = %v", c.Fail.Injected)
	}
	if s := c.Stats.Site(siteB); s.Fails != 1 || s.Allocs != 4 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestFailSitesAndNoFail(t *testing.T) {
	c := newCtx()
	c.Fail = FailSites("test:a", "test_dentry")
	if _, err := Kmalloc(c, siteA, 8, GFPKernel); err == nil {
		t.Fatal("site test:a did not fail")
	}
	if _, err := Kmalloc(c, siteA, 8, GFPKernel|GFPNoFail); err != nil {
		t.Fatal("__GFP_NOFAIL allocation failed")
	}
	if _, err := Kmalloc(c, siteB, 8, GFPKernel); err != nil {
		t.Fatal("site test:b failed")
	}
	if err := cacheD.Alloc(c, GFPKernel); !errors.Is(err, errno.ENOMEM) {
		t.Fatalf("cache alloc err = %v", err)
	}
}

func TestFailRandomDeterministic(t *testing.T) {
	run := func(seed uint64) []uint64 {
		c := newCtx()
		c.Fail = FailRandom(0.3, seed)
		for i := 0; i < 200; i++ {
			Kmalloc(c, siteA, 8, GFPKernel)
		}
		var calls []uint64
		for _, in := range c.Fail.Injected {
			calls = append(calls, in.Call)
		}
		return calls
	}
	a, b, other := run(42), run(42), run(43)
	if len(a) < 30 || len(a) > 90 {
		t.Fatalf("p=0.3 over 200 calls failed %d times", len(a))
	}
	if len(a) != len(b) {
		t.Fatalf("same seed, different failures: %v vs %v", a, b)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different failures at %d", i)
		}
	}
	same := len(a) == len(other)
	for i := 0; same && i < len(a); i++ {
		same = a[i] == other[i]
	}
	if same {
		t.Fatal("different seeds failed the same calls")
	}
}

func TestTimesBound(t *testing.T) {
	c := newCtx()
	c.Fail = FailSites("test:a")
	c.Fail.Times = 2
	fails := 0
	for i := 0; i < 5; i++ {
		if _, err := Kmalloc(c, siteA, 8, GFPKernel); err != nil {
			fails++
		}
	}
	if fails != 2 {
		t.Fatalf("failed %d times, want 2", fails)
	}
}

func TestCacheAccountingAndLeaks(t *testing.T) {
	c := newCtx()
	base := c.Stats.Clone()
	if err := cacheD.Alloc(c, GFPKernel); err != nil {
		t.Fatal(err)
	}
	if l := c.Stats.Leaks(base); len(l) != 1 || l[0] != "test_dentry:+1" {
		t.Fatalf("Leaks = %v", l)
	}
	cacheD.Free(c)
	if l := c.Stats.Leaks(base); len(l) != 0 {
		t.Fatalf("Leaks after free = %v", l)
	}
	if got := c.Stats.String(); got != "test_dentry:1/1/192" {
		t.Fatalf("String() = %q", got)
	}
}

func TestNilCtx(t *testing.T) {
	buf, err := Kmalloc(nil, siteA, 10, GFPKernel)
	if err != nil || len(buf) != 10 {
		t.Fatal(err)
	}
	Kfree(nil, siteA, buf)
	if err := cacheD.Alloc(nil, GFPKernel); err != nil {
		t.Fatal(err)
	}
	cacheD.Free(nil)
}

func TestGFPString(t *testing.T) {
	if got := (GFPNoFS | GFPZero).String(); got != "GFP_NOFS|__GFP_ZERO" {
		t.Fatalf("got %q", got)
	}
}

func BenchmarkKmallocKfree(b *testing.B) {
	c := newCtx()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf, _ := Kmalloc(c, siteA, 464, GFPNoFS)
		KfreeSensitive(c, siteA, buf)
	}
}

func TestSlubDebugPoisonsAndTracks(t *testing.T) {
	c := newCtx()
	c.Debug = &SlubDebug{}
	buf, err := Kmalloc(c, siteA, 8, GFPKernel)
	if err != nil {
		t.Fatal(err)
	}
	Kfree(c, siteA, buf)
	want := []byte{0x6b, 0x6b, 0x6b, 0x6b, 0x6b, 0x6b, 0x6b, 0xa5}
	if string(buf) != string(want) {
		t.Fatalf("freed object = % x, want % x", buf, want)
	}
	if c.Debug.Tracks != 2 {
		t.Fatalf("tracks = %d, want 2 (alloc + free)", c.Debug.Tracks)
	}
	if err := cacheD.Alloc(c, GFPKernel); err != nil {
		t.Fatal(err)
	}
	cacheD.Free(c)
	if c.Debug.Tracks != 4 {
		t.Fatalf("tracks = %d, want 4", c.Debug.Tracks)
	}
}

func BenchmarkKmallocKfreeSlubDebug(b *testing.B) {
	c := newCtx()
	c.Debug = &SlubDebug{}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf, _ := Kmalloc(c, siteA, 464, GFPNoFS)
		KfreeSensitive(c, siteA, buf)
	}
}
