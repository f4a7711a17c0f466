package aes

import (
	"bufio"
	"bytes"
	stdaes "crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/xts"
	"pgregory.net/rapid"

	"github.com/vfslab/vfslab/errno"
)

// seqIV is the IEEE 1619 / fscrypt IV of a data unit number: le64 and zeros.
func seqIV(seq uint64) *[16]byte {
	var iv [16]byte
	binary.LittleEndian.PutUint64(iv[:], seq)
	return &iv
}

func mustXTS(t tb, key []byte) *XTS {
	t.Helper()
	x := new(XTS)
	if err := x.SetKey(key); err != nil {
		t.Fatalf("XTS.SetKey(%d bytes): %v", len(key), err)
	}
	return x
}

func mustCTS(t tb, key []byte) *CTSCBC {
	t.Helper()
	c := new(CTSCBC)
	if err := c.SetKey(key); err != nil {
		t.Fatalf("CTSCBC.SetKey(%d bytes): %v", len(key), err)
	}
	return c
}

// checkXTS encrypts and decrypts one vector out of place and in place.
func checkXTS(t *testing.T, x *XTS, impl XTSImpl, iv *[16]byte, pt, ct []byte) {
	t.Helper()
	for _, inPlace := range []bool{false, true} {
		ivc := *iv
		buf := bytes.Clone(pt)
		dst := buf
		if !inPlace {
			dst = make([]byte, len(pt))
		}
		if err := x.crypt(dst, buf, &ivc, false, impl); err != nil {
			t.Fatalf("encrypt: %v", err)
		}
		if diff := cmp.Diff(ct, dst); diff != "" {
			t.Fatalf("encrypt (in place %v) (-want +got):\n%s", inPlace, diff)
		}
		if ivc != *iv {
			t.Errorf("encrypt changed the IV to %x", ivc)
		}
		buf = bytes.Clone(ct)
		dst = buf
		if !inPlace {
			dst = make([]byte, len(ct))
		}
		if err := x.crypt(dst, buf, &ivc, true, impl); err != nil {
			t.Fatalf("decrypt: %v", err)
		}
		if diff := cmp.Diff(pt, dst); diff != "" {
			t.Fatalf("decrypt (in place %v) (-want +got):\n%s", inPlace, diff)
		}
	}
}

func TestXTSIEEE1619(t *testing.T) {
	for _, im := range xtsImpls() {
		for _, v := range ieee1619Vectors {
			t.Run(im.String()+"/"+v.name, func(t *testing.T) {
				x := mustXTS(t, unhex(t, v.key))
				checkXTS(t, x, im, seqIV(v.seq), unhex(t, v.pt), unhex(t, v.ct))
			})
		}
	}
}

// readVectors parses a testdata file of "key iv plaintext ciphertext" lines.
func readVectors(t *testing.T, name string) [][4][]byte {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][4][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 4 {
			t.Fatalf("%s: bad line %q", name, line)
		}
		var v [4][]byte
		for i, f := range fields {
			v[i] = unhex(t, f)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no vectors", name)
	}
	return out
}

// OpenSSL's XTS (AES-128 and AES-256 keys, lengths 16..4095 with and without
// stealing), see testdata/gen/gen_xts.py.
func TestXTSOpenSSLVectors(t *testing.T) {
	vecs := readVectors(t, "testdata/xts_openssl.txt")
	for _, im := range xtsImpls() {
		for _, v := range vecs {
			t.Run(fmt.Sprintf("%s/key%d/len%d", im, len(v[0]), len(v[2])), func(t *testing.T) {
				x := mustXTS(t, v[0])
				iv := (*[16]byte)(v[1])
				checkXTS(t, x, im, iv, v[2], v[3])
			})
		}
	}
}

// checkCTS encrypts and decrypts one vector out of place and in place; when
// nextIV is not nil it is the IV both directions must leave behind.
func checkCTS(t *testing.T, c *CTSCBC, asm bool, iv *[16]byte, pt, ct, nextIV []byte) {
	t.Helper()
	for _, inPlace := range []bool{false, true} {
		for _, decrypt := range []bool{false, true} {
			in, want := pt, ct
			if decrypt {
				in, want = ct, pt
			}
			ivc := *iv
			buf := bytes.Clone(in)
			dst := buf
			if !inPlace {
				dst = make([]byte, len(in))
			}
			if err := c.crypt(dst, buf, &ivc, decrypt, asm); err != nil {
				t.Fatalf("decrypt=%v: %v", decrypt, err)
			}
			if diff := cmp.Diff(want, dst); diff != "" {
				t.Fatalf("decrypt=%v in place=%v (-want +got):\n%s", decrypt, inPlace, diff)
			}
			if nextIV != nil {
				if diff := cmp.Diff(nextIV, ivc[:]); diff != "" {
					t.Errorf("decrypt=%v: IV out (-want +got):\n%s", decrypt, diff)
				}
			}
		}
	}
}

