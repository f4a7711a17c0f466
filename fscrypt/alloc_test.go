package fscrypt_test

import (
	"testing"

	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/patch"
)

// TestFnameAllocations pins the requests each variant allocates per
// filename, at the sites named after the kernel functions
// (skcipher_request_alloc is inline): base kmallocs one request of
// sizeof(struct skcipher_request) + reqsize bytes in fscrypt_fname_encrypt
// and one in fname_decrypt, and frees both; v2, as posted, still kmallocs
// the encryption request and never frees it (one live object more per
// encryption) while its decryption is on the stack; upstream makes no
// allocation at all, not even a Go one.
func TestFnameAllocations(t *testing.T) {
	encSite, ok1 := kmem.LookupSite("fscrypt_fname_encrypt:skcipher_request")
	decSite, ok2 := kmem.LookupSite("fname_decrypt:skcipher_request")
	if !ok1 || !ok2 {
		t.Fatal("no request sites")
	}
	for _, variant := range fscrypt.FnameOnstackPatch.VariantNames() {
		task := kernel.NewWith(kernel.Config{Patches: patch.Set{}.MustWith(fscrypt.FnameOnstackPatch, variant)}).NewTask("allocs")
		task.Stats = new(kmem.Stats)
		dir := setupDir(t, task,
			fscrypt.Policy{Version: 2, ContentsMode: 1, FilenamesMode: 4}, bare.PlaintextStream("allocs", 64), make([]byte, 16), 2)
		name := []byte("some-file-name.txt")
		ct := make([]byte, 32)
		buf := make([]byte, 256)
		enc0, dec0 := task.Stats.Site(encSite), task.Stats.Site(decSite)
		const runs = 100
		goAllocs := testing.AllocsPerRun(runs, func() {
			if err := fscrypt.FnameEncrypt(task, dir, name, ct); err != nil {
				t.Fatal(err)
			}
			if _, err := fscrypt.FnameDiskToUsr(task, dir, 0, 0, ct, buf); err != nil {
				t.Fatal(err)
			}
		})
		enc1, dec1 := task.Stats.Site(encSite), task.Stats.Site(decSite)
		const names = runs + 1 // AllocsPerRun makes one warm-up run
		encAllocs, encFrees := enc1.Allocs-enc0.Allocs, enc1.Frees-enc0.Frees
		decAllocs, decFrees := dec1.Allocs-dec0.Allocs, dec1.Frees-dec0.Frees
		reqBytes := uint64(80 + reqsizeOf(t, dir))
		type counts struct{ encAllocs, encFrees, decAllocs, decFrees uint64 }
		got := counts{encAllocs, encFrees, decAllocs, decFrees}
		var want counts
		switch variant {
		case "base":
			want = counts{names, names, names, names}
		case "v2":
			want = counts{names, 0, 0, 0}
		case "upstream":
			want = counts{}
		default:
			t.Fatalf("variant %q not covered", variant)
		}
		if got != want {
			t.Errorf("%s: request kmallocs/kfrees per %d names: encrypt %d/%d, decrypt %d/%d; want %d/%d, %d/%d",
				variant, names, got.encAllocs, got.encFrees, got.decAllocs, got.decFrees,
				want.encAllocs, want.encFrees, want.decAllocs, want.decFrees)
		}
		if sz := enc1.Bytes - enc0.Bytes; sz != encAllocs*reqBytes {
			t.Errorf("%s: %d encryption request bytes for %d requests of %d", variant, sz, encAllocs, reqBytes)
		}
		if live := int64(enc1.Live() - enc0.Live()); variant == "v2" && live != names {
			t.Errorf("v2: %d requests live after %d encryptions, want %d (leaked)", live, names, names)
		}
		if variant == "upstream" && goAllocs != 0 {
			t.Errorf("upstream: %.1f Go allocations per encrypt+decrypt; want 0", goAllocs)
		}
		if variant == "v2" {
			// Its decryption is really on the stack.
			dec := testing.AllocsPerRun(runs, func() {
				if _, err := fscrypt.FnameDiskToUsr(task, dir, 0, 0, ct, buf); err != nil {
					t.Fatal(err)
				}
			})
			if dec != 0 {
				t.Errorf("v2: %.1f Go allocations per decryption; want 0", dec)
			}
		}
		task.Exit()
	}
}

