package f2fs

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/kernel"
)

// dirFuzzer holds a directory made once per fuzzing process and its state
// after the seed names were added (the inline area, or the dentry blocks
// by page index, the depth and i_size): each execution restores that state
// with the fuzzer's patch written over one area, so that an input is a few
// bytes and an offset, cheap to minimise, and no execution boots a
// machine.
type dirFuzzer struct {
	tk     *kernel.Task
	dir    *Inode
	node   []byte
	inline bool
	depth  uint32
	size   int64
	pages  []uint64
	blocks [][]byte
	names  []string
}

// newDirFuzzer makes a directory with o and n seed names of nameLen bytes.
func newDirFuzzer(tb testing.TB, o dirOpts, n, nameLen int) *dirFuzzer {
	tk, dir := newTestDir(tb, o)
	z := &dirFuzzer{tk: tk, dir: dir}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("seed-%03d-", i)
		name += strings.Repeat("p", max(0, nameLen-len(name)))
		mustAdd(tb, tk, dir, name, uint32(100+i))
		z.names = append(z.names, name)
	}
	z.node = bytes.Clone(dir.Node)
	z.inline, z.depth, z.size = dir.Inline, dir.CurrentDepth, dir.Size()
	for _, p := range dir.Pages() {
		z.pages = append(z.pages, p)
		z.blocks = append(z.blocks, bytes.Clone(dir.BlockAt(p)))
	}
	return z
}

// areas is the number of areas a patch may land in: the inline area (or
// the inode block when the directory is not inline), then each block.
func (z *dirFuzzer) areas() int { return 1 + len(z.blocks) }

// install restores the seed state and writes patch at off of area (both
// taken modulo the sizes).
func (z *dirFuzzer) install(area, off uint16, patch []byte) {
	d := z.dir
	d.truncateBlocks(0)
	copy(d.Node, z.node)
	d.Inline, d.CurrentDepth = z.inline, z.depth
	for i, p := range z.pages {
		d.SetBlock(p, z.blocks[i])
	}
	d.SetSize(z.size)
	var b []byte
	if a := int(area) % z.areas(); a == 0 {
		b = d.Node[d.Geo.Offset : d.Geo.Offset+d.Geo.MaxInlineData]
	} else {
		b = d.BlockAt(z.pages[a-1])
	}
	copy(b[int(off)%len(b):], patch)
}

// exercise runs the directory code on the installed state: lookups of
// seed names (and a case variant), a missing name and ".", a delete, an
// add (which may convert the inline area or grow a level), readdir, the
// checker, the dump, the walker and EmptyDir. Every call must return;
// lookups and readdir fail with EFSCORRUPTED at worst; no Go panic and no
// new BUG or KASAN report.
func (z *dirFuzzer) exercise(t *testing.T) {
	bugs := z.tk.K.Bugs.Len()
	lookups := []string{"x", "."}
	if len(z.names) > 0 {
		lookups = append(lookups, z.names[0], z.names[len(z.names)/2], strings.ToUpper(z.names[len(z.names)-1]))
	}
	for _, n := range lookups {
		r, err := find(z.tk, z.dir, n)
		if err != nil && !IsCorrupt(err) {
			t.Fatalf("lookup %q: %v", n, err)
		}
		if r != nil {
			_ = DeleteEntry(z.tk, z.dir, r)
		}
	}
	_ = AddLink(z.tk, z.dir, []byte("new-name"), 5, SIfreg)
	ctx := &DirContext{Actor: func([]byte, uint32, uint8) bool { return true }}
	_ = Readdir(z.tk, z.dir, ctx)
	_ = CheckDir(z.tk, z.dir)
	_ = DumpDir(z.tk, z.dir)
	_ = WalkDirents(z.tk, z.dir)
	_ = EmptyDir(z.tk, z.dir)
	if z.tk.K.Bugs.Len() != bugs {
		t.Fatalf("bug: %v", z.tk.K.Bugs.All()[bugs])
	}
}