func TestCTSRFC3962(t *testing.T) {
	for _, im := range impls() {
		for _, v := range rfc3962Vectors {
			t.Run(fmt.Sprintf("%s/len%d", im.name, v.n), func(t *testing.T) {
				c := mustCTS(t, []byte(rfc3962Key))
				checkCTS(t, c, im.asm, new([16]byte), []byte(rfc3962Text[:v.n]),
					unhex(t, v.ct), unhex(t, v.nextIV))
			})
		}
	}
}

// OpenSSL's AES-{128,192,256}-CBC-CTS with cts_mode CS3, see
// testdata/gen/gen_cts.c.
func TestCTSOpenSSLVectors(t *testing.T) {
	vecs := readVectors(t, "testdata/cts_openssl.txt")
	for _, im := range impls() {
		for _, v := range vecs {
			t.Run(fmt.Sprintf("%s/key%d/len%d", im.name, len(v[0]), len(v[2])), func(t *testing.T) {
				c := mustCTS(t, v[0])
				checkCTS(t, c, im.asm, (*[16]byte)(v[1]), v[2], v[3], nil)
			})
		}
	}
}

// drawKey draws an AES key of one of the three sizes.
func drawKey(rt *rapid.T, label string) []byte {
	n := rapid.SampledFrom([]int{16, 24, 32}).Draw(rt, label+"len")
	return rapid.SliceOfN(rapid.Byte(), n, n).Draw(rt, label)
}

func drawIV(rt *rapid.T) *[16]byte {
	return (*[16]byte)(rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(rt, "iv"))
}

// target returns the destination of a request: src itself or a fresh buffer
// with slack after it (which must stay untouched).
func target(src []byte, inPlace bool) []byte {
	if inPlace {
		return src
	}
	d := make([]byte, len(src)+7)
	for i := len(src); i < len(d); i++ {
		d[i] = 0xee
	}
	return d
}

func checkSlack(rt *rapid.T, dst []byte, n int) {
	for _, b := range dst[n:] {
		if b != 0xee {
			rt.Fatalf("request wrote past len(src): %x", dst[n:])
		}
	}
}

// ECB agrees with crypto/aes block by block, for both implementations.
func TestECBMatchesStdlib(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		key := drawKey(rt, "key")
		nb := rapid.IntRange(0, 40).Draw(rt, "blocks")
		pt := rapid.SliceOfN(rapid.Byte(), 16*nb, 16*nb).Draw(rt, "pt")
		inPlace := rapid.Bool().Draw(rt, "inPlace")
		ref, _ := stdaes.NewCipher(key)
		want := make([]byte, len(pt))
		for i := 0; i < len(pt); i += 16 {
			ref.Encrypt(want[i:], pt[i:])
		}
		var e ECB
		if err := e.SetKey(key); err != nil {
			rt.Fatal(err)
		}
		for _, im := range impls() {
			src := bytes.Clone(pt)
			dst := target(src, inPlace)
			if err := e.crypt(dst, src, false, im.asm); err != nil {
				rt.Fatal(err)
			}
			if diff := cmp.Diff(want, dst[:len(pt)]); diff != "" {
				rt.Fatalf("%s encrypt (-crypto/aes +ours):\n%s", im.name, diff)
			}
			if !inPlace {
				checkSlack(rt, dst, len(pt))
			}
			src = bytes.Clone(want)
			dst = target(src, inPlace)
			if err := e.crypt(dst, src, true, im.asm); err != nil {
				rt.Fatal(err)
			}
			if diff := cmp.Diff(pt, dst[:len(pt)]); diff != "" {
				rt.Fatalf("%s decrypt (-want +got):\n%s", im.name, diff)
			}
		}
	})
}

