package libfs

import (
	"strings"

	"github.com/vfslab/vfslab/errno"
)

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
