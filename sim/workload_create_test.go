package sim

import (
	"testing"

	"github.com/vfslab/vfslab/crypto"
	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/vfs"
)

// TestCreateWorkload runs the seeds' program with 60 files per run under
// each f2fs-lookup-prealloc variant, mounted lookup_mode=auto as the seeds'
// kernels behaved (seedCreateParams). Every create misses a hashed lookup in
// a casefolded directory and falls back to the linear search, which
// decrypts the j names already there: 60*59/2 decryptions in all, plus "."
// and ".." per lookup, plus the run's mkdir (a miss among "." and "..")
// and chdir (a hashed hit: one). base kmallocs a buffer per decryption,
// v2's inverted check reallocates for every name as short as these, v4
// keeps one buffer per lookup.
func TestCreateWorkload(t *testing.T) {
	const n = 60
	g := byVariant(quick(t, "create", map[string]string{"n": "60", "mount": "lookup_mode=auto"}, 1))
	decrypts := float64(n*(n-1)/2 + 2*n + 2 + 1)
	for _, v := range f2fs.LookupPreallocPatch.VariantNames() {
		m := g[v]
		if m.Errors != 0 || len(m.Bugs) != 0 {
			t.Fatalf("%s: %d errors (%s), bugs %v", v, m.Errors, m.FirstError, m.Bugs)
		}
		if got := m.Events[f2fs.EvLinearFallback.Name()]; got != n+1 {
			t.Errorf("%s: %v linear fallbacks per run, want %d (one per create, and the mkdir)", v, got, n+1)
		}
		if got := m.Events[f2fs.EvNameDecrypts.Name()]; got != decrypts {
			t.Errorf("%s: %v names decrypted per run, want %v", v, got, decrypts)
		}
	}
	base, v2, v4 := g["base"].Kmallocs, g["v2"].Kmallocs, g["v4"].Kmallocs
	// n+2 lookups decrypt: the creates, the mkdir and the chdir.
	if v2 != base || base-v4 != decrypts-float64(n+2) {
		t.Errorf("kmallocs per run: base %v v2 %v v4 %v; v4 should save one per decryption but one per lookup", base, v2, v4)
	}
	// Under upstream's default, lookup_mode=perf, a create's miss never
	// falls back: nothing is decrypted to compare, and the variants
	// allocate alike.
	perf := byVariant(quick(t, "create", map[string]string{"n": "60"}, 1))
	for _, v := range f2fs.LookupPreallocPatch.VariantNames() {
		m := perf[v]
		if m.Events[f2fs.EvLinearFallback.Name()] != 0 || m.Events[f2fs.EvNameDecrypts.Name()] > 2 || m.Kmallocs != perf["base"].Kmallocs {
			t.Errorf("%s under lookup_mode=perf: %v fallbacks, %v decrypts, %v kmallocs (base %v)", v,
				m.Events[f2fs.EvLinearFallback.Name()], m.Events[f2fs.EvNameDecrypts.Name()], m.Kmallocs, perf["base"].Kmallocs)
		}
	}
}

// TestCreateWorkloadFnameOnstack: the same program compared over seed
// 000's variants, on ext4 and f2fs; base allocates a request per name
// encryption and decryption, and frees it; v2 (which changes fname.c only)
// one per data unit written, freed, and, as posted, one per name
// encryption, never freed (its decryptions are on the stack); upstream
// none.
func TestCreateWorkloadFnameOnstack(t *testing.T) {
	for _, fs := range []string{"ext4", "f2fs"} {
		t.Run(fs, func(t *testing.T) { testCreateFnameOnstack(t, fs) })
	}
}

