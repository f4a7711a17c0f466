package fscrypt

import (
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/keys"
	"github.com/vfslab/vfslab/kmem"
)

// Key specifier types (include/uapi/linux/fscrypt.h).
const (
	// KeySpecTypeDescriptor names a v1 key by an 8-byte descriptor.
	KeySpecTypeDescriptor = 1
	// KeySpecTypeIdentifier names a v2 key by its 16-byte HKDF identifier.
	KeySpecTypeIdentifier = 2
)

// Key status values and flags (FS_IOC_GET_ENCRYPTION_KEY_STATUS,
// FS_IOC_REMOVE_ENCRYPTION_KEY).
const (
	KeyStatusAbsent               = 1
	KeyStatusPresent              = 2
	KeyStatusIncompletelyRemoved  = 3
	KeyStatusFlagAddedBySelf      = 0x1
	KeyRemovalStatusFlagFilesBusy = 0x1
	KeyRemovalStatusFlagOtherUser = 0x2
	// AddKeyFlagHWWrapped is FSCRYPT_ADD_KEY_FLAG_HW_WRAPPED, which Linux
	// 6.15 added; in 6.12 the word is reserved (EINVAL when set).
	AddKeyFlagHWWrapped = 0x1
)

// KeySpecifier is struct fscrypt_key_specifier.
type KeySpecifier struct {
	Type     uint32
	Reserved uint32
	// U is the union: descriptor[8] or identifier[16], then reserved bytes.
	U [32]byte
}

// specLen is master_key_spec_len.
func (s *KeySpecifier) specLen() int {
	switch s.Type {
	case KeySpecTypeDescriptor:
		return KeyDescriptorSize
	case KeySpecTypeIdentifier:
		return KeyIdentifierSize
	}
	return 0
}

// valid is valid_key_spec.
func (s *KeySpecifier) valid() bool { return s.Reserved == 0 && s.specLen() != 0 }

// specKey is a master key's index in its keyring: the specifier's type and
// its descriptor or identifier bytes. A comparable value, so that a lookup
// (fscrypt_find_master_key, on every key setup) makes no Go allocation.
type specKey struct {
	typ uint32
	u   [KeyIdentifierSize]byte
}

func (s *KeySpecifier) mapKey() specKey {
	k := specKey{typ: s.Type}
	copy(k.u[:], s.U[:s.specLen()])
	return k
}

// sortKey orders keys for listing: the type, then the bytes in hex.
func (s *KeySpecifier) sortKey() string {
	return fmt.Sprintf("%d:%s", s.Type, hex.EncodeToString(s.U[:s.specLen()]))
}

// String renders the specifier as the kernel's messages do: "descriptor
// 0011223344556677" or "identifier 69b2...".
func (s *KeySpecifier) String() string {
	switch s.Type {
	case KeySpecTypeDescriptor:
		return "descriptor " + hex.EncodeToString(s.U[:KeyDescriptorSize])
	case KeySpecTypeIdentifier:
		return "identifier " + hex.EncodeToString(s.U[:KeyIdentifierSize])
	}
	return fmt.Sprintf("type%d", s.Type)
}

// IdentifierSpec returns the specifier of a v2 key.
func IdentifierSpec(id [KeyIdentifierSize]byte) KeySpecifier {
	s := KeySpecifier{Type: KeySpecTypeIdentifier}
	copy(s.U[:], id[:])
	return s
}

// DescriptorSpec returns the specifier of a v1 key.
func DescriptorSpec(d [KeyDescriptorSize]byte) KeySpecifier {
	s := KeySpecifier{Type: KeySpecTypeDescriptor}
	copy(s.U[:], d[:])
	return s
}

// masterKeySecret is struct fscrypt_master_key_secret.
type masterKeySecret struct {
	hkdf hkdfKey // v2 only
	size int
	raw  [maxRawKeySize]byte
}

// wipe is wipe_master_key_secret.
func (s *masterKeySecret) wipe() {
	s.hkdf.wipe()
	clear(s.raw[:])
	s.size = 0
}