// CBC agrees with crypto/cipher's CBC over crypto/aes, and the IV buffer
// ends up holding the last ciphertext block, for both implementations.
func TestCBCMatchesStdlib(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		key := drawKey(rt, "key")
		iv := drawIV(rt)
		nb := rapid.IntRange(0, 40).Draw(rt, "blocks")
		pt := rapid.SliceOfN(rapid.Byte(), 16*nb, 16*nb).Draw(rt, "pt")
		inPlace := rapid.Bool().Draw(rt, "inPlace")
		ref, _ := stdaes.NewCipher(key)
		want := make([]byte, len(pt))
		cipher.NewCBCEncrypter(ref, iv[:]).CryptBlocks(want, pt)
		wantIV := *iv
		if nb > 0 {
			copy(wantIV[:], want[len(want)-16:])
		}
		var c CBC
		if err := c.SetKey(key); err != nil {
			rt.Fatal(err)
		}
		for _, im := range impls() {
			ivc := *iv
			src := bytes.Clone(pt)
			dst := target(src, inPlace)
			if err := c.crypt(dst, src, &ivc, false, im.asm); err != nil {
				rt.Fatal(err)
			}
			if diff := cmp.Diff(want, dst[:len(pt)]); diff != "" {
				rt.Fatalf("%s encrypt (-crypto/cipher +ours):\n%s", im.name, diff)
			}
			if ivc != wantIV {
				rt.Fatalf("%s encrypt left IV %x, want %x", im.name, ivc, wantIV)
			}
			ivc = *iv
			src = bytes.Clone(want)
			dst = target(src, inPlace)
			if err := c.crypt(dst, src, &ivc, true, im.asm); err != nil {
				rt.Fatal(err)
			}
			if diff := cmp.Diff(pt, dst[:len(pt)]); diff != "" {
				rt.Fatalf("%s decrypt (-want +got):\n%s", im.name, diff)
			}
			if ivc != wantIV {
				rt.Fatalf("%s decrypt left IV %x, want %x", im.name, ivc, wantIV)
			}
		}
	})
}

// Splitting a CBC request in two, carrying the IV buffer across, gives the
// same result as one request (the point of the kernel's IV update).
func TestCBCChainsAcrossRequests(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		key := drawKey(rt, "key")
		iv := drawIV(rt)
		nb := rapid.IntRange(1, 30).Draw(rt, "blocks")
		split := 16 * rapid.IntRange(0, nb).Draw(rt, "split")
		pt := rapid.SliceOfN(rapid.Byte(), 16*nb, 16*nb).Draw(rt, "pt")
		var c CBC
		if err := c.SetKey(key); err != nil {
			rt.Fatal(err)
		}
		for _, im := range impls() {
			for _, decrypt := range []bool{false, true} {
				whole := make([]byte, len(pt))
				iv1 := *iv
				if err := c.crypt(whole, pt, &iv1, decrypt, im.asm); err != nil {
					rt.Fatal(err)
				}
				parts := make([]byte, len(pt))
				iv2 := *iv
				if err := c.crypt(parts[:split], pt[:split], &iv2, decrypt, im.asm); err != nil {
					rt.Fatal(err)
				}
				if err := c.crypt(parts[split:], pt[split:], &iv2, decrypt, im.asm); err != nil {
					rt.Fatal(err)
				}
				if diff := cmp.Diff(whole, parts); diff != "" {
					rt.Fatalf("%s decrypt=%v: split request differs (-whole +split):\n%s", im.name, decrypt, diff)
				}
				if iv1 != iv2 {
					rt.Fatalf("%s decrypt=%v: IV %x vs %x", im.name, decrypt, iv1, iv2)
				}
			}
		}
	})
}

