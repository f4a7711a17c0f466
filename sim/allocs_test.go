package sim

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/vfslab/vfslab/patch"
)

// allocCase is one measured path: a workload with its parameters, run on
// one worker under the given variant of its patch.
type allocCase struct {
	workload string
	params   map[string]string
	variant  string
}

func (c allocCase) String() string {
	s := c.workload + "/" + c.variant
	for _, k := range []string{"fs", "mode", "requests", "parent", "n", "mib", "mount"} {
		if v, ok := c.params[k]; ok {
			s += fmt.Sprintf("/%s=%s", k, v)
		}
	}
	return s
}

// allocCases are the paths of issue 12: the read path of every crypto-bio
// variant with allocated and on-stack requests, the hashed and linear f2fs
// and ext4 lookups, create, open1, v1 key derivation and filenames.
func allocCases() []allocCase {
	var cs []allocCase
	for _, req := range []string{"base", "upstream"} {
		for _, v := range []string{"workqueue", "inline", "chain", "bio"} {
			cs = append(cs, allocCase{"read", map[string]string{"mib": "1", "requests": req}, v})
		}
	}
	for _, fs := range []string{"f2fs", "ext4"} {
		for _, mode := range []string{"hit", "miss"} {
			for _, v := range []string{"base", "v4"} {
				cs = append(cs, allocCase{"lookup", map[string]string{"fs": fs, "mode": mode, "entries": "1000"}, v})
			}
		}
	}
	for _, fs := range []string{"f2fs", "ext4"} {
		cs = append(cs, allocCase{"create", map[string]string{"fs": fs, "n": "100"}, "base"})
	}
	for _, parent := range []string{"plain", "encrypted"} {
		cs = append(cs, allocCase{"open1", map[string]string{"parent": parent}, "v2"})
	}
	for _, v := range []string{"base", "sync", "aeslib"} {
		cs = append(cs, allocCase{"v1kdf", map[string]string{}, v})
	}
	for _, v := range []string{"base", "v2", "upstream"} {
		cs = append(cs, allocCase{"fname", map[string]string{}, v})
	}
	return cs
}

// allocSystem sets up c's system (counting or not) and returns its single
// worker's operation.
func allocSystem(tb testing.TB, c allocCase, counting bool) (*system, Config) {
	tb.Helper()
	w, err := Lookup(c.workload)
	if err != nil {
		tb.Fatal(err)
	}
	params, err := w.ResolveParams(c.params)
	if err != nil {
		tb.Fatal(err)
	}
	cfg := Config{Workload: w, Params: c.params, Seed: 1}
	base, err := w.applyPatchParams(c.params, params, patch.Set{}, w.Patch)
	if err != nil {
		tb.Fatal(err)
	}
	set, err := base.With(w.Patch, c.variant)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := setup(cfg, w, params, set, 1, counting)
	if err != nil {
		tb.Fatal(err)
	}
	return s, cfg
}

// kmallocsPerOp is the modelled kmallocs (kmalloc and kmem_cache_alloc)
// per operation of c, from a counting run of ops operations over every
// task of the machine, as vfslab ab's kmalloc/op column.
func kmallocsPerOp(tb testing.TB, c allocCase, ops int) float64 {
	tb.Helper()
	s, cfg := allocSystem(tb, c, false)
	var m Measurement
	m.Patches = *s.k.Patches()
	w := cfg.Workload
	params, _ := w.ResolveParams(c.params)
	cfg.CountOps = ops
	if err := countingRun(cfg, w, params, m.Patches, 1, ops, &m); err != nil {
		tb.Fatal(err)
	}
	s.close()
	if m.Errors != 0 {
		tb.Fatalf("%v: %s", c, m.FirstError)
	}
	return m.Kmallocs
}

// opsFor is how many operations a measurement of c runs: enough to
// amortise warm-up, few enough for the default suite.
func opsFor(c allocCase) int {
	switch c.workload {
	case "read":
		return 4
	case "create":
		return 3
	case "lookup":
		if c.params["mode"] == "miss" {
			return 20
		}
	}
	return 200
}

