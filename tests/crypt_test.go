package tests

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// rawBlocks, rawTarget and context read what the filesystem stores for an
// inode.
func (s *system) rawBlocks(inode *vfs.Inode) [][]byte {
	if s.cfg.fs == kExt4 {
		return ext4.RawBlocks(inode)
	}
	return f2fs.RawBlocks(inode)
}

func (s *system) rawTarget(inode *vfs.Inode) []byte {
	if s.cfg.fs == kExt4 {
		return ext4.RawTarget(inode)
	}
	return f2fs.RawTarget(inode)
}

func (s *system) context(inode *vfs.Inode) []byte {
	if s.cfg.fs == kExt4 {
		return ext4.Context(inode)
	}
	return f2fs.Context(inode)
}

// setPolicy makes dir an encrypted directory with policy p (its key
// added first: by identifier for v2, by descriptor for v1).
func (s *system) setPolicy(tb testing.TB, dir string, p fscrypt.Policy) {
	tb.Helper()
	fd, err := s.p.Open(s.t, dir, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer s.p.Close(s.t, fd)
	arg := &fscrypt.AddKeyArg{RawSize: uint32(len(masterKey)), Raw: masterKey}
	if p.Version == fscrypt.PolicyV1 {
		p.Descriptor = fscrypt.KeyDescriptor(masterKey)
		arg.KeySpec = fscrypt.DescriptorSpec(p.Descriptor)
	} else {
		arg.KeySpec.Type = fscrypt.KeySpecTypeIdentifier
	}
	if _, err := s.p.Ioctl(s.t, fd, vfs.FS_IOC_ADD_ENCRYPTION_KEY, arg); err != nil {
		tb.Fatal(err)
	}
	if p.Version == fscrypt.PolicyV2 {
		copy(p.Identifier[:], arg.KeySpec.U[:])
	}
	if err := s.p.SetEncryptionPolicy(s.t, fd, p); err != nil {
		tb.Fatal(err)
	}
}

// TestStoredEncrypted: in an encrypted directory the filesystem stores the
// context as its xattr (28 bytes for v1, 40 for v2, the nonce last, as
// FS_IOC_GET_ENCRYPTION_NONCE returns it), file contents as ciphertext in
// its blocks (per 4 KiB block, or per 512-byte data unit on ext4 with
// log2_data_unit_size 9), and symlink targets as fscrypt_symlink_data;
// everything reads back as written, and truncation re-encrypts the tail.
func TestStoredEncrypted(t *testing.T) {
	v1 := fscrypt.Policy{Version: fscrypt.PolicyV1, ContentsMode: fscrypt.ModeAES256XTS, FilenamesMode: fscrypt.ModeAES256CTS}
	v2 := fscrypt.Policy{Version: fscrypt.PolicyV2, ContentsMode: fscrypt.ModeAES256XTS, FilenamesMode: fscrypt.ModeAES256CTS, Flags: fscrypt.PolicyFlagsPad32}
	du512 := v2
	du512.Log2DataUnitSize = 9
	cases := []struct {
		fs  fsKind
		pol fscrypt.Policy
		ctx int
	}{
		{kF2fs, v1, 28}, {kF2fs, v2, 40}, {kExt4, v1, 28}, {kExt4, v2, 40}, {kExt4, du512, 40},
	}
	data := bytes.Repeat([]byte("plaintext block "), 700) // 11200 bytes: 3 blocks
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/v%d/du=%d", c.fs, c.pol.Version, c.pol.Log2DataUnitSize), func(t *testing.T) {
			s := mustBoot(t, config{fs: c.fs})
			s.setPolicy(t, testDir, c.pol)
			if err := s.creat(testDir+"/file", data); err != nil {
				t.Fatal(err)
			}
			if err := s.p.Symlink(s.t, "file", testDir+"/link"); err != nil {
				t.Fatal(err)
			}
			file, err := s.inode(testDir + "/file")
			if err != nil {
				t.Fatal(err)
			}
			ctx := s.context(file)
			fd, err := s.p.Open(s.t, testDir+"/file", vfs.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			var nonce [fscrypt.FileNonceSize]byte
			if _, err := s.p.Ioctl(s.t, fd, vfs.FS_IOC_GET_ENCRYPTION_NONCE, &nonce); err != nil {
				t.Fatal(err)
			}
			if len(ctx) != c.ctx || !bytes.Equal(ctx[c.ctx-16:], nonce[:]) {
				t.Fatalf("context %x (%d bytes), nonce %x", ctx, len(ctx), nonce)
			}
			blocks := s.rawBlocks(file)
			if len(blocks) != 3 {
				t.Fatalf("%d blocks stored", len(blocks))
			}
			for i, b := range blocks {
				if bytes.Contains(b, []byte("plaintext block")) {
					t.Fatalf("block %d stored in the clear", i)
				}
			}
			if got, err := s.readFile(testDir + "/file"); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read back: %v", err)
			}
			if err := s.p.Ftruncate(s.t, fd, 5000); err != nil {
				t.Fatal(err)
			}
			s.p.Close(s.t, fd)
			if got, err := s.readFile(testDir + "/file"); err != nil || !bytes.Equal(got, data[:5000]) {
				t.Fatalf("after truncation: %d bytes, %v", len(got), err)
			}
			link, err := s.inode(testDir + "/link")
			if err != nil {
				t.Fatal(err)
			}
			if raw := s.rawTarget(link); bytes.Contains(raw, []byte("file")) || len(s.context(link)) != c.ctx {
				t.Fatalf("symlink target stored as %x", raw)
			}
			buf := make([]byte, 100)
			if n, err := s.p.Readlink(s.t, testDir+"/link", buf); err != nil || string(buf[:n]) != "file" {
				t.Fatalf("readlink: %q %v", buf[:n], err)
			}
			if st, err := s.p.Lstat(s.t, testDir+"/link"); err != nil || st.Size != 4 {
				t.Fatalf("lstat of the symlink: %v %v", st, err)
			}
			if got, err := s.readFile(testDir + "/link"); err != nil || len(got) != 5000 {
				t.Fatalf("through the symlink: %d bytes, %v", len(got), err)
			}
			s.noBugs(t)
		})
	}
}