// XTS agrees with golang.org/x/crypto/xts for whole-block data units (the
// only ones x/crypto supports), with the IV le64(sector) as in fscrypt.
func TestXTSMatchesXCrypto(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		half := rapid.SampledFrom([]int{16, 24, 32}).Draw(rt, "half")
		key := rapid.SliceOfN(rapid.Byte(), 2*half, 2*half).Draw(rt, "key")
		sector := rapid.Uint64().Draw(rt, "sector")
		nb := rapid.IntRange(1, 70).Draw(rt, "blocks")
		pt := rapid.SliceOfN(rapid.Byte(), 16*nb, 16*nb).Draw(rt, "pt")
		inPlace := rapid.Bool().Draw(rt, "inPlace")
		ref, err := xts.NewCipher(stdaes.NewCipher, key)
		if err != nil {
			rt.Fatal(err)
		}
		want := make([]byte, len(pt))
		ref.Encrypt(want, pt, sector)
		x := mustXTS(rt, key)
		for _, im := range xtsImpls() {
			src := bytes.Clone(pt)
			dst := target(src, inPlace)
			if err := x.crypt(dst, src, seqIV(sector), false, im); err != nil {
				rt.Fatal(err)
			}
			if diff := cmp.Diff(want, dst[:len(pt)]); diff != "" {
				rt.Fatalf("%s encrypt (-x/crypto/xts +ours):\n%s", im, diff)
			}
			if !inPlace {
				checkSlack(rt, dst, len(pt))
			}
			src = bytes.Clone(want)
			dst = target(src, inPlace)
			if err := x.crypt(dst, src, seqIV(sector), true, im); err != nil {
				rt.Fatal(err)
			}
			if diff := cmp.Diff(pt, dst[:len(pt)]); diff != "" {
				rt.Fatalf("%s decrypt (-want +got):\n%s", im, diff)
			}
		}
	})
}

// cs3Reference builds CBC-CS3 from its definition on top of crypto/cipher:
// zero-pad to whole blocks, CBC-encrypt, swap the last two blocks, cut to
// the input length (exactly one block: plain CBC).
func cs3Reference(key []byte, iv *[16]byte, pt []byte) []byte {
	ref, _ := stdaes.NewCipher(key)
	n := len(pt)
	padded := make([]byte, (n+15)/16*16)
	copy(padded, pt)
	cipher.NewCBCEncrypter(ref, iv[:]).CryptBlocks(padded, padded)
	if n > 16 {
		m := len(padded)
		last := bytes.Clone(padded[m-16:])
		copy(padded[m-16:], padded[m-32:m-16])
		copy(padded[m-32:m-16], last)
	}
	return padded[:n]
}

// CTS-CBC agrees with the CS3 definition for random keys, IVs and lengths,
// and leaves the IV crypto/cts.c leaves, for both implementations.
func TestCTSMatchesCS3Definition(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		key := drawKey(rt, "key")
		iv := drawIV(rt)
		n := rapid.IntRange(16, 300).Draw(rt, "len")
		pt := rapid.SliceOfN(rapid.Byte(), n, n).Draw(rt, "pt")
		inPlace := rapid.Bool().Draw(rt, "inPlace")
		want := cs3Reference(key, iv, pt)
		off := 16 * ((n+15)/16 - 2)
		if n == 16 {
			off = 0
		}
		wantIV := want[off : off+16]
		c := mustCTS(rt, key)
		for _, im := range impls() {
			for _, decrypt := range []bool{false, true} {
				in, out := pt, want
				if decrypt {
					in, out = want, pt
				}
				ivc := *iv
				src := bytes.Clone(in)
				dst := target(src, inPlace)
				if err := c.crypt(dst, src, &ivc, decrypt, im.asm); err != nil {
					rt.Fatal(err)
				}
				if diff := cmp.Diff(out, dst[:n]); diff != "" {
					rt.Fatalf("%s decrypt=%v (-want +got):\n%s", im.name, decrypt, diff)
				}
				if !inPlace {
					checkSlack(rt, dst, n)
				}
				if diff := cmp.Diff(wantIV, ivc[:]); diff != "" {
					rt.Fatalf("%s decrypt=%v IV out (-want +got):\n%s", im.name, decrypt, diff)
				}
			}
		}
	})
}

