//go:build linux

package vfs

import (
	"os"
	"syscall"
)

// punchHole is fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE).
func punchHole(f *os.File, off, length int64) error {
	const keepSize, punchHole = 0x01, 0x02
	return syscall.Fallocate(int(f.Fd()), keepSize|punchHole, off, length)
}
