package f2fs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/vfs"
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
	for _, v := range LookupPreallocPatch.VariantNames() {
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
	for _, v := range LookupPreallocPatch.VariantNames() {
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
	for _, v := range LookupPreallocPatch.VariantNames() {
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

// injectedLookup runs one lookup of name in a fresh seed directory of
// variant (with encrypted false, a casefolded directory that is not
// encrypted, holding the same names) with the task's fail-nth set to nth
// (failslab's ignore-gfp-wait off, so that the GFP_KERNEL and GFP_NOFS
// allocations of the lookup are fault-injection points, as the fault
// campaign does). "absent" must not
// be found, any other name must be when the lookup succeeds. It returns
// whether the nth point was reached, the site that failed (from
// fail_dump's "Call Trace:" line), the objects the lookup left allocated,
// and the lookup's error.
func injectedLookup(t *testing.T, variant string, encrypted bool, name string, nth int) (hit bool, site string, live int64, err error) {
	t.Helper()
	var tk *kernel.Task
	var dir *Inode
	if encrypted {
		tk, dir = seedDir(t, variant, shortNames(5)...)
	} else {
		tk, dir = newTestDir(t, dirOpts{casefold: true, noInline: true, mode: LookupAuto, variant: variant})
		for i, n := range shortNames(5) {
			mustAdd(t, tk, dir, n, uint32(100+i))
		}
	}
	tk.K.Failslab.SetIgnoreGFPWait(false)
	before := tk.Stats.Clone()
	logged := len(tk.K.Log.Lines())
	if _, werr := tk.ProcFailNthWrite([]byte(fmt.Sprint(nth))); werr != nil {
		t.Fatal(werr)
	}
	r, err := find(tk, dir, name)
	hit = tk.ProcFailNthRead() == "0\n"
	tk.ProcFailNthWrite([]byte("0"))
	if (r != nil) != (name != "absent" && err == nil) {
		t.Fatalf("%s nth=%d: lookup of %q gave %v, %v", variant, nth, name, r, err)
	}
	for _, l := range tk.K.Log.Lines()[logged:] {
		if s, ok := strings.CutPrefix(l, "Call Trace: "); ok {
			site = s
		}
	}
	return hit, site, tk.Stats.Live() - before.Live(), err
}

// faultCodes abbreviate the allocation sites of a lookup in seed 001's
// directory and what a failure there made of the lookup.
var faultCodes = map[string]string{
	"fscrypt_setup_filename:crypto_buf":    "buf",
	"fscrypt_fname:skcipher_request":       "req",
	"f2fs_cf_name_slab":                    "cf",
	"f2fs/generic_ci_match:decrypted_name": "dn",
	"f2fs/decrypted_name_prealloc_resize":  "pre",
	"KASAN: double-free":                   "DOUBLE-FREE",
	"KASAN: slab-use-after-free":           "USE-AFTER-FREE",
	"cannot allocate memory":               "ENOMEM",
}

// faultSequence fails each fault-injection point of one lookup of name in
// turn (fail-nth 1, 2, ... until the lookup makes fewer) and returns
// "site:result" for each, in faultCodes' words; "+leak" marks a failure
// that left objects allocated.
func faultSequence(t *testing.T, variant, name string) string {
	t.Helper()
	return faultSequenceIn(t, variant, true, name)
}

// faultSequenceIn is faultSequence in an encrypted directory or not.
func faultSequenceIn(t *testing.T, variant string, encrypted bool, name string) string {
	t.Helper()
	var out []string
	for nth := 1; ; nth++ {
		if nth > 200 {
			t.Fatalf("%s: more than 200 fault-injection points in one lookup", variant)
		}
		hit, site, live, err := injectedLookup(t, variant, encrypted, name, nth)
		if !hit {
			if err != nil {
				t.Fatalf("%s %s: no injection at %d, yet %v", variant, name, nth, err)
			}
			return strings.Join(out, " ")
		}
		res := "ok"
		if b, ok := kernel.AsBug(err); ok {
			res = b.Kind
		} else if err != nil {
			res = err.Error()
		}
		code := func(s string) string {
			if c, ok := faultCodes[s]; ok {
				return c
			}
			if strings.HasSuffix(s, ":skcipher_request") {
				// fscrypt's request sites, one per function
				// (fscrypt_fname_encrypt, fname_decrypt) or one
				// for both (fscrypt_fname).
				return "req"
			}
			return s
		}
		o := code(site) + ":" + code(res)
		if live != 0 && res != "KASAN: double-free" && res != "KASAN: slab-use-after-free" {
			o += "+leak"
		}
		out = append(out, o)
	}
}

// TestSeed001FaultInjection fails, one at a time, every allocation a
// lookup makes in seed 001's directory (fail-nth through the task's
// fail_nth, failslab's ignore-gfp-wait off as the fault campaign has it),
// under each variant, on the kernel the seed ran (fscrypt-fname-onstack
// base: fname_decrypt kmallocs its request), and pins what each does.
//
// Read from the postings against 6.16's fs/libfs.c generic_ci_match and
// fs/f2fs/dir.c __f2fs_find_entry:
//   - base: every failure is ENOMEM out of a miss, and nothing is left
//     allocated; in a hit, a failure while comparing in the hashed pass
//     is retried by the linear fallback, which finds the name.
//   - v2 and v4: a failed kmalloc in decrypted_name_prealloc_resize
//     returns NULL before it touches the struct: ENOMEM (or, in a hit,
//     the fallback's retry), the old buffer freed once at the end. A
//     failure inside the decryption (fscrypt_fname_disk_to_usr, here
//     fname_decrypt's skcipher_request_alloc) takes generic_ci_match's
//     error path, which the posting left as it was:
//     kfree(decrypted_name.name), which is prealloc->name, while the
//     struct keeps the pointer. In a miss (the failure in the linear
//     pass) __f2fs_find_entry's new kfree(prealloc.name) frees it again:
//     a double free, in both variants (v4 fixed only the resize
//     condition). In a hit (the failure in the hashed pass) the fallback
//     retries with the freed buffer: v4 reuses it for the next, shorter
//     name (a use-after-free); v2's inverted check reallocates and
//     kfrees the freed buffer (a double free).
//   - The failures before the search (the crypto_buf, the encryption's
//     request, the casefolded name) are ENOMEM in every variant.
//
// v2 reallocates for every name shorter than its buffer, so it has as
// many injection points as base; v4 has one prealloc allocation per
// lookup.
func TestSeed001FaultInjection(t *testing.T) {
	const prefix = "buf:ENOMEM req:ENOMEM cf:ENOMEM "
	want := map[[2]string]string{
		{"base", "absent"}: prefix + "dn:ENOMEM dn:ENOMEM " + strings.Repeat("dn:ENOMEM req:ENOMEM ", 5),
		{"v2", "absent"}:   prefix + "pre:ENOMEM pre:ENOMEM " + strings.Repeat("pre:ENOMEM req:DOUBLE-FREE ", 5),
		{"v4", "absent"}:   prefix + "pre:ENOMEM " + strings.Repeat("req:DOUBLE-FREE ", 5),
		{"base", "F01"}:    prefix + "dn:ok req:ok",
		{"v2", "F01"}:      prefix + "pre:ok req:DOUBLE-FREE",
		{"v4", "F01"}:      prefix + "pre:ok req:USE-AFTER-FREE",
	}
	for _, v := range LookupPreallocPatch.VariantNames() {
		for _, name := range []string{"absent", "F01"} {
			got := faultSequence(t, v, name)
			w := strings.TrimSpace(want[[2]string{v, name}])
			if got != w {
				t.Errorf("%s, lookup of %s, each allocation failed in turn:\n got %s\nwant %s", v, name, got, w)
			}
			// Casefolded but not encrypted: generic_ci_match decrypts
			// nothing, so the casefolded name is the lookup's only
			// allocation, under every variant.
			if got := faultSequenceIn(t, v, false, name); got != "cf:ENOMEM" {
				t.Errorf("%s, lookup of %s in an unencrypted casefolded directory: %s", v, name, got)
			}
		}
	}
}

// TestLinearRetryAfterHashedError: when the hashed pass fails (here the
// decryption buffer of the name's own dentry, at level 1), the linear
// retry of 6.16's __f2fs_find_entry searches level 0 only, since
// *res_folio still holds the error and ends the level loop; the lookup
// then fails with that error although the name exists.
func TestLinearRetryAfterHashedError(t *testing.T) {
	tk, dir := seedDir(t, "base")
	var names []string
	for i := 0; i < 300; i++ {
		names = append(names, fmt.Sprintf("n%03d", i))
		mustAdd(t, tk, dir, names[i], uint32(100+i))
	}
	if dir.CurrentDepth < 2 {
		t.Fatalf("depth %d", dir.CurrentDepth)
	}
	// A name stored at level 1 (level 0 is blocks 0 and 1).
	var deep string
	for _, n := range names {
		r, err := find(tk, dir, n)
		if err != nil || r == nil {
			t.Fatalf("%s: %v %v", n, r, err)
		}
		if r.Page >= 2 {
			deep = n
			break
		}
	}
	if deep == "" {
		t.Fatal("no name at level 1")
	}
	tk.K.Failslab.SetIgnoreGFPWait(false)
	for nth := 1; ; nth++ {
		logged := len(tk.K.Log.Lines())
		tk.ProcFailNthWrite([]byte(fmt.Sprint(nth)))
		ev0 := tk.Ev.Clone()
		r, err := find(tk, dir, strings.ToUpper(deep))
		hit := tk.ProcFailNthRead() == "0\n"
		tk.ProcFailNthWrite([]byte("0"))
		if !hit {
			t.Fatalf("no failure in the compare of %s", deep)
		}
		site := ""
		for _, l := range tk.K.Log.Lines()[logged:] {
			site, _ = strings.CutPrefix(l, "Call Trace: ")
		}
		if site != "f2fs/generic_ci_match:decrypted_name" {
			continue // before the search
		}
		d := tk.Ev.Sub(ev0)
		if r != nil || err != errno.ENOMEM {
			t.Fatalf("lookup of %s with its compare failed: %v %v", deep, r, err)
		}
		if d.Get(EvLinearFallback) != 1 || d.Get(EvNamesCompared) > 260 {
			t.Fatalf("retry compared %d names (fallbacks %d): more than level 0 holds", d.Get(EvNamesCompared), d.Get(EvLinearFallback))
		}
		return
	}
}

// TestLookupModeDefault: a mount that does not name lookup_mode= gets
// perf, as default_options sets it since 632f0b6c3e32, and the modes keep
// the kernel's enum order (LOOKUP_PERF, LOOKUP_COMPAT, LOOKUP_AUTO) and
// spellings; the option string the model renders names the mode, as
// f2fs_show_options does.
func TestLookupModeDefault(t *testing.T) {
	tk := newTestTask(t, "base")
	sys, _, err := vfs.BootNew(tk, vfs.Config{}, Type, vfs.Features{Encrypt: true, Casefold: true}, "")
	if err != nil {
		t.Fatal(err)
	}
	sbi := F2FS_SB(sys.RootMount().SB)
	if sbi.LookupMode != LookupPerf || sbi.Options().LookupMode != LookupPerf {
		t.Fatalf("default lookup_mode %s", sbi.LookupMode)
	}
	if got := sbi.Options().MountData(); got != "lookup_mode=perf" {
		t.Fatalf("options rendered as %q", got)
	}
	for i, s := range []string{"perf", "compat", "auto"} {
		if m, err := ParseLookupMode(s); err != nil || m != LookupMode(i) || m.String() != s {
			t.Fatalf("%s: %d %v", s, m, err)
		}
	}
	if s := LookupMode(7).String(); s != "LookupMode(7)" {
		t.Fatalf("unknown mode prints %q", s)
	}
	if shouldFallbackToLinear(&Inode{SB: &SuperBlock{LookupMode: 7}}) {
		t.Fatal("an unknown mode falls back")
	}
}
