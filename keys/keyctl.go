package keys

import (
	"fmt"
	"strings"
	"syscall"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// The system calls of security/keys/keyctl.c. Each runs as the process
// whose credentials cred are, on t.

// maxPayload is add_key's limit on the payload (1 MiB - 1).
const maxPayload = 1024*1024 - 1

// AddKey is add_key(2) (SYSCALL_DEFINE5(add_key)): create a key of type
// typ with description desc (empty: the type makes one from the payload)
// and payload data in the keyring ringID names, or update the key of
// that type and description there when the type can update; it returns
// the key's serial. Errors: EINVAL (payload too big, no description),
// EPERM (a keyring whose name starts with '.'), ENODEV (unknown type),
// ENOTDIR, EACCES, EKEYREVOKED, EDQUOT, the type's preparse's.
func AddKey(t *kernel.Task, cred *kernel.Cred, typ, desc string, data []byte, ringID int32) (int32, error) {
	if len(data) > maxPayload {
		return 0, errno.EINVAL
	}
	if desc != "" && desc[0] == '.' && strings.HasPrefix(typ, "keyring") {
		return 0, errno.EPERM
	}
	s := Of(t.K)
	s.mu.Lock()
	defer s.mu.Unlock()
	ring, err := s.lookupUserKey(t, cred, ringID, LookupCreate, NeedWrite)
	if err != nil {
		return 0, err
	}
	defer s.put(t, ring.Key)
	k, err := s.createOrUpdate(t, cred, ring, typ, desc, data, PermUndef, AllocInQuota)
	if err != nil {
		return 0, err
	}
	defer s.put(t, k)
	return k.serial, nil
}

// createOrUpdate is __key_create_or_update with allow_update: the key, with a
// reference.
func (s *Service) createOrUpdate(t *kernel.Task, cred *kernel.Cred, ring KeyRef, typName, desc string, data []byte, perm uint32, flags int) (*Key, error) {
	if cred == nil {
		cred = kernel.RootCred
	}
	typ, err := LookupType(typName)
	if err != nil {
		return nil, errno.ENODEV
	}
	if desc == "" && typ.Preparse == nil {
		return nil, errno.EINVAL
	}
	if ring.typ != KeyringType {
		return nil, errno.ENOTDIR
	}
	prep := &Prep{Description: desc, Data: data, Quotalen: typ.DefDatalen}
	if typ.Preparse != nil {
		if err := typ.Preparse(t, prep); err != nil {
			return nil, err
		}
		defer typ.freePreparse(t, prep)
		if desc == "" {
			desc = prep.Description
		}
		if desc == "" {
			return nil, errno.EINVAL
		}
	}
	// __key_link_begin: a revoked keyring takes no link, and a new link
	// (not one replacing a key of the same index) reserves its quota.
	if ring.flag(FlagRevoked) {
		return nil, errno.EKEYREVOKED
	}
	existing := ring.findLink(typ, desc)
	if existing < 0 {
		if err := ring.PayloadReserve(ring.datalen + linkBytes); err != nil {
			return nil, err
		}
	}
	release := func() {
		if existing < 0 {
			ring.PayloadReserve(ring.datalen - linkBytes)
		}
	}
	if err := s.permission(ring, cred, NeedWrite); err != nil {
		release()
		return nil, err
	}
	if typ.Update != nil && existing >= 0 {
		if old := ring.keys[existing]; !old.flag(FlagInvalidated) && !old.flag(FlagRevoked) {
			// found_matching_key: __key_update.
			if err := s.permission(KeyRef{old, ring.Possessed}, cred, NeedWrite); err != nil {
				return nil, err
			}
			if err := typ.Update(t, old, prep); err != nil {
				return nil, err
			}
			if old.state != statePositive {
				old.user.NIKeys++
			}
			old.state = statePositive
			return old.get(), nil
		}
	}
	if perm == PermUndef {
		perm = PosView | PosSearch | PosLink | PosSetattr | UsrView
		if typ.Read != nil {
			perm |= PosRead
		}
		if typ == KeyringType || typ.Update != nil {
			perm |= PosWrite
		}
	}
	k, err := s.keyAlloc(t, typ, desc, cred.UID, cred.GID, perm, flags)
	if err != nil {
		release()
		return nil, err
	}
	if err := s.instantiate(t, k, prep); err != nil {
		release()
		s.put(t, k)
		return nil, err
	}
	// __key_link: the link, replacing one of the same index, whose
	// quota the reservation above already holds for a new one.
	if existing >= 0 {
		old := ring.keys[existing]
		ring.keys[existing] = k.get()
		s.put(t, old)
	} else {
		ring.keys = append(ring.keys, k.get())
	}
	return k, nil
}

// RequestKey is request_key(2) without callout information: the key of
// type typ and description desc that the caller's keyrings reach (the
// session keyring, or the user session keyring without one), linked
// into destID's keyring when destID is not 0; its serial. Errors: ENOKEY
// (none; no upcall is made), EKEYREVOKED, EKEYEXPIRED, EACCES, EPERM (a
// type whose name starts with '.').
func RequestKey(t *kernel.Task, cred *kernel.Cred, typ, desc string, destID int32) (int32, error) {
	if strings.HasPrefix(typ, ".") {
		return 0, errno.EPERM
	}
	s := Of(t.K)
	s.mu.Lock()
	defer s.mu.Unlock()
	var dest *Key
	if destID != 0 {
		ref, err := s.lookupUserKey(t, cred, destID, LookupCreate, NeedWrite)
		if err != nil {
			return 0, err
		}
		defer s.put(t, ref.Key)
		dest = ref.Key
	}
	ktype, err := LookupType(typ)
	if err != nil {
		return 0, err
	}
	k, err := s.searchProcessKeyrings(t, cred, ktype, desc)
	if err != nil {
		return 0, err
	}
	defer s.put(t, k)
	if dest != nil {
		if err := s.link(t, dest, k); err != nil {
			return 0, err
		}
	}
	return k.serial, nil
}

// searchProcessKeyrings is search_process_keyrings_rcu: the session
// keyring, or the user session keyring without one. Errors: ENOKEY, or
// why a matching key was skipped.
func (s *Service) searchProcessKeyrings(t *kernel.Task, cred *kernel.Cred, typ *Type, desc string) (*Key, error) {
	if cred == nil {
		cred = kernel.RootCred
	}
	top := sessionOf(cred)
	if top == nil {
		top = s.findUserSession(cred.UID)
	}
	if top == nil {
		return nil, errno.ENOKEY
	}
	k, err := s.search(KeyRef{top, true}, &searchCtx{typ: typ, desc: desc, cred: cred, recurse: true})
	if err == errno.EAGAIN {
		err = errno.ENOKEY
	}
	return k, err
}

// withKey runs fn under the service's lock on the key id names, looked
// up as lookup_user_key(id, lflags, need), and drops the lookup's
// reference afterwards. Errors: the lookup's, fn's.
func withKey(t *kernel.Task, cred *kernel.Cred, id int32, lflags int, need Need, fn func(s *Service, ref KeyRef) error) error {
	s := Of(t.K)
	s.mu.Lock()
	defer s.mu.Unlock()
	ref, err := s.lookupUserKey(t, cred, id, lflags, need)
	if err != nil {
		return err
	}
	defer s.put(t, ref.Key)
	return fn(s, ref)
}

// KeyctlGetKeyringID is KEYCTL_GET_KEYRING_ID: the serial of the keyring
// id names (a KEY_SPEC_* one made when create is set).
func KeyctlGetKeyringID(t *kernel.Task, cred *kernel.Cred, id int32, create bool) (int32, error) {
	lflags := 0
	if create {
		lflags = LookupCreate
	}
	var serial int32
	err := withKey(t, cred, id, lflags, NeedSearch, func(s *Service, ref KeyRef) error {
		serial = ref.serial
		return nil
	})
	return serial, err
}

// KeyctlUpdate is KEYCTL_UPDATE: new data for the key. Errors: EOPNOTSUPP
// (a type without update), EACCES, the lookup's and the type's.
func KeyctlUpdate(t *kernel.Task, cred *kernel.Cred, id int32, data []byte) error {
	if len(data) > maxPayload {
		return errno.EINVAL
	}
	return withKey(t, cred, id, 0, NeedWrite, func(s *Service, ref KeyRef) error {
		k := ref.Key
		if k.typ.Update == nil {
			return errno.EOPNOTSUPP
		}
		prep := &Prep{Data: data, Quotalen: k.typ.DefDatalen}
		if k.typ.Preparse != nil {
			if err := k.typ.Preparse(t, prep); err != nil {
				return err
			}
			defer k.typ.freePreparse(t, prep)
		}
		if err := k.typ.Update(t, k, prep); err != nil {
			return err
		}
		if k.state != statePositive {
			k.user.NIKeys++
		}
		k.state = statePositive
		return nil
	})
}

// KeyctlRevoke is KEYCTL_REVOKE (keyctl_revoke_key): write or setattr
// permission. Errors: EPERM (a key to keep), the lookup's.
func KeyctlRevoke(t *kernel.Task, cred *kernel.Cred, id int32) error {
	s := Of(t.K)
	s.mu.Lock()
	defer s.mu.Unlock()
	ref, err := s.lookupUserKey(t, cred, id, 0, NeedWrite)
	if err == errno.EACCES {
		ref, err = s.lookupUserKey(t, cred, id, 0, NeedSetattr)
	}
	if err != nil {
		return err
	}
	defer s.put(t, ref.Key)
	if ref.flag(FlagKeep) {
		return errno.EPERM
	}
	s.revoke(t, ref.Key)
	return nil
}

// KeyctlInvalidate is KEYCTL_INVALIDATE (keyctl_invalidate_key): search
// permission; the key is unlinked from every keyring at once.
func KeyctlInvalidate(t *kernel.Task, cred *kernel.Cred, id int32) error {
	return withKey(t, cred, id, 0, NeedSearch, func(s *Service, ref KeyRef) error {
		if ref.flag(FlagKeep) {
			return errno.EPERM
		}
		s.invalidate(t, ref.Key)
		return nil
	})
}

// KeyctlClear is KEYCTL_CLEAR (keyctl_keyring_clear). Errors: ENOTDIR,
// EPERM, the lookup's.
func KeyctlClear(t *kernel.Task, cred *kernel.Cred, ringID int32) error {
	return withKey(t, cred, ringID, LookupCreate, NeedWrite, func(s *Service, ref KeyRef) error {
		if ref.flag(FlagKeep) {
			return errno.EPERM
		}
		return s.clearRing(t, ref.Key)
	})
}

// KeyctlLink is KEYCTL_LINK (keyctl_keyring_link). Errors: link's, the
// lookups'.
func KeyctlLink(t *kernel.Task, cred *kernel.Cred, id, ringID int32) error {
	s := Of(t.K)
	s.mu.Lock()
	defer s.mu.Unlock()
	ring, err := s.lookupUserKey(t, cred, ringID, LookupCreate, NeedWrite)
	if err != nil {
		return err
	}
	defer s.put(t, ring.Key)
	k, err := s.lookupUserKey(t, cred, id, LookupCreate, NeedLink)
	if err != nil {
		return err
	}
	defer s.put(t, k.Key)
	return s.link(t, ring.Key, k.Key)
}

// KeyctlUnlink is KEYCTL_UNLINK (keyctl_keyring_unlink). Errors: ENOENT
// (not linked there), EPERM, the lookups'.
func KeyctlUnlink(t *kernel.Task, cred *kernel.Cred, id, ringID int32) error {
	s := Of(t.K)
	s.mu.Lock()
	defer s.mu.Unlock()
	ring, err := s.lookupUserKey(t, cred, ringID, 0, NeedWrite)
	if err != nil {
		return err
	}
	defer s.put(t, ring.Key)
	k, err := s.lookupUserKey(t, cred, id, LookupPartial, NeedUnlink)
	if err != nil {
		return err
	}
	defer s.put(t, k.Key)
	if ring.flag(FlagKeep) && k.flag(FlagKeep) {
		return errno.EPERM
	}
	return s.unlink(t, ring.Key, k.Key)
}

// KeyctlDescribe is KEYCTL_DESCRIBE (keyctl_describe_key):
// "TYPE;UID;GID;PERM;DESCRIPTION", PERM in 8 hex digits.
func KeyctlDescribe(t *kernel.Task, cred *kernel.Cred, id int32) (string, error) {
	var d string
	err := withKey(t, cred, id, LookupPartial, NeedView, func(s *Service, ref KeyRef) error {
		k := ref.Key
		d = fmt.Sprintf("%s;%d;%d;%08x;%s", k.typ.Name, k.uid, mungedGID(k.gid), k.perm, k.desc)
		return nil
	})
	return d, err
}

// mungedGID is from_kgid_munged: INVALID_GID shows as the overflow gid.
func mungedGID(gid uint32) int64 {
	if gid == invalidGID {
		return 65534
	}
	return int64(gid)
}

// KeyctlSearch is KEYCTL_SEARCH (keyctl_keyring_search): the key of type
// typ and description desc in the keyring ringID names or the keyrings
// it links, linked into destID's keyring when destID is not 0. Errors:
// ENOKEY (none, or an unknown type), EKEYREVOKED, EKEYEXPIRED, EACCES,
// the lookups'.
func KeyctlSearch(t *kernel.Task, cred *kernel.Cred, ringID int32, typ, desc string, destID int32) (int32, error) {
	s := Of(t.K)
	s.mu.Lock()
	defer s.mu.Unlock()
	ring, err := s.lookupUserKey(t, cred, ringID, 0, NeedSearch)
	if err != nil {
		return 0, err
	}
	defer s.put(t, ring.Key)
	var dest *Key
	if destID != 0 {
		d, err := s.lookupUserKey(t, cred, destID, LookupCreate, NeedWrite)
		if err != nil {
			return 0, err
		}
		defer s.put(t, d.Key)
		dest = d.Key
	}
	ktype, err := LookupType(typ)
	if err != nil {
		return 0, err
	}
	k, err := s.search(ring, &searchCtx{typ: ktype, desc: desc, cred: cred, recurse: true})
	if err == errno.EAGAIN {
		err = errno.ENOKEY
	}
	if err != nil {
		return 0, err
	}
	defer s.put(t, k)
	if dest != nil {
		if err := s.permission(KeyRef{k, ring.Possessed}, cred, NeedLink); err != nil {
			return 0, err
		}
		if err := s.link(t, dest, k); err != nil {
			return 0, err
		}
	}
	return k.serial, nil
}

// KeyctlRead is KEYCTL_READ (keyctl_read_key): the payload, with read
// permission or possession. Errors: ENOKEY (no such key), EOPNOTSUPP (a
// type that cannot be read: logon, fscrypt-provisioning), EKEYREVOKED,
// EKEYEXPIRED, EACCES, a negative key's error.
func KeyctlRead(t *kernel.Task, cred *kernel.Cred, id int32) ([]byte, error) {
	s := Of(t.K)
	s.mu.Lock()
	defer s.mu.Unlock()
	ref, err := s.lookupUserKey(t, cred, id, 0, NeedDefer)
	if err != nil {
		return nil, errno.ENOKEY
	}
	defer s.put(t, ref.Key)
	k := ref.Key
	if k.state < 0 {
		return nil, syscall.Errno(-k.state)
	}
	if err := s.permission(ref, cred, NeedRead); err != nil && !ref.Possessed {
		return nil, errno.EACCES
	}
	if k.typ.Read == nil {
		return nil, errno.EOPNOTSUPP
	}
	// __keyctl_read_key: the key must still be valid.
	if err := s.validate(k); err != nil {
		return nil, err
	}
	return k.typ.Read(k)
}

// KeyctlSetperm is KEYCTL_SETPERM (keyctl_setperm_key): only the owner
// (or CAP_SYS_ADMIN) with setattr permission. Errors: EINVAL (bits
// outside the four groups), EACCES.
func KeyctlSetperm(t *kernel.Task, cred *kernel.Cred, id int32, perm uint32) error {
	if perm&^(PosAll|UsrAll|GrpAll|OthAll) != 0 {
		return errno.EINVAL
	}
	if cred == nil {
		cred = kernel.RootCred
	}
	return withKey(t, cred, id, LookupCreate|LookupPartial, NeedSetattr, func(s *Service, ref KeyRef) error {
		if !cred.CapSysAdmin && ref.uid != cred.UID {
			return errno.EACCES
		}
		ref.perm = perm
		return nil
	})
}

// KeyctlSetTimeout is KEYCTL_SET_TIMEOUT (keyctl_set_timeout): the key
// expires timeout seconds from now (0: never). Errors: EPERM (a key to
// keep), the lookup's.
func KeyctlSetTimeout(t *kernel.Task, cred *kernel.Cred, id int32, timeout uint32) error {
	return withKey(t, cred, id, LookupCreate|LookupPartial, NeedSetattr, func(s *Service, ref KeyRef) error {
		if ref.flag(FlagKeep) {
			return errno.EPERM
		}
		ref.expiry = timeMax
		if timeout != 0 {
			ref.expiry = s.now() + int64(timeout)
		}
		return nil
	})
}
