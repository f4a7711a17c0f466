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
