package fscrypt_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/crypto"
	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/patch"
)

// engineFS returns a filesystem whose Crypto API has an asynchronous
// hardware engine (reqsize 512, priority 1000) for the AES modes, and a
// v2 directory and file with set-up keys under the variants of task's
// kernel.
func engineFS(t *testing.T, task *kernel.Task) (*bare.SB, *crypto.Engine, *bare.Inode, *bare.Inode) {
	return engineFSReqsize(t, task, 0)
}

// engineFSReqsize is engineFS with an engine of the given reqsize (0:
// the default, 512).
func engineFSReqsize(t *testing.T, task *kernel.Task, reqsize int) (*bare.SB, *crypto.Engine, *bare.Inode, *bare.Inode) {
	t.Helper()
	sb := bare.NewSB(crypto.NewAPI())
	e, err := sb.API.RegisterEngine(task, crypto.EngineConfig{Name: "qce", Workers: 2, ReqSize: reqsize})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Stop)
	id, _ := addKey(t, task, sb, 2, bytes.Repeat([]byte{0x33}, 64))
	p := v2Policy(id, fscrypt.PolicyFlagsPad16)
	dir := encryptedInode(t, task, sb, p, bytes.Repeat([]byte{1}, 16), 2, fscrypt.SIFDIR|0o755, 12)
	file := encryptedInode(t, task, sb, p, bytes.Repeat([]byte{2}, 16), 3, fscrypt.SIFREG|0o644, 12)
	return sb, e, dir, file
}

// fnameOp encrypts name in dir at a simulator boundary.
func fnameOp(task *kernel.Task, dir fscrypt.Inode, name []byte) (out []byte, err error) {
	defer task.Recover(&err)
	n, _ := fscrypt.FnameEncryptedSize(dir, len(name), 255)
	out = make([]byte, n)
	err = fscrypt.FnameEncrypt(task, dir, name, out)
	return out, err
}

// TestFnameOnstackAsyncDriver is seed 000 against an asynchronous
// hardware driver registered above the software ones: base selects it and
// waits for each completion; v2's BUG_ON fires (a reported BUG: the
// operation fails and the program goes on); upstream never selects it.
// Where they succeed, all give the software driver's bytes.
func TestFnameOnstackAsyncDriver(t *testing.T) {
	name := []byte("hello, world")
	// Reference: software only.
	refTask := newTask(t)
	sbRef := newSB(t)
	id, _ := addKey(t, refTask, sbRef, 2, bytes.Repeat([]byte{0x33}, 64))
	refDir := encryptedInode(t, refTask, sbRef, v2Policy(id, fscrypt.PolicyFlagsPad16), bytes.Repeat([]byte{1}, 16), 2, fscrypt.SIFDIR|0o755, 12)
	want, err := fnameOp(refTask, refDir, name)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("base", func(t *testing.T) {
		task := newTask(t)
		_, e, dir, _ := engineFS(t, task)
		ci := dir.CryptInfo()
		if !strings.Contains(ci.String(), "driver=cts-cbc-aes-qce") {
			t.Fatalf("base did not pick the engine: %s", ci.String())
		}
		got, err := fnameOp(task, dir, name)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("encrypt: %x, %v; want %x", got, err, want)
		}
		if task.Ev.Get(sleepEvent(t)) == 0 || e.Stats().Completed == 0 {
			t.Errorf("no wait for the engine: %+v", e.Stats())
		}
		buf, _ := fscrypt.FnameAllocBuffer(task, 255)
		n, err := fscrypt.FnameDiskToUsr(task, dir, 0, 0, got, buf)
		if err != nil || !bytes.Equal(buf[:n], name) {
			t.Errorf("decrypt: %q, %v", buf[:n], err)
		}
		fscrypt.FnameFreeBuffer(task, buf)
	})

	t.Run("v2", func(t *testing.T) {
		task := newTaskWith(t, patch.Set{}.MustWith(fscrypt.FnameOnstackPatch, "v2"))
		_, e, dir, _ := engineFS(t, task)
		for i := 0; i < 3; i++ {
			_, err := fnameOp(task, dir, name)
			b, ok := kernel.AsBug(err)
			if !ok || b.Kind != "BUG" || !strings.Contains(b.Msg, "MAX_SKCIPHER_REQSIZE < crypto_skcipher_reqsize(tfm)") {
				t.Fatalf("attempt %d: %v, want the seed's BUG_ON", i, err)
			}
		}
		if n := task.K.Bugs.Len(); n != 3 {
			t.Errorf("%d BUG reports, want 3", n)
		}
		if !task.K.Log.Contains("MAX_SKCIPHER_REQSIZE") {
			t.Errorf("no BUG in the log: %q", task.K.Log.Lines())
		}
		if e.Stats().Submitted != 0 {
			t.Errorf("a request reached the engine: %+v", e.Stats())
		}
		// The program goes on: the same machine still works for a
		// software-only directory.
		sb2 := bare.NewSB(crypto.NewAPI())
		id2, _ := addKey(t, task, sb2, 2, bytes.Repeat([]byte{0x33}, 64))
		d2 := encryptedInode(t, task, sb2, v2Policy(id2, fscrypt.PolicyFlagsPad16), bytes.Repeat([]byte{1}, 16), 2, fscrypt.SIFDIR|0o755, 12)
		if got, err := fnameOp(task, d2, name); err != nil || !bytes.Equal(got, want) {
			t.Errorf("after the BUG: %x, %v", got, err)
		}
	})

	t.Run("upstream", func(t *testing.T) {
		task := newTaskWith(t, patch.Set{}.MustWith(fscrypt.FnameOnstackPatch, "upstream"))
		_, e, dir, file := engineFS(t, task)
		for _, i := range []*bare.Inode{dir, file} {
			if s := i.CryptInfo().String(); strings.Contains(s, "qce") {
				t.Fatalf("upstream picked the engine: %s", s)
			}
		}
		got, err := fnameOp(task, dir, name)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("encrypt: %x, %v", got, err)
		}
		if task.Ev.Get(sleepEvent(t)) != 0 || e.Stats().Submitted != 0 {
			t.Errorf("upstream waited or used the engine: %+v", e.Stats())
		}
	})
}