// The assembly and the portable code agree on every mode for random keys,
// IVs and lengths, including XTS ciphertext stealing (which no external Go
// reference covers) and requests long enough for the eight-block loops.
func TestModesAsmMatchesGeneric(t *testing.T) {
	if !hasAESNI {
		t.Skip("no AES-NI assembly in this build or on this CPU")
	}
	rapid.Check(t, func(rt *rapid.T) {
		mode := rapid.SampledFrom([]string{"ecb", "cbc", "cts", "xts"}).Draw(rt, "mode")
		decrypt := rapid.Bool().Draw(rt, "decrypt")
		inPlace := rapid.Bool().Draw(rt, "inPlace")
		iv := drawIV(rt)
		key := drawKey(rt, "key")
		var n int
		switch mode {
		case "ecb", "cbc":
			n = 16 * rapid.IntRange(0, 64).Draw(rt, "blocks")
		case "cts":
			n = rapid.IntRange(16, 1100).Draw(rt, "len")
		case "xts":
			n = rapid.IntRange(16, 1100).Draw(rt, "len")
			key = append(key, rapid.SliceOfN(rapid.Byte(), len(key), len(key)).Draw(rt, "tweakkey")...)
		}
		src := rapid.SliceOfN(rapid.Byte(), n, n).Draw(rt, "src")
		run := func(asm bool) ([]byte, [16]byte) {
			in := bytes.Clone(src)
			dst := target(in, inPlace)
			ivc := *iv
			var err error
			switch mode {
			case "ecb":
				var e ECB
				if err := e.SetKey(key); err != nil {
					rt.Fatal(err)
				}
				err = e.crypt(dst, in, decrypt, asm)
			case "cbc":
				var c CBC
				if err := c.SetKey(key); err != nil {
					rt.Fatal(err)
				}
				err = c.crypt(dst, in, &ivc, decrypt, asm)
			case "cts":
				err = mustCTS(rt, key).crypt(dst, in, &ivc, decrypt, asm)
			case "xts":
				err = mustXTS(rt, key).crypt(dst, in, &ivc, decrypt, xtsImplOf(asm))
			}
			if err != nil {
				rt.Fatal(err)
			}
			return dst, ivc
		}
		gen, genIV := run(false)
		asm, asmIV := run(true)
		if diff := cmp.Diff(gen, asm); diff != "" {
			rt.Fatalf("%s decrypt=%v len %d (-generic +aesni):\n%s", mode, decrypt, n, diff)
		}
		if genIV != asmIV {
			rt.Fatalf("%s decrypt=%v: IV generic %x aesni %x", mode, decrypt, genIV, asmIV)
		}
	})
}

// Every length each mode accepts decrypts back to the plaintext, in place
// and out of place, for every key size: ECB/CBC whole blocks up to 64,
// CTS-CBC and XTS every byte length from 16 to 600.
func TestRoundTripEveryLength(t *testing.T) {
	pattern := make([]byte, 1024)
	for i := range pattern {
		pattern[i] = byte(i*7 + i>>8)
	}
	for _, im := range impls() {
		for _, klen := range []int{16, 24, 32} {
			key := pattern[100 : 100+2*klen]
			var e ECB
			var c CBC
			if err := e.SetKey(key[:klen]); err != nil {
				t.Fatal(err)
			}
			if err := c.SetKey(key[:klen]); err != nil {
				t.Fatal(err)
			}
			cts := mustCTS(t, key[:klen])
			x := mustXTS(t, key)
			type crypter func(dst, src []byte, iv *[16]byte, decrypt bool) error
			modes := []struct {
				name     string
				min, max int
				step     int
				f        crypter
			}{
				{"ecb", 0, 64 * 16, 16, func(d, s []byte, _ *[16]byte, dec bool) error { return e.crypt(d, s, dec, im.asm) }},
				{"cbc", 0, 64 * 16, 16, func(d, s []byte, iv *[16]byte, dec bool) error { return c.crypt(d, s, iv, dec, im.asm) }},
				{"cts", 16, 600, 1, func(d, s []byte, iv *[16]byte, dec bool) error { return cts.crypt(d, s, iv, dec, im.asm) }},
				{"xts", 16, 600, 1, func(d, s []byte, iv *[16]byte, dec bool) error { return x.crypt(d, s, iv, dec, xtsImplOf(im.asm)) }},
			}
			for _, m := range modes {
				for n := m.min; n <= m.max; n += m.step {
					pt := pattern[:n]
					iv0 := [16]byte{1, 2, 3, byte(n)}
					ct := make([]byte, n)
					iv := iv0
					if err := m.f(ct, pt, &iv, false); err != nil {
						t.Fatalf("%s/%s key %d len %d encrypt: %v", im.name, m.name, klen, n, err)
					}
					if n >= 16 && bytes.Equal(ct, pt) {
						t.Fatalf("%s/%s len %d: ciphertext equals plaintext", im.name, m.name, n)
					}
					// In place must give the same ciphertext.
					inplace := bytes.Clone(pt)
					iv = iv0
					if err := m.f(inplace, inplace, &iv, false); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(inplace, ct) {
						t.Fatalf("%s/%s key %d len %d: in-place encryption differs", im.name, m.name, klen, n)
					}
					iv = iv0
					if err := m.f(inplace, inplace, &iv, true); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(inplace, pt) {
						t.Fatalf("%s/%s key %d len %d: round trip failed", im.name, m.name, klen, n)
					}
				}
			}
		}
	}
}

