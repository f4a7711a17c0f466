package ext4

import (
	"encoding/binary"
	"hash/maphash"
	"slices"
	"sync"

	"github.com/vfslab/vfslab/kernel"
)

// The journal as the model writes it (fs/jbd2/commit.c
// jbd2_journal_commit_transaction, fs/jbd2/checkpoint.c, fs/jbd2/journal.c
// jbd2_update_log_tail, jbd2_journal_destroy, jbd2_mark_journal_empty),
// for an image mounted read-write with a journal.
//
// The model changes its metadata in the device's memory as the kernel
// changes its buffer heads, and that memory stands for the page cache of
// the block device: what has reached the disk is what ext4 has submitted
// (submitBlock), which BlockWrite records for LogWrites. A transaction
// gathers every block whose contents differ from what was last submitted
// (the buffers the operations dirtied since the last commit: a block hash
// per filesystem block tells them), the metadata among them (the
// superblock, the descriptors, the bitmaps, the inode tables, and the
// directory, extent-tree, xattr and symlink blocks, meta) logged, the rest
// file data. At sync (ext4_sync_fs) and at umount (jbd2_journal_destroy)
// the running transaction commits: in data=ordered mode the data blocks go
// first, in place; then the journal superblock takes the log's tail when
// the log was empty (JBD2_FLUSHED), the revoke records of the metadata
// blocks freed, the descriptor blocks with their tags and the logged
// copies (escaped when they begin with the jbd2 magic), and the commit
// block with its time and checksum (REQ_PREFLUSH | REQ_FUA). Committed
// transactions stay in the log: the tail (s_sequence, s_start) moves to a
// committing transaction when that frees a quarter of the log, and to the
// head when the next transaction would not fit (after a cache flush);
// umount marks the log empty (s_start 0, s_head, s_sequence past the last
// transaction). A sync on a new filesystem leaves sequence 2 from block
// 1, its umount sequence 4, as Linux 6.12 does. Blocks freed in a
// transaction are not handed out again before it commits
// (ext4_mb_free_metadata).
//
// What the model does differently: it writes the logged blocks in place
// right after their commit (the kernel's checkpoint, which writeback or
// sync(2)'s flush of the block device does later), so a replay only
// rewrites what is there already. The superblock's block is logged when
// its free counts changed (the kernel keeps them in percpu counters and
// writes them with ext4_commit_super alone). Which blocks a transaction
// logs follows the model's allocator (no Orlov spreading of
// directories), so the log's positions drift from Linux's over many
// transactions (40 syncs of a directory of 30 files: the tail at
// transaction 34, block 533, where Linux has 40, block 706). There is
// no commit interval: a
// transaction is what changed between two syncs, which may be more than
// the kernel's j_max_transaction_buffers (a quarter of the log: the
// kernel would have committed several in that time), so it may take the
// whole log; one larger than the log is committed in several, each
// atomic on its own but not together. Fast commits, async_commit
// and journal checksum v1 (the journal_checksum option on a filesystem
// without metadata_csum) are not modelled.

// Write flags of a BlockWrite (the block layer's REQ_ flags that matter
// for a crash).
const (
	// ReqSync is REQ_SYNC.
	ReqSync uint32 = 1 << iota
	// ReqPreflush is REQ_PREFLUSH: the device's cache is flushed before
	// the write; a BlockWrite with no data is a flush alone
	// (blkdev_issue_flush).
	ReqPreflush
	// ReqFUA is REQ_FUA: the write is on stable storage when it
	// completes.
	ReqFUA
)

// BlockWrite is one write ext4 submitted to the device of an image
// (submit_bh): Len(Data) bytes at byte offset Off, with its flags; Data
// is nil for a cache flush alone. Data is the writer's own copy.
type BlockWrite struct {
	Off   int64
	Data  []byte
	Flags uint32
}

var (
	writeLogsMu sync.Mutex
	writeLogs   = map[*Device]func(BlockWrite){}
)

// LogWrites makes every write ext4 submits to dev from the next mount on
// (the superblock at mount and umount, the journal's blocks, the data and
// the checkpointed metadata) go to fn as well, in order, as dm-log-writes
// records them; nil stops it. The writes of a journal replay at mount are
// not recorded, nor, on a filesystem mounted without a journal, anything
// but the superblock's (the model tracks what reached the disk through
// the journal's writer only).
func LogWrites(dev *Device, fn func(BlockWrite)) {
	writeLogsMu.Lock()
	defer writeLogsMu.Unlock()
	if fn == nil {
		delete(writeLogs, dev)
		return
	}
	writeLogs[dev] = fn
}

