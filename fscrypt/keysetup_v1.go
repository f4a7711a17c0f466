package fscrypt

import (
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"sync"
	"sync/atomic"

	"github.com/vfslab/vfslab/crypto"
	"github.com/vfslab/vfslab/crypto/aes"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// Allocation sites of fs/crypto/keysetup_v1.c.
var (
	siteV1DerivedKey = kmem.NewSite("setup_v1_file_key_derived:derived_key")
	directKeyCache   = kmem.NewCache("fscrypt_direct_key", 128)
)

// directKey is struct fscrypt_direct_key: a v1 DIRECT_KEY key, shared by
// every inode using the same master key (descriptor and raw bytes) and mode
// on one filesystem.
type directKey struct {
	sb         SuperBlock
	refs       atomic.Int32
	mode       *Mode
	tfm        *cryptoTfm
	descriptor [KeyDescriptorSize]byte
	raw        [maxKeySize]byte
}

// directKeys is fscrypt_direct_keys with fscrypt_direct_keys_lock.
var (
	directKeysMu sync.Mutex
	directKeys   = map[[KeyDescriptorSize]byte][]*directKey{}
)

// findOrInsertDirectKey is find_or_insert_direct_key: the existing key that
// matches (taking a reference), else toInsert (nil: just look).
func findOrInsertDirectKey(t *kernel.Task, toInsert *directKey, rawKey []byte, ci *InodeInfo) *directKey {
	desc := ci.policy.Descriptor
	sb := ci.inode.SuperBlock()
	directKeysMu.Lock()
	defer directKeysMu.Unlock()
	for _, dk := range directKeys[desc] {
		if dk.sb != sb || dk.mode != ci.mode {
			continue
		}
		if subtle.ConstantTimeCompare(rawKey, dk.raw[:ci.mode.KeySize]) != 1 {
			continue
		}
		dk.refs.Add(1)
		if toInsert != nil {
			freeDirectKey(t, toInsert)
		}
		return dk
	}
	if toInsert != nil {
		directKeys[desc] = append(directKeys[desc], toInsert)
	}
	return toInsert
}

func freeDirectKey(t *kernel.Task, dk *directKey) {
	if dk.tfm != nil {
		dk.tfm.free(t)
	}
	clear(dk.raw[:])
	directKeyCache.Free(&t.Ctx)
}

// putDirectKey is fscrypt_put_direct_key.
func putDirectKey(t *kernel.Task, dk *directKey) {
	directKeysMu.Lock()
	if dk.refs.Add(-1) != 0 {
		directKeysMu.Unlock()
		return
	}
	list := directKeys[dk.descriptor]
	for i, d := range list {
		if d == dk {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(directKeys, dk.descriptor)
	} else {
		directKeys[dk.descriptor] = list
	}
	directKeysMu.Unlock()
	freeDirectKey(t, dk)
}

// setupV1FileKeyDirect is setup_v1_file_key_direct: the master key itself
// (its first keysize bytes) is the key; the nonce goes in the IVs.
func setupV1FileKeyDirect(t *kernel.Task, ci *InodeInfo, rawKey []byte) error {
	if t.WarnOn(ci.mode.IVSize < directKeyMinIVSize, "mode->ivsize < offsetofend(union fscrypt_iv, nonce)") {
		return errno.EINVAL
	}
	raw := rawKey[:ci.mode.KeySize]
	dk := findOrInsertDirectKey(t, nil, raw, ci)
	if dk == nil {
		if err := directKeyCache.Alloc(&t.Ctx, kmem.GFPKernel); err != nil {
			return err
		}
		dk = &directKey{sb: ci.inode.SuperBlock(), mode: ci.mode, descriptor: ci.policy.Descriptor}
		dk.refs.Store(1)
		tfm, err := allocateSkcipher(t, ci.mode, raw, ci.inode)
		if err != nil {
			freeDirectKey(t, dk)
			return err
		}
		dk.tfm = tfm
		copy(dk.raw[:], raw)
		dk = findOrInsertDirectKey(t, dk, raw, ci)
	}
	ci.directKey = dk
	ci.encKey = dk.tfm
	return nil
}

// setupV1FileKeyDerived is setup_v1_file_key_derived: derive the file's key
// with AES-128-ECB (key = nonce, data = master key) as the
// fscrypt-v1-kdf variant in force does it, then prepare a tfm with it.
func setupV1FileKeyDerived(t *kernel.Task, ci *InodeInfo, rawMasterKey []byte) error {
	defer t.Trace("setup_v1_file_key_derived")()
	keysize := ci.mode.KeySize
	sync := false // derive_key_aes with a sync skcipher (Linux 6.17)
	switch v1KDF.Of(t.K.Patches()) {
	case V1KDFAESLib:
		if t.WarnOn(keysize > maxRawKeySize || keysize%aes.BlockSize != 0, "derived_keysize") {
			return errno.EINVAL
		}
		var derived [maxRawKeySize]byte
		if err := deriveKeyAESLib(t, rawMasterKey[:keysize], ci.nonce[:], derived[:keysize]); err != nil {
			return err
		}
		t.Inc(EvKeyDerive)
		err := setPerFileEncKey(t, ci, derived[:keysize])
		clear(derived[:keysize])
		return err
	case V1KDFSync:
		sync = true
	case V1KDFBase:
	}
	// Base and sync: a kmalloc'd buffer, since the scatterlist API
	// cannot take a stack address.
	derived, err := t.Kmalloc(siteV1DerivedKey, keysize, kmem.GFPKernel)
	if err != nil {
		return err
	}
	defer t.KfreeSensitive(siteV1DerivedKey, derived)
	if sync {
		err = deriveKeyAESSync(t, ci.inode.SuperBlock(), rawMasterKey[:keysize], ci.nonce[:], derived)
	} else {
		err = deriveKeyAES(t, ci.inode.SuperBlock(), rawMasterKey[:keysize], ci.nonce[:], derived)
	}
	if err != nil {
		return err
	}
	t.Inc(EvKeyDerive)
	return setPerFileEncKey(t, ci, derived)
}

// deriveKeyAESLib is the Linux 7.1 derivation: aes_prepareenckey with the
// nonce, then aes_encrypt of each 16-byte block of the master key. The AES
// context is not secret (its key is the nonce) and is not wiped, as in the
// kernel.
func deriveKeyAESLib(t *kernel.Task, masterKey, nonce, derived []byte) error {
	defer t.Trace("derive_key_aes")()
	var c aes.Ctx
	endKey := t.Trace("aes_prepareenckey")
	err := crypto.AESExpandKey(t, &c, nonce)
	endKey()
	if err != nil {
		return err
	}
	endEnc := t.Trace("aes_encrypt")
	if t.Tracing() {
		t.TraceNote("the AES library, no tfm and no request: %d block(s), one call each", len(derived)/aes.BlockSize)
	}
	err = crypto.AESEncryptBlocks(t, &c, derived, masterKey)
	endEnc()
	return err
}

// setupV1FileKey is fscrypt_setup_v1_file_key.
func setupV1FileKey(t *kernel.Task, ci *InodeInfo, rawMasterKey []byte, mk *MasterKey) error {
	if ci.policy.Flags&PolicyFlagDirectKey != 0 {
		return setupV1FileKeyDirect(t, ci, rawMasterKey)
	}
	return setupV1FileKeyDerived(t, ci, rawMasterKey)
}

// DeriveV1Key runs the v1 key derivation of the fscrypt-v1-kdf variant that
// t's kernel runs, with sb's Crypto API: AES-128-ECB of masterKey[:len(derived)] under the
// 16-byte nonce, into derived (a multiple of 16 bytes, at most 64). It is
// what setup_v1_file_key_derived does before preparing the key, exposed for
// benchmarks and the CLI. Errors: EINVAL, ENOMEM, Crypto API errors.
func DeriveV1Key(t *kernel.Task, sb SuperBlock, masterKey []byte, nonce [FileNonceSize]byte, derived []byte) error {
	n := len(derived)
	if n == 0 || n%aes.BlockSize != 0 || n > maxRawKeySize || len(masterKey) < n {
		return errno.EINVAL
	}
	sync := false // derive_key_aes with a sync skcipher (Linux 6.17)
	switch v1KDF.Of(t.K.Patches()) {
	case V1KDFAESLib:
		var buf [maxRawKeySize]byte
		if err := deriveKeyAESLib(t, masterKey[:n], nonce[:], buf[:n]); err != nil {
			return err
		}
		copy(derived, buf[:n])
		clear(buf[:n])
		return nil
	case V1KDFSync:
		sync = true
	case V1KDFBase:
	}
	buf, err := t.Kmalloc(siteV1DerivedKey, n, kmem.GFPKernel)
	if err != nil {
		return err
	}
	defer t.KfreeSensitive(siteV1DerivedKey, buf)
	// The scatterlist API takes the nonce's address: a copy, so that
	// the library variant's nonce can stay on the stack.
	key := nonce
	if sync {
		err = deriveKeyAESSync(t, sb, masterKey[:n], key[:], buf)
	} else {
		err = deriveKeyAES(t, sb, masterKey[:n], key[:], buf)
	}
	if err != nil {
		return err
	}
	copy(derived, buf)
	return nil
}

// KeyDescPrefix is FSCRYPT_KEY_DESC_PREFIX, the description prefix of a v1
// key in a process keyring: "fscrypt:" and the descriptor in lowercase hex.
const KeyDescPrefix = "fscrypt:"

// fscryptKeyPayloadSize is sizeof(struct fscrypt_key), the payload of a
// "logon" key for a v1 policy: __u32 mode (ignored), __u8 raw[64], __u32
// size, packed, in the CPU's (little-endian) byte order.
const fscryptKeyPayloadSize = 4 + maxRawKeySize + 4

// LegacyKeyPrefixer is the optional part of Operations that holds
// ->legacy_key_prefix, the filesystem-specific description prefix of v1
// keys ("ext4:", "f2fs:") accepted after "fscrypt:".
type LegacyKeyPrefixer interface {
	LegacyKeyPrefix() string
}

// siteKeyDescription is find_and_lock_process_key's kasprintf of the key's
// description ("fscrypt:" or the legacy prefix, then the descriptor).
var siteKeyDescription = kmem.NewSite("find_and_lock_process_key:description")

// findAndLockProcessKey is keysetup_v1.c find_and_lock_process_key: the
// raw key of the "logon" key prefix+descriptor in the current task's
// keyrings, at least minKeySize bytes long. A key with a malformed or too
// short payload is reported and treated as absent (ENOKEY).
func findAndLockProcessKey(t *kernel.Task, prefix string, descriptor *[KeyDescriptorSize]byte, minKeySize int) ([]byte, error) {
	// kasprintf(GFP_KERNEL, "%s%*phN", ...): the description is a
	// kmalloc'd string, freed right after request_key.
	description := prefix + hex.EncodeToString(descriptor[:])
	buf, err := t.Kmalloc(siteKeyDescription, len(description)+1, kmem.GFPKernel)
	if err != nil {
		return nil, err
	}
	kr := t.CurrentCred().SessionKeyring
	if kr == nil {
		// request_key finds no keyring to search.
		t.Kfree(siteKeyDescription, buf)
		return nil, errno.ENOKEY
	}
	payload, err := kr.RequestKey("logon", description)
	t.Kfree(siteKeyDescription, buf)
	if err != nil {
		return nil, err
	}
	if len(payload) != fscryptKeyPayloadSize {
		warn(t, nil, "key with description '%s' has invalid payload", description)
		return nil, errno.ENOKEY
	}
	size := int(binary.LittleEndian.Uint32(payload[4+maxRawKeySize:]))
	if size < 1 || size > maxRawKeySize {
		warn(t, nil, "key with description '%s' has invalid payload", description)
		return nil, errno.ENOKEY
	}
	if size < minKeySize {
		warn(t, nil, "key with description '%s' is too short (got %d bytes, need %d+ bytes)", description, size, minKeySize)
		return nil, errno.ENOKEY
	}
	return payload[4 : 4+maxRawKeySize], nil
}

// setupV1FileKeyViaSubscribedKeyrings is
// fscrypt_setup_v1_file_key_via_subscribed_keyrings: set up a v1 inode's
// key from a "logon" key "fscrypt:DESCRIPTOR" (or the filesystem's legacy
// prefix) in the current task's keyrings. The inode then holds its key
// without a master key: removing the keyring's key does not lock it, only
// its eviction does. Errors: ENOKEY, EKEYREVOKED, and the key setup's.
func setupV1FileKeyViaSubscribedKeyrings(t *kernel.Task, ci *InodeInfo) error {
	raw, err := findAndLockProcessKey(t, KeyDescPrefix, &ci.policy.Descriptor, ci.mode.KeySize)
	if err == errno.ENOKEY {
		if lp, ok := ci.inode.SuperBlock().Cop().(LegacyKeyPrefixer); ok && lp.LegacyKeyPrefix() != "" {
			raw, err = findAndLockProcessKey(t, lp.LegacyKeyPrefix(), &ci.policy.Descriptor, ci.mode.KeySize)
		}
	}
	if err != nil {
		return err
	}
	return setupV1FileKey(t, ci, raw, nil)
}
