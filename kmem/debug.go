package kmem

import "runtime"

// Object poison values of SLUB debugging (include/linux/poison.h).
const (
	PoisonFree = 0x6b // POISON_FREE: the payload of a freed object
	PoisonEnd  = 0xa5 // POISON_END: the last byte of a freed object
)

// SlubDebug models the work SLUB does per allocation and free when it runs
// with debugging on (slub_debug=FZPU, as in Android userdebug and most
// debug kernels; mm/slub.c alloc_debug_processing, free_debug_processing,
// set_track, init_object, check_object):
//
//   - U (user tracking): the allocating and freeing call stacks are saved
//     (stack_trace_save into the stack depot) on every kmalloc and kfree;
//   - P (poisoning): a freed object's payload is filled with POISON_FREE and
//     its last byte with POISON_END, and the allocator reads the payload
//     back on the next allocation to check the poison;
//   - F/Z (sanity checks, red zones): folded into the same walks.
//
// The model does the same work (a real stack walk, a real fill and scan of
// the object) rather than adding a made-up delay, so its cost scales with
// stack depth and object size as the kernel's does. A freed buffer reads as
// 0x6b..0xa5 afterwards, which makes a use-after-free visible in tests.
//
// Go's unwinder costs several times what the kernel's frame-pointer or ORC
// unwinder does per frame, so this mode overstates the absolute cost of an
// allocation; it is a switch for "allocations are expensive here", not a
// calibrated model of one device.
//
// A SlubDebug belongs to one task (its scratch stack buffer is not shared).
type SlubDebug struct {
	pcs [16]uintptr // TRACK_ADDRS_COUNT frames, as CONFIG_STACKDEPOT saves
	// Tracks counts saved stack traces (alloc + free), for tests.
	Tracks uint64
	sink   uintptr
}

func (d *SlubDebug) track() {
	n := runtime.Callers(3, d.pcs[:])
	// Hash the frames like the stack depot does before storing them.
	h := uintptr(n)
	for _, pc := range d.pcs[:n] {
		h = h*31 + pc
	}
	d.sink ^= h
	d.Tracks++
}

func (d *SlubDebug) alloc(buf []byte) {
	d.track()
	// check_object: the payload of a previously freed object must still
	// hold its poison; the model's fresh Go memory is zero, and the scan
	// is the cost that matters.
	var acc byte
	for _, b := range buf {
		acc |= b
	}
	d.sink += uintptr(acc)
}

func (d *SlubDebug) free(buf []byte) {
	d.track()
	if len(buf) == 0 {
		return
	}
	for i := range buf[:len(buf)-1] {
		buf[i] = PoisonFree
	}
	buf[len(buf)-1] = PoisonEnd
}
