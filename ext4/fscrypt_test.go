package ext4

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/crypto"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/kernel"
)

// fscryptDir returns a directory encrypted by package fscrypt (policy v2,
// AES-256-XTS / AES-256-CTS, 16-byte padding), casefolded or not, and an
// inode with the same context on a superblock without the key.
func fscryptDir(t testing.TB, casefold bool) (*kernel.Task, *Inode, *bare.Inode) {
	t.Helper()
	tk, dir := newTestDir(t, dirOpts{casefold: casefold})
	fsb := bare.NewSB(crypto.NewAPI())
	key := make([]byte, 64)
	for i := range key {
		key[i] = byte(i + 1)
	}
	arg := &fscrypt.AddKeyArg{RawSize: uint32(len(key)), Raw: key}
	arg.KeySpec.Type = fscrypt.KeySpecTypeIdentifier
	if err := fscrypt.IoctlAddKey(tk, kernel.RootCred, fsb, arg); err != nil {
		t.Fatal(err)
	}
	p := fscrypt.Policy{Version: fscrypt.PolicyV2, ContentsMode: fscrypt.ModeAES256XTS, FilenamesMode: fscrypt.ModeAES256CTS, Flags: 2}
	copy(p.Identifier[:], arg.KeySpec.U[:16])
	ctx := fscrypt.Context{Policy: p}
	copy(ctx.Nonce[:], "fedcba9876543210")
	noKeySB := bare.NewSB(crypto.NewAPI())
	mk := func(sb *bare.SB) *bare.Inode {
		i := sb.NewInode(12, fscrypt.SIFDIR)
		i.Casefold = casefold
		i.SetRawContext(ctx.Marshal())
		return i
	}
	withKey := mk(fsb)
	if err := fscrypt.GetEncryptionInfo(tk, withKey, false); err != nil {
		t.Fatal(err)
	}
	dir.Crypt = FscryptNames{Dir: withKey}
	if err := InitNewDir(tk, dir, parentIno); err != nil {
		t.Fatal(err)
	}
	return tk, dir, mk(noKeySB)
}

// TestFscryptNames: an htree of names encrypted by package fscrypt, with
// the SipHash hashes stored after each name when the directory is also
// casefolded; readdir shows no-key names without the key, and they look up
// to the same inodes.
func TestFscryptNames(t *testing.T) {
	for _, casefold := range []bool{false, true} {
		tk, dir, nokey := fscryptDir(t, casefold)
		var names []string
		for i := 0; i < 400; i++ {
			names = append(names, fmt.Sprintf("Name-%d-%s", i, strings.Repeat("p", i%50)))
		}
		for i, n := range names {
			mustAdd(t, tk, dir, n, uint32(100+i))
		}
		mustCheck(t, tk, dir)
		if !dir.IsDx() {
			t.Fatal("no htree")
		}
		for i, n := range names {
			q := n
			if casefold {
				q = strings.ToUpper(n)
			}
			if ino, err := InodeByName(tk, dir, []byte(q)); err != nil || ino != uint32(100+i) {
				t.Fatalf("casefold=%v lookup %q: %d %v", casefold, q, ino, err)
			}
		}
		dir.Crypt = FscryptNames{Dir: nokey}
		listed := listDir(t, tk, dir)
		if len(listed) != len(names)+2 || strings.Contains(strings.Join(listed, " "), "Name-1-") {
			t.Fatalf("no-key readdir: %d %v", len(listed), listed[:3])
		}
		for _, e := range listed[2:] {
			nk := e[:strings.Index(e, ":")]
			r, err := find(tk, dir, nk)
			if err != nil || r == nil || fmt.Sprintf("%s:%d:8", nk, r.Entry.Inode) != e {
				t.Fatalf("casefold=%v no-key lookup %q: %v %v", casefold, nk, r, err)
			}
		}
		if err := AddEntry(tk, dir, []byte("new"), 5, SIfreg); err == nil {
			t.Fatal("create without the key succeeded")
		}
	}
}