// mkCache is the kzalloc of struct fscrypt_master_key.
var mkCache = kmem.NewCache("fscrypt_master_key", 1024)

// MasterKey is struct fscrypt_master_key: a key added to a filesystem with
// FS_IOC_ADD_ENCRYPTION_KEY, the per-mode keys prepared from it, and the
// inodes unlocked with it.
type MasterKey struct {
	// sem is mk_sem: written when the secret is added or removed, read by
	// key setup.
	sem sync.RWMutex

	// structRefs (mk_struct_refs) keeps the struct alive; activeRefs
	// (mk_active_refs) counts the "present" reference plus one per
	// fscrypt_inode_info using the key. The key leaves the keyring when
	// activeRefs drops to zero.
	structRefs atomic.Int32
	activeRefs atomic.Int32

	secret masterKeySecret
	spec   KeySpecifier
	// users is mk_users: a keyring of the users who added a v2 key, one
	// ".fscrypt" key "<identifier>.uid.<uid>" each, charged to that
	// user's key quota; nil for v1.
	users *keys.Key
	// present is mk_present: the secret is there (not removed).
	present bool

	inodesMu        sync.Mutex
	decryptedInodes map[*InodeInfo]struct{}

	// Per-mode keys shared by the inodes of DIRECT_KEY and IV_INO_LBLK_*
	// policies (mk_direct_keys, mk_iv_ino_lblk_64_keys,
	// mk_iv_ino_lblk_32_keys).
	directKeys      [modeMax + 1]preparedKey
	ivInoLblk64Keys [modeMax + 1]preparedKey
	ivInoLblk32Keys [modeMax + 1]preparedKey

	inoHashKey            sipKey
	inoHashKeyInitialized atomic.Bool

	keyring *Keyring
}

// Spec returns the key's specifier.
func (mk *MasterKey) Spec() KeySpecifier { return mk.spec }

// String is the canonical one-line dump: "identifier 69b2... present
// active=2 users=[0 1000] inodes=1".
func (mk *MasterKey) String() string {
	mk.sem.RLock()
	defer mk.sem.RUnlock()
	state := "present"
	if !mk.present {
		state = "removed"
	}
	var users []string
	for _, u := range mk.userUIDs() {
		users = append(users, fmt.Sprint(u))
	}
	mk.inodesMu.Lock()
	n := len(mk.decryptedInodes)
	mk.inodesMu.Unlock()
	return fmt.Sprintf("%s %s size=%d active=%d users=[%s] inodes=%d", mk.spec.String(), state, mk.secret.size,
		mk.activeRefs.Load(), strings.Join(users, " "), n)
}

// Keyring is a superblock's s_master_keys: the fscrypt keys added to one
// filesystem, found by specifier.
type Keyring struct {
	// addMu is fscrypt_add_key_mutex; mu protects keys.
	addMu sync.Mutex
	mu    sync.Mutex
	keys  map[specKey]*MasterKey
}

// NewKeyring returns an empty keyring (fscrypt_sb_init /
// allocate_filesystem_keyring).
func NewKeyring() *Keyring { return &Keyring{keys: map[specKey]*MasterKey{}} }

// String lists the keys, one per "; ".
func (kr *Keyring) String() string {
	kr.mu.Lock()
	var mks []*MasterKey
	for _, mk := range kr.keys {
		mks = append(mks, mk)
	}
	kr.mu.Unlock()
	sort.Slice(mks, func(i, j int) bool { return mks[i].spec.sortKey() < mks[j].spec.sortKey() })
	var parts []string
	for _, mk := range mks {
		parts = append(parts, mk.String())
	}
	if len(parts) == 0 {
		return "(empty)"
	}
	return strings.Join(parts, "; ")
}

// Len returns the number of keys in the keyring, including incompletely
// removed ones.
func (kr *Keyring) Len() int {
	kr.mu.Lock()
	defer kr.mu.Unlock()
	return len(kr.keys)
}

