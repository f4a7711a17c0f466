package memfs

import (
	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/libfs"
	"github.com/vfslab/vfslab/vfs"
)

// dirOps are a directory's inode operations.
type dirOps struct {
	vfs.NoInodeOps
	fs *FS
}

// Lookup is ->lookup (ext4_lookup's shape): prepare the name with
// fscrypt_prepare_lookup, find it, and splice the inode (or nil) into the
// dentry. As ext4 does, a directory or symlink whose context the
// encrypted parent does not permit is refused with EPERM.
func (o dirOps) Lookup(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, flags uint32) (*vfs.Dentry, error) {
	defer t.Trace("memfs_lookup")()
	if len(d.Name().Name) > vfs.NAME_MAX {
		return nil, errno.ENAMETOOLONG
	}
	var fname fscrypt.Name
	err := hooks.FscryptPrepareLookup(t, dir, d, &fname)
	if err == errno.ENOENT {
		return vfs.DSpliceAlias(t, nil, d)
	}
	if err != nil {
		return nil, err
	}
	e := findEntry(dir, &fname)
	fscrypt.FreeFilename(t, &fname)
	var inode *vfs.Inode
	if e != nil && vfs.Igrab(e.inode) {
		inode = e.inode
		if dir.IsEncrypted() && (inode.IsDir() || inode.IsLnk()) && !fscrypt.HasPermittedContext(t, dir, inode) {
			t.Printk("memfs: Inconsistent encryption contexts: %d/%d", dir.Ino(), inode.Ino())
			vfs.Iput(t, inode)
			return nil, errno.EPERM
		}
	}
	return vfs.DSpliceAlias(t, inode, d)
}

// Create is ->create.
func (o dirOps) Create(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, mode uint32, excl bool) error {
	defer t.Trace("memfs_create")()
	if err := hooks.FscryptPrepareCreate(t, dir); err != nil {
		return err
	}
	inode, err := o.fs.newInode(t, dir, mode&^vfs.S_IFMT|vfs.S_IFREG)
	if err != nil {
		return err
	}
	if err := instantiate(t, dir, d, inode); err != nil {
		discard(t, inode)
		return err
	}
	return nil
}

// Mkdir is ->mkdir.
func (o dirOps) Mkdir(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, mode uint32) error {
	defer t.Trace("memfs_mkdir")()
	if err := hooks.FscryptPrepareCreate(t, dir); err != nil {
		return err
	}
	inode, err := o.fs.newInode(t, dir, mode&^vfs.S_IFMT|vfs.S_IFDIR)
	if err != nil {
		return err
	}
	inode.SetNlink(2)
	if err := instantiate(t, dir, d, inode); err != nil {
		discard(t, inode)
		return err
	}
	dir.IncNlink()
	return nil
}

// Rmdir is ->rmdir (simple_rmdir): ENOTEMPTY for a directory with
// entries. The VFS holds both directories' locks.
func (o dirOps) Rmdir(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry) error {
	defer t.Trace("memfs_rmdir")()
	inode := d.Inode()
	if len(infoOf(inode).entries) != 0 {
		return errno.ENOTEMPTY
	}
	e, err := entryOf(t, dir, d)
	if err != nil {
		return err
	}
	removeEntry(dir, e)
	inode.ClearNlink()
	dir.DropNlink(t)
	return nil
}

// Unlink is ->unlink.
func (o dirOps) Unlink(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry) error {
	defer t.Trace("memfs_unlink")()
	e, err := entryOf(t, dir, d)
	if err != nil {
		return err
	}
	removeEntry(dir, e)
	d.Inode().DropNlink(t)
	return nil
}

// Rename is ->rename (ext4_rename2's order: flags, fscrypt_prepare_rename,
// then simple_rename's ENOTEMPTY and the move). RENAME_WHITEOUT is not
// supported (EINVAL). The entry keeps its on-disk name only when it stays
// where it is (RENAME_EXCHANGE); a moved entry takes the position of a new
// one.
func (o dirOps) Rename(t *kernel.Task, oldDir *vfs.Inode, oldD *vfs.Dentry, newDir *vfs.Inode, newD *vfs.Dentry, flags uint32) error {
	defer t.Trace("memfs_rename")()
	if flags&^(vfs.RENAME_NOREPLACE|vfs.RENAME_EXCHANGE) != 0 {
		return errno.EINVAL
	}
	if !o.fs.opts.UnsafeSkipRenameHook {
		if err := hooks.FscryptPrepareRename(t, oldDir, oldD, newDir, newD, flags); err != nil {
			return err
		}
	}
	source, target := oldD.Inode(), newD.Inode()
	if flags&vfs.RENAME_EXCHANGE != 0 {
		oldE, err := entryOf(t, oldDir, oldD)
		if err != nil {
			return err
		}
		newE, err := entryOf(t, newDir, newD)
		if err != nil {
			return err
		}
		oldE.inode, newE.inode = target, source
		if oldDir != newDir && source.IsDir() != target.IsDir() {
			if source.IsDir() {
				oldDir.DropNlink(t)
				newDir.IncNlink()
			} else {
				newDir.DropNlink(t)
				oldDir.IncNlink()
			}
		}
		return nil
	}
	theyAreDirs := source.IsDir()
	if target != nil && target.IsDir() && len(infoOf(target).entries) != 0 {
		return errno.ENOTEMPTY
	}
	oldE, err := entryOf(t, oldDir, oldD)
	if err != nil {
		return err
	}
	var name string
	var newE *dirent
	if target != nil {
		if newE, err = entryOf(t, newDir, newD); err != nil {
			return err
		}
		name = newE.name
	} else if name, err = createName(t, newDir, newD); err != nil {
		return err
	}
	if newE != nil {
		removeEntry(newDir, newE)
		target.DropNlink(t)
		if theyAreDirs {
			target.DropNlink(t)
			oldDir.DropNlink(t)
		}
	} else if theyAreDirs {
		oldDir.DropNlink(t)
		newDir.IncNlink()
	}
	removeEntry(oldDir, oldE)
	addEntry(newDir, name, source)
	return nil
}

