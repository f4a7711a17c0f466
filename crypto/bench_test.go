package crypto

import (
	stdaes "crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/crypto/adiantum"
	"github.com/vfslab/vfslab/crypto/aes"
	"github.com/vfslab/vfslab/crypto/hctr2"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"golang.org/x/crypto/xts"
)

// Benchmarks. XTS of 4 KiB data units through the API (a synchronous tfm
// and an on-stack request, what fscrypt's contents path does per data unit)
// against golang.org/x/crypto/xts and Go's AES-CTR (the reference ceiling)
// in the same run; the package crypto/aes XTS driver called directly shows
// what the model's per-request overhead costs on top of the cipher work.
//
//	go test -run '^$' -bench . -benchtime 2000x ./crypto/

const duSize = 4096

func benchKey(n int) []byte {
	k := make([]byte, n)
	for i := range k {
		k[i] = byte(i*7 + 1)
	}
	return k
}

// benchTask is a task without counters, as a benchmark op runs.
func benchTask() *kernel.Task { return kernel.New().NewTask("bench") }

func benchTfm(b *testing.B, api *API, name string) (*kernel.Task, *SyncSkcipher) {
	tk := benchTask()
	tfm, err := api.AllocSyncSkcipher(tk, name, 0, 0)
	if err != nil {
		b.Fatal(err)
	}
	if err := tfm.SetKey(tk, benchKey(tfm.MaxKeySize())); err != nil {
		b.Fatal(err)
	}
	return tk, tfm
}

// onStackCrypt encrypts or decrypts buf in place with an on-stack request
// and a little-endian sector IV, as fscrypt_crypt_data_unit does.
func onStackOp(tk *kernel.Task, tfm *SyncSkcipher, buf []byte, lblk uint64, enc bool) error {
	var iv [32]byte
	binary.LittleEndian.PutUint64(iv[:], lblk)
	var sg [1]Scatterlist
	SgInitOne(&sg[0], buf)
	var req SyncSkcipherRequestOnStack
	req.Init(tk, tfm)
	req.SetCallback(CRYPTO_TFM_REQ_MAY_BACKLOG|CRYPTO_TFM_REQ_MAY_SLEEP, nil, nil)
	req.SetCrypt(sg[:], sg[:], len(buf), iv[:tfm.IVSize()])
	if enc {
		return req.Encrypt(tk)
	}
	return req.Decrypt(tk)
}

// heapOp is onStackOp with skcipher_request_alloc/free and a wait object,
// what fscrypt did before Linux 6.17.
func heapOp(tk *kernel.Task, tfm *Skcipher, buf []byte, lblk uint64, enc bool) error {
	req, err := SkcipherRequestAlloc(tk, tfm, kmem.GFPNoFS)
	if err != nil {
		return err
	}
	iv := make([]byte, 32)
	binary.LittleEndian.PutUint64(iv, lblk)
	var sg [1]Scatterlist
	SgInitOne(&sg[0], buf)
	var wait CryptoWait
	req.SetCallback(CRYPTO_TFM_REQ_MAY_BACKLOG|CRYPTO_TFM_REQ_MAY_SLEEP, CryptoReqDone, &wait)
	req.SetCrypt(sg[:], sg[:], len(buf), iv[:tfm.IVSize()])
	if enc {
		err = req.Encrypt(tk)
	} else {
		err = req.Decrypt(tk)
	}
	err = CryptoWaitReq(tk, err, &wait)
	req.Free(tk)
	return err
}