// TestV1KDFAsyncDriver: with an asynchronous ecb(aes) engine, base derives
// through it (waiting), sync never selects it, and all agree.
func TestV1KDFAsyncDriver(t *testing.T) {
	master := bytes.Repeat([]byte{0x77}, 64)
	nonce := [16]byte{9, 8, 7}
	var keys [][]byte
	for _, variant := range fscrypt.V1KDFPatch.VariantNames() {
		task := newTaskWith(t, patch.Set{}.MustWith(fscrypt.V1KDFPatch, variant))
		sb := bare.NewSB(crypto.NewAPI())
		e, err := sb.API.RegisterEngine(task, crypto.EngineConfig{Name: "ccp", Algorithms: []string{"ecb(aes)"}})
		if err != nil {
			t.Fatal(err)
		}
		out := make([]byte, 64)
		if err := fscrypt.DeriveV1Key(task, sb, master, nonce, out); err != nil {
			t.Fatalf("%s: %v", variant, err)
		}
		e.Stop()
		used := e.Stats().Completed > 0
		if used != (variant == "base") {
			t.Errorf("%s: engine used %t", variant, used)
		}
		keys = append(keys, out)
	}
	if !bytes.Equal(keys[0], keys[1]) || !bytes.Equal(keys[0], keys[2]) {
		t.Errorf("variants disagree: %x", keys)
	}
}

func sleepEvent(t *testing.T) events.Event {
	e, ok := events.Lookup("crypto_wait_sleep")
	if !ok {
		t.Fatal("no crypto_wait_sleep event")
	}
	return e
}

