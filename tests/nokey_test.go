package tests

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/vfs"
)

// diskEntry is a directory entry as stored: the on-disk name (ciphertext),
// the inode it names and the hash stored with it or used to file it.
type diskEntry struct {
	name        []byte
	ino         uint32
	hash, minor uint32
}

// diskEntries reads the entries of a directory from its blocks: f2fs's
// dentries with their hash_code; ext4's dirents with the hash stored after
// the name in a casefolded, encrypted directory, else the htree hash of
// the name when the directory is listed in hash order (an htree or a
// one-block directory with dir_index), else zero, as ext4_readdir passes
// them to fscrypt_fname_disk_to_usr.
func (s *system) diskEntries(tb testing.TB, path string) []diskEntry {
	tb.Helper()
	inode, err := s.inode(path)
	if err != nil {
		tb.Fatal(err)
	}
	var out []diskEntry
	switch s.cfg.fs {
	case kF2fs:
		dir := f2fs.F2FS_I(inode)
		var areas []f2fs.DentryPtr
		if dir.Inline {
			areas = append(areas, dir.InlineDentryPtr())
		}
		for _, p := range dir.Pages() {
			areas = append(areas, f2fs.MakeDentryPtrBlock(dir.BlockAt(p)))
		}
		for _, d := range areas {
			for i := d.FindNextBit(0); i < d.Max; i = d.FindNextBit(i + 1) {
				de := d.Entry(i)
				if de.NameLen == 0 {
					continue
				}
				name, _ := d.Name(i, int(de.NameLen))
				out = append(out, diskEntry{name: bytes.Clone(name), ino: de.Ino, hash: de.HashCode})
			}
		}
	case kExt4:
		dir := ext4.EXT4_I(inode)
		sb := dir.SB
		hashOrder := sb.DirIndex && (dir.IsDx() || dir.Size() == ext4.BlockSize)
		for lblk := uint32(0); int64(lblk)*ext4.BlockSize < dir.Size(); lblk++ {
			b := dir.BlockAt(lblk)
			for off := 0; off+8 <= len(b); {
				ino := binary.LittleEndian.Uint32(b[off:])
				rl := int(binary.LittleEndian.Uint16(b[off+4:]))
				nl := int(b[off+6])
				if rl < 12 {
					break
				}
				if ino != 0 && b[off+7] != ext4.FtDirCsum {
					e := diskEntry{name: bytes.Clone(b[off+8 : off+8+nl]), ino: ino}
					switch {
					case dir.HashInDirent():
						h := off + 8 + (nl+3)&^3
						e.hash, e.minor = binary.LittleEndian.Uint32(b[h:]), binary.LittleEndian.Uint32(b[h+4:])
					case hashOrder:
						hinfo := ext4.DxHashInfo{HashVersion: sb.DefHashVersion + sb.HashUnsigned, Seed: &sb.HashSeed}
						if err := ext4.Dirhash(s.t, dir, e.name, &hinfo); err != nil {
							tb.Fatal(err)
						}
						e.hash, e.minor = hinfo.Hash, hinfo.MinorHash
					}
					out = append(out, e)
				}
				off += rl
			}
		}
	}
	return out
}

