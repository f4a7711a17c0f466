package ext4

import (
	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// LinkMax is EXT4_LINK_MAX: the most links a non-directory may have.
const LinkMax = 65000

// dirOps are a directory's inode operations (ext4_dir_inode_operations,
// fs/ext4/namei.c).
type dirOps struct {
	vfs.NoInodeOps
	fs *FS
}

// prepareLookup is ext4_fname_prepare_lookup: fscrypt_prepare_lookup
// (which marks a no-key dentry), then the casefolded name (and its SipHash
// in an encrypted, casefolded directory). ENOENT means that the name cannot
// exist (a malformed no-key name).
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

// Lookup is ext4_lookup: ext4_lookup_entry (the htree, or the linear
// search, with the fallback a casefolded miss takes), the inode number's
// checks, ext4_iget, and d_splice_alias. An encrypted directory refuses a
// directory or symlink whose policy it does not permit (EPERM, with a
// warning). As in Linux before 6.9, a miss in a casefolded directory
// leaves the dentry unhashed rather than caching a negative dentry (the
// model has no generic_ci_d_revalidate). Errors: ENAMETOOLONG,
// EFSCORRUPTED (a corrupt block, a bad inode number), EFSBADCRC, EPERM,
// ENOMEM, fscrypt's.
func (o *dirOps) Lookup(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, flags uint32) (*vfs.Dentry, error) {
	defer t.Trace("ext4_lookup")()
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
			ino := ref.Entry.Inode
			if uint64(ino) == dir.Ino() {
				ddir.errorInode(t, "ext4_lookup", 0, "'%s' linked to parent dir", d.Name().Name)
				return nil, errno.EFSCORRUPTED
			}
			if inode, err = o.fs.iget(t, ddir, ino); err != nil {
				return nil, err
			}
			if dir.IsEncrypted() && (inode.IsDir() || inode.IsLnk()) && !fscrypt.HasPermittedContext(t, dir, inode) {
				t.Printk("EXT4-fs warning (device %s): ext4_lookup: Inconsistent encryption contexts: %d/%d", o.fs.sb.Name, dir.Ino(), inode.Ino())
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

// addEntry is ext4_add_entry for the dentry's name (ext4_fname_setup_filename
// without lookup: ENOKEY without the key). The directory's i_size follows.
func (o *dirOps) addEntry(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, inode *vfs.Inode) error {
	err := AddEntry(t, infoOf(dir).dir, []byte(d.Name().Name), uint32(inode.Ino()), inode.Mode())
	o.fs.syncDirSize(dir)
	return err
}

// Create is ext4_create: a new regular file (__ext4_new_inode, with
// fscrypt_prepare_new_inode and fscrypt_set_context), then
// ext4_add_nondir.
func (o *dirOps) Create(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, mode uint32, excl bool) error {
	defer t.Trace("ext4_create")()
	inode, err := o.fs.newInode(t, dir, mode&^vfs.S_IFMT|vfs.S_IFREG)
	if err != nil {
		return err
	}
	if err := o.addEntry(t, dir, d, inode); err != nil {
		discard(t, inode)
		return err
	}
	dcache.DInstantiate(t, d, inode)
	return nil
}

// Mkdir is ext4_mkdir: a new directory (ext4_init_new_dir: "." and ".."
// in block 0), its entry, and the link counts (2, and one more for the
// parent).
func (o *dirOps) Mkdir(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, mode uint32) error {
	defer t.Trace("ext4_mkdir")()
	inode, err := o.fs.newInode(t, dir, mode&^vfs.S_IFMT|vfs.S_IFDIR)
	if err != nil {
		return err
	}
	if err := InitNewDir(t, infoOf(inode).dir, uint32(dir.Ino())); err != nil {
		discard(t, inode)
		return err
	}
	o.fs.syncDirSize(inode)
	if err := o.addEntry(t, dir, d, inode); err != nil {
		discard(t, inode)
		return err
	}
	inode.SetNlink(2)
	dir.IncNlink()
	dcache.DInstantiate(t, d, inode)
	return nil
}

// findDentry is ext4_find_entry for a dentry's name (a no-key name is
// decoded), checked against the inode the dentry holds (ENOENT
// otherwise, as __ext4_unlink and ext4_rename do).
func (o *dirOps) findDentry(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry) (*DentryRef, error) {
	ref, err := FindEntry(t, infoOf(dir).dir, []byte(d.Name().Name))
	if err != nil {
		return nil, err
	}
	if ref == nil || (d.Inode() != nil && uint64(ref.Entry.Inode) != d.Inode().Ino()) {
		return nil, errno.ENOENT
	}
	return ref, nil
}

// Unlink is ext4_unlink (__ext4_unlink): find the entry, delete it
// (ext4_delete_entry), drop the link. In a casefolded directory the dentry
// is invalidated rather than left negative, as Linux before 6.9 does (see
// Lookup): a negative "b" would otherwise be reused, name and all, by a
// create of "B".
func (o *dirOps) Unlink(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry) error {
	defer t.Trace("ext4_unlink")()
	ref, err := o.findDentry(t, dir, d)
	if err != nil {
		return err
	}
	if err := DeleteEntry(t, infoOf(dir).dir, ref); err != nil {
		return err
	}
	if dir.IsCasefolded() {
		dcache.DInvalidate(t, d)
	}
	d.Inode().DropNlink(t)
	return nil
}

// Rmdir is ext4_rmdir: find the entry (EFSCORRUPTED if it names another
// inode), ENOTEMPTY unless the directory is empty, delete the entry, clear
// the directory's links and drop the parent's.
func (o *dirOps) Rmdir(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry) error {
	defer t.Trace("ext4_rmdir")()
	ddir := infoOf(dir).dir
	ref, err := FindEntry(t, ddir, []byte(d.Name().Name))
	if err != nil {
		return err
	}
	if ref == nil {
		return errno.ENOENT
	}
	inode := d.Inode()
	if uint64(ref.Entry.Inode) != inode.Ino() {
		return errno.EFSCORRUPTED
	}
	if !EmptyDir(t, infoOf(inode).dir) {
		return errno.ENOTEMPTY
	}
	if err := DeleteEntry(t, ddir, ref); err != nil {
		return err
	}
	if dir.IsCasefolded() {
		dcache.DInvalidate(t, d)
	}
	inode.ClearNlink()
	dir.DropNlink(t)
	return nil
}

// Rename is ext4_rename2: the flags (RENAME_WHITEOUT is not modelled:
// EINVAL), fscrypt_prepare_rename (ENOKEY for a no-key name, EXDEV for a
// move the new directory's policy forbids), then ext4_cross_rename for
// RENAME_EXCHANGE or ext4_rename.
func (o *dirOps) Rename(t *kernel.Task, oldDir *vfs.Inode, oldD *vfs.Dentry, newDir *vfs.Inode, newD *vfs.Dentry, flags uint32) error {
	defer t.Trace("ext4_rename2")()
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

// rename is ext4_rename: the old entry (ENOENT if it names another inode),
// the new one if the target exists, ENOTEMPTY for a non-empty target
// directory, then the new name (ext4_add_entry, or ext4_setent over the
// target), the old entry's removal (ext4_rename_delete, which finds it
// again when the directory changed under it), the target's link, and for a
// directory ".." (ext4_rename_dir_finish) and the parents' links.
func (o *dirOps) rename(t *kernel.Task, oldDir *vfs.Inode, oldD *vfs.Dentry, newDir *vfs.Inode, newD *vfs.Dentry) error {
	oldInode, newInode := oldD.Inode(), newD.Inode()
	od, nd := infoOf(oldDir).dir, infoOf(newDir).dir
	oldRef, err := o.findDentry(t, oldDir, oldD)
	if err != nil {
		return err
	}
	var newRef *DentryRef
	if newInode != nil {
		if newRef, err = o.findDentry(t, newDir, newD); err != nil {
			return err
		}
	}
	isDir := oldInode.IsDir()
	if isDir && newInode != nil && !EmptyDir(t, infoOf(newInode).dir) {
		return errno.ENOTEMPTY
	}
	if newRef == nil {
		if err := o.addEntry(t, newDir, newD, oldInode); err != nil {
			return err
		}
	} else if err := SetLink(t, nd, newRef, uint32(oldInode.Ino()), oldInode.Mode()); err != nil {
		return err
	}
	if oldDir == newDir && newRef == nil {
		// ext4_rename_delete: the add may have split the block holding
		// the old entry; find it again (ext4_find_delete_entry).
		if oldRef, err = o.findDentry(t, oldDir, oldD); err != nil {
			return err
		}
	}
	if err := DeleteEntry(t, od, oldRef); err != nil {
		return err
	}
	o.fs.syncDirSize(oldDir)
	o.fs.syncDirSize(newDir)
	if newInode != nil {
		newInode.DropNlink(t)
	}
	if isDir {
		if oldDir != newDir {
			if err := SetDotdot(t, infoOf(oldInode).dir, uint32(newDir.Ino())); err != nil {
				return err
			}
		}
		oldDir.DropNlink(t)
		if newInode != nil {
			newInode.ClearNlink()
		} else {
			newDir.IncNlink()
		}
	}
	return nil
}

// crossRename is ext4_cross_rename (RENAME_EXCHANGE): each entry names the
// other inode (ext4_setent), moved directories get their ".." updated, and
// the parents' link counts follow a directory that changes parent.
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
	if err := SetLink(t, infoOf(newDir).dir, newRef, uint32(oldInode.Ino()), oldInode.Mode()); err != nil {
		return err
	}
	if err := SetLink(t, infoOf(oldDir).dir, oldRef, uint32(newInode.Ino()), newInode.Mode()); err != nil {
		return err
	}
	if oldDir != newDir {
		if oldInode.IsDir() {
			if err := SetDotdot(t, infoOf(oldInode).dir, uint32(newDir.Ino())); err != nil {
				return err
			}
		}
		if newInode.IsDir() {
			if err := SetDotdot(t, infoOf(newInode).dir, uint32(oldDir.Ino())); err != nil {
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
	return nil
}

// Link is ext4_link: EMLINK at EXT4_LINK_MAX, fscrypt_prepare_link (ENOKEY
// for a no-key dentry, EXDEV when the directory's policy does not permit
// the inode), then __ext4_link's new entry.
func (o *dirOps) Link(t *kernel.Task, oldD *vfs.Dentry, dir *vfs.Inode, newD *vfs.Dentry) error {
	defer t.Trace("ext4_link")()
	inode := oldD.Inode()
	if inode.Nlink() >= LinkMax {
		return errno.EMLINK
	}
	if err := hooks.FscryptPrepareLink(t, oldD, dir, newD); err != nil {
		return err
	}
	vfs.Ihold(inode)
	if err := o.addEntry(t, dir, newD, inode); err != nil {
		vfs.Iput(t, inode)
		return err
	}
	inode.IncNlink()
	dcache.DInstantiate(t, newD, inode)
	return nil
}

// Symlink is ext4_symlink: fscrypt_prepare_symlink (the target fits a
// block), the new inode, its target (fscrypt_encrypt_symlink in an
// encrypted directory), then ext4_add_nondir.
func (o *dirOps) Symlink(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, target string) error {
	defer t.Trace("ext4_symlink")()
	diskLen, _, err := hooks.FscryptPrepareSymlink(t, dir, target, BlockSize)
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
	if err := o.addEntry(t, dir, d, inode); err != nil {
		discard(t, inode)
		return err
	}
	dcache.DInstantiate(t, d, inode)
	return nil
}

// Setattr of a directory: nothing to truncate.
func (o *dirOps) Setattr(t *kernel.Task, d *vfs.Dentry, attr *vfs.Iattr) error { return nil }

// symlinkOps are a symlink's inode operations (ext4_symlink_inode_operations,
// ext4_fast_symlink_inode_operations and
// ext4_encrypted_symlink_inode_operations).
type symlinkOps struct {
	vfs.NoInodeOps
	fs *FS
}

// GetLink is ext4_get_link / ext4_encrypted_get_link: the stored target, or
// for an encrypted symlink fscrypt_get_symlink (not in RCU-walk: ECHILD).
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

// Getattr is ext4_encrypted_symlink_getattr for an encrypted symlink
// (fscrypt_symlink_getattr).
func (o *symlinkOps) Getattr(t *kernel.Task, path vfs.Path, st *vfs.Stat) error {
	inode := path.Dentry.Inode()
	vfs.GenericFillattr(inode, st)
	if inode.IsEncrypted() {
		return hooks.FscryptSymlinkGetattr(t, path, st)
	}
	return nil
}

// Setattr of a symlink: nothing to truncate.
func (o *symlinkOps) Setattr(t *kernel.Task, d *vfs.Dentry, attr *vfs.Iattr) error { return nil }

// RawTarget returns a symlink's on-disk target: the bytes and a NUL, or
// struct fscrypt_symlink_data for an encrypted one.
func RawTarget(inode *vfs.Inode) []byte {
	in := infoOf(inode)
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]byte(nil), in.target...)
}