func BenchmarkXTS4K(b *testing.B) {
	buf := make([]byte, duSize)
	for _, dir := range []struct {
		name string
		enc  bool
	}{{"encrypt", true}, {"decrypt", false}} {
		b.Run("api-onstack/"+dir.name, func(b *testing.B) {
			tk, tfm := benchTfm(b, NewAPI(), "xts(aes)")
			b.SetBytes(duSize)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := onStackOp(tk, tfm, buf, uint64(i), dir.enc); err != nil {
					b.Fatal(err)
				}
			}
		})
		// One sub-benchmark per x86 XTS driver, pinned by name through
		// the API as api-onstack runs the selected one.
		for _, drv := range xtsDriverNames() {
			b.Run(drv+"/"+dir.name, func(b *testing.B) {
				tk, tfm := benchTfm(b, NewAPI(), drv)
				b.SetBytes(duSize)
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if err := onStackOp(tk, tfm, buf, uint64(i), dir.enc); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run("api-heap/"+dir.name, func(b *testing.B) {
			tk, tfm := benchTfm(b, NewAPI(), "xts(aes)")
			b.SetBytes(duSize)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := heapOp(tk, &tfm.Skcipher, buf, uint64(i), dir.enc); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("api-generic-template/"+dir.name, func(b *testing.B) {
			tk, tfm := benchTfm(b, NewAPIOptions(Options{NoArchDrivers: true}), "xts(aes)")
			b.SetBytes(duSize)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := onStackOp(tk, tfm, buf, uint64(i), dir.enc); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("crypto-aes-direct/"+dir.name, func(b *testing.B) {
			var x aes.XTS
			if err := x.SetKey(benchKey(64)); err != nil {
				b.Fatal(err)
			}
			if err := x.SetImpl(aes.BestXTSImpl()); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(duSize)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				var iv [16]byte
				binary.LittleEndian.PutUint64(iv[:], uint64(i))
				var err error
				if dir.enc {
					err = x.Encrypt(buf, buf, &iv)
				} else {
					err = x.Decrypt(buf, buf, &iv)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("x-crypto-xts/"+dir.name, func(b *testing.B) {
			c, err := xts.NewCipher(stdaes.NewCipher, benchKey(64))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(duSize)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if dir.enc {
					c.Encrypt(buf, buf, uint64(i))
				} else {
					c.Decrypt(buf, buf, uint64(i))
				}
			}
		})
	}
	b.Run("go-aes-ctr", func(b *testing.B) {
		blk, _ := stdaes.NewCipher(benchKey(32))
		ctr := cipher.NewCTR(blk, make([]byte, 16))
		b.SetBytes(duSize)
		b.ReportAllocs()
		for b.Loop() {
			ctr.XORKeyStream(buf, buf)
		}
	})
}

// BenchmarkCTS16 is the per-request overhead of the model: a 16-byte
// cts(cbc(aes)) request (one AES block, a short filename) on the stack, on
// the heap, the same request through package crypto/aes directly, and the
// raw AES block operation it needs (one aes_encrypt of IV ^ name).
func BenchmarkCTS16(b *testing.B) { benchCTS(b, 16, true) }

// BenchmarkCTS32 is BenchmarkCTS16 for a 32-byte name: two CBC blocks with
// the last two swapped, two raw AES block operations.
func BenchmarkCTS32(b *testing.B) { benchCTS(b, 32, false) }

func benchCTS(b *testing.B, n int, heap bool) {
	buf := make([]byte, n)
	b.Run("api-onstack", func(b *testing.B) {
		tk, tfm := benchTfm(b, NewAPI(), "cts(cbc(aes))")
		b.ReportAllocs()
		for b.Loop() {
			if err := onStackOp(tk, tfm, buf, 0, true); err != nil {
				b.Fatal(err)
			}
		}
	})
	if heap {
		b.Run("api-heap", func(b *testing.B) {
			tk, tfm := benchTfm(b, NewAPI(), "cts(cbc(aes))")
			b.ReportAllocs()
			for b.Loop() {
				if err := heapOp(tk, &tfm.Skcipher, buf, 0, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("crypto-aes-direct", func(b *testing.B) {
		var c aes.CTSCBC
		c.SetKey(benchKey(32))
		b.ReportAllocs()
		for b.Loop() {
			var iv [16]byte
			if err := c.Encrypt(buf, buf, &iv); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The block operations alone: CBC over the n/16 blocks (the XOR with
	// the chaining value and aes_encrypt per block), no stealing, no
	// request.
	b.Run("aes-blocks", func(b *testing.B) {
		var c aes.Ctx
		if err := aes.ExpandKey(&c, benchKey(32)); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			var chain [16]byte
			for i := 0; i < n; i += 16 {
				subtleXor16(&chain, &chain, (*[16]byte)(buf[i:i+16]))
				c.Encrypt(chain[:], chain[:])
				copy(buf[i:i+16], chain[:])
			}
		}
	})
}

// BenchmarkFnameWide is the filename path of the wide-block modes fscrypt
// offers (FSCRYPT_MODE_ADIANTUM, FSCRYPT_MODE_AES_256_HCTR2) for 16- and
// 32-byte names: through the API with an on-stack request, and the same
// cipher called directly (packages crypto/adiantum and crypto/hctr2,
// whose BenchmarkFilenamePrimitives split it further).
func BenchmarkFnameWide(b *testing.B) {
	for _, m := range []struct{ name, alg string }{
		{"adiantum", "adiantum(xchacha12,aes)"},
		{"hctr2", "hctr2(aes)"},
	} {
		for _, n := range []int{16, 32} {
			buf := make([]byte, n)
			b.Run(fmt.Sprintf("%s/%d/api-onstack", m.name, n), func(b *testing.B) {
				tk, tfm := benchTfm(b, NewAPI(), m.alg)
				b.ReportAllocs()
				for b.Loop() {
					if err := onStackOp(tk, tfm, buf, 0, true); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("%s/%d/direct", m.name, n), func(b *testing.B) {
				ad, _ := adiantum.New(benchKey(32))
				hc, _ := hctr2.New(benchKey(32))
				b.ReportAllocs()
				for b.Loop() {
					var tweak [32]byte
					var err error
					if m.name == "adiantum" {
						err = ad.Encrypt(buf, buf, tweak[:])
					} else {
						err = hc.Encrypt(buf, buf, tweak[:])
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkBio256K decrypts a 256 KiB bio of 4 KiB folios the four ways of
// seed 003: one whole-bio request, one on-stack request per data unit
// (the inline and workqueue variants' crypto work), one allocated request
// per data unit, and the data units' allocated requests chained and
// submitted as one.
func BenchmarkBio256K(b *testing.B) {
	const folios = 64
	bio := block.NewBio(folios)
	for i := 0; i < folios; i++ {
		bio.AddFolio(block.NewFolio(uint64(i), 0), block.PageSize, 0)
	}
	b.Run("bio-request", func(b *testing.B) {
		tk, tfm := benchTfm(b, NewAPI(), "xts(aes)")
		b.SetBytes(folios * block.PageSize)
		b.ReportAllocs()
		for b.Loop() {
			var iv [32]byte
			var req SkcipherBioRequestOnStack
			req.Init(tk, &tfm.Skcipher)
			req.SetCallback(CRYPTO_TFM_REQ_MAY_BACKLOG|CRYPTO_SKCIPHER_REQ_BIO, nil, nil)
			req.SetBio(bio, 12, iv[:16])
			if err := req.Decrypt(tk); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("per-unit-onstack", func(b *testing.B) {
		tk, tfm := benchTfm(b, NewAPI(), "xts(aes)")
		b.SetBytes(folios * block.PageSize)
		b.ReportAllocs()
		for b.Loop() {
			for fi := range block.BioForEachFolioAll(bio) {
				if err := onStackOp(tk, tfm, fi.Folio.Data[fi.Offset:fi.Offset+fi.Length], fi.Folio.Index, false); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("per-unit-heap", func(b *testing.B) {
		tk, tfm := benchTfm(b, NewAPI(), "xts(aes)")
		b.SetBytes(folios * block.PageSize)
		b.ReportAllocs()
		for b.Loop() {
			for fi := range block.BioForEachFolioAll(bio) {
				if err := heapOp(tk, &tfm.Skcipher, fi.Folio.Data[fi.Offset:fi.Offset+fi.Length], fi.Folio.Index, false); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("chain", func(b *testing.B) {
		tk, tfm := benchTfm(b, NewAPI(), "xts(aes)")
		b.SetBytes(folios * block.PageSize)
		b.ReportAllocs()
		reqs := make([]*SkcipherRequest, 0, folios)
		sgs := make([]Scatterlist, folios)
		ivs := make([]byte, folios*16)
		for b.Loop() {
			reqs = reqs[:0]
			for i, v := range bio.Vecs {
				req, err := SkcipherRequestAlloc(tk, &tfm.Skcipher, kmem.GFPNoFS)
				if err != nil {
					b.Fatal(err)
				}
				SgInitOne(&sgs[i], v.Folio.Data[v.Offset:v.Offset+v.Len])
				iv := ivs[16*i : 16*i+16]
				binary.LittleEndian.PutUint64(iv, v.Folio.Index)
				req.SetCrypt(sgs[i:i+1], sgs[i:i+1], v.Len, iv)
				if i > 0 {
					SkcipherRequestChain(req, reqs[0])
				}
				reqs = append(reqs, req)
			}
			if err := reqs[0].Decrypt(tk); err != nil {
				b.Fatal(err)
			}
			for _, r := range reqs {
				r.Free(tk)
			}
		}
	})
}
