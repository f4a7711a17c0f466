package fscrypt

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// MaxBioSize is the largest read bio the model builds (256 KiB, the bio
// size of seed 003's measurements).
const MaxBioSize = 256 << 10

// ReadPathOptions configures a ReadPath. Zero values take the defaults.
type ReadPathOptions struct {
	// DeviceWorkers is the number of goroutines completing bios (the block
	// device's completion contexts). Default 1, a loop device's worker.
	DeviceWorkers int
	// WorkqueueMaxActive is the max_active of the unbound decrypt
	// workqueue (fscrypt_read_workqueue: num_online_cpus()). Default
	// runtime.GOMAXPROCS(0).
	WorkqueueMaxActive int
	// BioSize is the size of each read bio, a multiple of the page size
	// up to MaxBioSize. Default MaxBioSize.
	BioSize int
	// Readahead is how many bios the reader keeps in flight. Default 8
	// (a 2 MiB readahead window with 256 KiB bios).
	Readahead int
	// Count enables event counting in the path's worker tasks.
	Count bool
}

// ReadPath models the read side of an encrypted file, from bio submission
// to decrypted page cache folios: the reader builds bios of up to 256 KiB
// of 4 KiB folios, a block device goroutine fills them with ciphertext from
// Disk and completes them, and completion decrypts them with DecryptBio as
// the crypto-bio variant says: on the unbound fscrypt read workqueue
// (workqueue, the way ext4's and f2fs's read completions queue
// fscrypt_decrypt_bio through fscrypt_enqueue_decrypt_work), or directly in
// the completion context (inline, chain and bio, as in seed 003's
// experiments, which removed the workqueue first).
//
// ReadPath is the read side without a filesystem, kept for the
// crypto-level benchmarks (BenchmarkReadPath), vfslab draw and vfslab
// trace readbio. Seed 003's experiment itself, sim's read workload, reads
// through the VFS instead: filemap_read, readahead, ext4's bios over a
// loop device, and EnqueueDecryptWork below.
type ReadPath struct {
	inode Inode
	// first is the page index of Disk[0] in the file.
	first uint64
	disk  []byte
	opts  ReadPathOptions

	devQ chan *block.Bio
	wq   chan *block.Bio
	wg   sync.WaitGroup
	// tasks are the device and workqueue workers (kernel threads).
	tasks []*kernel.Task

	poolMu sync.Mutex
	pool   []*block.Folio
	// bios and readers are the freed read bios and readers' states,
	// reused so that a read makes no Go allocation in steady state
	// (see Read).
	bios    []*readBio
	readers []*reader
}

// readBio is a read bio with what its Private carries: the reader's
// completion channel and whether it completed. Private points back at it.
type readBio struct {
	bio  block.Bio
	done chan *block.Bio
	// completed is set by the reader once the bio came back on done.
	completed bool
}

// reader is one Read's state: its completion channel and the ring of
// bios in flight, in submission order.
type reader struct {
	done     chan *block.Bio
	inflight []*readBio
}

// NewReadPath starts the device and workqueue goroutines of a read path for
// inode (whose key is set up), whose contents from page index first on are
// the ciphertext disk (a whole number of pages). Close it when done.
func NewReadPath(k *kernel.Kernel, inode Inode, first uint64, disk []byte, opts ReadPathOptions) (*ReadPath, error) {
	if opts.DeviceWorkers <= 0 {
		opts.DeviceWorkers = 1
	}
	if opts.WorkqueueMaxActive <= 0 {
		opts.WorkqueueMaxActive = runtime.GOMAXPROCS(0)
	}
	if opts.BioSize <= 0 {
		opts.BioSize = MaxBioSize
	}
	if opts.Readahead <= 0 {
		opts.Readahead = 8
	}
	if opts.BioSize%block.PageSize != 0 || opts.BioSize > MaxBioSize || len(disk)%block.PageSize != 0 {
		return nil, errno.EINVAL
	}
	if inode.CryptInfo() == nil {
		return nil, errno.ENOKEY
	}
	rp := &ReadPath{inode: inode, first: first, disk: disk, opts: opts,
		devQ: make(chan *block.Bio, 64), wq: make(chan *block.Bio, 64)}
	newTask := func(name string) *kernel.Task {
		w := k.NewTask(name)
		if opts.Count {
			w.EnableCounting()
		}
		rp.tasks = append(rp.tasks, w)
		return w
	}
	for i := 0; i < opts.DeviceWorkers; i++ {
		w := newTask(fmt.Sprintf("loop0/%d", i))
		rp.wg.Add(1)
		go rp.device(w)
	}
	for i := 0; i < opts.WorkqueueMaxActive; i++ {
		w := newTask(fmt.Sprintf("kworker/u%d:fscrypt_read_queue", i))
		rp.wg.Add(1)
		go rp.worker(w)
	}
	return rp, nil
}

