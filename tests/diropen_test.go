package tests

import (
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/vfs"
)

// TestEncryptedDirOpenWithoutKeySetup: since Linux 5.11 ext4, f2fs (and
// memfs, which follows them) have no ->open for directories, so opening an
// encrypted directory whose key setup fails (ENOMEM allocating its
// fscrypt_inode_info) succeeds, and getdents returns the error; once the
// allocation succeeds again, the same descriptor lists the names.
func TestEncryptedDirOpenWithoutKeySetup(t *testing.T) {
	for _, fs := range []fsKind{kMemfs, kExt4, kF2fs} {
		t.Run(string(fs), func(t *testing.T) {
			s := mustBoot(t, config{fs: fs, encrypt: true})
			if err := s.creat(testDir+"/f", []byte("x")); err != nil {
				t.Fatal(err)
			}
			// Remove the key (the directory's in-core key goes with it)
			// and add it back: the next use of the directory sets it up.
			root, err := s.p.Open(s.t, "/", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer s.p.Close(s.t, root)
			if _, err := s.p.RemoveEncryptionKey(s.t, root, s.keyID); err != nil {
				t.Fatal(err)
			}
			if _, err := s.p.AddEncryptionKey(s.t, root, masterKey); err != nil {
				t.Fatal(err)
			}
			s.t.Fail = kmem.FailSites("fscrypt_inode_info")
			fd, err := s.p.Open(s.t, testDir, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
			if err != nil {
				t.Fatalf("open of the directory while its key setup fails: %v, want success", err)
			}
			defer s.p.Close(s.t, fd)
			buf := make([]byte, 4096)
			if _, err := s.p.Getdents64(s.t, fd, buf); err != errno.ENOMEM {
				t.Errorf("getdents while the key setup fails: %v, want ENOMEM", err)
			}
			s.t.Fail = nil
			n, err := s.p.Getdents64(s.t, fd, buf)
			if err != nil {
				t.Fatal(err)
			}
			ds, err := vfs.ParseDirents(buf[:n])
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, d := range ds {
				found = found || d.Name == "f"
			}
			if !found {
				t.Errorf("listing after the failure: %v", ds)
			}
		})
	}
}
