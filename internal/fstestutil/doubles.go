// Package fstestutil holds test doubles and helpers that the tests of the
// filesystem packages (ext4, f2fs) share: a Unicode map double with the
// shape of the real one, and a booted machine with the syscall helpers the
// VFS-level tests use. Encrypted names are always real fscrypt's.
package fstestutil

import (
	"bytes"
	"unicode/utf8"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/vfs"
)

// nameLen is the longest name (EXT4_NAME_LEN, F2FS_NAME_LEN).
const nameLen = vfs.NAME_MAX

// AsciiFold is a test double for the Unicode map (vfs.Encoding): it folds
// ASCII letters to lower case and "ß" to "ss", and rejects invalid UTF-8
// like fs/unicode.
type AsciiFold struct{}

func (AsciiFold) fold(dst, name []byte) (int, error) {
	if !utf8.Valid(name) {
		return 0, errno.EINVAL
	}
	n := 0
	put := func(c byte) bool {
		if n >= len(dst) {
			return false
		}
		dst[n] = c
		n++
		return true
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c == 0xc3 && i+1 < len(name) && name[i+1] == 0x9f: // ß
			for range 2 { // ß folds to "ss"
				if !put('s') {
					return 0, errno.ENAMETOOLONG
				}
			}
			i++
			continue
		}
		if !put(c) {
			return 0, errno.ENAMETOOLONG
		}
	}
	return n, nil
}

// Casefold implements vfs.Encoding.
func (a AsciiFold) Casefold(dst, name []byte) (int, error) { return a.fold(dst, name) }

// Validate implements vfs.Encoding.
func (AsciiFold) Validate(name []byte) error {
	if !utf8.Valid(name) {
		return errno.EINVAL
	}
	return nil
}

// StrncasecmpFolded implements vfs.Encoding.
func (a AsciiFold) StrncasecmpFolded(folded, name []byte) (int, error) {
	var arr [2 * nameLen]byte
	buf := arr[:]
	n, err := a.fold(buf, name)
	if err != nil {
		return 0, err
	}
	if bytes.Equal(folded, buf[:n]) {
		return 0, nil
	}
	return 1, nil
}

// Strncasecmp implements vfs.Encoding.
func (a AsciiFold) Strncasecmp(x, y []byte) (int, error) {
	var ax, ay [2 * nameLen]byte
	bx, by := ax[:], ay[:]
	nx, err := a.fold(bx, x)
	if err != nil {
		return 0, err
	}
	ny, err := a.fold(by, y)
	if err != nil {
		return 0, err
	}
	if bytes.Equal(bx[:nx], by[:ny]) {
		return 0, nil
	}
	return 1, nil
}
