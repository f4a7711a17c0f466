package kernel

import "fmt"

// Cred is struct cred (include/linux/cred.h), reduced to what the model's
// permission checks read: the filesystem uid (current_fsuid(), which the
// fscrypt key ioctls record as a key's user) and the capabilities
// capable() tests. A process holds one and passes it to the syscalls that
// check it; a Cred is never changed once handed out (commit_creds
// replaces it).
type Cred struct {
	// UID is the fsuid.
	UID uint32
	// GID is the fsgid and Groups the supplementary groups (group_info),
	// which in_group_p searches.
	GID    uint32
	Groups []uint32
	// CapSysAdmin and CapFowner are CAP_SYS_ADMIN and CAP_FOWNER in
	// cap_effective.
	CapSysAdmin bool
	CapFowner   bool
	// SessionKeyring is session_keyring: the keyring request_key(2)
	// searches on the process's behalf (security/keys/process_keys.c
	// search_process_keyrings_rcu, reduced to the session keyring); nil
	// when the process has none.
	SessionKeyring KeyringLookup
}

// KeyringLookup is what the kernel's own users of request_key() (fscrypt's
// legacy v1 keys, fs/crypto/keysetup_v1.c find_and_lock_process_key) need
// of a process's keyrings.
type KeyringLookup interface {
	// RequestKey is request_key(type, description, NULL) for a key
	// already present: the payload of the key of type typ ("logon")
	// whose description is desc. The payload stays the key's: the caller
	// reads it before the keyring can change (the kernel holds key->sem).
	// Errors: ENOKEY when there is no such key, EKEYREVOKED when it was
	// revoked.
	RequestKey(typ, desc string) ([]byte, error)
}

// InGroupP is kernel/groups.c in_group_p: gid is the fsgid or one of
// the supplementary groups.
func (c *Cred) InGroupP(gid uint32) bool {
	if c.GID == gid {
		return true
	}
	for _, g := range c.Groups {
		if g == gid {
			return true
		}
	}
	return false
}

// RootCred is init's credentials: uid 0 with every capability.
var RootCred = &Cred{UID: 0, CapSysAdmin: true, CapFowner: true}

// String is the canonical one-line dump.
func (c *Cred) String() string {
	if c == nil {
		return "cred <nil>"
	}
	return fmt.Sprintf("cred uid=%d sys_admin=%t fowner=%t", c.UID, c.CapSysAdmin, c.CapFowner)
}
