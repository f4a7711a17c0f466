package hooks_test

import (
	"bytes"
	"testing"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/memfs"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/vfs"
)

var variants = hooks.FileOpenPatch.VariantNames()

// env is a machine with a memfs root and one process.
type env struct {
	tb  testing.TB
	k   *kernel.Kernel
	t   *kernel.Task
	sys *vfs.System
	p   *vfs.Proc
}

func newEnv(tb testing.TB, variant string, opts *memfs.Options) *env {
	tb.Helper()
	k := kernel.NewWith(kernel.Config{Patches: patch.Set{}.MustWith(hooks.FileOpenPatch, variant)})
	t := k.NewTask("hooks-test")
	t.EnableCounting()
	tb.Cleanup(t.Exit)
	// memfs's test double of ext4's fscrypt support (tmpfs has none).
	o := memfs.Options{TestFscrypt: true}
	if opts != nil {
		o = *opts
		o.TestFscrypt = true
	}
	sys, p, err := memfs.Boot(t, vfs.Config{}, &o)
	if err != nil {
		tb.Fatal(err)
	}
	return &env{tb: tb, k: k, t: t, sys: sys, p: p}
}

func key(b byte) []byte { return bytes.Repeat([]byte{b}, 64) }

func (e *env) must(err error) {
	e.tb.Helper()
	if err != nil {
		e.tb.Fatal(err)
	}
}

func (e *env) mkdir(path string) { e.tb.Helper(); e.must(e.p.Mkdir(e.t, path, 0o755)) }

// encrypt makes path an encrypted directory with a v2 key made of b.
func (e *env) encrypt(path string, b byte) [16]byte {
	e.tb.Helper()
	id, err := e.p.EncryptDir(e.t, path, key(b), 0, 0)
	e.must(err)
	return id
}

func (e *env) create(path, data string) {
	e.tb.Helper()
	fd, err := e.p.Open(e.t, path, vfs.O_CREAT|vfs.O_WRONLY|vfs.O_EXCL, 0o644)
	e.must(err)
	if _, err := e.p.Write(e.t, fd, []byte(data)); err != nil {
		e.tb.Fatal(err)
	}
	e.must(e.p.Close(e.t, fd))
}

// inode returns the inode at path (without keeping a reference: memfs
// keeps linked inodes).
func (e *env) inode(path string) *vfs.Inode {
	e.tb.Helper()
	d, err := e.p.LookupDentry(e.t, path, false)
	e.must(err)
	defer dcache.Dput(e.t, d)
	return d.Inode()
}

// removeKey removes the key id; all files it unlocked must be idle.
func (e *env) removeKey(id [16]byte) {
	e.tb.Helper()
	fd, err := e.p.Open(e.t, "/", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	e.must(err)
	defer e.p.Close(e.t, fd)
	status, err := e.p.RemoveEncryptionKey(e.t, fd, id)
	e.must(err)
	if status != 0 {
		e.tb.Fatalf("key removal status %#x: files still busy", status)
	}
}

func (e *env) addKey(b byte) {
	e.tb.Helper()
	fd, err := e.p.Open(e.t, "/", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	e.must(err)
	defer e.p.Close(e.t, fd)
	_, err = e.p.AddEncryptionKey(e.t, fd, key(b))
	e.must(err)
}

// openClose opens path read-only and closes it, returning open's error.
func (e *env) openClose(path string) error {
	fd, err := e.p.Open(e.t, path, vfs.O_RDONLY, 0)
	if err == nil {
		e.must(e.p.Close(e.t, fd))
	}
	return err
}

// contextFor returns a context of policy p with a fixed nonce.
func contextFor(p fscrypt.Policy, nonce byte) []byte {
	c := fscrypt.Context{Policy: p}
	for i := range c.Nonce {
		c.Nonce[i] = nonce
	}
	return c.Marshal()
}

// policyOf returns the policy of an encrypted inode.
func (e *env) policyOf(path string) fscrypt.Policy {
	e.tb.Helper()
	p, err := fscrypt.GetPolicy(e.t, e.inode(path))
	e.must(err)
	return p
}

func errString(err error) string {
	if err == nil {
		return "0"
	}
	if en, ok := errno.Of(err); ok {
		return errno.Name(en)
	}
	return err.Error()
}
