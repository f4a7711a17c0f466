package vfs

import (
	"testing"
	"unsafe"
)

// TestCacheLineMultiples: the per-task and per-object structures that
// tasks write are whole cache lines, so that Go's size classes place them
// 64-byte aligned and two tasks never write one line (which the kernel
// gets from stacks and cache-aligned slabs).
func TestCacheLineMultiples(t *testing.T) {
	for name, size := range map[string]uintptr{
		"nameidata": unsafe.Sizeof(nameidata{}),
		"File":      unsafe.Sizeof(File{}),
		"Proc":      unsafe.Sizeof(Proc{}),
		"Inode":     unsafe.Sizeof(Inode{}),
	} {
		if size%64 != 0 {
			t.Errorf("sizeof(%s) = %d, not a multiple of 64", name, size)
		}
	}
}
