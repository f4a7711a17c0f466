package kmem

import (
	"runtime"
	"sort"
	"strings"
	"sync"
)

// Tracker is the object-level bookkeeping of a debug kernel's memory
// checkers, for one machine: what KASAN's generic mode (mm/kasan/generic.c,
// mm/kasan/quarantine.c, mm/kasan/report.c) and kmemleak (mm/kmemleak.c)
// keep per slab object. It is made only for a machine that asks for it
// (kernel.Config.Track, which vfslab review and debug configurations set);
// a task without one pays one nil check per kmalloc and kfree, and no
// allocation.
//
// For every kmalloc'd buffer it records the allocation site, the stack of
// the allocating call (kasan_save_alloc_info) and the "syscall" the
// allocation happened in (SetStep); kfree records the freeing stack
// (kasan_save_free_info), poisons the object (0x6b..0xa5, as slub_debug's
// P does) and keeps it in a bounded quarantine, as KASAN does, so that
//
//   - a second kfree of a quarantined object is a double free (KASAN:
//     "double-free", mm/kasan/common.c check_slab_allocation), reported
//     with both stacks, and the second free is not performed;
//   - Check finds quarantined objects whose poison was overwritten: a
//     write after free ("KASAN: slab-use-after-free"; KASAN itself catches
//     the access, the model finds its effect at the next check, as SLUB's
//     check_object reports "Poison overwritten");
//   - Live lists the objects still allocated, with their allocation site
//     and stack: kmemleak's view at teardown.
//
// kmem_cache objects the model keeps as Go structs (Cache) have no byte
// buffer and are not tracked here; their counts are in Stats.
//
// Deviations: reads after free are not seen (only their effect: the poison
// read back); an invalid free of a pointer the tracker never saw is not
// reported (every object of a tracked machine is seen, so the case is a
// buffer the model did not get from Kmalloc).
type Tracker struct {
	mu    sync.Mutex
	step  int
	live  map[*byte]*Object
	freed map[*byte]*Object
	// quarantine is the FIFO of freed objects (KASAN's global quarantine,
	// bounded by QuarantineBytes).
	quarantine []*Object
	qbytes     int
	reports    []TrackReport
}

// QuarantineBytes bounds the bytes of freed objects a Tracker keeps
// poisoned (KASAN's quarantine is 1/32 of memory; the model's machines are
// small).
const QuarantineBytes = 8 << 20

// trackDepth is the number of frames saved per stack (KASAN's stack depot
// saves up to 64; the model's call chains are short).
const trackDepth = 24

// Object is one tracked slab object.
type Object struct {
	// Site is the allocation site's name; Size the requested size.
	Site string
	Size int
	// Step is the SetStep value when the object was allocated (-1:
	// before the first step).
	Step int
	// FreeStep is the SetStep value when it was freed (-1: live).
	FreeStep int

	buf   []byte
	alloc [trackDepth]uintptr
	free  [trackDepth]uintptr
}

// AllocStack returns the allocating call's stack, innermost first, as
// "package.Function" names (the allocator's own frames left out).
func (o *Object) AllocStack() []string { return frames(o.alloc[:]) }

// FreeStack returns the freeing call's stack (empty while live).
func (o *Object) FreeStack() []string { return frames(o.free[:]) }

// TrackReport is one report of the tracker.
type TrackReport struct {
	// Kind is "double-free" or "use-after-free".
	Kind string
	// Object is the object concerned (a copy of its record).
	Object Object
	// Offset is the first overwritten byte of a use-after-free (-1 for a
	// double free); Stack the second free's stack for a double free.
	Offset int
	Stack  []string
	// Step is the SetStep value when the report was made.
	Step int
}

// NewTracker returns an empty tracker.
func NewTracker() *Tracker {
	return &Tracker{step: -1, live: map[*byte]*Object{}, freed: map[*byte]*Object{}}
}

// SetStep tags the allocations and frees that follow with step n (the
// index of the syscall a caller is about to run; -1 for set-up).
func (tr *Tracker) SetStep(n int) {
	tr.mu.Lock()
	tr.step = n
	tr.mu.Unlock()
}

// key is the object's identity: the address of its first byte.
func key(buf []byte) *byte { return &buf[:1][0] }

// saveStack records the caller's stack past the allocator's frames.
func saveStack(dst *[trackDepth]uintptr) {
	*dst = [trackDepth]uintptr{}
	runtime.Callers(4, dst[:])
}

