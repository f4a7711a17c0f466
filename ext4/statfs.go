package ext4

import (
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// sRBlocksCountHi is the high half of s_r_blocks_count (64bit).
const sRBlocksCountHi = 0x154

// RBlocksCount is ext4_r_blocks_count: the blocks reserved for root
// (mke2fs -m, 5% by default).
func (s *RawSuper) RBlocksCount() uint64 {
	n := uint64(s.u32(sRBlocksCountLo))
	if s.Is64bit() {
		n |= uint64(s.u32(sRBlocksCountHi)) << 32
	}
	return n
}

// OverheadClusters is s_overhead_clusters (0: not recorded; mke2fs 1.47
// writes it).
func (s *RawSuper) OverheadClusters() uint32 { return s.u32(sOverheadClusters) }

// calculateResvClusters is ext4_calculate_resv_clusters (fs/ext4/super.c):
// with extents, 2% of the blocks or 4096, whichever is smaller, kept back
// from every allocation so that an extent split on a full filesystem still
// finds a block (ext4_has_free_clusters). The model has no bigalloc, so a
// cluster is a block.
func calculateResvClusters(es *RawSuper) uint64 {
	if es.Incompat()&IncompatExtents == 0 {
		return 0
	}
	return min(es.BlocksCount()/50, 4096)
}

// calculateOverhead is ext4_calculate_overhead (fs/ext4/super.c) for a
// superblock that does not record s_overhead_clusters: the blocks before
// s_first_data_block, each group's superblock, descriptor and reserved
// descriptor blocks where it has a backup (ext4_bg_has_super), every
// group's two bitmaps and inode table (wherever flex_bg put them:
// count_overhead adds them up group by group, the sum is the same), and
// the internal journal's blocks. The caller holds d.mu.
func (d *diskFS) calculateOverhead() uint64 {
	if n := d.es.OverheadClusters(); n != 0 {
		return uint64(n)
	}
	gdt, itb := d.gdtBlocks(), d.itableBlocks()
	overhead := uint64(d.firstData)
	for g := uint32(0); g < d.groups; g++ {
		if groupHasSuper(&d.es, g) {
			overhead += 1 + gdt + uint64(d.es.ReservedGdtBlocks())
		}
		overhead += 2 + itb
	}
	if d.es.Compat()&CompatHasJournal != 0 {
		if ji := d.es.JournalInum(); ji != 0 {
			if raw := d.inodeLoc(ji); raw != nil {
				overhead += uint64(raw.Size()) / uint64(d.bs)
			}
		}
	}
	return overhead
}

// StatFS is ext4_statfs (fs/ext4/super.c), vfs.StatFSer: f_blocks is the
// block count less the overhead, f_bfree the free blocks (the model has
// no delayed allocation, so no dirty clusters to subtract), f_bavail what
// is left after root's reserved blocks and the reserved clusters (0 when
// those exceed the free ones), f_files and f_ffree the inode counts.
// Only an image-backed filesystem counts; the in-memory one reports the
// zeros of a filesystem without ->statfs.
func (sb *SuperBlock) StatFS(t *kernel.Task, vsb *vfs.SuperBlock, st *vfs.Statfs) error {
	d := sb.disk
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	st.Bsize = int64(d.bs)
	st.Blocks = d.es.BlocksCount() - d.calculateOverhead()
	st.Bfree = d.es.FreeBlocksCount()
	if rsv := d.es.RBlocksCount() + d.resvClusters; st.Bfree >= rsv {
		st.Bavail = st.Bfree - rsv
	}
	st.Files = uint64(d.es.InodesCount())
	st.Ffree = uint64(d.es.FreeInodesCount())
	return nil
}
