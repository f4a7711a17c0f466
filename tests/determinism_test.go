package tests

import (
	"fmt"
	"testing"

	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/vfs"
)

// nonces creates files in /d and returns the directory's and each file's
// fscrypt nonce (FS_IOC_GET_ENCRYPTION_NONCE).
func (s *system) nonces(tb testing.TB, n int) [][fscrypt.FileNonceSize]byte {
	tb.Helper()
	var out [][fscrypt.FileNonceSize]byte
	get := func(path string) {
		fd, err := s.p.Open(s.t, path, vfs.O_RDONLY, 0)
		if err != nil {
			tb.Fatal(err)
		}
		defer s.p.Close(s.t, fd)
		var nonce [fscrypt.FileNonceSize]byte
		if _, err := s.p.Ioctl(s.t, fd, vfs.FS_IOC_GET_ENCRYPTION_NONCE, &nonce); err != nil {
			tb.Fatalf("%s: get nonce: %v", path, err)
		}
		out = append(out, nonce)
	}
	get(testDir)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s/f%d", testDir, i)
		if err := s.creat(name, []byte("x")); err != nil {
			tb.Fatal(err)
		}
		get(name)
	}
	return out
}

// TestNoncesComeFromTheSeed: fscrypt's nonces (fscrypt_set_policy's
// directory nonce, fscrypt_prepare_new_inode's file nonces) are drawn with
// the machine's get_random_bytes, so two machines with one seed give the
// same nonces, and reseeding changes them.
func TestNoncesComeFromTheSeed(t *testing.T) {
	for _, cfg := range []config{{fs: kExt4, encrypt: true}, {fs: kF2fs, encrypt: true}} {
		a := mustBoot(t, cfg).nonces(t, 3)
		b := mustBoot(t, cfg).nonces(t, 3)
		seen := map[[fscrypt.FileNonceSize]byte]bool{}
		for i := range a {
			if a[i] != b[i] {
				t.Errorf("%s: nonce %d differs between two machines with one seed: %x vs %x", cfg, i, a[i], b[i])
			}
			if seen[a[i]] {
				t.Errorf("%s: nonce %x repeated", cfg, a[i])
			}
			seen[a[i]] = true
		}
		c := mustBoot(t, cfg)
		c.k.Seed(99)
		if n := c.nonces(t, 1); n[1] == a[1] {
			t.Errorf("%s: reseeding did not change the file nonce", cfg)
		}
	}
}
