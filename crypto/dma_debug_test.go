package crypto

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// dmaFromStack matches the WARN of kernel/dma/debug.c check_for_stack for
// an engine named qce.
var dmaFromStack = regexp.MustCompile(`^DMA-API: qce qce\.0: device driver maps memory from stack \[addr=[0-9a-f]{16}\]$`)

// engineKeyed registers an engine with cfg and returns a keyed tfm of it
// and a keyed software tfm, for cts(cbc(aes)).
func engineKeyed(t *testing.T, tk *kernel.Task, cfg EngineConfig) (*Engine, *Skcipher, *Skcipher) {
	t.Helper()
	api := NewAPI()
	e, err := api.RegisterEngine(tk, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Stop)
	hw, err := api.AllocSkcipher(tk, "cts(cbc(aes))", 0, 0)
	if err != nil || !hw.Async() {
		t.Fatalf("engine tfm: %v %v", hw, err)
	}
	sw, _ := api.AllocSkcipher(tk, "cts(cbc(aes))", 0, CRYPTO_ALG_ASYNC)
	key := []byte(rfc3962Key)
	hw.SetKey(tk, key)
	sw.SetKey(tk, key)
	t.Cleanup(func() { hw.Free(tk); sw.Free(tk) })
	return e, hw, sw
}

// seed000Crypt runs one request through seed 000's 6.6 on-stack
// declaration, as fname_decrypt of the v2 posting does (completion and
// wait), and returns the result of crypto_wait_req.
func seed000Crypt(tk *kernel.Task, tfm *Skcipher, enc bool, buf, iv []byte) error {
	var req SkcipherRequestOnStack384
	req.Init(tk, tfm)
	var wait CryptoWait
	req.SetCallback(CRYPTO_TFM_REQ_MAY_BACKLOG|CRYPTO_TFM_REQ_MAY_SLEEP, CryptoReqDone, &wait)
	var sg [1]Scatterlist
	SgInitOne(&sg[0], buf)
	req.SetCrypt(sg[:], sg[:], len(buf), iv)
	var err error
	if enc {
		err = req.Encrypt(tk)
	} else {
		err = req.Decrypt(tk)
	}
	err = CryptoWaitReq(tk, err, &wait)
	copy(iv, req.IV())
	return err
}

// TestSeed000OnStackQueuedOn66: Linux 6.6 has no CRYPTO_TFM_REQ_ON_STACK;
// seed 000's on-stack request meets an asynchronous driver whose reqsize
// fits (256 <= 384), which queues it and completes it later while the
// caller waits. The result is the software's; the driver DMA-maps its
// request context on the caller's stack, which CONFIG_DMA_API_DEBUG
// reports once (num_errors = 1) as a warning, counting every error; the
// operation goes on.
func TestSeed000OnStackQueuedOn66(t *testing.T) {
	tk := newTask()
	e, hw, sw := engineKeyed(t, tk, EngineConfig{Name: "qce", ReqSize: 256})
	for i := 0; i < 3; i++ {
		a := []byte(rfc3962Text)[:40+i]
		b := append([]byte(nil), a...)
		ivA, ivB := make([]byte, 16), make([]byte, 16)
		if err := seed000Crypt(tk, hw, true, a, ivA); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if err := cryptOnce(t, tk, sw, b, ivB, true); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) || !bytes.Equal(ivA, ivB) {
			t.Fatalf("request %d: engine and software disagree", i)
		}
	}
	if s := e.Stats(); s.Submitted != 3 || s.Completed != 3 {
		t.Errorf("engine: %+v, want 3 requests queued and completed", s)
	}
	if tk.Ev.Get(EvWaitSleep) != 3 || tk.Ev.Get(EvAsyncEAGAIN) != 0 {
		t.Errorf("events: %s; want 3 waits, no EAGAIN", tk.Ev)
	}
	ws := tk.K.Warnings.All()
	if len(ws) != 1 || ws[0].Func != "check_for_stack" || !dmaFromStack.MatchString(ws[0].Msg) {
		t.Fatalf("warnings %v, want one DMA-API stack report", ws)
	}
	if e.DMADebugErrors() != 3 {
		t.Errorf("error_count %d, want 3", e.DMADebugErrors())
	}
	if !tk.K.TestTaint(kernel.TAINT_WARN) || tk.K.Bugs.Len() != 0 {
		t.Errorf("taint %q, %d bugs", tk.K.PrintTainted(), tk.K.Bugs.Len())
	}
	if !tk.K.Log.Contains("device driver maps memory from stack") {
		t.Errorf("no report in the log")
	}
}