// Link is ->link.
func (o dirOps) Link(t *kernel.Task, oldD *vfs.Dentry, dir *vfs.Inode, newD *vfs.Dentry) error {
	defer t.Trace("memfs_link")()
	if err := hooks.FscryptPrepareLink(t, oldD, dir, newD); err != nil {
		return err
	}
	inode := oldD.Inode()
	name, err := createName(t, dir, newD)
	if err != nil {
		return err
	}
	inode.IncNlink()
	vfs.Ihold(inode)
	addEntry(dir, name, inode)
	dcache.DInstantiate(t, newD, inode)
	return nil
}

// Symlink is ->symlink (ext4_symlink's order: fscrypt_prepare_symlink,
// the new inode, fscrypt_encrypt_symlink). Targets up to a block.
func (o dirOps) Symlink(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, target string) error {
	defer t.Trace("memfs_symlink")()
	diskLen, _, err := hooks.FscryptPrepareSymlink(t, dir, target, blockSize)
	if err != nil {
		return err
	}
	inode, err := o.fs.newInode(t, dir, vfs.S_IFLNK|0o777)
	if err != nil {
		return err
	}
	in := infoOf(inode)
	if inode.IsEncrypted() {
		sd, err := hooks.FscryptEncryptSymlink(t, inode, target, diskLen)
		if err != nil {
			discard(t, inode)
			return err
		}
		in.target = sd
		inode.SetSize(int64(diskLen - 1))
	} else {
		in.target = append([]byte(target), 0)
		inode.SetSize(int64(len(target)))
		inode.SetLink(target)
	}
	if err := instantiate(t, dir, d, inode); err != nil {
		discard(t, inode)
		return err
	}
	return nil
}

// ioctl is ->unlocked_ioctl. tmpfs has none (shmem_file_operations and
// shmem_dir_operations set no unlocked_ioctl), so vfs_ioctl answers
// ENOTTY for every command the VFS itself does not handle, the fscrypt
// ioctls among them; with TestFscrypt it dispatches the fscrypt ioctls
// as ext4_ioctl does.
func (fs *FS) ioctl(t *kernel.Task, f *vfs.File, cmd uint32, arg any) (int, error) {
	if !fs.opts.TestFscrypt {
		return 0, errno.ENOTTY
	}
	return libfs.FlagsIoctl(t, f, cmd, arg, nil)
}

// shmemFileOps are a regular file's file operations on a memfs that is
// tmpfs: shmem_file_operations, whose ->open is generic_file_open (no
// fscrypt_file_open: tmpfs has no encryption).
type shmemFileOps struct{ vfs.FileOperations }

// Open is generic_file_open: nothing to refuse for a file whose size
// fits an off_t (the model's files always do).
func (shmemFileOps) Open(t *kernel.Task, inode *vfs.Inode, f *vfs.File) error {
	defer t.Trace("generic_file_open")()
	return nil
}

// dirFileOps are a directory's file operations, without ->open, as ext4's
// and f2fs's since Linux 5.11: readdir sets an encrypted directory's key
// up itself.
type dirFileOps struct {
	vfs.DirFileOps
	fs *FS
}

// Llseek is dcache_dir_lseek: SEEK_SET and SEEK_CUR to a non-negative
// position.
func (o dirFileOps) Llseek(t *kernel.Task, f *vfs.File, off int64, whence int) (int64, error) {
	switch whence {
	case vfs.SEEK_CUR:
		off += f.PosLocked()
	case vfs.SEEK_SET:
	default:
		return 0, errno.EINVAL
	}
	if off < 0 {
		return 0, errno.EINVAL
	}
	f.SetPos(off)
	return off, nil
}

