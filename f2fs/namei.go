package f2fs

import (
	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// dirOps are a directory's inode operations (f2fs_dir_inode_operations,
// fs/f2fs/namei.c).
type dirOps struct {
	vfs.NoInodeOps
	fs *FS
}

// prepareLookup is f2fs_prepare_lookup: fscrypt_prepare_lookup (which
// marks a no-key dentry), then the casefolded name and the hash. ENOENT
// means that the name cannot exist (a malformed no-key name).
func prepareLookup(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry) (*Filename, error) {
	name := []byte(d.Name().Name)
	fname := new(fscrypt.Name)
	if err := hooks.FscryptPrepareLookup(t, dir, d, fname); err != nil {
		fscrypt.FreeFilename(t, fname)
		return nil, err
	}
	ddir := infoOf(dir).dir
	if !dir.IsEncrypted() {
		return PrepareLookupFilename(t, ddir, name, nil)
	}
	cn := FscryptCryptName(fname)
	return PrepareLookupFilename(t, ddir, name, &cn)
}

// Lookup is f2fs_lookup: find the name (__f2fs_find_entry, with the linear
// fallback lookup_mode allows), read its inode, and splice it into the
// dentry. An encrypted directory refuses a directory or symlink whose
// policy it does not permit (EPERM, with a warning). As in Linux before
// 6.9, a miss in a casefolded directory leaves the dentry unhashed rather
// than caching a negative dentry that a differently-cased create would
// reuse (the model has no generic_ci_d_revalidate). Errors: ENAMETOOLONG,
// EFSCORRUPTED (a corrupt dentry block), EPERM, ENOMEM, fscrypt's.
func (o *dirOps) Lookup(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, flags uint32) (*vfs.Dentry, error) {
	defer t.Trace("f2fs_lookup")()
	if len(d.Name().Name) > NameLen {
		return nil, errno.ENAMETOOLONG
	}
	var inode *vfs.Inode
	f, err := prepareLookup(t, dir, d)
	switch {
	case err == errno.ENOENT:
	case err != nil:
		return nil, err
	default:
		ddir := infoOf(dir).dir
		ref, err := FindEntryFname(t, ddir, f)
		FreeFilename(t, ddir, f)
		if err != nil {
			return nil, err
		}
		if ref != nil {
			if inode, err = o.fs.iget(t, ref.Entry.Ino); err != nil {
				return nil, err
			}
			if dir.IsEncrypted() && (inode.IsDir() || inode.IsLnk()) && !fscrypt.HasPermittedContext(t, dir, inode) {
				o.fs.sb.warn(t, "Inconsistent encryption contexts: %d/%d", dir.Ino(), inode.Ino())
				vfs.Iput(t, inode)
				return nil, errno.EPERM
			}
		}
	}
	if inode == nil && dir.IsCasefolded() {
		return nil, nil
	}
	return vfs.DSpliceAlias(t, inode, d)
}

// addLink is f2fs_add_link: the dentry's name in dir for inode
// (f2fs_do_add_link, which skips the existence check when this task's own
// lookup just missed the name). The directory's i_size follows.
func (o *dirOps) addLink(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, inode *vfs.Inode) error {
	ddir := infoOf(dir).dir
	err := AddLink(t, ddir, []byte(d.Name().Name), uint32(inode.Ino()), inode.Mode())
	o.fs.syncDirSize(dir)
	return err
}

// Create is f2fs_create: a new regular file (f2fs_new_inode, with
// fscrypt_prepare_new_inode and fscrypt_set_context), its dentry
// (f2fs_add_link), then d_instantiate_new.
func (o *dirOps) Create(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, mode uint32, excl bool) error {
	defer t.Trace("f2fs_create")()
	inode, err := o.fs.newInode(t, dir, mode&^vfs.S_IFMT|vfs.S_IFREG)
	if err != nil {
		return err
	}
	if err := o.addLink(t, dir, d, inode); err != nil {
		discard(t, inode)
		return err
	}
	dcache.DInstantiate(t, d, inode)
	return nil
}

// Mkdir is f2fs_mkdir: a new directory with "." and ".." (inline when the
// inline_dentry option is on) and its dentry; both link counts grow
// (FI_INC_LINK).
func (o *dirOps) Mkdir(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, mode uint32) error {
	defer t.Trace("f2fs_mkdir")()
	inode, err := o.fs.newInode(t, dir, mode&^vfs.S_IFMT|vfs.S_IFDIR)
	if err != nil {
		return err
	}
	if err := MakeEmptyDir(t, infoOf(inode).dir, uint32(dir.Ino()), dir.Mode()); err != nil {
		discard(t, inode)
		return err
	}
	o.fs.syncDirSize(inode)
	if err := o.addLink(t, dir, d, inode); err != nil {
		discard(t, inode)
		return err
	}
	inode.SetNlink(2)
	dir.IncNlink()
	dcache.DInstantiate(t, d, inode)
	return nil
}

// findDentry is f2fs_find_entry for a dentry's name (fscrypt_setup_filename
// with lookup set: a no-key name is decoded), checked against the inode
// the dentry holds. Errors: ENOENT, EFSCORRUPTED, fscrypt's.
func (o *dirOps) findDentry(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry) (*DentryRef, error) {
	ref, err := FindEntry(t, infoOf(dir).dir, []byte(d.Name().Name))
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
// with its name, by a later create of "B".
func (o *dirOps) Unlink(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry) error {
	defer t.Trace("f2fs_unlink")()
	ref, err := o.findDentry(t, dir, d)
	if err != nil {
		return err
	}
	if err := DeleteEntry(t, infoOf(dir).dir, ref); err != nil {
		return err
	}
	o.fs.syncDirSize(dir)
	// Negative dentries do not go with casefolding here (see Lookup):
	// f2fs_unlink invalidates the dentry of a casefolded directory.
	if dir.IsCasefolded() {
		dcache.DInvalidate(t, d)
	}
	inode := d.Inode()
	if inode.IsDir() {
		dir.DropNlink(t)
		inode.ClearNlink()
		return nil
	}
	inode.DropNlink(t)
	return nil
}

// Rmdir is f2fs_rmdir: f2fs_unlink of an empty directory, else ENOTEMPTY.
func (o *dirOps) Rmdir(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry) error {
	defer t.Trace("f2fs_rmdir")()
	if !EmptyDir(t, infoOf(d.Inode()).dir) {
		return errno.ENOTEMPTY
	}
	return o.Unlink(t, dir, d)
}

// Rename is f2fs_rename2: the flags (RENAME_WHITEOUT is not modelled:
// EINVAL), fscrypt_prepare_rename (ENOKEY for a no-key name, EXDEV for a
// move the new directory's policy forbids), then f2fs_cross_rename for
// RENAME_EXCHANGE or f2fs_rename.
func (o *dirOps) Rename(t *kernel.Task, oldDir *vfs.Inode, oldD *vfs.Dentry, newDir *vfs.Inode, newD *vfs.Dentry, flags uint32) error {
	defer t.Trace("f2fs_rename2")()
	if flags&^(vfs.RENAME_NOREPLACE|vfs.RENAME_EXCHANGE) != 0 {
		return errno.EINVAL
	}
	if err := hooks.FscryptPrepareRename(t, oldDir, oldD, newDir, newD, flags); err != nil {
		return err
	}
	if flags&vfs.RENAME_EXCHANGE != 0 {
		return o.crossRename(t, oldDir, oldD, newDir, newD)
	}
	return o.rename(t, oldDir, oldD, newDir, newD)
}

// rename is f2fs_rename: the new name points at the moved inode (an
// existing one through f2fs_set_link, its inode losing the link; else
// f2fs_add_link), the old dentry goes, and a moved directory's ".." is
// updated.
func (o *dirOps) rename(t *kernel.Task, oldDir *vfs.Inode, oldD *vfs.Dentry, newDir *vfs.Inode, newD *vfs.Dentry) error {
	oldInode, newInode := oldD.Inode(), newD.Inode()
	od, nd := infoOf(oldDir).dir, infoOf(newDir).dir
	oldRef, err := o.findDentry(t, oldDir, oldD)
	if err != nil {
		return err
	}
	isDir := oldInode.IsDir()
	if newInode != nil {
		if isDir && !EmptyDir(t, infoOf(newInode).dir) {
			return errno.ENOTEMPTY
		}
		newRef, err := o.findDentry(t, newDir, newD)
		if err != nil {
			return err
		}
		if err := SetLink(t, nd, newRef, uint32(oldInode.Ino()), oldInode.Mode()); err != nil {
			return err
		}
		if isDir {
			newInode.DropNlink(t)
		}
		newInode.DropNlink(t)
	} else {
		if err := o.addLink(t, newDir, newD, oldInode); err != nil {
			return err
		}
		if isDir {
			newDir.IncNlink()
		}
		if oldDir == newDir {
			// Adding may have converted an inline directory: find the
			// old entry again, as f2fs_rename does.
			if oldRef, err = o.findDentry(t, oldDir, oldD); err != nil {
				return err
			}
		}
	}
	if err := DeleteEntry(t, od, oldRef); err != nil {
		return err
	}
	o.fs.syncDirSize(oldDir)
	o.fs.syncDirSize(newDir)
	if isDir {
		if oldDir != newDir {
			md := infoOf(oldInode).dir
			dotdot, err := ParentDirRef(md)
			if err != nil {
				return err
			}
			if err := SetLink(t, md, dotdot, uint32(newDir.Ino()), newDir.Mode()); err != nil {
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
func (o *dirOps) crossRename(t *kernel.Task, oldDir *vfs.Inode, oldD *vfs.Dentry, newDir *vfs.Inode, newD *vfs.Dentry) error {
	oldInode, newInode := oldD.Inode(), newD.Inode()
	oldRef, err := o.findDentry(t, oldDir, oldD)
	if err != nil {
		return err
	}
	newRef, err := o.findDentry(t, newDir, newD)
	if err != nil {
		return err
	}
	if oldDir != newDir {
		for _, mv := range []struct{ inode, to *vfs.Inode }{{oldInode, newDir}, {newInode, oldDir}} {
			if !mv.inode.IsDir() {
				continue
			}
			md := infoOf(mv.inode).dir
			dotdot, err := ParentDirRef(md)
			if err != nil {
				return err
			}
			if err := SetLink(t, md, dotdot, uint32(mv.to.Ino()), mv.to.Mode()); err != nil {
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
	if err := SetLink(t, infoOf(oldDir).dir, oldRef, uint32(newInode.Ino()), newInode.Mode()); err != nil {
		return err
	}
	return SetLink(t, infoOf(newDir).dir, newRef, uint32(oldInode.Ino()), oldInode.Mode())
}

// Link is f2fs_link: fscrypt_prepare_link (ENOKEY for a no-key dentry,
// EXDEV when the directory's policy does not permit the inode), then
// another dentry for the inode.
func (o *dirOps) Link(t *kernel.Task, oldD *vfs.Dentry, dir *vfs.Inode, newD *vfs.Dentry) error {
	defer t.Trace("f2fs_link")()
	if err := hooks.FscryptPrepareLink(t, oldD, dir, newD); err != nil {
		return err
	}
	inode := oldD.Inode()
	vfs.Ihold(inode)
	if err := o.addLink(t, dir, newD, inode); err != nil {
		vfs.Iput(t, inode)
		return err
	}
	inode.IncNlink()
	dcache.DInstantiate(t, newD, inode)
	return nil
}

// Symlink is f2fs_symlink: fscrypt_prepare_symlink (the target fits a
// block), the new inode, its dentry, then the target, encrypted
// (fscrypt_encrypt_symlink) in an encrypted directory.
func (o *dirOps) Symlink(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, target string) error {
	defer t.Trace("f2fs_symlink")()
	diskLen, _, err := hooks.FscryptPrepareSymlink(t, dir, target, BlockSize)
	if err != nil {
		return err
	}
	inode, err := o.fs.newInode(t, dir, vfs.S_IFLNK|0o777)
	if err != nil {
		return err
	}
	if err := o.addLink(t, dir, d, inode); err != nil {
		discard(t, inode)
		return err
	}
	in := infoOf(inode)
	if inode.IsEncrypted() {
		sd, err := hooks.FscryptEncryptSymlink(t, inode, target, diskLen)
		if err != nil {
			// f2fs_unlink of the half-made symlink.
			if ref, ferr := FindEntry(t, infoOf(dir).dir, []byte(d.Name().Name)); ferr == nil && ref != nil {
				DeleteEntry(t, infoOf(dir).dir, ref)
				o.fs.syncDirSize(dir)
			}
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
	dcache.DInstantiate(t, d, inode)
	return nil
}

// Setattr is f2fs_setattr for a directory: nothing to truncate.
func (o *dirOps) Setattr(t *kernel.Task, d *vfs.Dentry, attr *vfs.Iattr) error {
	return nil
}

// symlinkOps are a symlink's inode operations (f2fs_symlink_inode_operations
// and f2fs_encrypted_symlink_inode_operations).
type symlinkOps struct {
	vfs.NoInodeOps
	fs *FS
}

// GetLink is f2fs_get_link / f2fs_encrypted_get_link: the stored target,
// or for an encrypted symlink fscrypt_get_symlink (not in RCU-walk:
// ECHILD).
func (o *symlinkOps) GetLink(t *kernel.Task, d *vfs.Dentry, inode *vfs.Inode) (string, error) {
	in := infoOf(inode)
	if inode.IsEncrypted() {
		if d == nil {
			return "", vfs.ECHILD
		}
		return hooks.FscryptGetSymlink(t, inode, in.target)
	}
	return string(in.target[:len(in.target)-1]), nil
}

// Getattr is f2fs_encrypted_symlink_getattr for an encrypted symlink
// (fscrypt_symlink_getattr: the size of the target userspace sees).
func (o *symlinkOps) Getattr(t *kernel.Task, path vfs.Path, st *vfs.Stat) error {
	inode := path.Dentry.Inode()
	vfs.GenericFillattr(inode, st)
	if inode.IsEncrypted() {
		return hooks.FscryptSymlinkGetattr(t, path, st)
	}
	return nil
}

// Setattr of a symlink: nothing to truncate.
func (o *symlinkOps) Setattr(t *kernel.Task, d *vfs.Dentry, attr *vfs.Iattr) error {
	return nil
}

// RawTarget returns a symlink's on-disk target: the bytes and a NUL, or
// struct fscrypt_symlink_data for an encrypted one.
func RawTarget(inode *vfs.Inode) []byte {
	in := infoOf(inode)
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]byte(nil), in.target...)
}
