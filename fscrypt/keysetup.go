package fscrypt

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/dchest/siphash"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// sipKey is siphash_key_t: two little-endian 64-bit words.
type sipKey [2]uint64

func sipKeyFromBytes(b []byte) sipKey {
	return sipKey{binary.LittleEndian.Uint64(b[0:]), binary.LittleEndian.Uint64(b[8:])}
}

// siphash1u64 is siphash_1u64: SipHash-2-4 of le64(v).
func siphash1u64(v uint64, k *sipKey) uint64 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return siphash.Hash(k[0], k[1], b[:])
}

// preparedKey is struct fscrypt_prepared_key: a keyed tfm, published with a
// release store so that a reader that sees the pointer sees a keyed tfm.
type preparedKey struct {
	tfm atomic.Pointer[cryptoTfm]
}

// InodeInfo is struct fscrypt_inode_info (i_crypt_info): an inode's
// encryption key and policy, set up when the inode is first accessed with
// its master key present.
type InodeInfo struct {
	inode  Inode
	policy Policy
	nonce  [FileNonceSize]byte
	mode   *Mode
	// encKey is ci_enc_key: the tfm this inode encrypts with, its own
	// (ownsKey) or a per-mode key shared through the master key.
	encKey  *cryptoTfm
	ownsKey bool
	// masterKey is ci_master_key; the info holds an active reference and
	// sits on the key's decrypted-inodes list.
	masterKey *MasterKey
	directKey *directKey // v1 DIRECT_KEY
	// dataUnitBits is ci_data_unit_bits, dataUnitsPerBlockBits
	// ci_data_units_per_block_bits.
	dataUnitBits          uint8
	dataUnitsPerBlockBits uint8
	// hashedIno is ci_hashed_ino (IV_INO_LBLK_32).
	hashedIno uint32
	// dirhashKey is ci_dirhash_key (casefolded encrypted directories).
	dirhashKey            sipKey
	dirhashKeyInitialized bool
}

// Policy returns the inode's policy.
func (ci *InodeInfo) Policy() Policy { return ci.policy }

// Nonce returns the inode's nonce.
func (ci *InodeInfo) Nonce() [FileNonceSize]byte { return ci.nonce }

// Mode returns the mode the inode's key is for (contents for regular files,
// filenames for directories and symlinks).
func (ci *InodeInfo) Mode() *Mode { return ci.mode }

// DataUnitSize returns the contents data unit size in bytes.
func (ci *InodeInfo) DataUnitSize() int { return 1 << ci.dataUnitBits }

// String is the canonical one-line dump.
func (ci *InodeInfo) String() string {
	drv := "-"
	if ci.encKey != nil {
		drv = ci.encKey.driverName()
	}
	s := fmt.Sprintf("ino=%d %s mode=%s nonce=%s du=%d driver=%s", ci.inode.Ino(), ci.policy.String(),
		ci.mode.FriendlyName, hex.EncodeToString(ci.nonce[:]), 1<<ci.dataUnitBits, drv)
	if ci.policy.Flags&PolicyFlagIVInoLblk32 != 0 {
		s += fmt.Sprintf(" hashed_ino=0x%08x", ci.hashedIno)
	}
	if ci.dirhashKeyInitialized {
		s += " dirhash_key"
	}
	return s
}

// ciCache is fscrypt_inode_info_cachep.
var ciCache = kmem.NewCache("fscrypt_inode_info", 136)

// modeKeySetupMu is fscrypt_mode_key_setup_mutex.
var modeKeySetupMu sync.Mutex

// selectEncryptionMode is fs/crypto/keysetup.c select_encryption_mode.
func selectEncryptionMode(t *kernel.Task, p *Policy, inode Inode) (*Mode, error) {
	switch {
	case isReg(inode):
		return ModeByNum(int(p.ContentsMode)), nil
	case isDir(inode) || isLnk(inode):
		return ModeByNum(int(p.FilenamesMode)), nil
	}
	t.WarnOn(true, fmt.Sprintf("fscrypt: filesystem tried to load encryption info for inode %d, which is not encryptable (file type %d)", inode.Ino(), inode.Mode()&SIFMT))
	return nil, errno.EINVAL
}