// TestEncryptionRules: the filesystems' own fscrypt rules: a policy needs
// an empty directory (ENOTEMPTY); ext4 refuses to encrypt even an empty
// root (EPERM), f2fs does not; casefolding an encrypted directory needs a v2
// policy (EINVAL for v1); data units smaller than a block need ext4
// (f2fs: EINVAL); without the encrypt feature the ioctls are
// EOPNOTSUPP; a hard link or a rename into a directory with another policy
// is EXDEV.
func TestEncryptionRules(t *testing.T) {
	v2 := fscrypt.Policy{Version: fscrypt.PolicyV2, ContentsMode: fscrypt.ModeAES256XTS, FilenamesMode: fscrypt.ModeAES256CTS}
	for _, fs := range []fsKind{kF2fs, kExt4} {
		t.Run(string(fs), func(t *testing.T) {
			s := mustBoot(t, config{fs: fs, casefold: true})
			fd, err := s.p.Open(s.t, "/", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
			if err != nil {
				t.Fatal(err)
			}
			id, err := s.p.AddEncryptionKey(s.t, fd, masterKey)
			if err != nil {
				t.Fatal(err)
			}
			p := v2
			p.Identifier = id
			err = s.p.SetEncryptionPolicy(s.t, fd, p)
			s.p.Close(s.t, fd)
			if err != errno.ENOTEMPTY {
				t.Fatalf("policy on the root, which holds %s: %v", testDir, err)
			}
			if err := s.creat(testDir+"/x", nil); err != nil {
				t.Fatal(err)
			}
			fd, _ = s.p.Open(s.t, testDir, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
			if err := s.p.SetEncryptionPolicy(s.t, fd, p); err != errno.ENOTEMPTY {
				t.Fatalf("policy on a non-empty directory: %v", err)
			}
			s.p.Close(s.t, fd)
			for _, d := range []string{"/e1", "/e2", "/v1"} {
				if err := s.p.Mkdir(s.t, d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			s.setPolicy(t, "/e1", v2)
			other := v2
			other.Flags = fscrypt.PolicyFlagsPad32
			s.setPolicy(t, "/e2", other)
			s.setPolicy(t, "/v1", fscrypt.Policy{Version: fscrypt.PolicyV1, ContentsMode: fscrypt.ModeAES256XTS, FilenamesMode: fscrypt.ModeAES256CTS})
			// Sub-block data units: ext4 and f2fs support them
			// (supports_subblock_data_units; f2fs since Linux 6.7).
			if err := s.p.Mkdir(s.t, "/du", 0o755); err != nil {
				t.Fatal(err)
			}
			fd, _ = s.p.Open(s.t, "/du", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
			du := p
			du.Log2DataUnitSize = 9
			err = s.p.SetEncryptionPolicy(s.t, fd, du)
			s.p.Close(s.t, fd)
			if err != nil {
				t.Fatalf("log2_data_unit_size 9: %v", err)
			}
			if err := s.setCasefold("/v1"); err != errno.EINVAL {
				t.Fatalf("casefold on a v1-encrypted directory: %v", err)
			}
			if err := s.setCasefold("/e1"); err != nil {
				t.Fatalf("casefold on an empty v2-encrypted directory: %v", err)
			}
			if err := s.creat("/e1/f", []byte("f")); err != nil {
				t.Fatal(err)
			}
			if err := s.setCasefold("/e1"); err != nil {
				t.Fatalf("setting casefold again: %v", err)
			}
			if err := s.p.Link(s.t, "/e1/f", "/e2/f"); err != errno.EXDEV {
				t.Fatalf("link across policies: %v", err)
			}
			if err := s.p.Rename(s.t, "/e1/f", "/e2/f", 0); err != errno.EXDEV {
				t.Fatalf("rename across policies: %v", err)
			}
			if err := s.p.Rename(s.t, "/e1/f", "/f", 0); err != nil {
				t.Fatalf("rename out of the encrypted directory: %v", err)
			}
			if err := s.creat("/plain", nil); err != nil {
				t.Fatal(err)
			}
			if err := s.p.Rename(s.t, "/plain", "/e1/plain", 0); err != errno.EXDEV {
				t.Fatalf("rename of an unencrypted file into it: %v", err)
			}
			if err := s.p.Rename(s.t, "/f", "/e1/f", 0); err != nil {
				t.Fatalf("rename of the encrypted file back: %v", err)
			}
			s.noBugs(t)
		})
	}
	// An empty root: ext4 refuses it (ext4_set_context: e2fsck expects an
	// unencrypted lost+found), f2fs (without lost_found) takes it.
	for _, fs := range []fsKind{kF2fs, kExt4} {
		tk := kernel.New().NewTask("root")
		var p *vfs.Proc
		var err error
		if fs == kExt4 {
			_, p, err = ext4.Boot(tk, vfs.Config{}, nil)
		} else {
			_, p, err = f2fs.Boot(tk, vfs.Config{}, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.EncryptDir(tk, "/", masterKey, 0, 0)
		if fs == kExt4 && err != errno.EPERM || fs == kF2fs && err != nil {
			t.Fatalf("%s: policy on the empty root: %v", fs, err)
		}
		p.Exit(tk)
		tk.Exit()
	}
	for _, fs := range []fsKind{kF2fs, kExt4} {
		cfg := config{fs: fs, f2fs: &f2fs.Options{NoEncrypt: true}, ext4: &ext4.Options{NoEncrypt: true}}
		s := mustBoot(t, cfg)
		fd, _ := s.p.Open(s.t, testDir, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		if _, err := s.p.AddEncryptionKey(s.t, fd, masterKey); err != errno.EOPNOTSUPP {
			t.Fatalf("%s without encrypt: %v", fs, err)
		}
		if err := s.setCasefold(testDir); err != errno.EOPNOTSUPP {
			t.Fatalf("%s without casefold: %v", fs, err)
		}
		s.p.Close(s.t, fd)
	}
}
