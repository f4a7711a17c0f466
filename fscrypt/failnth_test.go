package fscrypt_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/patch"
)

// failEveryAllocation runs op once without faults, then again with the
// n-th allocation failing for n = 1, 2, ... until op makes no more
// allocations than n-1. Each injected failure must give ENOMEM, leak
// nothing once cleanup ran, and raise no BUG; a success must leak exactly
// successLeaks after cleanup (kmem.Stats.Leaks entries: nothing, except
// for a variant that leaks as posted). It returns the number of failure
// points.
func failEveryAllocation(t *testing.T, task *kernel.Task, op func() error, cleanup func(), successLeaks []string) int {
	t.Helper()
	run := func(n uint64) (error, bool) {
		base := task.Stats.Clone()
		bugs := task.K.Bugs.Len()
		var fs *kmem.Failslab
		if n > 0 {
			fs = kmem.FailNth(n)
			task.Fail = fs
		}
		var err error
		func() {
			defer task.Recover(&err)
			err = op()
		}()
		task.Fail = nil
		injected := fs != nil && len(fs.Injected) > 0
		if task.K.Bugs.Len() != bugs {
			t.Fatalf("fail-nth %d: BUG %v", n, task.K.Bugs.All()[bugs:])
		}
		if injected && !errors.Is(err, errno.ENOMEM) {
			t.Fatalf("fail-nth %d (%v): err %v, want ENOMEM", n, fs.Injected, err)
		}
		if !injected && err != nil {
			t.Fatalf("fail-nth %d: %v without an injected failure", n, err)
		}
		cleanup()
		want := successLeaks
		if injected {
			want = nil
		}
		if l := task.Stats.Leaks(base); fmt.Sprint(l) != fmt.Sprint(want) {
			t.Fatalf("fail-nth %d (%v): leaks %v, want %v", n, fs, l, want)
		}
		return err, injected
	}
	run(0)
	points := 0
	for n := uint64(1); ; n++ {
		if _, injected := run(n); !injected {
			break
		}
		points++
		if n > 500 {
			t.Fatal("too many allocation points")
		}
	}
	return points
}

