// Package keys is security/keys: the kernel's key retention service.
// Keys have a type, a description, an owner, a permission mask and a
// payload; keyrings are keys whose payload is a list of links to other
// keys; every key is charged to its owner's quota (struct key_user:
// maxkeys keys and maxbytes bytes of descriptions and payloads, the
// /proc/sys/kernel/keys sysctls), and one that would overrun it is
// EDQUOT. The model follows Linux 6.12's security/keys/{key,keyring,
// permission,process_keys,keyctl,gc,proc,sysctl,user_defined}.c.
//
// Each machine has one Service (Of): the serial number tree, the
// key_user tree, the quotas and the user keyring register. Key types
// register once for every machine (RegisterType, register_key_type), as
// built-in code does: "keyring", "user" and "logon" here, fscrypt's
// ".fscrypt" and "fscrypt-provisioning" in package fscrypt.
//
// Deviations, each for a reason: one mutex per machine stands for
// key_serial_lock, key_user_lock, the keyrings' semaphores and the key
// construction mutex (the model runs a syscall at a time where keys are
// used); the garbage collector runs within the call that makes a key
// collectable (key_put's last reference, an invalidation, and for an
// expired key the next keys call once gc_delay has passed)
// instead of on a workqueue later, so /proc/key-users' nkeys drops at once
// where the kernel's drops when key_garbage_collector has run; a keyring
// lists its keys in link order, where the kernel's assoc_array orders
// them by index key; serial numbers come from a random stream of their
// own (kernel.RandomStream); there are no thread, process, group or
// request-key authorisation keyrings, no upcalls to /sbin/request-key,
// no builtin keyrings, no LSM and no key notifications.
package keys