// BenchmarkAllocs measures, for every path of issue 12, the Go heap
// allocations per operation (-benchmem's allocs/op, which
// runtime.MemStats counts over every goroutine, the read path's device
// and workqueue workers included) beside the modelled kmallocs per
// operation (kmallocs/op: kmalloc and kmem_cache_alloc over every task,
// from a separate counting run). One operation is the workload's (vfslab
// ab --list): read = a 1 MiB file, create = 100 files, lookup = one name
// in a directory of 1000.
//
// allocs/op equals kmallocs/op except where the model has a reason:
//
//   - read (every crypto-bio variant, requests base or upstream): equal;
//     the first operation fills the read path's folio and bio pools (the
//     kernel's page cache and bio mempool), outside the measured loop.
//   - fname base and upstream, v1kdf aeslib: equal. fname v2: 1 more,
//     the Go struct of the encryption request it leaks as posted (a
//     freed request's goes back to a pool). v1kdf base and sync: 2 more per
//     derivation, the tfm's Go struct and its AES-NI ECB context, beside
//     the tfm's kzalloc'd memory that the model accounts for both.
//   - open1: 1 kmem_cache_alloc (the struct file) and no Go allocation:
//     the model reuses the file's Go struct.
//   - lookup, f2fs: 3 more per hit, 2 per miss. f2fs's own share is the
//     found entry's DentryRef (a hit; the kernel returns a pointer into
//     the dentry page) and the name converted from string to []byte in
//     f2fs_prepare_lookup (f2fs/namei.go); the VFS's is the qstr of
//     lookup_one (vfs/lookup_one.go), which escapes through d_op->d_hash.
//     (fscrypt_prepare_lookup views the dentry's name without a copy, as
//     the kernel points at d_name, and a dentry's call_rcu uses its
//     embedded rcu_head: neither allocates.)
//   - lookup, ext4: 2 more per hit, 6 per miss: the struct ext4_filename
//     that ext4/crypto.go returns on the heap (the kernel's is on
//     ext4_find_entry's stack), the DentryRef of a hit, and the VFS's
//     share as for f2fs.
//   - create: 15 (f2fs) to 17 (ext4) more per file created: the inode's Go struct, its
//     block map and xattrs beside the inode's kmem_cache_alloc, the data
//     block of the 4 KiB write, the per-file key's tfm structs (as v1kdf),
//     the encryption context marshalled through the s_cop interface, and
//     the lookup's VFS shares.
func BenchmarkAllocs(b *testing.B) {
	for _, c := range allocCases() {
		b.Run(c.String(), func(b *testing.B) {
			s, _ := allocSystem(b, c, false)
			defer s.close()
			op := s.ops[0]
			if err := op(0); err != nil { // warm-up: pools, caches
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := op(i + 1); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(kmallocsPerOp(b, c, min(b.N, opsFor(c))), "kmallocs/op")
		})
	}
}

// goAllocsPerOp is testing.AllocsPerRun of c's operation after a warm-up
// operation.
func goAllocsPerOp(tb testing.TB, c allocCase, runs int) float64 {
	s, _ := allocSystem(tb, c, false)
	defer s.close()
	op := s.ops[0]
	if err := op(0); err != nil {
		tb.Fatal(err)
	}
	i := 1
	var err error
	a := testing.AllocsPerRun(runs, func() {
		if e := op(i); e != nil && err == nil {
			err = e
		}
		i++
	})
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// TestAllocsPerKmalloc pins the Go heap allocations per operation of the
// main paths against their modelled kmallocs: extra is how many Go
// allocations beyond the kmallocs an operation may make, for the reasons
// BenchmarkAllocs gives; a regression (a new closure, slice or interface
// that escapes) fails it.
func TestAllocsPerKmalloc(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for _, tc := range []struct {
		c     allocCase
		extra float64
	}{
		// The read path: one request kmalloc per data unit with
		// requests=base, none on-stack; nothing else.
		{allocCase{"read", map[string]string{"mib": "1", "requests": "base"}, "workqueue"}, 0},
		{allocCase{"read", map[string]string{"mib": "1", "requests": "base"}, "chain"}, 0},
		{allocCase{"read", map[string]string{"mib": "1", "requests": "upstream"}, "workqueue"}, 0},
		{allocCase{"read", map[string]string{"mib": "1", "requests": "upstream"}, "bio"}, 0},
		// The tfm's kzalloc is one Go allocation; its Go struct and
		// its AES-NI ECB context are two more.
		{allocCase{"v1kdf", map[string]string{}, "base"}, 2},
		{allocCase{"v1kdf", map[string]string{}, "sync"}, 2},
		{allocCase{"v1kdf", map[string]string{}, "aeslib"}, 0},
		{allocCase{"fname", map[string]string{}, "base"}, 0},
		// v2 leaks its encryption request: the kmalloc, and the
		// request's Go struct, which never goes back to its pool.
		{allocCase{"fname", map[string]string{}, "v2"}, 1},
		{allocCase{"fname", map[string]string{}, "upstream"}, 0},
	} {
		t.Run(tc.c.String(), func(t *testing.T) {
			ops := opsFor(tc.c)
			kmallocs := kmallocsPerOp(t, tc.c, ops)
			runs := ops
			if tc.c.workload == "read" {
				runs = 2
			}
			goAllocs := goAllocsPerOp(t, tc.c, runs)
			// A read of 1 MiB allocates nothing per data unit beyond
			// its kmallocs; GC and the runtime may add a stray
			// allocation now and then (runtime.GOMAXPROCS goroutines
			// run the decryption).
			slack := 0.0
			if tc.c.workload == "read" {
				slack = float64(runtime.GOMAXPROCS(0))
			}
			if goAllocs > kmallocs+tc.extra+slack || goAllocs < kmallocs+tc.extra-slack {
				t.Errorf("%v: %.1f Go allocations per op for %.1f modelled kmallocs (want %.1f extra)", tc.c, goAllocs, kmallocs, tc.extra)
			}
			t.Logf("%v: allocs/op %.1f kmallocs/op %.1f", tc.c, goAllocs, kmallocs)
		})
	}
}
