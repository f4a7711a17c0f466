package f2fs

import (
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/vfs"
)

// FscryptNames is the NameCrypt of an encrypted directory backed by package
// fscrypt: Dir is the directory's fscrypt inode (its *vfs.Inode when the
// directory belongs to a mounted f2fs).
type FscryptNames = vfs.FscryptNames

// FscryptCryptName wraps a name prepared by package fscrypt (by
// fscrypt_prepare_lookup, for instance) as the directory code's CryptName;
// FscryptNames.FreeFilename releases it.
func FscryptCryptName(n *fscrypt.Name) CryptName { return vfs.FscryptCryptName(n) }