import (
	"math"
	"math/rand/v2"
	"sort"
	"sync"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// Permission bits (include/linux/key.h): possessor, user (owner),
// group and other, six bits each.
const (
	PosView    = 0x01000000
	PosRead    = 0x02000000
	PosWrite   = 0x04000000
	PosSearch  = 0x08000000
	PosLink    = 0x10000000
	PosSetattr = 0x20000000
	PosAll     = 0x3f000000
	UsrView    = 0x00010000
	UsrRead    = 0x00020000
	UsrWrite   = 0x00040000
	UsrSearch  = 0x00080000
	UsrLink    = 0x00100000
	UsrSetattr = 0x00200000
	UsrAll     = 0x003f0000
	GrpAll     = 0x00003f00
	OthAll     = 0x0000003f
	// PermUndef is KEY_PERM_UNDEF: the type's default permissions.
	PermUndef = 0xffffffff
)

// Need is enum key_need_perm: the permission an operation asks for.
type Need int

// The permissions of key_task_permission (security/keys/permission.c).
const (
	NeedUnspecified Need = iota
	NeedView
	NeedRead
	NeedWrite
	NeedSearch
	NeedLink
	NeedSetattr
	NeedUnlink
	NeedDefer // KEY_DEFER_PERM_CHECK: the caller checks later
)

// Key flags (KEY_FLAG_*, bit numbers).
const (
	FlagDead        = 0
	FlagRevoked     = 1
	FlagInQuota     = 2
	FlagInvalidated = 5
	FlagKeep        = 8
	FlagUIDKeyring  = 9
	FlagFinalPut    = 10
)

// Allocation flags (KEY_ALLOC_*).
const (
	AllocInQuota      = 0x0000
	AllocQuotaOverrun = 0x0001
	AllocNotInQuota   = 0x0002
	AllocUIDKeyring   = 0x0010
	AllocSetKeep      = 0x0020
)

// Key states (key->state): uninstantiated, positive, or a negative
// errno for a negatively instantiated key.
const (
	stateUninstantiated = 0
	statePositive       = 1
)

// timeMax is TIME64_MAX: a key that never expires.
const timeMax = math.MaxInt64

// The defaults of the sysctls (security/keys/key.c, gc.c, persistent.c).
const (
	DefaultRootMaxKeys      = 1000000
	DefaultRootMaxBytes     = 25000000
	DefaultMaxKeys          = 200
	DefaultMaxBytes         = 20000
	DefaultGCDelay          = 5 * 60
	DefaultPersistentExpiry = 3 * 24 * 3600
)

// keyJar is key_jar, the kmem cache of struct key.
var keyJar = kmem.NewCache("key_jar", 224)

// KeyUser is struct key_user: one uid's key accounting. Usage counts the
// references (the keys it owns and the lookups in progress), NKeys the
// keys it owns and NIKeys the instantiated ones; QNKeys and QNBytes are
// what is charged to its quota.
type KeyUser struct {
	UID             uint32
	Usage           int
	NKeys, NIKeys   int
	QNKeys, QNBytes int
}

// Service is one machine's keys subsystem.
type Service struct {
	mu      sync.Mutex
	serials map[int32]*Key
	users   map[uint32]*KeyUser
	// userReg is the user namespace's user_keyring_register (".user_reg").
	userReg *Key
	rng     *rand.ChaCha8
	// now is ktime_get_real_seconds (SetClock).
	now func() int64

	// The sysctls of /proc/sys/kernel/keys.
	rootMaxKeys, rootMaxBytes, maxKeys, maxBytes uint32
	gcDelay, persistentExpiry                    uint32
}

var static = kernel.NewStatic()

// Of returns k's keys subsystem.
func Of(k *kernel.Kernel) *Service {
	return k.StaticOf(static, func() any {
		s := &Service{
			serials: map[int32]*Key{}, users: map[uint32]*KeyUser{},
			rng:         k.RandomStream("security/keys serial"),
			now:         func() int64 { return 0 },
			rootMaxKeys: DefaultRootMaxKeys, rootMaxBytes: DefaultRootMaxBytes,
			maxKeys: DefaultMaxKeys, maxBytes: DefaultMaxBytes,
			gcDelay: DefaultGCDelay, persistentExpiry: DefaultPersistentExpiry,
		}
		// root_key_user (security/keys/process_keys.c): root's record
		// is static, with its initial references and counts.
		s.users[0] = &KeyUser{UID: 0, Usage: 3, NKeys: 2, NIKeys: 2}
		return s
	}).(*Service)
}

// SetClock gives the service its wall clock (ktime_get_real_seconds):
// expiry times and gc_delay are counted on it. Without one the clock
// stands still at 0.
func (s *Service) SetClock(now func() int64) {
	s.mu.Lock()
	s.now = now
	s.mu.Unlock()
}

// Key is struct key.
type Key struct {
	svc    *Service
	serial int32
	typ    *Type
	desc   string
	uid    uint32
	gid    uint32
	perm   uint32
	flags  uint32
	state  int
	usage  int
	expiry int64
	// revokedAt is when the key was revoked (0: never).
	revokedAt int64
	user      *KeyUser
	quotalen  int
	datalen   int
	// payload is the type's (payload.data[0]).
	payload any
	// keys are a keyring's links, in link order.
	keys []*Key
}

// Serial is the key's serial number.
func (k *Key) Serial() int32 { return k.serial }

// Type is the key's type.
func (k *Key) Type() *Type { return k.typ }

// Description is the key's description.
func (k *Key) Description() string { return k.desc }

// Payload is the type's payload; the caller holds the service's lock
// (a type's operations) or a reference it read the payload under.
func (k *Key) Payload() any { return k.payload }

// Datalen is key->datalen.
func (k *Key) Datalen() int { return k.datalen }

// Positive reports key_is_positive.
func (k *Key) Positive() bool { return k.state == statePositive }

func (k *Key) flag(bit uint) bool { return k.flags&(1<<bit) != 0 }

// keyUserLookup is key_user_lookup: uid's record, with a reference.
func (s *Service) keyUserLookup(uid uint32) *KeyUser {
	u := s.users[uid]
	if u == nil {
		u = &KeyUser{UID: uid}
		s.users[uid] = u
	}
	u.Usage++
	return u
}

// keyUserPut is key_user_put.
func (s *Service) keyUserPut(u *KeyUser) {
	if u.Usage--; u.Usage == 0 {
		delete(s.users, u.UID)
	}
}

// quotaOf is the quota of uid: root's or everyone else's.
func (s *Service) quotaOf(uid uint32) (maxKeys, maxBytes int) {
	if uid == 0 {
		return int(s.rootMaxKeys), int(s.rootMaxBytes)
	}
	return int(s.maxKeys), int(s.maxBytes)
}

// allocSerial is key_alloc_serial: a random positive serial of at least
// 3, the next free one after it when it is taken.
func (s *Service) allocSerial(k *Key) {
	k.serial = int32(uint32(s.rng.Uint64()) >> 1)
	for k.serial < 3 {
		k.serial = int32(uint32(s.rng.Uint64()) >> 1)
	}
	for s.serials[k.serial] != nil {
		k.serial++
		if k.serial < 3 {
			k.serial = 3
		}
	}
	s.serials[k.serial] = k
}

// keyAlloc is key_alloc under the service's lock: a new uninstantiated
// key of type typ owned by uid, charged to uid's quota unless flags say
// AllocNotInQuota (AllocQuotaOverrun charges it even past the quota).
// Errors: EINVAL (empty description, or the type's vet_description),
// EDQUOT, ENOMEM.
func (s *Service) keyAlloc(t *kernel.Task, typ *Type, desc string, uid, gid uint32, perm uint32, flags int) (*Key, error) {
	if desc == "" {
		return nil, errno.EINVAL
	}
	if typ.VetDescription != nil {
		if err := typ.VetDescription(desc); err != nil {
			return nil, err
		}
	}
	quotalen := len(desc) + 1 + typ.DefDatalen
	user := s.keyUserLookup(uid)
	if flags&AllocNotInQuota == 0 {
		maxKeys, maxBytes := s.quotaOf(uid)
		if flags&AllocQuotaOverrun == 0 && (user.QNKeys+1 > maxKeys || user.QNBytes+quotalen > maxBytes) {
			s.keyUserPut(user)
			return nil, errno.EDQUOT
		}
		user.QNKeys++
		user.QNBytes += quotalen
	}
	if err := keyJar.Alloc(&t.Ctx, kmem.GFPKernel); err != nil {
		if flags&AllocNotInQuota == 0 {
			user.QNKeys--
			user.QNBytes -= quotalen
		}
		s.keyUserPut(user)
		return nil, err
	}
	k := &Key{svc: s, typ: typ, desc: desc, uid: uid, gid: gid, perm: perm, usage: 1, expiry: timeMax,
		user: user, quotalen: quotalen, datalen: typ.DefDatalen}
	if flags&AllocNotInQuota == 0 {
		k.flags |= 1 << FlagInQuota
	}
	if flags&AllocUIDKeyring != 0 {
		k.flags |= 1 << FlagUIDKeyring
	}
	if flags&AllocSetKeep != 0 {
		k.flags |= 1 << FlagKeep
	}
	user.NKeys++
	s.allocSerial(k)
	return k, nil
}

// KeyAlloc is key_alloc (security/keys/key.c): a new uninstantiated key,
// owned by uid and gid, with a reference the caller drops with KeyPut.
// Errors: EINVAL, EDQUOT, ENOMEM.
func KeyAlloc(t *kernel.Task, typ *Type, desc string, uid, gid uint32, perm uint32, flags int) (*Key, error) {
	s := Of(t.K)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keyAlloc(t, typ, desc, uid, gid, perm, flags)
}

// PayloadReserve is key_payload_reserve: the key's data now takes
// datalen bytes of its owner's quota. The caller holds the service's
// lock (a type's Instantiate or Update). Errors: EDQUOT.
func (k *Key) PayloadReserve(datalen int) error {
	delta := datalen - k.datalen
	if delta != 0 && k.flag(FlagInQuota) {
		_, maxBytes := k.svc.quotaOf(k.user.UID)
		if delta > 0 && k.user.QNBytes+delta > maxBytes {
			return errno.EDQUOT
		}
		k.user.QNBytes += delta
		k.quotalen += delta
	}
	k.datalen = datalen
	return nil
}

// instantiate is __key_instantiate_and_link's part before the link: the
// type's instantiate, then the key is positive (nikeys counts it).
func (s *Service) instantiate(t *kernel.Task, k *Key, prep *Prep) error {
	if k.state != stateUninstantiated {
		return errno.EBUSY
	}
	inst := k.typ.Instantiate
	if inst == nil {
		inst = GenericKeyInstantiate
	}
	if err := inst(t, k, prep); err != nil {
		return err
	}
	k.user.NIKeys++
	k.state = statePositive
	if prep.Expiry != 0 {
		k.expiry = prep.Expiry
	}
	return nil
}

// GenericKeyInstantiate is generic_key_instantiate: the quota the
// preparse computed, and its payload.
func GenericKeyInstantiate(t *kernel.Task, k *Key, prep *Prep) error {
	if err := k.PayloadReserve(prep.Quotalen); err != nil {
		return err
	}
	k.payload = prep.Payload
	prep.Payload = nil
	return nil
}

// KeyInstantiateAndLink is key_instantiate_and_link: instantiate the
// uninstantiated key with data (through the type's preparse, when it has
// one) and link it into keyring (nil: none). Errors: the type's, EBUSY
// (already instantiated), ENOTDIR, EDQUOT, ENOMEM.
func KeyInstantiateAndLink(t *kernel.Task, k *Key, data []byte, keyring *Key) error {
	s := k.svc
	s.mu.Lock()
	defer s.mu.Unlock()
	prep := &Prep{Data: data, Quotalen: k.typ.DefDatalen}
	if k.typ.Preparse != nil {
		if err := k.typ.Preparse(t, prep); err != nil {
			return err
		}
		defer k.typ.freePreparse(t, prep)
	}
	if keyring != nil && keyring.typ != KeyringType {
		return errno.ENOTDIR
	}
	if err := s.instantiate(t, k, prep); err != nil {
		return err
	}
	if keyring != nil {
		return s.link(t, keyring, k)
	}
	return nil
}

// get is __key_get: a reference more.
func (k *Key) get() *Key {
	k.usage++
	return k
}

// KeyGet is key_get: a reference the caller drops with KeyPut.
func KeyGet(k *Key) *Key {
	k.svc.mu.Lock()
	defer k.svc.mu.Unlock()
	return k.get()
}

// KeyPut is key_put: drop a reference; the last one releases the key's
// quota and collects it (key_garbage_collector's key_gc_unused_keys, run
// at once in the model).
func KeyPut(t *kernel.Task, k *Key) {
	if k == nil {
		return
	}
	s := k.svc
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put(t, k)
}

// put is key_put under the lock.
func (s *Service) put(t *kernel.Task, k *Key) {
	if k.usage--; k.usage > 0 {
		return
	}
	if k.flag(FlagInQuota) {
		k.user.QNKeys--
		k.user.QNBytes -= k.quotalen
	}
	k.flags |= 1 << FlagFinalPut
	s.gcUnused(t, k)
}

// gcUnused is key_gc_unused_keys for one key: its payload destroyed, its
// links dropped (a keyring's), its serial and user record given back.
func (s *Service) gcUnused(t *kernel.Task, k *Key) {
	if k.state == statePositive && k.typ.Destroy != nil {
		k.typ.Destroy(t, k)
	}
	links := k.keys
	k.keys = nil
	k.user.NKeys--
	if k.state != stateUninstantiated {
		k.user.NIKeys--
	}
	s.keyUserPut(k.user)
	delete(s.serials, k.serial)
	keyJar.Free(&t.Ctx)
	for _, l := range links {
		s.put(t, l)
	}
}

// revoke is key_revoke under the lock: the key stays linked but every
// search and use of it fails with EKEYREVOKED.
func (s *Service) revoke(t *kernel.Task, k *Key) {
	if k.flag(FlagRevoked) {
		return
	}
	k.flags |= 1 << FlagRevoked
	if k.typ.Revoke != nil {
		k.typ.Revoke(t, k)
	}
	now := s.now()
	if k.revokedAt == 0 || k.revokedAt > now {
		k.revokedAt = now
	}
}

// invalidate is key_invalidate: the key is unusable and the garbage
// collector unlinks it from every keyring at once (key_schedule_gc_links).
func (s *Service) invalidate(t *kernel.Task, k *Key) {
	if k.flag(FlagInvalidated) {
		return
	}
	k.flags |= 1 << FlagInvalidated
	s.gcLinks(t)
}

// dead is key_is_dead (security/keys/internal.h): the garbage collector
// unlinks k from its keyrings now when it is invalidated or expired
// gc_delay seconds ago. A revoked key is not dead: it stays linked, and
// its links fail with EKEYREVOKED, until someone unlinks it (6.12's
// key_is_dead ignores revoked_at).
func (s *Service) dead(k *Key, now int64) bool {
	if k.flag(FlagInvalidated) || k.flag(FlagDead) {
		return true
	}
	return k.expiry != timeMax && k.expiry+int64(s.gcDelay) <= now
}

// gcLinks is key_garbage_collector's keyring pass: every link to a dead
// key goes, which drops the link's reference.
func (s *Service) gcLinks(t *kernel.Task) {
	now := s.now()
	var drop []*Key
	for _, ring := range s.sortedKeys() {
		if ring.typ != KeyringType || len(ring.keys) == 0 {
			continue
		}
		kept := ring.keys[:0]
		for _, l := range ring.keys {
			if s.dead(l, now) {
				drop = append(drop, l)
				continue
			}
			kept = append(kept, l)
		}
		clear(ring.keys[len(kept):])
		ring.keys = kept
	}
	for _, k := range drop {
		s.put(t, k)
	}
}

// sortedKeys lists the keys by serial, as key_serial_tree orders them.
func (s *Service) sortedKeys() []*Key {
	out := make([]*Key, 0, len(s.serials))
	for _, k := range s.serials {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].serial < out[j].serial })
	return out
}

// validate is key_validate: EKEYREVOKED for a revoked key, EKEYEXPIRED
// for an expired one, ENOKEY for an invalidated one.
func (s *Service) validate(k *Key) error {
	if k.flag(FlagInvalidated) {
		return errno.ENOKEY
	}
	if k.flag(FlagRevoked) || k.flag(FlagDead) {
		return errno.EKEYREVOKED
	}
	if k.expiry != timeMax && s.now() >= k.expiry {
		return errno.EKEYEXPIRED
	}
	return nil
}
