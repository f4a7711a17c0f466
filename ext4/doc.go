// Package ext4 models Linux ext4: its directory code (fs/ext4/dir.c,
// namei.c and hash.c) byte for byte, and the filesystem the VFS mounts on a
// simulated device.
//
// # Directories
//
// The on-disk directory entry formats (with the metadata_csum tail), the
// htree (dx) index and the name hash functions that place entries in it are
// computed as the kernel computes them (checked against e2fsprogs), as are
// the lookup path (__ext4_find_entry: htree, then the linear search and its
// casefolded fallback), add (with leaf splits and index growth), delete and
// readdir in hash or block order. CheckDir is an e2fsck-style checker.
//
// # The filesystem
//
// Type is ext4 as a vfs.FileSystemType (Boot makes a machine whose root is
// a fresh ext4). Every mount formats a new device with mke2fs's defaults
// (Options changes them): metadata_csum, dir_index, signed half_md4
// directory hashes, the root directory (inode 2). Inodes live in memory (a
// table from inode number to inode); directory blocks and the 4 KiB blocks
// of file contents live on the device. The inode and file operations call
// the fscrypt hooks where ext4 does (fscrypt_prepare_lookup,
// fscrypt_prepare_new_inode and fscrypt_set_context, fscrypt_prepare_link,
// fscrypt_prepare_rename, fscrypt_prepare_symlink and
// fscrypt_encrypt_symlink, fscrypt_file_open from ext4_file_open). File
// contents go through the VFS's generic page paths (vfs.FilemapRead,
// vfs.GenericFileWriteIter, vfs.TruncateSetsize over vfs.BlockAops, given
// ext4's block map), which encrypt them per data unit through fscrypt's
// page-cache helpers. The encryption context is the encryption xattr (index 9, name
// "c"); the root cannot be encrypted. Casefolding is set per empty directory
// with FS_IOC_SETFLAGS (FS_CASEFOLD_FL) on a filesystem made with the
// casefold feature (Options.Casefold).
package ext4