// prepareKey is fscrypt_prepare_key: allocate and key a tfm for ci's mode
// and publish it in prepKey.
func prepareKey(t *kernel.Task, prepKey *preparedKey, rawKey []byte, ci *InodeInfo) error {
	tfm, err := allocateSkcipher(t, ci.mode, rawKey, ci.inode)
	if err != nil {
		return err
	}
	prepKey.tfm.Store(tfm)
	return nil
}

// destroyPreparedKey is fscrypt_destroy_prepared_key.
func destroyPreparedKey(t *kernel.Task, k *preparedKey) {
	if tfm := k.tfm.Swap(nil); tfm != nil {
		tfm.free(t)
	}
}

// setPerFileEncKey is fscrypt_set_per_file_enc_key.
func setPerFileEncKey(t *kernel.Task, ci *InodeInfo, rawKey []byte) error {
	// fscrypt_prepare_key(&ci->ci_enc_key, raw_key, ci): the prepared
	// key is ci's own (ci.encKey), so no preparedKey is declared for it
	// (one here would move to the Go heap through its atomic pointer).
	tfm, err := allocateSkcipher(t, ci.mode, rawKey, ci.inode)
	if err != nil {
		return err
	}
	ci.ownsKey = true
	ci.encKey = tfm
	return nil
}

// setupPerModeEncKey is fs/crypto/keysetup.c setup_per_mode_enc_key: the
// key shared by every inode of a DIRECT_KEY or IV_INO_LBLK_* policy that
// uses this master key and mode, derived once.
func setupPerModeEncKey(t *kernel.Task, ci *InodeInfo, mk *MasterKey, keys *[modeMax + 1]preparedKey, context byte, includeFsUUID bool) error {
	modeNum := ci.mode.Num
	prep := &keys[modeNum]
	if tfm := prep.tfm.Load(); tfm != nil {
		ci.encKey = tfm
		return nil
	}
	modeKeySetupMu.Lock()
	defer modeKeySetupMu.Unlock()
	if tfm := prep.tfm.Load(); tfm != nil {
		ci.encKey = tfm
		return nil
	}
	var modeKey [maxKeySize]byte
	derivePerModeKey(ci, mk, context, includeFsUUID, modeKey[:ci.mode.KeySize])
	t.Inc(EvKeyDerive)
	err := prepareKey(t, prep, modeKey[:ci.mode.KeySize], ci)
	clear(modeKey[:])
	if err != nil {
		return err
	}
	ci.encKey = prep.tfm.Load()
	return nil
}

// derivePerModeKey is the derivation step of setup_per_mode_enc_key: HKDF
// with info mode_num (|| s_uuid).
func derivePerModeKey(ci *InodeInfo, mk *MasterKey, context byte, includeFsUUID bool, out []byte) {
	var info [1 + 16]byte
	n := 0
	info[n] = byte(ci.mode.Num)
	n++
	if includeFsUUID {
		u := ci.inode.SuperBlock().UUID()
		copy(info[n:], u[:])
		n += 16
	}
	mk.secret.hkdf.expand(context, info[:n], out)
}

// deriveDirhashKey is fscrypt_derive_dirhash_key: HKDF context 5 with the
// directory's nonce, 16 bytes read as two le64 SipHash key words.
func deriveDirhashKey(ci *InodeInfo, mk *MasterKey) {
	var b [16]byte
	mk.secret.hkdf.expand(HKDFContextDirhashKey, ci.nonce[:], b[:])
	ci.dirhashKey = sipKeyFromBytes(b[:])
	ci.dirhashKeyInitialized = true
	clear(b[:])
}

// hashInodeNumber is fscrypt_hash_inode_number (IV_INO_LBLK_32).
func hashInodeNumber(ci *InodeInfo, mk *MasterKey) {
	ci.hashedIno = uint32(siphash1u64(ci.inode.Ino(), &mk.inoHashKey))
}

