package fscrypt_test

import (
	"bytes"
	"github.com/vfslab/vfslab/kernel"
	"testing"

	"github.com/vfslab/vfslab/crypto"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
)

// TestKeyRemovalWipesKeyMaterial follows FS_IOC_REMOVE_ENCRYPTION_KEY
// (fs/crypto/keyring.c) byte by byte: removal wipes the master key's raw
// secret and its HKDF state (wipe_master_key_secret) at once, and the keys
// of the inodes that can be evicted with them; a file still open keeps its
// per-file key ("files busy", KEY_REMOVAL_STATUS_FLAG_FILES_BUSY) until it
// is closed and evicted, when put_crypt_info frees its tfm with
// kfree_sensitive. Removing again after the close completes the removal.
func TestKeyRemovalWipesKeyMaterial(t *testing.T) {
	for _, flags := range []uint8{0, fscrypt.PolicyFlagDirectKey} {
		task := newTask(t)
		sb := newSB(t)
		base := task.Stats.Clone()
		key := bytes.Repeat([]byte{0x5a, 0xa5, 3}, 22)[:64]
		id, _ := addKey(t, task, sb, 2, key)
		spec := fscrypt.IdentifierSpec(id)
		p := v2Policy(id, flags)
		if flags == fscrypt.PolicyFlagDirectKey {
			p.ContentsMode, p.FilenamesMode = 9, 9 // Adiantum: DIRECT_KEY needs it
		}
		mk := fscrypt.FindMasterKeyForTest(sb.Keys, spec)
		if fscrypt.HKDFKeyWipedForTest(mk) {
			t.Fatal("the HKDF key is zero while the key is present")
		}
		dir := encryptedInode(t, task, sb, p, bytes.Repeat([]byte{1}, 16), 0, fscrypt.SIFDIR|0o755, 12)
		file := encryptedInode(t, task, sb, p, bytes.Repeat([]byte{2}, 16), 0, fscrypt.SIFREG|0o644, 12)
		dirTfm := fscrypt.InodeTfmForTest(dir.CryptInfo())
		fileTfm := fscrypt.InodeTfmForTest(file.CryptInfo())
		if dirTfm == nil || fileTfm == nil || dirTfm.KeyWiped() || fileTfm.KeyWiped() {
			t.Fatal("no keyed tfms after setup")
		}
		children := func(tfm *crypto.Skcipher) []*crypto.Skcipher {
			var out []*crypto.Skcipher
			for c := tfm; c != nil; c = c.Child() {
				out = append(out, c)
			}
			return out
		}
		dirTfms, fileTfms := children(dirTfm), children(fileTfm)
		file.Opens = 1

		rm := fscrypt.RemoveKeyArg{KeySpec: spec}
		if err := fscrypt.IoctlRemoveKey(task, kernel.RootCred, sb, &rm); err != nil || rm.RemovalStatusFlags != fscrypt.KeyRemovalStatusFlagFilesBusy {
			t.Fatalf("flags %#x: remove: %v status %#x, want FILES_BUSY", flags, err, rm.RemovalStatusFlags)
		}
		secret, size := fscrypt.MasterKeySecretForTest(mk)
		if *secret != [64]byte{} || size != 0 {
			t.Errorf("flags %#x: raw secret left after removal", flags)
		}
		if !fscrypt.HKDFKeyWipedForTest(mk) {
			t.Errorf("flags %#x: HKDF (HMAC-SHA512 ipad/opad) state left after removal", flags)
		}
		// DIRECT_KEY: the per-mode key is shared and stays until the last
		// inode using it goes; otherwise the directory's own key is gone.
		if flags == 0 {
			for i, c := range dirTfms {
				if !c.KeyWiped() {
					t.Errorf("evicted directory's tfm %d (%s) not wiped", i, c.DriverName())
				}
			}
			if dir.CryptInfo() != nil {
				t.Error("directory still has its key")
			}
		}
		// The busy file keeps working.
		if fileTfm.KeyWiped() || !fscrypt.HasEncryptionKey(file) {
			t.Errorf("flags %#x: the open file lost its key before it was closed", flags)
		}
		// Close and evict: its key is freed and wiped; the master key
		// leaves the keyring.
		file.Opens = 0
		file.Evict(task)
		for i, c := range fileTfms {
			if !c.KeyWiped() {
				t.Errorf("flags %#x: file's tfm %d (%s) not wiped at eviction", flags, i, c.DriverName())
			}
		}
		if flags != 0 {
			for i, c := range dirTfms {
				if !c.KeyWiped() {
					t.Errorf("per-mode tfm %d (%s) not wiped once its last user went", i, c.DriverName())
				}
			}
		}
		if sb.Keys.Len() != 0 {
			t.Errorf("keyring after the last close: %s", sb.Keys)
		}
		if err := fscrypt.IoctlRemoveKey(task, kernel.RootCred, sb, &fscrypt.RemoveKeyArg{KeySpec: spec}); err != errno.ENOKEY {
			t.Errorf("remove after completion: %v, want ENOKEY", err)
		}
		if l := task.Stats.Leaks(base); len(l) != 0 {
			t.Errorf("leaks: %v", l)
		}
	}
}

// TestKeyRemovalAfterCloseCompletes: the file busy at the first removal is
// closed, and a second FS_IOC_REMOVE_ENCRYPTION_KEY (what fscrypt lock
// does on retry) evicts it and completes the removal with no status flag.
func TestKeyRemovalAfterCloseCompletes(t *testing.T) {
	task := newTask(t)
	sb := newSB(t)
	id, _ := addKey(t, task, sb, 2, bytes.Repeat([]byte{0x11, 0x22}, 32))
	spec := fscrypt.IdentifierSpec(id)
	p := v2Policy(id, 0)
	file := encryptedInode(t, task, sb, p, bytes.Repeat([]byte{2}, 16), 0, fscrypt.SIFREG|0o644, 12)
	tfm := fscrypt.InodeTfmForTest(file.CryptInfo())
	file.Opens = 1
	rm := fscrypt.RemoveKeyArg{KeySpec: spec}
	if err := fscrypt.IoctlRemoveKey(task, kernel.RootCred, sb, &rm); err != nil || rm.RemovalStatusFlags != fscrypt.KeyRemovalStatusFlagFilesBusy {
		t.Fatalf("remove: %v %#x", err, rm.RemovalStatusFlags)
	}
	file.Opens = 0 // closed, not yet evicted
	rm = fscrypt.RemoveKeyArg{KeySpec: spec}
	if err := fscrypt.IoctlRemoveKey(task, kernel.RootCred, sb, &rm); err != nil || rm.RemovalStatusFlags != 0 {
		t.Fatalf("second remove: %v %#x, want complete", err, rm.RemovalStatusFlags)
	}
	if !file.Evicted || !tfm.KeyWiped() || sb.Keys.Len() != 0 {
		t.Errorf("after the completing removal: evicted %t, tfm wiped %t, keyring %s", file.Evicted, tfm.KeyWiped(), sb.Keys)
	}
}
