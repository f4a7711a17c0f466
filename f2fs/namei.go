package f2fs

import (
	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/libfs"
	"github.com/vfslab/vfslab/vfs"
)

// dirOps are a directory's inode operations (f2fs_dir_inode_operations,
// fs/f2fs/namei.c).
type dirOps struct {
	vfs.NoInodeOps
	sbi *SuperBlock
}

// prepareLookup is f2fs_prepare_lookup: fscrypt_prepare_lookup (which
// marks a no-key dentry) straight into fname's struct fscrypt_name, then
// the casefolded name and the hash (__f2fs_setup_filename). ENOENT means
// that the name cannot exist (a malformed no-key name). On error fname is
// released.
func prepareLookup(t *kernel.Task, dir *Inode, d *vfs.Dentry, fname *Filename) error {
	name := []byte(d.Name().Name)
	*fname = Filename{UsrName: name, DiskName: name, hasCrypt: dir.IsEncrypted()}
	if err := hooks.FscryptPrepareLookup(t, &dir.Inode, d, &fname.crypt); err != nil {
		FreeFilename(t, dir, fname)
		return err
	}
	return setupFilename(t, dir, fname)
}

// Lookup is f2fs_lookup: find the name (__f2fs_find_entry, with the linear
// fallback lookup_mode allows), read its inode, and splice it into the
// dentry. An encrypted directory refuses a directory or symlink whose
// policy it does not permit (EPERM, with a warning). As in Linux before
// 6.9, a miss in a casefolded directory leaves the dentry unhashed rather
// than caching a negative dentry that a differently-cased create would
// reuse (the model has no generic_ci_d_revalidate). The VFS holds dir's
// i_rwsem (shared is enough: lookups do not change the directory besides
// the chash/clevel hint) and a reference on d; the inode reference taken
// goes with the spliced dentry. Errors: ENAMETOOLONG, EFSCORRUPTED (a
// corrupt dentry block or nid), EPERM, ENOMEM, fscrypt's.
func (o *dirOps) Lookup(t *kernel.Task, vdir *vfs.Inode, d *vfs.Dentry, flags uint32) (*vfs.Dentry, error) {
	defer t.Trace("f2fs_lookup")()
	if len(d.Name().Name) > NameLen {
		return nil, errno.ENAMETOOLONG
	}
	dir := F2FS_I(vdir)
	var inode *vfs.Inode
	var f Filename
	err := prepareLookup(t, dir, d, &f)
	switch {
	case err == errno.ENOENT:
	case err != nil:
		return nil, err
	default:
		ref, err := FindEntryFname(t, dir, &f)
		FreeFilename(t, dir, &f)
		if err != nil {
			return nil, err
		}
		if ref != nil {
			fi, err := o.sbi.iget(t, ref.Entry.Ino)
			if err != nil {
				return nil, err
			}
			inode = &fi.Inode
		}
	}
	return libfs.FinishLookup(t, vdir, d, inode, func(dir, inode *vfs.Inode) {
		o.sbi.warn(t, "Inconsistent encryption contexts: %d/%d", dir.Ino(), inode.Ino())
	})
}

// newInode is f2fs_new_inode's part that matters here: a new inode in dir,
// casefolded if it is a directory in a casefolded one (f2fs_mask_flags of
// the inherited F2FS_CASEFOLD_FL), with the directory's encryption policy
// (fscrypt_prepare_new_inode; the context is stored by fscrypt_set_context,
// which f2fs_init_inode_metadata calls). The caller holds dir's i_rwsem;
// the new inode comes with one reference. Errors: ENOKEY, ENOSPC, ENOMEM.
func (sbi *SuperBlock) newInode(t *kernel.Task, dir *Inode, mode uint32) (*Inode, error) {
	defer t.Trace("f2fs_new_inode")()
	// The require-key step of fscrypt_prepare_new_inode
	// (fscrypt_policy_to_inherit), before a nid is taken.
	if err := hooks.FscryptPrepareCreate(t, &dir.Inode); err != nil {
		return nil, err
	}
	fi, err := sbi.allocInode(t, 0, mode)
	if err != nil {
		return nil, err
	}
	vfs.InodeInitOwner(t, &fi.Inode, &dir.Inode, mode)
	if dir.Inode.IsCasefolded() && fi.IsDir() {
		fi.IFlags |= CasefoldFL
		fi.setInodeFlags()
	}
	encrypt, err := fscrypt.PrepareNewInode(t, &dir.Inode, &fi.Inode)
	if err == nil && encrypt {
		err = fscrypt.SetContext(t, &fi.Inode, nil)
	}
	if err != nil {
		discard(t, fi)
		return nil, err
	}
	// f2fs_new_inode: F2FS_INDEX_FL on a directory; FI_INLINE_DATA on a
	// regular file when f2fs_may_inline_data (inline_data is on by
	// default), which fscrypt's post-read decryption rules out.
	switch {
	case fi.IsDir():
		fi.IFlags |= IndexFL
	case mode&vfs.S_IFMT == vfs.S_IFREG && !fi.IsEncrypted():
		fi.inlineData = true
	}
	return fi, nil
}

