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
	// CapSysAdmin and CapFowner are CAP_SYS_ADMIN and CAP_FOWNER in
	// cap_effective.
	CapSysAdmin bool
	CapFowner   bool
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
