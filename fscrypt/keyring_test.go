package fscrypt_test

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
)

func keyStatus(t *testing.T, task *kernel.Task, cred *kernel.Cred, sb fscrypt.SuperBlock, spec fscrypt.KeySpecifier) fscrypt.GetKeyStatusArg {
	t.Helper()
	arg := fscrypt.GetKeyStatusArg{KeySpec: spec}
	if err := fscrypt.IoctlGetKeyStatus(task, cred, sb, &arg); err != nil {
		t.Fatalf("key status: %v", err)
	}
	return arg
}

// TestKeyringUsers: v2 keys are claimed per user; removal drops the
// caller's claim and removes the key only when no claim is left.
func TestKeyringUsers(t *testing.T) {
	task := newTask(t)
	sb := newSB(t)
	base := task.Stats.Clone()
	alice, bob, eve := &kernel.Cred{UID: 1000}, &kernel.Cred{UID: 2000}, &kernel.Cred{UID: 3000}
	key := bytes.Repeat([]byte{0x42}, 32)
	add := func(c *kernel.Cred) fscrypt.KeySpecifier {
		arg := &fscrypt.AddKeyArg{KeySpec: fscrypt.KeySpecifier{Type: fscrypt.KeySpecTypeIdentifier}, RawSize: 32, Raw: key}
		if err := fscrypt.IoctlAddKey(task, c, sb, arg); err != nil {
			t.Fatalf("add as %d: %v", c.UID, err)
		}
		return arg.KeySpec
	}
	spec := add(alice)
	if st := keyStatus(t, task, alice, sb, spec); st.Status != fscrypt.KeyStatusPresent || st.StatusFlags != fscrypt.KeyStatusFlagAddedBySelf || st.UserCount != 1 {
		t.Errorf("status for alice: %+v", st)
	}
	if st := keyStatus(t, task, bob, sb, spec); st.Status != fscrypt.KeyStatusPresent || st.StatusFlags != 0 {
		t.Errorf("status for bob: %+v", st)
	}
	add(bob)
	add(bob) // again: nothing changes
	if st := keyStatus(t, task, bob, sb, spec); st.UserCount != 2 || st.StatusFlags != fscrypt.KeyStatusFlagAddedBySelf {
		t.Errorf("status after bob added: %+v", st)
	}
	rm := fscrypt.RemoveKeyArg{KeySpec: spec}
	if err := fscrypt.IoctlRemoveKey(task, eve, sb, &rm); err != errno.ENOKEY {
		t.Errorf("eve removes: %v, want ENOKEY", err)
	}
	if err := fscrypt.IoctlRemoveKey(task, alice, sb, &rm); err != nil || rm.RemovalStatusFlags != fscrypt.KeyRemovalStatusFlagOtherUser {
		t.Errorf("alice removes: %v flags %#x", err, rm.RemovalStatusFlags)
	}
	if st := keyStatus(t, task, alice, sb, spec); st.Status != fscrypt.KeyStatusPresent || st.UserCount != 1 || st.StatusFlags != 0 {
		t.Errorf("status after alice removed: %+v", st)
	}
	mk := fscrypt.FindMasterKeyForTest(sb.Keys, spec)
	secret, size := fscrypt.MasterKeySecretForTest(mk)
	if size != 32 || !bytes.Equal(secret[:32], key) {
		t.Fatalf("secret %x (%d)", secret[:size], size)
	}
	rm = fscrypt.RemoveKeyArg{KeySpec: spec}
	if err := fscrypt.IoctlRemoveKey(task, bob, sb, &rm); err != nil || rm.RemovalStatusFlags != 0 {
		t.Errorf("bob removes: %v flags %#x", err, rm.RemovalStatusFlags)
	}
	if *secret != [64]byte{} {
		t.Errorf("secret not wiped: %x", secret[:])
	}
	if st := keyStatus(t, task, bob, sb, spec); st.Status != fscrypt.KeyStatusAbsent {
		t.Errorf("status after removal: %+v", st)
	}
	if sb.Keys.Len() != 0 {
		t.Errorf("keyring: %s", sb.Keys)
	}
	if err := fscrypt.IoctlRemoveKey(task, bob, sb, &rm); err != errno.ENOKEY {
		t.Errorf("remove again: %v", err)
	}
	if l := task.Stats.Leaks(base); len(l) != 0 {
		t.Errorf("leaks: %v", l)
	}

	// All users at once needs CAP_SYS_ADMIN.
	spec = add(alice)
	add(bob)
	if err := fscrypt.IoctlRemoveKeyAllUsers(task, alice, sb, &fscrypt.RemoveKeyArg{KeySpec: spec}); err != errno.EACCES {
		t.Errorf("remove all users without CAP_SYS_ADMIN: %v", err)
	}
	if err := fscrypt.IoctlRemoveKeyAllUsers(task, kernel.RootCred, sb, &fscrypt.RemoveKeyArg{KeySpec: spec}); err != nil {
		t.Errorf("remove all users: %v", err)
	}
	if sb.Keys.Len() != 0 {
		t.Errorf("keyring: %s", sb.Keys)
	}
	if l := task.Stats.Leaks(base); len(l) != 0 {
		t.Errorf("leaks: %v", l)
	}
}

