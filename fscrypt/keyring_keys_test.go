package fscrypt_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/keys"
)

// keyUsersLine is uid's line of /proc/key-users, or "".
func keyUsersLine(t *kernel.Task, uid int) string {
	for _, l := range strings.Split(keys.ProcKeyUsers(t), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), fmt.Sprintf("%d:", uid)) {
			return l
		}
	}
	return ""
}

func addV2(t *kernel.Task, cred *kernel.Cred, sb fscrypt.SuperBlock, raw []byte) (fscrypt.KeySpecifier, error) {
	arg := &fscrypt.AddKeyArg{KeySpec: fscrypt.KeySpecifier{Type: fscrypt.KeySpecTypeIdentifier}, RawSize: uint32(len(raw)), Raw: raw}
	err := fscrypt.IoctlAddKey(t, cred, sb, arg)
	return arg.KeySpec, err
}

// TestKeyQuota: each user's claim to a v2 key is a ".fscrypt" key
// "<identifier>.uid.<uid>" in the master key's mk_users keyring
// ("fscrypt-<identifier>-users", root's and outside the quota), which
// charges the user one key and its description plus FSCRYPT_MAX_KEY_SIZE
// bytes (fs/crypto/keyring.c add_master_key_user,
// fscrypt_user_key_instantiate); past maxkeys the ioctl is EDQUOT, as
// xfstests' generic/581 checks; removing the claim or unmounting (the
// keyring destroyed) gives the quota back.
func TestKeyQuota(t *testing.T) {
	task := newTask(t)
	sb := newSB(t)
	user := &kernel.Cred{UID: 1000, GID: 1000}
	svc := keys.Of(task.K)
	if err := svc.WriteSysctl("maxkeys", []byte("5")); err != nil {
		t.Fatal(err)
	}
	var specs []fscrypt.KeySpecifier
	for i := 0; i < 5; i++ {
		spec, err := addV2(task, user, sb, bytes.Repeat([]byte{byte(i + 1)}, 64))
		if err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
		specs = append(specs, spec)
	}
	// 5 keys of 41 bytes of description, a NUL and 64 bytes.
	if got := keyUsersLine(task, 1000); got != " 1000:     5 5/5 5/5 530/20000" {
		t.Errorf("/proc/key-users at the quota: %q", got)
	}
	if _, err := addV2(task, user, sb, bytes.Repeat([]byte{9}, 64)); err != errno.EDQUOT {
		t.Fatalf("sixth key: %v, want EDQUOT", err)
	}
	if sb.MasterKeys().Len() != 5 {
		t.Errorf("the refused key is in the keyring: %d keys", sb.MasterKeys().Len())
	}
	// Adding one of them again as the same user charges nothing.
	if _, err := addV2(task, user, sb, bytes.Repeat([]byte{1}, 64)); err != nil {
		t.Errorf("re-adding: %v", err)
	}
	id := specs[0]
	// Each key is viewable by its owner: the claim by the user, mk_users
	// by root.
	line := func(cred *kernel.Cred, desc string) string {
		for _, l := range strings.Split(keys.ProcKeys(task, cred), "\n") {
			if strings.HasSuffix(l, " "+desc) || strings.Contains(l, " "+desc+":") {
				return l
			}
		}
		return ""
	}
	idHex := hex.EncodeToString(id.U[:fscrypt.KeyIdentifierSize])
	if l := line(user, idHex+".uid.1000"); !strings.Contains(l, " I--Q---     1 perm 08010000  1000  1000 .fscrypt  ") {
		t.Errorf("the claim's /proc/keys line %q", l)
	}
	if l := line(kernel.RootCred, "fscrypt-"+idHex+"-users"); !strings.Contains(l, " I------     1 perm 080b0000     0     0 keyring   ") || !strings.HasSuffix(l, "-users: 1") {
		t.Errorf("mk_users's /proc/keys line %q", l)
	}
	rm := &fscrypt.RemoveKeyArg{KeySpec: id}
	if err := fscrypt.IoctlRemoveKey(task, user, sb, rm); err != nil {
		t.Fatal(err)
	}
	if got := keyUsersLine(task, 1000); got != " 1000:     4 4/4 4/5 424/20000" {
		t.Errorf("after removing one key: %q", got)
	}
	fscrypt.DestroyKeyring(task, sb)
	if got := keyUsersLine(task, 1000); got != "" {
		t.Errorf("after the keyring is destroyed: %q", got)
	}
	if ks := keys.ProcKeys(task, user); strings.Contains(ks, ".uid.1000") {
		t.Errorf("a claim outlived the keyring:\n%s", ks)
	}
}

// provisioning is struct fscrypt_provisioning_key_payload: type,
// __reserved, raw.
func provisioning(typ, reserved uint32, raw []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, typ)
	b = binary.LittleEndian.AppendUint32(b, reserved)
	return append(b, raw...)
}