func TestSetKeyErrors(t *testing.T) {
	for n := 0; n <= 80; n++ {
		key := make([]byte, n)
		for i := range key {
			key[i] = byte(i) // halves differ
		}
		aesOK := n == 16 || n == 24 || n == 32
		xtsOK := n == 32 || n == 48 || n == 64
		check := func(name string, err error, ok bool) {
			t.Helper()
			if ok && err != nil {
				t.Errorf("%s.SetKey(%d bytes) = %v, want nil", name, n, err)
			}
			if !ok && !errors.Is(err, errno.EINVAL) {
				t.Errorf("%s.SetKey(%d bytes) = %v, want EINVAL", name, n, err)
			}
		}
		check("ECB", new(ECB).SetKey(key), aesOK)
		check("CBC", new(CBC).SetKey(key), aesOK)
		check("CTSCBC", new(CTSCBC).SetKey(key), aesOK)
		check("XTS", new(XTS).SetKey(key), xtsOK)
	}
}

// xts_verify_key: equal halves are accepted unless weak keys are forbidden
// (CRYPTO_TFM_REQ_FORBID_WEAK_KEYS, or FIPS mode).
func TestXTSWeakKeys(t *testing.T) {
	for _, half := range []int{16, 24, 32} {
		key := bytes.Repeat([]byte{0x5a}, 2*half)
		x := new(XTS)
		if err := x.SetKey(key); err != nil {
			t.Errorf("equal %d-byte halves rejected by default: %v", half, err)
		}
		x = &XTS{ForbidWeakKeys: true}
		if err := x.SetKey(key); !errors.Is(err, errno.EINVAL) {
			t.Errorf("equal %d-byte halves with ForbidWeakKeys: %v, want EINVAL", half, err)
		}
		if err := x.Encrypt(make([]byte, 16), make([]byte, 16), new([16]byte)); !errors.Is(err, errno.ENOKEY) {
			t.Errorf("Encrypt after a rejected key: %v, want ENOKEY", err)
		}
		key[len(key)-1] ^= 1
		if err := x.SetKey(key); err != nil {
			t.Errorf("halves differing in one bit rejected: %v", err)
		}
	}
}

