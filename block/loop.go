package block

import (
	"fmt"
	"sync"

	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/kernel"
)

// Loop events.
var (
	EvLoopRequest = events.Register("loop_request", "read requests queued to a loop device's worker (loop_queue_rq -> loop_queue_work)")
	EvLoopBytes   = events.Register("loop_read_bytes", "bytes a loop device's worker copied from its backing file into bios (lo_read_simple)")
)

// LoopBacking is the loop device's backing file (lo_backing_file) as its
// worker reads it: a tmpfs file is memory, so a read is a copy from the
// file's pages (shmem_file_read_iter's copy_page_to_iter).
type LoopBacking interface {
	ReadAt(p []byte, off int64) (int, error)
}

// LoopDevice is struct loop_device (drivers/block/loop.c) bound to a
// backing file (LOOP_CONFIGURE, losetup): a block device whose requests
// are not served by the submitter but queued to the device's own
// workqueue ("loop%d", WQ_UNBOUND), whose worker (a kworker of its own)
// reads the backing file into the bios' folios and completes them. For the
// root cgroup every request goes through one work item (rootcg_work), so
// one worker serves them in order, as for the seed's reads.
//
// One request carries one bio: the model does not merge bios in the plug
// (read_pages' blk_start_plug) nor split them (a loop device's
// max_hw_sectors is 2560 sectors, 1280 KiB, above any bio ext4's
// readahead builds with the default read_ahead_kb).
type LoopDevice struct {
	// Number is lo_number: the device is /dev/loop<Number>.
	Number int
	// Offset is lo_offset: where the device starts in the backing file.
	Offset int64

	backing LoopBacking
	wq      *kernel.Workqueue
	// mu is lo_work_lock; cmds is rootcg_cmd_list, run is the list the
	// worker is draining (swapped, so queueing allocates nothing once
	// both have grown).
	mu   sync.Mutex
	cmds []*Bio
	run  []*Bio
	work kernel.Work
}

// LoopMaxHWSectors is the max_hw_sectors loop_add gives every loop device
// (2560: "the historic block max_sectors cap").
const LoopMaxHWSectors = 2560

// LoopConfigure is loop_configure (the LOOP_CONFIGURE ioctl of losetup):
// device number n of k bound to backing, from byte offset 0. Its workqueue
// is allocated here (alloc_workqueue("loop%d", WQ_UNBOUND | WQ_FREEZABLE,
// 0, lo_number)).
func LoopConfigure(k *kernel.Kernel, n int, backing LoopBacking) *LoopDevice {
	lo := &LoopDevice{Number: n, backing: backing}
	lo.wq = k.AllocWorkqueue(fmt.Sprintf("loop%d", n), 0)
	lo.work.Func = lo
	return lo
}

// QueueRq is loop_queue_rq for a read bio submitted to the device
// (submit_bio -> blk_mq_submit_bio -> the device's ->queue_rq): the
// request is started and handed to loop_queue_work, which adds it to the
// root cgroup's command list and queues the device's work item. It
// returns at once; the worker completes the bio (BioEndio) later, in its
// own task.
func (lo *LoopDevice) QueueRq(t *kernel.Task, bio *Bio) {
	defer t.Trace("loop_queue_rq")()
	t.Inc(EvLoopRequest)
	lo.mu.Lock()
	lo.cmds = append(lo.cmds, bio)
	lo.mu.Unlock()
	lo.wq.QueueWork(t, &lo.work)
}

// RunWork is loop_rootcg_workfn -> loop_process_work: the worker takes the
// command list and handles each request in order.
func (lo *LoopDevice) RunWork(t *kernel.Task, _ *kernel.Work) {
	defer t.Trace("loop_process_work")()
	for {
		lo.mu.Lock()
		if len(lo.cmds) == 0 {
			lo.mu.Unlock()
			return
		}
		lo.cmds, lo.run = lo.run[:0], lo.cmds
		lo.mu.Unlock()
		for i, bio := range lo.run {
			lo.run[i] = nil
			lo.handleCmd(t, bio)
		}
	}
}

// handleCmd is loop_handle_cmd -> do_req_filebacked for a read of a
// buffered backing file: lo_read_simple copies each segment from the
// backing file (a read past its end leaves zeroes, with no error, as
// lo_read_simple zeroes the rest of a short segment), then the request
// completes (blk_mq_complete_request -> lo_complete_rq ->
// blk_mq_end_request -> bio_endio) in the worker's context.
func (lo *LoopDevice) handleCmd(t *kernel.Task, bio *Bio) {
	defer t.Trace("loop_handle_cmd")()
	end := t.Trace("lo_read_simple")
	pos := int64(bio.Sector)<<9 + lo.Offset
	n := 0
	for _, v := range bio.Vecs {
		seg := v.Folio.Data[v.Offset : v.Offset+v.Len]
		m, _ := lo.backing.ReadAt(seg, pos)
		clear(seg[max(m, 0):])
		pos += int64(v.Len)
		n += v.Len
	}
	t.Add(EvLoopBytes, uint64(n))
	end()
	defer t.Trace("blk_mq_end_request")()
	BioEndioTask(t, bio)
}
