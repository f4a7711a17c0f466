package ext4

import (
	"encoding/binary"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// Context returns a copy of an inode's stored fscrypt context (nil if
// none): the bytes of the encryption xattr, 28 (v1) or 40 (v2) long.
func Context(inode *vfs.Inode) []byte { return EXT4_SB(inode.SB()).Context(inode) }

// hasKey is fscrypt_has_encryption_key(dir).
func (dir *Inode) hasKey() bool { return fscrypt.HasEncryptionKey(&dir.Inode) }

// dirhashKey is the directory's SipHash key (ci_dirhash_key) as two le64
// words; ok is false without the key.
func (dir *Inode) dirhashKey() (key [2]uint64, ok bool) {
	b, ok := fscrypt.DirhashKey(&dir.Inode)
	return [2]uint64{binary.LittleEndian.Uint64(b[0:]), binary.LittleEndian.Uint64(b[8:])}, ok
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
