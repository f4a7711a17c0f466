package crypto

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/kernel"
)

// eshutdown is ESHUTDOWN (108): crypto_transfer_request_to_engine's answer
// once the engine has stopped.
const eshutdown = syscall.Errno(108)

// EngineFlags are the cra_flags of an engine's algorithms: asynchronous, may
// allocate memory, and a driver for dedicated hardware. fscrypt's Linux 6.17
// mask excludes all three.
const EngineFlags = CRYPTO_ALG_ASYNC | CRYPTO_ALG_ALLOCATES_MEMORY | CRYPTO_ALG_KERN_DRIVER_ONLY

// EngineConfig describes a modelled hardware crypto engine.
type EngineConfig struct {
	// Name is the driver suffix: an engine named "qce" registers
	// "xts-aes-qce" for xts(aes). Default "engine".
	Name string
	// Priority is the cra_priority of the engine's algorithms. Default
	// 1000, above every software driver, as accelerator drivers register.
	Priority int
	// Algorithms are the cra_names the engine implements. Default
	// ecb(aes), cbc(aes), cts(cbc(aes)) and xts(aes). Each must have a
	// synchronous software implementation, which the model uses to
	// compute the engine's results.
	Algorithms []string
	// ReqSize is the reqsize of the engine's tfms. Default 512: more than
	// MAX_SYNC_SKCIPHER_REQSIZE, as hardware drivers with DMA descriptors
	// in the request have.
	ReqSize int
	// QueueLen is the queue length (max_qlen); beyond it requests go to
	// the backlog (CRYPTO_TFM_REQ_MAY_BACKLOG, -EBUSY) or are refused
	// (-ENOSPC). Default 10, CRYPTO_ENGINE_MAX_QLEN.
	QueueLen int
	// Workers is the number of goroutines completing requests (crypto
	// engine kthreads). Default 1.
	Workers int
	// Latency is added to each request's processing, to model the
	// device's round trip. Default 0.
	Latency time.Duration
	// MapsIV makes the driver DMA-map req->iv itself, where drivers
	// usually copy it into their request context (callers keep their IV
	// on the stack: every fscrypt caller does). See dma_debug.go.
	MapsIV bool
	// DMADebugOff is the dma_debug=off boot parameter: the DMA-API debug
	// checks (on by default, CONFIG_DMA_API_DEBUG) are skipped.
	DMADebugOff bool
	// DMADebugAllErrors is /sys/kernel/debug/dma-api/all_errors = 1: every
	// DMA-API error is a warning, not only the first.
	DMADebugAllErrors bool
}

// Engine is a modelled asynchronous hardware engine in the manner of
// crypto/crypto_engine.c: its algorithms are registered at a high priority
// with EngineFlags; requests are put on a bounded queue (crypto_queue with
// crypto_enqueue_request's rules) and completed on the engine's own
// goroutines, which call each request's completion with its result.
//
// Queue rules (crypto/algapi.c crypto_enqueue_request, crypto_engine.c):
// while fewer than QueueLen requests are queued a request is accepted with
// EINPROGRESS; beyond that it is put in the backlog with EBUSY if it has
// CRYPTO_TFM_REQ_MAY_BACKLOG, and refused with ENOSPC otherwise. Whenever
// a worker dequeues a request while the backlog is not empty, the first
// backlogged request moves into the queue proper and gets an EINPROGRESS
// notification through its completion before the dequeued request is
// processed. A request marked CRYPTO_TFM_REQ_ON_STACK (by the on-stack
// declarations of kernels after Linux 6.15) is refused with EAGAIN (see
// SkcipherRequestClone); an unmarked one on the stack (seed 000's 6.6
// declaration, SkcipherRequestOnStack384) is queued like any other.
//
// The driver DMA-maps each request it accepts, under the DMA-API debug
// checks (dma_debug.go): a request, or with MapsIV an IV, on the
// submitter's stack is reported as CONFIG_DMA_API_DEBUG reports it, a
// kernel warning "DMA-API: <driver> <device>: device driver maps memory
// from stack [addr=...]", and the request goes on.
//
// The engine computes with a synchronous software fallback tfm per engine
// tfm (the NEED_FALLBACK pattern of hardware drivers). Each worker runs as
// its own kernel task; its counters (AES blocks, completions) are merged by
// Counters once the engine is stopped.
type Engine struct {
	api  *API
	cfg  EngineConfig
	algs []*Alg

	dma dmaDebug

	mu       sync.Mutex
	cond     *sync.Cond
	queue    []engineEntry
	backlog  int // index in queue of the first backlogged request, -1 if none
	stopping bool
	stopped  bool
	// paused holds the workers before they dequeue (tests use it to fill
	// the queue deterministically).
	paused bool

	wg      sync.WaitGroup
	workers []*kernel.Task

	submitted  atomic.Uint64
	backlogged atomic.Uint64
	rejected   atomic.Uint64
	completed  atomic.Uint64
	maxDepth   atomic.Uint64
}

