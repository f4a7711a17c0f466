package f2fs

import (
	"encoding/binary"
	"sort"
	"sync"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// Writing an image back (stage 3 of issue 14). Data and dentry blocks are
// allocated at run time from the main area's free blocks (the SIT's valid
// maps at mount, imageAlloc, the device's allocator); SyncFs writes a
// checkpoint as f2fs_write_checkpoint does at umount (CP_UMOUNT_FLAG), but
// reduced: instead of the kernel's per-log current segments and dirty
// NAT/SIT entries, every node is written again (inodes, direct and
// indirect nodes, in nid order, into segments that hold no data), and the
// NAT, the SIT and the SSA are rewritten from the inodes reachable from
// the root. Deviation: the result is what the kernel leaves after a clean
// umount, not the log-structured history that led there, and an inode no
// name reaches (an open unlinked file) is not written.

// imageAlloc is the main area's block allocator (a bitmap of the blocks
// in use, allocate_segment_by_default reduced to a cursor over free
// blocks of data segments), with inc_valid_block_count's limit: no more
// valid blocks than the checkpoint's user_block_count, so that the
// overprovisioned segments stay free for the checkpoint's nodes (the
// model has no garbage collection).
type imageAlloc struct {
	mu     sync.Mutex
	im     *imageInfo
	used   []bool
	node   []bool // segments holding node blocks (at the last checkpoint)
	cursor uint32
	count  uint64 // blocks in use
	limit  uint64 // user_block_count
}

func newImageAlloc(im *imageInfo) *imageAlloc {
	a := &imageAlloc{im: im, used: make([]bool, im.maxBlkaddr-im.mainBlkaddr), node: make([]bool, len(im.sit)),
		limit: im.ckpt.UserBlockCount}
	for segno := range im.sit {
		e := &im.sit[segno]
		if e.ValidBlocks() > 0 && e.Type() >= CursegHotNode {
			a.node[segno] = true
		}
		for off := uint32(0); off < im.blocksPerSeg; off++ {
			if f2fsTestBit(off, e.ValidMap[:]) {
				a.used[uint32(segno)*im.blocksPerSeg+off] = true
				a.count++
			}
		}
	}
	return a
}

// Alloc implements vfs.BlockAllocator: a free block of a segment that
// holds no node blocks.
func (a *imageAlloc) Alloc() (uint32, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.count >= a.limit {
		return 0, false
	}
	n := uint32(len(a.used))
	for i := uint32(0); i < n; i++ {
		off := (a.cursor + i) % n
		if a.used[off] || a.node[off/a.im.blocksPerSeg] {
			continue
		}
		a.used[off] = true
		a.count++
		a.cursor = off + 1
		return a.im.mainBlkaddr + off, true
	}
	return 0, false
}

// Free implements vfs.BlockAllocator.
func (a *imageAlloc) Free(addr uint32) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if addr >= a.im.mainBlkaddr && addr < a.im.maxBlkaddr && a.used[addr-a.im.mainBlkaddr] {
		a.used[addr-a.im.mainBlkaddr] = false
		a.count--
	}
}

// scanNat finds the highest nid in use (the NAT and its journal), where
// new inode numbers start (build_free_nids, reduced).
func (sbi *SuperBlock) scanNat() (uint32, error) {
	im := sbi.img
	last := uint32(RootIno)
	// The NAT blocks are read without materialising the holes of a
	// sparse device (most of a new filesystem's NAT).
	var b [BlockSize]byte
	for nid := uint32(0); nid < im.maxNid; nid += NatEntryPerBlock {
		if _, err := sbi.Dev.ReadAt(b[:], int64(im.currentNatAddr(nid))*BlockSize); err != nil {
			return 0, errno.EIO
		}
		if b == ([BlockSize]byte{}) {
			continue
		}
		for i := uint32(0); i < NatEntryPerBlock && nid+i < im.maxNid; i++ {
			if e := decodeNatEntry(b[i*natEntrySize:]); e.BlockAddr != NullAddr && nid+i > last {
				last = nid + i
			}
		}
	}
	for _, j := range im.natJournal {
		if j.BlockAddr != NullAddr && j.Nid > last && j.Nid < im.maxNid {
			last = j.Nid
		}
	}
	return last, nil
}

