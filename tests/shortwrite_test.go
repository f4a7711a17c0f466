package tests

import (
	"bytes"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/vfs"
)

// TestShortWriteAdvancesPos fails allocation N of a 5000-byte write(2) to
// an encrypted file, for every N the write reaches, on memfs, ext4 and
// f2fs. Linux's rule (generic_perform_write): a failure after some bytes
// were written returns those bytes, no error, and f_pos moves by them; a
// failure on the first page returns the error with f_pos unchanged. The
// failure on the second page (its bounce page, in the model, which
// encrypts at write time) must give 4096.
func TestShortWriteAdvancesPos(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 5000/16+1)[:5000]
	for _, cfg := range []config{{fs: kMemfs, encrypt: true}, {fs: kExt4, encrypt: true}, {fs: kF2fs, encrypt: true}} {
		sawShort, sawFirst := false, false
		for n := uint64(1); ; n++ {
			if n > 200 {
				t.Fatalf("%s: the write still fails at allocation %d", cfg, n)
			}
			s := mustBoot(t, cfg)
			path := testDir + "/f"
			fd, err := s.p.Open(s.t, path, vfs.O_RDWR|vfs.O_CREAT, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			inj := kmem.FailNth(n)
			s.t.Fail = inj
			wrote, werr := s.p.Write(s.t, fd, data)
			s.t.Fail = nil
			pos, err := s.p.Lseek(s.t, fd, 0, vfs.SEEK_CUR)
			if err != nil {
				t.Fatal(err)
			}
			if len(inj.Injected) == 0 {
				// Allocation n is past the write: it completed.
				if wrote != len(data) || werr != nil || pos != int64(len(data)) {
					t.Fatalf("%s: unfailed write: %d %v pos %d", cfg, wrote, werr, pos)
				}
				break
			}
			site := inj.Injected[0].Site
			switch {
			case wrote == 0:
				if werr != errno.ENOMEM || pos != 0 {
					t.Errorf("%s: allocation %d (%s) failed the first page: (%d, %v) pos %d, want (0, ENOMEM) pos 0", cfg, n, site, wrote, werr, pos)
				}
				sawFirst = true
			case wrote == vfs.PageSize:
				if werr != nil || pos != vfs.PageSize {
					t.Errorf("%s: allocation %d (%s) failed the second page: (%d, %v) pos %d, want (4096, nil) pos 4096", cfg, n, site, wrote, werr, pos)
				}
				st, err := s.p.Fstat(s.t, fd)
				if err != nil || st.Size != vfs.PageSize {
					t.Errorf("%s: size after a short write: %d %v", cfg, st.Size, err)
				}
				s.p.Close(s.t, fd)
				if got, err := s.readFile(path); err != nil || !bytes.Equal(got, data[:vfs.PageSize]) {
					t.Errorf("%s: content after a short write: %d bytes, %v", cfg, len(got), err)
				}
				sawShort = true
			default:
				t.Errorf("%s: allocation %d (%s): write returned (%d, %v)", cfg, n, site, wrote, werr)
			}
		}
		if !sawShort || !sawFirst {
			t.Errorf("%s: no failure hit the second page (short %v) or the first (%v)", cfg, sawShort, sawFirst)
		}
	}
}
