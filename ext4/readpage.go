package ext4

import (
	"sync"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/vfs"
)

// fs/ext4/readpage.c: ext4's ->readahead. ext4_mpage_readpages turns a
// readahead batch into bios of contiguous blocks (a bio ends where the
// next block is not the one after the last, at a hole, or when it holds
// BIO_MAX_VECS folios), submits them to the device and returns; the bio's
// completion, mpage_end_io, runs the post-read steps (decryption for an
// encrypted file: fscrypt_enqueue_decrypt_work of decrypt_work, which
// calls fscrypt_decrypt_bio) and then __read_end_io, which ends the read
// of every folio (folio_end_read) and so wakes the reader.
//
// With the default read_ahead_kb (128) a read(2) of at most 128 KiB reads
// ahead in 128 KiB windows, so ext4 submits bios of 32 folios; a larger
// read(2) widens the window to the request, up to the device's io_pages
// (320 pages on a loop device), so cat's 256 KiB reads (coreutils' IO_BUFSIZE since 2024)
// make the 256 KiB bios seed 003 reports, and dd bs=1M makes 1 MiB ones
// (BIO_MAX_VECS = 256 folios). Blocks are pages in the model
// (blocks_per_page is 1), so the per-block map of a folio and the
// "confused" fallback to block_read_full_folio do not arise.

// bioMaxVecs is BIO_MAX_VECS.
const bioMaxVecs = 256

// The post-read steps of a bio (enum bio_post_read_step).
const (
	stepInitial = iota
	stepDecrypt
)

// bioPostReadCtxPool is bio_post_read_ctx_pool's slab
// (ext4_init_post_read_processing: a mempool over a kmem_cache of struct
// bio_post_read_ctx, 48 bytes on x86-64: bio, work_struct, cur_step,
// enabled_steps). mempool_alloc(GFP_NOFS) does not fail: when the slab
// does, the pool's reserve serves, so a failed Alloc is not an error.
var bioPostReadCtxPool = kmem.NewCache("ext4_bio_post_read_ctx", 48)

// readBio is a read bio with its struct bio_post_read_ctx (bi_private),
// reused from a pool (the fs_bio_set mempool and the ctx pool reuse freed
// objects, so a read in steady state makes no Go allocation for them).
type readBio struct {
	bio          block.Bio
	vecs         []block.FolioVec
	work         kernel.Work
	curStep      int
	enabledSteps int
	hasCtx       bool
}

var readBioPool struct {
	mu   sync.Mutex
	free []*readBio
}

// bioAlloc is bio_alloc(bdev, nr, REQ_OP_READ, GFP_KERNEL) of a read bio
// with room for nr folios.
func bioAlloc(nr int) *readBio {
	readBioPool.mu.Lock()
	var rb *readBio
	if n := len(readBioPool.free); n > 0 {
		rb = readBioPool.free[n-1]
		readBioPool.free = readBioPool.free[:n-1]
	}
	readBioPool.mu.Unlock()
	if rb == nil {
		rb = &readBio{vecs: make([]block.FolioVec, bioMaxVecs)}
		rb.work.Func = rb
	}
	rb.bio = block.Bio{Vecs: rb.vecs[:0:nr], Private: rb, EndIOTask: mpageEndIO}
	rb.curStep, rb.enabledSteps, rb.hasCtx = 0, 0, false
	return rb
}

// bioPut is bio_put of a completed read bio.
func bioPut(rb *readBio) {
	clear(rb.vecs)
	rb.bio = block.Bio{}
	readBioPool.mu.Lock()
	readBioPool.free = append(readBioPool.free, rb)
	readBioPool.mu.Unlock()
}

// aops are ext4's address_space_operations for regular files
// (ext4_aops): the block-mapped page operations every block filesystem of
// the model shares (vfs.BlockAops: ext4_read_folio, ext4_write_begin,
// writeback), with ext4's own ->readahead.
type aops struct {
	vfs.AddressSpaceOperations
	sb *SuperBlock
}

// Readahead is ext4_readahead: ext4_mpage_readpages over the batch (an
// inode with inline data has none: the model has no inline data).
func (a aops) Readahead(t *kernel.Task, rac *vfs.ReadaheadControl) {
	defer t.Trace("ext4_readahead")()
	ext4MpageReadpages(t, a.sb, EXT4_I(rac.Mapping.Host), rac)
}