// prepareWrite readies a writable image mount: the allocator on the
// device and the nid allocator after the last nid in use.
func (sbi *SuperBlock) prepareWrite(t *kernel.Task) error {
	last, err := sbi.scanNat()
	if err != nil {
		return err
	}
	sbi.nextNid = last + 1
	sbi.img.alloc = newImageAlloc(sbi.img)
	sbi.Dev.SetAllocator(sbi.img.alloc)
	return nil
}

// wnode is a node block to write: its nid, the inode it belongs to, its
// offset in the inode's node tree (ofs_of_node) and its contents.
type wnode struct {
	nid, ino uint32
	ofs      uint32
	cold     bool
	blk      Node
	addr     uint32
	// data are the data blocks the node points at: (index in the node,
	// block address), for the summaries.
	data [][2]uint32
}

// SyncFs is f2fs_sync_fs (->sync_fs) for a writable image: a checkpoint
// as f2fs_write_checkpoint writes at umount (see the file comment); the
// filesystem goes on from it. The caller writes the device back
// (vfs.BlockDevice.Sync), as sync(2) and umount(8) of an attached image
// do, and makes no other operation on the filesystem meanwhile (the
// kernel's f2fs_lock_all is not modelled); vfs.SyncFilesystem calls it
// at umount and sync(2). Nothing is written on the growing device.
// Errors: EROFS on a read-only device, ENOSPC, EFSCORRUPTED, and those of
// reading the inodes.
func (sbi *SuperBlock) SyncFs(t *kernel.Task) error {
	defer t.Trace("f2fs_sync_fs")()
	im := sbi.img
	if im == nil {
		return nil // the growing device's layout has no checkpoint to write
	}
	if im.alloc == nil {
		return errno.EROFS
	}
	sbi.imgMu.Lock()
	defer sbi.imgMu.Unlock()
	inodes, parents, err := sbi.collectInodes(t)
	if err != nil {
		return err
	}
	// Nids of inodes are their numbers; direct and indirect nodes get the
	// free nids after the highest inode number (the old ones are gone).
	nextNid := uint32(RootIno + 1)
	for _, fi := range inodes {
		nextNid = max(nextNid, fi.nid()+1)
	}
	var nodes []*wnode
	dataBlocks := map[uint32]bool{}
	for _, fi := range inodes {
		ns, err := sbi.buildNodes(t, fi, parents[fi.nid()], &nextNid)
		if err != nil {
			return err
		}
		for _, n := range ns {
			for _, d := range n.data {
				dataBlocks[d[1]] = true
			}
		}
		nodes = append(nodes, ns...)
	}
	if nextNid >= im.maxNid {
		return errno.ENOSPC
	}
	return sbi.writeCheckpoint(t, inodes, nodes, dataBlocks, nextNid)
}

// collectInodes reads every inode a name reaches from the root (each
// once; hard links share one), with the first parent directory and name
// it was found under.
func (sbi *SuperBlock) collectInodes(t *kernel.Task) ([]*Inode, map[uint32]parentName, error) {
	parents := map[uint32]parentName{RootIno: {ino: RootIno}}
	var out []*Inode
	queue := []uint32{RootIno}
	for len(queue) > 0 {
		ino := queue[0]
		queue = queue[1:]
		sbi.imgMu.Unlock()
		fi, err := sbi.iget(t, ino)
		sbi.imgMu.Lock()
		if err != nil {
			return nil, nil, err
		}
		vfs.Iput(t, &fi.Inode)
		out = append(out, fi)
		if !fi.IsDir() {
			continue
		}
		l := WalkDirents(t, fi)
		for _, a := range l.Areas {
			for _, d := range a.Dirents {
				if d.Slots == 0 || string(d.Name) == "." || string(d.Name) == ".." {
					continue
				}
				if _, seen := parents[d.Entry.Ino]; seen {
					continue
				}
				parents[d.Entry.Ino] = parentName{ino: fi.nid(), name: d.Name}
				queue = append(queue, d.Entry.Ino)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].nid() < out[j].nid() })
	return out, parents, nil
}

type parentName struct {
	ino  uint32
	name []byte
}

// nodeOffsets of get_node_path: the node offsets of i_nid[0..4].
const (
	noffDir1 = 1
	noffDir2 = 2
	noffInd1 = 3
	noffInd2 = 4 + NidsPerBlock
	noffDind = 5 + 2*NidsPerBlock
)