// TestDMADebugSwitches: all_errors warns for every error, dma_debug=off
// checks nothing, and a heap request (kmalloc'd memory, base's) is clean
// unless the driver maps the IV, which its caller keeps on the stack.
func TestDMADebugSwitches(t *testing.T) {
	run := func(cfg EngineConfig, heap bool) (*kernel.Task, *Engine) {
		tk := newTask()
		e, hw, _ := engineKeyed(t, tk, cfg)
		for i := 0; i < 2; i++ {
			buf := []byte(rfc3962Text)[:32]
			var err error
			if heap {
				err = heapCrypt(tk, hw, buf)
			} else {
				err = seed000Crypt(tk, hw, true, buf, make([]byte, 16))
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		return tk, e
	}
	cfg := EngineConfig{Name: "qce", ReqSize: 256}
	all := cfg
	all.DMADebugAllErrors = true
	if tk, e := run(all, false); tk.K.Warnings.Len() != 2 || e.DMADebugErrors() != 2 {
		t.Errorf("all_errors: %d warnings, %d errors; want 2 and 2", tk.K.Warnings.Len(), e.DMADebugErrors())
	}
	off := cfg
	off.DMADebugOff = true
	if tk, e := run(off, false); tk.K.Warnings.Len() != 0 || e.DMADebugErrors() != 0 || e.Stats().Completed != 2 {
		t.Errorf("dma_debug=off: %d warnings, %d errors, %+v", tk.K.Warnings.Len(), e.DMADebugErrors(), e.Stats())
	}
	if tk, e := run(cfg, true); tk.K.Warnings.Len() != 0 || e.DMADebugErrors() != 0 || e.Stats().Completed != 2 {
		t.Errorf("heap request: %d warnings, %d errors, %+v; want clean", tk.K.Warnings.Len(), e.DMADebugErrors(), e.Stats())
	}
	iv := cfg
	iv.MapsIV = true
	if tk, e := run(iv, true); tk.K.Warnings.Len() != 1 || e.DMADebugErrors() != 2 || !dmaFromStack.MatchString(tk.K.Warnings.All()[0].Msg) {
		t.Errorf("heap request, driver maps the on-stack IV: %v, %d errors", tk.K.Warnings.All(), e.DMADebugErrors())
	}
}

// heapCrypt is the pre-6.17 fscrypt request: allocated, the IV in the
// caller's frame (SetCryptOne), waited for, freed.
func heapCrypt(tk *kernel.Task, tfm *Skcipher, buf []byte) error {
	req, err := SkcipherRequestAlloc(tk, tfm, kmem.GFPNoFS)
	if err != nil {
		return err
	}
	defer req.Free(tk)
	var wait CryptoWait
	req.SetCallback(CRYPTO_TFM_REQ_MAY_BACKLOG|CRYPTO_TFM_REQ_MAY_SLEEP, CryptoReqDone, &wait)
	req.SetCryptOne(buf, buf, make([]byte, 16))
	return CryptoWaitReq(tk, req.Encrypt(tk), &wait)
}

// TestDMADebugVmalloc: memory in the vmalloc area is reported by
// debug_dma_map_single with its length.
func TestDMADebugVmalloc(t *testing.T) {
	tk := newTask()
	e, _, _ := engineKeyed(t, tk, EngineConfig{Name: "qce"})
	e.debugDMAMapSingle(tk, dmaLinear, 0, 4096)
	if tk.K.Warnings.Len() != 0 {
		t.Fatalf("linear memory reported: %v", tk.K.Warnings.All())
	}
	e.debugDMAMapSingle(tk, dmaVmalloc, 0, 4096)
	ws := tk.K.Warnings.All()
	want := regexp.MustCompile(`^DMA-API: qce qce\.0: device driver maps memory from vmalloc area \[addr=[0-9a-f]{16}\] \[len=4096\]$`)
	if len(ws) != 1 || ws[0].Func != "debug_dma_map_single" || !want.MatchString(ws[0].Msg) {
		t.Errorf("warnings %v", ws)
	}
}

// TestSeed000OnStackLargeReqsize: a driver whose reqsize exceeds the
// declaration's 384 bytes writes past it (the model's KASAN
// stack-out-of-bounds), whether it is asynchronous or not; seed 000's
// BUG_ON stops its callers before. The request never reaches the engine.
func TestSeed000OnStackLargeReqsize(t *testing.T) {
	tk := newTask()
	e, hw, _ := engineKeyed(t, tk, EngineConfig{Name: "qce", ReqSize: 512})
	var req SkcipherRequestOnStack384
	req.Init(tk, hw)
	if req.Fits() {
		t.Fatal("reqsize 512 fits 384")
	}
	err := func() (err error) {
		defer tk.Recover(&err)
		return seed000Crypt(tk, hw, true, make([]byte, 32), make([]byte, 16))
	}()
	b, ok := kernel.AsBug(err)
	if !ok || !strings.HasPrefix(b.Kind, "KASAN: stack-out-of-bounds") {
		t.Fatalf("%v, want a KASAN stack-out-of-bounds report", err)
	}
	if e.Stats().Submitted != 0 || tk.K.Warnings.Len() != 0 {
		t.Errorf("the request reached the engine: %+v", e.Stats())
	}
}

// TestSeed000OnStackNoCompletion: without a completion the 6.6 request is
// queued and the driver's answer, EINPROGRESS, returned; the driver then
// finds no completion to call (logged).
func TestSeed000OnStackNoCompletion(t *testing.T) {
	tk := newTask()
	e, hw, _ := engineKeyed(t, tk, EngineConfig{Name: "qce", ReqSize: 256})
	var req SkcipherRequestOnStack384
	req.Init(tk, hw)
	req.SetCallback(0, nil, nil)
	var sg [1]Scatterlist
	SgInitOne(&sg[0], make([]byte, 32))
	req.SetCrypt(sg[:], sg[:], 32, make([]byte, 16))
	if err := req.Encrypt(tk); err != errno.EINPROGRESS {
		t.Fatalf("%v, want EINPROGRESS", err)
	}
	e.Stop()
	if !tk.K.Log.Contains("completed without a callback") {
		t.Errorf("log: %q", tk.K.Log.Lines())
	}
}

// TestSeed000OnStackSyncNoAlloc: with a synchronous driver the 6.6
// declaration costs no Go allocation and no DMA check.
func TestSeed000OnStackSyncNoAlloc(t *testing.T) {
	tk := newTask()
	api := NewAPI()
	sw, _ := api.AllocSkcipher(tk, "cts(cbc(aes))", 0, CRYPTO_ALG_ASYNC)
	sw.SetKey(tk, []byte(rfc3962Key))
	buf, iv := make([]byte, 32), make([]byte, 16)
	if n := testing.AllocsPerRun(50, func() {
		if err := seed000Crypt(tk, sw, true, buf, iv); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%.1f Go allocations per request", n)
	}
	if tk.K.Warnings.Len() != 0 {
		t.Errorf("warnings: %v", tk.K.Warnings.All())
	}
}
