package ext4

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vfslab/vfslab/errno"
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
	l := WalkDirents(nil, dir)
	blocks := l.Blocks
	if len(blocks) != 1 || l.Ino != 12 || l.Size != BlockSize || l.Htree || l.Encrypt || l.HasKey {
		t.Fatalf("layout %+v", l)
	}
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
			l := WalkDirents(tk, dir)
			blocks := l.Blocks
			if !l.Htree || l.Encrypt != c.o.encrypt || l.HasKey != c.o.encrypt || l.HashInDirent != dir.HashInDirent() {
				t.Fatalf("layout %+v", l)
			}
			if len(blocks) != int(dir.nblocks()) || blocks[0].Kind != KindDxRoot || blocks[0].Dot != 12 || blocks[0].DotDot != parentIno {
				t.Fatalf("%d blocks, root %+v", len(blocks), blocks[0])
			}
			root := blocks[0]
			if int(root.IndirectLevels) != map[bool]int{false: 0, true: 1}[c.n > 10000] || root.Count != len(root.Index) || root.Limit != dir.dxRootLimit(dxRootInfoLen) || !root.HasDxCsum {
				t.Fatalf("root %+v", root)
			}
			var hinfo DxHashInfo
			(&checker{dir: dir}).hinfoFor(&hinfo)
			if l.HashVersion != hinfo.HashVersion {
				t.Fatalf("hash version %d, want %d", l.HashVersion, hinfo.HashVersion)
			}
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
						if !e.HashStored || e.HashComputed {
							t.Fatalf("block %d off %d: no stored hash", b.Lblk, e.Off)
						}
					} else {
						hi := hinfo
						if err := Dirhash(tk, dir, e.Name, &hi); err != nil {
							t.Fatal(err)
						}
						if !e.HashComputed || e.HashStored || e.Hash != hi.Hash || e.MinorHash != hi.MinorHash {
							t.Fatalf("block %d off %d: hash %08x:%08x computed %v, want %08x:%08x", b.Lblk, e.Off, e.Hash, e.MinorHash, e.HashComputed, hi.Hash, hi.MinorHash)
						}
						h = hi.Hash
					}
					if h < b.HashLo&^1 || (b.HasHi && h > b.HashHi&^1) {
						t.Fatalf("block %d: hash %08x outside [%08x, %08x)", b.Lblk, h, b.HashLo, b.HashHi)
					}
					name := e.Name
					if dir.IsEncrypted() {
						plain, ok := decryptName(tk, dir, e.Name)
						if !ok || !bytes.Equal(e.User, plain) || e.UserErr != nil {
							t.Fatalf("decrypt: %q, walker %q %v", plain, e.User, e.UserErr)
						}
						name = plain
					} else if e.User != nil || e.UserErr != nil {
						t.Fatalf("%q: a readdir name in an unencrypted directory", e.Name)
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
	blocks := WalkDirents(tk, dir).Blocks
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

// TestWalkDirentsReaddirNames: with a task, the walker gives each name of
// an encrypted directory as readdir shows it (the plaintext with the key,
// no-key names built from the hash readdir passes without it: the htree
// hash with dir_index, none without), the computed hash of every name
// with dir_index, fscrypt's error for a name too short to be ciphertext,
// and nothing of this without a task.
func TestWalkDirentsReaddirNames(t *testing.T) {
	for _, noDirIndex := range []bool{false, true} {
		for _, withKey := range []bool{true, false} {
			t.Run(fmt.Sprintf("nodirindex=%v/key=%v", noDirIndex, withKey), func(t *testing.T) {
				tk, dir := newTestDir(t, dirOpts{encrypt: true, noDirIndex: noDirIndex})
				for i := 0; i < 5; i++ {
					mustAdd(t, tk, dir, fmt.Sprintf("name-%d", i), uint32(100+i))
				}
				if !withKey {
					forgetKey(t, tk, dir)
				}
				l := WalkDirents(tk, dir)
				if !l.Encrypt || l.HasKey != withKey || l.DirIndex == noDirIndex || len(l.Blocks) != 1 {
					t.Fatalf("layout %+v", l)
				}
				var walked []string
				for _, e := range l.Blocks[0].Entries {
					if e.HashComputed == noDirIndex || e.UserErr != nil {
						t.Fatalf("%x: computed %v, error %v", e.Name, e.HashComputed, e.UserErr)
					}
					walked = append(walked, fmt.Sprintf("%s:%d", e.User, e.Inode))
				}
				var listed []string
				for _, s := range listDir(t, tk, dir) {
					listed = append(listed, s[:strings.LastIndexByte(s, ':')]) // without the d_type
				}
				sort.Strings(listed)
				sort.Strings(walked)
				if diff := cmp.Diff(listed, walked); diff != "" {
					t.Fatalf("walker vs readdir (-readdir +walker):\n%s", diff)
				}
				for _, e := range WalkDirents(nil, dir).Blocks[0].Entries {
					if e.User != nil || e.UserErr != nil || e.HashComputed {
						t.Fatalf("without a task: %+v", e)
					}
				}
				// A name_len of 4 leaves too little for a ciphertext.
				victim := l.Blocks[0].Entries[2]
				dir.BlockAt(0)[victim.Off+6] = 4
				e := WalkDirents(tk, dir).Blocks[0].Entries[2]
				if e.NameLen != 4 || e.User != nil || e.UserErr != errno.EUCLEAN {
					t.Fatalf("short name: %+v", e)
				}
			})
		}
	}
}
