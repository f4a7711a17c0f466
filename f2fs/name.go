package f2fs

import (
	"encoding/binary"
	"fmt"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/vfs"
)

// Encoding is what the directory code needs from the superblock's Unicode
// map (sb->s_encoding); see vfs.Encoding.
type Encoding = vfs.Encoding

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
// directory operation by SetupFilename, holding the struct fscrypt_name
// that fscrypt_setup_filename or fscrypt_prepare_lookup filled.
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

	// crypt is the struct fscrypt_name of an encrypted directory's name
	// (its crypto_buf and no-key fields), valid when hasCrypt.
	crypt    fscrypt.Name
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
// byte string, except under strict encoding, where it is EINVAL. Errors:
// EINVAL, ENOMEM.
func InitCasefoldedName(t *kernel.Task, dir *Inode, f *Filename) error {
	if !dir.IsCasefolded() || isDotDotdotName(f.UsrName) {
		return nil
	}
	return dir.SB.casefoldName(t, f)
}

// casefoldName is the folding of f2fs_init_casefolded_name with the
// superblock's encoding.
func (sbi *SuperBlock) casefoldName(t *kernel.Task, f *Filename) error {
	if err := cfNameSlab.Alloc(&t.Ctx, kmem.GFPNoFS); err != nil {
		return errno.ENOMEM
	}
	buf := make([]byte, NameLen)
	n, err := sbi.Encoding.Casefold(buf, f.UsrName)
	if err != nil || n <= 0 {
		cfNameSlab.Free(&t.Ctx)
		if sbi.HasStrictEncoding() {
			return errno.EINVAL
		}
		return nil
	}
	f.cfBuf = buf
	f.CfName = buf[:n:n]
	return nil
}

// freeCasefoldedName is f2fs_free_casefolded_name.
func freeCasefoldedName(t *kernel.Task, f *Filename) {
	if f.cfBuf != nil {
		cfNameSlab.Free(&t.Ctx)
		f.cfBuf, f.CfName = nil, nil
	}
}

// dirhashKey is the directory's ci_dirhash_key as two le64 words, and
// whether it is set up.
func dirhashKey(dir *Inode) ([2]uint64, bool) {
	b, ok := fscrypt.DirhashKey(&dir.Inode)
	return [2]uint64{binary.LittleEndian.Uint64(b[0:]), binary.LittleEndian.Uint64(b[8:])}, ok
}

// HashFilename is f2fs_hash_filename (fs/f2fs/hash.c): the hash of "." and
// ".." is 0; a casefolded directory hashes the casefolded name (or the user's
// plaintext when it did not fold), with SipHash when it is also encrypted;
// otherwise TEA over the on-disk name. Errors: ENOKEY for an encrypted,
// casefolded directory without its key.
func HashFilename(dir *Inode, f *Filename) error {
	if !dir.IsCasefolded() || !dir.IsEncrypted() || isDotDotdotName(f.DiskName) {
		f.Hash = hashName(f, dir.IsCasefolded(), nil)
		return nil
	}
	key, ok := dirhashKey(dir)
	if !ok {
		return errno.ENOKEY
	}
	f.Hash = hashName(f, true, &key)
	return nil
}

// hashName is f2fs_hash_filename's choice of name and hash: in a
// casefolded directory the casefolded name (the user's when it did not
// fold), hashed with SipHash under key when the directory is encrypted
// (key not nil), else TEA of the on-disk name.
func hashName(f *Filename, casefolded bool, key *[2]uint64) uint32 {
	name := f.DiskName
	if isDotDotdotName(name) {
		return 0
	}
	if casefolded {
		if f.CfName != nil {
			name = f.CfName
		} else {
			name = f.UsrName
		}
		if key != nil {
			return F2fsDentryHashSiphash(name, *key)
		}
	}
	return F2fsDentryHash(name)
}

