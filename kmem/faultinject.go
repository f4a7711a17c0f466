package kmem

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/vfslab/vfslab/errno"
)

// The kernel's fault-injection framework as far as the slab allocator uses
// it (lib/fault-inject.c, mm/failslab.c, fs/proc/base.c fail-nth;
// Documentation/fault-injection/fault-injection.rst):
//
//   - FaultAttr is struct fault_attr, the knobs under
//     /sys/kernel/debug/<name>/: probability, interval, times, space,
//     verbose;
//   - FailslabAttr is mm/failslab.c's failslab: a fault_attr plus
//     ignore-gfp-wait and cache-filter, one per machine, consulted by every
//     kmalloc and kmem_cache_alloc of every task (should_failslab);
//   - Ctx.FailNth is the task's fail_nth, /proc/<pid>/fail-nth: write N and
//     the Nth fault-injection point the task reaches fails.
//
// Deviations: the task-filter, require/reject address ranges and
// stacktrace-depth knobs are not modelled; fail_dump is not rate-limited
// (the kernel's ratelimit depends on wall time) and prints the allocation
// site instead of a stack dump at verbose 2; kmalloc requests above
// KMALLOC_MAX_CACHE_SIZE, which the kernel serves from the page allocator
// (fail_page_alloc, not modelled), are not failed by failslab.

// FaultAttr is struct fault_attr (include/linux/fault-inject.h). The zero
// value is not the kernel's default: use NewFaultAttr. All fields may be
// read and set while tasks allocate.
type FaultAttr struct {
	name        string
	probability atomic.Uint64 // percent, 0..100
	interval    atomic.Uint64
	times       atomic.Int64 // -1: no limit
	space       atomic.Int64
	verbose     atomic.Uint64
	count       atomic.Uint64

	mu  sync.Mutex
	rng *rand.Rand

	// Printk receives fail_dump's lines; nil drops them.
	Printk func(line string)
}

// NewFaultAttr returns a fault_attr with FAULT_ATTR_INITIALIZER's values:
// probability 0, interval 1, times 1, space 0, verbose 2. name is its
// debugfs directory ("failslab"); seed seeds the draws of probability
// (get_random_u32_below in the kernel), so one seed fails the same calls.
func NewFaultAttr(name string, seed uint64) *FaultAttr {
	a := &FaultAttr{}
	a.init(name, seed)
	return a
}

func (a *FaultAttr) init(name string, seed uint64) {
	a.name = name
	a.rng = rand.New(rand.NewPCG(seed, 0x6661756c74))
	a.interval.Store(1)
	a.times.Store(1)
	a.verbose.Store(2)
}

// Name returns the attribute's debugfs name.
func (a *FaultAttr) Name() string { return a.name }

// Probability returns the failure probability in percent.
func (a *FaultAttr) Probability() uint64 { return a.probability.Load() }

// Interval returns the interval between failures.
func (a *FaultAttr) Interval() uint64 { return a.interval.Load() }

// Times returns how many more failures may happen (-1: no limit).
func (a *FaultAttr) Times() int64 { return a.times.Load() }

// Space returns the remaining size budget before failures start.
func (a *FaultAttr) Space() int64 { return a.space.Load() }

// Verbose returns the verbosity: 0 silent, 1 one message per failure, 2
// also the call site.
func (a *FaultAttr) Verbose() uint64 { return a.verbose.Load() }

// SetProbability sets the probability in percent. As with the debugfs
// file, any value is taken; 100 and above fail every call that passes the
// other tests.
func (a *FaultAttr) SetProbability(p uint64) { a.probability.Store(p) }

// SetInterval sets the interval; 0 and 1 both mean every call.
func (a *FaultAttr) SetInterval(n uint64) { a.interval.Store(n) }

// SetTimes sets the number of failures allowed; -1 means no limit.
func (a *FaultAttr) SetTimes(n int64) { a.times.Store(n) }

// SetSpace sets the size budget: failures start once allocations have used
// it up.
func (a *FaultAttr) SetSpace(n int64) { a.space.Store(n) }

// SetVerbose sets the verbosity.
func (a *FaultAttr) SetVerbose(n uint64) { a.verbose.Store(n) }

// Seed reseeds the probability draws.
func (a *FaultAttr) Seed(seed uint64) {
	a.mu.Lock()
	a.rng = rand.New(rand.NewPCG(seed, 0x6661756c74))
	a.mu.Unlock()
}

// faultFlags are should_fail_ex's flags.
type faultFlags uint8

const faultNoWarn faultFlags = 1 // FAULT_NOWARN: no fail_dump

