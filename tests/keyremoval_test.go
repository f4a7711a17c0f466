package tests

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/vfs"
)

// tryRemoveKey is FS_IOC_REMOVE_ENCRYPTION_KEY on the file system of
// path, returning the removal status flags.
func (s *system) tryRemoveKey(tb testing.TB, path string) (uint32, error) {
	tb.Helper()
	fd, err := s.p.Open(s.t, path, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer s.p.Close(s.t, fd)
	arg := fscrypt.RemoveKeyArg{KeySpec: fscrypt.IdentifierSpec(s.keyID)}
	_, err = s.p.Ioctl(s.t, fd, vfs.FS_IOC_REMOVE_ENCRYPTION_KEY, &arg)
	return arg.RemovalStatusFlags, err
}

// cachedNames returns the names of the positive dentries cached under
// path; none when path itself is not cached.
func (s *system) cachedNames(tb testing.TB, path string) []string {
	tb.Helper()
	var held []*vfs.Dentry
	defer func() {
		for _, c := range held {
			dcache.Dput(s.t, c)
		}
	}()
	d := s.sys.RootMount().Root
	for _, c := range strings.Split(strings.Trim(path, "/"), "/") {
		var next *vfs.Dentry
		cs := dcache.Children(s.t, d)
		held = append(held, cs...)
		for _, ch := range cs {
			if ch.Name().Name == c {
				next = ch
			}
		}
		if next == nil {
			return nil
		}
		d = next
	}
	var out []string
	cs := dcache.Children(s.t, d)
	held = append(held, cs...)
	for _, ch := range cs {
		out = append(out, ch.Name().Name)
	}
	return out
}

// TestKeyRemovalThroughSyscalls: on ext4 and f2fs, removing the key of
// /d while a file there is open is incomplete (FILES_BUSY): the open
// file's name and data stay usable, the other plaintext names leave the
// dcache and the listing shows no-key names. After the close a second
// removal completes: no plaintext name is cached or listed, the file
// reads ENOKEY, and the key is absent.
func TestKeyRemovalThroughSyscalls(t *testing.T) {
	for _, cfg := range []config{{fs: kExt4, encrypt: true}, {fs: kF2fs, encrypt: true}, {fs: kF2fs, casefold: true, encrypt: true}} {
		s := mustBoot(t, cfg)
		secret := []byte("attack at dawn")
		names := []string{"plain-alpha", "plain-beta", "plain-busy"}
		for _, n := range names {
			if err := s.creat(testDir+"/"+n, secret); err != nil {
				t.Fatal(err)
			}
		}
		busy, err := s.p.Open(s.t, testDir+"/plain-busy", vfs.O_RDONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		flags, err := s.tryRemoveKey(t, "/")
		if err != nil || flags != fscrypt.KeyRemovalStatusFlagFilesBusy {
			t.Fatalf("%s: first removal: %v flags %#x, want FILES_BUSY", cfg, err, flags)
		}
		if !s.k.Log.Contains("still busy after removing key") {
			t.Errorf("%s: no 'still busy' log line", cfg)
		}
		buf := make([]byte, 64)
		if n, err := s.p.Pread(s.t, busy, buf, 0); err != nil || !bytes.Equal(buf[:n], secret) {
			t.Errorf("%s: the busy file after incomplete removal: %q %v", cfg, buf[:n], err)
		}
		cached := s.cachedNames(t, testDir)
		for _, c := range cached {
			if c != "plain-busy" && strings.HasPrefix(c, "plain-") {
				t.Errorf("%s: plaintext dentry %q survives incomplete removal", cfg, c)
			}
		}
		if len(cached) != 1 || cached[0] != "plain-busy" {
			t.Errorf("%s: cached after incomplete removal: %q, want the open file's dentry only", cfg, cached)
		}
		s.p.Close(s.t, busy)
		if flags, err := s.tryRemoveKey(t, "/"); err != nil || flags != 0 {
			t.Fatalf("%s: removal after close: %v flags %#x, want complete", cfg, err, flags)
		}
		for _, c := range s.cachedNames(t, testDir) {
			if strings.HasPrefix(c, "plain-") {
				t.Errorf("%s: plaintext dentry %q survives removal", cfg, c)
			}
		}
		ds, err := s.listDir(testDir)
		if err != nil || len(ds) != len(names) {
			t.Fatalf("%s: listing after removal: %v %v", cfg, ds, err)
		}
		for _, d := range ds {
			if strings.HasPrefix(d.Name, "plain-") {
				t.Errorf("%s: plaintext name %q listed after removal", cfg, d.Name)
			}
			if _, err := s.readFile(testDir + "/" + d.Name); err != errno.ENOKEY {
				t.Errorf("%s: reading %q without the key: %v, want ENOKEY", cfg, d.Name, err)
			}
		}
		if _, err := s.p.Stat(s.t, testDir+"/plain-alpha"); err != errno.ENOENT {
			t.Errorf("%s: stat of a plaintext name after removal: %v, want ENOENT", cfg, err)
		}
		if _, err := s.tryRemoveKey(t, "/"); err != errno.ENOKEY {
			t.Errorf("%s: third removal: %v, want ENOKEY", cfg, err)
		}
	}
}
