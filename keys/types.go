package keys

import (
	"fmt"
	"strings"
	"sync"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// Prep is struct key_preparsed_payload: what add_key gave (Data) and
// what the type's preparse makes of it.
type Prep struct {
	// Description is the description add_key gave (orig_description).
	Description string
	Data        []byte
	// Payload is the type's parsed payload, moved into the key by its
	// instantiate.
	Payload any
	// Quotalen is the data the key charges to its owner's quota.
	Quotalen int
	// Expiry is the expiry time the preparse asks for (0: none).
	Expiry int64
}

// Type is struct key_type. The operations run under the service's lock;
// nil ones are absent, as in the kernel (no Read: keyctl_read is
// EOPNOTSUPP; no Update: add_key of an existing description links a
// new key instead of updating it).
type Type struct {
	Name string
	// DefDatalen is the quota a key of this type charges before its
	// instantiation (def_datalen).
	DefDatalen     int
	VetDescription func(desc string) error
	Preparse       func(t *kernel.Task, prep *Prep) error
	FreePreparse   func(t *kernel.Task, prep *Prep)
	// Instantiate is ->instantiate; nil is generic_key_instantiate.
	Instantiate func(t *kernel.Task, k *Key, prep *Prep) error
	Update      func(t *kernel.Task, k *Key, prep *Prep) error
	Revoke      func(t *kernel.Task, k *Key)
	Destroy     func(t *kernel.Task, k *Key)
	// Describe writes what /proc/keys shows after the key's fixed
	// columns, and what keyctl describe shows after the type, uid, gid
	// and permissions.
	Describe func(k *Key, b *strings.Builder)
	// Read is ->read: the payload as keyctl read returns it.
	Read func(k *Key) ([]byte, error)
}

func (typ *Type) freePreparse(t *kernel.Task, prep *Prep) {
	if typ.FreePreparse != nil {
		typ.FreePreparse(t, prep)
	}
}

// types is key_types_list.
var types = struct {
	sync.RWMutex
	m map[string]*Type
}{m: map[string]*Type{}}

// RegisterType is register_key_type, from a package's init: a built-in
// key type on every machine. A name registered twice panics (EEXIST at
// boot).
func RegisterType(typ *Type) {
	types.Lock()
	defer types.Unlock()
	if _, ok := types.m[typ.Name]; ok {
		panic("register_key_type: " + typ.Name + " already registered")
	}
	types.m[typ.Name] = typ
}

// LookupType is key_type_lookup: ENOKEY for an unknown type.
func LookupType(name string) (*Type, error) {
	types.RLock()
	defer types.RUnlock()
	if typ, ok := types.m[name]; ok {
		return typ, nil
	}
	return nil, errno.ENOKEY
}

// UserPayload is struct user_key_payload: the data of a "user" or
// "logon" key.
type UserPayload struct{ Data []byte }

// userPreparse is user_preparse: 1..32767 bytes of data, charged in
// full.
func userPreparse(t *kernel.Task, prep *Prep) error {
	if len(prep.Data) == 0 || len(prep.Data) > 32767 {
		return errno.EINVAL
	}
	prep.Quotalen = len(prep.Data)
	prep.Payload = &UserPayload{Data: append([]byte(nil), prep.Data...)}
	return nil
}

// userUpdate is user_update: the new data replaces the old, reserving
// its size.
func userUpdate(t *kernel.Task, k *Key, prep *Prep) error {
	if err := k.PayloadReserve(len(prep.Data)); err != nil {
		return err
	}
	k.expiry = timeMax
	if prep.Expiry != 0 {
		k.expiry = prep.Expiry
	}
	if p, ok := k.payload.(*UserPayload); ok {
		clear(p.Data)
	}
	k.payload = prep.Payload
	prep.Payload = nil
	return nil
}

// userRevoke is user_revoke: the payload goes and its quota with it.
func userRevoke(t *kernel.Task, k *Key) {
	k.PayloadReserve(0)
	userDestroy(t, k)
}

// userDestroy is user_destroy (kfree_sensitive of the payload).
func userDestroy(t *kernel.Task, k *Key) {
	if p, ok := k.payload.(*UserPayload); ok {
		clear(p.Data)
	}
	k.payload = nil
}

// userDescribe is user_describe: "DESC: DATALEN" when instantiated.
func userDescribe(k *Key, b *strings.Builder) {
	b.WriteString(k.desc)
	if k.Positive() {
		fmt.Fprintf(b, ": %d", k.datalen)
	}
}

// userRead is user_read.
func userRead(k *Key) ([]byte, error) {
	p, _ := k.payload.(*UserPayload)
	if p == nil {
		return nil, nil
	}
	return append([]byte(nil), p.Data...), nil
}

// logonVetDescription is logon_vet_description: a "service:" prefix is
// required.
func logonVetDescription(desc string) error {
	i := strings.IndexByte(desc, ':')
	if i <= 0 {
		return errno.EINVAL
	}
	return nil
}

// UserType and LogonType are key_type_user and key_type_logon
// (security/keys/user_defined.c); a logon key cannot be read back.
var (
	UserType = &Type{Name: "user", Preparse: userPreparse, Update: userUpdate, Revoke: userRevoke,
		Destroy: userDestroy, Describe: userDescribe, Read: userRead}
	LogonType = &Type{Name: "logon", Preparse: userPreparse, Update: userUpdate, Revoke: userRevoke,
		Destroy: userDestroy, Describe: userDescribe, VetDescription: logonVetDescription}
)

func init() {
	RegisterType(KeyringType)
	RegisterType(UserType)
	RegisterType(LogonType)
}