// TestKeyringBadArgs checks the argument checks of the key ioctls.
func TestKeyringBadArgs(t *testing.T) {
	task := newTask(t)
	sb := newSB(t)
	user := &kernel.Cred{UID: 1000}
	raw := bytes.Repeat([]byte{1}, 64)
	id := fscrypt.KeySpecifier{Type: fscrypt.KeySpecTypeIdentifier}
	desc := fscrypt.DescriptorSpec([8]byte{1, 2, 3})
	for _, tc := range []struct {
		cred *kernel.Cred
		arg  fscrypt.AddKeyArg
		want error
	}{
		{user, fscrypt.AddKeyArg{KeySpec: fscrypt.KeySpecifier{Type: 3}, RawSize: 64, Raw: raw}, errno.EINVAL},
		{user, fscrypt.AddKeyArg{KeySpec: fscrypt.KeySpecifier{Type: 2, Reserved: 1}, RawSize: 64, Raw: raw}, errno.EINVAL},
		{user, fscrypt.AddKeyArg{KeySpec: id, RawSize: 64, Raw: raw, Reserved: [7]uint32{0, 1}}, errno.EINVAL},
		{user, fscrypt.AddKeyArg{KeySpec: desc, RawSize: 64, Raw: raw}, errno.EACCES},
		{user, fscrypt.AddKeyArg{KeySpec: id, RawSize: 15, Raw: raw}, errno.EINVAL},
		{user, fscrypt.AddKeyArg{KeySpec: id, RawSize: 65, Raw: append(raw, 1)}, errno.EINVAL},
		{user, fscrypt.AddKeyArg{KeySpec: id, RawSize: 64, Raw: raw[:63]}, errno.EFAULT},
		// Linux 6.12 has no flags word (reserved: EINVAL).
		{user, fscrypt.AddKeyArg{KeySpec: id, RawSize: 64, Raw: raw, Flags: fscrypt.AddKeyFlagHWWrapped}, errno.EINVAL},
		{user, fscrypt.AddKeyArg{KeySpec: id, RawSize: 64, Raw: raw, Flags: 2}, errno.EINVAL},
		{user, fscrypt.AddKeyArg{KeySpec: id, KeyID: 7}, errno.ENOKEY},
		{user, fscrypt.AddKeyArg{KeySpec: id, KeyID: 7, RawSize: 64, Raw: raw}, errno.EINVAL},
		{kernel.RootCred, fscrypt.AddKeyArg{KeySpec: desc, RawSize: 16, Raw: raw}, nil},
	} {
		arg := tc.arg
		if err := fscrypt.IoctlAddKey(task, tc.cred, sb, &arg); err != tc.want {
			t.Errorf("add %+v: %v, want %v", tc.arg.KeySpec, err, tc.want)
		}
	}
	if err := fscrypt.IoctlRemoveKey(task, user, sb, &fscrypt.RemoveKeyArg{KeySpec: desc}); err != errno.EACCES {
		t.Errorf("remove descriptor key as a user: %v", err)
	}
	if err := fscrypt.IoctlRemoveKey(task, user, sb, &fscrypt.RemoveKeyArg{KeySpec: id, Reserved: [5]uint32{1}}); err != errno.EINVAL {
		t.Errorf("remove with reserved bits: %v", err)
	}
	if err := fscrypt.IoctlGetKeyStatus(task, user, sb, &fscrypt.GetKeyStatusArg{KeySpec: fscrypt.KeySpecifier{Type: 9}}); err != errno.EINVAL {
		t.Errorf("status of a bad spec: %v", err)
	}
	// v1 (descriptor) keys have no users: status has no user count.
	if st := keyStatus(t, task, kernel.RootCred, sb, desc); st.Status != fscrypt.KeyStatusPresent || st.UserCount != 0 {
		t.Errorf("v1 key status %+v", st)
	}
}

