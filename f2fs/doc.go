// Package f2fs models Linux f2fs: its directory code (fs/f2fs/dir.c,
// inline.c and hash.c) byte for byte, and the filesystem the VFS mounts
// (fs/f2fs/namei.c, file.c, super.c) on a simulated device.
//
// # Directories
//
// The dentry block and inline dentry formats, the multi-level hash table of
// directory buckets and the name hash that selects a bucket are computed as
// the kernel computes them (checked against f2fs-tools), as are the lookup
// path (__f2fs_find_entry with the linear fallback of casefolded
// directories, the lookup_mode= option and seed 001's prealloc buffer),
// add, delete and readdir. CheckDir is an fsck.f2fs-style checker;
// WalkDirents decodes a directory's blocks for dumps.
//
// # The filesystem
//
// Type is f2fs as a vfs.FileSystemType (Boot makes a machine whose root is a
// fresh f2fs). Every mount formats a new device: the root directory (inode
// 3) with inline dentries in its inode block. As in the kernel there is one
// superblock, SuperBlock (struct f2fs_sb_info, F2FS_SB of the VFS
// superblock), and one inode, Inode (struct f2fs_inode_info, which embeds
// the VFS inode; F2FS_I): the directory code takes the same inode the VFS
// mounts, and the names it works on are Filenames (struct f2fs_filename)
// holding fscrypt's struct fscrypt_name. Inodes live in memory (a table
// from nid to inode, their metadata in the inode); directory blocks,
// inline dentry areas and the 4 KiB blocks of file contents live on the
// device. The inode and file operations call the fscrypt hooks where
// f2fs does: fscrypt_prepare_lookup from ->lookup, fscrypt_prepare_new_inode
// and fscrypt_set_context when an inode is made, fscrypt_prepare_link,
// fscrypt_prepare_rename and fscrypt_prepare_symlink from those operations,
// fscrypt_file_open from ->open (seed 004's function). File contents go
// through the VFS's generic page paths (vfs.FilemapRead,
// vfs.GenericFileWriteIter, vfs.TruncateSetsize over vfs.BlockAops, given
// f2fs's block map), which encrypt them per data unit through fscrypt's
// page-cache helpers. The encryption context is the encryption xattr
// (index 9, name "c"). Casefolding is set per empty directory with FS_IOC_SETFLAGS (FS_CASEFOLD_FL) on a
// filesystem made with the casefold feature (Options.Casefold).
//
// # Images
//
// A fixed-size device (vfs.NewBlockDeviceSize, vfs.OpenImage) holds the
// real on-disk format (include/linux/f2fs_fs.h): the two superblocks
// (RawSuper), the two checkpoint packs (Checkpoint) with their summaries
// and the NAT and SIT journals, the NAT, the SIT and the SSA, and node
// blocks (Node: inodes, direct and indirect nodes, xattr nodes) in the
// main area. Type's Mkfs writes the layout mkfs.f2fs 1.15 writes for the
// device's size; fill_super then reads the image as f2fs_fill_super does
// (sanity_check_raw_super, f2fs_get_valid_checkpoint,
// f2fs_sanity_check_ckpt, the node and segment managers), with the
// kernel's errnos and log lines for a bad image, and inodes come from
// their node blocks through the NAT (checksums and footers checked),
// their data through i_addr and the direct and indirect nodes, inline
// dentries, inline data and the inline xattrs (the encryption context)
// included. On a writable device new blocks come from the SIT's free
// blocks (imageAlloc), and SuperBlock.SyncFs writes a checkpoint as a
// clean umount leaves it, every reachable node rewritten (a reduction of
// f2fs_write_checkpoint: see image_write.go), which fsck.f2fs accepts.
// The growing device of vfslab's own layout (NewDevice, vfs.FormatNew)
// keeps inodes in memory as described above.
package f2fs
