package ext4

import (
	"testing"

	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// testSB boots a machine on tk's kernel whose root is a fresh ext4 with the
// defaults and returns its superblock: the tests of the directory code set
// its parameters (features, hash, seeds, encoding) and then make their
// directory with NewDirInode, through the real allocInode.
func testSB(tb testing.TB, tk *kernel.Task) *SuperBlock {
	tb.Helper()
	sys, _, err := Boot(tk, vfs.Config{}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return EXT4_SB(sys.RootMount().SB)
}

// testDirInode makes directory inode ino (generation gen) on sb, casefolded
// when casefold is set (EXT4_CASEFOLD_FL, S_CASEFOLD); InitNewDir or
// SetBlocks fills it.
func testDirInode(tb testing.TB, tk *kernel.Task, sb *SuperBlock, ino, gen uint32, casefold bool) *Inode {
	tb.Helper()
	dir, err := sb.NewDirInode(tk, ino, gen, 0o755)
	if err != nil {
		tb.Fatal(err)
	}
	if casefold {
		dir.Flags |= CasefoldFL
		dir.SetInodeFlags()
	}
	return dir
}

// testKey is the master key of the tests' encrypted directories.
var testKey = func() []byte {
	key := make([]byte, 64)
	for i := range key {
		key[i] = byte(i + 1)
	}
	return key
}()

// encryptDir gives an empty directory a v2 policy (AES-256-XTS /
// AES-256-CTS, 16-byte padding) under testKey, which it adds to the
// superblock's keyring (FS_IOC_ADD_ENCRYPTION_KEY), and sets its key up:
// ext4_set_context stores the context, fscrypt_get_encryption_info derives
// the name key (and the dirhash key of a casefolded directory).
func encryptDir(tb testing.TB, tk *kernel.Task, dir *Inode) {
	tb.Helper()
	id, _, err := bare.AddKey(tk, dir.SB.VFS(), 2, testKey)
	if err != nil {
		tb.Fatal(err)
	}
	p := fscrypt.Policy{Version: fscrypt.PolicyV2, ContentsMode: fscrypt.ModeAES256XTS, FilenamesMode: fscrypt.ModeAES256CTS, Flags: fscrypt.PolicyFlagsPad16, Identifier: id}
	ctx := fscrypt.Context{Policy: p}
	copy(ctx.Nonce[:], "fedcba9876543210")
	if err := dir.SB.SetContext(tk, &dir.Inode, ctx.Marshal(), nil); err != nil {
		tb.Fatal(err)
	}
	if err := fscrypt.GetEncryptionInfo(tk, &dir.Inode, false); err != nil {
		tb.Fatal(err)
	}
	if !dir.hasKey() {
		tb.Fatal("encryptDir: no key set up")
	}
}

// forgetKey leaves an encrypted directory without its key, as after
// FS_IOC_REMOVE_ENCRYPTION_KEY and a fresh ext4_iget: its fscrypt info is
// put and the master key removed from the keyring.
func forgetKey(tb testing.TB, tk *kernel.Task, dir *Inode) {
	tb.Helper()
	id, _ := fscrypt.GetPolicy(tk, &dir.Inode)
	fscrypt.PutEncryptionInfo(tk, &dir.Inode)
	arg := &fscrypt.RemoveKeyArg{KeySpec: fscrypt.IdentifierSpec(id.Identifier)}
	if err := fscrypt.IoctlRemoveKey(tk, kernel.RootCred, dir.SB.VFS(), arg); err != nil {
		tb.Fatal(err)
	}
	if err := fscrypt.GetEncryptionInfo(tk, &dir.Inode, true); err != nil {
		tb.Fatal(err)
	}
	if dir.hasKey() {
		tb.Fatal("forgetKey: the key is still set up")
	}
}