// Close stops the path's goroutines.
func (rp *ReadPath) Close() {
	close(rp.devQ)
	close(rp.wq)
	rp.wg.Wait()
	for _, w := range rp.tasks {
		w.Exit()
	}
}

// Tasks returns the device and workqueue worker tasks (for their event
// counts once the path is closed).
func (rp *ReadPath) Tasks() []*kernel.Task { return rp.tasks }

// device is the block device: it reads each bio's sectors from the disk
// into its folios and completes it.
func (rp *ReadPath) device(w *kernel.Task) {
	defer rp.wg.Done()
	for bio := range rp.devQ {
		for _, v := range bio.Vecs {
			pos := (v.Folio.Index-rp.first)<<block.PageShift + uint64(v.Offset)
			copy(v.Folio.Data[v.Offset:v.Offset+v.Len], rp.disk[pos:])
		}
		rp.endio(w, bio)
	}
}

// endio is the filesystem's read completion (ext4 mpage_end_io /
// f2fs_read_end_io) for a bio that needs decryption.
func (rp *ReadPath) endio(w *kernel.Task, bio *block.Bio) {
	if bio.Status != block.BlkStsOK {
		rp.finish(bio)
		return
	}
	switch cryptoBio.Of(w.K.Patches()) {
	case BioWorkqueue:
		// fscrypt_enqueue_decrypt_work
		w.Inc(EvDecryptWork)
		rp.wq <- bio
	case BioInline, BioChain, BioWhole:
		rp.decrypt(w, bio)
	}
}

// worker is a fscrypt_read_workqueue worker.
func (rp *ReadPath) worker(w *kernel.Task) {
	defer rp.wg.Done()
	for bio := range rp.wq {
		rp.decrypt(w, bio)
	}
}

// decrypt runs DecryptBio at the completion boundary: a kernel BUG in the
// crypto code fails the bio instead of the program.
func (rp *ReadPath) decrypt(w *kernel.Task, bio *block.Bio) {
	var err error
	func() {
		defer w.Recover(&err)
		DecryptBio(w, bio)
	}()
	if err != nil {
		bio.Status = block.BlkStsIOErr
	}
	rp.finish(bio)
}

// finish marks the folios up to date (or failed) and wakes the reader
// (folio_end_read).
func (rp *ReadPath) finish(bio *block.Bio) {
	ok := bio.Status == block.BlkStsOK
	for _, v := range bio.Vecs {
		if ok {
			v.Folio.MarkUptodate()
		}
	}
	bio.Private.(*readBio).done <- bio
}

func (rp *ReadPath) getFolio(index uint64) *block.Folio {
	rp.poolMu.Lock()
	defer rp.poolMu.Unlock()
	if n := len(rp.pool); n > 0 {
		f := rp.pool[n-1]
		rp.pool = rp.pool[:n-1]
		f.Reset(index, rp.inode)
		return f
	}
	f := block.NewFolio(index, 0)
	f.Host = rp.inode
	return f
}

func (rp *ReadPath) putFolios(bio *block.Bio) {
	rp.poolMu.Lock()
	for _, v := range bio.Vecs {
		rp.pool = append(rp.pool, v.Folio)
	}
	rp.poolMu.Unlock()
}

// getBio is bio_alloc of a read bio with room for nr folios, done being
// the reader's completion channel. The kernel's bio comes from the
// fs_bio_set mempool (a slab the model does not account as a kmalloc);
// the model reuses the bios of earlier reads, as that mempool's slab
// reuses freed bios, so a read in steady state makes no Go allocation for
// them.
func (rp *ReadPath) getBio(nr int, done chan *block.Bio) *readBio {
	rp.poolMu.Lock()
	var rb *readBio
	if n := len(rp.bios); n > 0 {
		rb = rp.bios[n-1]
		rp.bios = rp.bios[:n-1]
	}
	rp.poolMu.Unlock()
	if rb == nil || cap(rb.bio.Vecs) < nr {
		rb = &readBio{bio: block.Bio{Vecs: make([]block.FolioVec, 0, nr)}}
	}
	vecs := rb.bio.Vecs[:0]
	clear(vecs[:cap(vecs)])
	rb.bio = block.Bio{Vecs: vecs, Private: rb}
	rb.done, rb.completed = done, false
	return rb
}

// putBio is bio_put of a read bio whose folios have been released.
func (rp *ReadPath) putBio(rb *readBio) {
	rb.done = nil
	rp.poolMu.Lock()
	rp.bios = append(rp.bios, rb)
	rp.poolMu.Unlock()
}