// setupIVInoLblk32Key is fscrypt_setup_iv_ino_lblk_32_key.
func setupIVInoLblk32Key(t *kernel.Task, ci *InodeInfo, mk *MasterKey) error {
	if err := setupPerModeEncKey(t, ci, mk, &mk.ivInoLblk32Keys, HKDFContextIVInoLblk32Key, true); err != nil {
		return err
	}
	if !mk.inoHashKeyInitialized.Load() {
		modeKeySetupMu.Lock()
		if !mk.inoHashKeyInitialized.Load() {
			var b [16]byte
			mk.secret.hkdf.expand(HKDFContextInodeHashKey, nil, b[:])
			mk.inoHashKey = sipKeyFromBytes(b[:])
			clear(b[:])
			mk.inoHashKeyInitialized.Store(true)
		}
		modeKeySetupMu.Unlock()
	}
	// A new inode may have no number yet; SetContext hashes it later.
	if ci.inode.Ino() != 0 {
		hashInodeNumber(ci, mk)
	}
	return nil
}

// setupV2FileKey is fscrypt_setup_v2_file_key.
func setupV2FileKey(t *kernel.Task, ci *InodeInfo, mk *MasterKey, needDirhashKey bool) error {
	var err error
	switch f := ci.policy.Flags; {
	case f&PolicyFlagDirectKey != 0:
		err = setupPerModeEncKey(t, ci, mk, &mk.directKeys, HKDFContextDirectKey, false)
	case f&PolicyFlagIVInoLblk64 != 0:
		err = setupPerModeEncKey(t, ci, mk, &mk.ivInoLblk64Keys, HKDFContextIVInoLblk64Key, true)
	case f&PolicyFlagIVInoLblk32 != 0:
		err = setupIVInoLblk32Key(t, ci, mk)
	default:
		var derived [maxKeySize]byte
		mk.secret.hkdf.expand(HKDFContextPerFileEncKey, ci.nonce[:], derived[:ci.mode.KeySize])
		t.Inc(EvKeyDerive)
		err = setPerFileEncKey(t, ci, derived[:ci.mode.KeySize])
		clear(derived[:])
	}
	if err != nil {
		return err
	}
	if needDirhashKey {
		deriveDirhashKey(ci, mk)
	}
	return nil
}

// validMasterKeySize is fscrypt_valid_master_key_size.
func validMasterKeySize(t *kernel.Task, mk *MasterKey, ci *InodeInfo) bool {
	min := ci.mode.SecurityStrength
	if ci.policy.Version == PolicyV1 {
		min = ci.mode.KeySize
	}
	if mk.secret.size < min {
		warn(t, nil, "key with %s is too short (got %d bytes, need %d+ bytes)", mk.spec.String(), mk.secret.size, min)
		return false
	}
	return true
}

// setupFileEncryptionKey is fs/crypto/keysetup.c setup_file_encryption_key.
// On success it returns the master key with mk.sem read-held and a struct
// reference, which the caller releases.
func setupFileEncryptionKey(t *kernel.Task, ci *InodeInfo, needDirhashKey bool) (*MasterKey, error) {
	spec := ci.policy.KeySpec()
	mk := ci.inode.SuperBlock().MasterKeys().findMasterKey(&spec)
	if mk == nil {
		if ci.policy.Version != PolicyV1 {
			return nil, errno.ENOKEY
		}
		// As a legacy fallback, a v1 policy's key is searched for in
		// the current task's subscribed keyrings too, after the
		// filesystem's keyring so that users cannot override it.
		return nil, setupV1FileKeyViaSubscribedKeyrings(t, ci)
	}
	mk.sem.RLock()
	var err error
	switch {
	case !mk.present:
		err = errno.ENOKEY
	case !validMasterKeySize(t, mk, ci):
		err = errno.ENOKEY
	case ci.policy.Version == PolicyV1:
		err = setupV1FileKey(t, ci, mk.secret.raw[:mk.secret.size], mk)
	default:
		err = setupV2FileKey(t, ci, mk, needDirhashKey)
	}
	if err != nil {
		mk.sem.RUnlock()
		putMasterKey(t, mk)
		return nil, err
	}
	return mk, nil
}

