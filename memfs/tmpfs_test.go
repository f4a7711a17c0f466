package memfs_test

import (
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/memfs"
	"github.com/vfslab/vfslab/vfs"
)

// TestTmpfsHasNoFscrypt: memfs by default is tmpfs, which has no fscrypt
// (mm/shmem.c sets no s_cop, and shmem_file_operations and
// shmem_dir_operations have no unlocked_ioctl): every fscrypt ioctl on a
// directory or a file is ENOTTY, as vfs_ioctl answers without
// ->unlocked_ioctl, and open is generic_file_open, which never calls
// fscrypt_file_open.
func TestTmpfsHasNoFscrypt(t *testing.T) {
	k := kernel.New()
	tk := k.NewTask("tmpfs")
	defer tk.Exit()
	sys, p, err := memfs.Boot(tk, vfs.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Exit(tk)
	if cop := sys.RootMount().SB.Cop(); cop != nil {
		t.Errorf("tmpfs superblock has fscrypt operations %T", cop)
	}
	if err := p.Mkdir(tk, "/d", 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := p.EncryptDir(tk, "/d", key(1), 0, 0); err != errno.ENOTTY {
		t.Errorf("encrypting a tmpfs directory: %v, want ENOTTY", err)
	}
	dfd, err := p.Open(tk, "/d", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(tk, dfd)
	pol := fscrypt.Policy{Version: fscrypt.PolicyV2, ContentsMode: fscrypt.ModeAES256XTS, FilenamesMode: fscrypt.ModeAES256CTS}
	for _, c := range []struct {
		name string
		cmd  uint32
		arg  any
	}{
		{"FS_IOC_SET_ENCRYPTION_POLICY", vfs.FS_IOC_SET_ENCRYPTION_POLICY, pol.Marshal()},
		{"FS_IOC_GET_ENCRYPTION_POLICY_EX", vfs.FS_IOC_GET_ENCRYPTION_POLICY_EX, make([]byte, 8+24)},
		{"FS_IOC_ADD_ENCRYPTION_KEY", vfs.FS_IOC_ADD_ENCRYPTION_KEY, &fscrypt.AddKeyArg{KeySpec: fscrypt.KeySpecifier{Type: fscrypt.KeySpecTypeIdentifier}, RawSize: 64, Raw: key(2)}},
		{"FS_IOC_GET_ENCRYPTION_KEY_STATUS", vfs.FS_IOC_GET_ENCRYPTION_KEY_STATUS, &fscrypt.GetKeyStatusArg{}},
	} {
		if _, err := p.Ioctl(tk, dfd, c.cmd, c.arg); err != errno.ENOTTY {
			t.Errorf("%s on a tmpfs directory: %v, want ENOTTY", c.name, err)
		}
	}
	tk.Tracer = &kernel.Tracer{}
	fd, err := p.Open(tk, "/d/f", vfs.O_RDWR|vfs.O_CREAT, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	var nonce [fscrypt.FileNonceSize]byte
	if _, err := p.Ioctl(tk, fd, vfs.FS_IOC_GET_ENCRYPTION_NONCE, &nonce); err != errno.ENOTTY {
		t.Errorf("FS_IOC_GET_ENCRYPTION_NONCE on a tmpfs file: %v, want ENOTTY", err)
	}
	p.Close(tk, fd)
	var b strings.Builder
	tk.Tracer.Print(&b, false)
	tk.Tracer = nil
	if !strings.Contains(b.String(), "generic_file_open") || strings.Contains(b.String(), "fscrypt_file_open") {
		t.Errorf("tmpfs open: want generic_file_open and no fscrypt_file_open:\n%s", b.String())
	}
}
