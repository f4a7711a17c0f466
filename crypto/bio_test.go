package crypto

import (
	"bytes"
	stdaes "crypto/aes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// xtsTweakChainRef is an independent reference (the standard library's
// AES) for what seed 003's x86 xts_crypt does with a whole-bio request as
// posted: data is the bio's data units in order, each du bytes; unit 0 is
// processed with the tweak T0 = E(K2, iv); after each unit the tweak left
// behind (T·x^(du/16)) gets 1 added to its low 64 bits (le64) and is
// encrypted with K2 again to make the next unit's tweak. It returns the
// processed data and what is left in the IV.
func xtsTweakChainRef(t *testing.T, key, data []byte, du int, iv [16]byte, decrypt bool) ([]byte, [16]byte) {
	t.Helper()
	k1, err := stdaes.NewCipher(key[:len(key)/2])
	if err != nil {
		t.Fatal(err)
	}
	k2, _ := stdaes.NewCipher(key[len(key)/2:])
	out := bytes.Clone(data)
	for u := 0; u+du <= len(out); u += du {
		k2.Encrypt(iv[:], iv[:])
		for b := u; b < u+du; b += 16 {
			blk := out[b : b+16]
			for i := range blk {
				blk[i] ^= iv[i]
			}
			if decrypt {
				k1.Decrypt(blk, blk)
			} else {
				k1.Encrypt(blk, blk)
			}
			for i := range blk {
				blk[i] ^= iv[i]
			}
			// multiply the tweak by x (little-endian GF(2^128))
			lo, hi := binary.LittleEndian.Uint64(iv[0:]), binary.LittleEndian.Uint64(iv[8:])
			carry := hi >> 63
			hi = hi<<1 | lo>>63
			lo = lo<<1 ^ carry*0x87
			binary.LittleEndian.PutUint64(iv[0:], lo)
			binary.LittleEndian.PutUint64(iv[8:], hi)
		}
		binary.LittleEndian.PutUint64(iv[:], binary.LittleEndian.Uint64(iv[:])+1)
	}
	return out, iv
}

// TestBioRequest is seed 003's whole-bio request as posted, with heap and
// on-stack requests, for every mode and with and without the x86 drivers:
//
//   - the x86 XTS glue (every xts(aes) driver of aesni-intel_glue.c) walks
//     the bio, but adds one to the tweak rather than to the IV, so the bio
//     decrypts to the tweak-chained reference: the first data unit is
//     right and every later one is wrong (data-mismatch from the second
//     unit), and the IV ends as the reference's, not as IV + units;
//   - every other driver never learned the flag and fails with EINVAL
//     (cryptlen = du_bits < 16), leaving the bio as it was; ESSIV has
//     encrypted the IV in place by then.
func TestBioRequest(t *testing.T) {
	for apiName, api := range apis() {
		for _, m := range modeSpecs {
			tfm := keyed(t, api, m.name)
			glue := tfm.kind == kindXTSNI
			tk := newTask()
			for _, duBits := range []uint{9, 12} {
				bio, plain := testBio(t, &tfm.Skcipher, duBits, 1000)
				ct := bioBytes(bio)
				du := 1 << duBits
				iv := make([]byte, 32)
				binary.LittleEndian.PutUint64(iv, 1000)
				iv0 := bytes.Clone(iv)
				var err error
				if duBits == 9 {
					var req SyncSkcipherRequestOnStack
					req.Init(tk, tfm)
					req.SetCallback(CRYPTO_SKCIPHER_REQ_BIO, nil, nil)
					req.SetBio(bio, duBits, iv[:max(m.ivLen, 8)])
					err = req.Decrypt(tk)
					copy(iv, req.IV())
				} else {
					req, _ := SkcipherRequestAlloc(tk, &tfm.Skcipher, kmem.GFPNoFS)
					req.SetCallback(CRYPTO_SKCIPHER_REQ_BIO, nil, nil)
					req.SetBio(bio, duBits, iv[:max(m.ivLen, 8)])
					err = req.Decrypt(tk)
					req.Free(tk)
				}
				name := fmt.Sprintf("%s %s du %d", apiName, tfm.DriverName(), du)
				got := bioBytes(bio)
				if !glue {
					if err != errno.EINVAL {
						t.Errorf("%s: %v, want EINVAL (the driver never learned CRYPTO_SKCIPHER_REQ_BIO)", name, err)
					}
					if !bytes.Equal(got, ct) {
						t.Errorf("%s: a failed bio request changed the bio", name)
					}
					ivChanged := !bytes.Equal(iv[:16], iv0[:16])
					if ivChanged != strings.HasPrefix(m.name, "essiv") {
						t.Errorf("%s: IV changed %t (only essiv_skcipher_crypt encrypts it before the inner request fails)", name, ivChanged)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				key := make([]byte, 64)
				for i := range key {
					key[i] = byte(i * 3)
				}
				want, wantIV := xtsTweakChainRef(t, key, ct, du, [16]byte(iv0[:16]), true)
				if !bytes.Equal(got, want) {
					t.Errorf("%s: bio request differs from the tweak-chained reference", name)
				}
				if !bytes.Equal(got[:du], plain[:du]) {
					t.Errorf("%s: first data unit decrypted wrong", name)
				}
				for u := du; u < len(got); u += du {
					if bytes.Equal(got[u:u+du], plain[u:u+du]) {
						t.Errorf("%s: data unit %d decrypted right; as posted every unit after the first is wrong", name, u/du)
					}
				}
				if !bytes.Equal(iv[:16], wantIV[:]) {
					t.Errorf("%s: IV after the bio %x, want the reference's %x", name, iv[:16], wantIV)
				}
				if binary.LittleEndian.Uint64(iv) == 1000+uint64(len(got)/du) {
					t.Errorf("%s: IV after the bio is IV + units: the increment landed on the IV", name)
				}
			}
			units := uint64(0)
			if glue {
				units = 3*4096/512 + 3*4096/4096
			}
			if tk.Ev.Get(EvBioRequest) != 2 || tk.Ev.Get(EvBioDataUnits) != units {
				t.Errorf("%s bio events: %s", tfm.DriverName(), tk.Ev)
			}
			tfm.Free(tk)
		}
	}
}

// bioCrypt runs one whole-bio request on the stack and turns a BUG raised
// on the way into the error (as the simulator's boundary does).
func bioCrypt(tk *kernel.Task, tfm *SyncSkcipher, bio *block.Bio, duBits uint, iv []byte) (err error) {
	defer tk.Recover(&err)
	var req SyncSkcipherRequestOnStack
	req.Init(tk, tfm)
	req.SetCallback(CRYPTO_SKCIPHER_REQ_BIO, nil, nil)
	req.SetBio(bio, duBits, iv)
	return req.Decrypt(tk)
}

// TestBioErrors: what the posted glue does with malformed bio requests.
func TestBioErrors(t *testing.T) {
	tfm := keyed(t, NewAPI(), "xts(aes)")
	if tfm.kind != kindXTSNI {
		t.Skip("no x86 XTS driver on this CPU")
	}
	tk := newTask()
	good := func() *block.Bio {
		b := block.NewBio(1)
		b.AddFolio(block.NewFolio(0, 0), block.PageSize, 0)
		return b
	}
	// A NULL bio is dereferenced; a 2 MiB unit runs past its folio.
	for _, c := range []struct {
		name   string
		bio    *block.Bio
		duBits uint
		kind   string
	}{
		{"nil bio", nil, 12, "BUG: kernel NULL pointer dereference"},
		{"unit of 2 MiB", good(), 21, "BUG"},
	} {
		err := bioCrypt(tk, tfm, c.bio, c.duBits, make([]byte, 16))
		if b, ok := kernel.AsBug(err); !ok || b.Kind != c.kind || b.Func != "xts_crypt" {
			t.Errorf("%s: %v, want %s in xts_crypt", c.name, err, c.kind)
		}
	}
	// Units shorter than a block fail in xts_crypt_one; an IV shorter than
	// the ivsize is the model's EINVAL.
	if err := bioCrypt(tk, tfm, good(), 3, make([]byte, 16)); err != errno.EINVAL {
		t.Errorf("unit of 8 bytes: %v, want EINVAL", err)
	}
	if err := bioCrypt(tk, tfm, good(), 12, make([]byte, 8)); err != errno.EINVAL {
		t.Errorf("IV shorter than ivsize: %v, want EINVAL", err)
	}
	// A vector of 1000 bytes with 512-byte units: the loop checks only
	// where a unit starts, so the second unit takes 24 bytes past the
	// vector, and nothing fails.
	odd := block.NewBio(1)
	f := block.NewFolio(0, 0)
	odd.AddFolio(f, 1000, 0)
	before := bytes.Clone(f.Data)
	ev := tk.Ev.Get(EvBioDataUnits)
	if err := bioCrypt(tk, tfm, odd, 9, make([]byte, 16)); err != nil {
		t.Errorf("vector not a whole number of units: %v, want success as posted", err)
	}
	if n := tk.Ev.Get(EvBioDataUnits) - ev; n != 2 {
		t.Errorf("units processed %d, want 2", n)
	}
	if bytes.Equal(f.Data[1000:1024], before[1000:1024]) || !bytes.Equal(f.Data[1024:], before[1024:]) {
		t.Error("the second unit should cover bytes 512..1024 of the folio, 24 past the vector, and no more")
	}
	if tk.K.Bugs.Len() != 2 {
		t.Errorf("bug log: %v", tk.K.Bugs.All())
	}
}

// TestChainDecryptsBio: the chain variant (one request per data unit,
// chained and submitted as one) decrypts every data unit of the bio.
func TestChainDecryptsBio(t *testing.T) {
	tfm := keyed(t, NewAPI(), "xts(aes)")
	tk := newTask()
	bio, plain := testBio(t, &tfm.Skcipher, 12, 42)
	var reqs []*SkcipherRequest
	lblk := uint64(42)
	for _, v := range bio.Vecs {
		for off := v.Offset; off < v.Offset+v.Len; off += 4096 {
			req, err := SkcipherRequestAlloc(tk, &tfm.Skcipher, kmem.GFPNoFS)
			if err != nil {
				t.Fatal(err)
			}
			sg := make([]Scatterlist, 1)
			SgInitOne(&sg[0], v.Folio.Data[off:off+4096])
			iv := make([]byte, 16)
			binary.LittleEndian.PutUint64(iv, lblk)
			lblk++
			req.SetCrypt(sg, sg, 4096, iv)
			if len(reqs) > 0 {
				SkcipherRequestChain(req, reqs[0])
			}
			reqs = append(reqs, req)
		}
	}
	if err := reqs[0].Decrypt(tk); err != nil {
		t.Fatal(err)
	}
	n := 0
	for r := reqs[0]; r != nil; r = r.ChainNext() {
		if r.Err() != nil {
			t.Error(r.Err())
		}
		n++
	}
	if n != len(reqs) || tk.Ev.Get(EvChainRequest) != uint64(len(reqs)-1) {
		t.Errorf("chain of %d processed %d (events %s)", len(reqs), n, tk.Ev)
	}
	if !bytes.Equal(bioBytes(bio), plain) {
		t.Error("chain did not decrypt the bio")
	}
	for _, r := range reqs {
		r.Free(tk)
	}
}