// putCryptInfo is fs/crypto/keysetup.c put_crypt_info.
func putCryptInfo(t *kernel.Task, ci *InodeInfo) {
	if ci == nil {
		return
	}
	if ci.directKey != nil {
		putDirectKey(t, ci.directKey)
	} else if ci.ownsKey && ci.encKey != nil {
		ci.encKey.free(t)
	}
	ci.encKey = nil
	if mk := ci.masterKey; mk != nil {
		mk.inodesMu.Lock()
		delete(mk.decryptedInodes, ci)
		mk.inodesMu.Unlock()
		putMasterKeyActiveRef(t, mk)
	}
	ci.dirhashKey = sipKey{}
	ciCache.Free(&t.Ctx)
}

// setupEncryptionInfo is fs/crypto/keysetup.c fscrypt_setup_encryption_info.
func setupEncryptionInfo(t *kernel.Task, inode Inode, p *Policy, nonce [FileNonceSize]byte, needDirhashKey bool) error {
	if err := ciCache.Alloc(&t.Ctx, kmem.GFPKernel); err != nil {
		return err
	}
	t.Inc(EvKeySetupInode)
	ci := &InodeInfo{inode: inode, policy: *p, nonce: nonce}
	mode, err := selectEncryptionMode(t, p, inode)
	if err != nil {
		ciCache.Free(&t.Ctx)
		return err
	}
	ci.mode = mode
	ci.dataUnitBits = uint8(policyDuBits(p, inode))
	ci.dataUnitsPerBlockBits = inode.Blkbits() - ci.dataUnitBits

	mk, err := setupFileEncryptionKey(t, ci, needDirhashKey)
	if err != nil {
		putCryptInfo(t, ci)
		return err
	}
	if inode.CasCryptInfo(nil, ci) {
		if mk != nil {
			ci.masterKey = mk
			mk.activeRefs.Add(1)
			mk.inodesMu.Lock()
			mk.decryptedInodes[ci] = struct{}{}
			mk.inodesMu.Unlock()
		}
		ci = nil
	}
	if mk != nil {
		mk.sem.RUnlock()
		putMasterKey(t, mk)
	}
	putCryptInfo(t, ci)
	return nil
}

// GetEncryptionInfo is fscrypt_get_encryption_info: set up inode's key from
// its stored context if the master key is present. A missing key is not an
// error (the inode stays locked: CryptInfo is nil). With allowUnsupported
// an unrecognized or unsupported policy is tolerated too, so that such
// files can be listed and deleted. Errors: EINVAL (bad context or policy),
// ENOPKG (algorithm unavailable), ENOMEM, and ->get_context errors.
func GetEncryptionInfo(t *kernel.Task, inode Inode, allowUnsupported bool) error {
	defer t.Trace("fscrypt_get_encryption_info")()
	if inode.CryptInfo() != nil {
		return nil
	}
	var buf [MaxContextSize]byte
	n, err := inode.SuperBlock().Cop().GetContext(t, inode, buf[:])
	if err != nil {
		if err == errno.ERANGE && allowUnsupported {
			return nil
		}
		e, _ := errno.Of(err)
		warn(t, inode, "Error %d getting encryption context", -int(e))
		return err
	}
	ctx, err := ParseContext(buf[:n])
	if err != nil {
		if allowUnsupported {
			return nil
		}
		warn(t, inode, "Unrecognized or corrupt encryption context")
		return err
	}
	if !SupportedPolicy(t, &ctx.Policy, inode) {
		if allowUnsupported {
			return nil
		}
		return errno.EINVAL
	}
	err = setupEncryptionInfo(t, inode, &ctx.Policy, ctx.Nonce, inode.IsCasefolded() && isDir(inode))
	if err == errENOPKG && allowUnsupported {
		err = nil
	}
	if err == errno.ENOKEY {
		err = nil
	}
	return err
}

// HasEncryptionKey is fscrypt_has_encryption_key.
func HasEncryptionKey(inode Inode) bool { return inode.CryptInfo() != nil }

