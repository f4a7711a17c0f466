package ext4

import (
	"encoding/binary"
	"fmt"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/vfs"
)

// Encoding is what the directory code needs from the superblock's Unicode
// map (sb->s_encoding); see vfs.Encoding.
type Encoding = vfs.Encoding

// pathMax is PATH_MAX, the buffer ext4fs_dirhash folds into.
const pathMax = 4096

// Allocation sites of the ext4 name code.
var (
	siteCfName        = kmem.NewSite("ext4_fname_setup_ci_filename:cf_name")
	siteDirhashBuff   = kmem.NewSite("ext4fs_dirhash:buff")
	siteDecryptedName = kmem.NewSite("ext4/generic_ci_match:decrypted_name")
	siteReaddirFstr   = kmem.NewSite("ext4_readdir:fstr")
)

// Filename is struct ext4_filename (fs/ext4/ext4.h), with the struct
// fscrypt_name it is made from (ext4_fname_from_fscrypt_name), whose
// crypto_buf ext4_fname_free_filename releases.
type Filename struct {
	// UsrName is usr_fname, DiskName disk_name (ciphertext when encrypted).
	UsrName, DiskName []byte
	// Hinfo is hinfo: the hash, filled by SetupFilename in casefolded
	// encrypted directories, else by dx_probe or make_indexed_dir.
	Hinfo DxHashInfo
	// CfName is cf_name, the casefolded name (nil when not folded).
	CfName []byte

	crypt fscrypt.Name
	cfBuf []byte
}

// String is the canonical one-line dump of a prepared name.
func (f *Filename) String() string {
	s := fmt.Sprintf("usr=%q disk=%x hash=%08x:%08x", f.UsrName, f.DiskName, f.Hinfo.Hash, f.Hinfo.MinorHash)
	if f.CfName != nil {
		s += fmt.Sprintf(" cf=%q", f.CfName)
	}
	return s
}

// hasKey is fscrypt_has_encryption_key(dir).
func (dir *Inode) hasKey() bool { return fscrypt.HasEncryptionKey(&dir.Inode) }

// dirhashKey is the directory's SipHash key (ci_dirhash_key) as two le64
// words; ok is false without the key.
func (dir *Inode) dirhashKey() (key [2]uint64, ok bool) {
	b, ok := fscrypt.DirhashKey(&dir.Inode)
	return [2]uint64{binary.LittleEndian.Uint64(b[0:]), binary.LittleEndian.Uint64(b[8:])}, ok
}

// Dirhash is ext4fs_dirhash (fs/ext4/hash.c) for a name in dir: FoldDirhash
// with the directory's encoding when it is casefolded and its key (if
// encrypted) is present, and its SipHash key when it is encrypted and
// casefolded.
func Dirhash(t *kernel.Task, dir *Inode, name []byte, hinfo *DxHashInfo) error {
	var key *[2]uint64
	hasKey := true
	if dir.IsEncrypted() {
		hasKey = dir.hasKey()
		if k, ok := dir.dirhashKey(); ok && dir.IsCasefolded() {
			key = &k
		}
	}
	var enc Encoding
	if dir.IsCasefolded() && hasKey {
		enc = dir.SB.Encoding
	}
	return FoldDirhash(t, enc, name, hinfo, key)
}

// FoldDirhash is ext4fs_dirhash given what it reads from the directory:
// with enc (the encoding of a casefolded directory whose key, if
// encrypted, is present; nil otherwise) a non-empty name is casefolded into
// a kzalloc'd PATH_MAX buffer first (the raw name is hashed when folding
// fails); then __ext4fs_dirhash, with sipKey for DX_HASH_SIPHASH. Errors:
// ENOMEM, and Ext4fsDirhash's.
func FoldDirhash(t *kernel.Task, enc Encoding, name []byte, hinfo *DxHashInfo, sipKey *[2]uint64) error {
	if len(name) > 0 && enc != nil {
		buff, err := t.Kzalloc(siteDirhashBuff, pathMax, kmem.GFPKernel)
		if err != nil {
			return errno.ENOMEM
		}
		n, ferr := enc.Casefold(buff, name)
		if ferr == nil {
			err = Ext4fsDirhash(buff[:n], hinfo, sipKey)
			t.Kfree(siteDirhashBuff, buff)
			return err
		}
		t.Kfree(siteDirhashBuff, buff)
	}
	return Ext4fsDirhash(name, hinfo, sipKey)
}

