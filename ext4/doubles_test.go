package ext4

import (
	"bytes"
	"unicode/utf8"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// asciiFold is a test double for the Unicode map: it folds ASCII letters to
// lower case and "ß" to "ss", and rejects invalid UTF-8 like fs/unicode.
type asciiFold struct{}

func (asciiFold) fold(dst, name []byte) (int, error) {
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

func (a asciiFold) Casefold(dst, name []byte) (int, error) { return a.fold(dst, name) }

func (asciiFold) Validate(name []byte) error {
	if !utf8.Valid(name) {
		return errno.EINVAL
	}
	return nil
}

func (a asciiFold) StrncasecmpFolded(folded, name []byte) (int, error) {
	var arr [2 * NameLen]byte
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

func (a asciiFold) Strncasecmp(x, y []byte) (int, error) {
	var ax, ay [2 * NameLen]byte
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

// toyCrypt is a test double for fscrypt's filename encryption: names are
// NUL-padded to fscrypt's lengths (min(roundup(max(len,16),16),255)) and
// XORed with a fixed keystream, so ciphertext lengths behave as the real
// ones do. It is not encryption; it only has the same shape.
type toyCrypt struct {
	key    byte
	nokey  bool
	failAt int // DiskToUsr fails with EUCLEAN on this call number (1-based); 0 never
	calls  int
}

var toyKeystream = func() [NameLen]byte {
	var ks [NameLen]byte
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
	return min(p, NameLen)
}

func (c *toyCrypt) encrypt(name []byte) []byte {
	out := make([]byte, toyPaddedLen(len(name)))
	copy(out, name)
	for i := range out {
		out[i] ^= toyKeystream[i] ^ c.key
	}
	return out
}

func (c *toyCrypt) HasKey() bool { return !c.nokey }

func (c *toyCrypt) SetupFilename(t *kernel.Task, iname []byte, lookup bool) (CryptName, error) {
	if c.nokey {
		return CryptName{}, errno.ENOKEY
	}
	return CryptName{DiskName: c.encrypt(iname)}, nil
}

func (c *toyCrypt) FreeFilename(t *kernel.Task, n *CryptName) {}

func (c *toyCrypt) MatchName(n *CryptName, deName []byte) bool {
	return bytes.Equal(n.DiskName, deName)
}

// DiskToUsr writes len(iname) bytes into oname by index, so a short buffer
// panics like an out-of-bounds write.
func (c *toyCrypt) DiskToUsr(t *kernel.Task, hash, minor uint32, iname, oname []byte) (int, error) {
	c.calls++
	if isDotDotdot(iname) { // fscrypt_fname_disk_to_usr passes "." and ".." through
		copy(oname[:len(iname)], iname)
		return len(iname), nil
	}
	if c.calls == c.failAt || len(iname) < 16 {
		return 0, errno.EUCLEAN
	}
	for i := range iname {
		oname[i] = iname[i] ^ toyKeystream[i] ^ c.key
	}
	n := bytes.IndexByte(oname[:len(iname)], 0)
	if n < 0 {
		n = len(iname)
	}
	return n, nil
}

func (c *toyCrypt) DirhashKey() ([2]uint64, bool) {
	return [2]uint64{0x0706050403020100 ^ uint64(c.key), 0x0f0e0d0c0b0a0908}, !c.nokey
}
