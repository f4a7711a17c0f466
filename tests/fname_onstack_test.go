package tests

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/crypto"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/patch"
)

// TestFnameOnstackThroughVFS is issue 9's seed 000 expectation through
// the VFS: creates, stats and a getdents in an encrypted casefolded
// directory on f2fs and ext4, with an asynchronous hardware engine whose
// reqsize (256) fits seed 000's 384 bytes registered before the
// directory's key is set up again. base uses the engine and is clean; v2
// leaks one request per filename encryption and hands the engine its
// on-stack decryption requests, which the DMA-API debug check reports
// once; upstream never uses the engine and is clean.
func TestFnameOnstackThroughVFS(t *testing.T) {
	site, ok := kmem.LookupSite("fscrypt_fname_encrypt:skcipher_request")
	if !ok {
		t.Fatal("no encryption request site")
	}
	const files = 6
	for _, fs := range []fsKind{kF2fs, kExt4} {
		for _, v := range fscrypt.FnameOnstackPatch.VariantNames() {
			t.Run(fmt.Sprintf("%s/%s", fs, v), func(t *testing.T) {
				s := mustBoot(t, config{fs: fs, casefold: true, encrypt: true,
					patches: patch.Set{}.MustWith(fscrypt.FnameOnstackPatch, v)})
				e, err := s.sys.Crypto.RegisterEngine(s.t, crypto.EngineConfig{Name: "qce", ReqSize: 256})
				if err != nil {
					t.Fatal(err)
				}
				defer e.Stop()
				// Evict /d's key so that its next set-up picks the
				// engine (base and v2 allocate their tfms with mask 0).
				s.sys.DropCaches(s.t, 3)
				live0 := s.t.Stats.Site(site).Live()
				encrypts0 := s.t.Ev.Get(fscrypt.EvFnameEncrypt)
				for i := 0; i < files; i++ {
					if err := s.creat(fmt.Sprintf("%s/file-%d", testDir, i), []byte("data")); err != nil {
						t.Fatal(err)
					}
				}
				ds, err := s.listDir(testDir)
				if err != nil || len(ds) != files {
					t.Fatalf("getdents: %d entries, %v", len(ds), err)
				}
				encrypts := int64(s.t.Ev.Get(fscrypt.EvFnameEncrypt) - encrypts0)
				leaked := s.t.Stats.Site(site).Live() - live0
				dma := 0
				for _, w := range s.k.Warnings.All() {
					if strings.HasPrefix(w.Msg, "DMA-API: qce qce.0: device driver maps memory from stack") {
						dma++
					}
				}
				used := e.Stats().Completed > 0
				switch v {
				case "base":
					if leaked != 0 || dma != 0 || !used {
						t.Errorf("base: %d requests leaked, %d DMA-API warnings, engine used %t; want 0, 0, true", leaked, dma, used)
					}
				case "v2":
					if encrypts < files || leaked != encrypts || dma != 1 || e.DMADebugErrors() == 0 {
						t.Errorf("v2: %d requests leaked for %d encryptions, %d DMA-API warnings (error_count %d); want a leak per encryption and one warning",
							leaked, encrypts, dma, e.DMADebugErrors())
					}
				case "upstream":
					if leaked != 0 || dma != 0 || used {
						t.Errorf("upstream: %d requests leaked, %d DMA-API warnings, engine used %t; want 0, 0, false", leaked, dma, used)
					}
				default:
					t.Fatalf("variant %q not covered", v)
				}
				if s.k.Bugs.Len() != 0 {
					t.Errorf("BUGs: %v", s.k.Bugs.All())
				}
			})
		}
	}
}