// addLink is f2fs_add_link: the dentry's name in dir for inode
// (f2fs_do_add_link, which skips the existence check when this task's own
// lookup just missed the name).
func addLink(t *kernel.Task, dir *Inode, d *vfs.Dentry, inode *vfs.Inode) error {
	return AddLink(t, dir, []byte(d.Name().Name), uint32(inode.Ino()), inode.Mode())
}

// Create is f2fs_create: a new regular file (f2fs_new_inode, with
// fscrypt_prepare_new_inode and fscrypt_set_context), its dentry
// (f2fs_add_link), then d_instantiate_new. The VFS holds dir's i_rwsem
// exclusive and a reference on the negative dentry d, which takes the new
// inode's reference. Errors: EEXIST, ENOSPC, ENAMETOOLONG, EINVAL (strict
// encoding), EFSCORRUPTED, ENOKEY, ENOMEM and fscrypt's.
func (o *dirOps) Create(t *kernel.Task, vdir *vfs.Inode, d *vfs.Dentry, mode uint32, excl bool) error {
	defer t.Trace("f2fs_create")()
	if err := o.sbi.checkWritable(); err != nil {
		return err
	}
	dir := F2FS_I(vdir)
	fi, err := o.sbi.newInode(t, dir, mode&^vfs.S_IFMT|vfs.S_IFREG)
	if err != nil {
		return err
	}
	if err := addLink(t, dir, d, &fi.Inode); err != nil {
		discard(t, fi)
		return err
	}
	dcache.DInstantiate(t, d, &fi.Inode)
	return nil
}

// Mkdir is f2fs_mkdir: a new directory with "." and ".." (inline when the
// inline_dentry option is on) and its dentry; both link counts grow
// (FI_INC_LINK). Locks, references and errors as Create's.
func (o *dirOps) Mkdir(t *kernel.Task, vdir *vfs.Inode, d *vfs.Dentry, mode uint32) error {
	defer t.Trace("f2fs_mkdir")()
	if err := o.sbi.checkWritable(); err != nil {
		return err
	}
	dir := F2FS_I(vdir)
	fi, err := o.sbi.newInode(t, dir, mode&^vfs.S_IFMT|vfs.S_IFDIR)
	if err != nil {
		return err
	}
	if err := MakeEmptyDir(t, fi, dir.nid(), dir.Mode()); err != nil {
		discard(t, fi)
		return err
	}
	if err := addLink(t, dir, d, &fi.Inode); err != nil {
		discard(t, fi)
		return err
	}
	fi.SetNlink(2)
	dir.IncNlink()
	dcache.DInstantiate(t, d, &fi.Inode)
	return nil
}

// findDentry is f2fs_find_entry for a dentry's name (fscrypt_setup_filename
// with lookup set: a no-key name is decoded), checked against the inode
// the dentry holds. Errors: ENOENT, EFSCORRUPTED, fscrypt's.
func findDentry(t *kernel.Task, dir *Inode, d *vfs.Dentry) (*DentryRef, error) {
	ref, err := FindEntry(t, dir, []byte(d.Name().Name))
	if err != nil {
		return nil, err
	}
	if ref == nil || (d.Inode() != nil && uint64(ref.Entry.Ino) != d.Inode().Ino()) {
		return nil, errno.ENOENT
	}
	return ref, nil
}

// Unlink is f2fs_unlink: find the dentry, delete it (f2fs_delete_entry)
// and drop the link (f2fs_drop_nlink). In a casefolded directory the
// dentry is invalidated rather than left negative, as Linux before 6.9
// does: a negative dentry named "b" would otherwise be found, and reused
// with its name, by a later create of "B". The VFS holds the i_rwsem of
// dir and of the victim, and a reference on d. Errors: ENOENT (the name
// is gone or names another inode), EFSCORRUPTED, fscrypt's.
func (o *dirOps) Unlink(t *kernel.Task, vdir *vfs.Inode, d *vfs.Dentry) error {
	defer t.Trace("f2fs_unlink")()
	if err := o.sbi.checkWritable(); err != nil {
		return err
	}
	dir := F2FS_I(vdir)
	ref, err := findDentry(t, dir, d)
	if err != nil {
		return err
	}
	if err := DeleteEntry(t, dir, ref); err != nil {
		return err
	}
	// Negative dentries do not go with casefolding here (see Lookup):
	// f2fs_unlink invalidates the dentry of a casefolded directory.
	if vdir.IsCasefolded() {
		dcache.DInvalidate(t, d)
	}
	inode := d.Inode()
	if inode.IsDir() {
		vdir.DropNlink(t)
		inode.ClearNlink()
		return nil
	}
	inode.DropNlink(t)
	return nil
}