// findMasterKey is fscrypt_find_master_key: the key with this specifier,
// with a struct reference the caller must drop with putMasterKey; nil if
// absent.
func (kr *Keyring) findMasterKey(spec *KeySpecifier) *MasterKey {
	if kr == nil || spec.specLen() == 0 {
		return nil
	}
	kr.mu.Lock()
	defer kr.mu.Unlock()
	mk := kr.keys[spec.mapKey()]
	if mk == nil {
		return nil
	}
	for {
		n := mk.structRefs.Load()
		if n == 0 {
			return nil
		}
		if mk.structRefs.CompareAndSwap(n, n+1) {
			return mk
		}
	}
}

// putMasterKey is fscrypt_put_master_key: drop a struct reference; the last
// one clears mk_users, so that the users' quota is released at once, and
// wipes and frees the key (kfree_sensitive after an RCU grace period in
// the kernel; at once here, so that the dropping task accounts for it).
func putMasterKey(t *kernel.Task, mk *MasterKey) {
	if mk.structRefs.Add(-1) != 0 {
		return
	}
	if mk.users != nil {
		keys.KeyringClear(t, mk.users)
		keys.KeyPut(t, mk.users)
		mk.users = nil
	}
	mk.secret.wipe()
	mkCache.Free(&t.Ctx)
}

// userUIDs lists the uids in mk_users, in order.
func (mk *MasterKey) userUIDs() []int {
	if mk.users == nil {
		return nil
	}
	var uids []int
	for _, k := range mk.users.Keys() {
		d := k.Description()
		if i := strings.LastIndex(d, ".uid."); i >= 0 {
			var u int
			if _, err := fmt.Sscan(d[i+5:], &u); err == nil {
				uids = append(uids, u)
			}
		}
	}
	sort.Ints(uids)
	return uids
}

// fscryptUserType is key_type_fscrypt_user, ".fscrypt": each key of this
// type in a master key's mk_users is one user's claim to it, which
// charges FSCRYPT_MAX_KEY_SIZE bytes (fscrypt_user_key_instantiate)
// besides its description to that user's key quota.
var fscryptUserType = &keys.Type{
	Name: ".fscrypt",
	Instantiate: func(t *kernel.Task, k *keys.Key, prep *keys.Prep) error {
		return k.PayloadReserve(maxRawKeySize)
	},
	Describe: func(k *keys.Key, b *strings.Builder) { b.WriteString(k.Description()) },
}

func init() { keys.RegisterType(fscryptUserType) }

// mkUserDescription is format_mk_user_description: "<identifier>.uid.<fsuid>".
func (mk *MasterKey) mkUserDescription(cred *kernel.Cred) string {
	return fmt.Sprintf("%s.uid.%d", hex.EncodeToString(mk.spec.U[:KeyIdentifierSize]), cred.UID)
}

// allocateMasterKeyUsersKeyring is allocate_master_key_users_keyring:
// "fscrypt-<identifier>-users", owned by root and outside the quota,
// searchable by its possessor (fscrypt itself).
func allocateMasterKeyUsersKeyring(t *kernel.Task, mk *MasterKey) error {
	ring, err := keys.KeyringAlloc(t, "fscrypt-"+hex.EncodeToString(mk.spec.U[:KeyIdentifierSize])+"-users", 0, 0,
		keys.PosSearch|keys.UsrSearch|keys.UsrRead|keys.UsrView, keys.AllocNotInQuota, nil)
	if err != nil {
		return err
	}
	mk.users = ring
	return nil
}

// findMasterKeyUser is find_master_key_user: the caller's ".fscrypt" key
// in mk_users, with a reference. Errors: ENOKEY (the caller never added
// the key, or its claim was just invalidated).
func findMasterKeyUser(t *kernel.Task, cred *kernel.Cred, mk *MasterKey) (*keys.Key, error) {
	k, err := keys.KeyringSearch(t, cred, keys.KeyRef{Key: mk.users, Possessed: true}, fscryptUserType, mk.mkUserDescription(cred), false)
	if err == errno.EAGAIN || err == errno.EKEYREVOKED {
		err = errno.ENOKEY
	}
	return k, err
}

