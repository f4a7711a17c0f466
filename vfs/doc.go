// Package vfs models the Linux VFS (fs/namei.c, fs/open.c,
// fs/read_write.c, fs/readdir.c, fs/ioctl.c, fs/inode.c, fs/libfs.c,
// fs/xattr.c, fs/buffer.c, mm/filemap.c, include/linux/fs.h):
// inodes, superblocks, open files, mounts, processes with their descriptor
// tables, the path walk in RCU and ref modes, and the syscall surface, on
// top of package dcache's dentries (Dentry is dcache.Dentry[Inode]) and
// with package fscrypt below it.
//
// # Machines, mounts and syscalls
//
//	k := kernel.NewWith(kernel.Config{Patches: set}) // the variants every layer runs
//	t := k.NewTask("init")                  // the calling task (`current`)
//	sys := vfs.NewSystem(k, nil, vfs.Config{})
//	sys.Mount(t, nil, memfs.Type, "/", vfs.MountOptions{})              // the root
//	p := sys.NewProc(t, nil)                 // a process, root credentials
//	fd, err := p.Open(t, "/tmp/f", vfs.O_CREAT|vfs.O_RDWR, 0o644)
//	n, err := p.Write(t, fd, data)
//	err = p.Close(t, fd)
//
// memfs.Boot does the first three steps. Later mounts attach a superblock
// to a directory (sys.Mount(t, p, fstype, "/mnt", opts)); the walk crosses
// them both ways, and rename and link across them give EXDEV.
//
// A process (Proc) is what will-it-scale calls a process: its own
// descriptor table, root and working directory, and credentials (the
// kernel.Cred the key ioctls check). Any number of tasks (goroutines, each
// with its own kernel.Task) may make syscalls on one process or on many at
// once. The syscalls are Proc methods named after the syscalls: Open,
// Openat, Close, Read, Write, Pread, Pwrite, Lseek, Mkdir, Rmdir, Unlink,
// Rename (renameat2 with RENAME_NOREPLACE, RENAME_EXCHANGE and
// RENAME_WHITEOUT), Link, Symlink, Readlink, Stat, Lstat, Fstat,
// Getdents64 (linux_dirent64 records; ParseDirents decodes them),
// Truncate, Ftruncate, Chdir and Ioctl, with helpers for the fscrypt
// ioctls (AddEncryptionKey, RemoveEncryptionKey, KeyStatus,
// SetEncryptionPolicy, EncryptDir). Each starts with
//
//	defer t.Recover(&err)
//	defer t.Trace("do_sys_openat2")()
//
// so that a BUG or an out-of-bounds access below becomes a recorded report
// and an error, and a tracer sees the call. Failures are Linux errnos
// (syscall.Errno values from package errno), in the order Linux checks
// them; the rapid property test in memfs compares every syscall with a
// reference model of the namespace.
//
// # How a filesystem plugs in
//
// A filesystem is a FileSystemType whose FillSuper sets up a SuperBlock:
//
//	func fillSuper(t *kernel.Task, sb *vfs.SuperBlock, data any) error {
//		sb.FsInfo = myFS                 // s_fs_info
//		sb.SetOps(myFS)                  // SuperOperations: EvictInode
//		sb.SetCop(myFS)                  // fscrypt.Operations, if it supports encryption
//		sb.SetBlockBits(12, maxBytes)
//		hooks.SetSBDops(sb)              // fscrypt_d_revalidate / casefolding d_ops
//		root, _ := vfs.NewInode(t, sb, ino, vfs.S_IFDIR|0o755)
//		root.Op, root.Fop, root.Private = dirOps, dirFileOps, myRootData
//		return sb.MakeRoot(t, root)
//	}
//
// Its inodes carry InodeOperations (Lookup, Create, Mkdir, Rmdir, Unlink,
// Rename, Link, Symlink, GetLink, Setattr, Getattr) and FileOperations
// (Open, Release, ReadIter, WriteIter, Llseek, IterateShared,
// UnlockedIoctl); embedding NoInodeOps and NoFileOps gives the kernel's
// answer for a missing operation (EPERM for mkdir, ENOTTY for an ioctl, ...).
// The contract is the kernel's:
//
//   - Lookup is called with the directory's i_rwsem held on a new unhashed
//     dentry; it calls DSpliceAlias(t, inode, dentry) (inode nil for
//     a negative dentry, which the dcache then caches) and returns the alias
//     that gives, if any. Names over NAME_MAX are ENAMETOOLONG. The inode it
//     finds is referenced with Igrab.
//   - Create, Mkdir, Symlink and Link make the entry and instantiate the
//     negative dentry (dcache.DInstantiate), which takes the inode
//     reference; Unlink, Rmdir and Rename change the entries and link counts
//     (DropNlink, IncNlink), and the VFS then updates the dcache (d_delete,
//     d_move, d_exchange) and marks removed directories S_DEAD.
//   - The VFS holds the locks vfs_* hold: the parent's i_rwsem for
//     lookups and namespace changes (both parents, in lock_rename's order,
//     and the children for rename), the victim's for unlink and rmdir, the
//     inode's for setattr and for fscrypt's set-policy ioctl.
//   - An inode's last Iput evicts it when it has no links left
//     (SuperOperations.EvictInode, then its key is freed); a linked inode
//     stays with its filesystem, which finds it again with Igrab.
//   - Encryption follows ext4: ->open calls hooks.FscryptFileOpen, ->lookup
//     hooks.FscryptPrepareLookup, ->link and ->rename the prepare hooks,
//     ->setattr hooks.FscryptPrepareSetattr, new inodes
//     fscrypt.PrepareNewInode and fscrypt.SetContext, and UnlockedIoctl
//     FscryptIoctl for the fscrypt ioctls.
//
// The shared helpers are the kernel's: a regular file's data is an
// AddressSpace whose AddressSpaceOperations the filesystem supplies, and
// its ReadIter, WriteIter and size changes are GenericFileReadIter
// (filemap_read), GenericFileWriteIter and TruncateSetsize (mm/filemap.c).
// Operations that also implement Readaheader (->readahead: ext4's) give
// the mapping a page cache read through readahead (readahead.go) and the
// filesystem's bios (SubmitBio, loop.go). A filesystem
// whose pages live in device blocks gives only its block map (BlockMapper,
// get_block_t) and uses BlockAops, which reads and writes BlockDevice
// blocks with fscrypt's contents encryption where the kernel calls it
// (fscrypt_decrypt_pagecache_blocks on read, a bounce page from
// fscrypt_encrypt_pagecache_blocks on writeback). Besides them:
// DSpliceAlias for ->lookup, IoctlFlags (FS_IOC_GETFLAGS/SETFLAGS),
// SimpleXattrs, FsUmodeToFtype, the directory code's view of the Unicode
// map (Encoding), LoadEncoding for fill_super and Boot.
//
// # The path walk
//
// Every lookup first runs in RCU mode (LOOKUP_RCU, as path_lookupat and
// path_openat do): inside one RCU read-side section it steps from dentry to
// dentry with dcache.DLookupRCU, validating each step with the d_seq
// counts, and takes no reference until complete_walk legitimizes the final
// dentry (one lockref operation on it). A dcache miss, a d_revalidate that
// must block, or an encrypted symlink turns the walk into a ref-walk where
// it stands (try_to_unlazy, event path_walk_unlazy); when that is not
// possible because something changed under the walk, the whole walk is
// redone in ref mode (event path_walk_ref_fallback). Ref-walk uses
// d_lookup, then the filesystem's ->lookup under the directory's i_rwsem.
// Symlinks are followed up to MAXSYMLINKS (40) per walk, "." and ".." are
// handled (not above the process's root, across mounts), a trailing slash
// demands a directory, and negative dentries answer ENOENT from the cache.
//
// # Extended attributes, special files, bind mounts
//
// The xattr syscalls (xattr.go) check what fs/xattr.c checks, in its
// order, and hand a name to the superblock's handler of its namespace
// (SetXattrHandlers, struct xattr_handler); the filesystems keep the
// attributes in their own formats. A special file (special.go) opens
// through the VFS's own file operations: a character device through the
// machine's cdev map (char_dev.go; drivers/char/mem.c's devices are
// registered at boot, mem.go), a block device through the disks the
// machine added (block_dev.go), a FIFO through its pipe (pipe.go), whose
// waits sleep through kernel.Task.Schedule. A bind mount
// (namespace_bind.go) is a second mount of a superblock with its own
// MNT_READONLY; a umount detaches one mount, and the superblock shuts
// down with its last.
//
// # What is not modelled
//
// d_alloc_parallel (lookups in one directory are serialised by its
// i_rwsem taken exclusive, as before Linux 4.7), O_PATH and O_TMPFILE
// (EOPNOTSUPP), chroot, POSIX ACLs (system.posix_acl_* is EOPNOTSUPP),
// LSMs, signals (a FIFO's writer without readers gets EPIPE, no SIGPIPE),
// recursive bind mounts and mount propagation, and mount reference counts
// beyond the files open through a mount.
package vfs
