// Package kmem models the kernel's slab allocator interface (mm/slab_common.c,
// mm/slub.c, include/linux/slab.h): kmalloc, kzalloc, kfree, kfree_sensitive
// and kmem_cache_alloc/free, with GFP flags, per-call-site accounting and
// fault injection: the kernel's own interface (faultinject.go: failslab's
// fault_attr knobs and filters, the task's /proc/self/fail-nth;
// mm/failslab.c, lib/fault-inject.c) and, in front of it, a per-task test
// injector by call number, site or seeded probability (failslab.go).
//
// Every byte allocation is a real Go allocation of exactly the requested
// size, with len == cap, so that a write past its end panics as KASAN would
// report a slab-out-of-bounds access; package kernel turns that panic into a
// BUG record at the simulator boundary. Objects that the model keeps as Go
// structs (dentries, inodes, files) are accounted through a Cache without a
// byte buffer: the Go object is the allocation.
//
// Accounting is per call site (Site) and per task: a Ctx carries the task's
// Stats shard, its fault injector and its event counters, all owned by one
// goroutine, so counting never adds shared-cache-line traffic. Nil fields
// disable the corresponding feature at the cost of a nil check.
package kmem

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/events"
)

// GFP holds allocation flags (include/linux/gfp_types.h). The model honours
// GFPZero (zeroed memory; Go memory always is, but the flag is recorded) and
// GFPNoFail (fault injection never fails such an allocation); the others are
// kept so that call sites read like the kernel's.
type GFP uint32

// GFP flags. GFPKernel may sleep and do I/O; GFPNoFS must not recurse into
// the filesystem; GFPAtomic and GFPNoWait must not sleep.
const (
	GFPKernel GFP = 1 << iota
	GFPNoFS
	GFPAtomic
	GFPNoWait
	GFPZero
	GFPNoFail
	// GFPNoWarn is __GFP_NOWARN: a failure is silent (failslab prints no
	// FAULT_INJECTION notice for it).
	GFPNoWarn
)

