package f2fs

import (
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// StatFS is f2fs_statfs (fs/f2fs/super.c), vfs.StatFSer: f_blocks is the
// block count from segment 0 on, f_bfree user_block_count less the valid
// blocks (the model has no reserve_root, reserved or unusable blocks, so
// f_bavail is the same), and the inode counts are the node counts: the
// nodes the NAT can address less F2FS_RESERVED_NODE_NUM, or, when that
// exceeds the user blocks, the user blocks with the available blocks free.
//
// Deviation: the model lays out node blocks at the checkpoint, so the
// valid blocks counted between checkpoints are the data blocks written
// since and the blocks valid at the last checkpoint; Linux counts a new
// node block when it is dirtied (inc_valid_node_count). Only an
// image-backed filesystem counts; the in-memory one reports zeros.
func (sbi *SuperBlock) StatFS(t *kernel.Task, vsb *vfs.SuperBlock, st *vfs.Statfs) error {
	im := sbi.img
	if im == nil {
		return nil
	}
	s, c := im.raw, im.ckpt
	st.Bsize = BlockSize
	st.Blocks = s.BlockCount - uint64(s.Segment0Blkaddr)
	user, valid := c.UserBlockCount, c.ValidBlockCount
	if a := im.alloc; a != nil {
		a.mu.Lock()
		user, valid = a.limit, a.count
		a.mu.Unlock()
	}
	if user > valid {
		st.Bfree = user - valid
	}
	st.Bavail = st.Bfree
	availNodes := availNodeCount(s)
	if availNodes > user {
		st.Files, st.Ffree = user, st.Bavail
	} else {
		st.Files = availNodes
		st.Ffree = min(availNodes-uint64(c.ValidNodeCount), st.Bavail)
	}
	return nil
}

// availNodeCount is sbi->total_node_count - F2FS_RESERVED_NODE_NUM: the
// nodes the NAT (half its segments: one of each pair is live) can
// address, less the reserved ones.
func availNodeCount(s *RawSuper) uint64 {
	return uint64(s.SegmentCountNat/2)<<s.LogBlocksPerSeg*NatEntryPerBlock - reservedNodeNum
}
