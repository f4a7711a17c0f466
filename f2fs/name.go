package f2fs

import (
	"fmt"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/vfs"
)

// Encoding is what the directory code needs from the superblock's Unicode
// map (sb->s_encoding, fs/unicode/utf8-core.c). Package fsunicode's map
// provides it; tests may use a double. Every method reports a name that is
// not valid UTF-8 as errno.EINVAL, as the kernel functions return -EINVAL.
type Encoding interface {
	// Casefold is utf8_casefold(um, name, dst, len(dst)): it writes the
	// casefolded form of name into dst and returns its length. A folded
	// form that does not fit is an error (ENAMETOOLONG).
	Casefold(dst, name []byte) (int, error)
	// StrncasecmpFolded is utf8_strncasecmp_folded(um, folded, name): 0 when
	// name casefolds to folded, 1 when it does not.
	StrncasecmpFolded(folded, name []byte) (int, error)
	// Strncasecmp is utf8_strncasecmp(um, a, b): 0 when a and b casefold
	// alike, 1 when they do not.
	Strncasecmp(a, b []byte) (int, error)
}

// CryptName is the part of struct fscrypt_name that a filesystem's
// directory code reads: the on-disk form of the name being looked up or
// created, and for a no-key name the hash decoded from it.
type CryptName struct {
	// DiskName is disk_name: the ciphertext of the user's name, or for a
	// no-key name the bytes decoded from it.
	DiskName []byte
	// IsNokeyName is is_nokey_name: the name was given without the key.
	IsNokeyName bool
	// Hash and MinorHash are the dirhash decoded from a no-key name.
	Hash, MinorHash uint32
	// Priv is private to the NameCrypt that made it (crypto_buf and the
	// like).
	Priv any
}

// NameCrypt is what the directory code of an encrypted directory needs from
// fscrypt (fs/crypto/fname.c), bound to that directory's inode and key.
// Package fscrypt provides it; tests may use a double.
type NameCrypt interface {
	// HasKey is fscrypt_has_encryption_key(dir).
	HasKey() bool
	// SetupFilename is fscrypt_setup_filename(dir, iname, lookup, &fname):
	// it encrypts iname (or, without the key and when lookup is set,
	// decodes a no-key name). Errors as the kernel's (ENOKEY, ENOENT for a
	// no-key name that cannot exist, ENAMETOOLONG, ENOMEM).
	SetupFilename(t *kernel.Task, iname []byte, lookup bool) (CryptName, error)
	// FreeFilename is fscrypt_free_filename.
	FreeFilename(t *kernel.Task, n *CryptName)
	// MatchName is fscrypt_match_name(fname, de_name, de_name_len).
	MatchName(n *CryptName, deName []byte) bool
	// DiskToUsr is fscrypt_fname_disk_to_usr(dir, hash, minor_hash, iname,
	// oname): it writes the user-visible form of the on-disk name iname
	// into oname and returns its length. With the key that is the
	// plaintext, len(iname) bytes of output before the NUL padding is cut;
	// without it a no-key name. The caller sizes oname as the kernel does.
	DiskToUsr(t *kernel.Task, hash, minorHash uint32, iname, oname []byte) (int, error)
	// DirhashKey returns the directory's SipHash key (ci_dirhash_key) for
	// encrypted and casefolded directories; ok is false without the key.
	DirhashKey() (key [2]uint64, ok bool)
}

// Allocation sites and caches of the name code.
var (
	// cfNameSlab is f2fs_cf_name_slab: F2FS_NAME_LEN-byte buffers for the
	// casefolded name of a lookup (fs/f2fs/super.c).
	cfNameSlab = kmem.NewCache("f2fs_cf_name_slab", NameLen)
	// siteDecryptedName is the kmalloc(de_name_len) of generic_ci_match in
	// fs/libfs.c, as f2fs calls it.
	siteDecryptedName = kmem.NewSite("f2fs/generic_ci_match:decrypted_name")
	// sitePrealloc is the kmalloc(wantlen + 64) of seed 001's
	// decrypted_name_prealloc_resize.
	sitePrealloc = kmem.NewSite("f2fs/decrypted_name_prealloc_resize")
	// siteFstr is fscrypt_fname_alloc_buffer(F2FS_NAME_LEN) of readdir in an
	// encrypted directory.
	siteFstr = kmem.NewSite("f2fs_readdir:fstr")
)

// Filename is struct f2fs_filename (fs/f2fs/f2fs.h): a name prepared for a
// directory operation by SetupFilename.
type Filename struct {
	// UsrName is usr_fname: the name as the user gave it.
	UsrName []byte
	// DiskName is disk_name: the name as stored (ciphertext in an encrypted
	// directory).
	DiskName []byte
	// Hash is the f2fs dirhash of the name (hash, f2fs_hash_t).
	Hash uint32
	// CfName is cf_name: the casefolded user name in a casefolded
	// directory, nil when folding failed or the directory is not
	// casefolded.
	CfName []byte

	crypt    CryptName
	hasCrypt bool
	cfBuf    []byte
}

