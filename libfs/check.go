package libfs

import (
	"encoding/hex"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
)

// DecryptNameForCheck decrypts the on-disk name disk of the encrypted
// directory dir with the directory's key, for a directory checker (which
// compares names and their hashes): false without a task, without the
// key, or for a name that does not decrypt.
func DecryptNameForCheck(t *kernel.Task, dir fscrypt.Inode, disk []byte) ([]byte, bool) {
	if t == nil || !fscrypt.HasEncryptionKey(dir) {
		return nil, false
	}
	out := make([]byte, len(disk))
	n, err := fscrypt.FnameDiskToUsr(t, dir, 0, 0, disk, out)
	if err != nil {
		return nil, false
	}
	return out[:n], true
}

// CheckError is what a filesystem's fsck-style directory checker
// (ext4.CheckDir, f2fs.CheckDir and f2fs.CheckDentryPtr) reports: every
// problem found, one line each. errors.Is(err, errno.EFSCORRUPTED) holds.
type CheckError struct {
	// FS names the filesystem ("ext4", "f2fs").
	FS string
	// Problems are the problems found.
	Problems []string
}

// Error joins the problems.
func (e *CheckError) Error() string {
	return e.FS + " directory corrupt: " + strings.Join(e.Problems, "; ")
}

// Is makes a CheckError match errno.EFSCORRUPTED (EUCLEAN).
func (e *CheckError) Is(target error) bool { return target == errno.EFSCORRUPTED }

// QuoteName renders an on-disk name for the checkers' problems and the
// dumps: quoted when it is printable UTF-8, else as hex ("x" and the
// bytes).
func QuoteName(name []byte) string {
	if utf8.Valid(name) {
		printable := true
		for _, r := range string(name) {
			if r < 0x20 || r == 0x7f {
				printable = false
				break
			}
		}
		if printable {
			return strconv.Quote(string(name))
		}
	}
	return "x" + hex.EncodeToString(name)
}