func testCreateFnameOnstack(t *testing.T, fs string) {
	w, err := Lookup("create")
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]string{"n": "40", "fs": fs}
	if fs == "f2fs" {
		// The seeds' kernels fell back to the linear search after a
		// create's hashed miss (lookup_mode=auto; f2fs's default, perf,
		// never does), decrypting every name already there.
		params["mount"] = "lookup_mode=auto"
	}
	rep, err := Run(Config{Workload: w, Patch: fscrypt.FnameOnstackPatch, Ops: 1, CountOps: 1, Count: 1, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	g := byVariant(rep.Groups[0])
	reqs := g["base"].Events[crypto.EvReqAlloc.Name()]
	if reqs < 40*39/2 {
		t.Errorf("base: %v request allocations per run", reqs)
	}
	encrypts := g["v2"].Events["fscrypt_fname_encrypt"]
	if encrypts < 2*40 || encrypts != g["base"].Events["fscrypt_fname_encrypt"] {
		t.Fatalf("v2: %v filename encryptions per run, base %v", encrypts, g["base"].Events["fscrypt_fname_encrypt"])
	}
	for v, want := range map[string]float64{"v2": 40 + encrypts, "upstream": 0} {
		got := g[v].Events[crypto.EvReqAlloc.Name()]
		if g[v].Errors != 0 || got != want {
			t.Errorf("%s: errors %d (%s), %v request allocations, want %v", v, g[v].Errors, g[v].FirstError, got, want)
		}
		if g[v].Kmallocs != g["base"].Kmallocs-(reqs-got) {
			t.Errorf("%s: %v kmallocs, base %v with %v requests", v, g[v].Kmallocs, g["base"].Kmallocs, reqs)
		}
	}
	// The leak: v2 frees every request but the encryptions'.
	live := func(v string) float64 { return g[v].Events["kmalloc"] - g[v].Events["kfree"] }
	if d := live("v2") - live("base"); d != encrypts {
		t.Errorf("v2 leaves %v more kmalloc'd objects than base per run, want %v (one per encryption)", d, encrypts)
	}
	if d := live("upstream") - live("base"); d != 0 {
		t.Errorf("upstream leaves %v more kmalloc'd objects than base per run, want 0", d)
	}
}

// TestLookupWorkload: a hashed hit compares about one name whatever the
// directory size; a miss with the linear fallback compares every name,
// and under base allocates a buffer for each, under v4 one per lookup.
func TestLookupWorkload(t *testing.T) {
	hit := byVariant(quick(t, "lookup", map[string]string{"entries": "300", "mode": "hit"}, 20))
	miss := byVariant(quick(t, "lookup", map[string]string{"entries": "300", "mode": "miss"}, 20))
	for _, v := range f2fs.LookupPreallocPatch.VariantNames() {
		if hit[v].Errors != 0 || miss[v].Errors != 0 {
			t.Fatalf("%s: %s %s", v, hit[v].FirstError, miss[v].FirstError)
		}
		if c := hit[v].Events[f2fs.EvNamesCompared.Name()]; c < 1 || c > 1.5 {
			t.Errorf("%s hit: %v names compared", v, c)
		}
		if c := miss[v].Events[f2fs.EvNamesCompared.Name()]; c != 302 {
			t.Errorf("%s miss: %v names compared, want 302", v, c)
		}
	}
	if k := miss["base"].Kmallocs - miss["v4"].Kmallocs; k < 300 {
		t.Errorf("miss: base %v kmallocs, v4 %v", miss["base"].Kmallocs, miss["v4"].Kmallocs)
	}
}

// TestCreateReset: between timed runs the runner's Reset removes every
// directory the create operations made (the workers' processes still in
// their last one), giving their blocks back to the device, and the next
// operations work as before, on both filesystems. Another workload's
// instance has no Reset.
func TestCreateReset(t *testing.T) {
	w, err := Lookup("create")
	if err != nil {
		t.Fatal(err)
	}
	for _, fst := range vfs.Filesystems() {
		if !fst.RequiresDev {
			continue
		}
		fs := fst.Name
		params, err := w.resolveParams(map[string]string{"n": "30", "fs": fs})
		if err != nil {
			t.Fatal(err)
		}
		s, err := setup(Config{}, w, params, patch.Set{}, 2, false)
		if err != nil {
			t.Fatal(err)
		}
		in := s.inst.(*createInst)
		t0, p := in.ds.setup, in.ds.p
		inUse := func() int {
			d, err := p.LookupDentry(t0, workDir, true)
			if err != nil {
				t.Fatal(err)
			}
			defer dcache.Dput(t0, d)
			return vfs.DentrySB(d).Bdev().InUse()
		}
		before := inUse()
		for run := 0; run < 3; run++ {
			if _, err := s.timed(2, 2*run); err != nil {
				t.Fatalf("%s run %d: %v", fs, run, err)
			}
			if got := len(in.made[0]) + len(in.made[1]); got != 4 {
				t.Fatalf("%s run %d: %d directories made, want 4", fs, run, got)
			}
			if grown := inUse() - before; grown < 4*30 {
				t.Fatalf("%s run %d: %d blocks in use after the run, %d before", fs, run, inUse(), before)
			}
			if err := s.reset(); err != nil {
				t.Fatalf("%s run %d: reset: %v", fs, run, err)
			}
			// A worker's process is still in its last directory, which
			// keeps it (and on ext4 its one block) until the next chdir.
			if got := inUse(); got > before+2 {
				t.Fatalf("%s run %d: %d blocks in use after reset, %d before the runs", fs, run, got, before)
			}
			fd, err := p.Open(t0, workDir, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 4096)
			n, err := p.Getdents64(t0, fd, buf)
			p.Close(t0, fd)
			if err != nil {
				t.Fatal(err)
			}
			ds, err := vfs.ParseDirents(buf[:n])
			if err != nil {
				t.Fatal(err)
			}
			if len(ds) != 2 {
				t.Fatalf("%s run %d: %s lists %v after reset", fs, run, workDir, ds)
			}
		}
		s.close()
	}
	lw, err := Lookup("lookup")
	if err != nil {
		t.Fatal(err)
	}
	params, err := lw.resolveParams(map[string]string{"entries": "10"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := setup(Config{}, lw, params, patch.Set{}, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if _, ok := s.inst.(Resetter); ok {
		t.Fatal("lookup instance has a Reset")
	}
	if err := s.reset(); err != nil {
		t.Fatal(err)
	}
}
