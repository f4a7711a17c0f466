package vfs

import (
	"math"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/kernel"
)

// Readahead (mm/readahead.c), as mainline has it since the 6.10 rework
// that split ondemand_readahead into page_cache_sync_ra and
// page_cache_async_ra: a read that misses the page cache starts a
// readahead window (file_ra_state: start, size, async_size) whose folios
// are allocated, locked and added to the page cache, then handed to the
// filesystem's ->readahead in one batch (read_pages); the folio at
// start+size-async_size is marked PG_readahead, and a read reaching it
// starts the next window asynchronously, so that a sequential reader finds
// its next window in flight. Windows start at get_init_ra_size of the
// request and grow by get_next_ra_size up to the bdi's ra_pages (the
// default read_ahead_kb 128: 32 pages), or up to the request itself, at
// most the device's io_pages, when a read(2) asks for more
// (ractl_max_pages): a 256 KiB read(2) on a loop device reads ahead in
// 256 KiB windows, a 1 MiB one in 1 MiB windows.
//
// The mapping has no large folios (ext4 of the seed's kernel has none), so
// page_cache_ra_order always takes its order-0 fallback.

// Readahead events.
var (
	EvReadaheadBatch = events.Register("readahead_batch", "readahead batches handed to ->readahead (read_pages)")
	EvReadaheadPages = events.Register("readahead_pages", "folios allocated and added to the page cache by readahead")
	EvReadaheadSync  = events.Register("page_cache_sync_ra", "synchronous readahead windows (a read missed the page cache)")
	EvReadaheadAsync = events.Register("page_cache_async_ra", "asynchronous readahead windows (a read reached a PG_readahead folio)")
)

// FileRAState is struct file_ra_state, a file's readahead state (f_ra).
type FileRAState struct {
	// Start, Size and AsyncSize are the last window: its first page, its
	// pages and how many of them are the asynchronous tail.
	Start     uint64
	Size      uint64
	AsyncSize uint64
	// Order is ra->order (always 0 here: no large folios).
	Order uint
	// RAPages is ra_pages, the window's maximum.
	RAPages uint64
	// PrevPos is prev_pos: the last byte read by the previous read, -1 at
	// open.
	PrevPos int64

	ok bool
}

// fileRAStateInit is file_ra_state_init: ra_pages from the bdi, prev_pos
// -1 (do_dentry_open runs it; the model runs it at the first read).
func fileRAStateInit(ra *FileRAState, m *AddressSpace) {
	*ra = FileRAState{RAPages: uint64(m.raPages()), PrevPos: -1, ok: true}
}

// ReadaheadControl is struct readahead_control: a batch of locked folios
// in the page cache, consecutive from Index, that ->readahead reads. The
// filesystem takes them in order with ReadaheadFolio.
type ReadaheadControl struct {
	// File is the file being read (nil for readahead without one).
	File *File
	// Mapping is the file's page cache.
	Mapping *AddressSpace
	// RA is the file's readahead state.
	RA *FileRAState

	index   uint64
	nrPages uint64
	batch   uint64
}

// ReadaheadIndex is readahead_index: the index of the next folio.
func (rac *ReadaheadControl) ReadaheadIndex() uint64 { return rac.index }

// ReadaheadCount is readahead_count: the pages left in the batch.
func (rac *ReadaheadControl) ReadaheadCount() uint64 { return rac.nrPages }

// ReadaheadFolio is readahead_folio: the next folio of the batch (locked;
// the filesystem unlocks it when its read completes, folio_end_read), or
// nil once the batch is used up.
func (rac *ReadaheadControl) ReadaheadFolio() *block.Folio {
	rac.index += rac.batch
	rac.nrPages -= rac.batch
	rac.batch = 0
	if rac.nrPages == 0 {
		return nil
	}
	f := rac.Mapping.pages[rac.index]
	rac.batch = 1 << f.Order
	return f
}