// TestIncompleteRemoval: removing a key while a file it unlocked is open
// leaves it "incompletely removed" until the file is closed and evicted.
func TestIncompleteRemoval(t *testing.T) {
	task := newTask(t)
	sb := newSB(t)
	base := task.Stats.Clone()
	key := bytes.Repeat([]byte{9}, 64)
	id, _ := addKey(t, task, sb, 2, key)
	spec := fscrypt.IdentifierSpec(id)
	p := v2Policy(id, 0)
	dir := encryptedInode(t, task, sb, p, bytes.Repeat([]byte{1}, 16), 0, fscrypt.SIFDIR|0o755, 12)
	file := encryptedInode(t, task, sb, p, bytes.Repeat([]byte{2}, 16), 0, fscrypt.SIFREG|0o644, 12)
	file.Opens = 1
	mk := fscrypt.FindMasterKeyForTest(sb.Keys, spec)
	if got := fscrypt.ActiveRefsForTest(mk); got != 3 {
		t.Fatalf("active refs %d, want 3 (present + 2 inodes)", got)
	}
	rm := fscrypt.RemoveKeyArg{KeySpec: spec}
	if err := fscrypt.IoctlRemoveKey(task, kernel.RootCred, sb, &rm); err != nil || rm.RemovalStatusFlags != fscrypt.KeyRemovalStatusFlagFilesBusy {
		t.Fatalf("remove: %v flags %#x", err, rm.RemovalStatusFlags)
	}
	if !dir.Evicted || file.Evicted || fscrypt.HasEncryptionKey(dir) || !fscrypt.HasEncryptionKey(file) {
		t.Fatalf("after removal: dir evicted %t, file evicted %t", dir.Evicted, file.Evicted)
	}
	if !task.K.Log.Contains("1 inode(s) still busy after removing key with identifier") {
		t.Errorf("log: %q", task.K.Log.Lines())
	}
	if st := keyStatus(t, task, kernel.RootCred, sb, spec); st.Status != fscrypt.KeyStatusIncompletelyRemoved {
		t.Errorf("status %+v, want INCOMPLETELY_REMOVED", st)
	}
	if secret, _ := fscrypt.MasterKeySecretForTest(mk); *secret != [64]byte{} {
		t.Error("secret not wiped at removal")
	}
	// The open file still works; new inodes cannot be unlocked.
	if !fscrypt.DropInode(file) {
		t.Error("fscrypt_drop_inode should ask for eviction now")
	}
	other := sb.NewInode(0, fscrypt.SIFREG|0o644)
	c := fscrypt.Context{Policy: p}
	other.SetRawContext(c.Marshal())
	if err := fscrypt.GetEncryptionInfo(task, other, false); err != nil || fscrypt.HasEncryptionKey(other) {
		t.Errorf("new inode after removal: %v, key %t", err, fscrypt.HasEncryptionKey(other))
	}
	if err := fscrypt.RequireKey(task, other); err != errno.ENOKEY {
		t.Errorf("RequireKey: %v, want ENOKEY", err)
	}
	// Trying again while busy reports busy again.
	rm = fscrypt.RemoveKeyArg{KeySpec: spec}
	if err := fscrypt.IoctlRemoveKey(task, kernel.RootCred, sb, &rm); err != nil || rm.RemovalStatusFlags != fscrypt.KeyRemovalStatusFlagFilesBusy {
		t.Errorf("remove again: %v %#x", err, rm.RemovalStatusFlags)
	}
	// Close and evict: the key leaves the keyring.
	file.Opens = 0
	file.Evict(task)
	if st := keyStatus(t, task, kernel.RootCred, sb, spec); st.Status != fscrypt.KeyStatusAbsent || sb.Keys.Len() != 0 {
		t.Errorf("after the last close: %+v, keyring %s", st, sb.Keys)
	}
	if l := task.Stats.Leaks(base); len(l) != 0 {
		t.Errorf("leaks: %v", l)
	}
}

