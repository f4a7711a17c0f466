package dcache

import "unsafe"

// The dcache's uses of package unsafe, each where the kernel works on raw
// memory: names kept as a pointer and a length (struct qstr's name and
// hash_len), a directory's address as its names' hash salt, and the size
// of a hash bucket.

// sizeofBucket is the size of one hash bucket (the kernel's hlist_bl_head
// is one pointer).
const sizeofBucket = unsafe.Sizeof(bucket[struct{}]{})

// nameBytes returns the bytes of s without copying; the caller must not
// write to them.
func nameBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// str is the name as a string over its bytes (d_name.name, d_name.len).
func (n *dname) str() string { return unsafe.String(n.ptr, int(HashlenLen(n.hashLen))) }

// Salt returns the value names in this directory are hashed with: the
// dentry's address, as full_name_hash(parent, ...) uses it.
func (d *Dentry[I]) Salt() uint64 { return uint64(uintptr(unsafe.Pointer(d))) }