func TestRequestErrors(t *testing.T) {
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i)
	}
	iv := new([16]byte)
	buf := make([]byte, 256)

	var unkeyedECB ECB
	var unkeyedCBC CBC
	var unkeyedCTS CTSCBC
	var unkeyedXTS XTS
	want := func(name string, err, target error) {
		t.Helper()
		if !errors.Is(err, target) {
			t.Errorf("%s = %v, want %v", name, err, target)
		}
	}
	want("ECB without key", unkeyedECB.Encrypt(buf[:16], buf[:16]), errno.ENOKEY)
	want("CBC without key", unkeyedCBC.Decrypt(buf[:16], buf[:16], iv), errno.ENOKEY)
	want("CTSCBC without key", unkeyedCTS.Encrypt(buf[:16], buf[:16], iv), errno.ENOKEY)
	want("XTS without key", unkeyedXTS.Decrypt(buf[:16], buf[:16], iv), errno.ENOKEY)

	var e ECB
	var c CBC
	cts := mustCTS(t, key[:16])
	x := mustXTS(t, key)
	_ = e.SetKey(key[:16])
	_ = c.SetKey(key[:16])

	// A failed SetKey leaves the tfm without a key.
	var again CBC
	_ = again.SetKey(key[:16])
	if err := again.SetKey(key[:15]); !errors.Is(err, errno.EINVAL) {
		t.Fatalf("SetKey(15 bytes) = %v", err)
	}
	want("CBC after a failed SetKey", again.Encrypt(buf[:16], buf[:16], iv), errno.ENOKEY)

	for _, n := range []int{1, 15, 17, 31, 33} {
		want(fmt.Sprintf("ECB encrypt %d bytes", n), e.Encrypt(buf[:n], buf[:n]), errno.EINVAL)
		want(fmt.Sprintf("ECB decrypt %d bytes", n), e.Decrypt(buf[:n], buf[:n]), errno.EINVAL)
		want(fmt.Sprintf("CBC encrypt %d bytes", n), c.Encrypt(buf[:n], buf[:n], iv), errno.EINVAL)
		want(fmt.Sprintf("CBC decrypt %d bytes", n), c.Decrypt(buf[:n], buf[:n], iv), errno.EINVAL)
	}
	for _, n := range []int{0, 1, 15} {
		want(fmt.Sprintf("CTS encrypt %d bytes", n), cts.Encrypt(buf[:n], buf[:n], iv), errno.EINVAL)
		want(fmt.Sprintf("CTS decrypt %d bytes", n), cts.Decrypt(buf[:n], buf[:n], iv), errno.EINVAL)
		want(fmt.Sprintf("XTS encrypt %d bytes", n), x.Encrypt(buf[:n], buf[:n], iv), errno.EINVAL)
		want(fmt.Sprintf("XTS decrypt %d bytes", n), x.Decrypt(buf[:n], buf[:n], iv), errno.EINVAL)
	}
	// Zero-length ECB/CBC requests are no-ops.
	ivBefore := *iv
	if err := e.Encrypt(nil, nil); err != nil {
		t.Errorf("ECB of 0 bytes: %v", err)
	}
	if err := c.Encrypt(nil, nil, iv); err != nil || *iv != ivBefore {
		t.Errorf("CBC of 0 bytes: %v, IV %x", err, *iv)
	}

	// dst shorter than src, partial overlap, missing IV.
	want("XTS short dst", x.Encrypt(buf[:31], buf[32:64], iv), errno.EINVAL)
	want("XTS partial overlap", x.Encrypt(buf[1:65], buf[:64], iv), errno.EINVAL)
	want("CBC partial overlap", c.Decrypt(buf[16:80], buf[:64], iv), errno.EINVAL)
	want("ECB partial overlap", e.Encrypt(buf[:64], buf[8:72]), errno.EINVAL)
	want("CTS partial overlap", cts.Encrypt(buf[3:40], buf[:37], iv), errno.EINVAL)
	want("CTS nil IV", cts.Encrypt(buf[:32], buf[:32], nil), errno.EINVAL)
	want("XTS nil IV", x.Encrypt(buf[:32], buf[:32], nil), errno.EINVAL)
	want("CBC nil IV", c.Encrypt(buf[:32], buf[:32], nil), errno.EINVAL)
	// Adjacent, non-overlapping buffers are fine.
	if err := x.Encrypt(buf[64:128], buf[:64], iv); err != nil {
		t.Errorf("XTS adjacent buffers: %v", err)
	}

	// Wipe returns a driver to the unkeyed state.
	x.Wipe()
	want("XTS after Wipe", x.Encrypt(buf[:16], buf[:16], iv), errno.ENOKEY)
	if x.data != (Ctx{}) || x.tweak != (Ctx{}) {
		t.Error("XTS.Wipe left key material")
	}
	e.Wipe()
	c.Wipe()
	cts.Wipe()
	want("ECB after Wipe", e.Encrypt(buf[:16], buf[:16]), errno.ENOKEY)
	want("CBC after Wipe", c.Encrypt(buf[:16], buf[:16], iv), errno.ENOKEY)
	want("CTS after Wipe", cts.Encrypt(buf[:16], buf[:16], iv), errno.ENOKEY)
}

// Requests on a keyed driver do not allocate: a Crypto API model can run
// them per page or per filename.
func TestRequestsZeroAllocs(t *testing.T) {
	key := make([]byte, 64)
	for i := range key {
		key[i] = byte(i)
	}
	var e ECB
	var c CBC
	var cts CTSCBC
	var x XTS
	if e.SetKey(key[:32]) != nil || c.SetKey(key[:32]) != nil || cts.SetKey(key[:32]) != nil || x.SetKey(key) != nil {
		t.Fatal("SetKey failed")
	}
	page := make([]byte, 4096)
	name := make([]byte, 37)
	var iv [16]byte
	allocs := testing.AllocsPerRun(50, func() {
		_ = x.Encrypt(page, page, &iv)
		_ = x.Decrypt(page, page, &iv)
		_ = x.Encrypt(page[:4000+5], page[:4005], &iv)
		_ = e.Encrypt(page[:64], page[:64])
		_ = e.Decrypt(page[:64], page[:64])
		_ = c.Encrypt(page, page, &iv)
		_ = c.Decrypt(page, page, &iv)
		_ = cts.Encrypt(name, name, &iv)
		_ = cts.Decrypt(name, name, &iv)
		_ = x.SetKey(key)
		_ = cts.SetKey(key[:16])
	})
	if allocs != 0 {
		t.Errorf("requests allocated %v times per run, want 0", allocs)
	}
}