type engineEntry struct {
	req *SkcipherRequest
	enc bool
}

// EngineStats are an engine's counts so far.
type EngineStats struct {
	Submitted  uint64 // requests accepted (EINPROGRESS or EBUSY)
	Backlogged uint64 // of which put in the backlog (EBUSY)
	Rejected   uint64 // refused with ENOSPC
	Completed  uint64 // completions delivered
	MaxDepth   uint64 // deepest the queue (backlog included) has been
}

// RegisterEngine starts an engine and registers its algorithms. t is the
// registering task: the workers are new tasks on the same machine, counting
// events if t does. Errors: EINVAL for a bad configuration, ENOENT when an
// algorithm has no synchronous implementation to compute with, EEXIST when a
// driver name is taken.
func (api *API) RegisterEngine(t *kernel.Task, cfg EngineConfig) (*Engine, error) {
	if cfg.Name == "" {
		cfg.Name = "engine"
	}
	if cfg.Priority == 0 {
		cfg.Priority = 1000
	}
	if len(cfg.Algorithms) == 0 {
		cfg.Algorithms = []string{"ecb(aes)", "cbc(aes)", "cts(cbc(aes))", "xts(aes)"}
	}
	if cfg.ReqSize == 0 {
		cfg.ReqSize = 512
	}
	if cfg.QueueLen == 0 {
		cfg.QueueLen = 10
	}
	if cfg.Workers == 0 {
		cfg.Workers = 1
	}
	if cfg.ReqSize < 0 || cfg.QueueLen < 0 || cfg.Workers < 0 || strings.ContainsAny(cfg.Name, "(), ") {
		return nil, errno.EINVAL
	}
	e := &Engine{api: api, cfg: cfg, backlog: -1}
	e.dma.init(&e.cfg)
	e.cond = sync.NewCond(&e.mu)
	for _, name := range cfg.Algorithms {
		typ, mask := skcipherTypeMask(0, CRYPTO_ALG_ASYNC)
		sw, err := api.Lookup(t, name, typ, mask)
		if err != nil {
			return nil, err
		}
		e.algs = append(e.algs, &Alg{
			name: sw.name, driver: engineDriverName(sw.name, cfg.Name), priority: cfg.Priority,
			flags:     CRYPTO_ALG_TYPE_SKCIPHER | EngineFlags,
			blockSize: sw.blockSize, minKey: sw.minKey, maxKey: sw.maxKey, ivSize: sw.ivSize,
			chunkSize: sw.chunkSize, walkSize: sw.walkSize,
			reqSize: cfg.ReqSize, ctxSize: 16, kind: kindEngine, engine: e,
		})
	}
	api.mu.Lock()
	for i, a := range e.algs {
		if err := api.addLocked(a); err != nil {
			for _, b := range e.algs[:i] {
				b.dead.Store(true)
			}
			api.mu.Unlock()
			return nil, err
		}
	}
	api.engines = append(api.engines, e)
	api.mu.Unlock()
	for i := 0; i < cfg.Workers; i++ {
		w := t.K.NewTask(fmt.Sprintf("%s/%d", cfg.Name, i))
		if t.Ev != nil {
			w.EnableCounting()
		}
		e.workers = append(e.workers, w)
		e.wg.Add(1)
		go e.worker(w)
	}
	return e, nil
}

// engineDriverName makes the driver name of an engine's implementation of
// cra_name the way drivers name theirs: "cts(cbc(aes))" on engine "qce" is
// "cts-cbc-aes-qce".
func engineDriverName(craName, engine string) string {
	r := strings.NewReplacer("(", "-", ")", "", ",", "-")
	return r.Replace(craName) + "-" + engine
}

// Algs returns the engine's registered algorithms.
func (e *Engine) Algs() []*Alg { return append([]*Alg(nil), e.algs...) }

// Config returns the engine's configuration with defaults filled in.
func (e *Engine) Config() EngineConfig { return e.cfg }

// enqueue is the driver's encrypt/decrypt: the DMA mappings of the
// request (with their debug checks), then crypto_transfer_request_to_engine
// with crypto_enqueue_request's rules.
func (e *Engine) enqueue(t *kernel.Task, req *SkcipherRequest, enc bool) error {
	if req.h.flags&CRYPTO_TFM_REQ_ON_STACK != 0 {
		t.Inc(EvAsyncEAGAIN)
		return errno.EAGAIN
	}
	e.dmaMapRequest(t, req)
	e.mu.Lock()
	if e.stopping {
		e.mu.Unlock()
		return eshutdown
	}
	err := errno.EINPROGRESS
	if len(e.queue) >= e.cfg.QueueLen {
		if req.h.flags&CRYPTO_TFM_REQ_MAY_BACKLOG == 0 {
			e.mu.Unlock()
			e.rejected.Add(1)
			t.Inc(EvAsyncReject)
			return errno.ENOSPC
		}
		err = errno.EBUSY
		if e.backlog < 0 {
			e.backlog = len(e.queue)
		}
	}
	e.queue = append(e.queue, engineEntry{req, enc})
	if d := uint64(len(e.queue)); d > e.maxDepth.Load() {
		e.maxDepth.Store(d)
	}
	e.cond.Signal()
	e.mu.Unlock()
	e.submitted.Add(1)
	t.Inc(EvAsyncSubmit)
	if err == errno.EBUSY {
		e.backlogged.Add(1)
		t.Inc(EvAsyncBacklog)
	}
	return err
}