// String is the canonical one-line dump of a prepared name.
func (f *Filename) String() string {
	s := fmt.Sprintf("usr=%q disk=%x hash=%08x", f.UsrName, f.DiskName, f.Hash)
	if f.CfName != nil {
		s += fmt.Sprintf(" cf=%q", f.CfName)
	}
	if f.crypt.IsNokeyName {
		s += " nokey"
	}
	return s
}

// isDotDotdotName mirrors is_dot_dotdot.
func isDotDotdotName(name []byte) bool { return isDotDotdot(name) }

// InitCasefoldedName is f2fs_init_casefolded_name: in a casefolded directory
// it folds the user's name into a buffer from f2fs_cf_name_slab. A name that
// does not fold (invalid UTF-8, too long, empty result) is kept as an opaque
// byte string, except under strict encoding, where it is EINVAL.
func InitCasefoldedName(t *kernel.Task, dir *Inode, f *Filename) error {
	sb := dir.SB
	if !dir.IsCasefolded() || isDotDotdotName(f.UsrName) {
		return nil
	}
	if err := cfNameSlab.Alloc(&t.Ctx, kmem.GFPNoFS); err != nil {
		return errno.ENOMEM
	}
	buf := make([]byte, NameLen)
	n, err := sb.Encoding.Casefold(buf, f.UsrName)
	if err != nil || n <= 0 {
		cfNameSlab.Free(&t.Ctx)
		if sb.HasStrictEncoding() {
			return errno.EINVAL
		}
		return nil
	}
	f.cfBuf = buf
	f.CfName = buf[:n:n]
	return nil
}

// HashFilename is f2fs_hash_filename (fs/f2fs/hash.c): the hash of "." and
// ".." is 0; a casefolded directory hashes the casefolded name (or the user's
// plaintext when it did not fold), with SipHash when it is also encrypted;
// otherwise TEA over the on-disk name.
func HashFilename(dir *Inode, f *Filename) error {
	name := f.DiskName
	if isDotDotdotName(name) {
		f.Hash = 0
		return nil
	}
	if dir.IsCasefolded() {
		if f.CfName != nil {
			name = f.CfName
		} else {
			name = f.UsrName
		}
		if dir.IsEncrypted() {
			key, ok := dir.Crypt.DirhashKey()
			if !ok {
				return errno.ENOKEY
			}
			f.Hash = F2fsDentryHashSiphash(name, key)
			return nil
		}
	}
	f.Hash = F2fsDentryHash(name)
	return nil
}

// SetupFilename is f2fs_setup_filename: fscrypt_setup_filename, then the
// casefolded name and the hash. lookup says whether the name is being
// looked up (a no-key name is then accepted). Release the result with
// FreeFilename.
func SetupFilename(t *kernel.Task, dir *Inode, iname []byte, lookup bool) (*Filename, error) {
	if len(iname) > NameLen {
		return nil, errno.ENAMETOOLONG
	}
	if !dir.IsEncrypted() {
		return setupFilename(t, dir, iname, nil)
	}
	cn, err := dir.Crypt.SetupFilename(t, iname, lookup)
	if err != nil {
		return nil, err
	}
	return setupFilename(t, dir, iname, &cn)
}

// PrepareLookupFilename is the second half of f2fs_prepare_lookup
// (__f2fs_setup_filename): the name of a lookup whose fscrypt part the
// caller prepared with fscrypt_prepare_lookup (crypt is nil for an
// unencrypted directory). It takes over crypt, which FreeFilename
// releases, even on error.
func PrepareLookupFilename(t *kernel.Task, dir *Inode, iname []byte, crypt *CryptName) (*Filename, error) {
	return setupFilename(t, dir, iname, crypt)
}

// setupFilename is __f2fs_setup_filename: the user's and the on-disk name,
// then for a no-key name the hash it carries, else the casefolded name and
// the hash of the name.
func setupFilename(t *kernel.Task, dir *Inode, iname []byte, crypt *CryptName) (*Filename, error) {
	f := &Filename{UsrName: iname, DiskName: iname}
	if crypt != nil {
		f.crypt, f.hasCrypt = *crypt, true
		f.DiskName = crypt.DiskName
	}
	if f.crypt.IsNokeyName {
		f.Hash = f.crypt.Hash
		return f, nil
	}
	if err := InitCasefoldedName(t, dir, f); err != nil {
		FreeFilename(t, dir, f)
		return nil, err
	}
	if err := HashFilename(dir, f); err != nil {
		FreeFilename(t, dir, f)
		return nil, err
	}
	return f, nil
}

// FreeFilename is f2fs_free_filename.
func FreeFilename(t *kernel.Task, dir *Inode, f *Filename) {
	if f.hasCrypt {
		dir.Crypt.FreeFilename(t, &f.crypt)
		f.hasCrypt = false
	}
	if f.cfBuf != nil {
		cfNameSlab.Free(&t.Ctx)
		f.cfBuf, f.CfName = nil, nil
	}
}

// ciParent describes dir to generic_ci_match (vfs.GenericCIMatch), with
// f2fs's allocation site for the per-call buffer.
func ciParent(dir *Inode) vfs.CIParent {
	p := vfs.CIParent{Encoding: dir.SB.Encoding, Strict: dir.SB.HasStrictEncoding(), Site: siteDecryptedName}
	if dir.IsEncrypted() {
		p.Crypt = dir.Crypt
	}
	return p
}
