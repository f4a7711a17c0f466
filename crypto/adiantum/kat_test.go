package adiantum

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math/bits"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Known-answer tests. The vector files in testdata/ are data taken from
// google/adiantum (the Adiantum reference implementation's published test
// vectors, MIT licensed); each file's "source" field names the file and commit
// it was extracted from, and vectors flagged linux_testmgr are the ones Linux
// carries in crypto/testmgr.h. See testdata/README.

// hexBytes is a byte string stored as hex in the vector files.
type hexBytes []byte

func (h *hexBytes) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	d, err := hex.DecodeString(s)
	*h = d
	return err
}

// loadVectors reads testdata/name into a slice of V.
func loadVectors[V any](t *testing.T, name string) []V {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Source  string `json:"source"`
		Vectors []V    `json:"vectors"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if file.Source == "" || len(file.Vectors) == 0 {
		t.Fatalf("%s: no source note or no vectors", name)
	}
	return file.Vectors
}

type cipherVector struct {
	Name       string   `json:"name"`
	Key        hexBytes `json:"key"`
	Tweak      hexBytes `json:"tweak"`
	Plaintext  hexBytes `json:"plaintext"`
	Ciphertext hexBytes `json:"ciphertext"`
	Testmgr    bool     `json:"linux_testmgr"`
}

func TestKnownAnswers(t *testing.T) {
	vecs := loadVectors[cipherVector](t, "adiantum_xchacha12_aes.json")
	var testmgr int
	lengths := map[int]bool{}
	for _, v := range vecs {
		if v.Testmgr {
			testmgr++
		}
		lengths[len(v.Plaintext)] = true
		c, err := New(v.Key)
		if err != nil {
			t.Fatalf("%s: New: %v", v.Name, err)
		}
		// Separate buffers.
		got := make([]byte, len(v.Plaintext))
		if err := c.Encrypt(got, v.Plaintext, v.Tweak); err != nil {
			t.Fatalf("%s: Encrypt: %v", v.Name, err)
		}
		if diff := cmp.Diff(hex.EncodeToString(v.Ciphertext), hex.EncodeToString(got)); diff != "" {
			t.Errorf("%s: ciphertext mismatch (-want +got):\n%s", v.Name, diff)
		}
		if err := c.Decrypt(got, v.Ciphertext, v.Tweak); err != nil {
			t.Fatalf("%s: Decrypt: %v", v.Name, err)
		}
		if !bytes.Equal(got, v.Plaintext) {
			t.Errorf("%s: decryption mismatch", v.Name)
		}
		// In place.
		buf := bytes.Clone(v.Plaintext)
		if err := c.Encrypt(buf, buf, v.Tweak); err != nil || !bytes.Equal(buf, v.Ciphertext) {
			t.Errorf("%s: in-place encryption mismatch (err %v)", v.Name, err)
		}
		if err := c.Decrypt(buf, buf, v.Tweak); err != nil || !bytes.Equal(buf, v.Plaintext) {
			t.Errorf("%s: in-place decryption mismatch (err %v)", v.Name, err)
		}
	}
	if testmgr != 6 {
		t.Errorf("found %d linux_testmgr vectors, want the 6 of adiantum_xchacha12_aes_tv_template", testmgr)
	}
	for _, n := range []int{16, 31, 128, 512, 1536, 4096} {
		if !lengths[n] {
			t.Errorf("no vector of length %d", n)
		}
	}
}

// TestKnownAnswersOtherTweaks checks the construction with the tweak lengths
// the Adiantum specification allows but Linux's API does not (0 and 17 bytes),
// through the internal entry points.
func TestKnownAnswersOtherTweaks(t *testing.T) {
	for _, v := range loadVectors[cipherVector](t, "adiantum_xchacha12_aes_other_tweaks.json") {
		c, err := New(v.Key)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(v.Plaintext))
		c.encrypt(got, v.Plaintext, v.Tweak)
		if !bytes.Equal(got, v.Ciphertext) {
			t.Errorf("%s: got %x, want %x", v.Name, got, v.Ciphertext)
		}
		c.decrypt(got, v.Ciphertext, v.Tweak)
		if !bytes.Equal(got, v.Plaintext) {
			t.Errorf("%s: decryption mismatch", v.Name)
		}
		// The public API refuses these tweaks.
		if err := c.Encrypt(got, v.Plaintext, v.Tweak); err == nil {
			t.Errorf("%s: Encrypt accepted a %d-byte tweak", v.Name, len(v.Tweak))
		}
	}
}

func TestNHPoly1305KnownAnswers(t *testing.T) {
	type vector struct {
		Name    string   `json:"name"`
		Key     hexBytes `json:"key"`
		Message hexBytes `json:"message"`
		Hash    hexBytes `json:"hash"`
		Testmgr bool     `json:"linux_testmgr"`
	}
	vecs := loadVectors[vector](t, "nhpoly1305.json")
	testmgr := 0
	for _, v := range vecs {
		if len(v.Key) != nhpolyKeySize {
			t.Fatalf("%s: key is %d bytes", v.Name, len(v.Key))
		}
		if v.Testmgr {
			testmgr++
		}
		var k nhpolyKey
		k.setKey(v.Key)
		lo, hi := nhpoly1305(&k, v.Message)
		got := make([]byte, 16)
		binary.LittleEndian.PutUint64(got[0:], lo)
		binary.LittleEndian.PutUint64(got[8:], hi)
		if !bytes.Equal(got, v.Hash) {
			t.Errorf("%s: got %x, want %x", v.Name, got, v.Hash)
		}
	}
	if testmgr != 6 {
		t.Errorf("found %d linux_testmgr vectors, want the 6 of nhpoly1305_tv_template", testmgr)
	}
}

// TestPoly1305KnownAnswers checks the unmasked Poly1305 core by adding the
// mask s to its output, which must give the full Poly1305 MAC.
func TestPoly1305KnownAnswers(t *testing.T) {
	type vector struct {
		Name    string   `json:"name"`
		Key     hexBytes `json:"key"`
		Mask    hexBytes `json:"mask"`
		Message hexBytes `json:"message"`
		MAC     hexBytes `json:"mac"`
	}
	for _, v := range loadVectors[vector](t, "poly1305.json") {
		var k poly1305Key
		k.setKey(v.Key)
		var st poly1305State
		full := len(v.Message) &^ 15
		st.blocks(&k, v.Message[:full])
		if full < len(v.Message) {
			st.partial(&k, v.Message[full:])
		}
		lo, hi := st.emit()
		lo, c := bits.Add64(lo, binary.LittleEndian.Uint64(v.Mask[0:]), 0)
		hi, _ = bits.Add64(hi, binary.LittleEndian.Uint64(v.Mask[8:]), c)
		got := make([]byte, 16)
		binary.LittleEndian.PutUint64(got[0:], lo)
		binary.LittleEndian.PutUint64(got[8:], hi)
		if !bytes.Equal(got, v.MAC) {
			t.Errorf("%s (%d bytes): got %x, want %x", v.Name, len(v.Message), got, v.MAC)
		}
	}
}

// xchachaXOR is a test helper: XChaCha with a 32-byte key and 24-byte nonce
// from stream position 0.
func xchachaXOR(dst, src, key, nonce []byte, rounds int) {
	var k [8]uint32
	for i := range k {
		k[i] = binary.LittleEndian.Uint32(key[4*i:])
	}
	var n [xchachaNonceLen]byte
	copy(n[:], nonce)
	var s xchachaStream
	s.init(&k, &n, 0, rounds)
	s.xorKeyStream(dst, src)
}

func TestXChaCha12KnownAnswers(t *testing.T) {
	type vector struct {
		Name      string   `json:"name"`
		Key       hexBytes `json:"key"`
		Nonce     hexBytes `json:"nonce"`
		Offset    int      `json:"offset"` // in 64-byte blocks
		Keystream hexBytes `json:"keystream"`
	}
	for _, v := range loadVectors[vector](t, "xchacha12.json") {
		ks := make([]byte, v.Offset*chachaBlockSize+len(v.Keystream))
		xchachaXOR(ks, ks, v.Key, v.Nonce, chachaRounds)
		if got := ks[v.Offset*chachaBlockSize:]; !bytes.Equal(got, v.Keystream) {
			t.Errorf("%s: got %x, want %x", v.Name, got, v.Keystream)
		}
	}
}

// TestXChaCha12Testmgr is the last vector of Linux crypto/testmgr.h
// xchacha12_tv_template (key 80..9f, nonce 40..56 58, stream position 0; the
// plaintext is the text below), transcribed from the kernel source.
func TestXChaCha12Testmgr(t *testing.T) {
	key := make([]byte, 32)
	for i := range key {
		key[i] = 0x80 + byte(i)
	}
	nonce := make([]byte, 24)
	for i := range nonce {
		nonce[i] = 0x40 + byte(i)
	}
	nonce[23] = 0x58
	pt := []byte("The dhole (pronounced \"dole\") is also known as the Asiatic wild dog, " +
		"red dog, and whistling dog. It is about the size of a German shepherd but looks " +
		"more like a long-legged fox. This highly elusive and skilled jumper is classified " +
		"with wolves, coyotes, jackals, and foxes in the taxonomic family Canidae.")
	want, _ := hex.DecodeString("" +
		"9f1aab8a95f47ecdee34c039d6234394f601c17f6091a5234a8ae6b1148bd758" +
		"ee02adabce1e7ddff9492769d08d0c206e17c4ae877ac66191e28e0a1d61cc38" +
		"02644349c6b2595942e79d83006090d2b9cd976ec79571bc23315807b3b4ac0b" +
		"876456e5e3ec63a1718c084833202981ea012520c3dae6ee6a03f6684d26a091" +
		"9e44b8c1c08f5a6ac0cdbf245e4066d24224b5bfc1eb126056beb1a6c40ffc49" +
		"699fcc065ce326d752c042e8b476c3eeb297e33761295ab58ee88cc538cccbec" +
		"641aa9125ff779df64ca774ebdf983a013273f3103633026270b3eb32313610b" +
		"701dd4ad851ebfdfc68e4d08cc7e77bd1e1877383afec05d16fcf0a92fe917c7" +
		"d3231718a3e654776f1bbe8a6e7eca9708053676af127a42f77ac235c3b49340" +
		"541490a04d651c37507044296d6e6268")
	if len(pt) != 304 || len(want) != 304 {
		t.Fatalf("transcription error: plaintext %d bytes, ciphertext %d bytes", len(pt), len(want))
	}
	got := make([]byte, len(pt))
	xchachaXOR(got, pt, key, nonce, chachaRounds)
	if !bytes.Equal(got, want) {
		t.Errorf("got %x\nwant %x", got, want)
	}
}
