package fscrypt

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/keys"
)

// provisioningPayloadHeader is sizeof(struct fscrypt_provisioning_key_payload)
// without raw[]: __u32 type, __u32 __reserved.
const provisioningPayloadHeader = 8

// ProvisioningPayload is struct fscrypt_provisioning_key_payload: the raw
// key and the key specifier type (KeySpecTypeDescriptor or
// KeySpecTypeIdentifier) it may be added as.
type ProvisioningPayload struct {
	Type uint32
	Raw  []byte
}

// ProvisioningType is key_type_fscrypt_provisioning, "fscrypt-provisioning"
// (fs/crypto/keyring.c): a key in a process keyring that holds a raw
// master key for FS_IOC_ADD_ENCRYPTION_KEY's key_id, so that userspace can
// add it again after a remount without having the raw key. Its payload is
// struct fscrypt_provisioning_key_payload: type and __reserved (32 bits
// each, native endian), then 16..64 raw bytes; it charges the payload's
// length to the quota, describes itself as "DESC: DATALEN [TYPE]", and
// cannot be read back (no ->read: keyctl read is EOPNOTSUPP).
var ProvisioningType = &keys.Type{
	Name: "fscrypt-provisioning",
	// fscrypt_provisioning_key_preparse.
	Preparse: func(t *kernel.Task, prep *keys.Prep) error {
		d := prep.Data
		if len(d) < provisioningPayloadHeader+minKeySize || len(d) > provisioningPayloadHeader+maxRawKeySize {
			return errno.EINVAL
		}
		typ := binary.LittleEndian.Uint32(d[0:4])
		if typ != KeySpecTypeDescriptor && typ != KeySpecTypeIdentifier {
			return errno.EINVAL
		}
		if binary.LittleEndian.Uint32(d[4:8]) != 0 {
			return errno.EINVAL
		}
		prep.Payload = &ProvisioningPayload{Type: typ, Raw: append([]byte(nil), d[provisioningPayloadHeader:]...)}
		prep.Quotalen = len(d)
		return nil
	},
	// fscrypt_provisioning_key_free_preparse: kfree_sensitive.
	FreePreparse: func(t *kernel.Task, prep *keys.Prep) {
		if p, ok := prep.Payload.(*ProvisioningPayload); ok {
			clear(p.Raw)
		}
	},
	// fscrypt_provisioning_key_describe.
	Describe: func(k *keys.Key, b *strings.Builder) {
		b.WriteString(k.Description())
		if k.Positive() {
			if p, ok := k.Payload().(*ProvisioningPayload); ok {
				fmt.Fprintf(b, ": %d [%d]", k.Datalen(), p.Type)
			}
		}
	},
	// fscrypt_provisioning_key_destroy: kfree_sensitive.
	Destroy: func(t *kernel.Task, k *keys.Key) {
		if p, ok := k.Payload().(*ProvisioningPayload); ok {
			clear(p.Raw)
		}
	},
}

func init() { keys.RegisterType(ProvisioningType) }

// getKeyringKey is get_keyring_key: the raw key of the
// "fscrypt-provisioning" key keyID names (lookup_user_key with search
// permission), which must have been made for specifier type typ, so that
// a v1 key cannot be added as a v2 one or the reverse. Errors: the
// lookup's (ENOKEY, EKEYREVOKED, EKEYEXPIRED, EACCES), EKEYREJECTED.
func getKeyringKey(t *kernel.Task, cred *kernel.Cred, keyID uint32, typ uint32, secret *masterKeySecret) error {
	ref, err := keys.LookupUserKey(t, cred, int32(keyID), 0, keys.NeedSearch)
	if err != nil {
		return err
	}
	defer keys.KeyPut(t, ref.Key)
	if ref.Type() != ProvisioningType {
		return errno.EKEYREJECTED
	}
	p, ok := ref.Payload().(*ProvisioningPayload)
	if !ok || p.Type != typ {
		return errno.EKEYREJECTED
	}
	secret.size = copy(secret.raw[:], p.Raw)
	return nil
}