// ext4MpageReadpages is ext4_mpage_readpages for a readahead batch: each
// folio's block is looked up in the inode's block map (ext4_map_blocks;
// the model's map is vfs.BlockMap), a hole or a page past i_size is zeroed
// and ends its read at once, and mapped folios go into bios of
// consecutive blocks, submitted as they fill or break.
func ext4MpageReadpages(t *kernel.Task, sb *SuperBlock, ei *Inode, rac *vfs.ReadaheadControl) {
	defer t.Trace("ext4_mpage_readpages")()
	inode := &ei.Inode
	var rb *readBio
	var lastBlockInBio uint32
	// ext4_readpage_limit: i_size (no verity in the model).
	lastBlockInFile := uint64(inode.Size()+vfs.PageSize-1) >> block.PageShift
	for nr := rac.ReadaheadCount(); nr > 0; nr-- {
		folio := rac.ReadaheadFolio()
		var addr uint32
		mapped := false
		if folio.Index < lastBlockInFile {
			addr, mapped = ei.data.Addr(folio.Index)
		}
		if !mapped {
			// first_hole == 0: a hole. Zero it; its read ends here.
			clear(folio.Data)
			folio.EndRead(true)
			continue
		}
		if rb != nil && lastBlockInBio != addr-1 {
			vfs.SubmitBio(t, sb.Dev, &rb.bio)
			rb = nil
		}
		for {
			if rb == nil {
				rb = bioAlloc(int(min(nr, bioMaxVecs)))
				ext4SetBioPostReadCtx(t, rb, inode)
				rb.bio.Sector = uint64(addr) << (block.PageShift - 9)
			}
			if len(rb.bio.Vecs) < cap(rb.bio.Vecs) && rb.bio.AddFolio(folio, folio.Size(), 0) {
				break
			}
			// The bio is full: submit_and_realloc.
			vfs.SubmitBio(t, sb.Dev, &rb.bio)
			rb = nil
		}
		lastBlockInBio = addr
	}
	if rb != nil {
		vfs.SubmitBio(t, sb.Dev, &rb.bio)
	}
}

// ext4SetBioPostReadCtx is ext4_set_bio_post_read_ctx: a bio of an
// encrypted file (fscrypt_inode_uses_fs_layer_crypto) gets a post-read
// context from the mempool with the decrypt step enabled.
func ext4SetBioPostReadCtx(t *kernel.Task, rb *readBio, inode *vfs.Inode) {
	if !inode.IsEncrypted() {
		return
	}
	_ = bioPostReadCtxPool.Alloc(&t.Ctx, kmem.GFPNoFS) // the reserve serves a failure
	rb.hasCtx = true
	rb.enabledSteps = 1 << stepDecrypt
}

// mpageEndIO is mpage_end_io, the bio's bi_end_io, in the completing
// task t: a bio that read without error and has post-read steps starts
// them (bio_post_read_required); otherwise the reads end.
func mpageEndIO(t *kernel.Task, bio *block.Bio) {
	defer t.Trace("mpage_end_io")()
	rb := bio.Private.(*readBio)
	if bio.Status == block.BlkStsOK && rb.hasCtx && rb.enabledSteps != 0 {
		rb.curStep = stepInitial
		bioPostReadProcessing(t, rb)
		return
	}
	readEndIO(t, rb)
}

// bioPostReadProcessing is bio_post_read_processing: the next enabled
// step. Decryption is handed to fscrypt_enqueue_decrypt_work, which
// queues decrypt_work on fscrypt's read workqueue or, in the crypto-bio
// variants that removed it, runs it here.
func bioPostReadProcessing(t *kernel.Task, rb *readBio) {
	rb.curStep++
	if rb.curStep == stepDecrypt {
		if rb.enabledSteps&(1<<stepDecrypt) != 0 {
			fscrypt.EnqueueDecryptWork(t, &rb.work)
			return
		}
		rb.curStep++
	}
	// STEP_VERITY: no fs-verity in the model; then the reads end.
	readEndIO(t, rb)
}

// RunWork is decrypt_work: fscrypt_decrypt_bio, then the remaining steps,
// or the end of the reads with the bio's error. A BUG in the decryption
// fails the bio instead of the machine.
func (rb *readBio) RunWork(t *kernel.Task, _ *kernel.Work) {
	defer t.Trace("decrypt_work")()
	var err error
	ok := false
	func() {
		defer t.Recover(&err)
		ok = fscrypt.DecryptBio(t, &rb.bio)
	}()
	if err != nil {
		rb.bio.Status = block.BlkStsIOErr
		ok = false
	}
	if ok {
		bioPostReadProcessing(t, rb)
		return
	}
	readEndIO(t, rb)
}

// readEndIO is __read_end_io: every folio's read ends (uptodate when the
// bio succeeded), the context goes back to its mempool and the bio is put.
func readEndIO(t *kernel.Task, rb *readBio) {
	defer t.Trace("__read_end_io")()
	ok := rb.bio.Status == block.BlkStsOK
	for _, v := range rb.bio.Vecs {
		v.Folio.EndRead(ok)
	}
	if rb.hasCtx {
		bioPostReadCtxPool.Free(&t.Ctx)
	}
	bioPut(rb)
}
