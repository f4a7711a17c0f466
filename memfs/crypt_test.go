package memfs_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/memfs"
	"github.com/vfslab/vfslab/vfs"
)

func boot(tb testing.TB) (*vfs.System, *vfs.Proc, *kernel.Task) {
	tb.Helper()
	k := kernel.New()
	task := k.NewTask("test")
	tb.Cleanup(task.Exit)
	sys, p, err := memfs.Boot(task, vfs.Config{}, &memfs.Options{TestFscrypt: true})
	if err != nil {
		tb.Fatal(err)
	}
	return sys, p, task
}

func key(b byte) []byte { return bytes.Repeat([]byte{b}, 64) }

func names(tb testing.TB, p *vfs.Proc, t *kernel.Task, dir string) []string {
	tb.Helper()
	fd, err := p.Open(t, dir, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer p.Close(t, fd)
	buf := make([]byte, 8192)
	n, err := p.Getdents64(t, fd, buf)
	if err != nil {
		tb.Fatal(err)
	}
	ds, err := vfs.ParseDirents(buf[:n])
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, d := range ds {
		out = append(out, d.Name)
	}
	return out
}

func TestEncryptedDirRoundTrip(t *testing.T) {
	sys, p, task := boot(t)
	_ = sys
	if err := p.Mkdir(task, "/e", 0o755); err != nil {
		t.Fatal(err)
	}
	id, err := p.EncryptDir(task, "/e", key(1), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := p.Open(task, "/e/secret.txt", vfs.O_CREAT|vfs.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("attack at dawn "), 700) // > 2 blocks
	if n, err := p.Write(task, fd, data); err != nil || n != len(data) {
		t.Fatal(n, err)
	}
	got := make([]byte, len(data)+10)
	n, err := p.Pread(task, fd, got, 0)
	if err != nil || !bytes.Equal(got[:n], data) {
		t.Fatalf("read back %d bytes, err %v", n, err)
	}
	f, _ := p.File(fd)
	inode := f.Inode()
	vfs.PutFile(task, f)
	blocks := memfs.RawBlocks(inode)
	if len(blocks) != 3 || bytes.Contains(blocks[0], []byte("attack")) {
		t.Fatalf("stored blocks are not ciphertext")
	}
	p.Close(task, fd)
	if err := p.Mkdir(task, "/e/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := p.Symlink(task, "secret.txt", "/e/link"); err != nil {
		t.Fatal(err)
	}
	if got := names(t, p, task, "/e"); strings.Join(got, ",") != ".,..,secret.txt,sub,link" {
		t.Fatal(got)
	}
	d, err := p.LookupDentry(task, "/e", true)
	if err != nil {
		t.Fatal(err)
	}
	disk := memfs.DiskNames(d.Inode())
	for _, n := range disk {
		if n == "secret.txt" || len(n) != 32 {
			t.Fatalf("disk name %q is not a 32-byte ciphertext", n)
		}
	}
	st, err := p.Stat(task, "/e/link")
	if err != nil || st.Size != int64(len(data)) {
		t.Fatal(st, err)
	}
	// Remove the key: the files lock; names become no-key names.
	rfd, _ := p.Open(task, "/", vfs.O_RDONLY, 0)
	defer p.Close(task, rfd)
	vfsDput(task, d)
	status, err := p.RemoveEncryptionKey(task, rfd, id)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("removal status %#x", status)
	if s, _ := p.KeyStatus(task, rfd, id); s != fscrypt.KeyStatusAbsent {
		t.Fatalf("key status %d", s)
	}
	nk := names(t, p, task, "/e")
	if len(nk) != 5 || nk[2] == "secret.txt" {
		t.Fatal(nk)
	}
	if _, err := p.Open(task, "/e/secret.txt", vfs.O_RDONLY, 0); err != errno.ENOENT {
		t.Fatalf("open by plaintext name without key: %v", err)
	}
	if _, err := p.Open(task, "/e/"+nk[2], vfs.O_RDONLY, 0); err != errno.ENOKEY {
		t.Fatalf("open by no-key name without key: %v", err)
	}
	if _, err := p.Open(task, "/e/new", vfs.O_CREAT|vfs.O_RDWR, 0o600); err != errno.ENOKEY {
		t.Fatalf("create without key: %v", err)
	}
	if err := p.Rename(task, "/e/"+nk[2], "/e/"+nk[3], vfs.RENAME_EXCHANGE); err != errno.ENOKEY {
		t.Fatalf("rename of no-key names: %v", err)
	}
	lt := make([]byte, 300)
	if n, err := p.Readlink(task, "/e/"+nk[4], lt); err != nil || string(lt[:n]) == "secret.txt" {
		t.Fatalf("readlink without key: %q %v", lt[:n], err)
	}
	// Add it back: the plaintext names return, the no-key dentries go.
	if _, err := p.AddEncryptionKey(task, rfd, key(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stat(task, "/e/"+nk[2]); err != errno.ENOENT {
		t.Fatalf("stat by no-key name with the key: %v", err)
	}
	fd, err = p.Open(task, "/e/secret.txt", vfs.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	n, _ = p.Read(task, fd, got)
	if !bytes.Equal(got[:n], data) {
		t.Fatal("contents after re-adding the key")
	}
	p.Close(task, fd)
}

// TestFscryptIoctls dispatches every fscrypt ioctl through the syscall
// surface.
func TestFscryptIoctls(t *testing.T) {
	_, p, task := boot(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(p.Mkdir(task, "/e", 0o755))
	must(p.Mkdir(task, "/full", 0o755))
	fd, err := p.Open(task, "/full/f", vfs.O_CREAT|vfs.O_WRONLY, 0o644)
	must(err)
	p.Close(task, fd)
	dfd, err := p.Open(task, "/e", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	must(err)
	defer p.Close(task, dfd)
	id, err := p.AddEncryptionKey(task, dfd, key(3))
	must(err)
	if s, err := p.KeyStatus(task, dfd, id); err != nil || s != fscrypt.KeyStatusPresent {
		t.Fatalf("key status %d %v", s, err)
	}
	pol := fscrypt.Policy{Version: fscrypt.PolicyV2, ContentsMode: fscrypt.ModeAES256XTS,
		FilenamesMode: fscrypt.ModeAES256CTS, Flags: fscrypt.PolicyFlagsPad16, Identifier: id}
	if _, err := p.Ioctl(task, dfd, vfs.FS_IOC_GET_ENCRYPTION_POLICY_EX, make([]byte, 8+24)); err != errno.ENODATA {
		t.Fatalf("get policy of an unencrypted dir: %v", err)
	}
	must(p.SetEncryptionPolicy(task, dfd, pol))
	must(p.SetEncryptionPolicy(task, dfd, pol)) // the same again: fine
	other := pol
	other.Flags = fscrypt.PolicyFlagsPad32
	if err := p.SetEncryptionPolicy(task, dfd, other); err != errno.EEXIST {
		t.Fatalf("another policy: %v", err)
	}
	ffd, err := p.Open(task, "/full", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	must(err)
	defer p.Close(task, ffd)
	if err := p.SetEncryptionPolicy(task, ffd, pol); err != errno.ENOTEMPTY {
		t.Fatalf("non-empty dir: %v", err)
	}
	arg := make([]byte, 8+24)
	arg[0] = 24
	if _, err := p.Ioctl(task, dfd, vfs.FS_IOC_GET_ENCRYPTION_POLICY_EX, arg); err != nil {
		t.Fatal(err)
	}
	if got, err := fscrypt.ParsePolicy(arg[8:]); err != nil || !got.Equal(&pol) {
		t.Fatalf("get policy ex: %v %v", got.String(), err)
	}
	if _, err := p.Ioctl(task, dfd, vfs.FS_IOC_GET_ENCRYPTION_POLICY, make([]byte, 12)); err != errno.EINVAL {
		t.Fatalf("v1 get of a v2 policy: %v", err)
	}
	var nonce [16]byte
	if _, err := p.Ioctl(task, dfd, vfs.FS_IOC_GET_ENCRYPTION_NONCE, &nonce); err != nil {
		t.Fatal(err)
	}
	d, _ := p.LookupDentry(task, "/e", false)
	ctx, err := fscrypt.ParseContext(memfs.Context(d.Inode()))
	vfsDput(task, d)
	if err != nil || ctx.Nonce != nonce {
		t.Fatalf("nonce %x, context %v %v", nonce, ctx.String(), err)
	}
	if _, err := p.Ioctl(task, dfd, vfs.FS_IOC_GET_ENCRYPTION_NONCE, nonce[:]); err != errno.EFAULT {
		t.Fatalf("wrong argument type: %v", err)
	}
	if _, err := p.Ioctl(task, dfd, 0x1234, nil); err != errno.ENOTTY {
		t.Fatalf("unknown ioctl: %v", err)
	}
	// A file kept open keeps the key in use: removing it is incomplete.
	busy, err := p.Open(task, "/e/f", vfs.O_CREAT|vfs.O_RDWR, 0o600)
	must(err)
	status, err := p.RemoveEncryptionKey(task, dfd, id)
	if err != nil || status != fscrypt.KeyRemovalStatusFlagFilesBusy {
		t.Fatalf("removal with /e/f open: status %#x, %v", status, err)
	}
	if s, _ := p.KeyStatus(task, dfd, id); s != fscrypt.KeyStatusIncompletelyRemoved {
		t.Fatalf("key status with /e/f open: %d", s)
	}
	if _, err := p.Write(task, busy, []byte("still writable")); err != nil {
		t.Fatalf("write to the busy file: %v", err)
	}
	p.Close(task, busy)
	// Removing again retries the eviction, as fscryptctl documents; /e
	// itself is still open (dfd) and keeps the key busy.
	if status, err := p.RemoveEncryptionKey(task, dfd, id); err != nil || status != fscrypt.KeyRemovalStatusFlagFilesBusy {
		t.Fatalf("second removal: status %#x, %v", status, err)
	}
}
