package ext4

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWalkDirentsLinear pins the decoding of one small leaf: the dirents'
// offsets, fields and names, the unused dirent a delete leaves, and the
// checksum tail.
func TestWalkDirentsLinear(t *testing.T) {
	tk, dir := newTestDir(t, dirOpts{})
	mustAdd(t, tk, dir, "aaaa", 20)
	mustAdd(t, tk, dir, "bbbb", 21)
	r, _ := find(tk, dir, "aaaa")
	if err := DeleteEntry(tk, dir, r); err != nil {
		t.Fatal(err)
	}
	blocks := WalkDirents(dir)
	if len(blocks) != 1 {
		t.Fatalf("%d blocks", len(blocks))
	}
	b := blocks[0]
	if b.Kind != KindLeaf || b.InTree || b.Problem != "" || !b.HasCsum || b.Csum != le32(dir.BlockAt(0)[BlockSize-4:]) || b.Phys != dir.PhysBlock(0) {
		t.Fatalf("block %+v", b)
	}
	type ent struct {
		Off, Ino, RecLen, NameLen int
		Type                      uint8
		Name                      string
	}
	var got []ent
	for _, e := range b.Entries {
		got = append(got, ent{e.Off, int(e.Inode), e.RecLen, e.NameLen, e.FileType, string(e.Name)})
	}
	want := []ent{{0, 12, 12, 1, FtDir, "."}, {12, 2, 24, 2, FtDir, ".."}, {36, 21, 4048, 4, FtRegFile, "bbbb"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatal(diff)
	}
	// The deleted name merged into "..": the walk shows what is left.
	if DumpBlock(tk, dir, 0) != fmt.Sprintf(`block 0: 0:12/12/2/"." 12:2/24/2/".." 36:21/4048/1/"bbbb" tail=%08x`, b.Csum) {
		t.Fatal(DumpBlock(tk, dir, 0))
	}
}

// TestWalkDirentsHtree: in htrees of one and two index levels (plain,
// casefolded, casefolded and encrypted), the walk finds the root, the
// nodes and every leaf in the tree with the hash range its index entry
// gives it; every name lies in its leaf's range (hashed as dx_probe
// hashes it, or stored after the name), and the leaves hold exactly the
// names readdir lists.
func TestWalkDirentsHtree(t *testing.T) {
	for _, c := range []struct {
		o dirOpts
		n int
	}{{dirOpts{}, 500}, {dirOpts{casefold: true}, 500}, {dirOpts{casefold: true, encrypt: true}, 500}, {dirOpts{}, 40000}} {
		t.Run(fmt.Sprintf("%+v/%d", c.o, c.n), func(t *testing.T) {
			tk, dir := newTestDir(t, c.o)
			for i := 0; i < c.n; i++ {
				mustAdd(t, tk, dir, fmt.Sprintf("entry-%06d-%s", i, strings.Repeat("y", i%40)), uint32(100+i))
			}
			blocks := WalkDirents(dir)
			if len(blocks) != int(dir.nblocks()) || blocks[0].Kind != KindDxRoot || blocks[0].Dot != 12 || blocks[0].DotDot != parentIno {
				t.Fatalf("%d blocks, root %+v", len(blocks), blocks[0])
			}
			root := blocks[0]
			if int(root.IndirectLevels) != map[bool]int{false: 0, true: 1}[c.n > 10000] || root.Count != len(root.Index) || root.Limit != dir.dxRootLimit(dxRootInfoLen) || !root.HasDxCsum {
				t.Fatalf("root %+v", root)
			}
			var hinfo DxHashInfo
			(&checker{dir: dir}).hinfoFor(&hinfo)
			var inLeaves []string
			nodes := 0
			for _, b := range blocks[1:] {
				if !b.InTree || b.Problem != "" {
					t.Fatalf("block %d: %+v", b.Lblk, b)
				}
				if b.Kind == KindDxNode {
					nodes++
					if b.Limit != dir.dxNodeLimit() || b.Count != len(b.Index) {
						t.Fatalf("node %+v", b)
					}
					continue
				}
				for _, e := range b.Entries {
					if e.Unused() {
						continue
					}
					h := e.Hash
					if dir.HashInDirent() {
						if !e.HashStored {
							t.Fatalf("block %d off %d: no stored hash", b.Lblk, e.Off)
						}
					} else {
						hi := hinfo
						if err := Dirhash(tk, dir, e.Name, &hi); err != nil {
							t.Fatal(err)
						}
						h = hi.Hash
					}
					if h < b.HashLo&^1 || (b.HasHi && h > b.HashHi&^1) {
						t.Fatalf("block %d: hash %08x outside [%08x, %08x)", b.Lblk, h, b.HashLo, b.HashHi)
					}
					name := e.Name
					if dir.IsEncrypted() {
						plain, ok := decryptName(tk, dir, e.Name)
						if !ok {
							t.Fatal("decrypt")
						}
						name = plain
					}
					inLeaves = append(inLeaves, fmt.Sprintf("%s:%d:8", name, e.Inode))
				}
			}
			if (nodes > 0) != (c.n > 10000) {
				t.Fatalf("%d index nodes for %d names", nodes, c.n)
			}
			listed := listDir(t, tk, dir)[2:]
			sort.Strings(listed)
			sort.Strings(inLeaves)
			if diff := cmp.Diff(listed, inLeaves); diff != "" {
				t.Fatal(diff)
			}
		})
	}
}

// TestWalkDirentsMalformed: a hole is a hole, and a leaf whose rec_len
// cannot be right stops the walk there with the offset.
func TestWalkDirentsMalformed(t *testing.T) {
	tk, dir := newTestDir(t, dirOpts{noDirIndex: true})
	for i := 0; i < 600; i++ {
		mustAdd(t, tk, dir, fmt.Sprintf("name-%04d", i), uint32(100+i))
	}
	if dir.nblocks() < 3 {
		t.Fatalf("%d blocks", dir.nblocks())
	}
	b1 := dir.BlockAt(1)
	b1[4], b1[5] = 3, 0 // rec_len 3
	dir.blocks[2] = 0
	blocks := WalkDirents(dir)
	if blocks[1].Problem != "offset 0: bad rec_len 3 (name_len 9)" || len(blocks[1].Entries) != 0 {
		t.Fatalf("block 1: %q %d entries", blocks[1].Problem, len(blocks[1].Entries))
	}
	if blocks[2].Kind != KindHole || blocks[2].Entries != nil {
		t.Fatalf("block 2: %+v", blocks[2])
	}
	for _, b := range blocks {
		if b.InTree {
			t.Fatalf("linear directory: block %d in a tree", b.Lblk)
		}
	}
	if got := DumpBlock(tk, dir, 1); got != "block 1: !offset 0: bad rec_len 3 (name_len 9) tail="+fmt.Sprintf("%08x", le32(b1[BlockSize-4:])) {
		t.Fatal(got)
	}
}
