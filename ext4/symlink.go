package ext4

import "github.com/vfslab/vfslab/vfs"

// A symlink's inode operations are libfs.Symlink's over the stored target
// (fs/ext4/symlink.c: ext4_symlink_inode_operations,
// ext4_fast_symlink_inode_operations and
// ext4_encrypted_symlink_inode_operations).

// RawTarget returns a symlink's on-disk target: the bytes and a NUL, or
// struct fscrypt_symlink_data for an encrypted one.
func RawTarget(inode *vfs.Inode) []byte {
	ei := EXT4_I(inode)
	ei.mu.Lock()
	defer ei.mu.Unlock()
	return append([]byte(nil), ei.target...)
}
