package f2fs

import (
	"encoding/binary"

	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
)

// FscryptNames is the NameCrypt of an encrypted directory backed by package
// fscrypt: Dir is the directory's fscrypt inode (its *vfs.Inode when the
// directory belongs to a mounted f2fs).
type FscryptNames struct {
	Dir fscrypt.Inode
}

// HasKey is fscrypt_has_encryption_key.
func (c FscryptNames) HasKey() bool { return fscrypt.HasEncryptionKey(c.Dir) }

// SetupFilename is fscrypt_setup_filename.
func (c FscryptNames) SetupFilename(t *kernel.Task, iname []byte, lookup bool) (CryptName, error) {
	n := new(fscrypt.Name)
	if err := fscrypt.SetupFilename(t, c.Dir, iname, lookup, n); err != nil {
		return CryptName{}, err
	}
	return FscryptCryptName(n), nil
}

// FscryptCryptName wraps a name prepared by package fscrypt (by
// fscrypt_prepare_lookup, for instance) as the directory code's CryptName;
// FscryptNames.FreeFilename releases it.
func FscryptCryptName(n *fscrypt.Name) CryptName {
	return CryptName{DiskName: n.DiskName, IsNokeyName: n.IsNokeyName, Hash: n.Hash, MinorHash: n.MinorHash, Priv: n}
}

// FreeFilename is fscrypt_free_filename.
func (c FscryptNames) FreeFilename(t *kernel.Task, n *CryptName) {
	if fn, ok := n.Priv.(*fscrypt.Name); ok {
		fscrypt.FreeFilename(t, fn)
	}
}

// MatchName is fscrypt_match_name.
func (c FscryptNames) MatchName(n *CryptName, deName []byte) bool {
	return fscrypt.MatchName(n.Priv.(*fscrypt.Name), deName)
}

// DiskToUsr is fscrypt_fname_disk_to_usr.
func (c FscryptNames) DiskToUsr(t *kernel.Task, hash, minorHash uint32, iname, oname []byte) (int, error) {
	return fscrypt.FnameDiskToUsr(t, c.Dir, hash, minorHash, iname, oname)
}

// DirhashKey is the directory's ci_dirhash_key as two le64 words.
func (c FscryptNames) DirhashKey() ([2]uint64, bool) {
	b, ok := fscrypt.DirhashKey(c.Dir)
	return [2]uint64{binary.LittleEndian.Uint64(b[0:]), binary.LittleEndian.Uint64(b[8:])}, ok
}
