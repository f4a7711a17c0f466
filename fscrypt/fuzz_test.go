package fscrypt_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/kernel"
)

// fuzzKey is the master key the fuzz targets add (v2 identifier fuzzID,
// and as a v1 key under its conventional descriptor).
var fuzzKey = bytes.Repeat([]byte{0x3c, 0xc3, 0x5a}, 22)[:64]

// FuzzParsePolicy feeds FS_IOC_SET_ENCRYPTION_POLICY's user buffer to
// ParsePolicy and to the ioctl on an empty directory of a filesystem that
// holds the key: nothing panics, only the ioctl's documented errnos come
// back, what ParsePolicy accepts marshals back to its bytes, and a policy
// the ioctl set reads back equal (FS_IOC_GET_ENCRYPTION_POLICY_EX).
func FuzzParsePolicy(f *testing.F) {
	k := kernel.New()
	task := k.NewTask("fuzz")
	sb := newSB(f)
	id, desc := addKey(f, task, sb, 2, fuzzKey)
	addKey(f, task, sb, 1, fuzzKey)
	v2 := v2Policy(id, 0)
	f.Add(v2.Marshal())
	v1 := fscrypt.Policy{Version: fscrypt.PolicyV1, ContentsMode: 1, FilenamesMode: 4, Descriptor: desc}
	f.Add(v1.Marshal())
	f.Add(append(v2.Marshal(), 0))
	f.Add([]byte{2, 9, 9, 0x10})
	f.Add([]byte{})
	allowed := map[error]bool{errno.EINVAL: true, errno.EFAULT: true, errno.ENOKEY: true, errno.EEXIST: true}
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, err := fscrypt.ParsePolicy(b); err == nil {
			if got := p.Marshal(); !bytes.Equal(got, b) {
				t.Fatalf("%x parses to %s, which marshals to %x", b, p.String(), got)
			}
		} else if err != errno.EINVAL {
			t.Fatalf("ParsePolicy: %v", err)
		}
		dir := sb.NewInode(0, fscrypt.SIFDIR|0o755)
		err := fscrypt.IoctlSetPolicy(task, kernel.RootCred, dir, b)
		if err != nil {
			if !allowed[err] {
				t.Fatalf("set policy %x: %v", b, err)
			}
			return
		}
		arg := make([]byte, 8+fscrypt.PolicyV2Size)
		binary.LittleEndian.PutUint64(arg, fscrypt.PolicyV2Size)
		if err := fscrypt.IoctlGetPolicyEx(task, dir, arg); err != nil {
			t.Fatalf("get policy after set %x: %v", b, err)
		}
		size := binary.LittleEndian.Uint64(arg)
		if !bytes.Equal(arg[8:8+size], b[:size]) {
			t.Fatalf("set %x, got %x back", b[:size], arg[8:8+size])
		}
		fscrypt.PutEncryptionInfo(task, dir)
	})
}

// symlinkInodes returns an encrypted symlink inode with its key and one
// whose key is absent.
func symlinkInodes(tb testing.TB, task *kernel.Task) (withKey, noKey *bare.Inode) {
	sb := newSB(tb)
	id, _ := addKey(tb, task, sb, 2, fuzzKey)
	p := v2Policy(id, 0)
	withKey = encryptedInode(tb, task, sb, p, bytes.Repeat([]byte{4}, 16), 0, fscrypt.SIFLNK|0o777, 12)
	other := newSB(tb)
	noKey = other.NewInode(0, fscrypt.SIFLNK|0o777)
	c := fscrypt.Context{Policy: p}
	copy(c.Nonce[:], bytes.Repeat([]byte{5}, 16))
	noKey.SetRawContext(c.Marshal())
	return withKey, noKey
}

