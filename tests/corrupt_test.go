package tests

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"pgregory.net/rapid"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// dirAreas returns the on-disk areas of the directory at path, writable in
// place: f2fs's inline dentry area or dentry blocks, ext4's blocks; and for
// ext4 the device block numbers, to forget their verified state after a
// change.
func (s *system) dirAreas(tb testing.TB, path string) ([][]byte, []uint32) {
	tb.Helper()
	inode, err := s.inode(path)
	if err != nil {
		tb.Fatal(err)
	}
	var areas [][]byte
	var pblks []uint32
	switch s.cfg.fs {
	case kF2fs:
		dir := f2fs.F2FS_I(inode)
		if dir.Inline {
			areas = append(areas, dir.Node[dir.Geo.Offset:dir.Geo.Offset+dir.Geo.MaxInlineData])
		}
		for _, p := range dir.Pages() {
			areas = append(areas, dir.BlockAt(p))
		}
	case kExt4:
		dir := ext4.EXT4_I(inode)
		for lblk := uint32(0); int64(lblk)*ext4.BlockSize < dir.Size(); lblk++ {
			if b := dir.BlockAt(lblk); b != nil {
				areas = append(areas, b)
				pblks = append(pblks, dir.PhysBlock(lblk))
			}
		}
	}
	return areas, pblks
}

// unverify makes ext4 check the blocks' checksums again, as after a read
// from disk.
func (s *system) unverify(pblks []uint32) {
	if s.cfg.fs == kExt4 {
		dev := ext4.EXT4_SB(s.sys.RootMount().SB).Dev
		for _, b := range pblks {
			dev.Unverify(b)
		}
	}
}

// isErrno reports whether err is nil or a plain errno (not a BUG report
// or another error type).
func isErrno(err error) bool {
	if err == nil {
		return true
	}
	if _, bug := kernel.AsBug(err); bug {
		return false
	}
	var e syscall.Errno
	return errors.As(err, &e)
}

// f2fsSlot finds the dentry slot of a name in an f2fs dentry area.
func f2fsSlot(area []byte, inline bool, name string) (f2fs.DentryPtr, int) {
	var d f2fs.DentryPtr
	if inline {
		d = f2fs.MakeDentryPtrInline(f2fs.DefaultInlineGeometry, area)
	} else {
		d = f2fs.MakeDentryPtrBlock(area)
	}
	for i := d.FindNextBit(0); i < d.Max; i = d.FindNextBit(i + 1) {
		de := d.Entry(i)
		if n, ok := d.Name(i, int(de.NameLen)); ok && string(n) == name {
			return d, i
		}
	}
	return d, -1
}

// ext4Dirent finds the offset of a name's dirent in an ext4 block.
func ext4Dirent(b []byte, name string) int {
	for off := 0; off+8 <= len(b); {
		rl := int(binary.LittleEndian.Uint16(b[off+4:]))
		nl := int(b[off+6])
		if binary.LittleEndian.Uint32(b[off:]) != 0 && off+8+nl <= len(b) && string(b[off+8:off+8+nl]) == name {
			return off
		}
		if rl < 12 {
			return -1
		}
		off += rl
	}
	return -1
}