// TestFailEveryAllocation injects a failure at every allocation point of
// each operation, once, and checks the clean -ENOMEM and the absence of
// leaks, for every variant of the three patches where it matters. The
// exception is fscrypt-fname-onstack v2, which as posted leaks its
// filename encryption request: each successful filename encryption
// (setup filename, encrypt symlink) leaves exactly one live object at
// fscrypt_fname_encrypt:skcipher_request, and a failed one none.
func TestFailEveryAllocation(t *testing.T) {
	key := bare.PlaintextStream("failnth master key", 64)
	for _, setName := range []string{
		"", "fscrypt-fname-onstack=v2", "fscrypt-fname-onstack=upstream",
		"fscrypt-v1-kdf=sync", "fscrypt-v1-kdf=aeslib",
		"crypto-bio=inline", "crypto-bio=chain", "crypto-bio=bio",
	} {
		set, err := patch.Parse(setName)
		if err != nil {
			t.Fatal(err)
		}
		t.Run("set="+setName, func(t *testing.T) {
			task := newTaskWith(t, set)
			sb := bare.NewSB(newAPI())
			sb.FSUUID = [16]byte{1}
			check := func(name string, op func() error, cleanup func()) {
				t.Helper()
				n := failEveryAllocation(t, task, op, cleanup, nil)
				t.Logf("%s: %d allocation points", name, n)
			}
			var encLeak []string
			if setName == "fscrypt-fname-onstack=v2" {
				encLeak = []string{"fscrypt_fname_encrypt:skcipher_request:+1"}
			}
			// checkEncrypt is check for an operation that encrypts
			// one filename.
			checkEncrypt := func(name string, op func() error, cleanup func()) {
				t.Helper()
				n := failEveryAllocation(t, task, op, cleanup, encLeak)
				t.Logf("%s: %d allocation points", name, n)
			}
			// FS_IOC_ADD_ENCRYPTION_KEY, v2 and v1.
			spec := fscrypt.KeySpecifier{Type: fscrypt.KeySpecTypeIdentifier}
			check("add v2 key", func() error {
				arg := &fscrypt.AddKeyArg{KeySpec: spec, RawSize: 64, Raw: key}
				return fscrypt.IoctlAddKey(task, kernel.RootCred, sb, arg)
			}, func() { fscrypt.DestroyKeyring(task, sb) })
			check("add v1 key", func() error {
				arg := &fscrypt.AddKeyArg{KeySpec: fscrypt.DescriptorSpec(fscrypt.KeyDescriptor(key)), RawSize: 64, Raw: key}
				return fscrypt.IoctlAddKey(task, kernel.RootCred, sb, arg)
			}, func() { fscrypt.DestroyKeyring(task, sb) })

			// Keys stay added for the rest.
			id, _ := addKey(t, task, sb, 2, key)
			_, desc := addKey(t, task, sb, 1, key)
			policies := map[string]fscrypt.Policy{
				"v2":        {Version: 2, ContentsMode: 1, FilenamesMode: 4, Identifier: id},
				"v2-hctr2":  {Version: 2, ContentsMode: 1, FilenamesMode: 10, Identifier: id},
				"v2-direct": {Version: 2, ContentsMode: 9, FilenamesMode: 9, Flags: 4, Identifier: id},
				"v2-lblk64": {Version: 2, ContentsMode: 1, FilenamesMode: 4, Flags: 8, Identifier: id},
				"v2-lblk32": {Version: 2, ContentsMode: 1, FilenamesMode: 4, Flags: 0x10, Identifier: id},
				"v1":        {Version: 0, ContentsMode: 1, FilenamesMode: 4, Descriptor: desc},
				"v1-essiv":  {Version: 0, ContentsMode: 5, FilenamesMode: 6, Descriptor: desc},
				"v1-direct": {Version: 0, ContentsMode: 9, FilenamesMode: 9, Flags: 4, Descriptor: desc},
			}
			for _, pname := range []string{"v2", "v2-hctr2", "v2-direct", "v2-lblk64", "v2-lblk32", "v1", "v1-essiv", "v1-direct"} {
				p := policies[pname]
				ctx := fscrypt.Context{Policy: p, Nonce: [16]byte{7, 7}}
				// Key setup of an existing directory and file, with
				// the key added first on a fresh filesystem so that
				// per-mode keys (DIRECT_KEY, IV_INO_LBLK_*) are made
				// too; cleanup evicts the inode and unmounts.
				for _, mode := range []uint32{fscrypt.SIFDIR, fscrypt.SIFREG} {
					var fresh *bare.SB
					var i *bare.Inode
					check(fmt.Sprintf("%s: add key + key setup (mode %o)", pname, mode), func() error {
						fresh = bare.NewSB(sb.API)
						arg := &fscrypt.AddKeyArg{KeySpec: p.KeySpec(), RawSize: 64, Raw: key}
						if p.Version == 2 {
							arg.KeySpec = fscrypt.KeySpecifier{Type: fscrypt.KeySpecTypeIdentifier}
						}
						if err := fscrypt.IoctlAddKey(task, kernel.RootCred, fresh, arg); err != nil {
							return err
						}
						i = fresh.NewInode(0, mode|0o755)
						i.Casefold = mode == fscrypt.SIFDIR && p.Version == 2
						i.SetRawContext(ctx.Marshal())
						if err := fscrypt.GetEncryptionInfo(task, i, false); err != nil {
							return err
						}
						if !fscrypt.HasEncryptionKey(i) {
							return errno.ENOKEY
						}
						return nil
					}, func() {
						if i != nil {
							fscrypt.PutEncryptionInfo(task, i)
						}
						fscrypt.DestroyKeyring(task, fresh)
						i = nil
					})
				}
				dir := encryptedInode(t, task, sb, p, ctx.Nonce[:], 0, fscrypt.SIFDIR|0o755, 12)
				file := encryptedInode(t, task, sb, p, ctx.Nonce[:], 0, fscrypt.SIFREG|0o644, 12)
				// A new inode in the directory.
				child := sb.NewInode(0, fscrypt.SIFREG|0o644)
				check(pname+": prepare new inode", func() error {
					if _, err := fscrypt.PrepareNewInode(task, dir, child); err != nil {
						return err
					}
					return fscrypt.SetContext(task, child, nil)
				}, func() { fscrypt.PutEncryptionInfo(task, child) })
				// Filenames: lookup/create, and presentation.
				var fname fscrypt.Name
				checkEncrypt(pname+": setup filename", func() error {
					return fscrypt.SetupFilename(task, dir, []byte("a-long-enough-file-name.txt"), false, &fname)
				}, func() { fscrypt.FreeFilename(task, &fname) })
				ct := make([]byte, 32)
				if err := fscrypt.FnameEncrypt(task, dir, []byte("x"), ct); err != nil {
					t.Fatal(err)
				}
				check(pname+": disk to usr", func() error {
					buf, err := fscrypt.FnameAllocBuffer(task, 32)
					if err != nil {
						return err
					}
					defer fscrypt.FnameFreeBuffer(task, buf)
					_, err = fscrypt.FnameDiskToUsr(task, dir, 0, 0, ct, buf)
					return err
				}, func() {})
				// Symlink targets.
				link := sb.NewInode(0, fscrypt.SIFLNK|0o777)
				if _, err := fscrypt.PrepareNewInode(task, dir, link); err != nil {
					t.Fatal(err)
				}
				if err := fscrypt.SetContext(task, link, nil); err != nil {
					t.Fatal(err)
				}
				var sd []byte
				checkEncrypt(pname+": encrypt symlink", func() error {
					var err error
					sd, err = fscrypt.EncryptSymlink(task, link, []byte("/some/target"), 35)
					return err
				}, func() { fscrypt.FreeSymlinkData(task, sd); sd = nil })
				sd, _ = fscrypt.EncryptSymlink(task, link, []byte("/some/target"), 35)
				check(pname+": get symlink", func() error {
					_, _, err := fscrypt.GetSymlink(task, link, sd)
					return err
				}, func() {})
				fscrypt.FreeSymlinkData(task, sd)
				// Contents: the write path and the read path.
				folio := block.NewFolio(5, 0)
				folio.Host = fscrypt.Inode(file)
				var bounce []byte
				check(pname+": encrypt page", func() error {
					var err error
					bounce, err = fscrypt.EncryptPagecacheBlocks(task, folio, block.PageSize, 0)
					return err
				}, func() { fscrypt.FreeBouncePage(task, bounce); bounce = nil })
				check(pname+": decrypt bio", func() error {
					bio := block.NewBio(2)
					for j := 0; j < 2; j++ {
						f := block.NewFolio(uint64(8+j), 0)
						f.Host = fscrypt.Inode(file)
						bio.AddFolio(f, block.PageSize, 0)
					}
					if !fscrypt.DecryptBio(task, bio) {
						return block.BlkStatusToErrno(bio.Status)
					}
					return nil
				}, func() {})
			}
		})
	}
}
