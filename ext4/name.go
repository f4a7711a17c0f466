package ext4

import (
	"bytes"
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

// pathMax is PATH_MAX, the buffer ext4fs_dirhash folds into.
const pathMax = 4096

// Allocation sites of the ext4 name code.
var (
	siteCfName        = kmem.NewSite("ext4_fname_setup_ci_filename:cf_name")
	siteDirhashBuff   = kmem.NewSite("ext4fs_dirhash:buff")
	siteDecryptedName = kmem.NewSite("ext4/generic_ci_match:decrypted_name")
	siteReaddirFstr   = kmem.NewSite("ext4_readdir:fstr")
)

// Filename is struct ext4_filename (fs/ext4/ext4.h).
type Filename struct {
	// UsrName is usr_fname, DiskName disk_name (ciphertext when encrypted).
	UsrName, DiskName []byte
	// Hinfo is hinfo: the hash, filled by SetupFilename in casefolded
	// encrypted directories, else by dx_probe or make_indexed_dir.
	Hinfo DxHashInfo
	// CfName is cf_name, the casefolded name (nil when not folded).
	CfName []byte

	crypt    CryptName
	hasCrypt bool
	cfBuf    []byte
}

// String is the canonical one-line dump of a prepared name.
func (f *Filename) String() string {
	s := fmt.Sprintf("usr=%q disk=%x hash=%08x:%08x", f.UsrName, f.DiskName, f.Hinfo.Hash, f.Hinfo.MinorHash)
	if f.CfName != nil {
		s += fmt.Sprintf(" cf=%q", f.CfName)
	}
	return s
}

// Dirhash is ext4fs_dirhash (fs/ext4/hash.c): in a casefolded directory
// whose key (if encrypted) is present, a non-empty name is casefolded into a
// kzalloc'd PATH_MAX buffer first (the raw name is hashed when folding
// fails); then __ext4fs_dirhash, with the directory's SipHash key for
// DX_HASH_SIPHASH.
func Dirhash(t *kernel.Task, dir *Inode, name []byte, hinfo *DxHashInfo) error {
	var key *[2]uint64
	if dir.IsEncrypted() {
		if k, ok := dir.Crypt.DirhashKey(); ok && dir.IsCasefolded() {
			key = &k
		}
	}
	if len(name) > 0 && dir.IsCasefolded() && (!dir.IsEncrypted() || dir.Crypt.HasKey()) {
		buff, err := t.Kzalloc(siteDirhashBuff, pathMax, kmem.GFPKernel)
		if err != nil {
			return errno.ENOMEM
		}
		n, ferr := dir.SB.Encoding.Casefold(buff, name)
		if ferr == nil {
			err = Ext4fsDirhash(buff[:n], hinfo, key)
			t.Kfree(siteDirhashBuff, buff)
			return err
		}
		t.Kfree(siteDirhashBuff, buff)
	}
	return Ext4fsDirhash(name, hinfo, key)
}

// setupCIFilename is ext4_fname_setup_ci_filename: the casefolded name
// (kmalloc(EXT4_NAME_LEN)), and in an encrypted directory the SipHash of it.
func setupCIFilename(t *kernel.Task, dir *Inode, iname []byte, f *Filename) error {
	if !dir.IsCasefolded() || (dir.IsEncrypted() && !dir.Crypt.HasKey()) {
		f.CfName = nil
		return nil
	}
	buf, err := t.Kmalloc(siteCfName, NameLen, kmem.GFPNoFS)
	if err != nil {
		return errno.ENOMEM
	}
	n, ferr := dir.SB.Encoding.Casefold(buf, iname)
	if ferr != nil || n <= 0 {
		t.Kfree(siteCfName, buf)
	} else {
		f.cfBuf, f.CfName = buf, buf[:n:n]
	}
	if !dir.IsEncrypted() {
		return nil
	}
	f.Hinfo.HashVersion = DxHashSiphash
	f.Hinfo.Seed = nil
	if f.CfName != nil {
		return Dirhash(t, dir, f.CfName, &f.Hinfo)
	}
	return Dirhash(t, dir, iname, &f.Hinfo)
}

// SetupFilename is ext4_fname_setup_filename: fscrypt_setup_filename, then
// the casefolded name. Release with FreeFilename.
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

// PrepareLookupFilename is the second half of ext4_fname_prepare_lookup:
// the name of a lookup whose fscrypt part the caller prepared with
// fscrypt_prepare_lookup (crypt is nil for an unencrypted directory),
// ext4_fname_from_fscrypt_name then ext4_fname_setup_ci_filename. It takes
// over crypt, which FreeFilename releases, even on error.
func PrepareLookupFilename(t *kernel.Task, dir *Inode, iname []byte, crypt *CryptName) (*Filename, error) {
	return setupFilename(t, dir, iname, crypt)
}

func setupFilename(t *kernel.Task, dir *Inode, iname []byte, crypt *CryptName) (*Filename, error) {
	f := &Filename{UsrName: iname, DiskName: iname}
	if crypt != nil {
		f.crypt, f.hasCrypt = *crypt, true
		f.DiskName = crypt.DiskName
		f.Hinfo.Hash, f.Hinfo.MinorHash = crypt.Hash, crypt.MinorHash
	}
	if err := setupCIFilename(t, dir, iname, f); err != nil {
		FreeFilename(t, dir, f)
		return nil, err
	}
	return f, nil
}

// FreeFilename is ext4_fname_free_filename.
func FreeFilename(t *kernel.Task, dir *Inode, f *Filename) {
	if f.hasCrypt {
		dir.Crypt.FreeFilename(t, &f.crypt)
		f.hasCrypt = false
	}
	if f.cfBuf != nil {
		t.Kfree(siteCfName, f.cfBuf)
		f.cfBuf, f.CfName = nil, nil
	}
}

// ciParent describes dir to generic_ci_match (vfs.GenericCIMatch), with
// ext4's allocation site for the per-call buffer. ext4 passes no prealloc
// buffer, whatever seed 001's variant.
func ciParent(dir *Inode) vfs.CIParent {
	p := vfs.CIParent{Encoding: dir.SB.Encoding, Strict: dir.SB.HasStrictEncoding(), Site: siteDecryptedName}
	if dir.IsEncrypted() {
		p.Crypt = dir.Crypt
	}
	return p
}

// match is ext4_match: a used dirent whose name matches. In a casefolded
// directory (with the key, if encrypted) it is generic_ci_match, except
// that with the no-compat-fallback flag a dirent whose stored hashes differ
// from the name's is rejected first; otherwise fscrypt_match_name.
// Comparison errors count as no match.
func match(t *kernel.Task, dir *Inode, f *Filename, b []byte, off int, st *lookupStats) bool {
	if direntInode(b, off) == 0 {
		return false
	}
	nl := int(b[off+6])
	deName := b[off+8 : off+8+nl]
	st.compared++
	if dir.IsCasefolded() && (!dir.IsEncrypted() || dir.Crypt.HasKey()) {
		if dir.SB.NoCasefoldCompatFallback() && dir.IsEncrypted() && f.CfName != nil {
			h, m, ok := direntHashes(b, off)
			if !ok || f.Hinfo.Hash != h || f.Hinfo.MinorHash != m {
				return false
			}
		}
		parent := ciParent(dir)
		if parent.Crypt != nil {
			st.decrypts++
		}
		res, _ := vfs.GenericCIMatch(t, &parent, f.UsrName, f.CfName, deName, nil)
		return res > 0
	}
	if f.hasCrypt {
		return dir.Crypt.MatchName(&f.crypt, deName)
	}
	return bytes.Equal(f.DiskName, deName)
}
