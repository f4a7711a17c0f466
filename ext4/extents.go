package ext4

import (
	"encoding/binary"
	"fmt"
)

// Extent trees (fs/ext4/ext4_extents.h, fs/ext4/extents.c): a header, then
// extents at depth 0 or index entries above; the root is the 60 bytes of
// i_block (four entries), the other nodes whole blocks ending with the
// extent tail checksum.

// Extent tree constants.
const (
	// ExtMagic is EXT4_EXT_MAGIC.
	ExtMagic = 0xF30A
	// extHeaderSize is sizeof(struct ext4_extent_header), and extEntrySize
	// that of struct ext4_extent and struct ext4_extent_idx.
	extHeaderSize = 12
	extEntrySize  = 12
	// ExtInitMaxLen is EXT_INIT_MAX_LEN: the longest initialized extent;
	// an ee_len above it marks an unwritten one of ee_len - it blocks.
	ExtInitMaxLen = 1 << 15
	// ExtMaxDepth is EXT4_MAX_EXTENT_DEPTH.
	ExtMaxDepth = 5
)

// Extent is one decoded struct ext4_extent: Len blocks from logical block
// Lblk at physical block Pblk; Unwritten for a preallocated extent that
// reads as zeroes.
type Extent struct {
	Lblk      uint32
	Len       uint32
	Pblk      uint64
	Unwritten bool
}

// String is the canonical one-line form of an extent, as debugfs prints
// one ("(0-24):1292-1316").
func (e Extent) String() string {
	if e.Len == 1 {
		return fmt.Sprintf("(%d):%d", e.Lblk, e.Pblk)
	}
	return fmt.Sprintf("(%d-%d):%d-%d", e.Lblk, e.Lblk+e.Len-1, e.Pblk, e.Pblk+uint64(e.Len)-1)
}

type extHeader struct {
	magic, entries, max, depth uint16
}

func readExtHeader(b []byte) extHeader {
	return extHeader{binary.LittleEndian.Uint16(b), binary.LittleEndian.Uint16(b[2:]),
		binary.LittleEndian.Uint16(b[4:]), binary.LittleEndian.Uint16(b[6:])}
}

func putExtHeader(b []byte, h extHeader) {
	binary.LittleEndian.PutUint16(b, h.magic)
	binary.LittleEndian.PutUint16(b[2:], h.entries)
	binary.LittleEndian.PutUint16(b[4:], h.max)
	binary.LittleEndian.PutUint16(b[6:], h.depth)
	binary.LittleEndian.PutUint32(b[8:], 0) // eh_generation
}

// extSpaceRoot and extSpaceBlock are ext4_ext_space_root and
// ext4_ext_space_block: the entries that fit in i_block and in a node
// block (leaving room for the tail).
func extSpaceRoot() int               { return (iBlockLen - extHeaderSize) / extEntrySize }
func extSpaceBlock(blocksize int) int { return (blocksize - extHeaderSize) / extEntrySize }

// extTailOffset is EXT4_EXTENT_TAIL_OFFSET of a node with eh_max max.
func extTailOffset(max int) int { return extHeaderSize + extEntrySize*max }

// extBlockCsum is ext4_extent_block_csum: crc32c from the inode's seed
// over the node up to its tail.
func extBlockCsum(seed uint32, b []byte, max int) uint32 {
	return Crc32c(seed, b[:extTailOffset(max)])
}

// extentError is a corrupt extent tree, as __ext4_ext_check reports it:
// the message names the check that failed.
type extentError struct {
	msg   string
	block uint64
	bad   bool // a checksum mismatch (EFSBADCRC) rather than corruption
}

func (e *extentError) Error() string { return e.msg }

// extReader reads an inode's extent tree.
type extReader struct {
	bread     func(blk uint64) []byte
	blocksize int
	nblocks   uint64
	csum      bool
	seed      uint32
	// nodes collects the physical blocks of the tree's nodes below the
	// root (they count in i_blocks and are freed with the file); mapped
	// counts the blocks the extents map (a corrupt tree cannot map more
	// than the filesystem has).
	nodes  []uint64
	mapped uint64
}

