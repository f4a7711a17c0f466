package crypto

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kmem"
)

// fscryptMask is the mask fscrypt allocates its tfms with since Linux 6.17.
const fscryptMask = CRYPTO_ALG_ASYNC | CRYPTO_ALG_ALLOCATES_MEMORY | CRYPTO_ALG_KERN_DRIVER_ONLY

func TestEngineSelection(t *testing.T) {
	api := NewAPI()
	tk := newTask()
	e, err := api.RegisterEngine(tk, EngineConfig{Name: "qce"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	tfm, err := api.AllocSkcipher(tk, "xts(aes)", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if tfm.DriverName() != "xts-aes-qce" || !tfm.Async() || tfm.ReqSize() != 512 ||
		tfm.Alg().Flags()&EngineFlags != EngineFlags || tfm.Alg().Priority() != 1000 {
		t.Errorf("crypto_alloc_skcipher picked %v", tfm.Alg())
	}
	if tfm.Child() == nil || tfm.Child().Async() {
		t.Errorf("engine tfm without a synchronous fallback")
	}
	tfm.Free(tk)
	if a := e.Algs()[2]; a.DriverName() != "cts-cbc-aes-qce" {
		t.Errorf("engine driver name %s", a.DriverName())
	}
	for _, c := range []struct {
		what string
		sync bool
		mask uint32
	}{
		{"crypto_alloc_sync_skcipher", true, 0},
		{"CRYPTO_ALG_ASYNC masked", false, CRYPTO_ALG_ASYNC},
		{"fscrypt's mask", false, fscryptMask},
		{"KERN_DRIVER_ONLY masked", false, CRYPTO_ALG_KERN_DRIVER_ONLY},
	} {
		var tfm *Skcipher
		if c.sync {
			s, err := api.AllocSyncSkcipher(tk, "cts(cbc(aes))", 0, c.mask)
			if err != nil {
				t.Fatal(err)
			}
			tfm = &s.Skcipher
		} else {
			tfm, err = api.AllocSkcipher(tk, "cts(cbc(aes))", 0, c.mask)
			if err != nil {
				t.Fatal(err)
			}
		}
		if tfm.Async() || tfm.Alg().Flags()&CRYPTO_ALG_KERN_DRIVER_ONLY != 0 {
			t.Errorf("%s picked %s", c.what, tfm.DriverName())
		}
		tfm.Free(tk)
	}
	// Asking for an asynchronous algorithm explicitly.
	tfm, err = api.AllocSkcipher(tk, "cbc(aes)", CRYPTO_ALG_ASYNC, CRYPTO_ALG_ASYNC)
	if err != nil || tfm.DriverName() != "cbc-aes-qce" {
		t.Errorf("async-only lookup: %v %v", tfm, err)
	}
	tfm.Free(tk)
	if tk.Stats.Live() != 0 {
		t.Errorf("leak: %s", tk.Stats)
	}
}

// TestEngineRoundTrip: the engine computes what the software does, through
// EINPROGRESS and the completion.
func TestEngineRoundTrip(t *testing.T) {
	api := NewAPI()
	tk := newTask()
	e, err := api.RegisterEngine(tk, EngineConfig{})
	if err != nil {
		t.Fatal(err)
	}
	hw, _ := api.AllocSkcipher(tk, "cts(cbc(aes))", 0, 0)
	sw, _ := api.AllocSkcipher(tk, "cts(cbc(aes))", 0, CRYPTO_ALG_ASYNC)
	key := []byte(rfc3962Key)
	hw.SetKey(tk, key)
	sw.SetKey(tk, key)
	for n := 16; n < 100; n += 7 {
		a := []byte(rfc3962Text + rfc3962Text)[:n]
		b := append([]byte(nil), a...)
		ivA, ivB := make([]byte, 16), make([]byte, 16)
		req, err := SkcipherRequestAlloc(tk, hw, kmem.GFPNoFS)
		if err != nil {
			t.Fatal(err)
		}
		var sg [1]Scatterlist
		SgInitOne(&sg[0], a)
		var wait CryptoWait
		req.SetCallback(CRYPTO_TFM_REQ_MAY_BACKLOG|CRYPTO_TFM_REQ_MAY_SLEEP, CryptoReqDone, &wait)
		req.SetCrypt(sg[:], sg[:], n, ivA)
		err = req.Encrypt(tk)
		if err != errno.EINPROGRESS {
			t.Fatalf("engine answered %v, want EINPROGRESS", err)
		}
		if err := CryptoWaitReq(tk, err, &wait); err != nil {
			t.Fatal(err)
		}
		req.Free(tk)
		if err := cryptOnce(t, tk, sw, b, ivB, true); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) || !bytes.Equal(ivA, ivB) {
			t.Fatalf("len %d: engine and software disagree", n)
		}
	}
	// ENOKEY is answered synchronously.
	hw2, _ := api.AllocSkcipher(tk, "xts(aes)", 0, 0)
	if err := cryptOnce(t, tk, hw2, make([]byte, 32), make([]byte, 16), true); err != errno.ENOKEY {
		t.Errorf("engine without key: %v", err)
	}
	hw.Free(tk)
	hw2.Free(tk)
	sw.Free(tk)
	e.Stop()
	if tk.Ev.Get(EvWaitSleep) == 0 || tk.Ev.Get(EvAsyncSubmit) == 0 {
		t.Errorf("events: %s", tk.Ev)
	}
	if c := e.Counters(); c.Get(EvAsyncComplete) != e.Stats().Completed || c.Get(EvAESBlocks) == 0 || c.Get(EvEncrypt) != 0 {
		t.Errorf("engine counters: %s (stats %+v); requests are counted once, by their submitter", c, e.Stats())
	}
}

// completionLog records completions in order.
type completionLog struct {
	mu  sync.Mutex
	log []string
	wg  sync.WaitGroup
}

type logEntry struct {
	l  *completionLog
	id int
}

func logDone(data any, err error) {
	d := data.(*logEntry)
	d.l.mu.Lock()
	d.l.log = append(d.l.log, fmt.Sprintf("%d:%s", d.id, errName(err)))
	d.l.mu.Unlock()
	if err != errno.EINPROGRESS {
		d.l.wg.Done()
	}
}

func errName(err error) string {
	if err == nil {
		return "ok"
	}
	if e, ok := errno.Of(err); ok {
		return errno.Name(e)
	}
	return err.Error()
}

// TestEngineBacklog: with the workers held, the queue fills: MAY_BACKLOG
// requests beyond QueueLen get EBUSY and later an EINPROGRESS notification
// as they enter the queue, others get ENOSPC and never complete; everything
// accepted completes, in order.
func TestEngineBacklog(t *testing.T) {
	api := NewAPI()
	tk := newTask()
	e, err := api.RegisterEngine(tk, EngineConfig{QueueLen: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	tfm, _ := api.AllocSkcipher(tk, "xts(aes)", 0, 0)
	tfm.SetKey(tk, make([]byte, 64))
	e.setPaused(true)
	var l completionLog
	flags := []uint32{0, 0, 0, CRYPTO_TFM_REQ_MAY_BACKLOG, CRYPTO_TFM_REQ_MAY_BACKLOG, 0, CRYPTO_TFM_REQ_MAY_BACKLOG}
	want := []error{errno.EINPROGRESS, errno.EINPROGRESS, errno.ENOSPC, errno.EBUSY, errno.EBUSY, errno.ENOSPC, errno.EBUSY}
	var reqs []*SkcipherRequest
	for i, f := range flags {
		req, _ := SkcipherRequestAlloc(tk, tfm, kmem.GFPNoFS)
		var sg [1]Scatterlist
		SgInitOne(&sg[0], make([]byte, 64))
		req.SetCallback(f, logDone, &logEntry{&l, i})
		req.SetCrypt(sg[:], sg[:], 64, make([]byte, 16))
		l.wg.Add(1)
		err := req.Encrypt(tk)
		if err != want[i] {
			t.Errorf("request %d: %v, want %v", i, err, want[i])
		}
		if err == errno.ENOSPC {
			l.wg.Done()
		}
		reqs = append(reqs, req)
	}
	if e.QueueLen() != 5 {
		t.Errorf("queue length %d, want 5", e.QueueLen())
	}
	e.setPaused(false)
	l.wg.Wait()
	// Dequeuing request 0 moves 3 (the first backlogged) into the queue,
	// dequeuing 1 moves 4, dequeuing 3 moves 6.
	wantLog := []string{"3:EINPROGRESS", "0:ok", "4:EINPROGRESS", "1:ok", "6:EINPROGRESS", "3:ok", "4:ok", "6:ok"}
	l.mu.Lock()
	got := append([]string(nil), l.log...)
	l.mu.Unlock()
	if fmt.Sprint(got) != fmt.Sprint(wantLog) {
		t.Errorf("completions %v\n want %v", got, wantLog)
	}
	s := e.Stats()
	if s.Submitted != 5 || s.Backlogged != 3 || s.Rejected != 2 || s.Completed != 5 || s.MaxDepth != 5 {
		t.Errorf("stats %+v", s)
	}
	if tk.Ev.Get(EvAsyncBacklog) != 3 || tk.Ev.Get(EvAsyncReject) != 2 {
		t.Errorf("events %s", tk.Ev)
	}
	for _, r := range reqs {
		r.Free(tk)
	}
	tfm.Free(tk)
}

// TestEngineConcurrent: many submitters, each its own task, with a small
// queue and backlogging, all wait for correct results (run with -race).
func TestEngineConcurrent(t *testing.T) {
	api := NewAPI()
	tk := newTask()
	e, err := api.RegisterEngine(tk, EngineConfig{QueueLen: 3, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	hw, _ := api.AllocSkcipher(tk, "xts(aes)", 0, 0)
	sw, _ := api.AllocSyncSkcipher(tk, "xts(aes)", 0, 0)
	key := make([]byte, 64)
	for i := range key {
		key[i] = byte(i)
	}
	hw.SetKey(tk, key)
	sw.SetKey(tk, key)
	const submitters, perTask = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, submitters)
	for g := 0; g < submitters; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			task := tk.K.NewTask(fmt.Sprintf("sub%d", g))
			task.EnableCounting()
			defer task.Exit()
			for i := 0; i < perTask; i++ {
				pt := make([]byte, 512)
				for j := range pt {
					pt[j] = byte(g*31 + i + j)
				}
				buf := append([]byte(nil), pt...)
				iv := make([]byte, 16)
				iv[0], iv[1] = byte(g), byte(i)
				// The request's IV is left holding the next tweak (as
				// the x86 XTS glue leaves req->iv): the software
				// check below gets its own copy.
				swIV := bytes.Clone(iv)
				req, err := SkcipherRequestAlloc(task, hw, kmem.GFPNoFS)
				if err != nil {
					errs <- err
					return
				}
				var sg [1]Scatterlist
				SgInitOne(&sg[0], buf)
				var wait CryptoWait
				req.SetCallback(CRYPTO_TFM_REQ_MAY_BACKLOG, CryptoReqDone, &wait)
				req.SetCrypt(sg[:], sg[:], len(buf), iv)
				if err := CryptoWaitReq(task, req.Encrypt(task), &wait); err != nil {
					errs <- err
					return
				}
				req.Free(task)
				want := append([]byte(nil), pt...)
				var wsg [1]Scatterlist
				SgInitOne(&wsg[0], want)
				var sreq SyncSkcipherRequestOnStack
				sreq.Init(task, sw)
				sreq.SetCrypt(wsg[:], wsg[:], len(want), swIV)
				if err := sreq.Encrypt(task); err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(buf, want) {
					errs <- fmt.Errorf("submitter %d request %d: wrong ciphertext", g, i)
					return
				}
				if task.Stats.Live() != 0 {
					errs <- fmt.Errorf("submitter %d: leak %s", g, task.Stats)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	e.Stop()
	if s := e.Stats(); s.Completed != submitters*perTask || s.Submitted != submitters*perTask {
		t.Errorf("stats %+v", s)
	}
	hw.Free(tk)
	sw.Free(tk)
}

// TestEngineOnStackClone is seed 003's protocol: an on-stack request meets
// the asynchronous engine, gets EAGAIN, is cloned to the heap and
// resubmitted; here as a whole-bio decryption. The engine's driver never
// learned CRYPTO_SKCIPHER_REQ_BIO (the RFC teaches it to the x86 XTS glue
// only): it takes du_bits as the request's length and fails it with
// EINVAL, leaving the bio as it was.
func TestEngineOnStackClone(t *testing.T) {
	api := NewAPI()
	tk := newTask()
	e, err := api.RegisterEngine(tk, EngineConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	tfm, _ := api.AllocSkcipher(tk, "xts(aes)", 0, 0)
	sw, _ := api.AllocSyncSkcipher(tk, "xts(aes)", 0, 0)
	key := make([]byte, 64)
	key[5] = 9
	tfm.SetKey(tk, key)
	sw.SetKey(tk, key)

	bio, plain := testBio(t, &sw.Skcipher, 12, 7)
	base := tk.Stats.Clone()

	var iv [32]byte
	binary64(iv[:], 7)
	var wait CryptoWait
	var req SkcipherBioRequestOnStack
	req.Init(tk, tfm)
	req.SetCallback(CRYPTO_TFM_REQ_MAY_BACKLOG|CRYPTO_SKCIPHER_REQ_BIO, nil, nil)
	req.SetBio(bio, 12, iv[:16])
	err = req.Decrypt(tk)
	if err != errno.EAGAIN {
		t.Fatalf("on-stack request to the engine: %v, want EAGAIN", err)
	}
	clone, err := SkcipherRequestClone(tk, &req, kmem.GFPAtomic)
	if err != nil {
		t.Fatal(err)
	}
	if clone.Size() != SizeofSkcipherRequest+512 || clone.Flags()&CRYPTO_TFM_REQ_ON_STACK != 0 {
		t.Errorf("clone: %v", clone)
	}
	clone.SetCallback(CRYPTO_TFM_REQ_MAY_BACKLOG|CRYPTO_SKCIPHER_REQ_BIO, CryptoReqDone, &wait)
	ct := bioBytes(bio)
	if err := CryptoWaitReq(tk, clone.Decrypt(tk), &wait); err != errno.EINVAL {
		t.Fatalf("the engine's answer to a bio request: %v, want EINVAL", err)
	}
	clone.Free(tk)
	if got := bioBytes(bio); !bytes.Equal(got, ct) || bytes.Equal(got, plain) {
		t.Error("the engine changed the bio")
	}
	if l := tk.Stats.Leaks(base); len(l) != 0 {
		t.Errorf("leak: %v", l)
	}
	if s := tk.Stats.Site(SiteRequestClone); s.Allocs != 1 || s.Bytes != SizeofSkcipherRequest+512 {
		t.Errorf("clone site: %+v", s)
	}
	// The clone's allocation can fail.
	tk.Fail = kmem.FailSites("skcipher_request_clone")
	if c, err := SkcipherRequestClone(tk, &req, kmem.GFPAtomic); err != errno.ENOMEM || c != nil {
		t.Errorf("failed clone: %v %v", c, err)
	}
	tk.Fail = nil
	// A synchronous tfm takes the on-stack request directly.
	var sreq SkcipherBioRequestOnStack
	sreq.Init(tk, &sw.Skcipher)
	sreq.SetCallback(CRYPTO_SKCIPHER_REQ_BIO, nil, nil)
	binary64(iv[:], 7)
	sreq.SetBio(bio, 12, iv[:16])
	if err := sreq.Encrypt(tk); err != nil {
		t.Fatal(err)
	}
	tfm.Free(tk)
	sw.Free(tk)
}

// TestEngineChain: a chain submitted to the engine completes once, each
// request with its own result.
func TestEngineChain(t *testing.T) {
	api := NewAPI()
	tk := newTask()
	e, _ := api.RegisterEngine(tk, EngineConfig{})
	defer e.Stop()
	tfm, _ := api.AllocSkcipher(tk, "xts(aes)", 0, 0)
	tfm.SetKey(tk, make([]byte, 64))
	var reqs []*SkcipherRequest
	for i := 0; i < 4; i++ {
		req, _ := SkcipherRequestAlloc(tk, tfm, kmem.GFPNoFS)
		n := 64
		if i == 2 {
			n = 8 // too short for XTS
		}
		var sg [1]Scatterlist
		SgInitOne(&sg[0], make([]byte, n))
		req.SetCrypt(sg[:], sg[:], n, make([]byte, 16))
		if i > 0 {
			SkcipherRequestChain(req, reqs[0])
		}
		reqs = append(reqs, req)
	}
	var wait CryptoWait
	reqs[0].SetCallback(0, CryptoReqDone, &wait)
	if err := CryptoWaitReq(tk, reqs[0].Encrypt(tk), &wait); err != nil {
		t.Fatal(err)
	}
	for i, r := range reqs {
		want := error(nil)
		if i == 2 {
			want = errno.EINVAL
		}
		if r.Err() != want {
			t.Errorf("request %d: %v, want %v", i, r.Err(), want)
		}
		r.Free(tk)
	}
	if e.Stats().Completed != 1 {
		t.Errorf("completions %d, want 1 for the chain", e.Stats().Completed)
	}
	tfm.Free(tk)
}

func TestEngineStop(t *testing.T) {
	api := NewAPI()
	tk := newTask()
	e, _ := api.RegisterEngine(tk, EngineConfig{Algorithms: []string{"xts(aes)"}})
	tfm, _ := api.AllocSkcipher(tk, "xts(aes)", 0, 0)
	tfm.SetKey(tk, make([]byte, 64))
	e.Stop()
	e.Stop()
	if err := cryptOnce(t, tk, tfm, make([]byte, 32), make([]byte, 16), true); err != eshutdown {
		t.Errorf("after stop: %v", err)
	}
	tfm.Free(tk)
	tfm, _ = api.AllocSkcipher(tk, "xts(aes)", 0, 0)
	if tfm.Async() {
		t.Errorf("stopped engine still found: %s", tfm.DriverName())
	}
	tfm.Free(tk)
	if _, err := api.RegisterEngine(tk, EngineConfig{Algorithms: []string{"nosuch(aes)"}}); err != errno.ENOENT {
		t.Errorf("engine for an unknown algorithm: %v", err)
	}
	e2, _ := api.RegisterEngine(tk, EngineConfig{Name: "dup", Algorithms: []string{"ecb(aes)"}})
	defer e2.Stop()
	if _, err := api.RegisterEngine(tk, EngineConfig{Name: "dup", Algorithms: []string{"ecb(aes)"}}); err != errno.EEXIST {
		t.Errorf("duplicate engine: %v", err)
	}
}

// testBio builds a bio of folios (orders 0 and 2, a partial vector) whose
// contents are encrypted per data unit of 1<<duBits bytes with tfm and IV
// le64(firstLblk + unit). It returns the bio (ciphertext) and the
// plaintext.
func testBio(t testing.TB, tfm *Skcipher, duBits uint, firstLblk uint64) (*block.Bio, []byte) {
	t.Helper()
	task := newTask()
	bio := block.NewBio(3)
	f0 := block.NewFolio(firstLblk, 0)
	f1 := block.NewFolio(firstLblk+1, 2)
	bio.AddFolio(f0, block.PageSize, 0)
	bio.AddFolio(f1, 2*block.PageSize, block.PageSize)
	for _, v := range bio.Vecs {
		for i := range v.Folio.Data {
			v.Folio.Data[i] = byte(i*13 + int(v.Folio.Index))
		}
	}
	plain := bioBytes(bio)
	du := 1 << duBits
	lblk := firstLblk
	for _, v := range bio.Vecs {
		for off := v.Offset; off < v.Offset+v.Len; off += du {
			var iv [32]byte
			binary64(iv[:], lblk)
			if err := cryptOnce(t, task, tfm, v.Folio.Data[off:off+du], iv[:tfm.IVSize()], true); err != nil {
				t.Fatal(err)
			}
			lblk++
		}
	}
	return bio, plain
}

func bioBytes(bio *block.Bio) []byte {
	var out []byte
	for _, v := range bio.Vecs {
		out = append(out, v.Folio.Data[v.Offset:v.Offset+v.Len]...)
	}
	return out
}

func binary64(b []byte, v uint64) {
	for i := 0; i < 8; i++ {
		b[i] = byte(v >> (8 * i))
	}
}
