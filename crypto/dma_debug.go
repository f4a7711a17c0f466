package crypto

import (
	"fmt"
	"hash/fnv"
	"sync/atomic"

	"github.com/vfslab/vfslab/kernel"
)

// The DMA-API debug check (kernel/dma/debug.c, CONFIG_DMA_API_DEBUG) as the
// model's hardware engines meet it. The model's engine driver maps what it
// is handed in its ->encrypt and ->decrypt, in the submitting task's
// context, before it queues the request (as ccree's cc_cipher_process
// does): its request context, where its DMA descriptors and its copy of
// the IV live, with dma_map_single (SizeofSkcipherRequest + reqsize bytes
// from the request's start), its source and destination scatterlists with
// dma_map_sg, and, with EngineConfig.MapsIV, req->iv itself with
// dma_map_single. Each mapping goes through the debug hooks:
//
//   - debug_dma_map_single: memory in the vmalloc area is reported "device
//     driver maps memory from vmalloc area [addr=%p] [len=%lu]";
//   - debug_dma_map_page / debug_dma_map_sg -> check_for_stack: memory on
//     the current task's stack is reported "device driver maps memory from
//     stack [addr=%p]".
//
// The model's stacks are direct-mapped (CONFIG_VMAP_STACK=n, so
// check_for_stack's object_is_on_stack branch decides). With
// CONFIG_VMAP_STACK=y, a dma_map_single of a stack address would instead be
// reported by debug_dma_map_single as "from invalid area" (then "from
// vmalloc area"), and a driver that maps on its own kthread (crypto_engine's
// do_one_request) escapes check_for_stack, which looks at current's stack
// only; neither is modelled. Scatterlist entries in the model always cover
// kmalloc'd or page-cache memory, so the sg check never fires today; the
// memory classes are there for the request and the IV.
//
// Each report goes through err_printk: error_count is incremented, and the
// first num_errors reports (1 at boot, /sys/kernel/debug/dma-api/num_errors)
// or all of them (all_errors) are WARN(1, "DMA-API: %s %s: ...",
// dev_driver_string(dev), dev_name(dev)) on the mapping task: a kernel
// warning recorded in the machine's Warnings (kernel.Task.Warn) that
// taints it 'W'; the mapping, and the request, go on. The kernel keeps
// error_count and num_errors globally; the model keeps them per engine
// (one device each), so that machines and tests do not share them.
//
// CONFIG_DMA_API_DEBUG is on in the model (it is in debug kernels; the
// model's machines are debug machines in that respect, as for KASAN);
// EngineConfig.DMADebugOff is the dma_debug=off boot parameter. The check
// costs nothing on the synchronous paths: only an engine's submission runs
// it, and it allocates only when it reports.

// dmaMem is where memory a driver maps lives, for the debug checks.
type dmaMem uint8

const (
	// dmaLinear is the linear map: kmalloc'd memory, pages.
	dmaLinear dmaMem = iota
	// dmaStack is the current task's (direct-mapped) stack.
	dmaStack
	// dmaVmalloc is the vmalloc area.
	dmaVmalloc
)

// dmaDebug is the dma-debug state of one engine (one device).
type dmaDebug struct {
	// disabled is global_disable (dma_debug=off).
	disabled bool
	// allErrors is show_all_errors.
	allErrors bool
	// numErrors is show_num_errors.
	numErrors atomic.Int64
	// errorCount is error_count.
	errorCount atomic.Uint64
}

func (d *dmaDebug) init(cfg *EngineConfig) {
	d.disabled = cfg.DMADebugOff
	d.allErrors = cfg.DMADebugAllErrors
	d.numErrors.Store(1)
}

// debugDMAMapSingle is dma_map_single's debug hooks (debug_dma_map_single,
// then debug_dma_map_page's check_for_stack) for size bytes of memory of
// class mem, the mapping's position in the caller's frame being off (for
// the %p the report prints).
func (e *Engine) debugDMAMapSingle(t *kernel.Task, mem dmaMem, off, size int) {
	d := &e.dma
	if d.disabled || mem == dmaLinear {
		return
	}
	switch mem {
	case dmaVmalloc:
		e.dmaErrPrintk(t, "debug_dma_map_single", "device driver maps memory from vmalloc area [addr=%s] [len=%d]", hashedPtr(t, mem, off), size)
	case dmaStack:
		e.dmaErrPrintk(t, "check_for_stack", "device driver maps memory from stack [addr=%s]", hashedPtr(t, mem, off))
	}
}

// dmaErrPrintk is err_printk (kernel/dma/debug.c) for this engine's device.
func (e *Engine) dmaErrPrintk(t *kernel.Task, fn, format string, args ...any) {
	d := &e.dma
	d.errorCount.Add(1)
	if !d.allErrors && d.numErrors.Add(-1) < 0 {
		return
	}
	t.Warn(fn, "DMA-API: %s %s: %s", e.cfg.Name, e.devName(), fmt.Sprintf(format, args...))
}

// devName is dev_name of the engine's device: a platform device named
// after the engine, instance 0.
func (e *Engine) devName() string { return e.cfg.Name + ".0" }

// hashedPtr is what %p prints for an address in the task's frame (or in
// the vmalloc area): a hashed value, shown as 16 hex digits of which the
// upper eight are zero on 64-bit (lib/vsprintf.c ptr_to_id). The model has
// no addresses; it hashes the task and the position, which keeps reports
// of one run stable.
func hashedPtr(t *kernel.Task, mem dmaMem, off int) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%d/%s/%d/%d", t.PID, t.Comm, mem, off)
	return fmt.Sprintf("%016x", h.Sum32())
}

// dmaMapRequest is the driver's mappings of req at submission: its request
// context (dma_map_single) and, with MapsIV, req->iv.
func (e *Engine) dmaMapRequest(t *kernel.Task, req *SkcipherRequest) {
	if e.dma.disabled {
		return
	}
	if req.stackMem {
		e.debugDMAMapSingle(t, dmaStack, 0, SizeofSkcipherRequest+req.h.tfm.reqsize)
	}
	if e.cfg.MapsIV && req.ivOnStack && len(req.h.iv) > 0 {
		// The IV is in the caller's frame after its request (when the
		// request is there too) or by itself.
		e.debugDMAMapSingle(t, dmaStack, SizeofSkcipherRequest+MaxSkcipherReqSize, len(req.h.iv))
	}
}

// DMADebugErrors is /sys/kernel/debug/dma-api/error_count for the engine's
// device: the number of errors the DMA-API debug checks found, reported or
// not.
func (e *Engine) DMADebugErrors() uint64 { return e.dma.errorCount.Load() }
