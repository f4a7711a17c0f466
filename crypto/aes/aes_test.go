package aes

import (
	stdaes "crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/vfslab/vfslab/errno"
)

var _ cipher.Block = (*Ctx)(nil)

// impls lists the implementations this machine can run: the portable code
// always, the AES-NI assembly when the build and the CPU have it.
func impls() []struct {
	name string
	asm  bool
} {
	out := []struct {
		name string
		asm  bool
	}{{"generic", false}}
	if hasAESNI {
		out = append(out, struct {
			name string
			asm  bool
		}{"aesni", true})
	}
	return out
}

// xtsImpls lists the XTS implementations this machine can run.
func xtsImpls() []XTSImpl {
	var out []XTSImpl
	for _, im := range XTSImpls {
		if im.Available() {
			out = append(out, im)
		}
	}
	return out
}

// xtsImplOf is the XTS implementation of impls()'s asm flag.
func xtsImplOf(asm bool) XTSImpl {
	if asm {
		return XTSAESNI
	}
	return XTSGeneric
}

// tb is the part of testing.TB (and *rapid.T) the helpers need.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

func unhex(t tb, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

func expandWith(t tb, key []byte, asm bool) *Ctx {
	t.Helper()
	if err := CheckKeyLen(len(key)); err != nil {
		t.Fatalf("key length %d: %v", len(key), err)
	}
	c := new(Ctx)
	expandKey(c, key, asm)
	return c
}

// FIPS-197 Appendix C: example vectors for the three key sizes, and
// Appendix B (the cipher example with the Appendix A.1 key).
var fips197 = []struct {
	name, key, pt, ct string
}{
	{"C.1 AES-128", "000102030405060708090a0b0c0d0e0f",
		"00112233445566778899aabbccddeeff", "69c4e0d86a7b0430d8cdb78070b4c55a"},
	{"C.2 AES-192", "000102030405060708090a0b0c0d0e0f1011121314151617",
		"00112233445566778899aabbccddeeff", "dda97ca4864cdfe06eaf70a0ec0d7191"},
	{"C.3 AES-256", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
		"00112233445566778899aabbccddeeff", "8ea2b7ca516745bfeafc49904b496089"},
	{"B AES-128", "2b7e151628aed2a6abf7158809cf4f3c",
		"3243f6a8885a308d313198a2e0370734", "3925841d02dc09fbdc118597196a0b32"},
}

func TestFIPS197KnownAnswers(t *testing.T) {
	for _, im := range impls() {
		for _, v := range fips197 {
			t.Run(im.name+"/"+v.name, func(t *testing.T) {
				c := expandWith(t, unhex(t, v.key), im.asm)
				pt, ct := unhex(t, v.pt), unhex(t, v.ct)
				got := make([]byte, 16)
				encryptBlock(c, got, pt, im.asm)
				if diff := cmp.Diff(ct, got); diff != "" {
					t.Errorf("encrypt (-want +got):\n%s", diff)
				}
				decryptBlock(c, got, ct, im.asm)
				if diff := cmp.Diff(pt, got); diff != "" {
					t.Errorf("decrypt (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// FIPS-197 Appendix A: key expansion examples. The words are written there
// as byte strings; w[Nk] and the last word of each schedule are checked.
func TestFIPS197KeyExpansion(t *testing.T) {
	cases := []struct {
		name, key        string
		firstNew, lastW  string
		firstIdx, lastIx int
	}{
		{"A.1 AES-128", "2b7e151628aed2a6abf7158809cf4f3c", "a0fafe17", "b6630ca6", 4, 43},
		{"A.2 AES-192", "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b", "fe0c91f7", "01002202", 6, 51},
		{"A.3 AES-256", "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4", "9ba35411", "706c631e", 8, 59},
	}
	for _, im := range impls() {
		for _, tc := range cases {
			t.Run(im.name+"/"+tc.name, func(t *testing.T) {
				c := expandWith(t, unhex(t, tc.key), im.asm)
				word := func(i int) string {
					var b [4]byte
					binary.LittleEndian.PutUint32(b[:], c.KeyEnc[i])
					return hex.EncodeToString(b[:])
				}
				if got := word(tc.firstIdx); got != tc.firstNew {
					t.Errorf("w[%d] = %s, want %s", tc.firstIdx, got, tc.firstNew)
				}
				if got := word(tc.lastIx); got != tc.lastW {
					t.Errorf("w[%d] = %s, want %s", tc.lastIx, got, tc.lastW)
				}
				// The decryption schedule starts with the last encryption
				// round key and ends with the first.
				nr := c.rounds()
				if diff := cmp.Diff(c.KeyEnc[4*nr:4*nr+4], c.KeyDec[:4]); diff != "" {
					t.Errorf("dec[0] (-enc[nr] +dec[0]):\n%s", diff)
				}
				if diff := cmp.Diff(c.KeyEnc[:4], c.KeyDec[4*nr:4*nr+4]); diff != "" {
					t.Errorf("dec[nr] (-enc[0] +dec[nr]):\n%s", diff)
				}
			})
		}
	}
}

// NIST SP 800-38A F.1.1/F.1.2 (ECB-AES128) and F.2.1/F.2.2 (CBC-AES128).
func TestSP80038A(t *testing.T) {
	key := "2b7e151628aed2a6abf7158809cf4f3c"
	pt := "6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51" +
		"30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710"
	ecbCT := "3ad77bb40d7a3660a89ecaf32466ef97 f5d3d58503b9699de785895a96fdbaaf" +
		"43b1cd7f598ece23881b00e3ed030688 7b0c785e27e8ad3f8223207104725dd4"
	cbcIV := "000102030405060708090a0b0c0d0e0f"
	cbcCT := "7649abac8119b246cee98e9b12e9197d 5086cb9b507219ee95db113a917678b2" +
		"73bed6b8e3c1743b7116e69e22229516 3ff1caa1681fac09120eca307586e1a7"
	for _, im := range impls() {
		t.Run(im.name, func(t *testing.T) {
			var e ECB
			if err := e.SetKey(unhex(t, key)); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, 64)
			if err := e.crypt(got, unhex(t, pt), false, im.asm); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(unhex(t, ecbCT), got); diff != "" {
				t.Errorf("ECB encrypt (-want +got):\n%s", diff)
			}
			if err := e.crypt(got, unhex(t, ecbCT), true, im.asm); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(unhex(t, pt), got); diff != "" {
				t.Errorf("ECB decrypt (-want +got):\n%s", diff)
			}

			var c CBC
			if err := c.SetKey(unhex(t, key)); err != nil {
				t.Fatal(err)
			}
			var iv [16]byte
			copy(iv[:], unhex(t, cbcIV))
			if err := c.crypt(got, unhex(t, pt), &iv, false, im.asm); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(unhex(t, cbcCT), got); diff != "" {
				t.Errorf("CBC encrypt (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(unhex(t, cbcCT)[48:], iv[:]); diff != "" {
				t.Errorf("CBC encrypt IV out (-want +got):\n%s", diff)
			}
			copy(iv[:], unhex(t, cbcIV))
			if err := c.crypt(got, unhex(t, cbcCT), &iv, true, im.asm); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(unhex(t, pt), got); diff != "" {
				t.Errorf("CBC decrypt (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(unhex(t, cbcCT)[48:], iv[:]); diff != "" {
				t.Errorf("CBC decrypt IV out (-want +got):\n%s", diff)
			}
		})
	}
}

// The assembly and the portable key schedules are identical word for word,
// and single blocks agree with crypto/aes, for random keys of every size.
func TestBlockMatchesStdlib(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		klen := rapid.SampledFrom([]int{16, 24, 32}).Draw(rt, "klen")
		key := rapid.SliceOfN(rapid.Byte(), klen, klen).Draw(rt, "key")
		blk := rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(rt, "block")
		ref, err := stdaes.NewCipher(key)
		if err != nil {
			rt.Fatal(err)
		}
		want := make([]byte, 16)
		ref.Encrypt(want, blk)
		wantDec := make([]byte, 16)
		ref.Decrypt(wantDec, blk)

		gen := expandWith(rt, key, false)
		for _, im := range impls() {
			c := expandWith(rt, key, im.asm)
			if diff := cmp.Diff(gen, c); diff != "" {
				rt.Fatalf("%s schedule differs from generic (-generic +%s):\n%s", im.name, im.name, diff)
			}
			got := make([]byte, 16)
			encryptBlock(c, got, blk, im.asm)
			if diff := cmp.Diff(want, got); diff != "" {
				rt.Fatalf("%s encrypt (-crypto/aes +ours):\n%s", im.name, diff)
			}
			decryptBlock(c, got, blk, im.asm)
			if diff := cmp.Diff(wantDec, got); diff != "" {
				rt.Fatalf("%s decrypt (-crypto/aes +ours):\n%s", im.name, diff)
			}
		}
	})
}

func TestExpandKeyRejectsBadLengths(t *testing.T) {
	for n := 0; n <= 64; n++ {
		var c Ctx
		err := ExpandKey(&c, make([]byte, n))
		switch n {
		case 16, 24, 32:
			if err != nil {
				t.Errorf("ExpandKey(%d bytes) = %v, want nil", n, err)
			}
			if c.KeyLength != uint32(n) {
				t.Errorf("KeyLength = %d, want %d", c.KeyLength, n)
			}
		default:
			if !errors.Is(err, errno.EINVAL) {
				t.Errorf("ExpandKey(%d bytes) = %v, want EINVAL", n, err)
			}
			if c != (Ctx{}) {
				t.Errorf("ExpandKey(%d bytes) modified the Ctx", n)
			}
		}
	}
	if err := ExpandKey(new(Ctx), nil); !errors.Is(err, errno.EINVAL) {
		t.Errorf("ExpandKey(nil) = %v, want EINVAL", err)
	}
}

// Expanding a shorter key over a longer one leaves no words of the old
// schedule behind.
func TestExpandKeyClearsStaleTail(t *testing.T) {
	for _, im := range impls() {
		c := new(Ctx)
		long := make([]byte, 32)
		for i := range long {
			long[i] = byte(0xa0 + i)
		}
		expandKey(c, long, im.asm)
		short := make([]byte, 16)
		expandKey(c, short, im.asm)
		fresh := expandWith(t, short, im.asm)
		if diff := cmp.Diff(fresh, c); diff != "" {
			t.Errorf("%s: re-expanded Ctx differs from a fresh one (-fresh +reused):\n%s", im.name, diff)
		}
	}
}

func TestWipe(t *testing.T) {
	var c Ctx
	if err := ExpandKey(&c, make([]byte, 32)); err != nil {
		t.Fatal(err)
	}
	c.Wipe()
	if c != (Ctx{}) {
		t.Errorf("Wipe left key material: %+v", c)
	}
}

func TestEncryptContractPanics(t *testing.T) {
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", name)
			}
		}()
		f()
	}
	var zero Ctx
	blk := make([]byte, 16)
	mustPanic("Encrypt on an unexpanded Ctx", func() { zero.Encrypt(blk, blk) })
	mustPanic("Decrypt on an unexpanded Ctx", func() { zero.Decrypt(blk, blk) })
	var c Ctx
	if err := ExpandKey(&c, make([]byte, 16)); err != nil {
		t.Fatal(err)
	}
	mustPanic("Encrypt with a short src", func() { c.Encrypt(blk, blk[:15]) })
	mustPanic("Decrypt with a short dst", func() { c.Decrypt(blk[:15], blk) })
	corrupt := c
	corrupt.KeyLength = 1000
	mustPanic("Encrypt with a corrupt KeyLength", func() { corrupt.Encrypt(blk, blk) })
}

// The library calls on the hot path of fscrypt's v1 key derivation do not
// allocate.
func TestLibraryZeroAllocs(t *testing.T) {
	key := make([]byte, 16)
	master := make([]byte, 64)
	out := make([]byte, 64)
	var c Ctx
	allocs := testing.AllocsPerRun(100, func() {
		if err := ExpandKey(&c, key); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(master); i += 16 {
			c.Encrypt(out[i:], master[i:])
		}
		c.Decrypt(out, out)
		c.Wipe()
	})
	if allocs != 0 {
		t.Errorf("ExpandKey+Encrypt+Decrypt+Wipe allocated %v times, want 0", allocs)
	}
}
