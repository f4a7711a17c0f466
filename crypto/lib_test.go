package crypto

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/crypto/aes"
	"github.com/vfslab/vfslab/errno"
	"golang.org/x/crypto/hkdf"
	"pgregory.net/rapid"
)

// RFC 4231 section 4: HMAC-SHA-512 test cases 1, 2, 3, 4, 6 and 7 (case 5,
// truncated output, is left out).
var rfc4231 = []struct {
	name      string
	key, data string // hex
	mac       string
}{
	{"case 1", strings.Repeat("0b", 20), hex.EncodeToString([]byte("Hi There")),
		"87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"},
	{"case 2", hex.EncodeToString([]byte("Jefe")), hex.EncodeToString([]byte("what do ya want for nothing?")),
		"164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"},
	{"case 3", strings.Repeat("aa", 20), strings.Repeat("dd", 50),
		"fa73b0089d56a284efb0f0756c890be9b1b5dbdd8ee81a3655f83e33b2279d39bf3e848279a722c806b485a47e67c807b946a337bee8942674278859e13292fb"},
	{"case 4", "0102030405060708090a0b0c0d0e0f10111213141516171819", strings.Repeat("cd", 50),
		"b0ba465637458c6990e5a8c5f61d4af7e576d97ff94b872de76f8050361ee3dba91ca5c11aa25eb4d679275cc5788063a5f19741120c4f2de2adebeb10a298dd"},
	{"case 6", strings.Repeat("aa", 131), hex.EncodeToString([]byte("Test Using Larger Than Block-Size Key - Hash Key First")),
		"80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f3526b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598"},
	{"case 7", strings.Repeat("aa", 131), hex.EncodeToString([]byte("This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.")),
		"e37b6a775dc87dbaa4dfa9f96e5e3ffddebd71f8867289865df5a32d20cdc944b6022cac3c4982b10d5eeb55c3e4de15134676fb6de0446065c97440fa8c6a58"},
}

func TestHMACSHA512RFC4231(t *testing.T) {
	for _, c := range rfc4231 {
		got := HMACSHA512(unhex(t, c.key), unhex(t, c.data))
		if hex.EncodeToString(got[:]) != c.mac {
			t.Errorf("%s: %x, want %s", c.name, got, c.mac)
		}
	}
}

// RFC 5869 Appendix A, test cases 1 and 3 (SHA-256).
func TestHKDFRFC5869(t *testing.T) {
	for _, c := range []struct {
		ikm, salt, info, prk, okm string
	}{
		{strings.Repeat("0b", 22), "000102030405060708090a0b0c", "f0f1f2f3f4f5f6f7f8f9",
			"077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5",
			"3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"},
		{strings.Repeat("0b", 22), "", "",
			"19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04",
			"8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"},
	} {
		prk := HKDFExtract(sha256.New, unhex(t, c.salt), unhex(t, c.ikm))
		if hex.EncodeToString(prk) != c.prk {
			t.Errorf("PRK %x, want %s", prk, c.prk)
		}
		okm := make([]byte, 42)
		if err := HKDFExpand(sha256.New, prk, unhex(t, c.info), okm); err != nil {
			t.Fatal(err)
		}
		if hex.EncodeToString(okm) != c.okm {
			t.Errorf("OKM %x, want %s", okm, c.okm)
		}
	}
}

// TestHKDFSHA512FscryptIdentifier checks the public fscrypt check value: the
// v2 key identifier of the master key 0x01..0x40 is HKDF-SHA512 (no salt)
// expanded with info "fscrypt\0" || 1 to 16 bytes.
func TestHKDFSHA512FscryptIdentifier(t *testing.T) {
	key := make([]byte, 64)
	for i := range key {
		key[i] = byte(i + 1)
	}
	prk := HKDFExtractSHA512(nil, key)
	id := make([]byte, 16)
	if err := HKDFExpandSHA512(prk[:], []byte("fscrypt\x00\x01"), id); err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(id); got != "69b2f6edeee720cce0577937eb8a6751" {
		t.Fatalf("identifier %s", got)
	}
}