// buildNodes lays out an inode's node blocks: the inode (its fields as
// f2fs_update_inode writes them, i_addr, inline data or dentries, the
// encryption context in the inline xattrs, the checksum later) and the
// direct and indirect nodes its block map needs.
func (sbi *SuperBlock) buildNodes(t *kernel.Task, fi *Inode, parent parentName, nextNid *uint32) ([]*wnode, error) {
	im := sbi.img
	extra := fi.extraIsize
	xaddrs := fi.xattrAddrs
	if !fi.onDisk {
		extra = im.newExtraIsize()
		xaddrs = DefaultInlineXattrAddrs
		if fi.IsDir() {
			extra, xaddrs = fi.Geo.ExtraIsize, fi.Geo.InlineXattrAddrs
		}
	}
	if fi.inlineData && fi.Size() > int64(maxInlineData(extra, xaddrs)) {
		// An inline file extended by truncate (a new inode's with the layout
		// it is written with): f2fs_setattr converts it
		// (f2fs_convert_inline_inode) before i_size grows past
		// MAX_INLINE_DATA.
		if err := convertInlineInode(t, fi); err != nil {
			return nil, err
		}
	}
	n := Node(make([]byte, BlockSize))
	if fi.Node != nil {
		copy(n, fi.Node)
	}
	mode := fi.Mode()
	n.put16(iMode, uint16(mode))
	n[iAdvise] = fi.iAdvise()
	inl := uint8(0)
	if extra > 0 {
		inl |= ExtraAttr
		n.put16(iExtraIsize, uint16(extra))
		if im.raw.HasFeature(FeatFlexibleInlineXattr) {
			n.put16(iInlineXattrSize, uint16(xaddrs))
		}
	}
	if xaddrs > 0 {
		inl |= InlineXattr
	}
	n.put32(iUID, fi.OwnerUID())
	n.put32(iLinks, fi.Nlink())
	n.put64(iSize, uint64(fi.Size()))
	n.put32(iXattrNid, 0)
	n.put32(iFlags, fi.IFlags)
	if !fi.onDisk || n.Pino() == 0 {
		n.put32(iPino, parent.ino)
		nl := min(len(parent.name), NameLen)
		n.put32(iNamelen, uint32(nl))
		clear(n[iName : iName+NameLen])
		copy(n[iName:], parent.name[:nl])
	}
	clear(n[iExt : iExt+12])
	// i_addr and i_nid are laid out again.
	base := extra / 4
	if !(fi.IsDir() && fi.Inline) && !fi.inlineData {
		clear(n[inodeIAddrOff+4*base : inodeIAddrOff+4*(DefAddrsPerInode-xaddrs)])
	}
	clear(n[inodeINidOff : inodeINidOff+4*DefNidsPerInode])
	// The xattrs: the joined buffer's inline part in i_addr's tail, the
	// rest in the xattr node (write_all_xattrs).
	xb := fi.xattr.buf
	if xaddrs > 0 {
		xoff := inodeIAddrOff + 4*(DefAddrsPerInode-xaddrs)
		clear(n[xoff : xoff+4*xaddrs])
		if xb != nil {
			copy(n[xoff:xoff+4*xaddrs], xb)
		}
	}
	ino := fi.nid()
	inode := &wnode{nid: ino, ino: ino, ofs: 0, cold: !fi.IsDir(), blk: n}
	nodes := []*wnode{inode}
	if fi.xattr.node && xb != nil {
		xn := &wnode{nid: *nextNid, ino: ino, ofs: xattrNodeOffset, cold: true, blk: Node(make([]byte, BlockSize))}
		*nextNid++
		inline := 4 * xaddrs
		copy(xn.blk, xb[inline:inline+validXattrBlockSize])
		n.put32(iXattrNid, xn.nid)
		nodes = append(nodes, xn)
	}
	var blocks uint64
	switch {
	case fi.IsDir() && fi.Inline:
		inl |= InlineDentry
		n.put32(iCurrentDepth, fi.CurrentDepth)
		n[iDirLevel] = uint8(fi.DirLevel)
	case fi.inlineData:
		inl |= InlineData
		if fi.Size() > 0 {
			inl |= DataExist
		}
	case mode&SIfmt == SIflnk && fi.data.Len() == 0 && len(fi.target) <= maxInlineData(extra, xaddrs):
		inl |= InlineData | DataExist
		off := inlineDataOff(extra)
		clear(n[off : off+maxInlineData(extra, xaddrs)])
		copy(n[off:], fi.target)
	default:
		if fi.IsDir() {
			n.put32(iCurrentDepth, fi.CurrentDepth)
			n[iDirLevel] = uint8(fi.DirLevel)
		}
		if mode&SIfmt == SIflnk && fi.data.Len() == 0 {
			// A target too long for the inline area goes to block 0.
			b := fi.data.GetBlock(0, true)
			if b == nil {
				fi.data.Punch(0)
				return nil, errno.ENOSPC
			}
			copy(b, fi.target)
		}
		ns, nb, err := sbi.buildDnodes(fi, inode, base, xaddrs, nextNid)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, ns...)
		blocks = nb
		if m := mode & SIfmt; m == SIfchr || m == SIfblk {
			setInodeRdev(n, base, fi.Rdev())
		}
	}
	n[iInline] = inl
	n.put64(iBlocks, blocks+uint64(len(nodes)))
	return nodes, nil
}

