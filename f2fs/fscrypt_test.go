package f2fs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// fscryptDir returns a casefolded directory encrypted by package fscrypt
// (policy v2, AES-256-XTS / AES-256-CTS, 32-byte name padding) whose key
// is set up; keylessCopy gives the same directory without the key.
func fscryptDir(t testing.TB, variant string) (*kernel.Task, *Inode) {
	t.Helper()
	return newTestDir(t, dirOpts{casefold: true, noInline: true, mode: LookupAuto, variant: variant, encrypt: true, pad: fscrypt.PolicyFlagsPad32})
}

// TestFscryptNames runs the lookup path on names encrypted by package
// fscrypt: casefolded lookups decrypt each candidate; readdir shows the
// plaintext with the key and no-key names without it, and those no-key
// names can be looked up and deleted.
func TestFscryptNames(t *testing.T) {
	tk, dir := fscryptDir(t, "base")
	names := []string{"Hello", "world.txt", strings.Repeat("é", 100)}
	for i := 0; i < 60; i++ {
		names = append(names, fmt.Sprintf("File-%d", i))
	}
	for i, n := range names {
		mustAdd(t, tk, dir, n, uint32(100+i))
	}
	mustCheck(t, tk, dir)
	for i, n := range names {
		qs := []string{n}
		if n[0] < 0x80 { // the test double folds ASCII only
			qs = append(qs, strings.ToUpper(n))
		}
		for _, q := range qs {
			if ino, err := InodeByName(tk, dir, []byte(q)); err != nil || ino != uint32(100+i) {
				t.Fatalf("lookup %q: %d %v", q, ino, err)
			}
		}
	}
	if len(listDir(t, tk, dir)) != len(names)+2 || !strings.Contains(strings.Join(listDir(t, tk, dir), " "), "world.txt:") {
		t.Fatal("readdir with the key")
	}
	// Without the key: no-key names, which look up to the same inodes.
	dir = keylessCopy(t, tk, dir)
	listed := listDir(t, tk, dir)
	if len(listed) != len(names)+2 || strings.Contains(strings.Join(listed, " "), "world.txt") {
		t.Fatalf("no-key readdir: %v", listed[:4])
	}
	for _, e := range listed[2:] {
		nk := e[:strings.Index(e, ":")]
		r, err := find(tk, dir, nk)
		if err != nil || r == nil || fmt.Sprintf("%s:%d:8", nk, r.Entry.Ino) != e {
			t.Fatalf("no-key lookup %q: %v %v", nk, r, err)
		}
	}
	r, _ := find(tk, dir, listed[5][:strings.Index(listed[5], ":")])
	if err := DeleteEntry(tk, dir, r); err != nil {
		t.Fatal(err)
	}
	if err := AddLink(tk, dir, []byte("new"), 5, SIfreg); err == nil {
		t.Fatal("create without the key succeeded")
	}
}

// TestFscryptSeed001 repeats seed 001's out-of-bounds case on names
// encrypted by package fscrypt: with 32-byte name padding, short names
// have 32 bytes of ciphertext, so v2's buffer is 32+64 = 96 bytes, and the
// 200-byte name's 224 bytes of ciphertext are decrypted into it.
func TestFscryptSeed001(t *testing.T) {
	for _, v := range LookupPreallocPatch.VariantNames() {
		tk, dir := fscryptDir(t, v)
		for i := 0; i < 5; i++ {
			mustAdd(t, tk, dir, fmt.Sprintf("f%d", i), uint32(100+i))
		}
		mustAdd(t, tk, dir, strings.Repeat("L", 200), 200)
		_, err := find(tk, dir, "absent")
		bug, isBug := kernel.AsBug(err)
		if (v == "v2") != isBug {
			t.Fatalf("%s: %v", v, err)
		}
		if isBug && (bug.Kind != "KASAN: slab-out-of-bounds" || bug.Size != 96 || bug.Offset != 224) {
			t.Fatalf("%s: %s", v, bug)
		}
	}
}

// BenchmarkSeed001Creates is seed 001's workload on the directory layer:
// 2000 creates ("0", "1", ...) in a casefolded directory encrypted by
// package fscrypt, each a VFS-style lookup (which misses and, with
// lookup_mode=auto, falls back to the linear search decrypting every
// dentry) followed by the add. One op is the whole run of 2000; it reports
// kmallocs and names decrypted per create. (File data is not written: the
// directory code is what the seed changes.)
func BenchmarkSeed001Creates(b *testing.B) {
	for _, v := range LookupPreallocPatch.VariantNames() {
		for _, mode := range []LookupMode{LookupAuto, LookupPerf} {
			b.Run(fmt.Sprintf("%s/lookup_mode=%s", v, mode), func(b *testing.B) {
				b.ReportAllocs()
				var kmallocs, decrypts uint64
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					tk, dir := fscryptDir(b, v)
					dir.SB.LookupMode = mode
					ev0 := tk.Ev.Clone()
					b.StartTimer()
					for j := 0; j < 2000; j++ {
						name := []byte(fmt.Sprint(j))
						r, err := FindEntry(tk, dir, name)
						if err != nil || r != nil {
							b.Fatal(r, err)
						}
						if err := AddLink(tk, dir, name, uint32(100+j), SIfreg|0o600); err != nil {
							b.Fatal(err)
						}
					}
					b.StopTimer()
					d := tk.Ev.Sub(ev0)
					kmallocs += d.Get(kmem.EvKmalloc)
					decrypts += d.Get(EvNameDecrypts)
				}
				b.ReportMetric(float64(kmallocs)/float64(b.N)/2000, "kmallocs/create")
				b.ReportMetric(float64(decrypts)/float64(b.N)/2000, "decrypts/create")
			})
		}
	}
}