// Rmdir is f2fs_rmdir: f2fs_unlink of an empty directory. Locks and
// references as Unlink's. Errors: ENOTEMPTY and Unlink's.
func (o *dirOps) Rmdir(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry) error {
	defer t.Trace("f2fs_rmdir")()
	if err := o.sbi.checkWritable(); err != nil {
		return err
	}
	if !EmptyDir(t, F2FS_I(d.Inode())) {
		return errno.ENOTEMPTY
	}
	return o.Unlink(t, dir, d)
}

// Rename is f2fs_rename2: the flags (RENAME_WHITEOUT is not modelled:
// EINVAL), fscrypt_prepare_rename (ENOKEY for a no-key name, EXDEV for a
// move the new directory's policy forbids), then f2fs_cross_rename for
// RENAME_EXCHANGE or f2fs_rename. The VFS holds both directories'
// i_rwsem (lock_rename, and s_vfs_rename_mutex across directories), the
// i_rwsem of the inodes involved, and references on both dentries.
// Errors: EINVAL, ENOKEY, EXDEV, ENOTEMPTY, ENOENT, EEXIST, ENOSPC,
// EFSCORRUPTED, EIO (a directory without its block 0), ENOMEM and
// fscrypt's.
func (o *dirOps) Rename(t *kernel.Task, oldDir *vfs.Inode, oldD *vfs.Dentry, newDir *vfs.Inode, newD *vfs.Dentry, flags uint32) error {
	defer t.Trace("f2fs_rename2")()
	if err := o.sbi.checkWritable(); err != nil {
		return err
	}
	exchange, err := libfs.PrepareRename2(t, oldDir, oldD, newDir, newD, flags)
	if err != nil {
		return err
	}
	if exchange {
		return crossRename(t, F2FS_I(oldDir), oldD, F2FS_I(newDir), newD)
	}
	return rename(t, F2FS_I(oldDir), oldD, F2FS_I(newDir), newD)
}

// setDotdot points a moved directory's ".." at its new parent
// (f2fs_set_link on f2fs_parent_dir).
func setDotdot(t *kernel.Task, md, to *Inode) error {
	dotdot, err := ParentDirRef(md)
	if err != nil {
		return err
	}
	return SetLink(t, md, dotdot, to.nid(), to.Mode())
}

// rename is f2fs_rename: the new name points at the moved inode (an
// existing one through f2fs_set_link, its inode losing the link; else
// f2fs_add_link), the old dentry goes, and a moved directory's ".." is
// updated.
func rename(t *kernel.Task, oldDir *Inode, oldD *vfs.Dentry, newDir *Inode, newD *vfs.Dentry) error {
	oldInode, newInode := oldD.Inode(), newD.Inode()
	oldRef, err := findDentry(t, oldDir, oldD)
	if err != nil {
		return err
	}
	isDir := oldInode.IsDir()
	if newInode != nil {
		if isDir && !EmptyDir(t, F2FS_I(newInode)) {
			return errno.ENOTEMPTY
		}
		newRef, err := findDentry(t, newDir, newD)
		if err != nil {
			return err
		}
		if err := SetLink(t, newDir, newRef, uint32(oldInode.Ino()), oldInode.Mode()); err != nil {
			return err
		}
		if isDir {
			newInode.DropNlink(t)
		}
		newInode.DropNlink(t)
	} else {
		if err := addLink(t, newDir, newD, oldInode); err != nil {
			return err
		}
		if isDir {
			newDir.IncNlink()
		}
		if oldDir == newDir {
			// Adding may have converted an inline directory: find the
			// old entry again, as f2fs_rename does.
			if oldRef, err = findDentry(t, oldDir, oldD); err != nil {
				return err
			}
		}
	}
	if err := DeleteEntry(t, oldDir, oldRef); err != nil {
		return err
	}
	if isDir {
		if oldDir != newDir {
			if err := setDotdot(t, F2FS_I(oldInode), newDir); err != nil {
				return err
			}
		}
		oldDir.DropNlink(t)
	}
	return nil
}

