package keys

import (
	"fmt"
	"syscall"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// KeyRef is key_ref_t: a key and whether the caller possesses it (found
// it through its own keyrings), which adds the possessor's permissions.
type KeyRef struct {
	*Key
	Possessed bool
}

// The special key IDs of add_key, keyctl and request_key
// (include/uapi/linux/keyctl.h KEY_SPEC_*).
const (
	SpecThreadKeyring      = -1
	SpecProcessKeyring     = -2
	SpecSessionKeyring     = -3
	SpecUserKeyring        = -4
	SpecUserSessionKeyring = -5
	SpecGroupKeyring       = -6
	SpecReqkeyAuthKey      = -7
)

// Lookup flags (KEY_LOOKUP_*).
const (
	LookupCreate  = 0x01
	LookupPartial = 0x02
)

// SessionHolder is what a kernel.Cred's SessionKeyring holds when it
// names a keyring of this package: the process's session keyring
// (cred->session_keyring), looked up when it is used so that one joined
// later (keyctl new_session) reaches every process holding it. A *Key
// is one, naming itself.
type SessionHolder interface {
	SessionKeyring() *Key
}

// SessionKeyring implements SessionHolder.
func (k *Key) SessionKeyring() *Key { return k }

// RequestKey implements kernel.KeyringLookup for a session keyring:
// request_key(typ, desc, NULL) of a key reachable from it, without an
// upcall. Errors: ENOKEY (none), EKEYREVOKED, EKEYEXPIRED.
func (k *Key) RequestKey(typ, desc string) ([]byte, error) {
	return requestKeyPayload(k, typ, desc)
}

// requestKeyPayload searches session (possessed, recursively) for the
// key of type typ and description desc and returns its payload.
func requestKeyPayload(session *Key, typ, desc string) ([]byte, error) {
	ktype, err := LookupType(typ)
	if err != nil {
		return nil, err
	}
	s := session.svc
	s.mu.Lock()
	defer s.mu.Unlock()
	k, err := s.search(KeyRef{session, true}, &searchCtx{typ: ktype, desc: desc, recurse: true, noCheckPerm: true, peek: true})
	if err == errno.EAGAIN {
		err = errno.ENOKEY
	}
	if err != nil {
		return nil, err
	}
	p, _ := k.payload.(*UserPayload)
	if p == nil {
		return nil, nil
	}
	return p.Data, nil
}

// sessionOf is cred->session_keyring, or nil.
func sessionOf(cred *kernel.Cred) *Key {
	if cred == nil {
		return nil
	}
	if h, ok := cred.SessionKeyring.(SessionHolder); ok {
		return h.SessionKeyring()
	}
	return nil
}

// permission is key_task_permission (security/keys/permission.c): the
// owner's bits for the owner, the group's for a member of the key's
// group, the others' otherwise; the possessor's bits add to those for a
// possessed key.
func (s *Service) permission(ref KeyRef, cred *kernel.Cred, need Need) error {
	var mask uint32
	switch need {
	case NeedUnlink, NeedDefer:
		return nil
	case NeedView:
		mask = 0x01
	case NeedRead:
		mask = 0x02
	case NeedWrite:
		mask = 0x04
	case NeedSearch:
		mask = 0x08
	case NeedLink:
		mask = 0x10
	case NeedSetattr:
		mask = 0x20
	default:
		return errno.EACCES
	}
	if cred == nil {
		cred = kernel.RootCred
	}
	k := ref.Key
	var kperm uint32
	switch {
	case k.uid == cred.UID:
		kperm = k.perm >> 16
	case k.gid != invalidGID && k.perm&GrpAll != 0 && cred.InGroupP(k.gid):
		kperm = k.perm >> 8
	default:
		kperm = k.perm
	}
	if ref.Possessed {
		kperm |= k.perm >> 24
	}
	if kperm&mask != mask {
		return errno.EACCES
	}
	return nil
}

// invalidGID is INVALID_GID: a key with no group.
const invalidGID = ^uint32(0)

// getUserRegister is get_user_register: the user namespace's register of
// user keyrings, ".user_reg", made on first use.
func (s *Service) getUserRegister(t *kernel.Task) (*Key, error) {
	if s.userReg != nil {
		return s.userReg, nil
	}
	reg, err := s.keyringAlloc(t, ".user_reg", 0, invalidGID, PosWrite|PosSearch|UsrView|UsrRead, AllocInQuota, nil)
	if err != nil {
		return nil, err
	}
	s.userReg = reg
	return reg, nil
}

// lookUpUserKeyrings is look_up_user_keyrings: the user keyring
// "_uid.UID" and the user session keyring "_uid_ses.UID" of the caller's
// uid, made on first use (charged to the uid, the session one linking
// the user one), with references.
func (s *Service) lookUpUserKeyrings(t *kernel.Task, cred *kernel.Cred) (user, userSession *Key, err error) {
	reg, err := s.getUserRegister(t)
	if err != nil {
		return nil, nil, err
	}
	perm := uint32(PosAll&^PosSetattr | UsrAll)
	find := func(desc string) *Key {
		if i := reg.findLink(KeyringType, desc); i >= 0 {
			return reg.keys[i].get()
		}
		return nil
	}
	uid := cred.UID
	user = find(fmt.Sprintf("_uid.%d", uid))
	if user == nil {
		if user, err = s.keyringAlloc(t, fmt.Sprintf("_uid.%d", uid), uid, invalidGID, perm, AllocUIDKeyring|AllocInQuota, reg); err != nil {
			return nil, nil, err
		}
	}
	userSession = find(fmt.Sprintf("_uid_ses.%d", uid))
	if userSession == nil {
		if userSession, err = s.keyringAlloc(t, fmt.Sprintf("_uid_ses.%d", uid), uid, invalidGID, perm, AllocUIDKeyring|AllocInQuota, nil); err == nil {
			if err = s.link(t, userSession, user); err == nil {
				err = s.link(t, reg, userSession)
			}
			if err != nil {
				s.put(t, userSession)
			}
		}
		if err != nil {
			s.put(t, user)
			return nil, nil, err
		}
	}
	return user, userSession, nil
}

// JoinSessionKeyring is join_session_keyring(NULL) through
// install_session_keyring_to_cred: a new anonymous session keyring
// "_ses" for cred's process, owned by its uid and gid (charged to the
// quota, past it when the process had none: KEY_ALLOC_QUOTA_OVERRUN),
// with a reference the caller's credentials keep.
func JoinSessionKeyring(t *kernel.Task, cred *kernel.Cred) (*Key, error) {
	s := Of(t.K)
	s.mu.Lock()
	defer s.mu.Unlock()
	flags := AllocQuotaOverrun
	if sessionOf(cred) != nil {
		flags = AllocInQuota
	}
	return s.keyringAlloc(t, "_ses", cred.UID, cred.GID, PosAll|UsrView|UsrRead, flags, nil)
}

// lookupUserKey is lookup_user_key (security/keys/process_keys.c): the
// key id names, a serial or a KEY_SPEC_* keyring of the caller, with a
// reference, possessed when the caller's keyrings reach it. The key must
// be valid (not revoked, expired or invalidated) unless need is
// NeedUnlink or NeedDefer, and instantiated unless lflags has
// LookupPartial; need is the permission asked for. Errors: ENOKEY,
// EINVAL (a group keyring, or a bad id), EKEYREVOKED, EKEYEXPIRED,
// EACCES, EIO (uninstantiated).
func (s *Service) lookupUserKey(t *kernel.Task, cred *kernel.Cred, id int32, lflags int, need Need) (KeyRef, error) {
	if cred == nil {
		cred = kernel.RootCred
	}
	s.reap(t)
	var ref KeyRef
	switch id {
	case SpecSessionKeyring:
		if ses := sessionOf(cred); ses != nil {
			ref = KeyRef{ses.get(), true}
			break
		}
		// No session keyring: the user session keyring stands in, as
		// install_session_keyring(user_session) would make it.
		user, userSession, err := s.lookUpUserKeyrings(t, cred)
		if err != nil {
			return KeyRef{}, err
		}
		s.put(t, user)
		ref = KeyRef{userSession, true}
	case SpecUserKeyring, SpecUserSessionKeyring:
		user, userSession, err := s.lookUpUserKeyrings(t, cred)
		if err != nil {
			return KeyRef{}, err
		}
		if id == SpecUserKeyring {
			s.put(t, userSession)
			ref = KeyRef{user, true}
		} else {
			s.put(t, user)
			ref = KeyRef{userSession, true}
		}
	case SpecGroupKeyring:
		return KeyRef{}, errno.EINVAL
	case SpecThreadKeyring, SpecProcessKeyring, SpecReqkeyAuthKey:
		// Not modelled: the shell's commands share the machine's
		// session keyring.
		return KeyRef{}, errno.ENOKEY
	default:
		if id < 1 {
			return KeyRef{}, errno.EINVAL
		}
		k := s.serials[id]
		if k == nil || k.usage == 0 {
			return KeyRef{}, errno.ENOKEY
		}
		ref = KeyRef{k.get(), s.possessed(t, cred, k)}
	}
	k := ref.Key
	fail := func(err error) (KeyRef, error) {
		s.put(t, k)
		return KeyRef{}, err
	}
	// An unlink skips every check on the key (it only changes the
	// keyring); a deferred check leaves the key's validity to the caller
	// (keyctl read validates it under key->sem).
	if need != NeedUnlink {
		if need != NeedDefer {
			if k.state < 0 && lflags&LookupPartial == 0 {
				return fail(syscall.Errno(-k.state))
			}
			if err := s.validate(k); err != nil {
				return fail(err)
			}
		}
		if lflags&LookupPartial == 0 && k.state == stateUninstantiated {
			return fail(errno.EIO)
		}
	}
	if err := s.permission(ref, cred, need); err != nil {
		return fail(err)
	}
	return ref, nil
}

// LookupUserKey is lookupUserKey for package users (fscrypt's
// get_keyring_key): the caller drops the reference with KeyPut.
func LookupUserKey(t *kernel.Task, cred *kernel.Cred, id int32, lflags int, need Need) (KeyRef, error) {
	s := Of(t.K)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lookupUserKey(t, cred, id, lflags, need)
}

// possessed is lookup_user_key_possessed's search: whether cred's
// keyrings (the session keyring, or the user session keyring without
// one) reach k, through keyrings the possessor may search.
func (s *Service) possessed(t *kernel.Task, cred *kernel.Cred, k *Key) bool {
	top := sessionOf(cred)
	if top == nil {
		top = s.findUserSession(cred.UID)
	}
	if top == nil {
		return false
	}
	if top == k {
		return true
	}
	c := &searchCtx{typ: k.typ, cred: cred, recurse: true, noStateCheck: true, peek: true, match: func(x *Key) bool { return x == k }}
	found, _ := s.search(KeyRef{top, true}, c)
	return found != nil
}

// findUserSession is get_user_session_keyring_rcu: the uid's user
// session keyring when it exists.
func (s *Service) findUserSession(uid uint32) *Key {
	if s.userReg == nil {
		return nil
	}
	if i := s.userReg.findLink(KeyringType, fmt.Sprintf("_uid_ses.%d", uid)); i >= 0 {
		return s.userReg.keys[i]
	}
	return nil
}
