package f2fs

import (
	"testing"

	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/internal/fstestutil"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/vfs"
)

// The directory code's tests fold names with the shared Unicode double (it
// folds ASCII, and ß): asciiFold is installed as the superblock's
// encoding of a casefolded test directory.
type asciiFold = fstestutil.AsciiFold

const rootIno = 3

// dirOpts describe a test directory: its flags, and the superblock's
// options the directory code reads.
type dirOpts struct {
	casefold, encrypt, noInline bool
	dirLevel                    uint32
	variant                     string
	mode                        LookupMode
	flags                       uint16
	// ino is the directory's inode number (default 10).
	ino uint32
	// geo, when set, is the inline geometry of the superblock.
	geo *InlineGeometry
	// pad is the filename padding of an encrypted directory's policy
	// (fscrypt.PolicyFlagsPad*; default 16 bytes).
	pad uint8
}

// testKey is the master key of the test directories' policies.
var testKey = func() []byte {
	key := make([]byte, 64)
	for i := range key {
		key[i] = byte(i + 1)
	}
	return key
}()

// testNonce is the nonce of every encrypted test directory.
const testNonce = "0123456789abcdef"

// newTestTask is a task of a fresh kernel that counts events, ended with
// the test; the kernel runs the given f2fs-lookup-prealloc variant ("":
// the default).
func newTestTask(tb testing.TB, variant string) *kernel.Task {
	var set patch.Set
	if variant != "" {
		set = set.MustWith(LookupPreallocPatch, variant)
	}
	tk := kernel.NewWith(kernel.Config{Patches: set}).NewTask("test")
	tk.EnableCounting()
	tb.Cleanup(tk.Exit)
	return tk
}

// newTestSB boots a machine whose root is a fresh f2fs (the default
// options, lookup_mode o.mode) and sets what the directory code reads from
// its superblock: the encoding (asciiFold for a casefolded directory), the
// encoding flags and the inline geometry. The patch variants are those of
// tk's kernel.
func newTestSB(tb testing.TB, tk *kernel.Task, o dirOpts) *SuperBlock {
	tb.Helper()
	sys, _, err := Boot(tk, vfs.Config{}, &Options{LookupMode: o.mode})
	if err != nil {
		tb.Fatal(err)
	}
	sbi := F2FS_SB(sys.RootMount().SB)
	sbi.EncodingFlags = o.flags
	if o.casefold {
		sbi.Encoding = asciiFold{}
	}
	if o.geo != nil {
		sbi.Inline = *o.geo
	}
	return sbi
}

// newDirInode makes a directory inode of sbi through allocInode, as
// f2fs_new_inode does, without a name in any directory and without "."
// and "..": inline dentries unless o.noInline, i_dir_level o.dirLevel,
// casefolded (F2FS_CASEFOLD_FL) when o.casefold.
func newDirInode(tb testing.TB, tk *kernel.Task, sbi *SuperBlock, o dirOpts) *Inode {
	tb.Helper()
	ino := o.ino
	if ino == 0 {
		ino = 10
	}
	dir, err := sbi.allocInode(tk, ino, SIfdir|0o755)
	if err != nil {
		tb.Fatal(err)
	}
	dir.Inline = !o.noInline
	dir.DirLevel = o.dirLevel
	if o.casefold {
		dir.IFlags |= CasefoldFL
		dir.setInodeFlags()
	}
	return dir
}

// testPolicy is the v2 policy of the encrypted test directories
// (AES-256-XTS / AES-256-CTS) with padding flags pad.
func testPolicy(id [16]byte, pad uint8) fscrypt.Policy {
	return fscrypt.Policy{Version: fscrypt.PolicyV2, ContentsMode: fscrypt.ModeAES256XTS,
		FilenamesMode: fscrypt.ModeAES256CTS, Flags: pad, Identifier: id}
}

// encryptDir adds the test key to the filesystem's keyring and gives the
// empty directory the test policy (padding pad) with the test nonce, as
// fscrypt_set_context would store it, then sets up its key.
func encryptDir(tb testing.TB, tk *kernel.Task, dir *Inode, pad uint8) {
	tb.Helper()
	id, _, err := bare.AddKey(tk, dir.SB.vsb, 2, testKey)
	if err != nil {
		tb.Fatal(err)
	}
	ctx := fscrypt.Context{Policy: testPolicy(id, pad)}
	copy(ctx.Nonce[:], testNonce)
	if err := dir.SB.SetContext(tk, &dir.Inode, ctx.Marshal(), nil); err != nil {
		tb.Fatal(err)
	}
	if err := fscrypt.GetEncryptionInfo(tk, &dir.Inode, false); err != nil {
		tb.Fatal(err)
	}
	if !fscrypt.HasEncryptionKey(&dir.Inode) {
		tb.Fatal("no key set up")
	}
}

// newTestDir returns a task and an empty directory (inode o.ino, default
// 10, under the root inode 3) of a fresh f2fs, made as described by o;
// an encrypted one has the test policy and its key.
func newTestDir(tb testing.TB, o dirOpts) (*kernel.Task, *Inode) {
	tb.Helper()
	tk := newTestTask(tb, o.variant)
	dir := newDirInode(tb, tk, newTestSB(tb, tk, o), o)
	if o.encrypt {
		pad := o.pad
		if pad == 0 {
			pad = fscrypt.PolicyFlagsPad16
		}
		encryptDir(tb, tk, dir, pad)
	}
	if err := MakeEmptyDir(tk, dir, rootIno, SIfdir|0o755); err != nil {
		tb.Fatal(err)
	}
	return tk, dir
}

// keylessCopy is dir as a filesystem without its master key sees it: a
// directory of another fresh f2fs (same superblock settings) with the
// same inode number, flags, encryption context, depth, inline area and
// dentry blocks, whose key is absent from that filesystem's keyring.
func keylessCopy(tb testing.TB, tk *kernel.Task, dir *Inode) *Inode {
	tb.Helper()
	o := dirOpts{ino: dir.nid(), noInline: !dir.Inline, dirLevel: dir.DirLevel, mode: dir.SB.LookupMode, flags: dir.SB.EncodingFlags, geo: &dir.Geo}
	sbi := newTestSB(tb, tk, o)
	sbi.Encoding = dir.SB.Encoding
	c := newDirInode(tb, tk, sbi, o)
	c.IFlags = dir.IFlags
	c.setInodeFlags()
	if ctx := Context(&dir.Inode); ctx != nil {
		if err := sbi.SetContext(tk, &c.Inode, ctx, nil); err != nil {
			tb.Fatal(err)
		}
	}
	c.CurrentDepth = dir.CurrentDepth
	copy(c.Node, dir.Node)
	for _, p := range dir.Pages() {
		c.SetBlock(p, dir.BlockAt(p))
	}
	c.SetSize(dir.Size())
	return c
}

// setNameLen corrupts the name_len of name's dentry in a dentry block and
// returns where the dentry is.
func setNameLen(tb testing.TB, tk *kernel.Task, dir *Inode, name string, nameLen uint16) *DentryRef {
	tb.Helper()
	r, err := find(tk, dir, name)
	if err != nil || r == nil || r.Inline {
		tb.Fatalf("%q: %v %v", name, r, err)
	}
	d := MakeDentryPtrBlock(dir.findDataBlock(r.Page))
	e := d.Entry(r.BitPos)
	e.NameLen = nameLen
	d.putEntry(r.BitPos, e)
	return r
}
