// Package ext4 models the Linux ext4 directory code (fs/ext4/dir.c, namei.c and hash.c): the
// on-disk directory entry formats, the htree (dx) index and the name hash functions that place
// entries in it, byte for byte as the kernel computes them, so that directory behaviour and
// kernel patches to it can be simulated, property-tested and benchmarked in Go.
package ext4