// buildDnodes puts the block map into i_addr and the direct and indirect
// nodes it needs (get_node_path's layout), new nids from nextNid.
func (sbi *SuperBlock) buildDnodes(fi *Inode, inode *wnode, base, xaddrs int, nextNid *uint32) ([]*wnode, uint64, error) {
	ino := fi.nid()
	direct := uint64(addrsPerInode(fi.extraIsizeOr(sbi), xaddrs))
	cold := !fi.IsDir()
	var nodes []*wnode
	dnodes := map[uint64]*wnode{} // by dnode number past i_addr
	var nblocks uint64
	newNode := func(ofs uint32) *wnode {
		w := &wnode{nid: *nextNid, ino: ino, ofs: ofs, cold: cold, blk: Node(make([]byte, BlockSize))}
		*nextNid++
		nodes = append(nodes, w)
		return w
	}
	var ind [2]*wnode
	var dind *wnode
	dindChild := map[uint64]*wnode{}
	for _, idx := range fi.data.Indexes() {
		addr, _ := fi.data.Addr(idx)
		nblocks++
		if idx < direct {
			inode.blk.SetAddr(true, base+int(idx), addr)
			inode.data = append(inode.data, [2]uint32{uint32(idx), addr})
			continue
		}
		rel := idx - direct
		dn := rel / AddrsPerBlock
		w := dnodes[dn]
		if w == nil {
			switch {
			case dn < 2:
				w = newNode(uint32(noffDir1 + dn))
				inode.blk.SetINid(int(dn), w.nid)
			case dn < 2+2*NidsPerBlock:
				k := (dn - 2) / NidsPerBlock
				i := (dn - 2) % NidsPerBlock
				if ind[k] == nil {
					ind[k] = newNode(uint32(noffInd1) + uint32(k)*(noffInd2-noffInd1))
					inode.blk.SetINid(2+int(k), ind[k].nid)
				}
				w = newNode(ind[k].ofs + 1 + uint32(i))
				ind[k].blk.SetAddr(false, int(i), w.nid)
			default:
				r := dn - 2 - 2*NidsPerBlock
				i, j := r/NidsPerBlock, r%NidsPerBlock
				if i >= NidsPerBlock {
					return nil, 0, errno.EFBIG
				}
				if dind == nil {
					dind = newNode(noffDind)
					inode.blk.SetINid(4, dind.nid)
				}
				c := dindChild[i]
				if c == nil {
					c = newNode(uint32(6 + 2*NidsPerBlock + i*(NidsPerBlock+1)))
					dind.blk.SetAddr(false, int(i), c.nid)
					dindChild[i] = c
				}
				w = newNode(c.ofs + 1 + uint32(j))
				c.blk.SetAddr(false, int(j), w.nid)
			}
			dnodes[dn] = w
		}
		off := int(rel % AddrsPerBlock)
		w.blk.SetAddr(false, off, addr)
		w.data = append(w.data, [2]uint32{uint32(off), addr})
	}
	return nodes, nblocks, nil
}