// addMasterKeyUser is add_master_key_user: give the caller a ".fscrypt"
// key in mk_users, charging its quota (EDQUOT when full). The caller
// holds mk_sem for writing, or has mk to itself.
func addMasterKeyUser(t *kernel.Task, cred *kernel.Cred, mk *MasterKey) error {
	k, err := keys.KeyAlloc(t, fscryptUserType, mk.mkUserDescription(cred), cred.UID, cred.GID,
		keys.PosSearch|keys.UsrView, keys.AllocInQuota)
	if err != nil {
		return err
	}
	err = keys.KeyInstantiateAndLink(t, k, nil, mk.users)
	keys.KeyPut(t, k)
	return err
}

// removeMasterKeyUser is remove_master_key_user: unlink the caller's
// ".fscrypt" key from mk_users (its quota goes back). Errors: ENOKEY.
func removeMasterKeyUser(t *kernel.Task, cred *kernel.Cred, mk *MasterKey) error {
	k, err := findMasterKeyUser(t, cred, mk)
	if err != nil {
		return err
	}
	err = keys.KeyUnlink(t, mk.users, k)
	keys.KeyPut(t, k)
	return err
}

// putMasterKeyActiveRef is fscrypt_put_master_key_activeref: drop an active
// reference; the last one unlinks the key from the keyring, frees its
// per-mode keys and drops the struct reference the active ones held.
func putMasterKeyActiveRef(t *kernel.Task, mk *MasterKey) {
	kr := mk.keyring
	kr.mu.Lock()
	if mk.activeRefs.Add(-1) != 0 {
		kr.mu.Unlock()
		return
	}
	delete(kr.keys, mk.spec.mapKey())
	kr.mu.Unlock()
	t.WarnOn(mk.present, "mk->mk_present")
	for i := range mk.directKeys {
		destroyPreparedKey(t, &mk.directKeys[i])
		destroyPreparedKey(t, &mk.ivInoLblk64Keys[i])
		destroyPreparedKey(t, &mk.ivInoLblk32Keys[i])
	}
	mk.inoHashKey = sipKey{}
	mk.inoHashKeyInitialized.Store(false)
	putMasterKey(t, mk)
}

// AddKeyArg is struct fscrypt_add_key_arg with its trailing raw[] bytes.
type AddKeyArg struct {
	KeySpec KeySpecifier
	RawSize uint32
	// KeyID names an "fscrypt-provisioning" key (a serial, or a
	// KEY_SPEC_* keyring id) that holds the raw key instead of Raw.
	KeyID uint32
	// Flags is __reserved[0] in Linux 6.12 (6.15 made it the flags
	// word); Reserved are the other seven reserved words.
	Flags    uint32
	Reserved [7]uint32
	Raw      []byte
}