// getReader returns a reader's state, reused from an earlier Read.
func (rp *ReadPath) getReader() *reader {
	rp.poolMu.Lock()
	defer rp.poolMu.Unlock()
	if n := len(rp.readers); n > 0 {
		r := rp.readers[n-1]
		rp.readers = rp.readers[:n-1]
		return r
	}
	return &reader{done: make(chan *block.Bio, rp.opts.Readahead), inflight: make([]*readBio, 0, rp.opts.Readahead)}
}

func (rp *ReadPath) putReader(r *reader) {
	r.inflight = r.inflight[:0]
	rp.poolMu.Lock()
	rp.readers = append(rp.readers, r)
	rp.poolMu.Unlock()
}

// Read reads len(dst) bytes of the file at byte offset off (both multiples
// of the page size, inside the disk) through bios, decrypting them, into
// dst. Errors: EINVAL for a bad range, EIO (or the errno of the bio's
// status) when a bio fails.
//
// Once a first read has filled the path's pools, a read makes no Go
// allocation besides what the decryption's kmallocs make: its folios,
// bios and completion channel are reused (the kernel's page cache folios,
// bio mempool and the reader's stack).
func (rp *ReadPath) Read(t *kernel.Task, dst []byte, off int64) error {
	if off%block.PageSize != 0 || len(dst)%block.PageSize != 0 || off < int64(rp.first)<<block.PageShift ||
		off-int64(rp.first)<<block.PageShift+int64(len(dst)) > int64(len(rp.disk)) {
		return errno.EINVAL
	}
	r := rp.getReader()
	defer rp.putReader(r)
	var firstErr error
	// Submit in order, keep Readahead bios in flight, copy out in order.
	next := 0
	for pos := 0; pos < len(dst) || len(r.inflight) > 0; {
		for pos < len(dst) && len(r.inflight) < rp.opts.Readahead {
			n := min(rp.opts.BioSize, len(dst)-pos)
			rb := rp.getBio(n/block.PageSize, r.done)
			bio := &rb.bio
			index := uint64(off+int64(pos)) >> block.PageShift
			for i := 0; i < n/block.PageSize; i++ {
				bio.AddFolio(rp.getFolio(index+uint64(i)), block.PageSize, 0)
			}
			bio.Sector = uint64(off+int64(pos)) >> 9
			r.inflight = append(r.inflight, rb)
			rp.devQ <- bio
			pos += n
		}
		rb := r.inflight[0]
		for !rb.completed {
			(<-r.done).Private.(*readBio).completed = true
		}
		copy(r.inflight, r.inflight[1:])
		r.inflight = r.inflight[:len(r.inflight)-1]
		head := &rb.bio
		if head.Status != block.BlkStsOK && firstErr == nil {
			firstErr = block.BlkStatusToErrno(head.Status)
		}
		for _, v := range head.Vecs {
			if head.Status == block.BlkStsOK {
				copy(dst[next:next+v.Len], v.Folio.Data[v.Offset:v.Offset+v.Len])
			}
			next += v.Len
		}
		rp.putFolios(head)
		rp.putBio(rb)
	}
	return firstErr
}

// ReadWorkqueue is fscrypt_read_workqueue of machine k (fs/crypto/crypto.c
// fscrypt_init: alloc_workqueue("fscrypt_read_queue", WQ_UNBOUND |
// WQ_HIGHPRI, num_online_cpus()), the CPUs being GOMAXPROCS).
func ReadWorkqueue(k *kernel.Kernel) *kernel.Workqueue {
	return k.Workqueue("fscrypt_read_queue", runtime.GOMAXPROCS(0))
}

// EnqueueDecryptWork is fscrypt_enqueue_decrypt_work, as the crypto-bio
// variant has it: in the workqueue variant (the kernel's) the filesystem's
// post-read work (ext4's decrypt_work) is queued on fscrypt_read_workqueue
// and runs on a kworker; seed 003's experiments removed the workqueue, so
// in the inline, chain and bio variants the work runs at once, in the
// context of the bio's completion (t: the loop worker of the seed's
// loop device). t counts fscrypt_decrypt_work for a queued work.
func EnqueueDecryptWork(t *kernel.Task, w *kernel.Work) {
	switch v := cryptoBio.Of(t.K.Patches()); v {
	case BioWorkqueue:
		defer t.Trace("fscrypt_enqueue_decrypt_work")()
		t.Inc(EvDecryptWork)
		ReadWorkqueue(t.K).QueueWork(t, w)
	case BioInline, BioChain, BioWhole:
		if t.Tracing() {
			t.TraceNote("crypto-bio=%s: no decrypt workqueue; the post-read work runs in the bio's completion", CryptoBioPatch.Variants[v].Name)
		}
		w.Func.RunWork(t, w)
	}
}
