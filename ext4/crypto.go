package ext4

import (
	"encoding/binary"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// ext4's fscrypt operations (ext4_cryptops, fs/ext4/crypto.c): the
// superblock implements fscrypt.Operations.

// xattr index of the encryption context (EXT4_XATTR_INDEX_ENCRYPTION) and
// its name (EXT4_XATTR_NAME_ENCRYPTION_CONTEXT).
const (
	xattrIndexEncryption = 9
	xattrNameEncryption  = "c"
)

// GetContext implements fscrypt.Operations (ext4_get_context): the
// encryption context xattr. Errors: ENODATA without one, ERANGE when buf
// is too small.
func (sb *SuperBlock) GetContext(t *kernel.Task, inode fscrypt.Inode, buf []byte) (int, error) {
	return EXT4_I(inode.(*vfs.Inode)).xattrs.Get(xattrIndexEncryption, xattrNameEncryption, buf)
}

// SetContext implements fscrypt.Operations (ext4_set_context): the root
// directory cannot be encrypted (EPERM: e2fsck expects an unencrypted
// lost+found); the context is stored as the encryption xattr with
// XATTR_CREATE (EEXIST when there is one) and EXT4_INODE_ENCRYPT is set
// (S_ENCRYPTED); a directory's names are from then on
// encrypted through fscrypt. The caller holds the inode's i_rwsem or has
// the inode to itself.
func (sb *SuperBlock) SetContext(t *kernel.Task, inode fscrypt.Inode, ctx []byte, fsData any) error {
	i := inode.(*vfs.Inode)
	if i.Ino() == RootIno {
		return errno.EPERM
	}
	ei := EXT4_I(i)
	if err := ei.xattrs.Set(xattrIndexEncryption, xattrNameEncryption, ctx, true); err != nil {
		return err
	}
	i.SetFlags(vfs.S_ENCRYPTED)
	ei.Flags |= EncryptFL
	return nil
}

// EmptyDir implements fscrypt.Operations (ext4_empty_dir).
func (sb *SuperBlock) EmptyDir(t *kernel.Task, inode fscrypt.Inode) bool {
	i := inode.(*vfs.Inode)
	return i.IsDir() && EmptyDir(t, EXT4_I(i))
}

// HasStableInodes implements fscrypt.Operations: ext4 never renumbers
// inodes (unless the stable_inodes feature is off and the filesystem is
// shrunk, which the model never does).
func (sb *SuperBlock) HasStableInodes() bool { return true }

// Has32BitInodes implements fscrypt.Operations.
func (sb *SuperBlock) Has32BitInodes() bool { return true }

// SupportsSubblockDataUnits implements fscrypt.Operations: ext4 may
// encrypt in data units smaller than its blocks.
func (sb *SuperBlock) SupportsSubblockDataUnits() bool { return true }

// EvictDecryptedInode implements fscrypt.Operations for a key removal
// (vfs.EvictDecryptedInode).
func (sb *SuperBlock) EvictDecryptedInode(t *kernel.Task, inode fscrypt.Inode) {
	vfs.EvictDecryptedInode(t, inode.(*vfs.Inode))
}

// Context returns a copy of an inode's stored fscrypt context (nil if
// none): the bytes of the encryption xattr, 28 (v1) or 40 (v2) long.
func Context(inode *vfs.Inode) []byte {
	buf := make([]byte, 64)
	n, err := EXT4_I(inode).xattrs.Get(xattrIndexEncryption, xattrNameEncryption, buf)
	if err != nil {
		return nil
	}
	return buf[:n]
}

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
