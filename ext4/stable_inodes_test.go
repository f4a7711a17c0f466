package ext4_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/internal/fstestutil"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// setLblkPolicy adds a v2 key on the root and sets a policy with flags on
// the new directory path; it returns the ioctl's error.
func setLblkPolicy(e *fstestutil.Env, path string, flags uint8) error {
	e.Must(e.P.Mkdir(e.T, path, 0o755))
	root, err := e.P.Open(e.T, "/", vfs.O_RDONLY, 0)
	e.Must(err)
	defer e.P.Close(e.T, root)
	id, err := e.P.AddEncryptionKey(e.T, root, bytes.Repeat([]byte{7}, 64))
	e.Must(err)
	fd, err := e.P.Open(e.T, path, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	e.Must(err)
	defer e.P.Close(e.T, fd)
	return e.P.SetEncryptionPolicy(e.T, fd, fscrypt.Policy{Version: fscrypt.PolicyV2, ContentsMode: fscrypt.ModeAES256XTS,
		FilenamesMode: fscrypt.ModeAES256CTS, Flags: flags, Identifier: id})
}

// TestStableInodesFeature: IV_INO_LBLK_64 and IV_INO_LBLK_32 policies put
// inode numbers in the IVs, so fscrypt allows them only where
// ->has_stable_inodes says the numbers never change; ext4_has_stable_inodes
// (fs/ext4/crypto.c) is the stable_inodes feature. Without it the policy is
// EINVAL with supported_iv_ino_lblk_policy's warning; mke2fs -O
// stable_inodes sets EXT4_FEATURE_COMPAT_STABLE_INODES, on an image too.
func TestStableInodesFeature(t *testing.T) {
	for _, flags := range []uint8{fscrypt.PolicyFlagIVInoLblk64, fscrypt.PolicyFlagIVInoLblk32} {
		e := boot(t, &ext4.Options{})
		if err := setLblkPolicy(e.Env, "/d", flags); err != errno.EINVAL {
			t.Errorf("flags %#x without stable_inodes: %v, want EINVAL", flags, err)
		}
		if !e.T.K.Log.Contains("because it doesn't have stable inode numbers") {
			t.Errorf("flags %#x: no warning in the log:\n%s", flags, strings.Join(e.T.K.Log.Lines(), "\n"))
		}
		e = boot(t, &ext4.Options{StableInodes: true})
		if err := setLblkPolicy(e.Env, "/d", flags); err != nil {
			t.Errorf("flags %#x with stable_inodes: %v", flags, err)
		}
		e.Write("/d/f", "data")
		if got, err := e.Read("/d/f"); err != nil || got != "data" {
			t.Errorf("flags %#x: read back %q, %v", flags, got, err)
		}
	}

	o, err := ext4.ParseMkfsArgs([]string{"-O", "encrypt,stable_inodes"})
	if err != nil || !o.StableInodes || strings.Join(o.MkfsArgs(), " ") != "-O encrypt,stable_inodes" {
		t.Errorf("-O encrypt,stable_inodes: %+v %v, args %q", o, err, o.MkfsArgs())
	}
	for _, args := range [][]string{{"-O", "encrypt,stable_inodes"}, {"-O", "encrypt"}} {
		dev := vfs.NewBlockDeviceSize(16 << 20 / vfs.PageSize)
		tk := kernel.New().NewTask("mkfs")
		if err := ext4.Type.Mkfs(tk, dev, args); err != nil {
			t.Fatal(err)
		}
		tk.Exit()
		var raw ext4.RawSuper
		if _, err := dev.ReadAt(raw[:], 1024); err != nil {
			t.Fatal(err)
		}
		stable := strings.Contains(args[1], "stable_inodes")
		if got := raw.Compat()&ext4.CompatStableInodes != 0; got != stable {
			t.Errorf("%v: COMPAT_STABLE_INODES %t", args, got)
		}
		e := mustBootImage(t, dev, "")
		err = setLblkPolicy(e.Env, "/d", fscrypt.PolicyFlagIVInoLblk64)
		if stable && err != nil || !stable && err != errno.EINVAL {
			t.Errorf("%v image: IV_INO_LBLK_64 policy: %v", args, err)
		}
	}
}
