package ext4

import (
	"fmt"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/libfs"
	"github.com/vfslab/vfslab/vfs"
)

// pathMax is PATH_MAX, the buffer ext4fs_dirhash folds into.
const pathMax = 4096

// Allocation sites of the ext4 name code.
var (
	siteCfName         = kmem.NewSite("ext4_fname_setup_ci_filename:cf_name")
	siteDirhashBuff    = kmem.NewSite("ext4fs_dirhash:buff")
	siteDecryptedName  = kmem.NewSite("ext4/generic_ci_match:decrypted_name")
	siteDirPrivateInfo = kmem.NewSite("ext4_dir_open:dir_private_info")
	siteHtreeFname     = kmem.NewSite("ext4_htree_store_dirent:fname")
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
func match(t *kernel.Task, dir *Inode, f *Filename, b []byte, off int, st *libfs.LookupStats) bool {
	if direntInode(b, off) == 0 {
		return false
	}
	nl := int(b[off+6])
	deName := b[off+8 : off+8+nl]
	st.Compared++
	if dir.IsCasefolded() && (!dir.IsEncrypted() || dir.hasKey()) {
		if dir.SB.NoCasefoldCompatFallback() && dir.IsEncrypted() && f.CfName != nil {
			h, m, ok := direntHashes(b, off)
			if !ok || f.Hinfo.Hash != h || f.Hinfo.MinorHash != m {
				return false
			}
		}
		parent := ciParent(dir)
		if parent.Crypt != nil {
			st.Decrypts++
		}
		res, _ := vfs.GenericCIMatch(t, &parent, f.UsrName, f.CfName, deName, nil)
		return res > 0
	}
	return fscrypt.MatchName(&f.crypt, deName)
}
