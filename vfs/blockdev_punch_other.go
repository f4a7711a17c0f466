//go:build !linux

package vfs

import (
	"errors"
	"os"
)

// punchHole is not available: zeroRange writes zeroes.
func punchHole(f *os.File, off, length int64) error { return errors.ErrUnsupported }
