package fscrypt_test

import (
	"bytes"
	"sync"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
)

// TestPrepareNewInode follows fscrypt_prepare_new_inode and
// fscrypt_set_context.
func TestPrepareNewInode(t *testing.T) {
	task := newTask(t)
	sb := newSB(t)
	key := bare.PlaintextStream("new inode", 64)
	id, _ := addKey(t, task, sb, 2, key)

	plain := sb.NewInode(0, fscrypt.SIFDIR|0o755)
	child := sb.NewInode(0, fscrypt.SIFREG|0o644)
	if enc, err := fscrypt.PrepareNewInode(task, plain, child); enc || err != nil {
		t.Errorf("in an unencrypted dir: %t %v", enc, err)
	}

	p := v2Policy(id, 0)
	p.Flags = fscrypt.PolicyFlagIVInoLblk32
	dir := encryptedInode(t, task, sb, p, bytes.Repeat([]byte{1}, 16), 0, fscrypt.SIFDIR|0o755, 12)
	dir.Casefold = true
	fifo := sb.NewInode(0, 0o010644)
	if enc, err := fscrypt.PrepareNewInode(task, dir, fifo); enc || err != nil || fscrypt.HasEncryptionKey(fifo) {
		t.Errorf("fifo: %t %v", enc, err)
	}
	// A new file gets a fresh nonce and the directory's policy; its inode
	// number is assigned after fscrypt_prepare_new_inode, so its hashed
	// inode number is computed at fscrypt_set_context.
	f1 := sb.NewInode(0, fscrypt.SIFREG|0o644)
	f1.SetIno(0)
	if enc, err := fscrypt.PrepareNewInode(task, dir, f1); !enc || err != nil {
		t.Fatalf("new file: %t %v", enc, err)
	}
	if h, _ := fscrypt.HashedIno(f1); h != 0 {
		t.Errorf("hashed inode number before the inode has one: %#x", h)
	}
	f1.SetIno(4242)
	if err := fscrypt.SetContext(task, f1, nil); err != nil {
		t.Fatal(err)
	}
	h1, _ := fscrypt.HashedIno(f1)
	// The same number through a fresh inode loaded from the context.
	again := sb.NewInode(4242, fscrypt.SIFREG|0o644)
	again.SetRawContext(f1.RawContext())
	if err := fscrypt.GetEncryptionInfo(task, again, false); err != nil {
		t.Fatal(err)
	}
	if h2, _ := fscrypt.HashedIno(again); h1 == 0 || h1 != h2 {
		t.Errorf("hashed ino %#x at set_context, %#x at load", h1, h2)
	}
	ctx, err := fscrypt.ParseContext(f1.RawContext())
	if err != nil || !ctx.Policy.Equal(&p) || ctx.Nonce == ([16]byte{}) {
		t.Errorf("stored context %s, %v", ctx.String(), err)
	}
	f2 := sb.NewInode(0, fscrypt.SIFREG|0o644)
	fscrypt.PrepareNewInode(task, dir, f2)
	if f2.CryptInfo().Nonce() == f1.CryptInfo().Nonce() {
		t.Error("two new inodes got the same nonce")
	}
	// A subdirectory of a casefolded directory gets a dirhash key.
	sub := sb.NewInode(0, fscrypt.SIFDIR|0o755)
	if _, err := fscrypt.PrepareNewInode(task, dir, sub); err != nil {
		t.Fatal(err)
	}
	if _, ok := fscrypt.DirhashKey(sub); !ok {
		t.Error("no dirhash key for a directory created in a casefolded one")
	}
	if !fscrypt.HasPermittedContext(task, dir, f1) {
		t.Error("child not permitted")
	}

	// Without the directory's key: ENOKEY.
	locked := sb.NewInode(0, fscrypt.SIFDIR|0o755)
	c := fscrypt.Context{Policy: v2Policy([16]byte{9}, 0)}
	locked.SetRawContext(c.Marshal())
	if _, err := fscrypt.PrepareNewInode(task, locked, sb.NewInode(0, fscrypt.SIFREG|0o644)); err != errno.ENOKEY {
		t.Errorf("in a locked dir: %v, want ENOKEY", err)
	}
	var fname fscrypt.Name
	if err := fscrypt.SetupFilename(task, locked, []byte("x"), false, &fname); err != errno.ENOKEY {
		t.Errorf("create name in a locked dir: %v", err)
	}
	if _, _, err := fscrypt.PrepareSymlink(task, locked, []byte("t"), 100); err != errno.ENOKEY {
		t.Errorf("symlink in a locked dir: %v", err)
	}
	// A no-key dentry in the locked directory stays valid until the key
	// is added; plaintext names are always valid.
	if ok, err := fscrypt.DRevalidate(task, locked, true); !ok || err != nil {
		t.Errorf("no-key dentry without the key: %t %v", ok, err)
	}
	if ok, _ := fscrypt.DRevalidate(task, dir, true); ok {
		t.Error("no-key dentry in a directory whose key is set up is valid")
	}
	if ok, _ := fscrypt.DRevalidate(task, locked, false); !ok {
		t.Error("plaintext dentry invalid")
	}
	// Casefold on an encrypted directory: v2 only.
	v1sb := newSB(t)
	_, desc := addKey(t, task, v1sb, 1, key)
	v1dir := encryptedInode(t, task, v1sb, fscrypt.Policy{Version: 0, ContentsMode: 1, FilenamesMode: 4, Descriptor: desc}, make([]byte, 16), 0, fscrypt.SIFDIR|0o755, 12)
	if err := fscrypt.PrepareSetflags(task, v1dir, true); err != errno.EINVAL {
		t.Errorf("casefold on a v1 dir: %v", err)
	}
	v2dir := encryptedInode(t, task, sb, v2Policy(id, 0), make([]byte, 16), 0, fscrypt.SIFDIR|0o755, 12)
	if err := fscrypt.PrepareSetflags(task, v2dir, true); err != nil {
		t.Errorf("casefold on a v2 dir: %v", err)
	}
	if _, ok := fscrypt.DirhashKey(v2dir); !ok {
		t.Error("no dirhash key after setting casefold")
	}
}

