package kmem

import (
	"errors"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
)

// slabCtx is a task's context on a machine with a fresh failslab whose
// log lines are collected.
func slabCtx() (*Ctx, *FailslabAttr, *[]string) {
	f := NewFailslab(1)
	var log []string
	f.Printk = func(l string) { log = append(log, l) }
	c := newCtx()
	c.Slab = f
	return c, f, &log
}

func failed(c *Ctx, n int, flags GFP) []int {
	var out []int
	for i := 1; i <= n; i++ {
		if _, err := Kmalloc(c, siteA, 40, flags); err != nil {
			out = append(out, i)
		}
	}
	return out
}

func TestFailslabDefaultsFailNothing(t *testing.T) {
	c, f, _ := slabCtx()
	if f.Probability() != 0 || f.Interval() != 1 || f.Times() != 1 || f.Space() != 0 || f.Verbose() != 2 ||
		!f.IgnoreGFPWait() || f.CacheFilter() {
		t.Fatalf("defaults: p=%d interval=%d times=%d space=%d verbose=%d ignore-gfp-wait=%v cache-filter=%v",
			f.Probability(), f.Interval(), f.Times(), f.Space(), f.Verbose(), f.IgnoreGFPWait(), f.CacheFilter())
	}
	if got := failed(c, 100, GFPAtomic); got != nil {
		t.Fatalf("failed %v with probability 0", got)
	}
}

// TestFailNthSemantics follows Documentation/fault-injection: write N to
// /proc/self/fail-nth and the Nth call fails; reading back gives the calls
// still to go, then 0 once the failure was injected. fail-nth takes
// precedence over probability and times, not over ignore-gfp-wait (a
// per-capability filter in should_failslab).
func TestFailNthSemantics(t *testing.T) {
	c, f, log := slabCtx()
	if n, err := c.ProcFailNthWrite([]byte("3\n")); err != nil || n != 2 {
		t.Fatalf("write: %d %v", n, err)
	}
	if got := c.ProcFailNthRead(); got != "3\n" {
		t.Fatalf("read before = %q", got)
	}
	// GFP_KERNEL may reclaim: with ignore-gfp-wait (the default) failslab
	// never sees it, and fail-nth does not count it.
	if got := failed(c, 5, GFPKernel); got != nil || c.ProcFailNthRead() != "3\n" {
		t.Fatalf("GFP_KERNEL with ignore-gfp-wait: failed %v, fail-nth %q", got, c.ProcFailNthRead())
	}
	f.SetIgnoreGFPWait(false)
	Kmalloc(c, siteA, 8, GFPKernel)
	if got := c.ProcFailNthRead(); got != "2\n" {
		t.Fatalf("read after one call = %q", got)
	}
	if got := failed(c, 4, GFPKernel); len(got) != 1 || got[0] != 2 {
		t.Fatalf("failed calls %v, want the 3rd overall (2nd here)", got)
	}
	if got := c.ProcFailNthRead(); got != "0\n" {
		t.Fatalf("read after the failure = %q, want 0", got)
	}
	if len(*log) != 3 || (*log)[0] != "FAULT_INJECTION: forcing a failure." ||
		(*log)[1] != "name failslab, interval 1, probability 0, space 0, times 1" || !strings.Contains((*log)[2], "test:a") {
		t.Fatalf("fail_dump: %q", *log)
	}
	// times was 1 and is now 0: fail-nth still works (it precedes times).
	c.ProcFailNthWrite([]byte("1"))
	if got := failed(c, 2, GFPKernel|GFPNoWarn); len(got) != 1 || got[0] != 1 || len(*log) != 3 {
		t.Fatalf("fail-nth with times 0: failed %v, log %d lines (NOWARN must be silent)", got, len(*log))
	}
	// __GFP_NOFAIL is never failed, and does not count.
	c.ProcFailNthWrite([]byte("1"))
	if _, err := Kmalloc(c, siteA, 8, GFPKernel|GFPNoFail); err != nil || c.ProcFailNthRead() != "1\n" {
		t.Fatalf("NOFAIL: %v, fail-nth %q", err, c.ProcFailNthRead())
	}
	// Cache allocations are injection points too.
	if err := cacheD.Alloc(c, GFPNoFS); !errors.Is(err, errno.ENOMEM) {
		t.Fatalf("kmem_cache_alloc with fail-nth 1: %v", err)
	}
	// kmalloc beyond KMALLOC_MAX_CACHE_SIZE is the page allocator's.
	c.ProcFailNthWrite([]byte("1"))
	if _, err := Kmalloc(c, siteA, 3*4096, GFPKernel); err != nil || c.ProcFailNthRead() != "1\n" {
		t.Fatalf("12 KiB kmalloc: %v, fail-nth %q", err, c.ProcFailNthRead())
	}
	c.ProcFailNthWrite([]byte("0"))
}

