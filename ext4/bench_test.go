package ext4

import (
	"fmt"
	"testing"

	"github.com/vfslab/vfslab/kernel"
)

var benchDirs = map[int]*Inode{}

// benchDir builds (once) a casefolded, encrypted htree directory of n
// names with metadata_csum.
func benchDir(b testing.TB, n int) *Inode {
	if dir, ok := benchDirs[n]; ok {
		return dir
	}
	tk := kernel.New().NewTask("build")
	defer tk.Exit()
	sb := testSB(b, tk)
	sb.Encoding = asciiFold{}
	sb.InodesCount = 1 << 20
	dir := testDirInode(b, tk, sb, 12, 1, true)
	encryptDir(b, tk, dir)
	if err := InitNewDir(tk, dir, 2); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := AddEntry(tk, dir, []byte(fmt.Sprintf("file-%06d", i)), uint32(100+i), SIfreg); err != nil {
			b.Fatal(err)
		}
	}
	benchDirs[n] = dir
	return dir
}

// BenchmarkLookup measures ext4 lookups in casefolded, encrypted htree
// directories of 1k, 10k and 100k names: htree hits, and misses that fall
// back to the linear search (no no-compat-fallback flag). It reports the
// names compared, the names decrypted and the kmallocs per lookup (ext4
// passes no prealloc buffer to generic_ci_match, whatever seed 001's
// variant).
func BenchmarkLookup(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		for _, mode := range []string{"hashed", "linear"} {
			b.Run(fmt.Sprintf("n=%d/%s", n, mode), func(b *testing.B) {
				dir := benchDir(b, n)
				tk := kernel.New().NewTask("bench")
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