// Requests on one keyed XTS from several goroutines (each with its own
// buffers and IV) give the same results as sequential ones; run with -race
// this also checks that requests only read the tfm.
func TestXTSConcurrentRequests(t *testing.T) {
	key := make([]byte, 64)
	for i := range key {
		key[i] = byte(i * 3)
	}
	x := mustXTS(t, key)
	const workers = 4
	want := make([][]byte, workers)
	for w := range want {
		want[w] = make([]byte, 4096)
		for i := range want[w] {
			want[w][i] = byte(i + w)
		}
		if err := x.Encrypt(want[w], want[w], seqIV(uint64(w))); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func() {
			buf := make([]byte, 4096)
			for round := 0; round < 50; round++ {
				for i := range buf {
					buf[i] = byte(i + w)
				}
				if err := x.Encrypt(buf, buf, seqIV(uint64(w))); err != nil {
					done <- err
					return
				}
				if !bytes.Equal(buf, want[w]) {
					done <- fmt.Errorf("worker %d round %d: wrong ciphertext", w, round)
					return
				}
			}
			done <- nil
		}()
	}
	for w := 0; w < workers; w++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// TestXTSReqIV: EncryptReqIV is EncryptIV then EncryptTweak on the IV in
// place, gives Encrypt's bytes, and leaves the next tweak T0·x^n in the IV
// for whole-block requests, so that a request continued with that tweak
// (the glue's slow path, one walk step after another) gives the bytes of
// the whole request; on every implementation.
func TestXTSReqIV(t *testing.T) {
	key := make([]byte, 64)
	for i := range key {
		key[i] = byte(i*13 + 1)
	}
	pt := make([]byte, 4096+16+5)
	for i := range pt {
		pt[i] = byte(i * 31)
	}
	for _, im := range xtsImpls() {
		x := mustXTS(t, key)
		if err := x.SetImpl(im); err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{16, 512, 4096, 4096 + 16 + 5} {
			for _, dec := range []bool{false, true} {
				iv := seqIV(uint64(n))
				want := make([]byte, n)
				got := make([]byte, n)
				ivc := *iv
				var err error
				if dec {
					err = x.Decrypt(want, pt[:n], iv)
					if err == nil {
						err = x.DecryptReqIV(got, pt[:n], &ivc)
					}
				} else {
					err = x.Encrypt(want, pt[:n], iv)
					if err == nil {
						err = x.EncryptReqIV(got, pt[:n], &ivc)
					}
				}
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("%v n %d dec %v: ReqIV differs from Encrypt/Decrypt", im, n, dec)
				}
				// The next tweak: E(tweak key, IV)·x^m, m whole blocks.
				tw := *iv
				if err := x.EncryptIV(&tw); err != nil {
					t.Fatal(err)
				}
				for j := 0; j < n/16; j++ {
					gf128Double(&tw)
				}
				if ivc != tw {
					t.Errorf("%v n %d dec %v: IV after the request %x, want the next tweak %x", im, n, dec, ivc, tw)
				}
				if n%16 != 0 {
					continue
				}
				// Continuation: two steps from the tweak give the whole.
				tw = *iv
				x.EncryptIV(&tw)
				half := n / 2 &^ 15
				two := make([]byte, n)
				if dec {
					err = x.DecryptTweak(two[:half], pt[:half], &tw)
					if err == nil && n-half >= 16 {
						err = x.DecryptTweak(two[half:], pt[half:n], &tw)
					}
				} else {
					err = x.EncryptTweak(two[:half], pt[:half], &tw)
					if err == nil && n-half >= 16 {
						err = x.EncryptTweak(two[half:], pt[half:n], &tw)
					}
				}
				if half >= 16 && (err != nil || !bytes.Equal(two, want)) {
					t.Errorf("%v n %d dec %v: continued request differs (%v)", im, n, dec, err)
				}
			}
		}
	}
	var x XTS
	var iv [16]byte
	if x.EncryptIV(&iv) != errno.ENOKEY || x.EncryptTweak(make([]byte, 16), make([]byte, 16), &iv) != errno.ENOKEY {
		t.Error("unkeyed XTS accepted a request")
	}
}