// RequireKey is fscrypt_require_key: set up an encrypted inode's key, ENOKEY
// if it is unavailable (0 for unencrypted inodes).
func RequireKey(t *kernel.Task, inode Inode) error {
	if !inode.IsEncrypted() {
		return nil
	}
	if err := GetEncryptionInfo(t, inode, false); err != nil {
		return err
	}
	if !HasEncryptionKey(inode) {
		return errno.ENOKEY
	}
	return nil
}

// PrepareNewInode is fscrypt_prepare_new_inode: decide whether a new inode
// created in dir is encrypted (returned encrypt) and if so set up its key
// with dir's policy and a fresh random nonce. The filesystem then stores the
// context with SetContext once the inode has a number. Errors: ENOKEY when
// dir is encrypted and its key is unavailable, EINVAL, ENOMEM.
func PrepareNewInode(t *kernel.Task, dir, inode Inode) (encrypt bool, err error) {
	defer t.Trace("fscrypt_prepare_new_inode")()
	p, err := policyToInherit(t, dir)
	if p == nil || err != nil {
		return false, err
	}
	if inode.Mode() == 0 {
		t.WarnOn(true, "inode->i_mode == 0")
		return false, errno.EINVAL
	}
	if !isReg(inode) && !isDir(inode) && !isLnk(inode) {
		return false, nil
	}
	var nonce [FileNonceSize]byte
	t.K.GetRandomBytes(nonce[:])
	pol := *p
	return true, setupEncryptionInfo(t, inode, &pol, nonce, dir.IsCasefolded() && isDir(inode))
}

// SetContext is fscrypt_set_context: store the new inode's context (from the
// key set up by PrepareNewInode) through ->set_context, hashing the inode
// number first for IV_INO_LBLK_32 since it may only now be known.
func SetContext(t *kernel.Task, inode Inode, fsData any) error {
	defer t.Trace("fscrypt_set_context")()
	ci := inode.CryptInfo()
	if ci == nil {
		t.WarnOn(true, "!ci")
		return errno.ENOKEY
	}
	ctx := Context{Policy: ci.policy, Nonce: ci.nonce}
	if ci.policy.Version == PolicyV2 && ci.policy.Flags&PolicyFlagIVInoLblk32 != 0 {
		hashInodeNumber(ci, ci.masterKey)
	}
	return inode.SuperBlock().Cop().SetContext(t, inode, ctx.Marshal(), fsData)
}

// PutEncryptionInfo is fscrypt_put_encryption_info, called by the VFS when
// it evicts an inode: free the inode's key and drop its master key's active
// reference (which may finish an incomplete key removal).
func PutEncryptionInfo(t *kernel.Task, inode Inode) {
	ci := inode.CryptInfo()
	if ci == nil || !inode.CasCryptInfo(ci, nil) {
		return
	}
	putCryptInfo(t, ci)
}

// DropInode is fscrypt_drop_inode, for the VFS's ->drop_inode: whether an
// inode whose last reference is going away must be evicted now because the
// master key that unlocked it has been removed.
func DropInode(inode Inode) bool {
	ci := inode.CryptInfo()
	if ci == nil || ci.masterKey == nil {
		return false
	}
	mk := ci.masterKey
	mk.sem.RLock()
	defer mk.sem.RUnlock()
	return !mk.present
}

// PrepareSetflags is fscrypt_prepare_setflags for FS_CASEFOLD_FL: setting
// casefold on an encrypted directory derives its dirhash key, which needs a
// v2 policy (EINVAL) and the key (ENOKEY).
func PrepareSetflags(t *kernel.Task, inode Inode, addingCasefold bool) error {
	if !inode.IsEncrypted() || !addingCasefold {
		return nil
	}
	if err := RequireKey(t, inode); err != nil {
		return err
	}
	ci := inode.CryptInfo()
	if ci.policy.Version != PolicyV2 {
		return errno.EINVAL
	}
	mk := ci.masterKey
	mk.sem.RLock()
	defer mk.sem.RUnlock()
	if !mk.present {
		return errno.ENOKEY
	}
	deriveDirhashKey(ci, mk)
	return nil
}
