package f2fs

import (
	"fmt"
	"testing"

	"github.com/vfslab/vfslab/internal/fstestutil"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/patch"
)

// TestLookupAllocsPerKmalloc pins the Go heap allocations of
// __f2fs_find_entry in a casefolded, encrypted directory against its
// modelled kmallocs (kmalloc and kmem_cache_alloc): a hashed hit makes one
// Go allocation more, the found entry's DentryRef (the kernel returns a
// pointer into the dentry page); a miss that falls back to the linear
// search makes none more, for every f2fs-lookup-prealloc variant.
func TestLookupAllocsPerKmalloc(t *testing.T) {
	if fstestutil.RaceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	dir := benchDir(t, 1000)
	defer func(m LookupMode) { dir.SB.LookupMode = m }(dir.SB.LookupMode)
	for _, v := range LookupPreallocPatch.VariantNames() {
		for _, hit := range []bool{true, false} {
			dir.SB.LookupMode = LookupPerf
			name := []byte("FILE-000417")
			extra := 1.0
			if !hit {
				dir.SB.LookupMode = LookupAuto
				name = []byte("absent-000417")
				extra = 0
			}
			tk := kernel.NewWith(kernel.Config{Patches: patch.Set{}.MustWith(LookupPreallocPatch, v)}).NewTask("allocs")
			tk.EnableCounting()
			const runs = 20
			var err error
			found := 0
			goAllocs := testing.AllocsPerRun(runs, func() {
				r, e := FindEntry(tk, dir, name)
				if e != nil {
					err = e
				}
				if r != nil {
					found++
				}
			})
			tk.Exit()
			if err != nil || (found > 0) != hit {
				t.Fatalf("%s hit=%v: %d found, %v", v, hit, found, err)
			}
			kmallocs := float64(tk.Stats.Totals().Allocs) / (runs + 1) // AllocsPerRun's warm-up run
			desc := fmt.Sprintf("%s hit=%v", v, hit)
			if goAllocs != kmallocs+extra {
				t.Errorf("%s: %.2f Go allocations per lookup for %.2f modelled kmallocs, want %.0f more", desc, goAllocs, kmallocs, extra)
			}
			t.Logf("%s: allocs/op %.1f kmallocs/op %.1f", desc, goAllocs, kmallocs)
		}
	}
}