// reqsizeOf returns crypto_skcipher_reqsize of dir's tfm, from its dump.
func reqsizeOf(t *testing.T, dir *bare.Inode) int {
	t.Helper()
	return fscrypt.TfmReqsizeForTest(dir.CryptInfo())
}

// TestV1KDFAllocations: the library variant allocates nothing; base
// allocates a tfm, a request and the derived-key buffer per derivation.
func TestV1KDFAllocations(t *testing.T) {
	master := bare.PlaintextStream("kdf", 64)
	var nonce [16]byte
	out := make([]byte, 64)
	for _, tc := range []struct {
		variant string
		kmalloc uint64
	}{{"base", 3}, {"sync", 2}, {"aeslib", 0}} {
		task := kernel.NewWith(kernel.Config{Patches: patch.Set{}.MustWith(fscrypt.V1KDFPatch, tc.variant)}).NewTask("allocs")
		task.Stats = new(kmem.Stats)
		sb := bare.NewSB(newAPI())
		if err := fscrypt.DeriveV1Key(task, sb, master, nonce, out); err != nil {
			t.Fatal(err)
		}
		before := task.Stats.Totals()
		goAllocs := testing.AllocsPerRun(50, func() {
			if err := fscrypt.DeriveV1Key(task, sb, master, nonce, out); err != nil {
				t.Fatal(err)
			}
		})
		after := task.Stats.Totals()
		per := (after.Allocs - before.Allocs) / 51
		if per != tc.kmalloc || after.Allocs-before.Allocs != after.Frees-before.Frees {
			t.Errorf("%s: %d kernel allocations per key (%d allocs, %d frees), want %d", tc.variant, per,
				after.Allocs-before.Allocs, after.Frees-before.Frees, tc.kmalloc)
		}
		if tc.variant == "aeslib" && goAllocs != 0 {
			t.Errorf("aeslib: %.1f Go allocations per key", goAllocs)
		}
		task.Exit()
	}
}

// TestKeySetupEvents: one key setup of a v2 file derives one key and
// allocates one tfm; a DIRECT_KEY file after the first derives nothing and
// shares the per-mode tfm.
func TestKeySetupEvents(t *testing.T) {
	task := newTask(t)
	sb := newSB(t)
	id, _ := addKey(t, task, sb, 2, bare.PlaintextStream("events", 64))
	count := func(p fscrypt.Policy, ino uint64) (derive, tfms, setups uint64) {
		d0, a0, s0 := task.Ev.Get(fscrypt.EvKeyDerive), task.Ev.Get(fscrypt.EvAllocateSkcipher), task.Ev.Get(fscrypt.EvKeySetupInode)
		encryptedInode(t, task, sb, p, []byte("0123456789abcdef"), ino, fscrypt.SIFREG|0o644, 12)
		return task.Ev.Get(fscrypt.EvKeyDerive) - d0, task.Ev.Get(fscrypt.EvAllocateSkcipher) - a0, task.Ev.Get(fscrypt.EvKeySetupInode) - s0
	}
	perFile := v2Policy(id, 0)
	direct := fscrypt.Policy{Version: 2, ContentsMode: 9, FilenamesMode: 9, Flags: fscrypt.PolicyFlagDirectKey, Identifier: id}
	for _, tc := range []struct {
		p                    fscrypt.Policy
		derive, tfms, setups uint64
	}{{perFile, 1, 1, 1}, {perFile, 1, 1, 1}, {direct, 1, 1, 1}, {direct, 0, 0, 1}} {
		d, a, s := count(tc.p, 100)
		if d != tc.derive || a != tc.tfms || s != tc.setups {
			t.Errorf("%s: %d derivations, %d tfms, %d setups; want %d %d %d", tc.p.String(), d, a, s, tc.derive, tc.tfms, tc.setups)
		}
	}
}
