package ext4

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/kernel"
)

// dirFuzzer holds a directory made once per fuzzing process, and the
// blocks it had after its seed names were added: each execution installs
// copies of those blocks with the fuzzer's patch written over one of them,
// so that an input is a few bytes and an offset (cheap to minimise), not a
// 4 KiB block, and no execution boots a machine.
type dirFuzzer struct {
	tk    *kernel.Task
	dir   *Inode
	flags uint32
	tmpl  [][]byte
	names []string
}

// newDirFuzzer makes a directory with o and n seed names of nameLen bytes
// (n large enough gives an htree: a dx root over leaves).
func newDirFuzzer(tb testing.TB, o dirOpts, n, nameLen int) *dirFuzzer {
	tk, dir := newTestDir(tb, o)
	z := &dirFuzzer{tk: tk, dir: dir}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("seed-%03d-", i)
		name += strings.Repeat("p", max(0, nameLen-len(name)))
		mustAdd(tb, tk, dir, name, uint32(100+i))
		z.names = append(z.names, name)
	}
	for l := uint32(0); int64(l)*BlockSize < dir.Size(); l++ {
		z.tmpl = append(z.tmpl, append([]byte(nil), dir.BlockAt(l)...))
	}
	z.flags = dir.Flags
	return z
}

// install puts the template back with patch written at off of block blk
// (both taken modulo the sizes); fixCsum recomputes the leaf block's
// checksum tail afterwards, so that the patch reaches the parsers behind
// the checksum check.
func (z *dirFuzzer) install(blk, off uint16, patch []byte, fixCsum bool) {
	blocks := make([][]byte, len(z.tmpl))
	for i, b := range z.tmpl {
		blocks[i] = append([]byte(nil), b...)
	}
	b := blocks[int(blk)%len(blocks)]
	copy(b[int(off)%BlockSize:], patch)
	if fixCsum && z.dir.SB.MetadataCsum {
		if _, _, _, ok := dxCsumLocate(b); ok {
			z.dir.dxCsumSet(z.tk, b)
		} else if direntTailOK(b) {
			z.dir.dirblockCsumSet(z.tk, b)
		}
	}
	z.dir.Flags = z.flags
	z.dir.SetBlocks(blocks)
	for l := uint32(0); l < uint32(len(blocks)); l++ {
		z.dir.SB.Dev.Unverify(z.dir.PhysBlock(l))
	}
}

// exercise runs the directory code on the installed blocks: lookups of
// seed names, a missing name and "..", a delete, an add, readdir, the
// checker, the dump, the walker and EmptyDir. Every call must return (an
// error is fine: EFSCORRUPTED, EFSBADCRC, ENOSPC...), with no Go panic
// and no new BUG or KASAN report.
func (z *dirFuzzer) exercise(t *testing.T) {
	bugs := z.tk.K.Bugs.Len()
	lookups := []string{"x", ".."}
	if len(z.names) > 0 {
		lookups = append(lookups, z.names[0], z.names[len(z.names)/2], strings.ToUpper(z.names[len(z.names)-1]))
	}
	for _, n := range lookups {
		if r, err := find(z.tk, z.dir, n); err == nil && r != nil {
			_ = DeleteEntry(z.tk, z.dir, r)
		}
	}
	_ = AddEntry(z.tk, z.dir, []byte("new-name"), 5, SIfreg)
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

// seedPatches adds, for every block of the template, the bytes at a few
// offsets (the block's start, its second dirent, its end) as seeds.
func (z *dirFuzzer) seedPatches(f *testing.F, extra ...any) {
	for i, b := range z.tmpl {
		for _, off := range []int{0, 12, 24, 32, BlockSize - 12} {
			args := []any{uint16(i), uint16(off), append([]byte(nil), b[off:min(off+16, BlockSize)]...)}
			f.Add(append(args, extra...)...)
		}
	}
}

// FuzzDxNode patches the htree of a directory (its dx root, with the
// dx_root_info, limit, count and hash/block pairs, and its leaves), with
// and without large_dir (which raises the indirect-levels limit from 2 to
// 3): ext4_dx_find_entry, the insert path with its splits, the hash-order
// readdir and the checker must reject what they cannot follow.
func FuzzDxNode(f *testing.F) {
	plain := newDirFuzzer(f, dirOpts{noCsum: true}, 60, 60)
	large := newDirFuzzer(f, dirOpts{noCsum: true, largeDir: true}, 60, 60)
	if plain.flags&IndexFL == 0 {
		f.Fatal("the seed directory has no htree")
	}
	plain.seedPatches(f, false)
	plain.seedPatches(f, true)
	f.Fuzz(func(t *testing.T, blk, off uint16, patch []byte, largeDir bool) {
		z := plain
		if largeDir {
			z = large
		}
		z.install(blk, off, patch, false)
		z.exercise(t)
	})
}

// FuzzDirentCsumTail patches a metadata_csum directory's blocks, the
// 12-byte ext4_dir_entry_tail at the end of each leaf (det_reserved_zero1,
// det_rec_len 12, det_reserved_name_len 0xde00, det_checksum) and the
// dx_tail of index blocks included; fixCsum recomputes the checksum after
// the patch so that the fuzzer also gets past the check.
func FuzzDirentCsumTail(f *testing.F) {
	z := newDirFuzzer(f, dirOpts{}, 40, 60)
	for i, b := range z.tmpl {
		f.Add(uint16(i), uint16(BlockSize-12), append([]byte(nil), b[BlockSize-12:]...), false)
		f.Add(uint16(i), uint16(BlockSize-12), []byte{0, 0, 0, 0, 12, 0, 0, 0xde}, true)
	}
	f.Fuzz(func(t *testing.T, blk, off uint16, patch []byte, fixCsum bool) {
		z.install(blk, off, patch, fixCsum)
		z.exercise(t)
	})
}

// FuzzCasefoldEncryptDirent patches the dirents of a casefolded, encrypted
// directory: ciphertext names, the 8-byte hash after the name
// (EXT4_DIRENT_HASH / MINOR_HASH, what ext4_match and the htree use when
// the name cannot be folded), rec_len and name_len. The names go to the
// decryption only after their lengths are checked.
func FuzzCasefoldEncryptDirent(f *testing.F) {
	z := newDirFuzzer(f, dirOpts{noCsum: true, casefold: true, encrypt: true}, 20, 20)
	z.seedPatches(f)
	f.Fuzz(func(t *testing.T, blk, off uint16, patch []byte) {
		z.install(blk, off, patch, false)
		z.exercise(t)
	})
}
