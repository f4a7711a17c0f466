package f2fs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// seedDir is the directory of seed 001's scenario: casefolded and
// encrypted, lookup_mode=auto (what the seed's 6.16 kernel, which had no
// option, did; upstream's default is perf), so that a miss decrypts every
// dentry.
func seedDir(t testing.TB, variant string, names ...string) (*kernel.Task, *Inode) {
	tk, dir := newTestDir(t, dirOpts{casefold: true, encrypt: true, noInline: true, mode: LookupAuto, variant: variant})
	for i, n := range names {
		mustAdd(t, tk, dir, n, uint32(100+i))
	}
	return tk, dir
}

func shortNames(n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, fmt.Sprintf("f%02d", i))
	}
	return out
}

type lookupCost struct {
	decrypts, compared, kmallocs, preallocs, perCall uint64
}

func measureMiss(t *testing.T, tk *kernel.Task, dir *Inode, name string) (lookupCost, error) {
	t.Helper()
	ev0 := tk.Ev.Clone()
	st0 := tk.Stats.Clone()
	r, err := find(tk, dir, name)
	if r != nil {
		t.Fatalf("%q found", name)
	}
	d := tk.Ev.Sub(ev0)
	return lookupCost{
		decrypts:  d.Get(EvNameDecrypts),
		compared:  d.Get(EvNamesCompared),
		kmallocs:  d.Get(kmem.EvKmalloc),
		preallocs: tk.Stats.Site(sitePrealloc).Allocs - st0.Site(sitePrealloc).Allocs,
		perCall:   tk.Stats.Site(siteDecryptedName).Allocs - st0.Site(siteDecryptedName).Allocs,
	}, err
}

// TestSeed001Allocations pins the allocations of one missed lookup in a
// directory of 20 names plus "." and "..": the linear fallback decrypts all
// 22. base kmallocs once per decryption; v2, because its resize check is
// inverted, reallocates for every name shorter than its buffer, which is
// every name here, so it saves nothing; v4 allocates once. fscrypt's own
// kmallocs come on top, the same 22 for every variant: the crypto_buf and
// the skcipher request of encrypting "absent" (fscrypt_setup_filename),
// and one skcipher request per decrypted name ("." and ".." pass through
// fscrypt_fname_disk_to_usr without one).
func TestSeed001Allocations(t *testing.T) {
	const fscryptKmallocs = 2 + 20
	want := map[string]lookupCost{
		"base": {decrypts: 22, compared: 22, kmallocs: 22 + fscryptKmallocs, perCall: 22},
		"v2":   {decrypts: 22, compared: 22, kmallocs: 22 + fscryptKmallocs, preallocs: 22},
		"v4":   {decrypts: 22, compared: 22, kmallocs: 1 + fscryptKmallocs, preallocs: 1},
	}
	for _, v := range LookupPrealloc.VariantNames() {
		tk, dir := seedDir(t, v, shortNames(20)...)
		base := tk.Stats.Clone()
		got, err := measureMiss(t, tk, dir, "absent")
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if got != want[v] {
			t.Errorf("%s: one missed lookup cost %+v, want %+v", v, got, want[v])
		}
		if l := tk.Stats.Leaks(base); len(l) != 0 {
			t.Errorf("%s leaks %v", v, l)
		}
	}
}

// TestSeed001V2OutOfBounds: with a long encrypted name after short ones, v2
// hands the decryption a buffer of 16+64 bytes for a 208-byte ciphertext;
// the write past its end is reported as KASAN slab-out-of-bounds at the
// simulator boundary. base and v4 find nothing wrong.
func TestSeed001V2OutOfBounds(t *testing.T) {
	names := append(shortNames(5), strings.Repeat("L", 200))
	for _, v := range LookupPrealloc.VariantNames() {
		tk, dir := seedDir(t, v, names...)
		_, err := measureMiss(t, tk, dir, "absent")
		bug, isBug := kernel.AsBug(err)
		if v != "v2" {
			if err != nil {
				t.Fatalf("%s: %v", v, err)
			}
			continue
		}
		if !isBug || bug.Kind != "KASAN: slab-out-of-bounds" || bug.Size != 80 || bug.Offset != 208 {
			t.Fatalf("v2: got %v (%#v), want a KASAN slab-out-of-bounds report on an 80-byte buffer", err, bug)
		}
		if bug.Func != "vfs.GenericCIMatch" || tk.K.Bugs.Len() != 1 || !tk.K.Log.Contains("KASAN: slab-out-of-bounds in vfs.GenericCIMatch") {
			t.Fatalf("report %s; log %v", bug, tk.K.Log.Lines())
		}
		// Looking up an existing name stops before the long one: no report.
		if r, err := find(tk, dir, "F01"); err != nil || r == nil {
			t.Fatalf("v2 hit: %v %v", r, err)
		}
	}
}

// TestSeed001ErrorPathFreesPrealloc: when decrypting a dentry fails,
// generic_ci_match's unchanged error path kfrees the buffer, which with v2
// and v4 is the prealloc buffer that __f2fs_find_entry frees again: KASAN
// reports a double free. base just returns the error. The failure is a
// corrupt on-disk name: the dentry after "." and ".." claims 8 bytes,
// shorter than any ciphertext, which fscrypt_fname_disk_to_usr refuses
// with EUCLEAN.
func TestSeed001ErrorPathFreesPrealloc(t *testing.T) {
	for _, v := range LookupPrealloc.VariantNames() {
		tk, dir := seedDir(t, v, shortNames(5)...)
		d := MakeDentryPtrBlock(dir.findDataBlock(0))
		e := d.Entry(2)
		if e.NameLen != 16 {
			t.Fatalf("slot 2: %v", e)
		}
		e.NameLen = 8
		d.putEntry(2, e)
		_, err := measureMiss(t, tk, dir, "absent")
		bug, isBug := kernel.AsBug(err)
		switch v {
		case "base":
			if isBug || !IsCorrupt(err) {
				t.Fatalf("base: %v", err)
			}
		default:
			if !isBug || bug.Kind != "KASAN: double-free" {
				t.Fatalf("%s: %v", v, err)
			}
		}
	}
}

// TestHashedLookupBounded: a hashed lookup compares a bounded number of
// names whatever the directory size; the dentries it walks grow only with
// the depth.
func TestHashedLookupBounded(t *testing.T) {
	for _, n := range []int{1000, 10000, 40000} {
		tk, dir := newTestDir(t, dirOpts{casefold: true, noInline: true, mode: LookupPerf})
		for i := 0; i < n; i++ {
			mustAdd(t, tk, dir, fmt.Sprintf("file-%06d", i), uint32(100+i))
		}
		ev0 := tk.Ev.Clone()
		const probes = 500
		for i := 0; i < probes; i++ {
			if r, _ := find(tk, dir, fmt.Sprintf("FILE-%06d", i*(n/probes))); r == nil {
				t.Fatal("miss")
			}
		}
		d := tk.Ev.Sub(ev0)
		compared := float64(d.Get(EvNamesCompared)) / probes
		scanned := float64(d.Get(EvDirentsScanned)) / probes
		t.Logf("n=%d depth=%d: %.2f names compared, %.1f dentries walked per hit", n, dir.CurrentDepth, compared, scanned)
		if compared > 1.1 {
			t.Fatalf("n=%d: %.2f names compared per hashed hit", n, compared)
		}
		if limit := float64(dir.CurrentDepth) * 2 * NrDentryInBlock; scanned > limit {
			t.Fatalf("n=%d: walked %.1f dentries, more than %v", n, scanned, limit)
		}
	}
}