// check is __ext4_ext_check of one node: the magic, the depth it must
// have, eh_max against the space, eh_entries against eh_max, and for a
// node block its tail checksum.
func (r *extReader) check(b []byte, depth int, root bool, pblk uint64) (extHeader, error) {
	h := readExtHeader(b)
	space := extSpaceRoot()
	if !root {
		space = extSpaceBlock(r.blocksize)
	}
	var msg string
	switch {
	case h.magic != ExtMagic:
		msg = "invalid magic"
	case int(h.depth) != depth:
		msg = "unexpected eh_depth"
	case h.max == 0:
		msg = "invalid eh_max"
	case int(h.max) > space:
		msg = "too large eh_max"
	case h.entries > h.max:
		msg = "invalid eh_entries"
	case depth > ExtMaxDepth:
		msg = "too deep"
	}
	if msg != "" {
		return h, &extentError{msg: fmt.Sprintf("pblk %d bad header/extent: %s - magic %x, entries %d, max %d(%d), depth %d(%d)",
			pblk, msg, h.magic, h.entries, h.max, space, h.depth, depth), block: pblk}
	}
	if !root && r.csum {
		off := extTailOffset(int(h.max))
		if off+4 > len(b) || binary.LittleEndian.Uint32(b[off:]) != extBlockCsum(r.seed, b, int(h.max)) {
			return h, &extentError{msg: fmt.Sprintf("pblk %d bad header/extent: extent tree corrupted - magic %x, entries %d, max %d(%d), depth %d(%d)",
				pblk, h.magic, h.entries, h.max, space, h.depth, depth), block: pblk, bad: true}
		}
	}
	return h, nil
}

// walk appends the extents below node b (at depth) to out, checking that
// they lie inside the filesystem and in logical order (ext4_valid_extent_entries).
func (r *extReader) walk(b []byte, depth int, root bool, pblk uint64, out *[]Extent, visits *int) error {
	*visits++
	if *visits > 1<<16 {
		return &extentError{msg: "extent tree too large", block: pblk}
	}
	h, err := r.check(b, depth, root, pblk)
	if err != nil {
		return err
	}
	n := int(h.entries)
	if depth == 0 {
		for i := 0; i < n; i++ {
			e := b[extHeaderSize+i*extEntrySize:]
			x := Extent{Lblk: binary.LittleEndian.Uint32(e), Len: uint32(binary.LittleEndian.Uint16(e[4:])),
				Pblk: uint64(binary.LittleEndian.Uint16(e[6:]))<<32 | uint64(binary.LittleEndian.Uint32(e[8:]))}
			if x.Len > ExtInitMaxLen {
				x.Len -= ExtInitMaxLen
				x.Unwritten = true
			}
			if x.Len == 0 || x.Pblk == 0 || x.Pblk+uint64(x.Len) > r.nblocks || uint64(x.Lblk)+uint64(x.Len) > 1<<32 {
				return &extentError{msg: fmt.Sprintf("pblk %d bad header/extent: invalid extent entries - magic %x, entries %d, max %d, depth %d",
					pblk, h.magic, h.entries, h.max, h.depth), block: pblk}
			}
			r.mapped += uint64(x.Len)
			if r.mapped > r.nblocks {
				return &extentError{msg: fmt.Sprintf("pblk %d bad header/extent: extents map more blocks than the filesystem has", pblk), block: pblk}
			}
			if k := len(*out); k > 0 {
				p := (*out)[k-1]
				if uint64(p.Lblk)+uint64(p.Len) > uint64(x.Lblk) {
					return &extentError{msg: fmt.Sprintf("pblk %d bad header/extent: invalid extent entries - magic %x, entries %d, max %d, depth %d",
						pblk, h.magic, h.entries, h.max, h.depth), block: pblk}
				}
			}
			*out = append(*out, x)
		}
		return nil
	}
	for i := 0; i < n; i++ {
		e := b[extHeaderSize+i*extEntrySize:]
		leaf := uint64(binary.LittleEndian.Uint32(e[4:])) | uint64(binary.LittleEndian.Uint16(e[8:]))<<32
		if leaf == 0 || leaf >= r.nblocks {
			return &extentError{msg: fmt.Sprintf("pblk %d bad header/extent: invalid extent entries - magic %x, entries %d, max %d, depth %d",
				pblk, h.magic, h.entries, h.max, h.depth), block: pblk}
		}
		child := r.bread(leaf)
		if child == nil {
			return &extentError{msg: fmt.Sprintf("pblk %d unreadable extent block", leaf), block: leaf}
		}
		r.nodes = append(r.nodes, leaf)
		if err := r.walk(child, depth-1, false, leaf, out, visits); err != nil {
			return err
		}
	}
	return nil
}

