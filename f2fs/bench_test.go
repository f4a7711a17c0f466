package f2fs

import (
	"fmt"
	"testing"

	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/patch"
)

var benchDirs = map[int]*Inode{}

// benchDir builds (once) a casefolded, encrypted directory of n names.
func benchDir(b testing.TB, n int) *Inode {
	if dir, ok := benchDirs[n]; ok {
		return dir
	}
	tk := kernel.New().NewTask("build")
	defer tk.Exit()
	o := dirOpts{casefold: true, encrypt: true, mode: LookupPerf}
	dir := newDirInode(b, tk, newTestSB(b, tk, o), o)
	encryptDir(b, tk, dir, fscrypt.PolicyFlagsPad16)
	if err := MakeEmptyDir(tk, dir, rootIno, SIfdir); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := AddLink(tk, dir, []byte(fmt.Sprintf("file-%06d", i)), uint32(100+i), SIfreg); err != nil {
			b.Fatal(err)
		}
	}
	benchDirs[n] = dir
	return dir
}

// BenchmarkLookup measures f2fs lookups in casefolded, encrypted
// directories of 1k, 10k and 100k names: hashed hits (lookup_mode=perf) and
// misses that fall back to the linear search (lookup_mode=auto), for each
// f2fs-lookup-prealloc variant. Besides ns/op it reports the names compared,
// the names decrypted and the kmallocs per lookup.
func BenchmarkLookup(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		for _, mode := range []string{"hashed", "linear"} {
			for _, v := range LookupPreallocPatch.VariantNames() {
				b.Run(fmt.Sprintf("n=%d/%s/%s", n, mode, v), func(b *testing.B) {
					dir := benchDir(b, n)
					dir.SB.LookupMode = LookupPerf
					if mode == "linear" {
						dir.SB.LookupMode = LookupAuto
					}
					tk := kernel.NewWith(kernel.Config{Patches: patch.Set{}.MustWith(LookupPreallocPatch, v)}).NewTask("bench")
					tk.EnableCounting()
					defer tk.Exit()
					names := make([][]byte, 256)
					for i := range names {
						if mode == "hashed" {
							names[i] = []byte(fmt.Sprintf("FILE-%06d", (i*7919)%n))
						} else {
							names[i] = []byte(fmt.Sprintf("absent-%06d", i))
						}
					}
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						r, err := FindEntry(tk, dir, names[i%len(names)])
						if err != nil || (r != nil) != (mode == "hashed") {
							b.Fatalf("lookup: %v %v", r, err)
						}
					}
					b.StopTimer()
					per := func(v uint64) float64 { return float64(v) / float64(b.N) }
					b.ReportMetric(per(tk.Ev.Get(EvNamesCompared)), "compared/op")
					b.ReportMetric(per(tk.Ev.Get(EvNameDecrypts)), "decrypts/op")
					// kmalloc and kmem_cache_alloc (f2fs_cf_name_slab), as allocs/op
					// counts Go allocations.
					b.ReportMetric(per(tk.Stats.Totals().Allocs), "kmallocs/op")
				})
			}
		}
	}
}
