package ext4

import (
	"slices"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// Regular files of an image whose blocks are smaller than a page (1 KiB
// and 2 KiB blocks): a page holds several blocks, each mapped by the
// extent tree on its own, so the page operations read and write block by
// block (block_read_full_folio and __block_write_begin over buffer heads,
// ext4_mpage_readpages' fallback), and an encrypted page is decrypted and
// encrypted per data unit of the mapped blocks only. The file's map is
// Inode.fblocks (logical block -> physical block). Writeback allocates
// every block of a page; the blocks past i_size are given back when the
// inode is written (ext4_do_update_inode sees i_size; e2fsck would count
// blocks past the end as an i_size error).

type subpageAops struct{ sb *SuperBlock }

func (a subpageAops) per() int { return vfs.PageSize / a.sb.disk.bs }

// ReadFolio implements vfs.AddressSpaceOperations.
func (a subpageAops) ReadFolio(t *kernel.Task, inode *vfs.Inode, index uint64, page []byte) error {
	ei := EXT4_I(inode)
	bs := a.sb.disk.bs
	var mapped [vfs.PageSize / 1024]bool
	for k := 0; k < a.per(); k++ {
		p, ok := ei.fblocks[uint32(index)*uint32(a.per())+uint32(k)]
		var b []byte
		if ok {
			b = a.sb.disk.bread(uint64(p))
		}
		if b == nil {
			clear(page[k*bs : (k+1)*bs])
			continue
		}
		copy(page[k*bs:], b)
		mapped[k] = true
	}
	if !inode.IsEncrypted() {
		return nil
	}
	folio := block.Folio{Index: index, Data: page, Host: fscrypt.Inode(inode)}
	for k := 0; k < a.per(); k++ {
		if mapped[k] {
			if err := fscrypt.DecryptPagecacheBlocks(t, &folio, bs, k*bs); err != nil {
				return err
			}
		}
	}
	return nil
}

// WriteBegin implements vfs.AddressSpaceOperations.
func (a subpageAops) WriteBegin(t *kernel.Task, inode *vfs.Inode, index uint64, off, n int, page []byte) error {
	if n < vfs.PageSize {
		return a.ReadFolio(t, inode, index, page)
	}
	return nil
}

// WritePage implements vfs.AddressSpaceOperations: each block of the page
// gets a block of the bitmaps if it is a hole (ENOSPC when none is left).
func (a subpageAops) WritePage(t *kernel.Task, inode *vfs.Inode, index uint64, page []byte) error {
	ei := EXT4_I(inode)
	d := a.sb.disk
	src := page
	if inode.IsEncrypted() {
		folio := block.Folio{Index: index, Data: page, Host: fscrypt.Inode(inode)}
		bounce, err := fscrypt.EncryptPagecacheBlocks(t, &folio, vfs.PageSize, 0)
		if err != nil {
			return err
		}
		defer fscrypt.FreeBouncePage(t, bounce)
		src = bounce
	}
	if ei.fblocks == nil {
		ei.fblocks = map[uint32]uint32{}
	}
	for k := 0; k < a.per(); k++ {
		l := uint32(index)*uint32(a.per()) + uint32(k)
		p, ok := ei.fblocks[l]
		if !ok {
			n, ok := d.Alloc()
			if !ok {
				return errno.ENOSPC
			}
			p = n
			ei.fblocks[l] = p
		}
		if b := d.bread(uint64(p)); b != nil {
			copy(b, src[k*d.bs:(k+1)*d.bs])
		}
	}
	return nil
}

// Bmap implements vfs.AddressSpaceOperations.
func (a subpageAops) Bmap(inode *vfs.Inode, index uint64) bool {
	ei := EXT4_I(inode)
	for k := 0; k < a.per(); k++ {
		if _, ok := ei.fblocks[uint32(index)*uint32(a.per())+uint32(k)]; ok {
			return true
		}
	}
	return false
}

// TruncateBlocks implements vfs.AddressSpaceOperations.
func (a subpageAops) TruncateBlocks(t *kernel.Task, inode *vfs.Inode, from uint64) {
	EXT4_I(inode).truncateFblocks(a.sb.disk, uint32(from)*uint32(a.per()))
}

// truncateFblocks frees the blocks from logical block from on.
func (ei *Inode) truncateFblocks(d *diskFS, from uint32) {
	for l, p := range ei.fblocks {
		if l >= from {
			d.Free(p)
			delete(ei.fblocks, l)
		}
	}
}

// fblockExtents is the extent list of a sub-page file's map, past-EOF
// blocks freed first.
func (ei *Inode) fblockExtents(d *diskFS) []Extent {
	end := uint32((ei.Size() + int64(d.bs) - 1) / int64(d.bs))
	ei.truncateFblocks(d, end)
	lblks := make([]uint32, 0, len(ei.fblocks))
	for l := range ei.fblocks {
		lblks = append(lblks, l)
	}
	slices.Sort(lblks)
	return extentsFromMap(lblks, func(l uint32) uint64 { return uint64(ei.fblocks[l]) })
}