// TestCorruptBlocks: corrupt directory blocks reached through the syscalls
// give EUCLEAN (EFSCORRUPTED) and a log line where the kernel gives them,
// and never a panic:
//   - f2fs, a name_len that runs past the dentry area: looking the name up
//     and listing the directory are EUCLEAN, "corrupted namelen";
//   - f2fs, a bitmap bit over an empty slot: listing logs "invalid
//     namelen(0)" and goes on (f2fs_fill_dentries), the other names stay;
//   - ext4, a rec_len past the block: looking up the entry and creating in
//     the block are EUCLEAN, "directory entry overrun"; listing logs it and
//     skips the rest of the block (ext4_readdir);
//   - ext4, a name_len larger than the rec_len allows: EUCLEAN, "rec_len is
//     too small for name_len";
//   - ext4 with metadata_csum, any change to a block read again from disk:
//     EBADMSG (EFSBADCRC), logged by the lookup ("checksumming directory
//     block") and by the hash-order readdir ("Directory block failed
//     checksum").
func TestCorruptBlocks(t *testing.T) {
	const victim = "victim-name"
	setup := func(t *testing.T, cfg config) *system {
		s := mustBoot(t, cfg)
		for _, n := range []string{"alpha", victim, "omega"} {
			if err := s.creat(testDir+"/"+n, []byte(n)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.dropCaches(testDir); err != nil {
			t.Fatal(err)
		}
		return s
	}
	expect := func(t *testing.T, s *system, what string, err, want error, log string) {
		t.Helper()
		if err != want {
			t.Fatalf("%s: %v, want %v", what, err, want)
		}
		if log != "" && !s.k.Log.Contains(log) {
			t.Fatalf("%s: no %q in the log: %v", what, log, s.k.Log.Lines())
		}
		s.noBugs(t)
	}

	for _, inline := range []bool{true, false} {
		t.Run(fmt.Sprintf("f2fs/inline=%v/namelen", inline), func(t *testing.T) {
			s := setup(t, config{fs: kF2fs, f2fs: &f2fs.Options{NoInlineDentry: !inline}})
			areas, _ := s.dirAreas(t, testDir)
			d, slot := f2fsSlot(areas[0], inline, victim)
			binary.LittleEndian.PutUint16(d.Dentry[slot*f2fs.SizeOfDirEntry+8:], uint16((d.Max-slot)*f2fs.SlotLen+1))
			_, err := s.p.Stat(s.t, testDir+"/"+victim)
			expect(t, s, "stat", err, errno.EUCLEAN, "corrupted namelen")
			_, err = s.listDir(testDir)
			expect(t, s, "getdents", err, errno.EUCLEAN, "f2fs_fill_dentries: corrupted namelen")
		})
		t.Run(fmt.Sprintf("f2fs/inline=%v/bitmap", inline), func(t *testing.T) {
			s := setup(t, config{fs: kF2fs, f2fs: &f2fs.Options{NoInlineDentry: !inline}})
			areas, _ := s.dirAreas(t, testDir)
			d, _ := f2fsSlot(areas[0], inline, "omega")
			free := d.FindNextZeroBit(2)
			d.Bitmap[free/8] |= 1 << (free % 8)
			ds, err := s.listDir(testDir)
			expect(t, s, "getdents", err, nil, "invalid namelen(0)")
			if len(ds) != 3 {
				t.Fatalf("listed %v", ds)
			}
			if err := s.checkDir(testDir); err == nil {
				t.Fatal("the checker misses the bitmap bit over an empty slot")
			}
		})
	}
	for _, dx := range []bool{true, false} {
		opts := &ext4.Options{NoMetadataCsum: true, NoDirIndex: !dx}
		t.Run(fmt.Sprintf("ext4/dir_index=%v/rec_len", dx), func(t *testing.T) {
			s := setup(t, config{fs: kExt4, ext4: opts})
			areas, _ := s.dirAreas(t, testDir)
			off := ext4Dirent(areas[0], victim)
			binary.LittleEndian.PutUint16(areas[0][off+4:], uint16(ext4.BlockSize-off+4))
			_, err := s.p.Stat(s.t, testDir+"/"+victim)
			expect(t, s, "stat", err, errno.EUCLEAN, "directory entry overrun")
			err = s.creat(testDir+"/new", nil)
			expect(t, s, "creat", err, errno.EUCLEAN, "ext4_find_dest_de")
			if _, err := s.listDir(testDir); err != nil {
				t.Fatalf("getdents: %v", err)
			}
			expect(t, s, "getdents", nil, nil, "bad entry in directory")
		})
		t.Run(fmt.Sprintf("ext4/dir_index=%v/name_len", dx), func(t *testing.T) {
			s := setup(t, config{fs: kExt4, ext4: opts})
			areas, _ := s.dirAreas(t, testDir)
			off := ext4Dirent(areas[0], victim)
			// A longer name than the rec_len holds, whose first bytes
			// still match (the name is followed by the next dirent).
			areas[0][off+6] = byte(binary.LittleEndian.Uint16(areas[0][off+4:]) - 4)
			err := s.p.Unlink(s.t, testDir+"/omega")
			expect(t, s, "unlink of the next entry", err, errno.EUCLEAN, "rec_len is too small for name_len")
		})
	}
	t.Run("ext4/metadata_csum", func(t *testing.T) {
		s := setup(t, config{fs: kExt4})
		areas, pblks := s.dirAreas(t, testDir)
		off := ext4Dirent(areas[0], victim)
		areas[0][off+8] ^= 0x20 // "Victim-name"
		s.unverify(pblks)
		_, err := s.p.Stat(s.t, testDir+"/Victim-name")
		expect(t, s, "stat", err, errno.EBADMSG, "checksumming directory block 0")
		_, err = s.listDir(testDir)
		expect(t, s, "getdents", err, errno.EBADMSG, "Directory block failed checksum")
	})
}

// TestCorruptBlocksProperty: random bytes of random directory blocks (the
// inline area, dentry blocks, htree index and leaf blocks) changed behind
// the filesystem's back, then the usual syscalls on the directory: every
// answer is nil or an errno, never a BUG, a KASAN report or a Go panic,
// and every syscall returns.
func TestCorruptBlocksProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cfg := config{fs: rapid.SampledFrom([]fsKind{kF2fs, kExt4}).Draw(rt, "fs"),
			casefold: rapid.Bool().Draw(rt, "casefold"), encrypt: rapid.Bool().Draw(rt, "encrypt")}
		if cfg.fs == kExt4 {
			cfg.ext4 = &ext4.Options{NoMetadataCsum: rapid.IntRange(0, 3).Draw(rt, "nocsum") != 0,
				NoDirIndex: rapid.IntRange(0, 3).Draw(rt, "nodx") == 0}
		} else {
			cfg.f2fs = &f2fs.Options{NoInlineDentry: rapid.Bool().Draw(rt, "noinline")}
		}
		s, err := boot(cfg)
		if err != nil {
			rt.Fatal(err)
		}
		defer s.close()
		n := rapid.IntRange(1, 300).Draw(rt, "n")
		var names []string
		for i := 0; i < n; i++ {
			name := fmt.Sprintf("entry-%04d", i)
			names = append(names, name)
			if err := s.creat(testDir+"/"+name, nil); err != nil {
				rt.Fatal(err)
			}
		}
		if err := s.p.Mkdir(s.t, testDir+"/subdir", 0o755); err != nil {
			rt.Fatal(err)
		}
		areas, pblks := s.dirAreas(t, testDir)
		for range rapid.IntRange(1, 8).Draw(rt, "flips") {
			a := areas[rapid.IntRange(0, len(areas)-1).Draw(rt, "area")]
			i := rapid.IntRange(0, len(a)-1).Draw(rt, "byte")
			a[i] = rapid.Byte().Draw(rt, "value")
		}
		s.unverify(pblks)
		if err := s.dropCaches(testDir); err != nil {
			rt.Fatal(err)
		}
		check := func(what string, err error) {
			if !isErrno(err) {
				rt.Fatalf("%s: %s: %v", cfg, what, err)
			}
		}
		for _, name := range []string{names[0], names[n/2], names[n-1], "absent", "ENTRY-0000"} {
			_, err := s.p.Lstat(s.t, testDir+"/"+name)
			check("lstat "+name, err)
		}
		_, err = s.listDir(testDir)
		if err == errNoEnd && cfg.fs == kExt4 && ext4IndexBroken(s, testDir) != nil {
			// The kernel's ext4_dx_readdir cycles on such a directory
			// too (TestExt4DxReaddirCyclesOnShortEncryptedName).
			err = nil
		}
		check("getdents", err)
		check("creat", s.creat(testDir+"/created", []byte("x")))
		check("unlink", s.p.Unlink(s.t, testDir+"/"+names[n/3]))
		check("rename", s.p.Rename(s.t, testDir+"/"+names[n-1], testDir+"/renamed", 0))
		check("rmdir", s.p.Rmdir(s.t, testDir+"/subdir"))
		check("mkdir", s.p.Mkdir(s.t, testDir+"/made", 0o755))
		fd, err := s.p.Open(s.t, testDir, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		check("open", err)
		if err == nil {
			s.p.Close(s.t, fd)
		}
		if s.k.Bugs.Len() != 0 {
			rt.Fatalf("%s: %v", cfg, s.k.Bugs.All())
		}
	})
}
