package fscrypt

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