// FuzzSymlinkTarget feeds on-disk symlink contents (struct
// fscrypt_symlink_data: a le16 length and the ciphertext) to
// fscrypt_get_symlink, with and without the key: nothing panics, a corrupt
// target is EUCLEAN, and without the key an accepted target is the no-key
// encoding of the stored ciphertext ("." and "..", which
// fscrypt_fname_disk_to_usr passes through, come back as they are).
func FuzzSymlinkTarget(f *testing.F) {
	k := kernel.New()
	task := k.NewTask("fuzz")
	withKey, noKey := symlinkInodes(f, task)
	target := []byte("/some/where/else")
	n, _, err := fscrypt.PrepareSymlink(task, withKey, target, 4096)
	if err != nil {
		f.Fatal(err)
	}
	sd, err := fscrypt.EncryptSymlink(task, withKey, target, n)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(bytes.Clone(sd))
	fscrypt.FreeSymlinkData(task, sd)
	f.Add([]byte{0, 0})
	f.Add([]byte{0xff, 0xff, 1, 2, 3})
	f.Add(append([]byte{16, 0}, bytes.Repeat([]byte{9}, 16)...))
	task.EnableCounting()
	base := task.Stats.Live()
	f.Fuzz(func(t *testing.T, caddr []byte) {
		for _, inode := range []*bare.Inode{withKey, noKey} {
			got, cacheable, err := fscrypt.GetSymlink(task, inode, caddr)
			if err != nil {
				if err != errno.EUCLEAN {
					t.Fatalf("key %v: %x: %v", inode == withKey, caddr, err)
				}
				continue
			}
			if len(got) == 0 || cacheable != (inode == withKey) {
				t.Fatalf("key %v: %x: target %q cacheable %v", inode == withKey, caddr, got, cacheable)
			}
			ct := caddr[2 : 2+int(binary.LittleEndian.Uint16(caddr))]
			if fscrypt.IsDotDotdot(ct) {
				// fscrypt_fname_disk_to_usr passes "." and ".." through,
				// decrypted or not: the kernel returns them as the target.
				if !bytes.Equal(got, ct) {
					t.Fatalf("stored %q came back as %q", ct, got)
				}
				continue
			}
			if inode == noKey {
				nk, err := fscrypt.DecodeNokeyName(got)
				if err != nil || (!nk.Digested && !bytes.Equal(nk.Bytes, ct)) {
					t.Fatalf("no-key target %q of %x does not decode to the ciphertext: %v", got, ct, err)
				}
			}
		}
		if live := task.Stats.Live(); live != base {
			t.Fatalf("%x: %d allocations leaked", caddr, live-base)
		}
	})
}

// FuzzNokeyMatch: a lookup by a no-key name in a directory without its
// key (fscrypt_setup_filename, then fscrypt_match_name against an
// on-disk name): nothing panics, a malformed name is ENOENT, and the
// no-key name of an on-disk name always matches that name.
func FuzzNokeyMatch(f *testing.F) {
	k := kernel.New()
	task := k.NewTask("fuzz")
	sb := newSB(f)
	dir := sb.NewInode(0, fscrypt.SIFDIR|0o755)
	c := fscrypt.Context{Policy: v2Policy([16]byte{1}, 0)}
	dir.SetRawContext(c.Marshal())
	f.Add(bytes.Repeat([]byte{1}, 16), []byte("AQAAAAIAAAAH"))
	f.Add(bytes.Repeat([]byte{2}, 200), []byte("_-AZaz09"))
	f.Add(bytes.Repeat([]byte{3}, 32), []byte{})
	f.Fuzz(func(t *testing.T, deName, name []byte) {
		var fname fscrypt.Name
		if err := fscrypt.SetupFilename(task, dir, name, true, &fname); err == nil {
			_ = fscrypt.MatchName(&fname, deName)
			fscrypt.FreeFilename(task, &fname)
		} else if err != errno.ENOENT && err != errno.ENAMETOOLONG {
			t.Fatalf("lookup %q: %v", name, err)
		}
		if len(deName) < 16 || len(deName) > 255 {
			return
		}
		enc := fscrypt.EncodeNokeyName(nil, 7, 9, deName)
		if err := fscrypt.SetupFilename(task, dir, enc, true, &fname); err != nil {
			t.Fatalf("the no-key name %q of %x: %v", enc, deName, err)
		}
		if !fscrypt.MatchName(&fname, deName) {
			t.Fatalf("the no-key name %q does not match its own entry %x", enc, deName)
		}
		if fname.Hash != 7 || fname.MinorHash != 9 {
			t.Fatalf("hash %d/%d, want 7/9", fname.Hash, fname.MinorHash)
		}
		fscrypt.FreeFilename(task, &fname)
	})
}