func (tr *Tracker) alloc(site *Site, buf []byte) {
	o := &Object{Site: site.name, Size: len(buf), FreeStep: -1, buf: buf}
	saveStack(&o.alloc)
	k := key(buf)
	tr.mu.Lock()
	o.Step = tr.step
	tr.live[k] = o
	tr.mu.Unlock()
}

// free records the kfree of buf; it returns false when the free must not
// be performed (a double free, reported).
func (tr *Tracker) free(buf []byte) bool {
	k := key(buf)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if o, ok := tr.live[k]; ok {
		delete(tr.live, k)
		saveStack(&o.free)
		o.FreeStep = tr.step
		poison(o.buf)
		tr.freed[k] = o
		tr.quarantine = append(tr.quarantine, o)
		tr.qbytes += cap(o.buf)
		for tr.qbytes > QuarantineBytes && len(tr.quarantine) > 0 {
			old := tr.quarantine[0]
			tr.quarantine = tr.quarantine[1:]
			tr.qbytes -= cap(old.buf)
			delete(tr.freed, key(old.buf))
		}
		return true
	}
	if o, ok := tr.freed[k]; ok {
		var st [trackDepth]uintptr
		saveStack(&st)
		tr.reports = append(tr.reports, TrackReport{Kind: "double-free", Object: *o, Offset: -1, Stack: frames(st[:]), Step: tr.step})
		return false
	}
	return true
}

// poison fills a freed object as SLUB's P option does.
func poison(buf []byte) {
	buf = buf[:cap(buf)]
	for i := range buf[:len(buf)-1] {
		buf[i] = PoisonFree
	}
	buf[len(buf)-1] = PoisonEnd
}

// Check scans the quarantine for objects written after their free and
// reports each once (the object then leaves the quarantine). It returns
// every report made since the previous call, double frees included.
func (tr *Tracker) Check() []TrackReport {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	kept := tr.quarantine[:0]
	for _, o := range tr.quarantine {
		if off := poisonBroken(o.buf); off >= 0 {
			tr.reports = append(tr.reports, TrackReport{Kind: "use-after-free", Object: *o, Offset: off, Step: tr.step})
			delete(tr.freed, key(o.buf))
			tr.qbytes -= cap(o.buf)
			continue
		}
		kept = append(kept, o)
	}
	clear(tr.quarantine[len(kept):])
	tr.quarantine = kept
	out := tr.reports
	tr.reports = nil
	return out
}

// poisonBroken returns the first byte of a freed object that no longer
// holds its poison, or -1.
func poisonBroken(buf []byte) int {
	buf = buf[:cap(buf)]
	last := len(buf) - 1
	for i, b := range buf[:last] {
		if b != PoisonFree {
			return i
		}
	}
	if buf[last] != PoisonEnd {
		return last
	}
	return -1
}

// Live returns the objects allocated and not freed, oldest step first.
func (tr *Tracker) Live() []*Object {
	tr.mu.Lock()
	out := make([]*Object, 0, len(tr.live))
	for _, o := range tr.live {
		out = append(out, o)
	}
	tr.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Step != out[j].Step {
			return out[i].Step < out[j].Step
		}
		return out[i].Site < out[j].Site
	})
	return out
}

// allocatorFrames are the allocator's entry points, left out of stacks.
var allocatorFrames = map[string]bool{"kmem.Kmalloc": true, "kmem.Kzalloc": true, "kmem.Kfree": true,
	"kmem.KfreeSensitive": true, "kmem.saveStack": true, "kmem.(*Tracker).alloc": true, "kmem.(*Tracker).free": true}

// frames symbolises a saved stack, innermost first, dropping the
// allocator's and the task wrapper's frames and the runtime's.
func frames(pcs []uintptr) []string {
	n := 0
	for n < len(pcs) && pcs[n] != 0 {
		n++
	}
	if n == 0 {
		return nil
	}
	var out []string
	fs := runtime.CallersFrames(pcs[:n])
	for {
		f, more := fs.Next()
		name := f.Function
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			name = name[i+1:]
		}
		switch {
		case name == "", strings.HasPrefix(name, "runtime."), allocatorFrames[name],
			strings.HasPrefix(name, "kernel.(*Task).K"):
		default:
			out = append(out, name)
		}
		if !more {
			break
		}
	}
	return out
}