// CasefoldedHash is the hash_code f2fs stores for name in a casefolded
// directory of a filesystem whose encoding is enc (strict:
// sb_has_strict_encoding), as f2fs_setup_filename computes it: the name
// folded by f2fs_init_casefolded_name (its raw bytes when it does not
// fold), then TEA, or SipHash under key when the directory is also
// encrypted and its key is set up (key not nil). It is for tools that
// have a dirhash key but no directory. Errors: EINVAL (strict encoding, a
// name that does not fold), ENOMEM.
func CasefoldedHash(t *kernel.Task, enc Encoding, strict bool, name []byte, key *[2]uint64) (uint32, error) {
	sbi := &SuperBlock{Encoding: enc}
	if strict {
		sbi.EncodingFlags |= EncStrictModeFL
	}
	f := Filename{UsrName: name, DiskName: name}
	if !isDotDotdotName(name) {
		if err := sbi.casefoldName(t, &f); err != nil {
			return 0, err
		}
		defer freeCasefoldedName(t, &f)
	}
	return hashName(&f, true, key), nil
}

// SetupFilename is f2fs_setup_filename: fscrypt_setup_filename into
// fname's struct fscrypt_name, then the casefolded name and the hash.
// lookup says whether the name is being looked up (a no-key name is then
// accepted). Release fname with FreeFilename, also after an error (it is
// then already released). Errors: ENAMETOOLONG, EINVAL (strict encoding),
// ENOMEM, and fscrypt's (ENOKEY, ENOENT for a no-key name that cannot
// exist).
func SetupFilename(t *kernel.Task, dir *Inode, iname []byte, lookup bool, fname *Filename) error {
	*fname = Filename{UsrName: iname, DiskName: iname}
	if len(iname) > NameLen {
		return errno.ENAMETOOLONG
	}
	if dir.IsEncrypted() {
		fname.hasCrypt = true
		if err := fscrypt.SetupFilename(t, &dir.Inode, iname, lookup, &fname.crypt); err != nil {
			FreeFilename(t, dir, fname)
			return err
		}
	}
	return setupFilename(t, dir, fname)
}

// setupFilename is __f2fs_setup_filename: the on-disk name from the
// struct fscrypt_name, then for a no-key name the hash it carries, else
// the casefolded name and the hash of the name. On error fname is
// released.
func setupFilename(t *kernel.Task, dir *Inode, fname *Filename) error {
	if fname.hasCrypt {
		fname.DiskName = fname.crypt.DiskName
	}
	if fname.crypt.IsNokeyName {
		fname.Hash = fname.crypt.Hash
		return nil
	}
	if err := InitCasefoldedName(t, dir, fname); err != nil {
		FreeFilename(t, dir, fname)
		return err
	}
	if err := HashFilename(dir, fname); err != nil {
		FreeFilename(t, dir, fname)
		return err
	}
	return nil
}

// FreeFilename is f2fs_free_filename: fscrypt_free_filename of the
// struct fscrypt_name, then the casefolded name. It may be called again.
func FreeFilename(t *kernel.Task, dir *Inode, f *Filename) {
	if f.hasCrypt {
		fscrypt.FreeFilename(t, &f.crypt)
		f.hasCrypt = false
	}
	freeCasefoldedName(t, f)
}

// matchCrypt is fscrypt_match_name for an encrypted directory's name.
func (f *Filename) matchCrypt(deName []byte) bool { return fscrypt.MatchName(&f.crypt, deName) }

// ciNames is what generic_ci_match reads from fscrypt for an encrypted
// parent (vfs.CINameDecrypter): fscrypt_has_encryption_key and
// fscrypt_fname_disk_to_usr on the directory.
type ciNames struct{ dir *Inode }

// HasKey is fscrypt_has_encryption_key(parent).
func (c ciNames) HasKey() bool { return fscrypt.HasEncryptionKey(&c.dir.Inode) }

// DiskToUsr is fscrypt_fname_disk_to_usr(parent, ...).
func (c ciNames) DiskToUsr(t *kernel.Task, hash, minorHash uint32, iname, oname []byte) (int, error) {
	return fscrypt.FnameDiskToUsr(t, &c.dir.Inode, hash, minorHash, iname, oname)
}

// ciParent describes dir to generic_ci_match (vfs.GenericCIMatch), with
// f2fs's allocation site for the per-call buffer.
func ciParent(dir *Inode) vfs.CIParent {
	p := vfs.CIParent{Encoding: dir.SB.Encoding, Strict: dir.SB.HasStrictEncoding(), Site: siteDecryptedName}
	if dir.IsEncrypted() {
		p.Crypt = ciNames{dir}
	}
	return p
}