// removeKey removes the test directory's master key (all files closed).
func (s *system) removeKey(tb testing.TB) {
	tb.Helper()
	fd, err := s.p.Open(s.t, "/", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer s.p.Close(s.t, fd)
	flags, err := s.p.RemoveEncryptionKey(s.t, fd, s.keyID)
	if err != nil || flags != 0 {
		tb.Fatalf("remove key: flags %#x, %v", flags, err)
	}
}

// addKey adds the master key back.
func (s *system) addKey(tb testing.TB) {
	tb.Helper()
	fd, err := s.p.Open(s.t, "/", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer s.p.Close(s.t, fd)
	if _, err := s.p.AddEncryptionKey(s.t, fd, masterKey); err != nil {
		tb.Fatal(err)
	}
}

// TestNokeyNames: without the key, readdir of an encrypted directory
// lists no-key names whose dirhash fields are the on-disk hash, and each
// can be looked up (the same inode), a directory among them opened and
// listed, a symlink read (as its no-key target), and unlinked; what the
// kernel refuses without the key is refused: opening a regular file
// (fscrypt_file_open: ENOKEY), renaming (fscrypt_prepare_rename: ENOKEY,
// even within the directory), linking into the directory and creating in
// it (ENOKEY). With the key back, the remaining names and contents are
// intact. f2fs and ext4, casefolded or not, small directories (inline,
// one block) and large ones (hash levels, htree), names whose ciphertext
// is longer than a no-key name carries.
func TestNokeyNames(t *testing.T) {
	var cfgs []config
	for _, fs := range []fsKind{kF2fs, kExt4} {
		for _, ci := range []bool{false, true} {
			cfgs = append(cfgs, config{fs: fs, casefold: ci, encrypt: true})
		}
	}
	// Without dir_index ext4 lists in block order with no hash (0:0), as
	// ext4_readdir does for a directory that is not casefolded.
	cfgs = append(cfgs, config{fs: kExt4, encrypt: true, ext4: &ext4.Options{NoDirIndex: true}})
	for _, cfg := range cfgs {
		for _, n := range []int{6, 400} {
			name := fmt.Sprintf("%s/n=%d", cfg, n)
			if cfg.ext4 != nil {
				name = fmt.Sprintf("%s/%s/n=%d", cfg, cfg.ext4, n)
			}
			t.Run(name, func(t *testing.T) { testNokeyNames(t, cfg, n) })
		}
	}
}

func testNokeyNames(t *testing.T, cfg config, n int) {
	s := mustBoot(t, cfg)
	var names []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("file-%03d", i)
		if i%5 == 1 {
			name += "-" + strings.Repeat("long", 40) // 170-byte names: digested no-key names
		}
		names = append(names, name)
		if err := s.creat(testDir+"/"+name, []byte("contents of "+name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.p.Mkdir(s.t, testDir+"/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.creat(testDir+"/sub/inner", []byte("inner")); err != nil {
		t.Fatal(err)
	}
	if err := s.p.Symlink(s.t, "file-000", testDir+"/link"); err != nil {
		t.Fatal(err)
	}
	inos := map[string]uint64{}
	for _, name := range append(names, "sub", "link") {
		st, err := s.p.Lstat(s.t, testDir+"/"+name)
		if err != nil {
			t.Fatal(err)
		}
		inos[name] = st.Ino
	}
	s.removeKey(t)

	disk := map[uint32]diskEntry{}
	for _, e := range s.diskEntries(t, testDir) {
		disk[e.ino] = e
	}
	ds, err := s.listDir(testDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != n+2 {
		t.Fatalf("%d entries listed without the key, want %d", len(ds), n+2)
	}
	byIno := map[uint64]string{} // inode -> no-key name
	hashed := 0
	for _, d := range ds {
		for _, plain := range names {
			if d.Name == plain {
				t.Fatalf("plaintext name %q listed without the key", plain)
			}
		}
		nk, err := fscrypt.DecodeNokeyName([]byte(d.Name))
		if err != nil {
			t.Fatalf("%q is not a no-key name: %v", d.Name, err)
		}
		e, ok := disk[uint32(d.Ino)]
		if !ok {
			t.Fatalf("%q: inode %d has no entry on disk", d.Name, d.Ino)
		}
		if nk.Hash != e.hash || nk.MinorHash != e.minor {
			t.Fatalf("%q: dirhash %08x:%08x, on disk %08x:%08x", d.Name, nk.Hash, nk.MinorHash, e.hash, e.minor)
		}
		if nk.Hash != 0 {
			hashed++
		}
		if !bytes.HasPrefix(e.name, nk.Bytes) || (len(e.name) > fscrypt.NokeyNameBytes) != nk.Digested {
			t.Fatalf("%q: carries %x, the ciphertext is %x", d.Name, nk.Bytes, e.name)
		}
		st, err := s.p.Lstat(s.t, testDir+"/"+d.Name)
		if err != nil || st.Ino != d.Ino {
			t.Fatalf("lookup of no-key name %q: %v %v, listed as inode %d", d.Name, st, err, d.Ino)
		}
		byIno[d.Ino] = d.Name
	}
	if hashed < n && (cfg.ext4 == nil || !cfg.ext4.NoDirIndex) {
		// Every directory here is listed with hashes: f2fs always, ext4
		// in hash order (one block with dir_index, or an htree).
		t.Fatalf("only %d of %d no-key names carry a dirhash", hashed, n+2)
	}
	nk := func(name string) string { return testDir + "/" + byIno[inos[name]] }
	if _, err := s.p.Open(s.t, nk(names[0]), vfs.O_RDONLY, 0); err != errno.ENOKEY {
		t.Fatalf("open of a regular file without the key: %v, want ENOKEY", err)
	}
	if err := s.p.Rename(s.t, nk(names[0]), nk(names[1]), 0); err != errno.ENOKEY {
		t.Fatalf("rename without the key: %v, want ENOKEY", err)
	}
	if err := s.p.Link(s.t, nk(names[0]), testDir+"/"+"other"); err != errno.ENOKEY {
		t.Fatalf("link without the key: %v, want ENOKEY", err)
	}
	if err := s.creat(testDir+"/new", nil); err != errno.ENOKEY {
		t.Fatalf("create without the key: %v, want ENOKEY", err)
	}
	sub, err := s.listDir(nk("sub"))
	if err != nil || len(sub) != 1 || sub[0].Name == "inner" {
		t.Fatalf("listing of the no-key subdirectory: %v %v", sub, err)
	}
	buf := make([]byte, 300)
	if k, err := s.p.Readlink(s.t, nk("link"), buf); err != nil || string(buf[:k]) == "file-000" {
		t.Fatalf("readlink without the key: %q %v", buf[:k], err)
	}
	// Unlink every other file by its no-key name, and the subdirectory's
	// content and the subdirectory.
	for i := 0; i < n; i += 2 {
		if err := s.p.Unlink(s.t, nk(names[i])); err != nil {
			t.Fatalf("unlink of no-key %q: %v", byIno[inos[names[i]]], err)
		}
	}
	if err := s.p.Unlink(s.t, nk("sub")+"/"+sub[0].Name); err != nil {
		t.Fatal(err)
	}
	if err := s.p.Rmdir(s.t, nk("sub")); err != nil {
		t.Fatal(err)
	}
	if err := s.checkDir(testDir); err != nil {
		t.Fatal(err)
	}
	s.noBugs(t)

	s.addKey(t)
	for i, name := range names {
		data, err := s.readFile(testDir + "/" + name)
		switch {
		case i%2 == 0 && err != errno.ENOENT:
			t.Fatalf("%q, unlinked without the key: %v", name, err)
		case i%2 == 1 && (err != nil || string(data) != "contents of "+name):
			t.Fatalf("%q: %q %v", name, data, err)
		}
	}
	if _, err := s.p.Lstat(s.t, testDir+"/sub"); err != errno.ENOENT {
		t.Fatalf("sub: %v", err)
	}
	if err := s.checkDir(testDir); err != nil {
		t.Fatal(err)
	}
	s.noBugs(t)
}