// TestProvisioningKeys: an "fscrypt-provisioning" key holds a raw key
// for FS_IOC_ADD_ENCRYPTION_KEY's key_id (get_keyring_key): its payload is
// checked when it is added (EINVAL for a bad type, reserved word or raw
// size), it cannot be read back (EOPNOTSUPP), it describes itself as
// "DESC: LEN [TYPE]", and only one of the type the key specifier asks
// for is accepted (EKEYREJECTED otherwise, and for any other key type),
// as xfstests' generic/593 checks. The key added through it is the one
// the raw key gives.
func TestProvisioningKeys(t *testing.T) {
	task := newTask(t)
	sb := newSB(t)
	ses, err := keys.JoinSessionKeyring(task, kernel.RootCred)
	if err != nil {
		t.Fatal(err)
	}
	root := &kernel.Cred{UID: 0, CapSysAdmin: true, CapFowner: true, SessionKeyring: ses}
	raw := bytes.Repeat([]byte{0x42}, 64)
	for _, c := range []struct {
		name    string
		payload []byte
	}{
		{"type 0", provisioning(0, 0, raw)},
		{"type 10000", provisioning(10000, 0, raw)},
		{"reserved", provisioning(1, 1, raw)},
		{"raw key too small", provisioning(1, 0, raw[:15])},
		{"raw key too large", provisioning(1, 0, append(raw, raw...))},
	} {
		if _, err := keys.AddKey(task, root, "fscrypt-provisioning", "desc", c.payload, keys.SpecSessionKeyring); err != errno.EINVAL {
			t.Errorf("%s: %v, want EINVAL", c.name, err)
		}
	}
	v1, err := keys.AddKey(task, root, "fscrypt-provisioning", "v1", provisioning(fscrypt.KeySpecTypeDescriptor, 0, raw), keys.SpecSessionKeyring)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := keys.AddKey(task, root, "fscrypt-provisioning", "v2", provisioning(fscrypt.KeySpecTypeIdentifier, 0, raw), keys.SpecSessionKeyring)
	if err != nil {
		t.Fatal(err)
	}
	logon, err := keys.AddKey(task, root, "logon", "foo:desc", raw, keys.SpecSessionKeyring)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := keys.KeyctlRead(task, root, v1); err != errno.EOPNOTSUPP {
		t.Errorf("keyctl read: %v, want EOPNOTSUPP", err)
	}
	// /proc/keys prints the type in 9 columns at most ("%-9.9s").
	if !strings.Contains(keys.ProcKeys(task, root), " fscrypt-p v2: 72 [2]\n") {
		t.Errorf("/proc/keys lacks the provisioning key's description:\n%s", keys.ProcKeys(task, root))
	}
	desc := fscrypt.DescriptorSpec(fscrypt.KeyDescriptor(raw))
	idSpec := fscrypt.KeySpecifier{Type: fscrypt.KeySpecTypeIdentifier}
	for _, c := range []struct {
		name  string
		spec  fscrypt.KeySpecifier
		keyID int32
		want  error
	}{
		{"v1 key as v2", idSpec, v1, errno.EKEYREJECTED},
		{"v2 key as v1", desc, v2, errno.EKEYREJECTED},
		{"logon key", idSpec, logon, errno.EKEYREJECTED},
		{"no such key", idSpec, 12345, errno.ENOKEY},
		{"v1", desc, v1, nil},
		{"v2", idSpec, v2, nil},
	} {
		arg := &fscrypt.AddKeyArg{KeySpec: c.spec, KeyID: uint32(c.keyID)}
		if err := fscrypt.IoctlAddKey(task, root, sb, arg); err != c.want {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
			continue
		}
		if c.want != nil {
			continue
		}
		if c.spec.Type == fscrypt.KeySpecTypeIdentifier {
			want, _ := addV2(task, root, newSB(t), raw)
			if arg.KeySpec != want {
				t.Errorf("key_id gave identifier %s, the raw key %s", arg.KeySpec.String(), want.String())
			}
		}
		st := &fscrypt.GetKeyStatusArg{KeySpec: arg.KeySpec}
		if err := fscrypt.IoctlGetKeyStatus(task, root, sb, st); err != nil || st.Status != fscrypt.KeyStatusPresent {
			t.Errorf("%s: status %d, %v", c.name, st.Status, err)
		}
	}
	// A revoked provisioning key is refused with EKEYREVOKED.
	if err := keys.KeyctlRevoke(task, root, v2); err != nil {
		t.Fatal(err)
	}
	if err := fscrypt.IoctlAddKey(task, root, newSB(t), &fscrypt.AddKeyArg{KeySpec: idSpec, KeyID: uint32(v2)}); err != errno.EKEYREVOKED {
		t.Errorf("revoked: %v, want EKEYREVOKED", err)
	}
}
