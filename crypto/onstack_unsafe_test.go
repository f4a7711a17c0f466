package crypto

import (
	"bytes"
	"testing"
	"unsafe"

	"pgregory.net/rapid"

	"github.com/vfslab/vfslab/kernel"
)

// TestSyncRequestOnStackSize: SYNC_SKCIPHER_REQUEST_ON_STACK declares
// sizeof(struct skcipher_request) + MAX_SYNC_SKCIPHER_REQSIZE bytes, and so
// does the model (its header copies living in the context area), while
// still reporting the full context room.
func TestSyncRequestOnStackSize(t *testing.T) {
	var r SyncSkcipherRequestOnStack
	if got, want := int(unsafe.Sizeof(r)), SizeofSkcipherRequest+MaxSyncSkcipherReqSize; got != want {
		t.Errorf("sizeof(SyncSkcipherRequestOnStack) = %d, want %d", got, want)
	}
	if r.CtxSize() != MaxSyncSkcipherReqSize {
		t.Errorf("CtxSize %d", r.CtxSize())
	}
}

// TestOnStackFastPathMatches: the on-stack request's shortcut (taken when
// the task counts nothing) and its full path (taken when it counts) give
// the same output, IV and error for every mode, including the requests
// the checks refuse: a zero length, a length the mode rejects, a short
// IV, short buffers, a partial overlap, a tfm without a key.
func TestOnStackFastPathMatches(t *testing.T) {
	api := NewAPI()
	plain := kernel.New().NewTask("plain") // Ev == nil: the shortcut
	counting := newTask()
	for _, m := range modeSpecs {
		tfm := keyed(t, api, m.name)
		unkeyed, err := api.AllocSyncSkcipher(counting, m.name, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		rapid.Check(t, func(rt *rapid.T) {
			n := rapid.IntRange(0, 80).Draw(rt, "n")
			ivLen := rapid.SampledFrom([]int{m.ivLen, 0, 8, 16, 32}).Draw(rt, "ivLen")
			overlap := rapid.IntRange(-1, 20).Draw(rt, "overlap") // -1: out of place; 0: in place
			short := rapid.Bool().Draw(rt, "short")
			enc := rapid.Bool().Draw(rt, "enc")
			use := tfm
			if rapid.IntRange(0, 9).Draw(rt, "keyless") == 0 {
				use = unkeyed
			}
			data := rapid.SliceOfN(rapid.Byte(), 200, 200).Draw(rt, "data")
			iv := rapid.SliceOfN(rapid.Byte(), ivLen, ivLen).Draw(rt, "iv")
			run := func(tk *kernel.Task) ([]byte, []byte, error) {
				buf := bytes.Clone(data)
				src := buf[:n]
				var dst []byte
				switch {
				case overlap < 0:
					dst = make([]byte, n)
				default:
					dst = buf[overlap : overlap+n]
				}
				if short && n > 0 {
					dst = dst[:n-1]
				}
				var ssg, dsg [1]Scatterlist
				SgInitOne(&ssg[0], src)
				SgInitOne(&dsg[0], dst)
				var req SyncSkcipherRequestOnStack
				req.Init(tk, use)
				req.SetCrypt(ssg[:], dsg[:], n, iv)
				var err error
				if enc {
					err = req.Encrypt(tk)
				} else {
					err = req.Decrypt(tk)
				}
				return append(buf, dst...), bytes.Clone(req.IV()), err
			}
			out1, iv1, err1 := run(plain)
			out2, iv2, err2 := run(counting)
			if err1 != err2 || !bytes.Equal(out1, out2) || !bytes.Equal(iv1, iv2) {
				rt.Fatalf("%s: shortcut (%v, %x, iv %x) differs from the full path (%v, %x, iv %x)",
					m.name, err1, out1, iv1, err2, out2, iv2)
			}
		})
		tfm.Free(counting)
		unkeyed.Free(counting)
	}
}