// IoctlAddKey is fscrypt_ioctl_add_key (FS_IOC_ADD_ENCRYPTION_KEY): add a
// master key to sb's keyring. For a v2 key (KeySpecTypeIdentifier) the
// identifier is computed with HKDF and written back to arg.KeySpec; a key
// the caller already added is a no-op, and re-adding an incompletely
// removed key makes it present again. With KeyID the raw key comes from
// that "fscrypt-provisioning" key of the caller (get_keyring_key), whose
// payload type must be the key specifier's. Each user who adds a v2 key
// is charged a key of its quota for it (add_master_key_user). Errors:
// EINVAL (bad specifier, reserved fields or flags, a bad size, RawSize
// with KeyID), EACCES (descriptor key without CAP_SYS_ADMIN), EFAULT (Raw
// shorter than RawSize), ENOKEY, EKEYREVOKED, EKEYEXPIRED (KeyID's
// lookup), EKEYREJECTED (KeyID names another type of key, or a
// provisioning key of the other policy version), EDQUOT, ENOMEM.
func IoctlAddKey(t *kernel.Task, cred *kernel.Cred, sb SuperBlock, arg *AddKeyArg) error {
	if !arg.KeySpec.valid() || arg.Flags != 0 || arg.Reserved != [7]uint32{} {
		return errno.EINVAL
	}
	if arg.KeySpec.Type == KeySpecTypeDescriptor && !cred.CapSysAdmin {
		return errno.EACCES
	}
	var secret masterKeySecret
	defer secret.wipe()
	if arg.KeyID != 0 {
		if arg.RawSize != 0 {
			return errno.EINVAL
		}
		if err := getKeyringKey(t, cred, arg.KeyID, arg.KeySpec.Type, &secret); err != nil {
			return err
		}
	} else {
		if arg.RawSize < minKeySize || arg.RawSize > maxRawKeySize {
			return errno.EINVAL
		}
		if uint32(len(arg.Raw)) < arg.RawSize {
			return errno.EFAULT
		}
		secret.size = int(arg.RawSize)
		copy(secret.raw[:], arg.Raw[:arg.RawSize])
	}
	if arg.KeySpec.Type == KeySpecTypeIdentifier {
		secret.hkdf.init(secret.raw[:secret.size])
		clear(arg.KeySpec.U[:])
		secret.hkdf.expand(HKDFContextKeyIdentifier, nil, arg.KeySpec.U[:KeyIdentifierSize])
	}
	return addMasterKey(t, cred, sb.MasterKeys(), &secret, &arg.KeySpec)
}

// addMasterKey is do_add_master_key.
func addMasterKey(t *kernel.Task, cred *kernel.Cred, kr *Keyring, secret *masterKeySecret, spec *KeySpecifier) error {
	kr.addMu.Lock()
	defer kr.addMu.Unlock()
	for {
		mk := kr.findMasterKey(spec)
		if mk == nil {
			return addNewMasterKey(t, cred, kr, secret, spec)
		}
		mk.sem.Lock()
		err, dead := addExistingMasterKey(t, cred, mk, secret)
		mk.sem.Unlock()
		putMasterKey(t, mk)
		if dead {
			// The key is being torn down; it has left the keyring by
			// the time its active count hit zero, so retry.
			continue
		}
		return err
	}
}

// addNewMasterKey is add_new_master_key: a v2 key gets its mk_users
// keyring and the caller's claim in it first (EDQUOT when the caller's
// key quota is full).
func addNewMasterKey(t *kernel.Task, cred *kernel.Cred, kr *Keyring, secret *masterKeySecret, spec *KeySpecifier) error {
	if err := mkCache.Alloc(&t.Ctx, kmem.GFPKernel); err != nil {
		return err
	}
	mk := &MasterKey{spec: *spec, keyring: kr, decryptedInodes: map[*InodeInfo]struct{}{}}
	mk.structRefs.Store(1)
	if spec.Type == KeySpecTypeIdentifier {
		err := allocateMasterKeyUsersKeyring(t, mk)
		if err == nil {
			err = addMasterKeyUser(t, cred, mk)
		}
		if err != nil {
			putMasterKey(t, mk)
			return err
		}
	}
	mk.secret = *secret
	secret.wipe()
	mk.present = true
	mk.activeRefs.Store(1)
	kr.mu.Lock()
	kr.keys[spec.mapKey()] = mk
	kr.mu.Unlock()
	return nil
}

// addExistingMasterKey is add_existing_master_key; dead reports KEY_DEAD.
func addExistingMasterKey(t *kernel.Task, cred *kernel.Cred, mk *MasterKey, secret *masterKeySecret) (err error, dead bool) {
	if mk.users != nil {
		u, err := findMasterKeyUser(t, cred, mk)
		if err != errno.ENOKEY {
			if err != nil {
				return err, false
			}
			keys.KeyPut(t, u)
			return nil, false
		}
		if err := addMasterKeyUser(t, cred, mk); err != nil {
			return err, false
		}
	}
	if !mk.present {
		for {
			n := mk.activeRefs.Load()
			if n == 0 {
				return nil, true
			}
			if mk.activeRefs.CompareAndSwap(n, n+1) {
				break
			}
		}
		mk.secret = *secret
		secret.wipe()
		mk.present = true
	}
	return nil, false
}