// TestFnameOnstackIssue9 pins issue 9's expectations for seed 000 at the
// fscrypt level, each variant under its own kernel's rules, with an
// asynchronous hardware engine whose reqsize fits in 384 bytes (256) and
// one whose reqsize does not (512): per variant, the names' bytes (the
// software's), the requests left live at
// fscrypt_fname_encrypt:skcipher_request, the DMA-API warnings, the BUGs.
//
//   - base: the engine is used for both directions, every heap request is
//     freed: clean with either engine;
//   - v2, reqsize 256: encryption kmallocs a request per name and leaks
//     it (the engine gets heap memory: no DMA report); decryption hands
//     the engine the on-stack request, which Linux 6.6 queues:
//     "DMA-API: qce qce.0: device driver maps memory from stack";
//   - v2, reqsize 512: the BUG_ON, in both directions;
//   - upstream: the engine is never chosen: clean.
func TestFnameOnstackIssue9(t *testing.T) {
	name := []byte("hello, world")
	const names = 5
	refTask := newTask(t)
	sbRef := newSB(t)
	id, _ := addKey(t, refTask, sbRef, 2, bytes.Repeat([]byte{0x33}, 64))
	refDir := encryptedInode(t, refTask, sbRef, v2Policy(id, fscrypt.PolicyFlagsPad16), bytes.Repeat([]byte{1}, 16), 2, fscrypt.SIFDIR|0o755, 12)
	want, err := fnameOp(refTask, refDir, name)
	if err != nil {
		t.Fatal(err)
	}
	site, ok := kmem.LookupSite("fscrypt_fname_encrypt:skcipher_request")
	if !ok {
		t.Fatal("no encryption request site")
	}
	for _, tc := range []struct {
		variant  string
		reqsize  int
		leaked   int64 // requests live after the run
		dmaWarns int   // DMA-API warnings (num_errors = 1: at most one)
		dmaErrs  uint64
		bug      bool
	}{
		{"base", 256, 0, 0, 0, false},
		{"base", 512, 0, 0, 0, false},
		{"v2", 256, names, 1, names, false},
		{"v2", 512, 0, 0, 0, true},
		{"upstream", 256, 0, 0, 0, false},
		{"upstream", 512, 0, 0, 0, false},
	} {
		t.Run(fmt.Sprintf("%s/reqsize=%d", tc.variant, tc.reqsize), func(t *testing.T) {
			task := newTaskWith(t, patch.Set{}.MustWith(fscrypt.FnameOnstackPatch, tc.variant))
			task.Stats = new(kmem.Stats)
			_, e, dir, _ := engineFSReqsize(t, task, tc.reqsize)
			live0 := task.Stats.Site(site).Live()
			buf, _ := fscrypt.FnameAllocBuffer(task, 255)
			defer fscrypt.FnameFreeBuffer(task, buf)
			bugs := 0
			for i := 0; i < names; i++ {
				ct, err := fnameOp(task, dir, name)
				if b, isBug := kernel.AsBug(err); isBug {
					if b.Func != "fscrypt_fname_encrypt" {
						t.Errorf("encryption BUG in %q", b.Func)
					}
					bugs++
					ct = want // decrypt the reference instead
				} else if err != nil || !bytes.Equal(ct, want) {
					t.Fatalf("encrypt %d: %x, %v; want %x", i, ct, err, want)
				}
				n, err := func() (n int, err error) {
					defer task.Recover(&err)
					return fscrypt.FnameDiskToUsr(task, dir, 0, 0, ct, buf)
				}()
				if b, isBug := kernel.AsBug(err); isBug {
					if b.Func != "fname_decrypt" {
						t.Errorf("decryption BUG in %q", b.Func)
					}
					bugs++
				} else if err != nil || !bytes.Equal(buf[:n], name) {
					t.Fatalf("decrypt %d: %q, %v", i, buf[:n], err)
				}
			}
			if got := task.Stats.Site(site).Live() - live0; got != tc.leaked {
				t.Errorf("%d encryption requests live after %d names, want %d", got, names, tc.leaked)
			}
			if tc.bug != (bugs == 2*names) || (!tc.bug && bugs != 0) {
				t.Errorf("%d BUGs in %d operations (want BUG: %t)", bugs, 2*names, tc.bug)
			}
			dma := 0
			for _, w := range task.K.Warnings.All() {
				if strings.HasPrefix(w.Msg, "DMA-API: qce qce.0: device driver maps memory from stack [addr=") {
					dma++
				} else {
					t.Errorf("unexpected warning %v", w)
				}
			}
			if dma != tc.dmaWarns || e.DMADebugErrors() != tc.dmaErrs {
				t.Errorf("%d DMA-API warnings, error_count %d; want %d and %d", dma, e.DMADebugErrors(), tc.dmaWarns, tc.dmaErrs)
			}
			used := e.Stats().Completed > 0
			if wantUsed := tc.variant == "base" || (tc.variant == "v2" && !tc.bug); used != wantUsed {
				t.Errorf("engine used %t, want %t: %+v", used, wantUsed, e.Stats())
			}
		})
	}
}