// readExtents decodes the extent tree rooted in iblock.
func (r *extReader) readExtents(iblock []byte) ([]Extent, error) {
	h := readExtHeader(iblock)
	var out []Extent
	visits := 0
	if err := r.walk(iblock, int(h.depth), true, 0, &out, &visits); err != nil {
		return nil, err
	}
	return out, nil
}

// extentsFromMap turns a sorted logical -> physical map into extents, each
// at most ExtInitMaxLen long, merging runs that are contiguous on both
// sides (what ext4_ext_insert_extent's merges leave for blocks allocated
// in order).
func extentsFromMap(lblks []uint32, pblk func(uint32) uint64) []Extent {
	var out []Extent
	for _, l := range lblks {
		p := pblk(l)
		if n := len(out); n > 0 {
			e := &out[n-1]
			if e.Lblk+e.Len == l && e.Pblk+uint64(e.Len) == p && e.Len < ExtInitMaxLen {
				e.Len++
				continue
			}
		}
		out = append(out, Extent{Lblk: l, Len: 1, Pblk: p})
	}
	return out
}

func putExtent(b []byte, e Extent) {
	binary.LittleEndian.PutUint32(b, e.Lblk)
	l := uint16(e.Len)
	if e.Unwritten {
		l += ExtInitMaxLen
	}
	binary.LittleEndian.PutUint16(b[4:], l)
	binary.LittleEndian.PutUint16(b[6:], uint16(e.Pblk>>32))
	binary.LittleEndian.PutUint32(b[8:], uint32(e.Pblk))
}

func putExtentIdx(b []byte, lblk uint32, leaf uint64) {
	binary.LittleEndian.PutUint32(b, lblk)
	binary.LittleEndian.PutUint32(b[4:], uint32(leaf))
	binary.LittleEndian.PutUint16(b[8:], uint16(leaf>>32))
	binary.LittleEndian.PutUint16(b[10:], 0)
}

// extNodesNeeded is the number of node blocks a tree of n extents needs
// below a root of four entries, with nodes of per entries, and the tree's
// depth.
func extNodesNeeded(n, per int) (nodes, depth int) {
	root := extSpaceRoot()
	level := n
	for level > root {
		level = (level + per - 1) / per
		nodes += level
		depth++
	}
	return nodes, depth
}

// writeExtents lays extents out as a tree: in i_block alone when four or
// fewer, else in node blocks (nodes, filled in order, as many as
// extNodesNeeded says) under an index root, each node block with its tail
// checksum when csum. It is the shape ext4_ext_grow_indepth and
// ext4_ext_split leave for extents appended in order, with full nodes.
func writeExtents(iblock []byte, exts []Extent, nodes []uint64, bread func(uint64) []byte, blocksize int, csum bool, seed uint32) {
	clear(iblock)
	per := extSpaceBlock(blocksize)
	_, depth := extNodesNeeded(len(exts), per)
	if depth == 0 {
		putExtHeader(iblock, extHeader{ExtMagic, uint16(len(exts)), uint16(extSpaceRoot()), 0})
		for i, e := range exts {
			putExtent(iblock[extHeaderSize+i*extEntrySize:], e)
		}
		return
	}
	// Build bottom-up: level 0 holds the extents in leaves of per entries.
	type child struct {
		lblk uint32
		pblk uint64
	}
	var level []child
	next := 0
	for i := 0; i < len(exts); i += per {
		j := min(i+per, len(exts))
		pb := nodes[next]
		next++
		b := bread(pb)
		clear(b)
		putExtHeader(b, extHeader{ExtMagic, uint16(j - i), uint16(per), 0})
		for k, e := range exts[i:j] {
			putExtent(b[extHeaderSize+k*extEntrySize:], e)
		}
		if csum {
			binary.LittleEndian.PutUint32(b[extTailOffset(per):], extBlockCsum(seed, b, per))
		}
		level = append(level, child{exts[i].Lblk, pb})
	}
	for d := 1; len(level) > extSpaceRoot(); d++ {
		var up []child
		for i := 0; i < len(level); i += per {
			j := min(i+per, len(level))
			pb := nodes[next]
			next++
			b := bread(pb)
			clear(b)
			putExtHeader(b, extHeader{ExtMagic, uint16(j - i), uint16(per), uint16(d)})
			for k, c := range level[i:j] {
				putExtentIdx(b[extHeaderSize+k*extEntrySize:], c.lblk, c.pblk)
			}
			if csum {
				binary.LittleEndian.PutUint32(b[extTailOffset(per):], extBlockCsum(seed, b, per))
			}
			up = append(up, child{level[i].lblk, pb})
		}
		level = up
	}
	putExtHeader(iblock, extHeader{ExtMagic, uint16(len(level)), uint16(extSpaceRoot()), uint16(depth)})
	for i, c := range level {
		// Each index's key is its child's first logical block, which is
		// what e2fsck checks (PR_1_EXTENT_INDEX_START_INVALID).
		putExtentIdx(iblock[extHeaderSize+i*extEntrySize:], c.lblk, c.pblk)
	}
}

