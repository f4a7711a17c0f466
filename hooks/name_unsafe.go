package hooks

import "unsafe"

// nameBytes views a dentry's name as bytes without copying it, as the
// kernel's fscrypt_setup_filename and the unencrypted fscrypt_name point
// at the dentry's own d_name (fname->usr_fname = iname, disk_name.name =
// iname->name): no allocation where the kernel makes none. The view is
// read-only: nothing below writes through a usr_fname or an unencrypted
// disk_name.
func nameBytes(s string) []byte {
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
