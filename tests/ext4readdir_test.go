package tests

import (
	"fmt"
	"testing"

	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/vfs"
)

// TestExt4DxReaddirOneEntryPerCall: an htree listing read with a buffer
// that holds one dirent per getdents64 resumes from the file's
// dir_private_info (ext4_dx_readdir) and gives every name exactly once.
func TestExt4DxReaddirOneEntryPerCall(t *testing.T) {
	for _, cc := range []config{
		{fs: kExt4},
		{fs: kExt4, casefold: true, encrypt: true},
	} {
		t.Run(cc.String(), func(t *testing.T) {
			s := mustBoot(t, cc)
			want := map[string]bool{".": true, "..": true}
			for i := 0; i < 300; i++ {
				name := fmt.Sprintf("file-%03d", i)
				want[name] = true
				if err := s.creat(testDir+"/"+name, nil); err != nil {
					t.Fatal(err)
				}
			}
			fd, err := s.p.Open(s.t, testDir, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer s.p.Close(s.t, fd)
			seen := map[string]int{}
			buf := make([]byte, 40) // one linux_dirent64 of a short name
			for calls := 0; ; calls++ {
				if calls > 1000 {
					t.Fatal("listing does not end")
				}
				n, err := s.p.Getdents64(s.t, fd, buf)
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					break
				}
				ds, err := vfs.ParseDirents(buf[:n])
				if err != nil || len(ds) != 1 {
					t.Fatalf("getdents64 gave %d entries (%v)", len(ds), err)
				}
				seen[ds[0].Name]++
			}
			for name := range want {
				if seen[name] != 1 {
					t.Errorf("%q listed %d times", name, seen[name])
				}
			}
			if len(seen) != len(want) {
				t.Errorf("listed %d names, want %d", len(seen), len(want))
			}
		})
	}
}

// TestExt4DxReaddirCyclesOnShortEncryptedName pins a kernel finding: in an
// encrypted htree directory, a leaf entry whose name_len was corrupted to
// less than 16 makes htree_dirblock_to_tree fail with EUCLEAN after it
// stored the entries before it; ext4_dx_readdir keeps them and next_hash,
// so every getdents64 returns them again (getdents64 drops the error once
// entries were copied) and the listing never ends. ext4's checker (as
// e2fsck's check_encrypted_dirent) reports the name.
func TestExt4DxReaddirCyclesOnShortEncryptedName(t *testing.T) {
	s := mustBoot(t, config{fs: kExt4, casefold: true, encrypt: true, ext4: &ext4.Options{NoMetadataCsum: true}})
	const n = 120
	for i := 0; i < n; i++ {
		if err := s.creat(testDir+fmt.Sprintf("/entry-%04d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	inode, err := s.inode(testDir)
	if err != nil {
		t.Fatal(err)
	}
	dir := ext4.EXT4_I(inode)
	last := uint32(dir.Size()/ext4.BlockSize) - 1
	b := dir.BlockAt(last)
	// The fourth dirent of the last leaf gets name_len 7.
	off := 0
	for range 3 {
		off += int(b[off+4]) | int(b[off+5])<<8
	}
	b[off+6] = 7
	s.unverify([]uint32{dir.PhysBlock(last)})
	if err := s.dropCaches(testDir); err != nil {
		t.Fatal(err)
	}
	if err := ext4IndexBroken(s, testDir); err == nil {
		t.Error("the directory checker accepts an encrypted name of 7 bytes")
	}
	if err := corruptListBounded(s, testDir, 4*n+100); err != errNoEnd {
		t.Errorf("listing = %v, want a listing that never ends (NO-END), as the kernel's", err)
	}
}