// TestReaddDuringIncompleteRemoval: adding the key back while files are
// busy makes it present again, and new inodes unlock.
func TestReaddDuringIncompleteRemoval(t *testing.T) {
	task := newTask(t)
	sb := newSB(t)
	key := bytes.Repeat([]byte{5}, 64)
	id, _ := addKey(t, task, sb, 2, key)
	spec := fscrypt.IdentifierSpec(id)
	p := v2Policy(id, 0)
	file := encryptedInode(t, task, sb, p, bytes.Repeat([]byte{2}, 16), 0, fscrypt.SIFREG|0o644, 12)
	file.Opens = 1
	if err := fscrypt.IoctlRemoveKey(task, kernel.RootCred, sb, &fscrypt.RemoveKeyArg{KeySpec: spec}); err != nil {
		t.Fatal(err)
	}
	addKey(t, task, sb, 2, key)
	if st := keyStatus(t, task, kernel.RootCred, sb, spec); st.Status != fscrypt.KeyStatusPresent {
		t.Errorf("status %+v", st)
	}
	if fscrypt.DropInode(file) {
		t.Error("drop_inode wants eviction although the key is back")
	}
	encryptedInode(t, task, sb, p, bytes.Repeat([]byte{3}, 16), 0, fscrypt.SIFREG|0o644, 12)
	mk := fscrypt.FindMasterKeyForTest(sb.Keys, spec)
	if got := fscrypt.ActiveRefsForTest(mk); got != 3 {
		t.Errorf("active refs %d, want 3", got)
	}
	if s := mk.String(); s != "identifier "+hex.EncodeToString(id[:])+" present size=64 active=3 users=[0] inodes=2" {
		t.Errorf("String = %q", s)
	}
	fscrypt.DestroyKeyring(task, sb)
}

// TestKeyringConcurrency: tasks unlocking and evicting inodes while another
// removes and re-adds the key. Whatever the interleaving, every setup
// either gets the key or finds it absent, and once everything is evicted
// and the keyring destroyed nothing is left allocated.
func TestKeyringConcurrency(t *testing.T) {
	task := newTask(t)
	sb := newSB(t)
	key := bytes.Repeat([]byte{0x21, 0x43, 0x65, 0x87}, 16)
	id, _ := addKey(t, task, sb, 2, key)
	c := fscrypt.Context{Policy: v2Policy(id, 0), Nonce: [16]byte{4}}
	const workers, rounds = 4, 200
	stats := make([]*kernel.Task, workers)
	done := make(chan struct{})
	for w := 0; w < workers; w++ {
		wt := task.K.NewTask("worker")
		wt.EnableCounting()
		stats[w] = wt
		go func() {
			defer func() { done <- struct{}{} }()
			for r := 0; r < rounds; r++ {
				i := sb.NewInode(0, fscrypt.SIFREG|0o644)
				i.SetRawContext(c.Marshal())
				if err := fscrypt.GetEncryptionInfo(wt, i, false); err != nil {
					t.Error(err)
					return
				}
				i.Evict(wt)
			}
		}()
	}
	for r := 0; r < rounds/4; r++ {
		arg := fscrypt.RemoveKeyArg{KeySpec: fscrypt.IdentifierSpec(id)}
		if err := fscrypt.IoctlRemoveKey(task, kernel.RootCred, sb, &arg); err != nil {
			t.Errorf("remove: %v", err)
		}
		addKey(t, task, sb, 2, key)
	}
	for w := 0; w < workers; w++ {
		<-done
	}
	fscrypt.DestroyKeyring(task, sb)
	if sb.Keys.Len() != 0 {
		t.Errorf("keyring not empty: %s", sb.Keys)
	}
	var live int64
	for _, wt := range append(stats, task) {
		live += wt.Stats.Live()
		wt.Exit()
	}
	if live != 0 {
		t.Errorf("%d objects still allocated across the tasks", live)
	}
}