// IterateShared is ->iterate_shared: ".", "..", then the entries from
// ctx.Pos in position order, their names decrypted (or no-key encoded
// without the key) in an encrypted directory.
func (o dirFileOps) IterateShared(t *kernel.Task, f *vfs.File, ctx *vfs.DirContext) error {
	defer t.Trace("memfs_readdir")()
	dir := f.Inode()
	encrypted := dir.IsEncrypted()
	if encrypted {
		if err := hooks.FscryptPrepareReaddir(t, dir); err != nil {
			return err
		}
	}
	if !ctx.DirEmitDots(f) {
		return nil
	}
	in := infoOf(dir)
	var buf []byte
	if encrypted {
		var err error
		if buf, err = fscrypt.FnameAllocBuffer(t, vfs.NAME_MAX); err != nil {
			return err
		}
		defer fscrypt.FnameFreeBuffer(t, buf)
	}
	for _, e := range in.order {
		if e.cookie < ctx.Pos {
			continue
		}
		name := e.name
		if encrypted {
			n, err := fscrypt.FnameDiskToUsr(t, dir, 0, 0, []byte(e.name), buf)
			if err != nil {
				return err
			}
			name = string(buf[:n])
		}
		if !ctx.DirEmit(name, e.inode.Ino(), vfs.DtType(e.inode.Mode())) {
			return nil
		}
		ctx.Pos = e.cookie + 1
	}
	return nil
}

// UnlockedIoctl is ->unlocked_ioctl: the fscrypt ioctls.
func (o dirFileOps) UnlockedIoctl(t *kernel.Task, f *vfs.File, cmd uint32, arg any) (int, error) {
	return o.fs.ioctl(t, f, cmd, arg)
}

// aops are a regular file's page operations: blocks kept in kmalloc'd
// buffers and encrypted in place, one data unit per block
// (fscrypt_encrypt_block_inplace, fscrypt_decrypt_block_inplace), as a
// filesystem that does its own I/O (ubifs) does. ->write_begin reads every
// page it is given, even one the write covers.
type aops struct{}

// ReadFolio implements vfs.AddressSpaceOperations.
func (aops) ReadFolio(t *kernel.Task, inode *vfs.Inode, index uint64, page []byte) error {
	return plainBlock(t, inode, infoOf(inode), index, page)
}

// WriteBegin implements vfs.AddressSpaceOperations.
func (aops) WriteBegin(t *kernel.Task, inode *vfs.Inode, index uint64, off, n int, page []byte) error {
	return plainBlock(t, inode, infoOf(inode), index, page)
}

// WritePage implements vfs.AddressSpaceOperations.
func (aops) WritePage(t *kernel.Task, inode *vfs.Inode, index uint64, page []byte) error {
	return storeBlock(t, inode, infoOf(inode), index, page)
}

// Bmap implements vfs.AddressSpaceOperations.
func (aops) Bmap(inode *vfs.Inode, index uint64) bool {
	in := infoOf(inode)
	return index < uint64(len(in.blocks)) && in.blocks[index] != nil
}

// TruncateBlocks implements vfs.AddressSpaceOperations: the blocks from
// index from on are freed.
func (aops) TruncateBlocks(t *kernel.Task, inode *vfs.Inode, from uint64) {
	in := infoOf(inode)
	for i := from; i < uint64(len(in.blocks)); i++ {
		if b := in.blocks[i]; b != nil {
			t.Kfree(siteBlock, b)
		}
	}
	if from < uint64(len(in.blocks)) {
		in.blocks = in.blocks[:from]
	}
}

// plainBlock copies data block i as plaintext into out (zeros for a hole
// or past the end). The caller holds the mapping's lock.
func plainBlock(t *kernel.Task, inode *vfs.Inode, in *info, i uint64, out []byte) error {
	if i >= uint64(len(in.blocks)) || in.blocks[i] == nil {
		clear(out)
		return nil
	}
	copy(out, in.blocks[i])
	if inode.IsEncrypted() {
		return fscrypt.DecryptBlockInplace(t, inode, out, i)
	}
	return nil
}

// storeBlock stores plaintext block i (encrypting it for an encrypted
// file). The caller holds the mapping's lock.
func storeBlock(t *kernel.Task, inode *vfs.Inode, in *info, i uint64, plain []byte) error {
	for uint64(len(in.blocks)) <= i {
		in.blocks = append(in.blocks, nil)
	}
	b := in.blocks[i]
	if b == nil {
		var err error
		if b, err = t.Kmalloc(siteBlock, blockSize, kmem.GFPNoFS); err != nil {
			return err
		}
	}
	copy(b, plain)
	if inode.IsEncrypted() {
		if err := fscrypt.EncryptBlockInplace(t, inode, b, i); err != nil {
			if in.blocks[i] == nil {
				t.Kfree(siteBlock, b)
			}
			return err
		}
	}
	in.blocks[i] = b
	return nil
}