func writeLogOf(dev *Device) func(BlockWrite) {
	writeLogsMu.Lock()
	defer writeLogsMu.Unlock()
	return writeLogs[dev]
}

// bitset is a set of block numbers.
type bitset []uint64

func newBitset(n uint64) bitset { return make(bitset, (n+63)/64) }

func (s bitset) test(b uint64) bool { return b/64 < uint64(len(s)) && s[b/64]&(1<<(b%64)) != 0 }
func (s bitset) set(b uint64) {
	if b/64 < uint64(len(s)) {
		s[b/64] |= 1 << (b % 64)
	}
}
func (s bitset) clear(b uint64) {
	if b/64 < uint64(len(s)) {
		s[b/64] &^= 1 << (b % 64)
	}
}

// jwriter is the running journal's state (journal_t): the log's head,
// the next transaction's ID, the journal superblock as the writer keeps
// it (j_superblock, written by writeJsb), and the model's bookkeeping of
// what the disk holds.
type jwriter struct {
	j       *journal
	sb      []byte
	head    uint32 // j_head
	tail    uint32 // j_tail
	tailSeq uint32 // j_tail_sequence
	tid     uint32 // j_transaction_sequence
	flushed bool   // JBD2_FLUSHED: the log is empty on disk
	seed    uint32 // j_csum_seed
	hseed   maphash.Seed
	// stable is the hash of each filesystem block as last submitted;
	// logBlocks are the journal's own blocks (written by the writer
	// only).
	stable    []uint64
	logBlocks bitset
	// revoked are the metadata blocks freed in the running transaction
	// (jbd2_journal_revoke); pending every block freed in it.
	revoked map[uint64]struct{}
	pending map[uint64]struct{}
	// maxTx is the log's size in blocks: what one transaction may take
	// (tests lower it).
	maxTx int
}

func (w *jwriter) csumV3() bool { return w.j.incompat&jbd2FeatureIncompatCsumV3 != 0 }
func (w *jwriter) csumV2or3() bool {
	return w.j.incompat&(jbd2FeatureIncompatCsumV2|jbd2FeatureIncompatCsumV3) != 0
}

// blockTailSize is sizeof(struct jbd2_journal_block_tail) at the end of
// a descriptor or revoke block when the journal has csum v2 or v3, else 0.
func (w *jwriter) blockTailSize() int {
	if w.csumV2or3() {
		return 4
	}
	return 0
}

// revokeRecordSize is a revoke record's size: a 64-bit block number with
// the 64bit feature, else 32 bits (jbd2_journal_write_revoke_records).
func (w *jwriter) revokeRecordSize() int {
	if w.j.incompat&jbd2FeatureIncompat64bit != 0 {
		return 8
	}
	return 4
}

// submitBlock is submit_bh(REQ_OP_WRITE) of filesystem block blk as the
// device's memory holds it now.
func (d *diskFS) submitBlock(blk uint64, flags uint32) {
	b := d.bread(blk)
	if b == nil {
		return
	}
	if w := d.jw; w != nil && blk < uint64(len(w.stable)) {
		w.stable[blk] = maphash.Bytes(w.hseed, b)
	}
	if d.logw != nil {
		d.logw(BlockWrite{Off: int64(blk) * int64(d.bs), Data: append([]byte(nil), b...), Flags: flags})
	}
}

// issueFlush is blkdev_issue_flush.
func (d *diskFS) issueFlush() {
	if d.logw != nil {
		d.logw(BlockWrite{Flags: ReqPreflush})
	}
}

// commitSuper is ext4_commit_super: the superblock with its checksum
// written to its block and submitted at once.
func (d *diskFS) commitSuper() error {
	if err := d.writeSuper(); err != nil {
		return err
	}
	d.submitBlock(uint64(d.firstData), ReqSync|ReqFUA)
	return nil
}