// TestNameLimits checks ENAMETOOLONG, EUCLEAN and "." / "..".
func TestNameLimits(t *testing.T) {
	task := newTask(t)
	sb := newSB(t)
	id, _ := addKey(t, task, sb, 2, bare.PlaintextStream("limits", 64))
	dir := encryptedInode(t, task, sb, v2Policy(id, 3), make([]byte, 16), 2, fscrypt.SIFDIR|0o755, 12)
	var fname fscrypt.Name
	if err := fscrypt.SetupFilename(task, dir, bytes.Repeat([]byte{'a'}, 256), false, &fname); err != errno.ENAMETOOLONG {
		t.Errorf("256-byte name: %v", err)
	}
	if err := fscrypt.SetupFilename(task, dir, bytes.Repeat([]byte{'a'}, 255), false, &fname); err != nil || len(fname.DiskName) != 255 {
		t.Errorf("255-byte name: %v, %d bytes on disk", err, len(fname.DiskName))
	}
	fscrypt.FreeFilename(task, &fname)
	for _, dot := range []string{".", ".."} {
		if err := fscrypt.SetupFilename(task, dir, []byte(dot), false, &fname); err != nil || string(fname.DiskName) != dot {
			t.Errorf("%q: %q, %v", dot, fname.DiskName, err)
		}
		buf := make([]byte, 256)
		if n, err := fscrypt.FnameDiskToUsr(task, dir, 0, 0, []byte(dot), buf); err != nil || string(buf[:n]) != dot {
			t.Errorf("disk_to_usr %q: %q, %v", dot, buf[:n], err)
		}
	}
	buf := make([]byte, 256)
	for _, n := range []int{1, 15} {
		if _, err := fscrypt.FnameDiskToUsr(task, dir, 0, 0, make([]byte, n), buf); err != errno.EUCLEAN {
			t.Errorf("%d-byte on-disk name: %v, want EUCLEAN", n, err)
		}
	}
}

// TestConcurrentKeySetup: many tasks setting up the same inode's key at
// once publish exactly one fscrypt_inode_info; the losers free theirs.
func TestConcurrentKeySetup(t *testing.T) {
	task := newTask(t)
	sb := newSB(t)
	id, _ := addKey(t, task, sb, 2, bare.PlaintextStream("race", 64))
	c := fscrypt.Context{Policy: v2Policy(id, 0), Nonce: [16]byte{1}}
	for round := 0; round < 20; round++ {
		i := sb.NewInode(0, fscrypt.SIFREG|0o644)
		i.SetRawContext(c.Marshal())
		var wg sync.WaitGroup
		infos := make([]*fscrypt.InodeInfo, 8)
		for g := range infos {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w := task.K.NewTask("setup")
				w.EnableCounting()
				defer w.Exit()
				if err := fscrypt.GetEncryptionInfo(w, i, false); err != nil {
					t.Error(err)
				}
				infos[g] = i.CryptInfo()
			}()
		}
		wg.Wait()
		for _, ci := range infos {
			if ci != infos[0] || ci == nil {
				t.Fatalf("round %d: different infos observed", round)
			}
		}
		fscrypt.PutEncryptionInfo(task, i)
	}
	spec := fscrypt.IdentifierSpec(id)
	if mk := fscrypt.FindMasterKeyForTest(sb.Keys, spec); fscrypt.ActiveRefsForTest(mk) != 1 {
		t.Errorf("active refs %d after every inode was evicted", fscrypt.ActiveRefsForTest(mk))
	}
}