// readIndirect reads the block map of an inode without EXT4_EXTENTS_FL
// (fs/ext4/indirect.c, ext4_ind_map_blocks): twelve direct blocks in
// i_block, then an indirect, a double and a triple indirect block of
// little-endian block numbers (0 a hole). It returns the mapped blocks as
// extents and the indirect blocks (which count in i_blocks). Block numbers
// outside the filesystem are corruption.
func readIndirect(iblock []byte, bread func(uint64) []byte, blocksize int, nblocks uint64, size int64) ([]Extent, []uint64, error) {
	per := uint64(blocksize / 4)
	last := uint64(0)
	if size > 0 {
		last = (uint64(size) - 1) / uint64(blocksize)
	}
	var lblks []uint32
	pblk := map[uint32]uint64{}
	var nodes []uint64
	add := func(l uint64, p uint32) error {
		if p == 0 {
			return nil
		}
		if uint64(p) >= nblocks || l > 0xFFFFFFFF {
			return fmt.Errorf("invalid block %d at logical block %d", p, l)
		}
		if uint64(len(lblks)) >= nblocks {
			return fmt.Errorf("block map larger than the filesystem")
		}
		lblks = append(lblks, uint32(l))
		pblk[uint32(l)] = uint64(p)
		return nil
	}
	var walk func(blk uint32, level int, base uint64) error
	walk = func(blk uint32, level int, base uint64) error {
		if blk == 0 {
			return nil
		}
		if uint64(blk) >= nblocks {
			return fmt.Errorf("invalid indirect block %d", blk)
		}
		if len(nodes) > int(nblocks) {
			return fmt.Errorf("block map larger than the filesystem")
		}
		nodes = append(nodes, uint64(blk))
		b := bread(uint64(blk))
		if b == nil {
			return fmt.Errorf("unreadable indirect block %d", blk)
		}
		span := uint64(1)
		for i := 1; i < level; i++ {
			span *= per
		}
		for i := uint64(0); i < per; i++ {
			l := base + i*span
			if l > last {
				break
			}
			p := binary.LittleEndian.Uint32(b[i*4:])
			var err error
			if level == 1 {
				err = add(l, p)
			} else {
				err = walk(p, level-1, l)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	for i := uint64(0); i < 12 && i <= last; i++ {
		if err := add(i, binary.LittleEndian.Uint32(iblock[i*4:])); err != nil {
			return nil, nil, err
		}
	}
	base := uint64(12)
	span := per
	for level := 1; level <= 3 && base <= last; level++ {
		if err := walk(binary.LittleEndian.Uint32(iblock[(11+level)*4:]), level, base); err != nil {
			return nil, nil, err
		}
		base += span
		span *= per
	}
	return extentsFromMap(lblks, func(l uint32) uint64 { return pblk[l] }), nodes, nil
}