// extraIsizeOr is the inode's i_extra_isize, or a new inode's.
func (fi *Inode) extraIsizeOr(sbi *SuperBlock) int {
	if fi.onDisk {
		return fi.extraIsize
	}
	if fi.IsDir() {
		return fi.Geo.ExtraIsize
	}
	if sbi.img == nil {
		// The growing device: vfslab's own layout, no extra_attr.
		return 0
	}
	return sbi.img.newExtraIsize()
}

// writeCheckpoint places the node blocks, then writes the NAT, the SIT,
// the SSA and the checkpoint pack that is not in use (do_checkpoint).
func (sbi *SuperBlock) writeCheckpoint(t *kernel.Task, inodes []*Inode, nodes []*wnode, data map[uint32]bool, nextNid uint32) error {
	im := sbi.img
	bps := im.blocksPerSeg
	nsegs := uint32(len(im.sit))
	segData := make([]uint32, nsegs)
	for a := range data {
		segData[(a-im.mainBlkaddr)/bps]++
	}
	// Three empty segments are the current data logs, three more the hot
	// and cold node logs and the segment after the nodes.
	var free []uint32
	for s := uint32(0); s < nsegs; s++ {
		if segData[s] == 0 {
			free = append(free, s)
		}
	}
	// The SIT and SSA areas must hold every main segment's entry (a
	// damaged superblock may say otherwise; nothing is written then).
	if uint64(nsegs) > uint64(im.raw.SegmentCountSsa)*uint64(bps) ||
		uint64(nsegs) > uint64(im.raw.SegmentCountSit/2)*uint64(bps)*SitEntryPerBlock {
		sbi.err(t, "Wrong SIT/SSA area for %d main segments, run fsck to fix.", nsegs)
		return errno.EFSCORRUPTED
	}
	needNodeSegs := (uint32(len(nodes)) + bps - 1) / bps
	if uint32(len(free)) < needNodeSegs+6 {
		return errno.ENOSPC
	}
	dataLogs := free[:3]
	nodeLogs := free[3:5]
	nodeSegs := free[5:]
	ver := im.ckpt.CheckpointVer + 1
	// Place the nodes.
	var warmSeg, warmOff uint32 = nodeSegs[0], 0
	for i, w := range nodes {
		seg := nodeSegs[uint32(i)/bps]
		w.addr = im.mainBlkaddr + seg*bps + uint32(i)%bps
		warmSeg, warmOff = seg, uint32(i)%bps+1
	}
	if warmOff == bps {
		warmSeg, warmOff = nodeSegs[needNodeSegs], 0
	}
	for i, w := range nodes {
		flag := w.ofs << offsetBitShift
		if w.cold {
			flag |= 1 << coldBitShift
		}
		next := w.addr + 1
		if i+1 < len(nodes) {
			next = nodes[i+1].addr
		}
		w.blk.SetFooter(Footer{Nid: w.nid, Ino: w.ino, Flag: flag, CpVer: ver, NextBlkaddr: next})
		if enableInodeChksum(im.raw.Feature, w.blk) {
			w.blk.put32(iInodeChecksum, inodeChksum(im.chksumSeed, w.blk))
		}
		copy(sbi.Dev.Block(w.addr), w.blk)
	}
	// SIT and SSA.
	sit := make([]SitEntry, nsegs)
	sums := make([]SummaryBlock, nsegs)
	for s := range sums {
		sums[s].EntryType = SumTypeData
	}
	for _, w := range nodes {
		off := w.addr - im.mainBlkaddr
		s, b := off/bps, off%bps
		f2fsSetBit(b, sit[s].ValidMap[:])
		sit[s].Vblocks++
		sums[s].EntryType = SumTypeNode
		sums[s].Entries[b] = Summary{Nid: w.nid}
		for _, d := range w.data {
			doff := d[1] - im.mainBlkaddr
			ds, db := doff/bps, doff%bps
			if !f2fsTestBit(db, sit[ds].ValidMap[:]) {
				f2fsSetBit(db, sit[ds].ValidMap[:])
				sit[ds].Vblocks++
			}
			sums[ds].Entries[db] = Summary{Nid: w.nid, OfsInNode: uint16(d[0])}
		}
	}
	var validBlocks uint64
	freeSegs := uint32(0)
	isCur := map[uint32]bool{dataLogs[0]: true, dataLogs[1]: true, dataLogs[2]: true, nodeLogs[0]: true, nodeLogs[1]: true, warmSeg: true}
	for s := uint32(0); s < nsegs; s++ {
		typ := uint16(CursegWarmData)
		if sums[s].EntryType == SumTypeNode {
			typ = CursegWarmNode
		}
		switch s {
		case dataLogs[0]:
			typ = CursegHotData
		case dataLogs[2]:
			typ = CursegColdData
		case nodeLogs[0]:
			typ, sums[s].EntryType = CursegHotNode, SumTypeNode
		case nodeLogs[1]:
			typ, sums[s].EntryType = CursegColdNode, SumTypeNode
		case warmSeg:
			typ, sums[s].EntryType = CursegWarmNode, SumTypeNode
		}
		validBlocks += uint64(sit[s].Vblocks)
		sit[s].Vblocks |= typ << SitVblocksShift
		sit[s].Mtime = im.sit[s].Mtime
		if sit[s].ValidBlocks() == 0 && !isCur[s] {
			freeSegs++
		}
		// The SIT copy in use, in place.
		b := sbi.metaBlock(im.currentSitAddr(s))
		sit[s].put(b[int(s%SitEntryPerBlock)*sitEntrySize:])
		sums[s].Encode(sbi.metaBlock(im.raw.SsaBlkaddr + s))
	}
	// NAT: every entry of the copy in use, the reserved nids 1 and 2 kept.
	addrOf := map[uint32]*wnode{}
	natBlocks := map[uint32]bool{} // the NAT blocks that get an entry
	for _, w := range nodes {
		addrOf[w.nid] = w
		natBlocks[w.nid/NatEntryPerBlock] = true
	}
	var cur [BlockSize]byte
	for nid := uint32(0); nid < im.maxNid; nid += NatEntryPerBlock {
		addr := im.currentNatAddr(nid)
		// A NAT block of zeroes that gets no entry stays as it is (a
		// hole of a sparse device stays a hole).
		if nid >= reservedNodeNum && !natBlocks[nid/NatEntryPerBlock] {
			if _, err := sbi.Dev.ReadAt(cur[:], int64(addr)*BlockSize); err == nil && cur == ([BlockSize]byte{}) {
				continue
			}
		}
		b := sbi.metaBlock(addr)
		for i := uint32(0); i < NatEntryPerBlock && nid+i < im.maxNid; i++ {
			id := nid + i
			if id < reservedNodeNum {
				if id == 0 {
					NatEntry{}.put(b[i*natEntrySize:])
				}
				continue
			}
			e := NatEntry{}
			if w := addrOf[id]; w != nil {
				e = NatEntry{Ino: w.ino, BlockAddr: w.addr}
			}
			e.put(b[i*natEntrySize:])
		}
	}
	im.natJournal, im.sitJournal = nil, nil
	// The checkpoint pack not in use.
	c := DecodeCheckpoint(im.ckpt.Raw[:])
	c.CheckpointVer = ver
	c.ValidBlockCount = validBlocks
	c.FreeSegmentCount = freeSegs
	c.CurNodeSegno = [MaxActiveNodeLogs]uint32{nodeLogs[0], warmSeg, nodeLogs[1]}
	c.CurNodeBlkoff = [MaxActiveNodeLogs]uint16{0, uint16(warmOff), 0}
	c.CurDataSegno = [MaxActiveDataLogs]uint32{dataLogs[0], dataLogs[1], dataLogs[2]}
	c.CurDataBlkoff = [MaxActiveDataLogs]uint16{}
	for i := NrCursegNodeType; i < MaxActiveNodeLogs; i++ {
		c.CurNodeSegno[i], c.CurDataSegno[i] = ^uint32(0), ^uint32(0)
	}
	c.AllocType = [MaxActiveLogs]uint8{}
	// The data logs are empty: their summaries and the (empty) journals
	// fit one compacted block (f2fs_npages_for_summary_flush is 1), and
	// the umount checkpoint keeps the node logs' summaries
	// (__remain_node_summaries).
	c.CkptFlags = CpUmountFlag | CpCompactSumFlag | im.ckpt.CkptFlags&CpLargeNatBitmapFlag
	c.CpPackStartSum = 1 + im.raw.CpPayload
	c.CpPackTotalBlockCount = c.CpPackStartSum + 1 + NrCursegNodeType + 1
	// nat_bits (update_ckpt_flags at CP_UMOUNT): kept while they fit
	// after the pack in its segment.
	natBitsBytes := im.raw.SegmentCountNat << 5
	natBitsBlocks := (natBitsBytes<<1 + 8 + BlockSize - 1) / BlockSize
	if im.ckpt.CkptFlags&CpNatBitsFlag != 0 && c.CpPackTotalBlockCount+natBitsBlocks <= bps {
		c.CkptFlags |= CpNatBitsFlag
	}
	c.ValidNodeCount = uint32(len(nodes))
	c.ValidInodeCount = uint32(len(inodes))
	c.NextFreeNid = nextNid
	start := im.raw.CpBlkaddr
	if im.cpPack == 1 {
		start += bps
	}
	cpBlk := c.Encode()
	copy(sbi.Dev.Block(start), cpBlk)
	for i := uint32(0); i < im.raw.CpPayload; i++ {
		copy(sbi.Dev.Block(start+1+i), sbi.Dev.Block(im.cpStart+1+i))
	}
	// The compacted data summary (write_compacted_summaries: the NAT
	// journal, the SIT journal, no entries), then the node logs'
	// summaries (write_normal_summaries for hot, warm and cold nodes).
	compact := sbi.Dev.Block(start + c.CpPackStartSum)
	clear(compact)
	encodeNatJournal(compact, nil)
	encodeSitJournal(compact[SumJournalSize:], nil)
	for i, s := range []uint32{nodeLogs[0], warmSeg, nodeLogs[1]} {
		sums[s].Encode(sbi.Dev.Block(start + c.CpPackStartSum + 1 + uint32(i)))
	}
	copy(sbi.Dev.Block(start+c.CpPackTotalBlockCount-1), cpBlk)
	if c.CkptFlags&CpNatBitsFlag != 0 {
		sbi.writeNatBits(im, c, cpBlk, start+bps-natBitsBlocks, natBitsBytes, natBitsBlocks)
	}
	// The in-memory state follows the new checkpoint.
	im.ckpt, im.cpStart, im.cpPack = c, start, 3-im.cpPack
	copy(im.sit, sit)
	im.alloc.reset(im)
	sbi.mu.Lock()
	sbi.nextNid = max(sbi.nextNid, nextNid)
	sbi.mu.Unlock()
	return nil
}