// shouldFailEx is should_fail_ex (lib/fault-inject.c): the task's fail_nth
// first (it takes precedence over every other knob), then probability,
// times, space, interval and the random draw. site names the caller for
// fail_dump.
func (a *FaultAttr) shouldFailEx(c *Ctx, size int, flags faultFlags, site string) bool {
	if c.FailNth != 0 {
		c.FailNth--
		if c.FailNth != 0 {
			return false
		}
	} else {
		if a.probability.Load() == 0 {
			return false
		}
		if a.times.Load() == 0 {
			return false
		}
		if a.space.Load() > int64(size) {
			a.space.Add(-int64(size))
			return false
		}
		if iv := a.interval.Load(); iv > 1 { // 0 and 1: every call
			if a.count.Add(1)%iv != 0 {
				return false
			}
		}
		a.mu.Lock()
		draw := a.rng.Uint32N(100)
		a.mu.Unlock()
		if a.probability.Load() <= uint64(draw) {
			return false
		}
	}
	if flags&faultNoWarn == 0 {
		a.failDump(site)
	}
	for {
		n := a.times.Load()
		if n == -1 || n == 0 || a.times.CompareAndSwap(n, n-1) {
			break
		}
	}
	return true
}

// failDump is fail_dump: the notice a forced failure prints when verbose.
func (a *FaultAttr) failDump(site string) {
	v := a.verbose.Load()
	if v == 0 || a.Printk == nil {
		return
	}
	a.Printk("FAULT_INJECTION: forcing a failure.")
	a.Printk(fmt.Sprintf("name %s, interval %d, probability %d, space %d, times %d",
		a.name, a.interval.Load(), a.probability.Load(), a.space.Load(), a.times.Load()))
	if v > 1 {
		a.Printk("Call Trace: " + site)
	}
}

// FailslabAttr is mm/failslab.c's failslab: the fault_attr of slab
// allocations and its two filters. The kernel has one per machine.
type FailslabAttr struct {
	FaultAttr
	ignoreGFPReclaim atomic.Bool
	cacheFilter      atomic.Bool
	// flagged holds the caches whose /sys/kernel/slab/<cache>/failslab is
	// 1 (SLAB_FAILSLAB), read only with cache-filter on.
	flagged sync.Map // cache name -> struct{}
}

// NewFailslab returns failslab as the kernel boots it: FAULT_ATTR_INITIALIZER,
// ignore-gfp-wait Y, cache-filter N.
func NewFailslab(seed uint64) *FailslabAttr {
	f := &FailslabAttr{}
	f.init("failslab", seed)
	f.ignoreGFPReclaim.Store(true)
	return f
}

// IgnoreGFPWait reports failslab's ignore-gfp-wait (ignore_gfp_reclaim):
// when set, allocations that may sleep in direct reclaim (GFP_KERNEL,
// GFP_NOFS) are never failed, fail-nth included.
func (f *FailslabAttr) IgnoreGFPWait() bool { return f.ignoreGFPReclaim.Load() }

// SetIgnoreGFPWait sets ignore-gfp-wait.
func (f *FailslabAttr) SetIgnoreGFPWait(on bool) { f.ignoreGFPReclaim.Store(on) }

// CacheFilter reports failslab's cache-filter: when set, only caches
// flagged with SetCacheFailslab fail.
func (f *FailslabAttr) CacheFilter() bool { return f.cacheFilter.Load() }

// SetCacheFilter sets cache-filter.
func (f *FailslabAttr) SetCacheFilter(on bool) { f.cacheFilter.Store(on) }

// SetCacheFailslab sets or clears SLAB_FAILSLAB on the cache called name
// (/sys/kernel/slab/<name>/failslab): a kmem cache's name, or a kmalloc
// cache's ("kmalloc-64"; see KmallocCacheName).
func (f *FailslabAttr) SetCacheFailslab(name string, on bool) {
	if on {
		f.flagged.Store(name, struct{}{})
	} else {
		f.flagged.Delete(name)
	}
}

// CacheFailslab reports SLAB_FAILSLAB of the cache called name.
func (f *FailslabAttr) CacheFailslab(name string) bool {
	_, ok := f.flagged.Load(name)
	return ok
}

// KmallocMaxCacheSize is KMALLOC_MAX_CACHE_SIZE with SLUB on 4 KiB pages:
// larger kmallocs go to the page allocator.
const KmallocMaxCacheSize = 8192

// kmallocClass returns the object size of the kmalloc cache serving size
// (kmalloc_index/kmalloc_size: powers of two from 8, plus 96 and 192).
func kmallocClass(size int) int {
	switch {
	case size <= 8:
		return 8
	case size > 64 && size <= 96:
		return 96
	case size > 128 && size <= 192:
		return 192
	}
	n := 8
	for n < size {
		n <<= 1
	}
	return n
}

