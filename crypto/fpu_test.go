package crypto

import (
	"testing"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/crypto/aes"
	"github.com/vfslab/vfslab/kernel"
)

// TestFPUSections pins the kernel_fpu_begin/end sections the x86 code
// enters, per operation, against aesni-intel_glue.c and
// lib/crypto/x86/aes.h: setkey (aes_set_key_common, one per AES key), one
// per skcipher walk step of ecb/cbc, one or two for cts, one per
// xts_crypt (so one per data unit of a whole-bio request), one per block
// of the "aes-aesni" cipher under a template, one per AES-library call;
// and none at all without the arch drivers.
func TestFPUSections(t *testing.T) {
	if !aes.Accelerated() {
		t.Skip("no AES-NI: the model registers no x86 drivers")
	}
	api := NewAPI()
	fpu := func(f func(tk *kernel.Task)) uint64 {
		tk := newTask()
		f(tk)
		return tk.Ev.Get(EvFPUBegin)
	}
	run := func(name string, n int) (setkey, req uint64) {
		tk := newTask()
		tfm, err := api.AllocSyncSkcipher(tk, name, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer tfm.Free(tk)
		setkey = fpu(func(tk *kernel.Task) {
			if err := tfm.SetKey(tk, make([]byte, tfm.MaxKeySize())); err != nil {
				t.Fatal(err)
			}
		})
		req = fpu(func(tk *kernel.Task) {
			if err := cryptOnce(t, tk, &tfm.Skcipher, make([]byte, n), make([]byte, tfm.IVSize()), true); err != nil {
				t.Fatal(err)
			}
		})
		return setkey, req
	}
	for _, c := range []struct {
		name        string
		n           int
		setkey, req uint64
	}{
		{"xts(aes)", 4096, 2, 1},
		{"xts(aes)", 4096 + 7, 2, 1},
		{"ecb(aes)", 64, 1, 1},
		{"cbc(aes)", 4096, 1, 1},
		{"cts(cbc(aes))", 16, 1, 1}, // cbc_blocks = 1, no stealing step
		{"cts(cbc(aes))", 32, 1, 1}, // cbc_blocks = 0, the stealing step
		{"cts(cbc(aes))", 48, 1, 2}, // both
		{"cts(cbc(aes))", 255, 1, 2},
		{"ecb(aes-aesni)", 64, 1, 4},                   // the ecb template: aesni_encrypt per block
		{"essiv(cbc(aes),sha256)", 4096, 1 + 1, 1 + 1}, // inner cbc-aes-aesni + the aes-aesni IV cipher
	} {
		setkey, req := run(c.name, c.n)
		if setkey != c.setkey || req != c.req {
			t.Errorf("%s %d bytes: kernel_fpu sections setkey %d request %d, want %d %d", c.name, c.n, setkey, req, c.setkey, c.req)
		}
	}
	// Without the arch drivers everything is aes-generic: no FPU.
	gen := NewAPIOptions(Options{NoArchDrivers: true})
	tk := newTask()
	tfm, _ := gen.AllocSyncSkcipher(tk, "xts(aes)", 0, 0)
	tfm.SetKey(tk, make([]byte, 64))
	cryptOnce(t, tk, &tfm.Skcipher, make([]byte, 4096), make([]byte, 16), true)
	if n := tk.Ev.Get(EvFPUBegin); n != 0 {
		t.Errorf("xts(ecb(aes-generic)): %d kernel_fpu sections, want 0", n)
	}
	tfm.Free(tk)
	// A whole-bio request: one xts_crypt, so one section, per data unit.
	x := keyed(t, api, "xts(aes)")
	bio := block.NewBio(2)
	bio.AddFolio(block.NewFolio(0, 0), block.PageSize, 0)
	bio.AddFolio(block.NewFolio(1, 1), 2*block.PageSize, 0)
	if n := fpu(func(tk *kernel.Task) {
		if err := bioCrypt(tk, x, bio, 12, make([]byte, 16)); err != nil {
			t.Fatal(err)
		}
	}); n != 3 {
		t.Errorf("bio of 3 data units: %d kernel_fpu sections, want 3", n)
	}
	x.Free(newTask())
	// The AES library (Linux 7.0+ on x86): one for the AES-128 key, one per
	// aes_encrypt; none for an AES-192 key's generic expansion.
	var ctx aes.Ctx
	if n := fpu(func(tk *kernel.Task) {
		AESExpandKey(tk, &ctx, make([]byte, 16))
		AESEncryptBlocks(tk, &ctx, make([]byte, 64), make([]byte, 64))
	}); n != 1+4 {
		t.Errorf("AES library, 16-byte key and 4 blocks: %d sections, want 5", n)
	}
	if n := fpu(func(tk *kernel.Task) { AESExpandKey(tk, &ctx, make([]byte, 24)) }); n != 0 {
		t.Errorf("AES-192 key expansion: %d sections, want 0", n)
	}
}