// setupSuper is ext4_setup_super for a read-write mount: without a
// journal (none, or noload) the state no longer valid; a zero
// s_max_mnt_count made EXT4_DFL_MAX_MNT_COUNT; the mount count and
// s_mtime; needs_recovery while a journal is in use; the superblock
// committed. The state at mount (s_mount_state) is kept for putSuper.
func (d *diskFS) setupSuper() error {
	es := &d.es
	d.mountState = es.State()
	if d.jw == nil {
		es.put16(sState, es.State()&^ValidFS)
	}
	if es.u16(sMaxMntCount) == 0 {
		es.put16(sMaxMntCount, extDflMaxMntCount)
	}
	es.put16(sMntCount, es.u16(sMntCount)+1)
	es.put32(sMtime, d.now)
	if d.jw != nil {
		es.put32(sFeatureIncompat, es.Incompat()|IncompatRecover)
	}
	return d.commitSuper()
}

// extDflMaxMntCount is EXT4_DFL_MAX_MNT_COUNT.
const extDflMaxMntCount = 20

// putSuper is the on-disk part of ext4_put_super: the journal destroyed
// (jbd2_journal_destroy: the running transaction committed, the log
// checkpointed and marked empty), needs_recovery cleared, s_state back to
// the state at mount and the superblock committed.
func (d *diskFS) putSuper() error {
	if d.readOnly {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.jw != nil {
		d.commitLocked()
		d.markJournalEmpty()
		d.es.put32(sFeatureIncompat, d.es.Incompat()&^IncompatRecover)
	}
	d.es.put16(sState, d.mountState)
	return d.commitSuper()
}

// loadWriter is jbd2_journal_load for a read-write mount of a clean
// journal, with ext4's features (the 64bit journal on a 64bit
// filesystem; journal checksum v3 with metadata_csum, none without:
// set_journal_csum_feature_set): the next transaction is s_sequence + 1
// and the log continues at s_head (s_first when s_head is not inside the
// log, journal_reset). It marks the fixed metadata (the superblock and
// its backups' groups' descriptors, the bitmaps, the inode tables) and
// hashes every block as the disk now holds it.
func (d *diskFS) loadWriter(t *kernel.Task, id string) error {
	j, err := d.loadJournal(t, id)
	if err != nil {
		return err
	}
	be := binary.BigEndian
	w := &jwriter{j: j, sb: append([]byte(nil), j.block(0)[:1024]...), hseed: maphash.MakeSeed(),
		revoked: map[uint64]struct{}{}, pending: map[uint64]struct{}{}, flushed: true}
	w.tid = be.Uint32(w.sb[jsbSequence:]) + 1
	w.head = be.Uint32(w.sb[jsbHead:])
	if w.head < j.first || w.head >= j.maxlen {
		if w.head != 0 {
			t.Printk("JBD2: Incorrect Journal head block %d, disable journal_cycle_record", w.head)
		}
		w.head = j.first
	}
	w.tail, w.tailSeq = w.head, w.tid // journal_reset
	if be.Uint32(w.sb[4:]) == jbd2SuperblockV2 {
		compat := be.Uint32(w.sb[jsbFeatureCompat:]) &^ jbd2FeatureCompatChecksum
		incompat := j.incompat &^ (jbd2FeatureIncompatCsumV2 | jbd2FeatureIncompatCsumV3 | jbd2FeatureIncompatAsync)
		if d.es.Is64bit() {
			incompat |= jbd2FeatureIncompat64bit
		}
		if d.csum {
			incompat |= jbd2FeatureIncompatCsumV3
			w.sb[jsbChecksumType] = jbd2Crc32cChksum
		}
		be.PutUint32(w.sb[jsbFeatureCompat:], compat)
		be.PutUint32(w.sb[jsbFeatureIncompat:], incompat)
		j.incompat = incompat
	}
	w.seed = Crc32c(^uint32(0), w.sb[jsbUUID:jsbUUID+16])
	w.maxTx = int(j.maxlen - j.first)
	w.logBlocks = newBitset(d.nblocks)
	for _, b := range j.blocks {
		if b != 0 {
			w.logBlocks.set(b)
		}
	}
	d.meta = newBitset(d.nblocks)
	d.meta.set(uint64(d.firstData))
	gdtBlocks := d.gdtBlocks()
	for i := uint64(0); i < gdtBlocks; i++ {
		d.meta.set(d.gdtBlock + i)
	}
	itb := d.itableBlocks()
	for g := uint32(0); g < d.groups; g++ {
		gd := d.gd(g)
		d.meta.set(gd.BlockBitmap())
		d.meta.set(gd.InodeBitmap())
		for i := uint64(0); i < itb; i++ {
			d.meta.set(gd.InodeTable() + i)
		}
	}
	w.stable = make([]uint64, d.nblocks)
	d.jw = w
	d.forEachCandidate(func(blk uint64) {
		if b := d.bread(blk); b != nil {
			w.stable[blk] = maphash.Bytes(w.hseed, b)
		}
	})
	return nil
}

// forEachCandidate calls fn for every block whose contents can have
// changed since the last commit (d.mu held, or at mount): the metadata,
// the blocks in use in the bitmaps and those freed in the running
// transaction; not the journal's own. A free block is only written once
// allocated, so the free space (most of a new filesystem, and of a
// sparse device) is never read.
func (d *diskFS) forEachCandidate(fn func(blk uint64)) {
	w := d.jw
	for g := uint32(0); g < d.groups; g++ {
		first := uint64(d.firstData) + uint64(g)*uint64(d.bpg)
		gd := d.gd(g)
		var bm []byte
		if gd != nil && !(hasGroupCsum(&d.es) && gd.Flags()&BgBlockUninit != 0) {
			bm = d.bread(gd.BlockBitmap())
		}
		for i, n := 0, int(d.groupBlocks(g)); i < n; i++ {
			blk := first + uint64(i)
			if w.logBlocks.test(blk) {
				continue
			}
			if !d.meta.test(blk) && (bm == nil || !testBit(bm, i)) {
				if _, freed := w.pending[blk]; !freed {
					continue
				}
			}
			fn(blk)
		}
	}
}

// remount is the journal's part of a new fill_super of a device the
// model kept mounted in memory (vfs.MountSuper after umount): the journal
// loaded again from the superblock the last umount left.
func (w *jwriter) remount() {
	w.tid = binary.BigEndian.Uint32(w.sb[jsbSequence:]) + 1
	w.tail, w.tailSeq = w.head, w.tid
	w.flushed = true
}

// setMeta records that blk holds metadata (a directory, extent-tree,
// xattr or symlink block): its changes are journalled. The caller holds
// d.mu or owns the block.
func (d *diskFS) setMeta(blk uint64) {
	if d.meta != nil {
		d.meta.set(blk)
	}
}

// AllocMeta is ext4_new_meta_blocks of one block: Alloc, the block marked
// as metadata.
func (d *diskFS) AllocMeta() (uint32, bool) {
	a, ok := d.Alloc()
	if ok {
		d.mu.Lock()
		d.setMeta(uint64(a))
		d.mu.Unlock()
	}
	return a, ok
}

// forget is the journal's part of ext4_free_blocks of blk (d.mu held): a
// metadata block is revoked (ext4_forget -> jbd2_journal_revoke), and
// every freed block waits for the commit before it is handed out again.
func (d *diskFS) forget(blk uint64) {
	w := d.jw
	if w == nil {
		return
	}
	if d.meta.test(blk) {
		d.meta.clear(blk)
		w.revoked[blk] = struct{}{}
	}
	w.pending[blk] = struct{}{}
}

// busy reports whether blk was freed in the running transaction (d.mu
// held).
func (d *diskFS) busy(blk uint64) bool {
	if d.jw == nil || len(d.jw.pending) == 0 {
		return false
	}
	_, ok := d.jw.pending[blk]
	return ok
}

// commit is the journal commit of ext4_sync_fs.
func (d *diskFS) commit() {
	if d.jw == nil || d.readOnly {
		return
	}
	d.mu.Lock()
	d.commitLocked()
	d.mu.Unlock()
}

// commitLocked commits the running transaction (d.mu held): the dirty
// blocks sorted into data and metadata, the data written in place, then
// one transaction per j_max_transaction_buffers of metadata.
func (d *diskFS) commitLocked() {
	w := d.jw
	var data, meta, forgotten []uint64
	d.forEachCandidate(func(blk uint64) {
		b := d.bread(blk)
		if b == nil || maphash.Bytes(w.hseed, b) == w.stable[blk] {
			return
		}
		if _, freed := w.pending[blk]; freed && !d.blockInUse(blk) {
			// Freed in this transaction: the kernel forgets the buffer
			// (jbd2_journal_forget) or truncates the page; the model
			// writes what it holds after the commit, when the block is
			// free on disk too.
			forgotten = append(forgotten, blk)
			return
		}
		if d.meta.test(blk) {
			meta = append(meta, blk)
			// A block journalled again is no longer revoked
			// (jbd2_journal_cancel_revoke).
			delete(w.revoked, blk)
		} else {
			data = append(data, blk)
		}
	})
	var revoked []uint64
	for blk := range w.revoked {
		revoked = append(revoked, blk)
	}
	slices.Sort(revoked)
	clear(w.revoked)
	clear(w.pending)
	if len(data) == 0 && len(meta) == 0 && len(revoked) == 0 && len(forgotten) == 0 {
		return
	}
	per := w.metaPerTx(len(revoked), d.bs)
	first := true
	for first || len(meta) > 0 {
		n := min(len(meta), per)
		tx := meta[:n]
		meta = meta[n:]
		if first {
			d.commitTransaction(data, revoked, tx, forgotten)
			first = false
		} else {
			d.commitTransaction(nil, nil, tx, nil)
		}
	}
}

// metaPerTx is how many metadata blocks one transaction can log with
// nrevoked revoke records: the log less the revoke blocks, the commit
// block and a descriptor for every tags-per-descriptor blocks.
func (w *jwriter) metaPerTx(nrevoked, bs int) int {
	csum := w.blockTailSize()
	rsize := w.revokeRecordSize()
	rblocks := (nrevoked*rsize + bs - revokeHeaderSize - csum - 1) / (bs - revokeHeaderSize - csum)
	tpd := (bs-journalHeaderSize-16-csum)/w.j.tagBytes() - 1
	free := w.maxTx - rblocks - 1
	return max(free*tpd/(tpd+1)-1, 1)
}

// blockInUse reports whether blk is set in its group's block bitmap.
func (d *diskFS) blockInUse(blk uint64) bool {
	if blk < uint64(d.firstData) || blk >= d.nblocks {
		return true
	}
	g := uint32((blk - uint64(d.firstData)) / uint64(d.bpg))
	bm := d.bread(d.gd(g).BlockBitmap())
	return bm == nil || testBit(bm, int((blk-uint64(d.firstData))%uint64(d.bpg)))
}

// writeJsb is jbd2_write_superblock: the journal superblock with its
// checksum (v2 and v3) put in its block and submitted.
func (d *diskFS) writeJsb(flags uint32) {
	w := d.jw
	if w.csumV2or3() {
		binary.BigEndian.PutUint32(w.sb[jsbChecksum:], 0)
		binary.BigEndian.PutUint32(w.sb[jsbChecksum:], Crc32c(^uint32(0), w.sb))
	}
	blk := w.j.blocks[0]
	copy(d.bread(blk), w.sb)
	d.submitBlock(blk, flags)
}

// nextLogBlock is jbd2_journal_next_log_block: the log block at the head
// (its filesystem block), the head moved on and wrapped.
func (w *jwriter) nextLogBlock() uint64 {
	n := w.head
	w.head = w.j.wrap(w.head + 1)
	return w.j.blocks[n]
}

// descriptorBuffer is jbd2_journal_get_descriptor_buffer: the next log
// block zeroed with a header of type bt for transaction tid.
func (d *diskFS) descriptorBuffer(bt, tid uint32) (uint64, []byte) {
	blk := d.jw.nextLogBlock()
	b := d.bread(blk)
	clear(b)
	be := binary.BigEndian
	be.PutUint32(b[0:], jbd2Magic)
	be.PutUint32(b[4:], bt)
	be.PutUint32(b[8:], tid)
	return blk, b
}

// blockTailCsumSet is jbd2_descriptor_block_csum_set (and
// jbd2_revoke_csum_set): crc32c of the block in its last four bytes.
func (d *diskFS) blockTailCsumSet(b []byte) {
	if !d.jw.csumV2or3() {
		return
	}
	tail := b[len(b)-4:]
	binary.BigEndian.PutUint32(tail, 0)
	binary.BigEndian.PutUint32(tail, Crc32c(d.jw.seed, b))
}

// commitTransaction is jbd2_journal_commit_transaction of one transaction
// followed by the checkpoint and jbd2_mark_journal_empty
// (jbd2_journal_flush); forgotten are the blocks the transaction freed,
// written with the checkpoint.
func (d *diskFS) commitTransaction(data, revoked, meta, forgotten []uint64) {
	w := d.jw
	j := w.j
	be := binary.BigEndian
	tid := w.tid
	w.tid++
	// Room in the log (__jbd2_log_wait_for_space): the transactions in
	// it are checkpointed already, so jbd2_cleanup_journal_tail moves
	// the tail to the head, after a cache flush.
	if !w.flushed && w.logFree() < w.logBlocksFor(len(meta), len(revoked), d.bs) {
		d.issueFlush()
		d.updateLogTail(tid, w.head)
	}
	// The first commit after the log was emptied records the tail.
	if w.flushed {
		be.PutUint32(w.sb[jsbSequence:], w.tailSeq)
		be.PutUint32(w.sb[jsbStart:], w.tail)
		d.writeJsb(ReqSync)
		w.flushed = false
	}
	logStart := w.head // t_log_start
	// data=ordered: the data blocks first (journal_submit_data_buffers).
	for _, blk := range data {
		d.submitBlock(blk, 0)
	}
	csumSize := w.blockTailSize()
	// jbd2_journal_write_revoke_records.
	if len(revoked) > 0 {
		if j.incompat&jbd2FeatureIncompatRevoke == 0 {
			j.incompat |= jbd2FeatureIncompatRevoke
			be.PutUint32(w.sb[jsbFeatureIncompat:], j.incompat)
		}
		rsize := w.revokeRecordSize()
		var blk uint64
		var b []byte
		off := 0
		flush := func() {
			if b == nil {
				return
			}
			be.PutUint32(b[journalHeaderSize:], uint32(off))
			d.blockTailCsumSet(b)
			d.submitBlock(blk, ReqSync)
			b = nil
		}
		for _, r := range revoked {
			if b == nil || off+rsize > d.bs-csumSize {
				flush()
				blk, b = d.descriptorBuffer(jbd2RevokeBlock, tid)
				off = revokeHeaderSize
			}
			if rsize == 8 {
				be.PutUint64(b[off:], r)
			} else {
				be.PutUint32(b[off:], uint32(r))
			}
			off += rsize
		}
		flush()
	}
	// The metadata: a descriptor, then the copies it describes.
	tb := j.tagBytes()
	all := meta
	for len(meta) > 0 {
		dblk, desc := d.descriptorBuffer(jbd2DescriptorBlock, tid)
		space := d.bs - journalHeaderSize
		off := journalHeaderSize
		var logged []uint64
		firstTag := true
		lastTag := 0
		for len(meta) > 0 {
			blk := meta[0]
			meta = meta[1:]
			src := d.bread(blk)
			lb := w.nextLogBlock()
			dst := d.bread(lb)
			copy(dst, src)
			var flags uint32
			if be.Uint32(dst) == jbd2Magic {
				be.PutUint32(dst, 0) // jbd2_journal_write_metadata_buffer's escape
				flags |= jbd2FlagEscape
			}
			if !firstTag {
				flags |= jbd2FlagSameUUID
			}
			tag := desc[off : off+tb]
			be.PutUint32(tag[0:], uint32(blk))
			if j.incompat&jbd2FeatureIncompat64bit != 0 {
				be.PutUint32(tag[8:], uint32(blk>>32))
			}
			var csum uint32
			if w.csumV2or3() {
				var seq [4]byte
				be.PutUint32(seq[:], tid)
				csum = Crc32c(Crc32c(w.seed, seq[:]), dst)
			}
			if w.csumV3() {
				be.PutUint32(tag[4:], flags)
				be.PutUint32(tag[12:], csum)
			} else {
				be.PutUint16(tag[6:], uint16(flags))
				if j.incompat&jbd2FeatureIncompatCsumV2 != 0 {
					be.PutUint16(tag[4:], uint16(csum))
				}
			}
			lastTag = off
			off += tb
			space -= tb
			if firstTag {
				// j_uuid: never set for ext4's internal journal.
				off += 16
				space -= 16
				firstTag = false
			}
			logged = append(logged, lb)
			if space < tb+16+csumSize {
				break
			}
		}
		if w.csumV3() {
			be.PutUint32(desc[lastTag+4:], be.Uint32(desc[lastTag+4:])|jbd2FlagLastTag)
		} else {
			be.PutUint16(desc[lastTag+6:], be.Uint16(desc[lastTag+6:])|jbd2FlagLastTag)
		}
		d.blockTailCsumSet(desc)
		d.submitBlock(dblk, ReqSync)
		for _, lb := range logged {
			d.submitBlock(lb, ReqSync)
		}
	}
	d.writeCommitRecord(tid)
	// The log's tail (jbd2_journal_get_log_tail before the commit
	// record): the transactions before this one are checkpointed, so
	// the tail may move to its start; jbd2 moves it only when that frees
	// a quarter of the log.
	freed := int64(logStart) - int64(w.tail)
	if freed < 0 {
		freed += int64(j.maxlen - j.first)
	}
	if w.tailSeq != tid && freed >= int64(j.maxlen/4) {
		d.updateLogTail(tid, logStart)
	}
	// The checkpoint: the model writes the logged blocks in place at
	// once (the kernel's writeback, or sync(2)'s flush of the block
	// device, does it later; jbd2_log_do_checkpoint when the log needs
	// the space), and the blocks the transaction freed.
	for _, blk := range all {
		d.submitBlock(blk, 0)
	}
	for _, blk := range forgotten {
		d.submitBlock(blk, 0)
	}
}

// updateLogTail is jbd2_update_log_tail: the journal superblock's
// s_sequence and s_start moved to transaction tid at log block start
// (REQ_FUA).
func (d *diskFS) updateLogTail(tid, start uint32) {
	w := d.jw
	be := binary.BigEndian
	w.tail, w.tailSeq = start, tid
	be.PutUint32(w.sb[jsbSequence:], tid)
	be.PutUint32(w.sb[jsbStart:], start)
	d.writeJsb(ReqFUA)
}

// logFree is j_free: the log blocks between the head and the tail.
func (w *jwriter) logFree() int {
	size := int(w.j.maxlen - w.j.first)
	if w.flushed {
		return size
	}
	used := int(w.head) - int(w.tail)
	if used < 0 {
		used += size
	}
	return size - used
}

// logBlocksFor is how many log blocks a transaction of nmeta metadata
// blocks and nrevoked revoke records takes: the revoke blocks, the
// descriptors, the copies and the commit block.
func (w *jwriter) logBlocksFor(nmeta, nrevoked, bs int) int {
	csum := w.blockTailSize()
	rsize := w.revokeRecordSize()
	per := (bs - revokeHeaderSize - csum) / rsize
	n := (nrevoked+per-1)/per + nmeta + 1
	tb := w.j.tagBytes()
	for left := nmeta; left > 0; {
		n++
		space := bs - journalHeaderSize
		first := true
		for left > 0 {
			left--
			space -= tb
			if first {
				space -= 16
				first = false
			}
			if space < tb+16+csum {
				break
			}
		}
	}
	return n
}

// markJournalEmpty is jbd2_journal_destroy's end: j_tail_sequence moved
// past the last transaction and jbd2_mark_journal_empty (s_start 0,
// s_head kept) unless the log is empty already (d.mu held).
func (d *diskFS) markJournalEmpty() {
	w := d.jw
	w.tid++
	w.tailSeq, w.tail = w.tid, w.head
	if binary.BigEndian.Uint32(w.sb[jsbStart:]) == 0 {
		w.flushed = true
		return
	}
	be := binary.BigEndian
	be.PutUint32(w.sb[jsbSequence:], w.tailSeq)
	be.PutUint32(w.sb[jsbStart:], 0)
	be.PutUint32(w.sb[jsbHead:], w.head)
	d.writeJsb(ReqPreflush | ReqFUA)
	w.flushed = true
}

// writeCommitRecord is journal_submit_commit_record: the commit block with
// the commit time and, with checksum v2 or v3, the block's crc32c in
// h_chksum[0] (jbd2_commit_block_csum_set), written with REQ_PREFLUSH and
// REQ_FUA (JBD2_BARRIER, no async_commit).
func (d *diskFS) writeCommitRecord(tid uint32) {
	blk, b := d.descriptorBuffer(jbd2CommitBlock, tid)
	be := binary.BigEndian
	be.PutUint64(b[commitSec:], uint64(d.now))
	be.PutUint32(b[commitNsec:], 0)
	if d.jw.csumV2or3() {
		b[commitChksumType], b[commitChksumType+1] = 0, 0
		be.PutUint32(b[commitChksum:], 0)
		be.PutUint32(b[commitChksum:], Crc32c(d.jw.seed, b))
	}
	d.submitBlock(blk, ReqSync|ReqPreflush|ReqFUA)
}
