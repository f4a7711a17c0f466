package vfs

import (
	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/kernel"
)

// Bio submission and loop devices.
//
// A BlockDevice is read in place by the filesystems' metadata code (its
// buffer cache is always up to date, Block). The data read path submits
// bios instead (SubmitBio, block/blk-core.c submit_bio): on a plain device
// the bio is served at once, in the submitter's context, as a RAM disk
// (brd) serves it; on a device set up with LoopSetup the bio goes to the
// loop device's worker (block.LoopDevice), which copies it from the
// device's memory (the backing tmpfs file) and completes it in its own
// task, asynchronously.

// EvBioSubmit counts read bios submitted; EvBioSubmitBytes their bytes.
var (
	EvBioSubmit      = events.Register("submit_bio", "read bios submitted to a block device (submit_bio)")
	EvBioSubmitBytes = events.Register("submit_bio_bytes", "bytes of the read bios submitted (bi_iter.bi_size)")
)

// LoopSetup makes d a loop device over its own memory (losetup of a tmpfs
// file whose contents the device holds): from now on the bios submitted
// to d are served by the loop device's worker, on a workqueue of k. It
// returns the loop device. Call it before mounting d.
func (d *BlockDevice) LoopSetup(k *kernel.Kernel, n int) *block.LoopDevice {
	d.loop = block.LoopConfigure(k, n, d)
	return d.loop
}

// Loop returns the loop device serving d's bios, nil for a plain device.
func (d *BlockDevice) Loop() *block.LoopDevice { return d.loop }

// Backing device limits (struct backing_dev_info, block/blk-settings.c
// blk_apply_bdi_limits).
const (
	// VMReadaheadPages is VM_READAHEAD_PAGES: the default read_ahead_kb
	// (128 KiB) in pages, a bdi's ra_pages when the device reports no
	// optimal I/O size (io_opt), as neither a loop device nor the model's
	// plain device does.
	VMReadaheadPages = 128 << 10 / PageSize
	// blkDefMaxSectorsCap is BLK_DEF_MAX_SECTORS_CAP, the max_sectors cap
	// of a device that sets no larger max_hw_sectors.
	blkDefMaxSectorsCap = 2560
)

// RAPages is bdi->ra_pages of d: VMReadaheadPages (read_ahead_kb 128).
func (d *BlockDevice) RAPages() int { return VMReadaheadPages }

// IOPages is bdi->io_pages of d: max_sectors in pages (a loop device's
// max_hw_sectors is 2560 sectors, so 320 pages; the plain device takes
// BLK_DEF_MAX_SECTORS_CAP, the same).
func (d *BlockDevice) IOPages() int {
	if d.loop != nil {
		return block.LoopMaxHWSectors >> (block.PageShift - 9)
	}
	return blkDefMaxSectorsCap >> (block.PageShift - 9)
}

// SubmitBio is submit_bio of a read bio on d: bio.Sector is the first
// 512-byte sector, its folios are filled from there and bio_endio runs
// its EndIO, on a loop device in the loop worker's task, otherwise in
// t's before SubmitBio returns.
func SubmitBio(t *kernel.Task, d *BlockDevice, bio *block.Bio) {
	defer t.Trace("submit_bio")()
	t.Inc(EvBioSubmit)
	t.Add(EvBioSubmitBytes, uint64(bio.Size()))
	if d.loop != nil {
		d.loop.QueueRq(t, bio)
		return
	}
	pos := int64(bio.Sector) << 9
	for _, v := range bio.Vecs {
		seg := v.Folio.Data[v.Offset : v.Offset+v.Len]
		m, _ := d.ReadAt(seg, pos)
		clear(seg[max(m, 0):])
		pos += int64(v.Len)
	}
	block.BioEndioTask(t, bio)
}