// verifyKeyAdded is fscrypt_verify_key_added: setting a v2 policy requires
// that the caller added the key (or has CAP_FOWNER).
func verifyKeyAdded(t *kernel.Task, cred *kernel.Cred, sb SuperBlock, id [KeyIdentifierSize]byte) error {
	spec := IdentifierSpec(id)
	var err error = errno.ENOKEY
	if mk := sb.MasterKeys().findMasterKey(&spec); mk != nil {
		mk.sem.RLock()
		if mk.users != nil {
			var u *keys.Key
			if u, err = findMasterKeyUser(t, cred, mk); err == nil {
				keys.KeyPut(t, u)
			}
		}
		mk.sem.RUnlock()
		putMasterKey(t, mk)
	}
	if err == errno.ENOKEY && cred.CapFowner {
		err = nil
	}
	return err
}

// RemoveKeyArg is struct fscrypt_remove_key_arg.
type RemoveKeyArg struct {
	KeySpec            KeySpecifier
	RemovalStatusFlags uint32 // out
	Reserved           [5]uint32
}

// IoctlRemoveKey is fscrypt_ioctl_remove_key (FS_IOC_REMOVE_ENCRYPTION_KEY):
// drop the caller's claim to a key and, when no user claims remain, wipe its
// secret and lock the files it unlocked. Files still in use keep the key
// "incompletely removed" (KeyRemovalStatusFlagFilesBusy) until they are
// evicted; KeyRemovalStatusFlagOtherUser says other users still hold it.
// Errors: EINVAL, EACCES (descriptor key without CAP_SYS_ADMIN), ENOKEY
// (no such key, or the caller never added it).
func IoctlRemoveKey(t *kernel.Task, cred *kernel.Cred, sb SuperBlock, arg *RemoveKeyArg) error {
	return doRemoveKey(t, cred, sb, arg, false)
}

// IoctlRemoveKeyAllUsers is fscrypt_ioctl_remove_key_all_users
// (FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS): like IoctlRemoveKey but drops
// every user's claim; needs CAP_SYS_ADMIN (EACCES).
func IoctlRemoveKeyAllUsers(t *kernel.Task, cred *kernel.Cred, sb SuperBlock, arg *RemoveKeyArg) error {
	if !cred.CapSysAdmin {
		return errno.EACCES
	}
	return doRemoveKey(t, cred, sb, arg, true)
}

// doRemoveKey is do_remove_key.
func doRemoveKey(t *kernel.Task, cred *kernel.Cred, sb SuperBlock, arg *RemoveKeyArg, allUsers bool) (err error) {
	if !arg.KeySpec.valid() || arg.Reserved != [5]uint32{} {
		return errno.EINVAL
	}
	if arg.KeySpec.Type == KeySpecTypeDescriptor && !cred.CapSysAdmin {
		return errno.EACCES
	}
	mk := sb.MasterKeys().findMasterKey(&arg.KeySpec)
	if mk == nil {
		return errno.ENOKEY
	}
	defer putMasterKey(t, mk)
	var status uint32
	mk.sem.Lock()
	if mk.users != nil && len(mk.users.Keys()) != 0 {
		if allUsers {
			err = keys.KeyringClear(t, mk.users)
		} else {
			err = removeMasterKeyUser(t, cred, mk)
		}
		if err != nil {
			mk.sem.Unlock()
			return err
		}
		if len(mk.users.Keys()) != 0 {
			mk.sem.Unlock()
			arg.RemovalStatusFlags = KeyRemovalStatusFlagOtherUser
			return nil
		}
	}
	err = errno.ENOKEY
	if mk.present {
		// fscrypt_initiate_key_removal
		mk.present = false
		mk.secret.wipe()
		mk.sem.Unlock()
		putMasterKeyActiveRef(t, mk)
		mk.sem.Lock()
		err = nil
	}
	inodesRemain := mk.activeRefs.Load() > 0
	mk.sem.Unlock()
	if inodesRemain {
		err = tryToLockEncryptedFiles(t, sb, mk)
		if err == errno.EBUSY {
			status |= KeyRemovalStatusFlagFilesBusy
			err = nil
		}
	}
	if err == nil {
		arg.RemovalStatusFlags = status
	}
	return err
}

