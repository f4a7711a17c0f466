package libfs

import (
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// The encryption context's xattr: index 9 and name "c"
// (EXT4_XATTR_INDEX_ENCRYPTION and EXT4_XATTR_NAME_ENCRYPTION_CONTEXT,
// F2FS_XATTR_INDEX_ENCRYPTION and F2FS_XATTR_NAME_ENCRYPTION_CONTEXT:
// ext4 and f2fs use the same pair).
const (
	XattrIndexEncryption = 9
	XattrNameEncryption  = "c"
)

// XattrStore is a filesystem's own xattr calls by name index, which its
// xattr handlers and its fscrypt operations share (ext4_xattr_get and
// ext4_xattr_set, f2fs_getxattr and f2fs_setxattr).
type XattrStore interface {
	// Get copies the value of (index, name) into buf (only its length
	// when buf is empty). Errors: ENODATA, ERANGE.
	Get(index uint8, name string, buf []byte) (int, error)
	// Set stores value (nil removes) with setxattr's flags
	// (vfs.XATTR_CREATE, vfs.XATTR_REPLACE). Errors: EEXIST, ENODATA,
	// ENOSPC and the filesystem's.
	Set(t *kernel.Task, index uint8, name string, value []byte, flags int) error
}

// XattrCrypt is the fscrypt_operations of a filesystem that keeps the
// encryption context as an xattr (ext4_cryptops, f2fs_cryptops): the
// filesystem embeds it in its superblock and sets its fields when it
// fills the superblock.
type XattrCrypt struct {
	// Xattrs returns an inode's xattr storage.
	Xattrs func(inode *vfs.Inode) XattrStore
	// Permit, when set, refuses a context before it is stored (ext4's
	// root directory: EPERM).
	Permit func(inode *vfs.Inode) error
	// Encrypted runs once the context is stored, under the same locks
	// (ext4 sets EXT4_INODE_ENCRYPT).
	Encrypted func(inode *vfs.Inode)
	// Empty is the filesystem's empty_dir.
	Empty func(t *kernel.Task, inode *vfs.Inode) bool
	// Subblock is ->supports_subblock_data_units.
	Subblock bool
	// StableInodes is ->has_stable_inodes: whether inode numbers never
	// change, which IV_INO_LBLK_* policies need (ext4_has_stable_inodes:
	// the stable_inodes feature; f2fs_has_stable_inodes: always).
	StableInodes func() bool
	// KeyPrefix is ->legacy_key_prefix ("ext4:", "f2fs:").
	KeyPrefix string
}

// LegacyKeyPrefix implements fscrypt.LegacyKeyPrefixer: the filesystem's
// own description prefix of v1 keys in process keyrings.
func (c *XattrCrypt) LegacyKeyPrefix() string { return c.KeyPrefix }

// GetContext implements fscrypt.Operations (ext4_get_context,
// f2fs_get_context): the encryption context xattr. Errors: ENODATA
// without one, ERANGE when buf is too small.
func (c *XattrCrypt) GetContext(t *kernel.Task, inode fscrypt.Inode, buf []byte) (int, error) {
	return c.Xattrs(inode.(*vfs.Inode)).Get(XattrIndexEncryption, XattrNameEncryption, buf)
}

// SetContext implements fscrypt.Operations (ext4_set_context,
// f2fs_set_context): the context is stored as the encryption xattr with
// XATTR_CREATE and the inode is marked encrypted (S_ENCRYPTED); a
// directory's names are from then on encrypted through fscrypt. The
// caller holds the inode's i_rwsem or has the inode to itself. Errors:
// Permit's, EEXIST when the inode has a context, ENOMEM.
func (c *XattrCrypt) SetContext(t *kernel.Task, inode fscrypt.Inode, ctx []byte, fsData any) error {
	i := inode.(*vfs.Inode)
	if c.Permit != nil {
		if err := c.Permit(i); err != nil {
			return err
		}
	}
	if err := c.Xattrs(i).Set(t, XattrIndexEncryption, XattrNameEncryption, ctx, vfs.XATTR_CREATE); err != nil {
		return err
	}
	i.SetFlags(vfs.S_ENCRYPTED)
	if c.Encrypted != nil {
		c.Encrypted(i)
	}
	return nil
}

// EmptyDir implements fscrypt.Operations (ext4_empty_dir,
// f2fs_empty_dir).
func (c *XattrCrypt) EmptyDir(t *kernel.Task, inode fscrypt.Inode) bool {
	i := inode.(*vfs.Inode)
	return i.IsDir() && c.Empty(t, i)
}

// HasStableInodes implements fscrypt.Operations (->has_stable_inodes).
func (c *XattrCrypt) HasStableInodes() bool { return c.StableInodes() }

// Has32BitInodes implements fscrypt.Operations: inode numbers and nids
// are 32-bit.
func (c *XattrCrypt) Has32BitInodes() bool { return true }

// SupportsSubblockDataUnits implements fscrypt.Operations.
func (c *XattrCrypt) SupportsSubblockDataUnits() bool { return c.Subblock }

// EvictDecryptedInode implements fscrypt.Operations for a key removal
// (vfs.EvictDecryptedInode).
func (c *XattrCrypt) EvictDecryptedInode(t *kernel.Task, inode fscrypt.Inode) {
	vfs.EvictDecryptedInode(t, inode.(*vfs.Inode))
}

// Context returns a copy of an inode's stored fscrypt context (nil if
// none): the bytes of the encryption xattr, 28 (v1) or 40 (v2) long.
func (c *XattrCrypt) Context(inode *vfs.Inode) []byte {
	buf := make([]byte, 64)
	n, err := c.Xattrs(inode).Get(XattrIndexEncryption, XattrNameEncryption, buf)
	if err != nil {
		return nil
	}
	return buf[:n]
}
