// Package fstestutil holds test doubles and helpers that the tests of the
// filesystem packages (ext4, f2fs) share: a Unicode map double and a
// filename "encryption" double with the shapes of the real ones, and a
// booted machine with the syscall helpers the VFS-level tests use.
package fstestutil

import (
	"bytes"
	"unicode/utf8"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
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

// ToyCrypt is a test double for fscrypt's filename encryption
// (vfs.NameCrypt): names are NUL-padded to fscrypt's lengths
// (min(roundup(max(len,16),16),255)) and XORed with a fixed keystream, so
// ciphertext lengths behave as the real ones do. It is not encryption; it
// only has the same shape.
type ToyCrypt struct {
	// Key is mixed into the keystream.
	Key byte
	// NoKey makes the directory's key absent.
	NoKey bool
	// FailAt makes DiskToUsr fail with EUCLEAN on this call number
	// (1-based); 0 never.
	FailAt int
	// Calls counts the DiskToUsr calls.
	Calls int
}

var toyKeystream = func() [nameLen]byte {
	var ks [nameLen]byte
	x := uint32(0x9e3779b9)
	for i := range ks {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		ks[i] = byte(x)
	}
	return ks
}()

func toyPaddedLen(n int) int {
	p := max(n, 16)
	p = (p + 15) &^ 15
	return min(p, nameLen)
}

// Encrypt returns the "ciphertext" of name.
func (c *ToyCrypt) Encrypt(name []byte) []byte {
	out := make([]byte, toyPaddedLen(len(name)))
	copy(out, name)
	for i := range out {
		out[i] ^= toyKeystream[i] ^ c.Key
	}
	return out
}

// HasKey implements vfs.NameCrypt.
func (c *ToyCrypt) HasKey() bool { return !c.NoKey }

// SetupFilename implements vfs.NameCrypt: ENOKEY without the key.
func (c *ToyCrypt) SetupFilename(t *kernel.Task, iname []byte, lookup bool) (vfs.CryptName, error) {
	if c.NoKey {
		return vfs.CryptName{}, errno.ENOKEY
	}
	return vfs.CryptName{DiskName: c.Encrypt(iname)}, nil
}

// FreeFilename implements vfs.NameCrypt.
func (c *ToyCrypt) FreeFilename(t *kernel.Task, n *vfs.CryptName) {}

// MatchName implements vfs.NameCrypt.
func (c *ToyCrypt) MatchName(n *vfs.CryptName, deName []byte) bool {
	return bytes.Equal(n.DiskName, deName)
}

// isDotDotdot is is_dot_dotdot.
func isDotDotdot(name []byte) bool {
	return len(name) == 1 && name[0] == '.' || len(name) == 2 && name[0] == '.' && name[1] == '.'
}

// DiskToUsr implements vfs.NameCrypt. It writes len(iname) bytes into
// oname by index, so a short buffer panics like an out-of-bounds write;
// names shorter than 16 bytes (not ciphertext) and call FailAt are
// EUCLEAN.
func (c *ToyCrypt) DiskToUsr(t *kernel.Task, hash, minor uint32, iname, oname []byte) (int, error) {
	c.Calls++
	if isDotDotdot(iname) { // fscrypt_fname_disk_to_usr passes "." and ".." through
		copy(oname[:len(iname)], iname)
		return len(iname), nil
	}
	if c.Calls == c.FailAt || len(iname) < 16 {
		return 0, errno.EUCLEAN
	}
	for i := range iname {
		oname[i] = iname[i] ^ toyKeystream[i] ^ c.Key
	}
	n := bytes.IndexByte(oname[:len(iname)], 0)
	if n < 0 {
		n = len(iname)
	}
	return n, nil
}

// DirhashKey implements vfs.NameCrypt.
func (c *ToyCrypt) DirhashKey() ([2]uint64, bool) {
	return [2]uint64{0x0706050403020100 ^ uint64(c.Key), 0x0f0e0d0c0b0a0908}, !c.NoKey
}
