package crypto

import (
	"bytes"
	stdaes "crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/vfslab/vfslab/crypto/aes"
	"github.com/vfslab/vfslab/kernel"
)

// Known-answer vectors.
//
// CTS: RFC 3962 Appendix B (AES-128, key "chicken teriyaki", zero IV, the
// CS3 convention of Linux cts(cbc(aes)), also in crypto/testmgr.h
// cts_mode_tv_template); nextIV is the IV the RFC lists after each
// encryption, which Linux leaves in req->iv.
//
// XTS: IEEE Std 1619-2007 Annex B vectors 1-4 (AES-128-XTS, the data-unit
// sequence number as little-endian IV, as Linux and fscrypt use it) and
// vector 15-18 (ciphertext stealing), as carried by crypto/testmgr.h
// aes_xts_tv_template.

const (
	rfc3962Key  = "chicken teriyaki"
	rfc3962Text = "I would like the General Gau's Chicken, please, and wonton soup."
)

var rfc3962Vectors = []struct {
	n          int
	ct, nextIV string
}{
	{17, "c6353568f2bf8cb4d8a580362da7ff7f97", "c6353568f2bf8cb4d8a580362da7ff7f"},
	{31, "fc00783e0efdb2c1d445d4c8eff7ed2297687268d6ecccc0c07b25e25ecfe5", "fc00783e0efdb2c1d445d4c8eff7ed22"},
	{32, "39312523a78662d5be7fcbcc98ebf5a897687268d6ecccc0c07b25e25ecfe584", "39312523a78662d5be7fcbcc98ebf5a8"},
	{47, "97687268d6ecccc0c07b25e25ecfe584b3fffd940c16a18c1b5549d2f838029e39312523a78662d5be7fcbcc98ebf5", "b3fffd940c16a18c1b5549d2f838029e"},
	{48, "97687268d6ecccc0c07b25e25ecfe5849dad8bbb96c4cdc03bc103e1a194bbd839312523a78662d5be7fcbcc98ebf5a8", "9dad8bbb96c4cdc03bc103e1a194bbd8"},
	{64, "97687268d6ecccc0c07b25e25ecfe58439312523a78662d5be7fcbcc98ebf5a84807efe836ee89a526730dbc2f7bc8409dad8bbb96c4cdc03bc103e1a194bbd8", "4807efe836ee89a526730dbc2f7bc840"},
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newTask() *kernel.Task {
	k := kernel.New()
	t := k.NewTask("test")
	t.EnableCounting()
	return t
}

// apis returns an API with the AES-NI drivers (when the CPU has them) and one
// without, so that both the arch drivers and the generic templates are
// tested.
func apis() map[string]*API {
	return map[string]*API{"default": NewAPI(), "generic": NewAPIOptions(Options{NoArchDrivers: true})}
}

func TestRFC3962CTS(t *testing.T) {
	for name, api := range apis() {
		tk := newTask()
		tfm, err := api.AllocSyncSkcipher(tk, "cts(cbc(aes))", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := tfm.SetKey(tk, []byte(rfc3962Key)); err != nil {
			t.Fatal(err)
		}
		for _, v := range rfc3962Vectors {
			buf := []byte(rfc3962Text[:v.n])
			var sg [1]Scatterlist
			SgInitOne(&sg[0], buf)
			var req SyncSkcipherRequestOnStack
			req.Init(tk, tfm)
			req.SetCrypt(sg[:], sg[:], v.n, make([]byte, 16))
			if err := req.Encrypt(tk); err != nil {
				t.Fatalf("%s %s len %d: %v", name, tfm.DriverName(), v.n, err)
			}
			if got := hex.EncodeToString(buf); got != v.ct {
				t.Errorf("%s %s len %d: ct %s, want %s", name, tfm.DriverName(), v.n, got, v.ct)
			}
			if got := hex.EncodeToString(req.IV()); got != v.nextIV {
				t.Errorf("%s %s len %d: next IV %s, want %s", name, tfm.DriverName(), v.n, got, v.nextIV)
			}
			req.SetCrypt(sg[:], sg[:], v.n, make([]byte, 16))
			if err := req.Decrypt(tk); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf, []byte(rfc3962Text[:v.n])) {
				t.Errorf("%s len %d: decrypt gave %q", name, v.n, buf)
			}
		}
		tfm.Free(tk)
	}
}

type xtsVector struct {
	name   string
	key    string
	seq    uint64 // data-unit sequence number: the little-endian IV
	pt, ct string
}

var ieee1619Vectors = []xtsVector{
	{"vector 1", "0000000000000000000000000000000000000000000000000000000000000000", 0,
		"0000000000000000000000000000000000000000000000000000000000000000",
		"917cf69ebd68b2ec9b9fe9a3eadda692cd43d2f59598ed858c02c2652fbf922e"},
	{"vector 2", "1111111111111111111111111111111122222222222222222222222222222222", 0x3333333333,
		"4444444444444444444444444444444444444444444444444444444444444444",
		"c454185e6a16936e39334038acef838bfb186fff7480adc4289382ecd6d394f0"},
	{"vector 3", "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f022222222222222222222222222222222", 0x3333333333,
		"4444444444444444444444444444444444444444444444444444444444444444",
		"af85336b597afc1a900b2eb21ec949d292df4c047e0b21532186a5971a227a89"},
	{"vector 15", "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0bfbebdbcbbbab9b8b7b6b5b4b3b2b1b0", 0x123456789a,
		"000102030405060708090a0b0c0d0e0f10", "6c1625db4671522d3d7599601de7ca09ed"},
	{"vector 16", "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0bfbebdbcbbbab9b8b7b6b5b4b3b2b1b0", 0x123456789a,
		"000102030405060708090a0b0c0d0e0f1011", "d069444b7a7e0cab09e24447d24deb1fedbf"},
	{"vector 17", "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0bfbebdbcbbbab9b8b7b6b5b4b3b2b1b0", 0x123456789a,
		"000102030405060708090a0b0c0d0e0f101112", "e5df1351c0544ba1350b3363cd8ef4beedbf9d"},
	{"vector 18", "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0bfbebdbcbbbab9b8b7b6b5b4b3b2b1b0", 0x123456789a,
		"000102030405060708090a0b0c0d0e0f10111213", "9d84c813f719aa2c7be3f66171c7c5c2edbf9dac"},
}

// cryptOnce runs one request over buf in place with a heap request (so the
// IV the driver leaves is visible in iv) and returns its error.
func cryptOnce(t testing.TB, tk *kernel.Task, tfm *Skcipher, buf, iv []byte, enc bool) error {
	t.Helper()
	req, err := SkcipherRequestAlloc(tk, tfm, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer req.Free(tk)
	var sg [1]Scatterlist
	SgInitOne(&sg[0], buf)
	var wait CryptoWait
	req.SetCallback(CRYPTO_TFM_REQ_MAY_BACKLOG, CryptoReqDone, &wait)
	req.SetCrypt(sg[:], sg[:], len(buf), iv)
	if enc {
		return CryptoWaitReq(tk, req.Encrypt(tk), &wait)
	}
	return CryptoWaitReq(tk, req.Decrypt(tk), &wait)
}

func TestIEEE1619XTS(t *testing.T) {
	for name, api := range apis() {
		tk := newTask()
		tfm, err := api.AllocSkcipher(tk, "xts(aes)", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if name == "default" && aes.Accelerated() && tfm.DriverName() != aes.BestXTSImpl().String() {
			t.Errorf("xts(aes) is %s, want %s", tfm.DriverName(), aes.BestXTSImpl())
		}
		for _, v := range ieee1619Vectors {
			if err := tfm.SetKey(tk, unhex(t, v.key)); err != nil {
				t.Fatal(err)
			}
			var iv [16]byte
			binary.LittleEndian.PutUint64(iv[:], v.seq)
			buf := unhex(t, v.pt)
			if err := cryptOnce(t, tk, tfm, buf, iv[:], true); err != nil {
				t.Fatalf("%s %s %s: %v", name, tfm.DriverName(), v.name, err)
			}
			if got := hex.EncodeToString(buf); got != v.ct {
				t.Errorf("%s %s %s: ct %s, want %s", name, tfm.DriverName(), v.name, got, v.ct)
			}
			// The x86 glue's xts_crypt leaves the next tweak in req->iv;
			// crypto/xts.c leaves req->iv alone.
			var want [16]byte
			binary.LittleEndian.PutUint64(want[:], v.seq)
			if glue := tfm.kind == kindXTSNI; bytes.Equal(iv[:], want[:]) == glue {
				t.Errorf("%s %s %s: IV left %x (x86 glue: the next tweak, template: the IV)", name, tfm.DriverName(), v.name, iv)
			}
			iv = want
			if err := cryptOnce(t, tk, tfm, buf, iv[:], false); err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(buf); got != v.pt {
				t.Errorf("%s %s %s: decrypt %s, want %s", name, tfm.DriverName(), v.name, got, v.pt)
			}
		}
		tfm.Free(tk)
	}
}

// NIST SP 800-38A F.1.1 (ECB-AES128) and F.2.1 (CBC-AES128).
const (
	sp80038aKey = "2b7e151628aed2a6abf7158809cf4f3c"
	sp80038aIV  = "000102030405060708090a0b0c0d0e0f"
	sp80038aPT  = "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710"
	sp80038aECB = "3ad77bb40d7a3660a89ecaf32466ef97f5d3d58503b9699de785895a96fdbaaf43b1cd7f598ece23881b00e3ed0306887b0c785e27e8ad3f8223207104725dd4"
	sp80038aCBC = "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b273bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7"
)

func TestSP80038AECBCBC(t *testing.T) {
	for name, api := range apis() {
		tk := newTask()
		for _, c := range []struct{ alg, ct, iv string }{{"ecb(aes)", sp80038aECB, ""}, {"cbc(aes)", sp80038aCBC, sp80038aIV}} {
			tfm, err := api.AllocSkcipher(tk, c.alg, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := tfm.SetKey(tk, unhex(t, sp80038aKey)); err != nil {
				t.Fatal(err)
			}
			buf := unhex(t, sp80038aPT)
			iv := unhex(t, c.iv)
			if err := cryptOnce(t, tk, tfm, buf, iv, true); err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(buf); got != c.ct {
				t.Errorf("%s %s: %s, want %s", name, tfm.DriverName(), got, c.ct)
			}
			if c.iv != "" && hex.EncodeToString(iv) != c.ct[len(c.ct)-32:] {
				t.Errorf("%s %s: IV after encryption %x, want the last ciphertext block", name, tfm.DriverName(), iv)
			}
			tfm.Free(tk)
		}
	}
}

// TestESSIV checks essiv(cbc(aes),sha256) against a direct computation with
// the standard library: IV' = AES-256(SHA-256(key), IV), then CBC.
func TestESSIV(t *testing.T) {
	for name, api := range apis() {
		tk := newTask()
		tfm, err := api.AllocSyncSkcipher(tk, "essiv(cbc(aes),sha256)", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		key := make([]byte, 16)
		for i := range key {
			key[i] = byte(0x40 + i)
		}
		if err := tfm.SetKey(tk, key); err != nil {
			t.Fatal(err)
		}
		pt := make([]byte, 4096)
		for i := range pt {
			pt[i] = byte(i * 7)
		}
		for _, lblk := range []uint64{0, 1, 1 << 40} {
			var iv [16]byte
			binary.LittleEndian.PutUint64(iv[:], lblk)

			salt := sha256.Sum256(key)
			ec, _ := stdaes.NewCipher(salt[:])
			var iv2 [16]byte
			ec.Encrypt(iv2[:], iv[:])
			bc, _ := stdaes.NewCipher(key)
			want := make([]byte, len(pt))
			cipher.NewCBCEncrypter(bc, iv2[:]).CryptBlocks(want, pt)

			buf := append([]byte(nil), pt...)
			var sg [1]Scatterlist
			SgInitOne(&sg[0], buf)
			var req SyncSkcipherRequestOnStack
			req.Init(tk, tfm)
			req.SetCrypt(sg[:], sg[:], len(buf), iv[:])
			if err := req.Encrypt(tk); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf, want) {
				t.Errorf("%s %s lblk %d: ciphertext differs from AES-256(SHA-256(K), IV) + CBC", name, tfm.DriverName(), lblk)
			}
			req.SetCrypt(sg[:], sg[:], len(buf), iv[:])
			if err := req.Decrypt(tk); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf, pt) {
				t.Errorf("%s lblk %d: round trip failed", name, lblk)
			}
		}
		tfm.Free(tk)
	}
}

type wideVector struct {
	Name       string `json:"name"`
	Key        string `json:"key"`
	Tweak      string `json:"tweak"`
	Plaintext  string `json:"plaintext"`
	Ciphertext string `json:"ciphertext"`
}

func loadWideVectors(t *testing.T, path string) []wideVector {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("vectors not available: %v", err)
	}
	var f struct {
		Vectors []wideVector `json:"vectors"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	return f.Vectors
}

// TestWideBlockVectors runs the published Adiantum and HCTR2 vectors (the
// files of packages crypto/adiantum and crypto/hctr2, which include Linux's
// testmgr vectors) through the Crypto API, with 32-byte tweaks.
func TestWideBlockVectors(t *testing.T) {
	for _, c := range []struct{ alg, file string }{
		{"adiantum(xchacha12,aes)", "adiantum/testdata/adiantum_xchacha12_aes.json"},
		{"hctr2(aes)", "hctr2/testdata/hctr2_aes.json"},
	} {
		vecs := loadWideVectors(t, c.file)
		for apiName, api := range apis() {
			tk := newTask()
			tfm, err := api.AllocSyncSkcipher(tk, c.alg, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, v := range vecs {
				tweak := unhex(t, v.Tweak)
				if len(tweak) != 32 {
					continue
				}
				key := unhex(t, v.Key)
				if err := tfm.SetKey(tk, key); err != nil {
					t.Fatalf("%s: %v", v.Name, err)
				}
				buf := unhex(t, v.Plaintext)
				var sg [1]Scatterlist
				SgInitOne(&sg[0], buf)
				var req SyncSkcipherRequestOnStack
				req.Init(tk, tfm)
				req.SetCrypt(sg[:], sg[:], len(buf), tweak)
				if err := req.Encrypt(tk); err != nil {
					t.Fatalf("%s %s: %v", apiName, v.Name, err)
				}
				if got := hex.EncodeToString(buf); got != v.Ciphertext {
					t.Errorf("%s %s %s: ciphertext mismatch", apiName, tfm.DriverName(), v.Name)
				}
				req.SetCrypt(sg[:], sg[:], len(buf), tweak)
				if err := req.Decrypt(tk); err != nil {
					t.Fatal(err)
				}
				if got := hex.EncodeToString(buf); got != v.Plaintext {
					t.Errorf("%s %s: decryption mismatch", apiName, v.Name)
				}
				n++
			}
			if n == 0 {
				t.Fatalf("%s: no 32-byte-tweak vectors in %s", c.alg, c.file)
			}
			tfm.Free(tk)
		}
	}
}
