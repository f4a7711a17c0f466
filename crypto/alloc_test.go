package crypto

import (
	"testing"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kmem"
)

// keyed allocates a keyed synchronous tfm of name (fatal on error).
func keyed(t testing.TB, api *API, name string) *SyncSkcipher {
	t.Helper()
	tk := newTask()
	tfm, err := api.AllocSyncSkcipher(tk, name, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, tfm.MaxKeySize())
	for i := range key {
		key[i] = byte(i * 3)
	}
	if err := tfm.SetKey(tk, key); err != nil {
		t.Fatal(err)
	}
	return tfm
}

// TestOnStackZeroAllocs is the allocation requirement: a request on
// the stack, with its IV and scatterlists on the stack, makes no Go
// allocation and no kmalloc, for every algorithm, through one entry or a
// block split across entries, and for a whole-bio request.
func TestOnStackZeroAllocs(t *testing.T) {
	for apiName, api := range apis() {
		for _, m := range modeSpecs {
			tfm := keyed(t, api, m.name)
			tk := newTask()
			n := 48
			data := make([]byte, n)
			before := tk.Stats.Clone()

			sync := testing.AllocsPerRun(200, func() {
				var iv [32]byte
				var sg [1]Scatterlist
				SgInitOne(&sg[0], data)
				var req SyncSkcipherRequestOnStack
				req.Init(tk, tfm)
				req.SetCallback(0, nil, nil)
				req.SetCrypt(sg[:], sg[:], n, iv[:m.ivLen])
				if err := req.Encrypt(tk); err != nil {
					t.Fatal(err)
				}
				if err := req.Decrypt(tk); err != nil {
					t.Fatal(err)
				}
			})
			split := testing.AllocsPerRun(200, func() {
				var iv [32]byte
				var sg [3]Scatterlist
				SgInitTable(sg[:])
				SgSetBuf(&sg[0], data[:7])
				SgSetBuf(&sg[1], data[7:33])
				SgSetBuf(&sg[2], data[33:])
				var wait CryptoWait
				var req SkcipherRequestOnStack384
				req.Init(tk, &tfm.Skcipher)
				req.SetCallback(CRYPTO_TFM_REQ_MAY_BACKLOG|CRYPTO_TFM_REQ_MAY_SLEEP, CryptoReqDone, &wait)
				req.SetCrypt(sg[:], sg[:], n, iv[:m.ivLen])
				if err := CryptoWaitReq(tk, req.Encrypt(tk), &wait); err != nil {
					t.Fatal(err)
				}
			})
			if sync != 0 || split != 0 {
				t.Errorf("%s %s: on-stack requests allocate: %v (one entry), %v (split)", apiName, tfm.DriverName(), sync, split)
			}
			if l := tk.Stats.Leaks(before); len(l) != 0 || tk.Stats.Totals().Allocs != 0 {
				t.Errorf("%s %s: on-stack requests used kmalloc: %s", apiName, tfm.DriverName(), tk.Stats)
			}
			if got := tk.Ev.Get(EvReqOnStack); got < 400 {
				t.Errorf("on-stack requests counted %d", got)
			}
			tfm.Free(tk)
		}
	}
	// A whole-bio request on the stack.
	tfm := keyed(t, NewAPI(), "xts(aes)")
	tk := newTask()
	bio := block.NewBio(4)
	for i := 0; i < 4; i++ {
		bio.AddFolio(block.NewFolio(uint64(i), 0), block.PageSize, 0)
	}
	allocs := testing.AllocsPerRun(50, func() {
		var iv [32]byte
		var req SkcipherBioRequestOnStack
		req.Init(tk, &tfm.Skcipher)
		req.SetCallback(CRYPTO_TFM_REQ_MAY_BACKLOG|CRYPTO_SKCIPHER_REQ_BIO, nil, nil)
		req.SetBio(bio, 12, iv[:])
		if err := req.Decrypt(tk); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("on-stack bio request: %v allocations", allocs)
	}
}

// TestAllocatedRequestKmalloc: skcipher_request_alloc is exactly one kmalloc
// of sizeof(struct skcipher_request) + reqsize, freed by
// skcipher_request_free.
func TestAllocatedRequestKmalloc(t *testing.T) {
	for apiName, api := range apis() {
		for _, m := range modeSpecs {
			tfm := keyed(t, api, m.name)
			tk := newTask()
			data := make([]byte, 64)
			const rounds = 10
			for i := 0; i < rounds; i++ {
				req, err := SkcipherRequestAlloc(tk, &tfm.Skcipher, kmem.GFPNoFS)
				if err != nil {
					t.Fatal(err)
				}
				if req.Size() != SizeofSkcipherRequest+tfm.ReqSize() {
					t.Errorf("request size %d", req.Size())
				}
				var sg [1]Scatterlist
				SgInitOne(&sg[0], data)
				iv := make([]byte, 32)
				var wait CryptoWait
				req.SetCallback(CRYPTO_TFM_REQ_MAY_BACKLOG|CRYPTO_TFM_REQ_MAY_SLEEP, CryptoReqDone, &wait)
				req.SetCrypt(sg[:], sg[:], len(data), iv[:m.ivLen])
				if err := CryptoWaitReq(tk, req.Encrypt(tk), &wait); err != nil {
					t.Fatal(err)
				}
				req.Free(tk)
			}
			s := tk.Stats.Site(SiteRequest)
			want := uint64(rounds * (SizeofSkcipherRequest + tfm.ReqSize()))
			if s.Allocs != rounds || s.Frees != rounds || s.Bytes != want || s.FreedBytes != want {
				t.Errorf("%s %s: site stats %+v, want %d allocs of %d bytes", apiName, tfm.DriverName(), s, rounds, SizeofSkcipherRequest+tfm.ReqSize())
			}
			if tot := tk.Stats.Totals(); tot.Allocs != rounds {
				t.Errorf("%s %s: %d kmallocs in all, want %d", apiName, tfm.DriverName(), tot.Allocs, rounds)
			}
			if tk.Ev.Get(EvReqAlloc) != rounds || tk.Ev.Get(EvReqFree) != rounds {
				t.Errorf("events: %s", tk.Ev)
			}
			tfm.Free(tk)
		}
	}
}

// TestRequestAllocFault: failslab on the request site gives ENOMEM and
// leaks nothing; per-caller sites are accounted where the caller says.
func TestRequestAllocFault(t *testing.T) {
	tfm := keyed(t, NewAPI(), "cts(cbc(aes))")
	tk := newTask()
	base := tk.Stats.Clone()
	tk.Fail = kmem.FailSites("skcipher_request_alloc")
	req, err := SkcipherRequestAlloc(tk, &tfm.Skcipher, kmem.GFPNoFS)
	if err != errno.ENOMEM || req != nil {
		t.Fatalf("injected failure: %v %v", req, err)
	}
	if l := tk.Stats.Leaks(base); len(l) != 0 {
		t.Errorf("leak: %v", l)
	}
	if tk.Stats.Site(SiteRequest).Fails != 1 {
		t.Errorf("failure not accounted: %s", tk.Stats)
	}
	tk.Fail = nil
	site := kmem.NewSite("crypto_test:request")
	req, err = SkcipherRequestAllocAt(tk, site, &tfm.Skcipher, kmem.GFPNoFS)
	if err != nil {
		t.Fatal(err)
	}
	req.Free(tk)
	req.Free(tk) // a second free of the same request is a no-op
	if s := tk.Stats.Site(site); s.Allocs != 1 || s.Frees != 1 {
		t.Errorf("caller site: %+v", s)
	}
}

// TestTfmAllocFault: failing each allocation of a template tfm (the tfm and
// its children) in turn gives ENOMEM with nothing leaked and no reference
// held; past the last one the allocation succeeds.
func TestTfmAllocFault(t *testing.T) {
	for apiName, api := range apis() {
		for _, m := range modeSpecs {
			tk := newTask()
			tfm, err := api.AllocSkcipher(tk, m.name, 0, 0) // instantiate first
			if err != nil {
				t.Fatal(err)
			}
			tfm.Free(tk)
			alg := tfm.Alg()
			for n := uint64(1); ; n++ {
				base := tk.Stats.Clone()
				tk.Fail = kmem.FailNth(n)
				tfm, err := api.AllocSkcipher(tk, m.name, 0, 0)
				tk.Fail = nil
				if err == nil {
					tfm.Free(tk)
					if n == 1 {
						t.Errorf("%s %s: no allocation to fail", apiName, m.name)
					}
					break
				}
				if err != errno.ENOMEM {
					t.Fatalf("%s %s nth %d: %v", apiName, m.name, n, err)
				}
				if l := tk.Stats.Leaks(base); len(l) != 0 {
					t.Errorf("%s %s nth %d: leak %v", apiName, m.name, n, l)
				}
				if alg.Refcnt() != 0 {
					t.Errorf("%s %s nth %d: refcnt %d", apiName, m.name, n, alg.Refcnt())
				}
				if n > 10 {
					t.Fatal("too many allocations")
				}
			}
		}
	}
}
