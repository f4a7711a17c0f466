package vfs

import (
	"sync"

	"github.com/vfslab/vfslab/errno"
)

// SimpleXattrs is an inode's extended attributes kept in memory (struct
// simple_xattrs and simple_xattr_get / simple_xattr_set, fs/xattr.c). The
// model's disk filesystems keep their xattrs (the fscrypt context among
// them) this way rather than in their on-disk formats; an attribute is
// named by its handler's index (EXT4_XATTR_INDEX_ENCRYPTION, ...) and its
// name. The zero value is empty and ready for use.
type SimpleXattrs struct {
	mu    sync.Mutex
	attrs []simpleXattr
}

type simpleXattr struct {
	index uint8
	name  string
	value []byte
}

// Get is simple_xattr_get: the value's length after copying it into buf.
// Errors: ENODATA when absent, ERANGE when buf is too small.
func (x *SimpleXattrs) Get(index uint8, name string, buf []byte) (int, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, a := range x.attrs {
		if a.index == index && a.name == name {
			if len(buf) < len(a.value) {
				return 0, errno.ERANGE
			}
			return copy(buf, a.value), nil
		}
	}
	return 0, errno.ENODATA
}

// Set is simple_xattr_set with XATTR_CREATE (create: EEXIST if present) or
// a plain set; a nil value removes the attribute. The value is copied.
func (x *SimpleXattrs) Set(index uint8, name string, value []byte, create bool) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	for i, a := range x.attrs {
		if a.index == index && a.name == name {
			if create {
				return errno.EEXIST
			}
			if value == nil {
				x.attrs = append(x.attrs[:i], x.attrs[i+1:]...)
			} else {
				x.attrs[i].value = append([]byte(nil), value...)
			}
			return nil
		}
	}
	if value != nil {
		x.attrs = append(x.attrs, simpleXattr{index: index, name: name, value: append([]byte(nil), value...)})
	}
	return nil
}

// Free is simple_xattrs_free: every attribute goes.
func (x *SimpleXattrs) Free() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.attrs = nil
}
