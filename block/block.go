// Package block is a minimal model of the kernel's block I/O descriptors as
// the read path of an encrypted file sees them: struct folio (a page-cache
// folio of 2^order pages, include/linux/mm_types.h) and struct bio with its
// folio vectors, status and completion (include/linux/blk_types.h,
// include/linux/bio.h).
//
// Only what fscrypt's read path and the Crypto API's whole-bio requests of
// seed 003 need is modelled: a Bio is a list of (folio, offset, length)
// vectors over folios whose Data holds the file contents, an I/O status
// (blk_status_t) and an end_io callback. Iteration follows the kernel's
// folio_iter: bio_first_folio / bio_next_folio, and BioForEachFolioAll for
// bio_for_each_folio_all.
//
// Locking: a Bio and its folios belong to whoever submitted or completed
// them, as in the kernel; a page-cache folio is locked (Folio.Lock,
// PG_locked) for the duration of its read, and the completion unlocks it
// (Folio.EndRead). loop.go is drivers/block/loop.c: a device whose bios
// its own worker completes.
package block

import (
	"fmt"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// Page geometry of the modelled machine (x86-64: 4 KiB pages).
const (
	// PageShift is PAGE_SHIFT.
	PageShift = 12
	// PageSize is PAGE_SIZE.
	PageSize = 1 << PageShift
	// MaxFolioOrder bounds the folio order the model accepts
	// (MAX_PAGECACHE_ORDER is 8 on x86-64 with THP: 1 MiB folios).
	MaxFolioOrder = 8
)

// Folio is struct folio as a page-cache folio: 2^Order contiguous pages
// caching the file range starting at page Index. Data holds the folio's
// bytes (PageSize << Order); the filesystem reads ciphertext into it and
// fscrypt decrypts it in place.
//
// Its flags are the kernel's page flags (include/linux/page-flags.h):
// PG_locked (Lock, TryLock, Unlock, WaitLocked), PG_uptodate
// (TestUptodate, MarkUptodate), PG_readahead (TestReadahead,
// SetReadahead, ClearReadahead) and the model's read error mark
// (TestError). They are atomic, as the kernel's bit operations are: a
// reader may test PG_uptodate without the lock. PG_locked is a mutex,
// which the task that completes a read unlocks (folio_end_read), as
// folio_unlock may run in another context than folio_lock; WaitLocked
// is folio_wait_locked. A Folio must not be copied once in use.
type Folio struct {
	// Index is folio->index: the file offset of the folio in pages.
	Index uint64
	// Order is the folio order: the folio spans 1<<Order pages.
	Order uint
	// Data is the folio's memory, len(Data) == PageSize<<Order.
	Data []byte
	// Host stands for folio->mapping->host: the inode whose page cache
	// holds the folio. The filesystem layer sets it; block never reads it.
	Host any

	flags atomic.Uint32
	lock  sync.Mutex
}

// Folio flag bits (the model's numbering; the kernel's PG_* are bit
// numbers of folio->flags).
const (
	pgLocked uint32 = 1 << iota
	pgUptodate
	pgReadahead
	pgError
)

// Lock is folio_lock: it sleeps until it holds PG_locked.
func (f *Folio) Lock() {
	f.lock.Lock()
	f.flags.Or(pgLocked)
}

// TryLock is folio_trylock: PG_locked if it is free, without sleeping.
func (f *Folio) TryLock() bool {
	if !f.lock.TryLock() {
		return false
	}
	f.flags.Or(pgLocked)
	return true
}

// Unlock is folio_unlock: it clears PG_locked and wakes the waiters. Any
// task may unlock a folio another locked (the read completion does).
func (f *Folio) Unlock() {
	f.flags.And(^pgLocked)
	f.lock.Unlock()
}

// TestLocked is folio_test_locked.
func (f *Folio) TestLocked() bool { return f.flags.Load()&pgLocked != 0 }

// WaitLocked is folio_wait_locked: it sleeps until PG_locked is clear
// (the read in flight on the folio has completed). What the completion
// wrote before unlocking is visible afterwards.
func (f *Folio) WaitLocked() {
	f.lock.Lock()
	//lint:ignore SA2001 the empty critical section is the wait for the unlock
	f.lock.Unlock()
}

// TestUptodate is folio_test_uptodate.
func (f *Folio) TestUptodate() bool { return f.flags.Load()&pgUptodate != 0 }

// MarkUptodate is folio_mark_uptodate.
func (f *Folio) MarkUptodate() { f.flags.Or(pgUptodate) }

// ClearUptodate is folio_clear_uptodate.
func (f *Folio) ClearUptodate() { f.flags.And(^pgUptodate) }

// TestError reports whether the last read of the folio failed (the model's
// mark for a folio left !uptodate by folio_end_read(folio, false)).
func (f *Folio) TestError() bool { return f.flags.Load()&pgError != 0 }

// TestReadahead is folio_test_readahead (PG_readahead: the folio that
// triggers the next asynchronous readahead when a read reaches it).
func (f *Folio) TestReadahead() bool { return f.flags.Load()&pgReadahead != 0 }

// SetReadahead is folio_set_readahead.
func (f *Folio) SetReadahead() { f.flags.Or(pgReadahead) }

// ClearReadahead is folio_clear_readahead.
func (f *Folio) ClearReadahead() { f.flags.And(^pgReadahead) }

// EndRead is folio_end_read (mm/filemap.c): the end of a read of a locked
// folio. With success the folio becomes uptodate; without, it stays
// !uptodate (and the model marks the error). Then PG_locked is cleared and
// the waiters woken.
func (f *Folio) EndRead(success bool) {
	if success {
		f.flags.Or(pgUptodate)
		f.flags.And(^pgError)
	} else {
		f.flags.Or(pgError)
	}
	f.Unlock()
}

// Reset makes an unlocked folio fresh for reuse at page index index with
// host host (the page allocator handing out a freed page): flags cleared,
// data kept (the caller overwrites it).
func (f *Folio) Reset(index uint64, host any) {
	f.Index, f.Host = index, host
	f.flags.Store(0)
}

// NewFolio returns a folio of 2^order pages at page index index, with zeroed
// data. It panics for an order above MaxFolioOrder: that is a programming
// error of the caller, not an I/O condition.
func NewFolio(index uint64, order uint) *Folio {
	if order > MaxFolioOrder {
		panic(fmt.Sprintf("block: folio order %d > %d", order, MaxFolioOrder))
	}
	return &Folio{Index: index, Order: order, Data: make([]byte, PageSize<<order)}
}

// Size returns folio_size(folio): PageSize << Order.
func (f *Folio) Size() int { return PageSize << f.Order }

// Pos returns folio_pos(folio): the byte offset in the file of the folio's
// first byte.
func (f *Folio) Pos() int64 { return int64(f.Index) << PageShift }

// String is the canonical one-line dump: "folio{index=3 order=0 size=4096}".
func (f *Folio) String() string {
	return fmt.Sprintf("folio{index=%d order=%d size=%d uptodate=%t}", f.Index, f.Order, f.Size(), f.TestUptodate())
}

// FolioVec is one vector of a bio: Len bytes of Folio starting at Offset
// (struct bio_vec over a folio, as bio_add_folio stores it).
type FolioVec struct {
	Folio  *Folio
	Offset int
	Len    int
}

// BlkStatus is blk_status_t (include/linux/blk_types.h): the I/O status of a
// bio. Zero is BLK_STS_OK.
type BlkStatus uint8

// Status values used by the model, with the kernel's numbers.
const (
	BlkStsOK         BlkStatus = 0  // BLK_STS_OK
	BlkStsNotSupp    BlkStatus = 1  // BLK_STS_NOTSUPP
	BlkStsNoSpc      BlkStatus = 3  // BLK_STS_NOSPC
	BlkStsTransport  BlkStatus = 4  // BLK_STS_TRANSPORT
	BlkStsTarget     BlkStatus = 5  // BLK_STS_TARGET
	BlkStsMedium     BlkStatus = 7  // BLK_STS_MEDIUM
	BlkStsProtection BlkStatus = 8  // BLK_STS_PROTECTION
	BlkStsResource   BlkStatus = 9  // BLK_STS_RESOURCE
	BlkStsIOErr      BlkStatus = 10 // BLK_STS_IOERR
	BlkStsAgain      BlkStatus = 12 // BLK_STS_AGAIN
)

var blkStatusErrno = []struct {
	sts  BlkStatus
	err  syscall.Errno
	name string
}{
	{BlkStsNotSupp, errno.EOPNOTSUPP, "BLK_STS_NOTSUPP"},
	{BlkStsNoSpc, errno.ENOSPC, "BLK_STS_NOSPC"},
	{BlkStsTransport, syscall.Errno(67), "BLK_STS_TRANSPORT"}, // ENOLINK
	{BlkStsTarget, syscall.Errno(121) /* EREMOTEIO */, "BLK_STS_TARGET"},
	{BlkStsMedium, syscall.Errno(61) /* ENODATA */, "BLK_STS_MEDIUM"},
	{BlkStsProtection, syscall.Errno(84) /* EILSEQ */, "BLK_STS_PROTECTION"},
	{BlkStsResource, errno.ENOMEM, "BLK_STS_RESOURCE"},
	{BlkStsAgain, errno.EAGAIN, "BLK_STS_AGAIN"},
	{BlkStsIOErr, errno.EIO, "BLK_STS_IOERR"},
}

// String names the status as the kernel does ("BLK_STS_IOERR").
func (s BlkStatus) String() string {
	if s == BlkStsOK {
		return "BLK_STS_OK"
	}
	for _, e := range blkStatusErrno {
		if e.sts == s {
			return e.name
		}
	}
	return fmt.Sprintf("BLK_STS(%d)", uint8(s))
}

// ErrnoToBlkStatus is errno_to_blk_status (block/blk-core.c): nil maps to
// BLK_STS_OK, a known errno to its status, anything else to BLK_STS_IOERR.
func ErrnoToBlkStatus(err error) BlkStatus {
	if err == nil {
		return BlkStsOK
	}
	e, ok := errno.Of(err)
	if ok {
		switch e {
		case errno.EOPNOTSUPP:
			return BlkStsNotSupp
		case errno.ENOSPC:
			return BlkStsNoSpc
		case errno.ENOMEM:
			return BlkStsResource
		case errno.EAGAIN:
			return BlkStsAgain
		}
	}
	return BlkStsIOErr
}

// BlkStatusToErrno is blk_status_to_errno: nil for BLK_STS_OK, otherwise the
// errno the kernel maps the status to (EIO for unknown values).
func BlkStatusToErrno(s BlkStatus) error {
	if s == BlkStsOK {
		return nil
	}
	for _, e := range blkStatusErrno {
		if e.sts == s {
			return e.err
		}
	}
	return errno.EIO
}

// Bio is struct bio reduced to what a read completion sees: the folio
// vectors (bi_io_vec), the I/O status (bi_status), the completion callback
// (bi_end_io) and its private pointer (bi_private).
type Bio struct {
	// Vecs are the bio's folio vectors, in file order.
	Vecs []FolioVec
	// Status is bi_status, set by the device or by a completion step
	// (fscrypt sets it when decryption fails).
	Status BlkStatus
	// EndIO is bi_end_io, called by BioEndio.
	EndIO func(*Bio)
	// EndIOTask, when set, is bi_end_io for a completion that runs as
	// a task (BioEndioTask): t is the completing context (the loop
	// worker, the submitter of a synchronous device).
	EndIOTask func(t *kernel.Task, b *Bio)
	// Private is bi_private, for the submitter's use.
	Private any
	// Sector is bi_iter.bi_sector: the first 512-byte sector on the device.
	Sector uint64
}

// NewBio returns an empty bio with room for nrVecs vectors (bio_alloc).
func NewBio(nrVecs int) *Bio {
	return &Bio{Vecs: make([]FolioVec, 0, nrVecs)}
}

// AddFolio is bio_add_folio: it appends length bytes of folio starting at
// off. It returns false, adding nothing, when the range is not inside the
// folio or the length is not positive.
func (b *Bio) AddFolio(folio *Folio, length, off int) bool {
	if folio == nil || length <= 0 || off < 0 || off+length > folio.Size() {
		return false
	}
	b.Vecs = append(b.Vecs, FolioVec{Folio: folio, Offset: off, Len: length})
	return true
}

// Size returns bi_iter.bi_size: the total number of bytes of the vectors.
func (b *Bio) Size() int {
	n := 0
	for _, v := range b.Vecs {
		n += v.Len
	}
	return n
}

// FirstFolioAll is bio_first_folio_all: the folio of the first vector (nil
// for an empty bio).
func (b *Bio) FirstFolioAll() *Folio {
	if len(b.Vecs) == 0 {
		return nil
	}
	return b.Vecs[0].Folio
}

// BioEndio is bio_endio: it calls the bio's EndIO callback, if any.
func BioEndio(b *Bio) {
	if b.EndIO != nil {
		b.EndIO(b)
	}
}

// BioEndioTask is bio_endio run by task t: EndIOTask(t, b) if set,
// otherwise EndIO(b).
func BioEndioTask(t *kernel.Task, b *Bio) {
	defer t.Trace("bio_endio")()
	if b.EndIOTask != nil {
		b.EndIOTask(t, b)
		return
	}
	BioEndio(b)
}

// String is the canonical one-line dump: the status and each vector as
// "index+offset/len".
func (b *Bio) String() string {
	var s strings.Builder
	fmt.Fprintf(&s, "bio{status=%s size=%d vecs=[", b.Status, b.Size())
	for i, v := range b.Vecs {
		if i > 0 {
			s.WriteByte(' ')
		}
		fmt.Fprintf(&s, "%d+%d/%d", v.Folio.Index, v.Offset, v.Len)
	}
	s.WriteString("]}")
	return s.String()
}

// FolioIter is struct folio_iter (include/linux/bio.h): the position of an
// iteration over a bio's folios. Folio is nil once the iteration is over.
type FolioIter struct {
	Folio  *Folio
	Offset int
	Length int
	idx    int
}

// BioFirstFolio is bio_first_folio(fi, bio, i): it positions fi on vector i
// of bio (Folio nil when there is none).
func BioFirstFolio(fi *FolioIter, b *Bio, i int) {
	if i < 0 || i >= len(b.Vecs) {
		*fi = FolioIter{idx: i}
		return
	}
	v := b.Vecs[i]
	*fi = FolioIter{Folio: v.Folio, Offset: v.Offset, Length: v.Len, idx: i}
}

// BioNextFolio is bio_next_folio: it moves fi to the next vector.
func BioNextFolio(fi *FolioIter, b *Bio) {
	BioFirstFolio(fi, b, fi.idx+1)
}

// BioForEachFolioAll is bio_for_each_folio_all: it ranges over every vector
// of the bio in order.
//
//	for fi := range block.BioForEachFolioAll(bio) { ... fi.Folio ... }
func BioForEachFolioAll(b *Bio) iter.Seq[FolioIter] {
	return func(yield func(FolioIter) bool) {
		var fi FolioIter
		for BioFirstFolio(&fi, b, 0); fi.Folio != nil; BioNextFolio(&fi, b) {
			if !yield(fi) {
				return
			}
		}
	}
}
