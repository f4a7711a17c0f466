package vfs

import (
	"encoding/binary"

	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
)

// Encoding is what a filesystem's directory code needs from the
// superblock's Unicode map (sb->s_encoding, struct unicode_map,
// fs/unicode/utf8-core.c). Package fsunicode's *Map provides it; tests may
// use a double. Every method reports a name that is not valid UTF-8 as
// errno.EINVAL, as the kernel functions return -EINVAL.
type Encoding interface {
	CIEncoding
	// Validate is utf8_validate: nil when name is valid UTF-8.
	Validate(name []byte) error
	// Casefold is utf8_casefold(um, name, dst, len(dst)): it writes the
	// casefolded form of name into dst and returns its length. A folded
	// form that does not fit is an error (ENAMETOOLONG).
	Casefold(dst, name []byte) (int, error)
}

// CryptName is the part of struct fscrypt_name (include/linux/fscrypt.h)
// that a filesystem's directory code reads: the on-disk form of the name
// being looked up or created, and for a no-key name the hash decoded from
// it.
type CryptName struct {
	// DiskName is disk_name: the ciphertext of the user's name, or for a
	// no-key name the bytes decoded from it (nil when the no-key name
	// carries only a digest of a long name).
	DiskName []byte
	// IsNokeyName is is_nokey_name: the name was given without the key.
	IsNokeyName bool
	// Hash and MinorHash are the dirhash decoded from a no-key name.
	Hash, MinorHash uint32
	// Priv is private to the NameCrypt that made it (crypto_buf and the
	// like).
	Priv any
}

// NameCrypt is what the directory code of an encrypted directory needs from
// fscrypt (fs/crypto/fname.c), bound to that directory's inode and key.
// FscryptNames provides it; tests may use a double.
type NameCrypt interface {
	// HasKey is fscrypt_has_encryption_key(dir).
	HasKey() bool
	// SetupFilename is fscrypt_setup_filename(dir, iname, lookup, &fname):
	// it encrypts iname (or, without the key and when lookup is set,
	// decodes a no-key name). Errors as the kernel's (ENOKEY, ENOENT for a
	// no-key name that cannot exist, ENAMETOOLONG, ENOMEM).
	SetupFilename(t *kernel.Task, iname []byte, lookup bool) (CryptName, error)
	// FreeFilename is fscrypt_free_filename.
	FreeFilename(t *kernel.Task, n *CryptName)
	// MatchName is fscrypt_match_name(fname, de_name, de_name_len).
	MatchName(n *CryptName, deName []byte) bool
	// DiskToUsr is fscrypt_fname_disk_to_usr(dir, hash, minor_hash, iname,
	// oname): it writes the user-visible form of the on-disk name iname
	// into oname and returns its length. With the key that is the
	// plaintext, len(iname) bytes of output before the NUL padding is cut;
	// without it a no-key name. The caller sizes oname as the kernel does.
	DiskToUsr(t *kernel.Task, hash, minorHash uint32, iname, oname []byte) (int, error)
	// DirhashKey returns the directory's SipHash key (ci_dirhash_key) for
	// encrypted and casefolded directories as two le64 words; ok is false
	// without the key.
	DirhashKey() (key [2]uint64, ok bool)
}

// FscryptNames is the NameCrypt of an encrypted directory backed by package
// fscrypt: Dir is the directory's fscrypt inode (its *Inode when the
// directory belongs to a mounted filesystem).
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