// Readaheader is implemented by the AddressSpaceOperations of a filesystem
// with ->readahead (ext4_readahead): with it, the mapping keeps a page
// cache and reads go through filemap_read and readahead.
type Readaheader interface {
	// Readahead is ->readahead: start reads of every folio of rac
	// (ReadaheadFolio until nil); each read ends with folio_end_read.
	// A folio it does not take is unlocked and dropped by read_pages.
	Readahead(t *kernel.Task, rac *ReadaheadControl)
}

// readPages is read_pages: the batch goes to ->readahead under a plug;
// folios the filesystem left are unlocked and removed.
func readPages(t *kernel.Task, rac *ReadaheadControl) {
	if rac.nrPages == 0 {
		return
	}
	defer t.Trace("read_pages")()
	t.Inc(EvReadaheadBatch)
	rac.Mapping.Ops.(Readaheader).Readahead(t, rac)
	for f := rac.ReadaheadFolio(); f != nil; f = rac.ReadaheadFolio() {
		rac.Mapping.removeFolio(f)
		f.Unlock()
		putFolio(f)
	}
}

// pageCacheRAUnbounded is page_cache_ra_unbounded: nr folios from
// rac's index are allocated, locked and added, the one at nr-lookahead
// marked PG_readahead; a folio already cached ends the batch so far
// (read_pages) and is skipped.
func pageCacheRAUnbounded(t *kernel.Task, rac *ReadaheadControl, nr, lookahead uint64) {
	defer t.Trace("page_cache_ra_unbounded")()
	m := rac.Mapping
	index := rac.index
	for i := uint64(0); i < nr; i++ {
		if m.pages[index+i] != nil {
			readPages(t, rac)
			rac.index++
			i = rac.index + rac.nrPages - index - 1
			continue
		}
		f := m.addNewFolio(index + i)
		if i == nr-lookahead {
			f.SetReadahead()
		}
		rac.nrPages++
		t.Inc(EvReadaheadPages)
	}
	readPages(t, rac)
}

// doPageCacheRA is do_page_cache_ra: pageCacheRAUnbounded cut at the page
// holding the file's last byte.
func doPageCacheRA(t *kernel.Task, rac *ReadaheadControl, nr, lookahead uint64) {
	isize := rac.Mapping.Host.Size()
	if isize == 0 {
		return
	}
	end := uint64(isize-1) >> block.PageShift
	index := rac.index
	if index > end {
		return
	}
	if nr > end-index {
		nr = end - index + 1
	}
	pageCacheRAUnbounded(t, rac, nr, lookahead)
}

// forcePageCacheRA is force_page_cache_ra: a read of nr pages as asked
// (up to the larger of io_pages and ra_pages), in 2 MiB chunks.
func forcePageCacheRA(t *kernel.Task, rac *ReadaheadControl, nr uint64) {
	m := rac.Mapping
	maxPages := uint64(max(m.ioPages(), int(rac.RA.RAPages)))
	nr = min(nr, maxPages)
	index := rac.index
	for nr > 0 {
		chunk := min(uint64(2<<20/PageSize), nr)
		rac.index = index
		doPageCacheRA(t, rac, chunk, 0)
		index += chunk
		nr -= chunk
	}
}

// getInitRASize is get_init_ra_size: the first window for a request of
// size pages.
func getInitRASize(size, max uint64) uint64 {
	n := roundupPowOfTwo(size)
	switch {
	case n <= max/32:
		return n * 4
	case n <= max/4:
		return n * 2
	}
	return max
}

// getNextRASize is get_next_ra_size: the window after one of ra.Size.
func getNextRASize(ra *FileRAState, max uint64) uint64 {
	cur := ra.Size
	if cur < max/16 {
		return 4 * cur
	}
	if cur <= max/2 {
		return 2 * cur
	}
	return max
}

func roundupPowOfTwo(n uint64) uint64 {
	p := uint64(1)
	for p < n {
		p <<= 1
	}
	return p
}

