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
// readdir in hash or block order. CheckDir is an e2fsck-style checker;
// WalkDirents decodes a directory's blocks as they are on disk (for vfslab
// dump and the package's own DumpDir).
//
// The directory functions (FindEntry, AddEntry, DeleteEntry, SetLink,
// SetDotdot, InitNewDir, EmptyDir, Readdir, CheckDir, WalkDirents) take
// the directory's Inode and expect what the VFS holds around the inode
// operations that call them: the directory's i_rwsem, exclusive for
// changes (Readdir: shared, with the inode's readMu), or a directory no
// other task can reach. They return errnos (EFSCORRUPTED with a log line
// for a corrupt block, EFSBADCRC for a checksum mismatch, ENOMEM, and
// fscrypt's).
//
// # One inode, one superblock
//
// Inode is struct ext4_inode_info: it embeds the VFS inode (vfs_inode) as
// its first field, and EXT4_I gets it back from a *vfs.Inode; SuperBlock
// is struct ext4_sb_info, hung off the VFS superblock (EXT4_SB). i_size,
// S_ENCRYPTED and S_CASEFOLD are the VFS inode's; the ext4 i_flags
// (EXT4_INDEX_FL, EXT4_CASEFOLD_FL, EXT4_ENCRYPT_FL) are Inode.Flags. A
// directory's names are encrypted by package fscrypt on the directory's
// own VFS inode, through the struct fscrypt_name that Filename holds.
//
// # The filesystem
//
// Type is ext4 as a vfs.FileSystemType (Boot makes a machine whose root is
// a fresh ext4). The files follow fs/ext4: super.go (ext4_fill_super),
// inode.go (ext4_alloc_inode, ext4_iget, ext4_evict_inode, the block
// maps), namei.go (the directory code and ext4_dir_inode_operations),
// dir.go and readdir.go (ext4_dir_operations, ext4_readdir), file.go
// (ext4_file_operations), ioctl.go, symlink.go, crypto.go (ext4_cryptops,
// ext4_fname_setup_filename and its kin), hash.go (ext4fs_dirhash) and
// name.go (struct ext4_filename, ext4_match). On a growing device
// (vfs.NewGrowingBlockDevice: unit tests and benchmarks) every mount
// formats a new filesystem with mke2fs's defaults (Options changes
// them): metadata_csum, dir_index, signed
// half_md4 directory hashes, the root directory (inode 2); inodes live in
// memory (a table from inode number to inode), directory blocks and the 4
// KiB blocks of file contents on the device.
//
// # Real images
//
// On a fixed-size device (vfs.NewBlockDeviceSize, vfs.OpenImage) the
// filesystem is a real ext4 image: Mkfs writes the layout mke2fs 1.47
// writes for the size (mkfs_image.go), and fill_super mounts any image
// with the magic (image.go: the superblock, group descriptor, geometry,
// feature and journal checks of ext4_fill_super, with the kernel's log
// lines). The on-disk structures are ondisk_super.go (struct
// ext4_super_block, struct ext4_group_desc, their checksums),
// ondisk_inode.go (struct ext4_inode and its checksum), extents.go (the
// extent tree, depth 0 and deeper, with the tail checksum) and xattr.go
// (in-inode and block xattrs, the encryption context "c" of index 9).
// image_inode.go is ext4_iget from the inode table and
// ext4_do_update_inode back to it: an inode changed by an operation is
// written at the operation's end, on eviction and by SyncFS, which also
// writes the superblock and flushes an attached host image. Blocks and
// inodes come from the bitmaps (the filesystem's allocator plugged into the
// device). Blocks of 1, 2 and 4 KiB mount (image_subpage.go reads and
// writes file pages block by block when a block is smaller than a page);
// block-mapped (ext2/ext3) files are read; the journal is replayed at
// mount when the superblock says needs_recovery (journal.go), and a
// read-write mount journals its metadata as jbd2 does, in data=ordered
// mode, with needs_recovery set until umount (jbd2.go; LogWrites records
// the writes for crash tests). The inode and file operations call
// the fscrypt hooks where ext4 does (fscrypt_prepare_lookup,
// fscrypt_prepare_new_inode and fscrypt_set_context, fscrypt_prepare_link,
// fscrypt_prepare_rename, fscrypt_prepare_symlink and
// fscrypt_encrypt_symlink, fscrypt_file_open from ext4_file_open). File
// contents go through the VFS's generic page paths (vfs.FilemapRead,
// vfs.GenericFileWriteIter, vfs.TruncateSetsize over vfs.BlockAops, given
// ext4's block map), which encrypt them per data unit through fscrypt's
// page-cache helpers; reads take ext4's ->readahead (readpage.go:
// ext4_mpage_readpages' bios, decrypted in their completion). The encryption context is the encryption xattr (index 9, name
// "c"); the root cannot be encrypted. Casefolding is set per empty directory
// with FS_IOC_SETFLAGS (FS_CASEFOLD_FL) on a filesystem made with the
// casefold feature (Options.Casefold).
package ext4