// String names the flags as the kernel prints them ("GFP_NOFS|__GFP_ZERO").
func (g GFP) String() string {
	var parts []string
	for _, f := range []struct {
		bit  GFP
		name string
	}{{GFPKernel, "GFP_KERNEL"}, {GFPNoFS, "GFP_NOFS"}, {GFPAtomic, "GFP_ATOMIC"},
		{GFPNoWait, "GFP_NOWAIT"}, {GFPZero, "__GFP_ZERO"}, {GFPNoFail, "__GFP_NOFAIL"},
		{GFPNoWarn, "__GFP_NOWARN"}} {
		if g&f.bit != 0 {
			parts = append(parts, f.name)
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, "|")
}

// KmallocMaxSize is KMALLOC_MAX_SIZE on x86-64 with SLUB (4 MiB); larger
// kmalloc requests fail with ENOMEM.
const KmallocMaxSize = 4 << 20

// Site is an allocation call site, such as "fscrypt_fname_encrypt:request".
// Sites are registered once, at package initialisation.
type Site struct {
	name string
	id   int
}

// Name returns the site's registered name.
func (s *Site) Name() string { return s.name }

var (
	siteMu     sync.Mutex
	sites      []*Site
	siteByName = map[string]*Site{}
)

// NewSite registers a call site. Names are unique; a duplicate panics, as it
// is a programming error found at start-up.
func NewSite(name string) *Site {
	siteMu.Lock()
	defer siteMu.Unlock()
	if _, dup := siteByName[name]; dup {
		panic("kmem: duplicate site " + name)
	}
	s := &Site{name: name, id: len(sites)}
	sites = append(sites, s)
	siteByName[name] = s
	return s
}

// LookupSite returns the site registered under name.
func LookupSite(name string) (*Site, bool) {
	siteMu.Lock()
	defer siteMu.Unlock()
	s, ok := siteByName[name]
	return s, ok
}

// Sites returns every registered site, sorted by name.
func Sites() []*Site {
	siteMu.Lock()
	out := append([]*Site(nil), sites...)
	siteMu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// SiteStats is what one shard counted at one site.
type SiteStats struct {
	Allocs     uint64 // successful allocations
	Frees      uint64 // frees
	Fails      uint64 // allocations that failed (injected or too large)
	Bytes      uint64 // bytes allocated
	FreedBytes uint64 // bytes freed
}

// Live returns the number of objects allocated and not yet freed.
func (s SiteStats) Live() int64 { return int64(s.Allocs) - int64(s.Frees) }

// Stats is one task's per-site accounting. The zero value is ready to use; it
// must only be touched by its owner goroutine.
type Stats struct {
	s []SiteStats
}

func (st *Stats) at(site *Site) *SiteStats {
	if site.id >= len(st.s) {
		n := make([]SiteStats, site.id+1+8)
		copy(n, st.s)
		st.s = n
	}
	return &st.s[site.id]
}

// Site returns the counts recorded for site.
func (st *Stats) Site(site *Site) SiteStats {
	if st == nil || site.id >= len(st.s) {
		return SiteStats{}
	}
	return st.s[site.id]
}

// Live returns the total number of live objects over all sites: a test that
// an operation leaks nothing compares Live before and after it.
func (st *Stats) Live() int64 {
	if st == nil {
		return 0
	}
	var n int64
	for _, s := range st.s {
		n += s.Live()
	}
	return n
}

// Totals returns the sum over all sites.
func (st *Stats) Totals() SiteStats {
	var t SiteStats
	if st == nil {
		return t
	}
	for _, s := range st.s {
		t.Allocs += s.Allocs
		t.Frees += s.Frees
		t.Fails += s.Fails
		t.Bytes += s.Bytes
		t.FreedBytes += s.FreedBytes
	}
	return t
}

// Merge adds o's counts into st (after o's owner has stopped).
func (st *Stats) Merge(o *Stats) {
	if st == nil || o == nil {
		return
	}
	for i, s := range o.s {
		if i >= len(st.s) {
			st.s = append(st.s, make([]SiteStats, i+1-len(st.s))...)
		}
		d := &st.s[i]
		d.Allocs += s.Allocs
		d.Frees += s.Frees
		d.Fails += s.Fails
		d.Bytes += s.Bytes
		d.FreedBytes += s.FreedBytes
	}
}

// Clone returns a copy of st.
func (st *Stats) Clone() *Stats {
	if st == nil {
		return nil
	}
	return &Stats{s: append([]SiteStats(nil), st.s...)}
}

// Leaks lists the sites whose live count differs between base and st, as
// "site:+n" entries; empty when nothing leaked (or was freed twice).
func (st *Stats) Leaks(base *Stats) []string {
	var out []string
	for _, site := range Sites() {
		d := st.Site(site).Live() - base.Site(site).Live()
		if d != 0 {
			out = append(out, fmt.Sprintf("%s:%+d", site.name, d))
		}
	}
	return out
}

// String is the canonical one-line dump: for each site with activity,
// "name:allocs/frees/bytes" (and "!fails" when some failed), sorted by name.
func (st *Stats) String() string {
	var b strings.Builder
	for _, site := range Sites() {
		s := st.Site(site)
		if s == (SiteStats{}) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%d/%d/%d", site.name, s.Allocs, s.Frees, s.Bytes)
		if s.Fails != 0 {
			fmt.Fprintf(&b, "!%d", s.Fails)
		}
	}
	if b.Len() == 0 {
		return "(none)"
	}
	return b.String()
}

// Ctx is a task's allocation context: where its allocations are counted and
// whether they may be made to fail. Every field may be nil.
type Ctx struct {
	Stats *Stats
	// Fail is the task's own test injector (by call number, site or seeded
	// probability), consulted before the kernel's interface.
	Fail *Failslab
	// Slab is the machine's failslab (faultinject.go), shared by its
	// tasks; FailNth is the task's fail_nth (/proc/self/fail-nth).
	Slab    *FailslabAttr
	FailNth uint32
	Ev      *events.Counters
	// Debug, when not nil, makes allocations cost what they cost under
	// SLUB debugging (see SlubDebug).
	Debug *SlubDebug
	// Track, when not nil, is the machine's object tracker (track.go):
	// KASAN's and kmemleak's per-object records.
	Track *Tracker
}

// Allocation events, counted in the task's event shard.
var (
	EvKmalloc      = events.Register("kmalloc", "successful kmalloc/kzalloc calls")
	EvKmallocBytes = events.Register("kmalloc_bytes", "bytes requested by successful kmalloc/kzalloc calls")
	EvKfree        = events.Register("kfree", "kfree/kfree_sensitive of a non-NULL pointer")
	EvCacheAlloc   = events.Register("kmem_cache_alloc", "successful kmem_cache_alloc calls")
	EvCacheFree    = events.Register("kmem_cache_free", "kmem_cache_free calls")
	EvAllocFail    = events.Register("alloc_fail", "allocations that failed (fault injection or size)")
)

// zeroSize stands for ZERO_SIZE_PTR: kmalloc(0) returns a distinct non-NULL
// pointer that must not be dereferenced.
var zeroSize = make([]byte, 0)

// Kmalloc allocates size bytes at site (include/linux/slab.h kmalloc). It
// returns a slice with len == cap == size, so an access past the end panics
// like a KASAN report. kmalloc(0) returns ZERO_SIZE_PTR (an empty, non-nil
// slice) without counting an allocation.
//
// Errors: ENOMEM when fault injection fails the call or size exceeds
// KmallocMaxSize; callers must propagate it as -ENOMEM.
func Kmalloc(c *Ctx, site *Site, size int, flags GFP) ([]byte, error) {
	if size == 0 {
		return zeroSize, nil
	}
	if size < 0 || size > KmallocMaxSize || c.shouldFail(site, size, flags) ||
		c.shouldFailslab(nil, size, site, flags) {
		c.fail(site)
		return nil, errno.ENOMEM
	}
	c.account(site, size)
	c.events().Inc(EvKmalloc)
	c.events().Add(EvKmallocBytes, uint64(size))
	buf := make([]byte, size)
	if c != nil && c.Debug != nil {
		c.Debug.alloc(buf)
	}
	if c != nil && c.Track != nil {
		c.Track.alloc(site, buf)
	}
	return buf, nil
}

// Kzalloc is Kmalloc with __GFP_ZERO: the memory is zeroed.
func Kzalloc(c *Ctx, site *Site, size int, flags GFP) ([]byte, error) {
	return Kmalloc(c, site, size, flags|GFPZero)
}

// Kfree frees buf, allocated at site (mm/slub.c kfree). kfree(NULL) and
// kfree(ZERO_SIZE_PTR) do nothing. The model must be told the allocation
// site because it accounts per site; the caller passes the site that
// allocated buf.
func Kfree(c *Ctx, site *Site, buf []byte) {
	if cap(buf) == 0 {
		return
	}
	if c != nil && c.Track != nil && !c.Track.free(buf) {
		return // a double free: reported, not performed (KASAN)
	}
	if c != nil && c.Debug != nil {
		c.Debug.free(buf[:cap(buf)])
	}
	if c != nil && c.Stats != nil {
		s := c.Stats.at(site)
		s.Frees++
		s.FreedBytes += uint64(cap(buf))
	}
	c.events().Inc(EvKfree)
}

// KfreeSensitive zeroes buf (memzero_explicit) and then frees it
// (mm/slab_common.c kfree_sensitive): used for key material and requests
// that held key-dependent state.
func KfreeSensitive(c *Ctx, site *Site, buf []byte) {
	clear(buf[:cap(buf)])
	Kfree(c, site, buf)
}

// Cache models a kmem_cache of fixed-size objects (kmem_cache_create). The
// model's objects are Go structs made by the caller; the cache only accounts
// for them and applies fault injection, so that a dentry or inode allocation
// can fail with ENOMEM like the kernel's.
type Cache struct {
	site *Site
	size int
}

// NewCache registers a cache named name whose objects are size bytes (the
// size the kernel's struct would have; it is what Stats.Bytes counts).
func NewCache(name string, size int) *Cache {
	return &Cache{site: NewSite(name), size: size}
}

// Site returns the cache's accounting site.
func (k *Cache) Site() *Site { return k.site }

// Size returns the object size given to NewCache.
func (k *Cache) Size() int { return k.size }

// Alloc accounts one object allocation (kmem_cache_alloc). Errors: ENOMEM
// when fault injection fails the call; the caller must then not create the
// object.
func (k *Cache) Alloc(c *Ctx, flags GFP) error {
	if c.shouldFail(k.site, k.size, flags) || c.shouldFailslab(k, k.size, k.site, flags) {
		c.fail(k.site)
		return errno.ENOMEM
	}
	c.account(k.site, k.size)
	c.events().Inc(EvCacheAlloc)
	if c != nil && c.Debug != nil {
		c.Debug.track()
	}
	return nil
}

// Free accounts one object free (kmem_cache_free).
func (k *Cache) Free(c *Ctx) {
	if c != nil && c.Debug != nil {
		c.Debug.track()
	}
	if c != nil && c.Stats != nil {
		s := c.Stats.at(k.site)
		s.Frees++
		s.FreedBytes += uint64(k.size)
	}
	c.events().Inc(EvCacheFree)
}

// events returns the task's event shard; nil when c is nil or counts
// nothing.
func (c *Ctx) events() *events.Counters {
	if c == nil {
		return nil
	}
	return c.Ev
}

func (c *Ctx) account(site *Site, size int) {
	if c == nil || c.Stats == nil {
		return
	}
	s := c.Stats.at(site)
	s.Allocs++
	s.Bytes += uint64(size)
}

func (c *Ctx) fail(site *Site) {
	if c == nil {
		return
	}
	if c.Stats != nil {
		c.Stats.at(site).Fails++
	}
	c.events().Inc(EvAllocFail)
}

func (c *Ctx) shouldFail(site *Site, size int, flags GFP) bool {
	if c == nil || c.Fail == nil || flags&GFPNoFail != 0 {
		return false
	}
	return c.Fail.should(site, size)
}

// shouldFailslab is the slab_pre_alloc_hook's should_failslab call, for
// the task's fail_nth and the machine's failslab: cache is the kmem cache,
// or nil for a kmalloc of size bytes (served by a kmalloc-N cache, or by
// the page allocator above KmallocMaxCacheSize, which failslab does not
// see). The fast path, with neither armed, is two loads.
func (c *Ctx) shouldFailslab(cache *Cache, size int, site *Site, flags GFP) bool {
	if c == nil || c.Slab == nil || (c.FailNth == 0 && c.Slab.probability.Load() == 0) {
		return false
	}
	if cache != nil {
		return c.Slab.shouldFailslab(c, cache.site.name, cache.size, site, flags)
	}
	name := KmallocCacheName(size)
	if name == "" {
		return false
	}
	return c.Slab.shouldFailslab(c, name, kmallocClass(size), site, flags)
}