// writeNatBits is do_checkpoint's write of the nat_bits at CP_UMOUNT
// (__update_nat_bits for every NAT block, then the blocks at the end of
// the pack's segment): the checkpoint's version and CRC, then a bit per
// NAT block whose entries are all in use (full_nat_bits) and one per NAT
// block with none (empty_nat_bits; nid 0 counts as in use).
func (sbi *SuperBlock) writeNatBits(im *imageInfo, c *Checkpoint, cpBlk []byte, addr, natBitsBytes, natBitsBlocks uint32) {
	bits := make([]byte, natBitsBlocks*BlockSize)
	crc := binary.LittleEndian.Uint32(cpBlk[c.ChecksumOffset:])
	binary.LittleEndian.PutUint64(bits, c.CheckpointVer|uint64(crc)<<32)
	full, empty := bits[8:8+natBitsBytes], bits[8+natBitsBytes:8+2*natBitsBytes]
	for blk := uint32(0); blk < natBitsBytes*8; blk++ {
		nid := blk * NatEntryPerBlock
		valid := uint32(0)
		if nid < im.maxNid {
			b := sbi.metaBlock(im.currentNatAddr(nid))
			for i := uint32(0); i < NatEntryPerBlock && b != nil; i++ {
				if (blk == 0 && i == 0) || binary.LittleEndian.Uint32(b[i*natEntrySize+5:]) != 0 {
					valid++
				}
			}
		}
		switch valid {
		case 0:
			empty[blk/8] |= 1 << (blk % 8)
		case NatEntryPerBlock:
			full[blk/8] |= 1 << (blk % 8)
		}
	}
	for i := uint32(0); i < natBitsBlocks; i++ {
		copy(sbi.Dev.Block(addr+i), bits[i*BlockSize:])
	}
}

// reset rebuilds the allocator's maps from the SIT just written.
func (a *imageAlloc) reset(im *imageInfo) {
	n := newImageAlloc(im)
	a.mu.Lock()
	a.used, a.node, a.cursor, a.count, a.limit = n.used, n.node, 0, n.count, n.limit
	a.mu.Unlock()
}