func TestProcFailNthParse(t *testing.T) {
	c := &Ctx{}
	for in, want := range map[string]uint32{"0": 0, "10": 10, "0x10": 16, "0XfF": 255, "010": 8, "+7\n": 7, "4294967295": 1<<32 - 1} {
		if _, err := c.ProcFailNthWrite([]byte(in)); err != nil || c.FailNth != want {
			t.Errorf("%q: %d %v, want %d", in, c.FailNth, err, want)
		}
	}
	for in, want := range map[string]error{"": errno.EINVAL, "-1": errno.EINVAL, "1x": errno.EINVAL, "0x": errno.EINVAL,
		"08": errno.EINVAL, "1\n\n": errno.EINVAL, " 1": errno.EINVAL, "4294967296": errno.ERANGE, "+": errno.EINVAL,
		"4294967296x": errno.EINVAL, "99999999999999999999x": errno.ERANGE, "0x1g": errno.EINVAL} {
		c.FailNth = 5
		if _, err := c.ProcFailNthWrite([]byte(in)); err != want || c.FailNth != 5 {
			t.Errorf("%q: %v (fail_nth %d), want %v and no change", in, err, c.FailNth, want)
		}
	}
}

func TestFailslabProbabilityIntervalTimesSpace(t *testing.T) {
	c, f, _ := slabCtx()
	f.SetIgnoreGFPWait(false)
	f.SetVerbose(0)
	f.SetProbability(101) // taken as debugfs takes it: always fails
	f.SetInterval(0)      // the same as 1
	// times 1 (the default): one failure, then none.
	if got := failed(c, 10, GFPKernel); len(got) != 1 || got[0] != 1 || f.Times() != 0 {
		t.Fatalf("times=1: failed %v, times now %d", got, f.Times())
	}
	// interval 3 with no limit: every third call that passes the other tests.
	f.SetTimes(-1)
	f.SetInterval(3)
	if got := failed(c, 9, GFPKernel); len(got) != 3 || got[0] != 3 || got[1] != 6 || got[2] != 9 || f.Times() != -1 {
		t.Fatalf("interval=3: failed %v", got)
	}
	f.SetInterval(1)
	// space: failures start once 3 kmalloc-64 objects (the 40-byte
	// requests' cache) have used up a budget of 150 bytes.
	f.SetSpace(150)
	if got := failed(c, 4, GFPKernel); len(got) != 2 || got[0] != 3 || f.Space() != 22 {
		t.Fatalf("space=150: failed %v, space left %d", got, f.Space())
	}
	f.SetSpace(0)
	// probability 30 with a seed: deterministic, about 30%.
	f.SetProbability(30)
	run := func(seed uint64) []int {
		f.Seed(seed)
		return failed(c, 1000, GFPKernel)
	}
	a, b := run(9), run(9)
	if len(a) < 240 || len(a) > 360 || len(a) != len(b) {
		t.Fatalf("p=30: %d then %d failures of 1000", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("one seed failed different calls")
		}
	}
}

func TestFailslabFilters(t *testing.T) {
	c, f, _ := slabCtx()
	f.SetProbability(100)
	f.SetTimes(-1)
	f.SetVerbose(0)
	// ignore-gfp-wait on: only allocations that cannot sleep fail.
	if failed(c, 1, GFPKernel) != nil || failed(c, 1, GFPNoFS) != nil || failed(c, 1, GFPAtomic) == nil || failed(c, 1, GFPNoWait) == nil {
		t.Fatal("ignore-gfp-wait does not separate sleeping from atomic allocations")
	}
	f.SetIgnoreGFPWait(false)
	f.SetCacheFilter(true)
	if failed(c, 1, GFPKernel) != nil || cacheD.Alloc(c, GFPKernel) != nil {
		t.Fatal("cache-filter with no cache flagged failed an allocation")
	}
	f.SetCacheFailslab("kmalloc-64", true)
	f.SetCacheFailslab(cacheD.Site().Name(), true)
	if failed(c, 1, GFPKernel) == nil || cacheD.Alloc(c, GFPKernel) == nil {
		t.Fatal("flagged caches did not fail")
	}
	if _, err := Kmalloc(c, siteA, 100, GFPKernel); err != nil {
		t.Fatal("kmalloc-128 failed with only kmalloc-64 flagged")
	}
}

func TestKmallocCacheName(t *testing.T) {
	for size, want := range map[int]string{1: "kmalloc-8", 8: "kmalloc-8", 9: "kmalloc-16", 65: "kmalloc-96", 96: "kmalloc-96",
		97: "kmalloc-128", 129: "kmalloc-192", 193: "kmalloc-256", 1000: "kmalloc-1k", 8192: "kmalloc-8k", 8193: ""} {
		if got := KmallocCacheName(size); got != want {
			t.Errorf("%d: %q, want %q", size, got, want)
		}
	}
}

func TestFailslabUnarmedAllocatesNothing(t *testing.T) {
	c, _, _ := slabCtx()
	c.Stats = nil
	c.Ev = nil
	if n := testing.AllocsPerRun(100, func() { cacheD.Alloc(c, GFPKernel) }); n != 0 {
		t.Fatalf("%v allocations per unarmed kmem_cache_alloc", n)
	}
}