// crossRename is f2fs_cross_rename (RENAME_EXCHANGE): each dentry points at
// the other inode, moved directories get their ".." updated, and the
// parents' link counts follow a directory that changes parent.
func crossRename(t *kernel.Task, oldDir *Inode, oldD *vfs.Dentry, newDir *Inode, newD *vfs.Dentry) error {
	oldInode, newInode := oldD.Inode(), newD.Inode()
	oldRef, err := findDentry(t, oldDir, oldD)
	if err != nil {
		return err
	}
	newRef, err := findDentry(t, newDir, newD)
	if err != nil {
		return err
	}
	if oldDir != newDir {
		for _, mv := range []struct{ inode, to *Inode }{{F2FS_I(oldInode), newDir}, {F2FS_I(newInode), oldDir}} {
			if !mv.inode.IsDir() {
				continue
			}
			if err := setDotdot(t, mv.inode, mv.to); err != nil {
				return err
			}
		}
		if oldInode.IsDir() != newInode.IsDir() {
			if oldInode.IsDir() {
				oldDir.DropNlink(t)
				newDir.IncNlink()
			} else {
				newDir.DropNlink(t)
				oldDir.IncNlink()
			}
		}
	}
	if err := SetLink(t, oldDir, oldRef, uint32(newInode.Ino()), newInode.Mode()); err != nil {
		return err
	}
	return SetLink(t, newDir, newRef, uint32(oldInode.Ino()), oldInode.Mode())
}

// Link is f2fs_link: fscrypt_prepare_link (ENOKEY for a no-key dentry,
// EXDEV when the directory's policy does not permit the inode), then
// another dentry for the inode. The VFS holds dir's and the inode's
// i_rwsem and references on both dentries; newD takes a new inode
// reference. Errors: ENOKEY, EXDEV and Create's.
func (o *dirOps) Link(t *kernel.Task, oldD *vfs.Dentry, dir *vfs.Inode, newD *vfs.Dentry) error {
	defer t.Trace("f2fs_link")()
	if err := o.sbi.checkWritable(); err != nil {
		return err
	}
	if err := hooks.FscryptPrepareLink(t, oldD, dir, newD); err != nil {
		return err
	}
	inode := oldD.Inode()
	vfs.Ihold(inode)
	if err := addLink(t, F2FS_I(dir), newD, inode); err != nil {
		vfs.Iput(t, inode)
		return err
	}
	inode.IncNlink()
	dcache.DInstantiate(t, newD, inode)
	return nil
}

// Symlink is f2fs_symlink: fscrypt_prepare_symlink (the target fits a
// block), the new inode, its dentry, then the target, encrypted
// (fscrypt_encrypt_symlink) in an encrypted directory. Locks and
// references as Create's. Errors: ENAMETOOLONG (the target does not fit),
// ENOKEY and Create's.
func (o *dirOps) Symlink(t *kernel.Task, vdir *vfs.Inode, d *vfs.Dentry, target string) error {
	defer t.Trace("f2fs_symlink")()
	if err := o.sbi.checkWritable(); err != nil {
		return err
	}
	dir := F2FS_I(vdir)
	diskLen, _, err := hooks.FscryptPrepareSymlink(t, vdir, target, BlockSize)
	if err != nil {
		return err
	}
	fi, err := o.sbi.newInode(t, dir, vfs.S_IFLNK|0o777)
	if err != nil {
		return err
	}
	if err := addLink(t, dir, d, &fi.Inode); err != nil {
		discard(t, fi)
		return err
	}
	if fi.IsEncrypted() {
		sd, err := hooks.FscryptEncryptSymlink(t, &fi.Inode, target, diskLen)
		if err != nil {
			// f2fs_unlink of the half-made symlink.
			if ref, ferr := FindEntry(t, dir, []byte(d.Name().Name)); ferr == nil && ref != nil {
				DeleteEntry(t, dir, ref)
			}
			discard(t, fi)
			return err
		}
		fi.target = sd
		fi.SetSize(int64(diskLen - 1))
	} else {
		fi.target = append([]byte(target), 0)
		fi.SetSize(int64(len(target)))
		fi.SetLink(target)
	}
	dcache.DInstantiate(t, d, &fi.Inode)
	return nil
}

// Setattr is f2fs_setattr for a directory: nothing to truncate.
func (o *dirOps) Setattr(t *kernel.Task, d *vfs.Dentry, attr *vfs.Iattr) error {
	return nil
}

// RawTarget returns a symlink's on-disk target: the bytes and a NUL, or
// struct fscrypt_symlink_data for an encrypted one.
func RawTarget(inode *vfs.Inode) []byte {
	fi := F2FS_I(inode)
	fi.mu.Lock()
	defer fi.mu.Unlock()
	return append([]byte(nil), fi.target...)
}