// tryToLockEncryptedFiles is try_to_lock_encrypted_files: ask the VFS to
// evict every inode the key unlocked (evict_dentries_for_decrypted_inodes),
// then report EBUSY if some are still in use (check_for_busy_inodes).
func tryToLockEncryptedFiles(t *kernel.Task, sb SuperBlock, mk *MasterKey) error {
	for _, inode := range mk.decryptedInodeList() {
		sb.Cop().EvictDecryptedInode(t, inode)
	}
	busy := mk.decryptedInodeList()
	if len(busy) == 0 {
		return nil
	}
	t.Printk("fscrypt: %s: %d inode(s) still busy after removing key with %s, including ino %d",
		sb.ID(), len(busy), mk.spec.String(), busy[0].Ino())
	return errno.EBUSY
}

// decryptedInodeList returns the inodes on mk_decrypted_inodes, sorted by
// inode number.
func (mk *MasterKey) decryptedInodeList() []Inode {
	mk.inodesMu.Lock()
	out := make([]Inode, 0, len(mk.decryptedInodes))
	for ci := range mk.decryptedInodes {
		out = append(out, ci.inode)
	}
	mk.inodesMu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Ino() < out[j].Ino() })
	return out
}

// GetKeyStatusArg is struct fscrypt_get_key_status_arg.
type GetKeyStatusArg struct {
	KeySpec     KeySpecifier
	Reserved    [6]uint32
	Status      uint32 // out: KeyStatus*
	StatusFlags uint32 // out: KeyStatusFlag*
	UserCount   uint32 // out
	Reserved2   [13]uint32
}

// IoctlGetKeyStatus is fscrypt_ioctl_get_key_status
// (FS_IOC_GET_ENCRYPTION_KEY_STATUS). Errors: EINVAL.
func IoctlGetKeyStatus(t *kernel.Task, cred *kernel.Cred, sb SuperBlock, arg *GetKeyStatusArg) error {
	if !arg.KeySpec.valid() || arg.Reserved != [6]uint32{} {
		return errno.EINVAL
	}
	arg.Status, arg.StatusFlags, arg.UserCount = 0, 0, 0
	arg.Reserved2 = [13]uint32{}
	mk := sb.MasterKeys().findMasterKey(&arg.KeySpec)
	if mk == nil {
		arg.Status = KeyStatusAbsent
		return nil
	}
	defer putMasterKey(t, mk)
	mk.sem.RLock()
	defer mk.sem.RUnlock()
	if !mk.present {
		if mk.activeRefs.Load() > 0 {
			arg.Status = KeyStatusIncompletelyRemoved
		} else {
			arg.Status = KeyStatusAbsent
		}
		return nil
	}
	arg.Status = KeyStatusPresent
	if mk.users != nil {
		arg.UserCount = uint32(len(mk.users.Keys()))
		u, err := findMasterKeyUser(t, cred, mk)
		if err == nil {
			arg.StatusFlags |= KeyStatusFlagAddedBySelf
			keys.KeyPut(t, u)
		} else if err != errno.ENOKEY {
			return err
		}
	}
	return nil
}

// DestroyKeyring is fscrypt_destroy_keyring, called at unmount after every
// inode has been evicted: it drops the keyring's references to each key.
func DestroyKeyring(t *kernel.Task, sb SuperBlock) {
	kr := sb.MasterKeys()
	kr.mu.Lock()
	var mks []*MasterKey
	for _, mk := range kr.keys {
		mks = append(mks, mk)
	}
	kr.mu.Unlock()
	for _, mk := range mks {
		mk.sem.Lock()
		wasPresent := mk.present
		mk.present = false
		mk.secret.wipe()
		mk.sem.Unlock()
		if wasPresent {
			putMasterKeyActiveRef(t, mk)
		}
	}
}