// setupCIFilename is ext4_fname_setup_ci_filename: the casefolded name
// (kmalloc(EXT4_NAME_LEN)), and in an encrypted directory the SipHash of it.
func setupCIFilename(t *kernel.Task, dir *Inode, iname []byte, f *Filename) error {
	if !dir.IsCasefolded() || (dir.IsEncrypted() && !dir.hasKey()) {
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

// SetupFilename is ext4_fname_setup_filename: fscrypt_setup_filename in an
// encrypted directory (lookup: a no-key name is accepted without the key),
// then the casefolded name. Release with FreeFilename. Errors:
// ENAMETOOLONG, ENOMEM, and fscrypt's (ENOKEY, ENOENT for a malformed
// no-key name).
func SetupFilename(t *kernel.Task, dir *Inode, iname []byte, lookup bool) (*Filename, error) {
	if len(iname) > NameLen {
		return nil, errno.ENAMETOOLONG
	}
	f := &Filename{}
	if !dir.IsEncrypted() {
		f.crypt = fscrypt.Name{UsrFname: iname, DiskName: iname}
	} else if err := fscrypt.SetupFilename(t, &dir.Inode, iname, lookup, &f.crypt); err != nil {
		fscrypt.FreeFilename(t, &f.crypt)
		return nil, err
	}
	return fnameFromFscryptName(t, dir, iname, f)
}

// prepareLookup is ext4_fname_prepare_lookup: fscrypt_prepare_lookup
// (which marks a no-key dentry) straight into the filename, then the
// casefolded name (and its SipHash in an encrypted, casefolded directory).
// ENOENT means that the name cannot exist (a malformed no-key name).
func prepareLookup(t *kernel.Task, dir *Inode, d *vfs.Dentry) (*Filename, error) {
	f := &Filename{}
	if err := hooks.FscryptPrepareLookup(t, &dir.Inode, d, &f.crypt); err != nil {
		fscrypt.FreeFilename(t, &f.crypt)
		return nil, err
	}
	return fnameFromFscryptName(t, dir, f.crypt.UsrFname, f)
}

// fnameFromFscryptName is ext4_fname_from_fscrypt_name then
// ext4_fname_setup_ci_filename: the ext4 filename of a prepared fscrypt
// name. On error the filename is freed.
func fnameFromFscryptName(t *kernel.Task, dir *Inode, iname []byte, f *Filename) (*Filename, error) {
	f.UsrName, f.DiskName = iname, f.crypt.DiskName
	f.Hinfo.Hash, f.Hinfo.MinorHash = f.crypt.Hash, f.crypt.MinorHash
	if err := setupCIFilename(t, dir, iname, f); err != nil {
		FreeFilename(t, f)
		return nil, err
	}
	return f, nil
}

// FreeFilename is ext4_fname_free_filename: fscrypt_free_filename, and the
// casefolded name.
func FreeFilename(t *kernel.Task, f *Filename) {
	fscrypt.FreeFilename(t, &f.crypt)
	if f.cfBuf != nil {
		t.Kfree(siteCfName, f.cfBuf)
		f.cfBuf, f.CfName = nil, nil
	}
}

// ciCrypt is generic_ci_match's view of an encrypted parent: its key
// and fscrypt_fname_disk_to_usr.
type ciCrypt struct{ dir *vfs.Inode }

// HasKey implements vfs.CINameDecrypter.
func (c ciCrypt) HasKey() bool { return fscrypt.HasEncryptionKey(c.dir) }

// DiskToUsr implements vfs.CINameDecrypter.
func (c ciCrypt) DiskToUsr(t *kernel.Task, hash, minorHash uint32, iname, oname []byte) (int, error) {
	return fscrypt.FnameDiskToUsr(t, c.dir, hash, minorHash, iname, oname)
}

// ciParent describes dir to generic_ci_match (vfs.GenericCIMatch), with
// ext4's allocation site for the per-call buffer. ext4 passes no prealloc
// buffer, whatever seed 001's variant.
func ciParent(dir *Inode) vfs.CIParent {
	p := vfs.CIParent{Encoding: dir.SB.Encoding, Strict: dir.SB.HasStrictEncoding(), Site: siteDecryptedName}
	if dir.IsEncrypted() {
		p.Crypt = ciCrypt{&dir.Inode}
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
	if dir.IsCasefolded() && (!dir.IsEncrypted() || dir.hasKey()) {
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
	return fscrypt.MatchName(&f.crypt, deName)
}
