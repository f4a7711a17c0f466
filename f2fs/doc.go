// Package f2fs models the Linux f2fs directory code (fs/f2fs/dir.c, inline.c and hash.c): the
// dentry block and inline dentry formats, the multi-level hash table of directory buckets and
// the name hash that selects a bucket, byte for byte as the kernel computes them, so that
// directory behaviour and kernel patches to it can be simulated, property-tested and
// benchmarked in Go.
package f2fs
