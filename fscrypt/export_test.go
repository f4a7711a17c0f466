package fscrypt

import "github.com/vfslab/vfslab/crypto"

// Internals exposed to the external tests of this package.

// MasterKeySecretForTest returns the master key's raw secret array and its
// size, so that a test can check it is wiped.
func MasterKeySecretForTest(mk *MasterKey) (*[maxRawKeySize]byte, int) {
	return &mk.secret.raw, mk.secret.size
}

// FindMasterKeyForTest finds a key in a keyring (dropping the reference at
// once).
func FindMasterKeyForTest(kr *Keyring, spec KeySpecifier) *MasterKey {
	mk := kr.findMasterKey(&spec)
	if mk != nil {
		mk.structRefs.Add(-1)
	}
	return mk
}

// ActiveRefsForTest returns mk_active_refs.
func ActiveRefsForTest(mk *MasterKey) int32 { return mk.activeRefs.Load() }

// HKDFExpandForTest runs fscrypt_hkdf_expand on a master key's prepared
// HKDF (the v2 key derivation proper).
func HKDFExpandForTest(mk *MasterKey, context byte, info, out []byte) {
	mk.secret.hkdf.expand(context, info, out)
}

// TfmReqsizeForTest returns crypto_skcipher_reqsize of the inode's tfm.
func TfmReqsizeForTest(ci *InodeInfo) int { return ci.encKey.tfm.ReqSize() }

// HKDFKeyWipedForTest reports whether the master key's prepared HMAC key
// (the HKDF state every v2 subkey is derived from) is all zero.
func HKDFKeyWipedForTest(mk *MasterKey) bool { return mk.secret.hkdf.key.IsZero() }

// InodeTfmForTest returns the inode's ci_enc_key tfm (nil when none).
func InodeTfmForTest(ci *InodeInfo) *crypto.Skcipher {
	if ci == nil || ci.encKey == nil {
		return nil
	}
	if ci.encKey.sync != nil {
		return ci.encKey.sync.Base()
	}
	return ci.encKey.tfm
}
