package fscrypt_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
)

// testKeyring is a session keyring holding "logon" keys by description.
type testKeyring struct {
	keys    map[string][]byte
	revoked map[string]bool
	asked   []string
}

func (kr *testKeyring) RequestKey(typ, desc string) ([]byte, error) {
	kr.asked = append(kr.asked, typ+" "+desc)
	if typ != "logon" {
		return nil, errno.ENOKEY
	}
	if kr.revoked[desc] {
		return nil, errno.EKEYREVOKED
	}
	p, ok := kr.keys[desc]
	if !ok {
		return nil, errno.ENOKEY
	}
	return p, nil
}

// fscryptKeyPayload is struct fscrypt_key {mode, raw[64], size} as
// xfstests' _add_session_encryption_key writes it.
func fscryptKeyPayload(raw []byte, size uint32) []byte {
	p := make([]byte, 72)
	copy(p[4:68], raw)
	binary.LittleEndian.PutUint32(p[68:], size)
	return p
}

// TestV1KeyViaSessionKeyring: a v1 policy's key found as "fscrypt:DESC"
// in the current task's session keyring (find_and_lock_process_key)
// encrypts names exactly as the same key added to the filesystem does;
// unlinking it leaves the unlocked inode unlocked until it is evicted; a
// bad payload, a short key and a revoked key unlock nothing.
func TestV1KeyViaSessionKeyring(t *testing.T) {
	raw := bytes.Repeat([]byte{0x5a}, 64)
	raw[0] = 1
	tk := newTask(t)
	p := fscrypt.Policy{Version: fscrypt.PolicyV1, ContentsMode: uint8(mustMode(t, "AES-256-XTS").Num),
		FilenamesMode: uint8(mustMode(t, "AES-256-CTS-CBC").Num), Flags: 2}
	nonce := bytes.Repeat([]byte{7}, 16)

	// The reference: the key in the filesystem's keyring.
	ref := newSB(t)
	_, p.Descriptor = addKey(t, tk, ref, 1, raw)
	want := make([]byte, 32)
	refDir := encryptedInode(t, tk, ref, p, nonce, 12, 0o40755, 12)
	if err := fscrypt.FnameEncrypt(tk, refDir, []byte("file"), want); err != nil {
		t.Fatal(err)
	}

	sb := newSB(t)
	if _, err := sb.NewEncryptedInode(tk, p, nonce, 12, 0o40755, 12); !errors.Is(err, errno.ENOKEY) {
		t.Fatalf("no key anywhere: %v, want ENOKEY", err)
	}
	desc := fscrypt.KeyDescPrefix + hex.EncodeToString(p.Descriptor[:])
	kr := &testKeyring{keys: map[string][]byte{desc: fscryptKeyPayload(raw, 64)}}
	tk.Cred = &kernel.Cred{UID: 1000, SessionKeyring: kr}
	dir, err := sb.NewEncryptedInode(tk, p, nonce, 12, 0o40755, 12)
	if err != nil {
		t.Fatalf("key in the session keyring: %v", err)
	}
	if len(kr.asked) != 1 || kr.asked[0] != "logon "+desc {
		t.Errorf("request_key calls %q, want one for logon %s", kr.asked, desc)
	}
	got := make([]byte, 32)
	if err := fscrypt.FnameEncrypt(tk, dir, []byte("file"), got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("name encrypted with the keyring's key\n %x, with the filesystem's\n %x", got, want)
	}
	if sb.MasterKeys().Len() != 0 {
		t.Error("the keyring's key was added to the filesystem")
	}

	// keyctl unlink: the unlocked inode keeps its key; a new one cannot.
	delete(kr.keys, desc)
	if !fscrypt.HasEncryptionKey(dir) {
		t.Error("the inode lost its key when the keyring's was unlinked")
	}
	if _, err := sb.NewEncryptedInode(tk, p, nonce, 13, 0o40755, 12); !errors.Is(err, errno.ENOKEY) {
		t.Errorf("after unlink: %v, want ENOKEY", err)
	}
	dir.Evict(tk)
	if fscrypt.HasEncryptionKey(dir) {
		t.Error("the evicted inode kept its key")
	}

	for _, c := range []struct {
		name    string
		payload []byte
		revoked bool
		want    error
		log     string
	}{
		{"payload too long", append(fscryptKeyPayload(raw, 64), 0), false, errno.ENOKEY, "has invalid payload"},
		{"size 0", fscryptKeyPayload(raw, 0), false, errno.ENOKEY, "has invalid payload"},
		{"size 65", fscryptKeyPayload(raw, 65), false, errno.ENOKEY, "has invalid payload"},
		{"short key", fscryptKeyPayload(raw, 16), false, errno.ENOKEY, "is too short (got 16 bytes, need 32+ bytes)"},
		{"revoked", fscryptKeyPayload(raw, 64), true, errno.EKEYREVOKED, ""},
	} {
		kr.keys[desc] = c.payload
		kr.revoked = map[string]bool{desc: c.revoked}
		before := len(tk.K.Log.Lines())
		_, err := sb.NewEncryptedInode(tk, p, nonce, 14, 0o40755, 12)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		lines := tk.K.Log.Lines()[before:]
		if c.log != "" && (len(lines) != 1 || !strings.Contains(lines[0], "key with description '"+desc+"' "+c.log)) {
			t.Errorf("%s: log %q, want %q", c.name, lines, c.log)
		}
	}

	// v2 policies never look at process keyrings.
	kr.asked = nil
	p2 := fscrypt.Policy{Version: fscrypt.PolicyV2, ContentsMode: p.ContentsMode, FilenamesMode: p.FilenamesMode}
	if _, err := sb.NewEncryptedInode(tk, p2, nonce, 15, 0o40755, 12); !errors.Is(err, errno.ENOKEY) || len(kr.asked) != 0 {
		t.Errorf("v2: %v after request_key %q, want ENOKEY and no request", err, kr.asked)
	}
}