// seedPatches adds, for the inline area and every block, the bytes at a
// few offsets (the bitmap, the first dentries, the names) as seeds.
func (z *dirFuzzer) seedPatches(f *testing.F, extra ...any) {
	for a := 0; a < z.areas(); a++ {
		var b []byte
		if a == 0 {
			b = z.node[z.dir.Geo.Offset : z.dir.Geo.Offset+z.dir.Geo.MaxInlineData]
		} else {
			b = z.blocks[a-1]
		}
		for _, off := range []int{0, 27, 64, 200, len(b) - 16} {
			args := []any{uint16(a), uint16(off), bytes.Clone(b[off:min(off+16, len(b))])}
			f.Add(append(args, extra...)...)
		}
	}
}

// FuzzInlineDentry patches the inline dentry area of a directory inode
// (bitmap, reserved bytes, f2fs_dir_entry slots and names), casefolded and
// encrypted or not: f2fs_find_in_inline_dir, the inline readdir, the
// conversion to a dentry block on the add, and CheckDir, which must check
// a name_len against the area before it hands the name to anything (the
// decryption hook included).
func FuzzInlineDentry(f *testing.F) {
	zs := []*dirFuzzer{
		newDirFuzzer(f, dirOpts{}, 5, 12),
		newDirFuzzer(f, dirOpts{casefold: true, encrypt: true}, 4, 12),
	}
	if !zs[0].inline || !zs[1].inline {
		f.Fatal("the seed directories are not inline")
	}
	zs[0].seedPatches(f, false)
	zs[1].seedPatches(f, true)
	f.Fuzz(func(t *testing.T, area, off uint16, patch []byte, cfEnc bool) {
		z := zs[0]
		if cfEnc {
			z = zs[1]
		}
		z.install(area, off, patch)
		z.exercise(t)
	})
}

// FuzzMultiLevelDentry patches the dentry blocks of a directory that grew
// past its first hash levels (i_current_depth > 1: buckets of several
// levels), plain or encrypted (ciphertext names, whose hash is stored):
// find_in_level's bucket arithmetic, the linear fallback of a compat
// lookup, readdir over holes and the checker.
func FuzzMultiLevelDentry(f *testing.F) {
	zs := []*dirFuzzer{
		newDirFuzzer(f, dirOpts{noInline: true, mode: LookupCompat}, 40, 200),
		newDirFuzzer(f, dirOpts{noInline: true, encrypt: true}, 40, 180),
	}
	for _, z := range zs {
		if z.depth < 2 {
			f.Fatalf("the seed directory has depth %d", z.depth)
		}
	}
	zs[0].seedPatches(f, false)
	zs[1].seedPatches(f, true)
	f.Fuzz(func(t *testing.T, area, off uint16, patch []byte, encrypted bool) {
		z := zs[0]
		if encrypted {
			z = zs[1]
		}
		z.install(area, off, patch)
		z.exercise(t)
	})
}

// TestCheckDirLongNameLen: a dentry of the inline area whose name_len
// (all the slots after it, 560 bytes in the default geometry) fits the area but exceeds F2FS_NAME_LEN is reported by CheckDir
// before the name is hashed or decrypted, in a casefolded encrypted
// directory whose check decrypts names.
func TestCheckDirLongNameLen(t *testing.T) {
	tk, dir := newTestDir(t, dirOpts{casefold: true, encrypt: true})
	mustAdd(t, tk, dir, "victim", 100)
	d := dir.InlineDentryPtr()
	nl := (d.Max - 3) * SlotLen
	if nl <= NameLen {
		t.Fatalf("inline area of %d slots", d.Max)
	}
	binary.LittleEndian.PutUint16(d.Dentry[2*SizeOfDirEntry+8:], uint16(nl))
	err := CheckDir(tk, dir)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("slot 2: name_len %d", nl)) {
		t.Fatalf("CheckDir = %v", err)
	}
	if tk.K.Bugs.Len() != 0 {
		t.Fatal(tk.K.Bugs.All())
	}
}
