package crypto

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/crypto/aes"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// vaesExhaustive runs the differential test of the x86 XTS drivers over
// every length from 16 bytes to 64 KiB and every buffer alignment, instead
// of the default suite's sample:
//
//	go test -run XTSDriversMatchAESNI ./crypto/ -vaes.exhaustive
var vaesExhaustive = flag.Bool("vaes.exhaustive", false, "x86 XTS drivers: every length 16..65536 and every alignment 0..63")

// kernelXTSPriority is cra_priority of the x86 XTS drivers in
// arch/x86/crypto/aesni-intel_glue.c (Linux 6.15+).
var kernelXTSPriority = map[string]int{
	"xts-aes-aesni":       401,
	"xts-aes-aesni-avx":   500,
	"xts-aes-vaes-avx2":   600,
	"xts-aes-vaes-avx512": 800,
}

// xtsDriverNames returns the x86 XTS drivers this CPU has, in priority
// order.
func xtsDriverNames() []string {
	var out []string
	for _, im := range aes.XTSImpls {
		if im != aes.XTSGeneric && im.Available() {
			out = append(out, im.String())
		}
	}
	return out
}

// TestXTSDriversRegistered: every x86 XTS driver the CPU supports is
// registered under xts(aes) with the kernel's priority, any can be pinned
// by its driver name (the others are ENOENT), and xts(aes) selects the one
// of highest priority.
func TestXTSDriversRegistered(t *testing.T) {
	if !aes.Accelerated() {
		t.Skip("no AES-NI: no x86 XTS driver is registered")
	}
	api := NewAPI()
	tk := newTask()
	best, bestPrio := "", 0
	for _, im := range aes.XTSImpls[1:] {
		name := im.String()
		tfm, err := api.AllocSyncSkcipher(tk, name, 0, 0)
		if !im.Available() {
			if err != errno.ENOENT {
				t.Errorf("%s is not available on this CPU, yet AllocSyncSkcipher gave %v", name, err)
			}
			if err == nil {
				tfm.Free(tk)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if tfm.DriverName() != name || tfm.AlgName() != "xts(aes)" || tfm.Alg().Priority() != kernelXTSPriority[name] {
			t.Errorf("pinned %s: got %v", name, tfm.Alg())
		}
		if tfm.xtsNI == nil || tfm.xtsNI.Impl() != im {
			t.Errorf("%s runs the wrong implementation", name)
		}
		if p := kernelXTSPriority[name]; p > bestPrio {
			best, bestPrio = name, p
		}
		tfm.Free(tk)
	}
	tfm, err := api.AllocSyncSkcipher(tk, "xts(aes)", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if tfm.DriverName() != best {
		t.Errorf("xts(aes) selects %s, want the highest priority %s", tfm.DriverName(), best)
	}
	tfm.Free(tk)
	if !aes.XTSVAESAVX512.Available() {
		t.Logf("this CPU lacks VAES-AVX512: only %v are tested", xtsDriverNames())
	}
}

// TestXTSDriversKAT runs the IEEE 1619 vectors through the API on every
// x86 XTS driver, pinned by name.
func TestXTSDriversKAT(t *testing.T) {
	api := NewAPI()
	for _, name := range xtsDriverNames() {
		tk := newTask()
		tfm, err := api.AllocSkcipher(tk, name, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range ieee1619Vectors {
			if err := tfm.SetKey(tk, unhex(t, v.key)); err != nil {
				t.Fatal(err)
			}
			var iv [16]byte
			binary.LittleEndian.PutUint64(iv[:], v.seq)
			buf := unhex(t, v.pt)
			if err := cryptOnce(t, tk, tfm, buf, iv[:], true); err != nil {
				t.Fatalf("%s %s: %v", name, v.name, err)
			}
			if got := fmt.Sprintf("%x", buf); got != v.ct {
				t.Errorf("%s %s: ct %s, want %s", name, v.name, got, v.ct)
			}
			// xts_crypt leaves the next tweak in req->iv: decrypt with
			// the IV again.
			binary.LittleEndian.PutUint64(iv[:], v.seq)
			clear(iv[8:])
			if err := cryptOnce(t, tk, tfm, buf, iv[:], false); err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%x", buf); got != v.pt {
				t.Errorf("%s %s: decrypt %s, want %s", name, v.name, got, v.pt)
			}
		}
		tfm.Free(tk)
	}
}

// xtsDiffCase is one request of the differential test: length n, src at
// offset sa and dst at offset da of their buffers (da < 0: in place).
type xtsDiffCase struct {
	n, sa, da int
	enc       bool
}

// xtsDiffCases is the differential test's sample, or with
// -vaes.exhaustive every length 16..65536 (with the alignments cycling)
// and every alignment 0..63 at the lengths around the vector widths.
func xtsDiffCases() []xtsDiffCase {
	var out []xtsDiffCase
	add := func(n, sa, da int) {
		out = append(out, xtsDiffCase{n, sa, da, true}, xtsDiffCase{n, sa, da, false})
	}
	if *vaesExhaustive {
		for n := 16; n <= 65536; n++ {
			add(n, n%64, (n/64)%64)
			add(n, (n/7)%64, -1)
		}
		for _, n := range []int{16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 257, 271, 4096, 4111} {
			for a := 0; a < 64; a++ {
				add(n, a, 63-a)
				add(n, a, -1)
			}
		}
		return out
	}
	// Every length up to 600 bytes (the vector, four-vector and stealing
	// boundaries of all widths), then fscrypt's sizes and a few large ones.
	r := rand.New(rand.NewPCG(12, 1))
	for n := 16; n <= 600; n++ {
		add(n, r.IntN(64), r.IntN(64))
		add(n, r.IntN(64), -1)
	}
	for _, n := range []int{1023, 1024, 1025, 4095, 4096, 4097, 4111, 8192, 16384 + 5, 65535, 65536} {
		add(n, r.IntN(64), r.IntN(64))
		add(n, 0, -1)
	}
	return out
}

// TestXTSDriversMatchAESNI is the differential test: every x86 XTS driver
// gives xts-aes-aesni's result (ciphertext stealing included) for the cases
// of xtsDiffCases, in place and out of place, leaving the IV and the bytes
// around dst alone, for every key size.
func TestXTSDriversMatchAESNI(t *testing.T) {
	names := xtsDriverNames()
	if len(names) < 2 {
		t.Skip("no x86 XTS driver beyond xts-aes-aesni on this CPU")
	}
	api := NewAPI()
	cases := xtsDiffCases()
	const pad = 64
	srcBuf := make([]byte, 65536+2*pad)
	refBuf := make([]byte, len(srcBuf))
	gotBuf := make([]byte, len(srcBuf))
	for i := range srcBuf {
		srcBuf[i] = byte(i*131 + i>>9)
	}
	for _, klen := range []int{32, 48, 64} {
		key := make([]byte, klen)
		for i := range key {
			key[i] = byte(i*29 + klen)
		}
		ref := keyedWith(t, api, "xts-aes-aesni", key)
		for _, name := range names[1:] {
			tfm := keyedWith(t, api, name, key)
			tk := newTask()
			for i, c := range cases {
				var iv [16]byte
				binary.LittleEndian.PutUint64(iv[:], uint64(i)*0x9e3779b97f4a7c15)
				run := func(tfm *SyncSkcipher, out []byte) ([]byte, [16]byte) {
					copy(out, srcBuf)
					src := out[c.sa : c.sa+c.n]
					dst := src
					if c.da >= 0 {
						copy(out, srcBuf)
						dst = out[pad+c.da : pad+c.da+c.n]
						src = srcBuf[c.sa : c.sa+c.n]
					}
					ivc := iv
					if err := onStackXTS(tk, tfm, dst, src, ivc[:], c.enc); err != nil {
						t.Fatalf("%s key %d case %+v: %v", tfm.DriverName(), klen, c, err)
					}
					return out, ivc
				}
				want, wantIV := run(ref, refBuf)
				got, gotIV := run(tfm, gotBuf)
				if !bytes.Equal(want, got) {
					t.Fatalf("%s key %d case %+v: differs from xts-aes-aesni", name, klen, c)
				}
				// Every driver leaves the same next tweak in req->iv.
				if wantIV != gotIV || wantIV == iv {
					t.Fatalf("%s case %+v: IV left %x, xts-aes-aesni %x (IV %x)", name, c, gotIV, wantIV, iv)
				}
			}
			tfm.Free(tk)
		}
		ref.Free(newTask())
	}
}

// keyedWith allocates driver and sets key.
func keyedWith(t testing.TB, api *API, driver string, key []byte) *SyncSkcipher {
	t.Helper()
	tk := newTask()
	tfm, err := api.AllocSyncSkcipher(tk, driver, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := tfm.SetKey(tk, key); err != nil {
		t.Fatal(err)
	}
	return tfm
}

// onStackXTS runs one out-of-place (or, with dst == src, in-place)
// request on the stack, as fscrypt does per data unit.
func onStackXTS(tk *kernel.Task, tfm *SyncSkcipher, dst, src, iv []byte, enc bool) error {
	var ssg, dsg [1]Scatterlist
	SgInitOne(&ssg[0], src)
	SgInitOne(&dsg[0], dst)
	var req SyncSkcipherRequestOnStack
	req.Init(tk, tfm)
	req.SetCallback(0, nil, nil)
	req.SetCrypt(ssg[:], dsg[:], len(src), iv)
	var err error
	if enc {
		err = req.Encrypt(tk)
	} else {
		err = req.Decrypt(tk)
	}
	copy(iv, req.IV())
	return err
}

// TestXTSDriversBio: a whole-bio request (CRYPTO_SKCIPHER_REQ_BIO, seed
// 003) gives the same data, IV and counters on every x86 XTS driver, since
// they all go through the one glue path, for 512-byte and 4 KiB data
// units over folios of several sizes: the tweak-chained bytes of the
// posted glue (xtsTweakChainRef), bug included.
func TestXTSDriversBio(t *testing.T) {
	names := xtsDriverNames()
	if len(names) < 2 {
		t.Skip("no x86 XTS driver beyond xts-aes-aesni on this CPU")
	}
	api := NewAPI()
	type result struct {
		data []byte
		iv   []byte
		ev   string
	}
	runBio := func(name string, duBits uint, enc bool) result {
		tfm := keyed(t, api, name)
		defer tfm.Free(newTask())
		tk := newTask()
		bio := block.NewBio(3)
		for i, order := range []uint{0, 2, 1} {
			f := block.NewFolio(uint64(10+i), order)
			for j := range f.Data {
				f.Data[j] = byte(j*7 + i)
			}
			bio.AddFolio(f, len(f.Data)-block.PageSize*int(order&1), block.PageSize*int(order&1))
		}
		iv := make([]byte, 16)
		binary.LittleEndian.PutUint64(iv, 77)
		var req SkcipherBioRequestOnStack
		req.Init(tk, &tfm.Skcipher)
		req.SetCallback(CRYPTO_SKCIPHER_REQ_BIO, nil, nil)
		req.SetBio(bio, duBits, iv)
		var err error
		if enc {
			err = req.Encrypt(tk)
		} else {
			err = req.Decrypt(tk)
		}
		if err != nil {
			t.Fatalf("%s du %d: %v", name, 1<<duBits, err)
		}
		return result{bioBytes(bio), bytes.Clone(req.IV()), tk.Ev.String()}
	}
	// The folios' bytes before the request, in bio order, for the
	// tweak-chained reference of the posted glue.
	orig := func() []byte {
		var out []byte
		for i, order := range []uint{0, 2, 1} {
			f := block.NewFolio(uint64(10+i), order)
			for j := range f.Data {
				f.Data[j] = byte(j*7 + i)
			}
			off := block.PageSize * int(order&1)
			out = append(out, f.Data[off:]...)
		}
		return out
	}()
	key := make([]byte, 64)
	for i := range key {
		key[i] = byte(i * 3)
	}
	for _, duBits := range []uint{9, 12} {
		for _, enc := range []bool{true, false} {
			want := runBio(names[0], duBits, enc)
			var iv0 [16]byte
			binary.LittleEndian.PutUint64(iv0[:], 77)
			ref, refIV := xtsTweakChainRef(t, key, orig, 1<<duBits, iv0, !enc)
			if !bytes.Equal(want.data, ref) || !bytes.Equal(want.iv, refIV[:]) {
				t.Errorf("%s du %d enc %v: bio request differs from the tweak-chained reference", names[0], 1<<duBits, enc)
			}
			for _, name := range names[1:] {
				got := runBio(name, duBits, enc)
				if !bytes.Equal(got.data, want.data) || !bytes.Equal(got.iv, want.iv) || got.ev != want.ev {
					t.Errorf("%s du %d enc %v: bio request differs from %s (iv %x vs %x, events %s vs %s)",
						name, 1<<duBits, enc, names[0], got.iv, want.iv, got.ev, want.ev)
				}
			}
		}
	}
}