// dequeue is crypto_get_backlog + crypto_dequeue_request under the queue
// lock: the request to process and the backlogged request to notify (nil if
// none). ok is false when the engine is stopping and the queue is empty.
func (e *Engine) dequeue() (ent engineEntry, notify *SkcipherRequest, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for len(e.queue) == 0 || e.paused {
		if e.stopping && len(e.queue) == 0 {
			return engineEntry{}, nil, false
		}
		e.cond.Wait()
	}
	if e.backlog >= 0 {
		notify = e.queue[e.backlog].req
		// The backlog boundary moves to the next request, or to the
		// list head (none) when it was the last one. Since the dequeue
		// shifts every index down by one, the next request keeps the
		// index e.backlog.
		if e.backlog+1 >= len(e.queue) {
			e.backlog = -1
		}
	}
	ent = e.queue[0]
	e.queue[0] = engineEntry{}
	e.queue = e.queue[1:]
	if len(e.queue) == 0 {
		e.queue = nil
	}
	return ent, notify, true
}

// worker is an engine kthread: dequeue, notify the backlog, process,
// complete.
func (e *Engine) worker(w *kernel.Task) {
	defer e.wg.Done()
	for {
		ent, notify, ok := e.dequeue()
		if !ok {
			return
		}
		if notify != nil {
			w.Inc(EvAsyncBacklogIn)
			complete(w, notify, errno.EINPROGRESS)
		}
		if e.cfg.Latency > 0 {
			time.Sleep(e.cfg.Latency)
		}
		req := ent.req
		err := req.cryptMember(w, ent.enc, true)
		req.err = err
		for c := req.next; c != nil; c = c.next {
			w.Inc(EvChainRequest)
			c.err = c.cryptMember(w, ent.enc, false)
		}
		e.completed.Add(1)
		w.Inc(EvAsyncComplete)
		complete(w, req, err)
	}
}

// complete is crypto_request_complete: the request's completion with data
// and err. A request queued without a completion would oops the kernel; the
// model logs it and drops the completion.
func complete(w *kernel.Task, req *SkcipherRequest, err error) {
	if req.h.complete == nil {
		w.Printk("crypto: asynchronous request completed without a callback (%v)", err)
		return
	}
	req.h.complete(req.h.data, err)
}

// Stop stops the engine (crypto_engine_stop + unregistering its
// algorithms): requests already queued are completed, later submissions get
// ESHUTDOWN, the workers exit, and lookups no longer find the engine's
// algorithms. Stop waits for the workers; it is idempotent.
func (e *Engine) Stop() {
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		return
	}
	e.stopping = true
	e.stopped = true
	e.paused = false
	e.cond.Broadcast()
	e.mu.Unlock()
	e.wg.Wait()
	for _, a := range e.algs {
		a.dead.Store(true)
	}
	for _, w := range e.workers {
		w.Exit()
	}
}

// Stats returns the engine's counts so far.
func (e *Engine) Stats() EngineStats {
	return EngineStats{
		Submitted:  e.submitted.Load(),
		Backlogged: e.backlogged.Load(),
		Rejected:   e.rejected.Load(),
		Completed:  e.completed.Load(),
		MaxDepth:   e.maxDepth.Load(),
	}
}

// QueueLen returns the number of requests queued (backlog included).
func (e *Engine) QueueLen() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.queue)
}

// Counters returns the workers' event counts merged; nil unless the
// registering task counted events. Call it after Stop.
func (e *Engine) Counters() *events.Counters {
	var total *events.Counters
	for _, w := range e.workers {
		if w.Ev == nil {
			continue
		}
		if total == nil {
			total = events.New()
		}
		total.Merge(w.Ev)
	}
	return total
}

// String is the canonical one-line dump of the engine.
func (e *Engine) String() string {
	s := e.Stats()
	return fmt.Sprintf("engine{%s prio=%d qlen=%d workers=%d submitted=%d backlogged=%d rejected=%d completed=%d}",
		e.cfg.Name, e.cfg.Priority, e.cfg.QueueLen, e.cfg.Workers, s.Submitted, s.Backlogged, s.Rejected, s.Completed)
}

// setPaused holds (true) or releases (false) the workers before their next
// dequeue.
func (e *Engine) setPaused(p bool) {
	e.mu.Lock()
	e.paused = p
	e.cond.Broadcast()
	e.mu.Unlock()
}