// KmallocCacheName returns the name of the kmalloc cache a request of size
// bytes is served from ("kmalloc-96", "kmalloc-1k"), or "" for a request
// the page allocator serves.
func KmallocCacheName(size int) string {
	if size <= 0 || size > KmallocMaxCacheSize {
		return ""
	}
	return kmallocNames[kmallocClass(size)]
}

// kmallocNames are the kmalloc caches' names by object size.
var kmallocNames = func() map[int]string {
	m := map[int]string{96: "kmalloc-96", 192: "kmalloc-192"}
	for n := 8; n <= KmallocMaxCacheSize; n <<= 1 {
		if n >= 1024 {
			m[n] = "kmalloc-" + strconv.Itoa(n>>10) + "k"
		} else {
			m[n] = "kmalloc-" + strconv.Itoa(n)
		}
	}
	return m
}()

// shouldFailslab is should_failslab: __GFP_NOFAIL never fails; with
// ignore-gfp-wait an allocation that may enter direct reclaim does not
// either; with cache-filter only flagged caches fail; __GFP_NOWARN makes
// the failure silent. cache is the cache's name, objSize its object size.
func (f *FailslabAttr) shouldFailslab(c *Ctx, cache string, objSize int, site *Site, flags GFP) bool {
	if flags&GFPNoFail != 0 {
		return false
	}
	if f.ignoreGFPReclaim.Load() && flags.directReclaim() {
		return false
	}
	if f.cacheFilter.Load() && !f.CacheFailslab(cache) {
		return false
	}
	var ff faultFlags
	if flags&GFPNoWarn != 0 {
		ff |= faultNoWarn
	}
	return f.shouldFailEx(c, objSize, ff, site.name)
}

// directReclaim reports __GFP_DIRECT_RECLAIM, which GFP_KERNEL and
// GFP_NOFS include and GFP_ATOMIC and GFP_NOWAIT do not.
func (g GFP) directReclaim() bool {
	return g&(GFPKernel|GFPNoFS) != 0 && g&(GFPAtomic|GFPNoWait) == 0
}

// ProcFailNthWrite is a write to /proc/self/fail-nth (fs/proc/base.c
// proc_fail_nth_write): buf is parsed with kstrtouint in base 0 (decimal,
// 0x hex, 0 octal, one trailing newline allowed) and becomes the task's
// fail_nth; 0 turns it off. It returns len(buf). Errors: EINVAL (not a
// number), ERANGE (above 2^32-1).
func (c *Ctx) ProcFailNthWrite(buf []byte) (int, error) {
	n, err := kstrtouint(string(buf))
	if err != nil {
		return 0, err
	}
	c.FailNth = n
	return len(buf), nil
}

// ProcFailNthRead is a read of /proc/self/fail-nth (proc_fail_nth_read):
// "%u\n" of the task's fail_nth. A positive value is the number of fault
// injection points left before the failure; 0 means the failure was
// injected (or none was asked for).
func (c *Ctx) ProcFailNthRead() string { return strconv.FormatUint(uint64(c.FailNth), 10) + "\n" }

// kstrtouint is lib/kstrtox.c kstrtouint(s, 0, &res): an optional "+",
// the radix from the prefix ("0x" and a hex digit: 16; another leading
// "0": 8; else 10), the digits, then at most one newline. Errors: ERANGE
// when the digits overflow 64 bits, EINVAL for no digits or anything after
// them, then ERANGE for a value above 2^32-1, in that order.
func kstrtouint(s string) (uint32, error) {
	s = strings.TrimPrefix(s, "+")
	base := 10
	if len(s) > 0 && s[0] == '0' {
		base = 8
		if len(s) > 2 && (s[1] == 'x' || s[1] == 'X') && digitVal(s[2]) < 16 {
			base, s = 16, s[2:]
		}
	}
	var v uint64
	overflow := false
	i := 0
	for ; i < len(s); i++ {
		d := digitVal(s[i])
		if d >= base {
			break
		}
		hi, lo := bits.Mul64(v, uint64(base))
		if hi != 0 || lo+uint64(d) < lo {
			overflow = true
		}
		v = lo + uint64(d)
	}
	switch rest := s[i:]; {
	case overflow:
		return 0, errno.ERANGE
	case i == 0, rest != "" && rest != "\n":
		return 0, errno.EINVAL
	case v > 1<<32-1:
		return 0, errno.ERANGE
	}
	return uint32(v), nil
}

// digitVal is the value of a hex digit, or 16 for anything else.
func digitVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return 16
}