// ractlMaxPages is ractl_max_pages: ra_pages, or up to the request (at
// most io_pages) when the request exceeds the readahead window.
func ractlMaxPages(rac *ReadaheadControl, req uint64) uint64 {
	maxPages := rac.RA.RAPages
	io := uint64(rac.Mapping.ioPages())
	if req > maxPages && io > maxPages {
		maxPages = min(req, io)
	}
	return maxPages
}

// pageCacheRAOrder is page_cache_ra_order for a mapping without large
// folios: ra.order is reset and the window read with order-0 folios.
func pageCacheRAOrder(t *kernel.Task, rac *ReadaheadControl, ra *FileRAState) {
	ra.Order = 0
	doPageCacheRA(t, rac, ra.Size, ra.AsyncSize)
}

// pageCacheSyncRA is page_cache_sync_ra: a read of req pages from rac's
// index missed the page cache.
func pageCacheSyncRA(t *kernel.Task, rac *ReadaheadControl, req uint64) {
	defer t.Trace("page_cache_sync_ra")()
	t.Inc(EvReadaheadSync)
	ra := rac.RA
	index := rac.index
	if ra.RAPages == 0 {
		// Readahead disabled: read just the page (force_page_cache_ra
		// of one page).
		if rac.File == nil {
			return
		}
		forcePageCacheRA(t, rac, 1)
		return
	}
	maxPages := ractlMaxPages(rac, req)
	prevIndex := uint64(ra.PrevPos) >> block.PageShift
	// A start of file, an oversized read or a sequential miss.
	if index == 0 || req > maxPages || index-prevIndex <= 1 {
		ra.Start = index
		ra.Size = getInitRASize(req, maxPages)
		if ra.Size > req {
			ra.AsyncSize = ra.Size - req
		} else {
			ra.AsyncSize = ra.Size >> 1
		}
	} else {
		miss := rac.Mapping.prevMiss(index-1, maxPages)
		contig := index - miss - 1
		if contig <= req {
			// A small random read: as asked, the state untouched.
			doPageCacheRA(t, rac, req, 0)
			return
		}
		if miss == math.MaxUint64 {
			contig *= 2
		}
		ra.Start = index
		ra.Size = min(contig+req, maxPages)
		ra.AsyncSize = 1
	}
	ra.Order = 0
	rac.index = ra.Start
	pageCacheRAOrder(t, rac, ra)
}

// pageCacheAsyncRA is page_cache_async_ra: a read of req pages reached
// folio, marked PG_readahead; the next window starts.
func pageCacheAsyncRA(t *kernel.Task, rac *ReadaheadControl, folio *block.Folio, req uint64) {
	ra := rac.RA
	if ra.RAPages == 0 {
		return
	}
	defer t.Trace("page_cache_async_ra")()
	t.Inc(EvReadaheadAsync)
	folio.ClearReadahead()
	index := rac.index
	maxPages := ractlMaxPages(rac, req)
	nr := uint64(1) << folio.Order
	expected := (ra.Start + ra.Size - ra.AsyncSize) &^ (nr - 1)
	if index == expected {
		ra.Start += ra.Size
		ra.Size = max(ra.Size, getNextRASize(ra, maxPages))
	} else {
		// A marked folio without valid readahead state.
		start := rac.Mapping.nextMiss(index+1, maxPages)
		if start == 0 || start-index > maxPages {
			return
		}
		ra.Start = start
		ra.Size = start - index + req
		ra.Size = getNextRASize(ra, maxPages)
	}
	ra.Order += 2
	align := uint64(1) << min(ra.Order, uint(ffs(maxPages)-1))
	end := ra.Start + ra.Size
	if aligned := end &^ (align - 1); aligned > ra.Start {
		ra.Size -= end - aligned
	}
	ra.AsyncSize = ra.Size
	rac.index = ra.Start
	pageCacheRAOrder(t, rac, ra)
}

// ffs is ffs(): the 1-based index of the lowest set bit, 0 for 0.
func ffs(x uint64) int {
	if x == 0 {
		return 0
	}
	n := 1
	for x&1 == 0 {
		x >>= 1
		n++
	}
	return n
}
