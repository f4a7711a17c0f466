package draw

import (
	"fmt"
	"sort"

	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/f2fs"
)

// drawF2fsBuckets draws the multi-level hash table of an f2fs directory
// of the given depth (levels 0..depth-1, i_dir_level dirLevel): one row
// per level, one cell per bucket (the first and last few when a level has
// many), and the bucket __f2fs_find_entry visits in each level for a name
// of hash h, levels searched in order until the name is found.
func drawF2fsBuckets(name string, h uint32, depth, dirLevel uint32, title string, notes []string) string {
	c := &canvas{}
	c.text(20, 28, "start", 18, "bold", colInk, title)
	for i, n := range notes {
		c.text(20, 48+i*16, "start", 12, "normal", colMuted, n)
	}
	top := 70 + 16*len(notes)
	const cellW, cellH, rowH, maxCells = 58, 40, 70, 12
	c.text(20, top, "start", 13, "normal", colInk, fmt.Sprintf("name %q: f2fs_dentry_hash = %#08x", name, h))
	prevX, prevY := -1, -1
	for l := uint32(0); l < depth; l++ {
		y := top + 20 + int(l)*rowH
		nb := f2fs.DirBuckets(l, dirLevel)
		bucket := uint64(h) % nb
		blk := f2fs.DirBlockIndex(l, dirLevel, bucket)
		c.text(20, y+25, "start", 12, "bold", colInk, fmt.Sprintf("level %d", l))
		c.text(20, y+39, "start", 9, "normal", colMuted, fmt.Sprintf("%d bucket(s) × %d blocks", nb, f2fs.BucketBlocks(l)))
		// Which buckets to show: all, or the first and last few and the
		// one the name goes to.
		var show []uint64
		if nb <= maxCells {
			for b := uint64(0); b < nb; b++ {
				show = append(show, b)
			}
		} else {
			set := map[uint64]bool{0: true, 1: true, 2: true, nb - 2: true, nb - 1: true, bucket: true}
			for b := range set {
				show = append(show, b)
			}
			sort.Slice(show, func(i, j int) bool { return show[i] < show[j] })
		}
		x := 150
		for i, b := range show {
			if i > 0 && b != show[i-1]+1 {
				c.text(x+10, y+25, "start", 14, "normal", colMuted, "…")
				x += 30
			}
			fill, ink := colFile, colInk
			if b == bucket {
				fill, ink = colPathBg, colPath
			}
			c.box("bucket", x, y, cellW, cellH, fill, ink, false)
			c.text(x+cellW/2, y+17, "middle", 11, "bold", ink, fmt.Sprintf("%d", b))
			c.text(x+cellW/2, y+32, "middle", 9, "normal", colMuted, fmt.Sprintf("blk %d", f2fs.DirBlockIndex(l, dirLevel, b)))
			if b == bucket {
				if prevX >= 0 {
					c.arrow("probe", prevX, prevY, x+cellW/2, y, colPath, false)
				}
				prevX, prevY = x+cellW/2, y+cellH
			}
			x += cellW + 6
		}
		c.text(x+20, y+25, "start", 10, "normal", colPath, fmt.Sprintf("bucket %d = %#x %% %d → blocks %d..%d", bucket, h, nb, blk, blk+f2fs.BucketBlocks(l)-1))
	}
	return c.String(title)
}

// htreeLeaf is one leaf block of the drawn htree.
type htreeLeaf struct {
	lo    uint32
	names []string
	hash  []uint32
}

// buildHtree is an htree drawn from the names' hashes (half_md4 with the
// seed): names sorted by hash and split into leaves of perLeaf entries,
// each leaf's lower bound the hash of its first name (as a split in
// do_split moves the upper half at the median hash), leaf 0 from 0. It
// is not read from a live directory.
func buildHtree(names []string, seed [16]byte, perLeaf int) ([]htreeLeaf, map[string]uint32, error) {
	w := ext4.HashSeedWords(&seed)
	hs := map[string]uint32{}
	for _, n := range names {
		h := ext4.DxHashInfo{HashVersion: ext4.DxHashHalfMD4, Seed: &w}
		if err := ext4.Ext4fsDirhash([]byte(n), &h, nil); err != nil {
			return nil, nil, err
		}
		hs[n] = h.Hash
	}
	sorted := append([]string(nil), names...)
	sort.Slice(sorted, func(i, j int) bool { return hs[sorted[i]] < hs[sorted[j]] })
	var leaves []htreeLeaf
	for i := 0; i < len(sorted); i += perLeaf {
		end := min(i+perLeaf, len(sorted))
		l := htreeLeaf{lo: hs[sorted[i]]}
		if i == 0 {
			l.lo = 0
		}
		for _, n := range sorted[i:end] {
			l.names = append(l.names, n)
			l.hash = append(l.hash, hs[n])
		}
		leaves = append(leaves, l)
	}
	return leaves, hs, nil
}

// drawHtree draws the root index (dx_root's entries: hash lower bound →
// leaf block) and the leaves, with dx_probe's path for target.
func drawHtree(leaves []htreeLeaf, target string, th uint32, title string, notes []string) string {
	c := &canvas{}
	c.text(20, 28, "start", 18, "bold", colInk, title)
	for i, n := range notes {
		c.text(20, 48+i*16, "start", 12, "normal", colMuted, n)
	}
	top := 70 + 16*len(notes)
	// dx_probe: the last entry whose hash <= target's.
	pick := 0
	for i, l := range leaves {
		if th >= l.lo {
			pick = i
		}
	}
	const leafW, gap = 220, 20
	rootW := len(leaves)*(leafW+gap) - gap
	c.box("dx-root", 20, top, rootW, 60, colDir, colInk, false)
	c.text(20+rootW/2, top+20, "middle", 13, "bold", colInk, "dx_root (block 0): hash version half_md4, indirect_levels 0")
	c.text(20+rootW/2, top+40, "middle", 11, "normal", colInk, fmt.Sprintf("dx_probe(%q, hash %08x): last entry with hash <= target → leaf %d", target, th, pick))
	ly := top + 130
	for i, l := range leaves {
		x := 20 + i*(leafW+gap)
		ink, fill := colInk, colFile
		if i == pick {
			ink, fill = colPath, colPathBg
		}
		hi := "0xffffffff"
		if i+1 < len(leaves) {
			hi = fmt.Sprintf("%#08x", leaves[i+1].lo-1)
		}
		c.text(x+leafW/2, top+82, "middle", 10, "normal", ink, fmt.Sprintf("entry %d: hash >= %#08x", i, l.lo))
		c.arrow("dx-entry", x+leafW/2, top+88, x+leafW/2, ly, ink, false)
		h := 36 + 16*len(l.names)
		c.box("leaf", x, ly, leafW, h, fill, ink, false)
		c.text(x+leafW/2, ly+18, "middle", 11, "bold", ink, fmt.Sprintf("leaf %d [%#08x, %s]", i, l.lo, hi))
		for j, n := range l.names {
			col := colInk
			if n == target {
				col = colPath
			}
			c.text(x+10, ly+36+16*j, "start", 10, "normal", col, fmt.Sprintf("%08x  %s", l.hash[j], n))
		}
	}
	return c.String(title)
}
