package fscrypt

import (
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// DerivedKey returns the raw key fs/crypto prepared for inode (whose key is
// set up): what setup_v1_file_key_derived, setup_v1_file_key_direct,
// fscrypt_setup_v2_file_key or setup_per_mode_enc_key handed to
// fscrypt_prepare_key. The kernel never exposes it; the simulator does, for
// known-answer tests and `vfslab crypt derive`. It re-derives the key from
// the master key with the same functions key setup uses. Errors: ENOKEY
// (key not set up, or its master key removed), EINVAL, ENOMEM.
func DerivedKey(t *kernel.Task, inode Inode) ([]byte, error) {
	ci := inode.CryptInfo()
	if ci == nil {
		return nil, errno.ENOKEY
	}
	spec := ci.policy.KeySpec()
	mk := inode.SuperBlock().MasterKeys().findMasterKey(&spec)
	if mk == nil {
		return nil, errno.ENOKEY
	}
	defer putMasterKey(t, mk)
	mk.sem.RLock()
	defer mk.sem.RUnlock()
	if !mk.present {
		return nil, errno.ENOKEY
	}
	out := make([]byte, ci.mode.KeySize)
	switch f := ci.policy.Flags; {
	case ci.policy.Version == PolicyV1 && f&PolicyFlagDirectKey != 0:
		copy(out, mk.secret.raw[:ci.mode.KeySize])
	case ci.policy.Version == PolicyV1:
		if err := DeriveV1Key(t, inode.SuperBlock(), mk.secret.raw[:mk.secret.size], ci.nonce, out); err != nil {
			return nil, err
		}
	case f&PolicyFlagDirectKey != 0:
		derivePerModeKey(ci, mk, HKDFContextDirectKey, false, out)
	case f&PolicyFlagIVInoLblk64 != 0:
		derivePerModeKey(ci, mk, HKDFContextIVInoLblk64Key, true, out)
	case f&PolicyFlagIVInoLblk32 != 0:
		derivePerModeKey(ci, mk, HKDFContextIVInoLblk32Key, true, out)
	default:
		mk.secret.hkdf.expand(HKDFContextPerFileEncKey, ci.nonce[:], out)
	}
	return out, nil
}

// HashedIno returns ci_hashed_ino, the SipHash of the inode number under the
// master key's inode-hash key (IV_INO_LBLK_32 policies; 0 otherwise).
func HashedIno(inode Inode) (uint32, bool) {
	ci := inode.CryptInfo()
	if ci == nil || ci.policy.Flags&PolicyFlagIVInoLblk32 == 0 {
		return 0, false
	}
	return ci.hashedIno, true
}
