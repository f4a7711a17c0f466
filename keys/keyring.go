package keys

import (
	"encoding/binary"
	"fmt"
	"strings"
	"syscall"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// linkBytes is KEYQUOTA_LINK_BYTES: the quota one link in a keyring
// charges to the keyring's owner.
const linkBytes = 4

// maxNesting is KEYRING_SEARCH_MAX_DEPTH: how deep a search descends.
const maxNesting = 6

// KeyringType is key_type_keyring (security/keys/keyring.c): a key whose
// payload is links to other keys, at most one per type and description.
var KeyringType = &Type{
	Name: "keyring",
	// keyring_preparse: a keyring takes no payload.
	Preparse: func(t *kernel.Task, prep *Prep) error {
		if len(prep.Data) != 0 {
			return errno.EINVAL
		}
		return nil
	},
	Instantiate: func(t *kernel.Task, k *Key, prep *Prep) error { return nil },
	// keyring_revoke: the links go, and the quota they took.
	Revoke: func(t *kernel.Task, k *Key) {
		links := k.keys
		k.keys = nil
		k.PayloadReserve(0)
		for _, l := range links {
			k.svc.put(t, l)
		}
	},
	Describe: keyringDescribe,
	Read:     keyringRead,
}

// keyringDescribe is keyring_describe: "DESC: N" (the number of links) or
// "DESC: empty".
func keyringDescribe(k *Key, b *strings.Builder) {
	b.WriteString(k.desc)
	if k.Positive() {
		if n := len(k.keys); n != 0 {
			fmt.Fprintf(b, ": %d", n)
		} else {
			b.WriteString(": empty")
		}
	}
}

// keyringRead is keyring_read: the serials of the linked keys, 32 bits
// each, native (little) endian.
func keyringRead(k *Key) ([]byte, error) {
	out := make([]byte, 0, 4*len(k.keys))
	for _, l := range k.keys {
		out = binary.LittleEndian.AppendUint32(out, uint32(l.serial))
	}
	return out, nil
}

// Keys returns the keys linked in keyring, in link order (the model's
// order; the kernel's assoc_array orders them by index key).
func (k *Key) Keys() []*Key {
	k.svc.mu.Lock()
	defer k.svc.mu.Unlock()
	return append([]*Key(nil), k.keys...)
}

// keyringAlloc is keyring_alloc: a new instantiated keyring, linked into
// dest when dest is not nil. The caller holds the lock and gets a
// reference.
func (s *Service) keyringAlloc(t *kernel.Task, desc string, uid, gid uint32, perm uint32, flags int, dest *Key) (*Key, error) {
	k, err := s.keyAlloc(t, KeyringType, desc, uid, gid, perm, flags)
	if err != nil {
		return nil, err
	}
	if err := s.instantiate(t, k, &Prep{}); err != nil {
		s.put(t, k)
		return nil, err
	}
	if dest != nil {
		if err := s.link(t, dest, k); err != nil {
			s.put(t, k)
			return nil, err
		}
	}
	return k, nil
}

// KeyringAlloc is keyring_alloc (security/keys/keyring.c): a keyring
// owned by uid and gid, linked into dest (nil: none), with a reference
// the caller drops with KeyPut. Errors: EINVAL, EDQUOT, ENOMEM.
func KeyringAlloc(t *kernel.Task, desc string, uid, gid uint32, perm uint32, flags int, dest *Key) (*Key, error) {
	s := Of(t.K)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keyringAlloc(t, desc, uid, gid, perm, flags, dest)
}

// findLink is the keyring's link to a key of k's type and description,
// or -1.
func (ring *Key) findLink(typ *Type, desc string) int {
	for i, l := range ring.keys {
		if l.typ == typ && l.desc == desc {
			return i
		}
	}
	return -1
}

// link is __key_link: link k into ring, replacing a link to a key of
// the same type and description (and dropping that link's reference);
// a new link charges linkBytes to ring's owner. Errors: ENOTDIR,
// EKEYREVOKED (a revoked keyring), EDEADLK (a keyring cycle), EDQUOT.
func (s *Service) link(t *kernel.Task, ring, k *Key) error {
	if ring.typ != KeyringType {
		return errno.ENOTDIR
	}
	if ring.flag(FlagRevoked) {
		return errno.EKEYREVOKED
	}
	if k.typ == KeyringType && (k == ring || s.reaches(k, ring, 0)) {
		return errno.EDEADLK
	}
	if i := ring.findLink(k.typ, k.desc); i >= 0 {
		old := ring.keys[i]
		if old == k {
			return nil
		}
		ring.keys[i] = k.get()
		s.put(t, old)
		return nil
	}
	if err := ring.PayloadReserve(ring.datalen + linkBytes); err != nil {
		return err
	}
	ring.keys = append(ring.keys, k.get())
	return nil
}

// reaches reports whether keyring from links to target, directly or
// through nested keyrings (keyring_detect_cycle).
func (s *Service) reaches(from, target *Key, depth int) bool {
	if depth > maxNesting {
		return true
	}
	for _, l := range from.keys {
		if l == target || (l.typ == KeyringType && s.reaches(l, target, depth+1)) {
			return true
		}
	}
	return false
}

// KeyLink is key_link: link k into ring. Errors: link's.
func KeyLink(t *kernel.Task, ring, k *Key) error {
	s := ring.svc
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.link(t, ring, k)
}

// unlink is key_unlink: ENOENT when ring does not link k, ENOTDIR when it
// is no keyring.
func (s *Service) unlink(t *kernel.Task, ring, k *Key) error {
	if ring.typ != KeyringType {
		return errno.ENOTDIR
	}
	i := -1
	for j, l := range ring.keys {
		if l == k {
			i = j
		}
	}
	if i < 0 {
		return errno.ENOENT
	}
	ring.keys = append(ring.keys[:i], ring.keys[i+1:]...)
	ring.PayloadReserve(ring.datalen - linkBytes)
	s.put(t, k)
	return nil
}

// KeyUnlink is key_unlink (security/keys/keyring.c). Errors: ENOTDIR,
// ENOENT.
func KeyUnlink(t *kernel.Task, ring, k *Key) error {
	s := ring.svc
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unlink(t, ring, k)
}

// clearRing is keyring_clear: every link goes.
func (s *Service) clearRing(t *kernel.Task, ring *Key) error {
	if ring.typ != KeyringType {
		return errno.ENOTDIR
	}
	links := ring.keys
	ring.keys = nil
	ring.PayloadReserve(0)
	for _, l := range links {
		s.put(t, l)
	}
	return nil
}

// KeyringClear is keyring_clear. Errors: ENOTDIR.
func KeyringClear(t *kernel.Task, ring *Key) error {
	s := ring.svc
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clearRing(t, ring)
}

// searchCtx is struct keyring_search_context.
type searchCtx struct {
	typ  *Type
	desc string
	cred *kernel.Cred
	// match, when set, replaces the description comparison.
	match func(k *Key) bool
	// recurse, noStateCheck and noCheckPerm are KEYRING_SEARCH_RECURSE,
	// KEYRING_SEARCH_NO_STATE_CHECK and KEYRING_SEARCH_NO_CHECK_PERM.
	recurse, noStateCheck, noCheckPerm bool
	// peek returns the key found without a reference: the caller
	// reads it under the service's lock and keeps nothing.
	peek      bool
	possessed bool
	now       int64
	// err is ctx->result while nothing is found: EAGAIN (none), or why a
	// matching key was skipped.
	err error
}

// searchRing is keyring_search_rcu: the keyring's own keys first, then its
// nested keyrings depth first (search_nested_keyrings); a key found has a
// reference (none with peek). A keyring the caller may not search is EACCES.
func (s *Service) searchRing(ring *Key, c *searchCtx, depth int) (*Key, error) {
	if ring.typ != KeyringType {
		return nil, errno.ENOTDIR
	}
	if !c.noCheckPerm && depth == 0 {
		if err := s.permission(KeyRef{ring, c.possessed}, c.cred, NeedSearch); err != nil {
			return nil, err
		}
	}
	for _, k := range ring.keys {
		if k.typ != c.typ {
			continue
		}
		if !c.noStateCheck {
			if k.flag(FlagInvalidated) || k.flag(FlagRevoked) {
				if c.matches(k) {
					c.err = errno.EKEYREVOKED
				}
				continue
			}
			if k.expiry != timeMax && c.now >= k.expiry {
				if c.matches(k) {
					c.err = errno.EKEYEXPIRED
				}
				continue
			}
		}
		if !c.matches(k) {
			continue
		}
		if !c.noCheckPerm && s.permission(KeyRef{k, c.possessed}, c.cred, NeedSearch) != nil {
			c.err = errno.EACCES
			continue
		}
		if !c.noStateCheck && k.state < 0 {
			c.err = syscall.Errno(-k.state)
			continue
		}
		if c.peek {
			return k, nil
		}
		return k.get(), nil
	}
	if !c.recurse || depth >= maxNesting {
		return nil, nil
	}
	for _, sub := range ring.keys {
		if sub.typ != KeyringType || sub.flag(FlagInvalidated) || sub.flag(FlagRevoked) {
			continue
		}
		if !c.noCheckPerm && s.permission(KeyRef{sub, c.possessed}, c.cred, NeedSearch) != nil {
			continue
		}
		if k, err := s.searchRing(sub, c, depth+1); k != nil || err != nil {
			return k, err
		}
	}
	return nil, nil
}

func (c *searchCtx) matches(k *Key) bool {
	if c.match != nil {
		return c.match(k)
	}
	return k.desc == c.desc
}

// search runs searchRing from the top and turns "nothing found" into
// c.err: EAGAIN, or the reason a matching key was skipped.
func (s *Service) search(ring KeyRef, c *searchCtx) (*Key, error) {
	c.possessed = ring.Possessed
	c.now = s.now()
	if c.err == nil {
		c.err = errno.EAGAIN
	}
	k, err := s.searchRing(ring.Key, c, 0)
	if err != nil {
		return nil, err
	}
	if k == nil {
		return nil, c.err
	}
	return k, nil
}

// KeyringSearch is keyring_search: the key of type typ and description
// desc in ring (and, with recurse, the keyrings it links), with a
// reference. Errors: EAGAIN (none), EKEYREVOKED or EKEYEXPIRED (only a
// revoked or expired one), EACCES, ENOTDIR.
func KeyringSearch(t *kernel.Task, cred *kernel.Cred, ring KeyRef, typ *Type, desc string, recurse bool) (*Key, error) {
	s := ring.svc
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.search(ring, &searchCtx{typ: typ, desc: desc, cred: cred, recurse: recurse})
}
