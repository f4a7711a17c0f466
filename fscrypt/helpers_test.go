package fscrypt_test

import (
	"testing"

	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/fscrypt/fstest"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/patch"
)

// newTask returns a counting task on a fresh machine running every patch's
// base variant.
func newTask(tb testing.TB) *kernel.Task {
	tb.Helper()
	return newTaskWith(tb, patch.Set{})
}

// newTaskWith returns a counting task on a fresh machine running set.
func newTaskWith(tb testing.TB, set patch.Set) *kernel.Task {
	tb.Helper()
	k := kernel.NewWith(kernel.Config{Patches: set})
	t := k.NewTask("fscrypt-test")
	t.EnableCounting()
	tb.Cleanup(t.Exit)
	return t
}

// variantTasks returns, for each variant of p, a counting task on a fresh
// machine that runs it (and the base of every other patch).
func variantTasks(tb testing.TB, p *patch.Patch) map[string]*kernel.Task {
	tb.Helper()
	ts := map[string]*kernel.Task{}
	for _, v := range p.VariantNames() {
		ts[v] = newTaskWith(tb, patch.Set{}.MustWith(p, v))
	}
	return ts
}

func mustMode(tb testing.TB, name string) *fscrypt.Mode {
	tb.Helper()
	m, err := fscrypt.ParseMode(name)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// newSB returns an empty test superblock.
func newSB(tb testing.TB) *bare.SB {
	tb.Helper()
	return bare.NewSB(newAPI())
}

// caseFS builds a superblock for a known-answer case: the case's UUID, its
// master key added (as root), and the policy naming it. The variants are
// those of t's kernel.
func caseFS(tb testing.TB, t *kernel.Task, c *fstest.Case) (*bare.SB, fscrypt.Policy) {
	tb.Helper()
	sb := bare.NewSB(newAPI())
	copy(sb.FSUUID[:], c.UUID)
	p := fscrypt.Policy{
		ContentsMode:  uint8(mustMode(tb, c.Contents).Num),
		FilenamesMode: uint8(mustMode(tb, c.Filenames).Num),
		Flags:         c.Flags,
	}
	p.Version = fscrypt.PolicyV1
	if c.Version == 2 {
		p.Version = fscrypt.PolicyV2
	}
	p.Identifier, p.Descriptor = addKey(tb, t, sb, c.Version, c.Key)
	return sb, p
}

// addKey adds key to sb as root, by identifier (v2) or by its conventional
// descriptor (v1), and returns both names.
func addKey(tb testing.TB, t *kernel.Task, sb fscrypt.SuperBlock, version int, key []byte) (id [16]byte, desc [8]byte) {
	tb.Helper()
	id, desc, err := bare.AddKey(t, sb, version, key)
	if err != nil {
		tb.Fatalf("add key: %v", err)
	}
	return id, desc
}

// encryptedInode makes an inode whose stored context is (p, nonce) and sets
// up its key.
func encryptedInode(tb testing.TB, t *kernel.Task, sb *bare.SB, p fscrypt.Policy, nonce []byte, ino uint64, mode uint32, blockBits uint8) *bare.Inode {
	tb.Helper()
	i, err := sb.NewEncryptedInode(t, p, nonce, ino, mode, blockBits)
	if err != nil {
		tb.Fatalf("no key set up: %v", err)
	}
	return i
}
