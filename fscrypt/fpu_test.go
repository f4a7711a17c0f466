package fscrypt_test

import (
	"bytes"
	"testing"

	"github.com/vfslab/vfslab/crypto"
	"github.com/vfslab/vfslab/crypto/aes"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
)

// TestV1KDFFPUSections counts the kernel_fpu_begin/end sections one v1
// key derivation enters per fscrypt-v1-kdf variant, on an x86 machine with
// AES-NI: base and sync go through "ecb(aes)" = ecb-aes-aesni, one section
// in setkey (aes_set_key_common) and one for the walk step of ecb_encrypt;
// aeslib (Linux 7.1) uses the AES library, whose x86 backend
// (lib/crypto/x86/aes.h, since 7.0) enters one section to prepare the
// AES-128 nonce key and one per aes_encrypt: 1 + keysize/16. All three
// derive the same key.
func TestV1KDFFPUSections(t *testing.T) {
	if !aes.Accelerated() {
		t.Skip("no AES-NI: no x86 drivers, no FPU sections")
	}
	master := bare.PlaintextStream("fpu master", 64)
	nonce := [fscrypt.FileNonceSize]byte{1, 2, 3}
	var keys [][]byte
	for _, c := range []struct {
		variant string
		size    int
		want    uint64
	}{
		{"base", 64, 2}, {"sync", 64, 2}, {"aeslib", 64, 1 + 4},
		{"base", 32, 2}, {"sync", 32, 2}, {"aeslib", 32, 1 + 2},
	} {
		task := variantTasks(t, fscrypt.V1KDFPatch)[c.variant]
		sb := newSB(t)
		out := make([]byte, c.size)
		before := task.Ev.Get(crypto.EvFPUBegin)
		if err := fscrypt.DeriveV1Key(task, sb, master, nonce, out); err != nil {
			t.Fatal(err)
		}
		if got := task.Ev.Get(crypto.EvFPUBegin) - before; got != c.want {
			t.Errorf("%s, %d-byte key: %d kernel_fpu sections per derivation, want %d", c.variant, c.size, got, c.want)
		}
		if c.size == 64 {
			keys = append(keys, out)
		}
	}
	if !bytes.Equal(keys[0], keys[1]) || !bytes.Equal(keys[0], keys[2]) {
		t.Error("the variants derive different keys")
	}
}
