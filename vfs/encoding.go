package vfs

// Encoding is what a filesystem's directory code needs from the
// superblock's Unicode map (sb->s_encoding, struct unicode_map,
// fs/unicode/utf8-core.c). Package fsunicode's *Map provides it; tests may
// use a double. Every method reports a name that is not valid UTF-8 as
// errno.EINVAL, as the kernel functions return -EINVAL.
type Encoding interface {
	CIEncoding
	// Validate is utf8_validate: nil when name is valid UTF-8.
	Validate(name []byte) error
	// Casefold is utf8_casefold(um, name, dst, len(dst)): it writes the
	// casefolded form of name into dst and returns its length. A folded
	// form that does not fit is an error (ENAMETOOLONG).
	Casefold(dst, name []byte) (int, error)
}
