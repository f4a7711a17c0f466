package dcache

import (
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// Encoding is what the case-insensitive dentry operations need from a
// loaded Unicode encoding (struct unicode_map, fs/unicode/utf8-core.c).
// *fsunicode.Map implements it.
type Encoding interface {
	// CasefoldHash is utf8_casefold_hash: the dcache hash, salted with
	// salt, of the NFD+casefold form of name; an error for invalid UTF-8.
	CasefoldHash(salt uint64, name []byte) (uint32, error)
	// Strncasecmp is utf8_strncasecmp: 0 if the casefolded forms of s1 and
	// s2 are equal, 1 if not, a negative value with an error if either is
	// invalid UTF-8 where it was read.
	Strncasecmp(s1, s2 []byte) (int, error)
}

// CIConfig configures the generic case-insensitive dentry operations.
type CIConfig[I any] struct {
	// Encoding is the superblock's s_encoding.
	Encoding Encoding
	// Strict is sb_has_strict_encoding: names that are not valid UTF-8 are
	// rejected (EINVAL from d_hash) instead of being hashed and compared
	// as raw bytes.
	Strict bool
	// NeedsCasefold reports whether names in the directory are casefolded.
	// Linux 6.x libfs tests IS_CASEFOLDED(dir); Linux 5.10 to 6.1 had
	// needs_casefold(), which also required the key of an encrypted
	// directory ("it does not make sense to casefold the no-key token of
	// an encrypted filename"). The VFS supplies the predicate of the
	// kernel it models.
	NeedsCasefold func(dir *I) bool
}

// GenericCIOps returns the dentry operations of a casefolding filesystem:
// d_hash = generic_ci_d_hash, d_compare = generic_ci_d_compare
// (fs/libfs.c). Install them with DMakeRoot or DSetDOp; the VFS may add a
// Revalidate (fscrypt_d_revalidate) to the returned value before use.
func GenericCIOps[I any](cfg CIConfig[I]) *Operations[I] {
	ci := &ciOps[I]{cfg: cfg}
	return &Operations[I]{Hash: ci.hash, Compare: ci.compare}
}

type ciOps[I any] struct {
	cfg CIConfig[I]
}

// hash is generic_ci_d_hash: in a casefolded directory the name's hash is
// that of its casefolded form, salted with the directory dentry, so that
// names differing only in case land in the same bucket. A name that is not
// valid UTF-8 fails with EINVAL in strict mode and keeps its byte hash
// otherwise.
func (ci *ciOps[I]) hash(t *kernel.Task, d *Dentry[I], name *Qstr) error {
	dir := d.inode.Load() // READ_ONCE(dentry->d_inode)
	if dir == nil || !ci.cfg.NeedsCasefold(dir) {
		return nil
	}
	h, err := ci.cfg.Encoding.CasefoldHash(d.Salt(), nameBytes(name.Name))
	if err != nil {
		if ci.cfg.Strict {
			return errno.EINVAL
		}
		return nil
	}
	name.Hash = h
	return nil
}

// compare is generic_ci_d_compare (Linux 6.x): an exact match first, which
// covers the common case and makes a name that is not valid UTF-8 match
// only itself; then, if the dentry's directory is casefolded, the
// comparison of the casefolded forms, where invalid UTF-8 is a mismatch.
//
// The kernel copies a short dentry name to a stack buffer before calling
// utf8_strncasecmp, because a concurrent rename may rewrite it in place;
// the model's name records are immutable, so str is stable as it is. A
// dentry with a no-key name (DCACHE_NOKEY_NAME) is compared exactly: its
// name is an encoded ciphertext that has no case to fold, which is the
// race-free form of needs_casefold's "encrypted directory without its key"
// exception.
func (ci *ciOps[I]) compare(t *kernel.Task, d *Dentry[I], str string, name *Qstr) int {
	if len(str) == len(name.Name) && str == name.Name {
		return 0
	}
	if d.Flags()&NokeyName != 0 {
		return 1
	}
	parent := d.ParentRCU(t)
	dir := parent.InodeRCU(t)
	if dir == nil || !ci.cfg.NeedsCasefold(dir) {
		return 1
	}
	r, err := ci.cfg.Encoding.Strncasecmp(nameBytes(name.Name), nameBytes(str))
	if err != nil && r == 0 {
		r = -1
	}
	return r
}