// TestHKDFSHA512Oracle compares with golang.org/x/crypto/hkdf for random
// inputs and lengths, and checks the length limit.
func TestHKDFSHA512Oracle(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ikm := rapid.SliceOfN(rapid.Byte(), 0, 100).Draw(rt, "ikm")
		salt := rapid.SliceOfN(rapid.Byte(), 0, 80).Draw(rt, "salt")
		info := rapid.SliceOfN(rapid.Byte(), 0, 80).Draw(rt, "info")
		n := rapid.IntRange(0, 255*64).Draw(rt, "n")
		prk := HKDFExtractSHA512(salt, ikm)
		if want := hkdf.Extract(sha512.New, ikm, salt); !bytes.Equal(prk[:], want) {
			rt.Fatalf("extract %x, want %x", prk, want)
		}
		okm := make([]byte, n)
		if err := HKDFExpandSHA512(prk[:], info, okm); err != nil {
			rt.Fatal(err)
		}
		want := make([]byte, n)
		if _, err := hkdf.Expand(sha512.New, prk[:], info).Read(want); err != nil {
			rt.Fatal(err)
		}
		if !bytes.Equal(okm, want) {
			rt.Fatalf("expand differs for n=%d", n)
		}
	})
	prk := HKDFExtractSHA512(nil, []byte("k"))
	if err := HKDFExpandSHA512(prk[:], nil, make([]byte, 255*64+1)); err != errno.EINVAL {
		t.Errorf("over-long expand: %v, want EINVAL", err)
	}
	if err := HKDFExpandSHA512(prk[:10], nil, make([]byte, 16)); err != errno.EINVAL {
		t.Errorf("short PRK: %v, want EINVAL", err)
	}
}

// SipHash-2-4 reference vectors (vectors_sip64 of the SipHash reference
// implementation, also in lib/siphash_kunit.c): key 00..0f, message
// 00..len-1.
var siphashVectors = map[int]uint64{
	0: 0x726fdb47dd0e0e31, 1: 0x74f839c593dc67fd, 2: 0x0d6c8009d9a94f5a, 3: 0x85676696d7fb7e2d,
	4: 0xcf2794e0277187b7, 5: 0x18765564cd99a68d, 6: 0xcbc9466e58fee3ce, 7: 0xab0200f58b01d137,
	8: 0x93f5f5799a932462, 9: 0x9e0082df0ba9e4b0, 10: 0x7a5dbbc594ddb9f3, 11: 0xf4b32f46226bada7,
	12: 0x751e8fbc860ee5fb, 13: 0x14ea5627c0843d90, 14: 0xf723ca908e7af2ee, 15: 0xa129ca6149be45e5,
	16: 0x3f2acc7f57c29bdb, 31: 0x32d892fad841c342, 63: 0x958a324ceb064572,
}

func TestSiphashVectors(t *testing.T) {
	var kb [16]byte
	for i := range kb {
		kb[i] = byte(i)
	}
	key := SiphashKeyFromBytes(&kb)
	if key.Key[0] != 0x0706050403020100 || key.Key[1] != 0x0f0e0d0c0b0a0908 {
		t.Fatalf("key words %x", key.Key)
	}
	msg := make([]byte, 64)
	for i := range msg {
		msg[i] = byte(i)
	}
	for n, want := range siphashVectors {
		if got := Siphash(msg[:n], &key); got != want {
			t.Errorf("len %d: %#x, want %#x", n, got, want)
		}
	}
	// siphash_1u64 and siphash_2u64 hash the little-endian words.
	if got, want := Siphash1u64(binary.LittleEndian.Uint64(msg), &key), siphashVectors[8]; got != want {
		t.Errorf("siphash_1u64 %#x, want %#x", got, want)
	}
	if got, want := Siphash2u64(binary.LittleEndian.Uint64(msg), binary.LittleEndian.Uint64(msg[8:]), &key), siphashVectors[16]; got != want {
		t.Errorf("siphash_2u64 %#x, want %#x", got, want)
	}
}

func TestAESLibrary(t *testing.T) {
	tk := newTask()
	var ctx aes.Ctx
	if err := AESExpandKey(tk, &ctx, make([]byte, 15)); err != errno.EINVAL {
		t.Fatalf("15-byte key: %v", err)
	}
	if err := AESExpandKey(tk, &ctx, unhex(t, sp80038aKey)); err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 64)
	if err := AESEncryptBlocks(tk, &ctx, out, unhex(t, sp80038aPT)); err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(out) != sp80038aECB {
		t.Errorf("aes_encrypt blocks %x", out)
	}
	if err := AESEncryptBlocks(tk, &ctx, out, out[:17]); err != errno.EINVAL {
		t.Errorf("partial block: %v", err)
	}
	if tk.Ev.Get(EvKeyExpansion) != 1 || tk.Ev.Get(EvAESBlocks) != 4 {
		t.Errorf("counters: %v", tk.Ev)
	}
	if got := SHA256([]byte("abc")); hex.EncodeToString(got[:]) != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("sha256(abc) = %x", got)
	}
	if got := SHA512([]byte("abc")); hex.EncodeToString(got[:8]) != "ddaf35a193617aba" {
		t.Errorf("sha512(abc) = %x", got)
	}
}
