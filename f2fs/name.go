package f2fs

import (
	"fmt"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/vfs"
)

// Encoding is what the directory code needs from the superblock's Unicode
// map (sb->s_encoding); see vfs.Encoding.
type Encoding = vfs.Encoding

// CryptName is the part of struct fscrypt_name the directory code reads;
// see vfs.CryptName.
type CryptName = vfs.CryptName

// NameCrypt is what an encrypted directory needs from fscrypt
// (fs/crypto/fname.c), bound to the directory's inode and key; see
// vfs.NameCrypt.
type NameCrypt = vfs.NameCrypt

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
