// Package hooks models fs/crypto/hooks.c: the fscrypt functions that
// filesystems call from their inode and file operations (ext4_file_open ->
// fscrypt_file_open, ext4_lookup -> fscrypt_prepare_lookup, ext4_link ->
// fscrypt_prepare_link, ext4_rename2 -> fscrypt_prepare_rename, ...), and
// the dentry operation fscrypt_d_revalidate that retires no-key dentries
// once the key is added (fs/crypto/fname.c).
//
// It sits above package vfs and uses *vfs.Inode, *vfs.Dentry and
// *vfs.File directly: fscrypt_file_open runs on every open of every
// regular file, and its fast path must cost what the kernel's does (an RCU
// section and two loads). Below it, package fscrypt does the policy and
// key work.
//
// # Seed 004
//
// fscrypt_file_open is the patched function of seed 004 (FileOpenPatch,
// fscrypt-file-open): base takes a reference on the parent dentry for every
// open (dget_parent + dput, two atomic operations on the shared parent's
// lockref), v1 and v2 first look at the parent under RCU and return at once
// when it is not encrypted. The variant comes from the simulated kernel's
// patch.Set (t.K.Patches()). Every variant returns the same answer for the
// parent the file had at some instant of the call;
// TestFileOpenVariantsUnderRename checks it against concurrent renames.
//
// Go names are the kernel's in CamelCase, with the Fscrypt prefix kept.
package hooks

import (
	"sync"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// Events counted by the hooks.
var (
	// EvFileOpenFast counts fscrypt_file_open calls that returned from the
	// RCU fast path (v1, v2) without touching the parent's lockref.
	EvFileOpenFast = events.Register("fscrypt_file_open_fast", "fscrypt_file_open calls answered by the RCU fast path (unencrypted parent)")
	// EvFileOpenDgetParent counts fscrypt_file_open calls that took a
	// reference on the parent dentry.
	EvFileOpenDgetParent = events.Register("fscrypt_file_open_dget_parent", "fscrypt_file_open calls that took the parent dentry's reference (dget_parent + dput)")
	// EvFileOpenEPERM counts opens refused for an inconsistent context.
	EvFileOpenEPERM = events.Register("fscrypt_file_open_eperm", "opens refused with EPERM: the parent directory's policy does not permit the file")
	// EvNokeyInvalidate counts no-key dentries found invalid by
	// fscrypt_d_revalidate because the directory's key is now present.
	EvNokeyInvalidate = events.Register("fscrypt_nokey_dentry_invalidate", "no-key dentries invalidated by fscrypt_d_revalidate once the key was added")
)

// FscryptFileOpen is fscrypt_file_open: the filesystem's ->open calls it for
// every regular file. An encrypted file needs its key (ENOKEY); a file
// whose parent directory is encrypted with a policy that does not permit
// it (an inconsistency only an offline tool or corruption can create) is
// refused with EPERM and a warning naming the parent's inode number.
//
// How the parent is reached depends on the fscrypt-file-open variant of
// the kernel's patch set (seed 004): base always takes a reference
// (dget_parent + dput); v1 and v2 first read the parent under RCU and
// return 0 when it exists and is not encrypted, taking the reference only
// for an encrypted (or negative) parent; v1 then keeps the IS_ENCRYPTED
// test that v2, as merged, drops.
//
// Traced, the variants differ where the kernel's do: base shows
// dget_parent and dput (the parent's two lockref atomics), v1 and v2 the
// RCU section (rcu_read_lock, inline, standing for the RCU read of
// d_parent and d_inode_rcu) and a note on whether the fast path answered.
func FscryptFileOpen(t *kernel.Task, inode *vfs.Inode, filp *vfs.File) (err error) {
	defer t.Trace("fscrypt_file_open")()
	defer func() { t.TraceReturn(err) }()
	if err := fscrypt.RequireKey(t, inode); err != nil {
		return err
	}
	dentry := filp.Dentry()
	variant := fileOpen.Of(t.K.Patches())
	switch variant {
	case FileOpenBase:
	case FileOpenV1, FileOpenV2:
		// A reference on the parent dentry is only needed to compare
		// policies, and taking one makes every open of every file in a
		// directory write the directory dentry's cache line, which is
		// what stops opens from scaling across CPUs. Most parents are
		// not encrypted, and then any child is fine (unencrypted, or
		// encrypted with any policy): answer that case from an RCU
		// read of d_parent and its inode, and go on to the referenced
		// comparison only for an encrypted parent.
		endRCU := t.TraceInline("rcu_read_lock")
		t.RCU.ReadLock()
		parent := dentry.ParentRCU(t)
		pinode := parent.InodeRCU(t)
		if pinode != nil && !pinode.IsEncrypted() {
			t.RCU.ReadUnlock()
			endRCU()
			if t.Tracing() {
				t.TraceNote("RCU fast path: parent %q not encrypted, no reference taken", parent.Name().Name)
			}
			t.Inc(EvFileOpenFast)
			return nil
		}
		t.RCU.ReadUnlock()
		endRCU()
		if t.Tracing() {
			t.TraceNote("RCU fast path missed: parent encrypted or negative")
		}
	}
	t.Inc(EvFileOpenDgetParent)
	endDget := t.Trace("dget_parent")
	dir := dcache.DgetParent(t, dentry)
	endDget()
	dinode := dir.Inode()
	var refuse bool
	switch variant {
	case FileOpenBase, FileOpenV1:
		refuse = dinode.IsEncrypted() && !fscrypt.HasPermittedContext(t, dinode, inode)
	case FileOpenV2:
		refuse = !fscrypt.HasPermittedContext(t, dinode, inode)
	}
	if refuse {
		t.Printk("fscrypt (%s, inode %d): Inconsistent encryption context (parent directory: %d)",
			inode.SB().ID(), inode.Ino(), dinode.Ino())
		t.Inc(EvFileOpenEPERM)
		err = errno.EPERM
	}
	endDput := t.Trace("dput")
	dcache.Dput(t, dir)
	endDput()
	return err
}

// FscryptPrepareLookup is fscrypt_prepare_lookup: prepare dentry's name
// for a search of dir. In an encrypted directory without its key the name
// is a no-key name: it is decoded, and the dentry marked
// DCACHE_NOKEY_NAME so that fscrypt_d_revalidate retires it once the key
// arrives. ENOENT (a name that cannot be a no-key name) means "not found":
// the filesystem makes the dentry negative. Call fscrypt.FreeFilename
// afterwards. Errors: ENOENT, ENOMEM, key setup errors.
//
// As in Linux 6.8 and later (fscrypt_prepare_dentry), a dentry that is not
// a no-key name loses DCACHE_OP_REVALIDATE, so that path walks do not call
// fscrypt_d_revalidate on it again.
func FscryptPrepareLookup(t *kernel.Task, dir *vfs.Inode, dentry *vfs.Dentry, fname *fscrypt.Name) error {
	name := dentry.Name().Name
	if !dir.IsEncrypted() {
		b := nameBytes(name)
		*fname = fscrypt.Name{UsrFname: b, DiskName: b}
		prepareDentry(t, dentry, false)
		return nil
	}
	defer t.Trace("fscrypt_prepare_lookup")()
	err := fscrypt.SetupFilename(t, dir, nameBytes(name), true, fname)
	if err != nil && err != errno.ENOENT {
		return err
	}
	prepareDentry(t, dentry, fname.IsNokeyName)
	return err
}

// prepareDentry is fscrypt_prepare_dentry: mark a no-key dentry, or drop
// fscrypt_d_revalidate from one that can never need it.
func prepareDentry(t *kernel.Task, dentry *vfs.Dentry, nokey bool) {
	if nokey {
		dentry.SetFlags(t, dcache.NokeyName)
		return
	}
	if dentry.Flags()&dcache.OpRevalidate != 0 {
		if _, ours := fscryptDops.Load(dentry.Ops()); ours {
			dentry.ClearFlags(t, dcache.OpRevalidate)
		}
	}
}

// fscryptDops holds the dentry operations SetSBDops made, whose
// d_revalidate is fscrypt_d_revalidate.
var fscryptDops sync.Map // *dcache.Operations[vfs.Inode] -> struct{}

// FscryptPrepareCreate is the first check of creating in a directory: an
// encrypted directory needs its key. Since Linux 5.16 it is the start of
// fscrypt_prepare_new_inode (fscrypt_policy_to_inherit ->
// fscrypt_require_key); before, the filesystems set up the directory's key
// and tested fscrypt_has_encryption_key themselves. Calling it first fails
// a create with ENOKEY before any inode is allocated. Errors: ENOKEY, key
// setup errors.
func FscryptPrepareCreate(t *kernel.Task, dir *vfs.Inode) error {
	if !dir.IsEncrypted() {
		return nil
	}
	defer t.Trace("fscrypt_prepare_create")()
	return fscrypt.RequireKey(t, dir)
}

// FscryptPrepareLink is fscrypt_prepare_link: a hard link into an encrypted
// directory needs the directory's key (a no-key dentry: ENOKEY) and a
// policy that permits the inode (EXDEV).
func FscryptPrepareLink(t *kernel.Task, oldDentry *vfs.Dentry, dir *vfs.Inode, dentry *vfs.Dentry) error {
	if !dir.IsEncrypted() {
		return nil
	}
	defer t.Trace("fscrypt_prepare_link")()
	if dentry.IsNokeyName() {
		t.TraceNote("-ENOKEY: the new name is a no-key name (DCACHE_NOKEY_NAME)")
		return errno.ENOKEY
	}
	// The directory's key is present: the dentry is not a no-key name.
	if !fscrypt.HasPermittedContext(t, dir, oldDentry.Inode()) {
		t.TraceNote("-EXDEV: !fscrypt_has_permitted_context(dir, d_inode(old_dentry))")
		return errno.EXDEV
	}
	return nil
}

// FscryptPrepareRename is fscrypt_prepare_rename: renames involving an
// encrypted directory need the keys (a no-key name on either side: ENOKEY)
// and, across directories, a new directory whose policy permits the moved
// inode (EXDEV); with RENAME_EXCHANGE the check runs both ways.
func FscryptPrepareRename(t *kernel.Task, oldDir *vfs.Inode, oldDentry *vfs.Dentry, newDir *vfs.Inode, newDentry *vfs.Dentry, flags uint32) error {
	if !oldDir.IsEncrypted() && !newDir.IsEncrypted() {
		return nil
	}
	defer t.Trace("fscrypt_prepare_rename")()
	if oldDentry.IsNokeyName() || newDentry.IsNokeyName() {
		t.TraceNote("-ENOKEY: a no-key name (DCACHE_NOKEY_NAME) on either side")
		return errno.ENOKEY
	}
	if oldDir != newDir {
		if newDir.IsEncrypted() && !fscrypt.HasPermittedContext(t, newDir, oldDentry.Inode()) {
			t.TraceNote("-EXDEV: !fscrypt_has_permitted_context(new_dir, d_inode(old_dentry))")
			return errno.EXDEV
		}
		if flags&vfs.RENAME_EXCHANGE != 0 && oldDir.IsEncrypted() &&
			!fscrypt.HasPermittedContext(t, oldDir, newDentry.Inode()) {
			t.TraceNote("-EXDEV: RENAME_EXCHANGE and !fscrypt_has_permitted_context(old_dir, d_inode(new_dentry))")
			return errno.EXDEV
		}
	}
	return nil
}

// FscryptPrepareReaddir is fscrypt_prepare_readdir: set up an encrypted
// directory's key if it is available, so that names are listed in the
// clear (or as no-key names without it). Unsupported policies are
// tolerated so that such directories can be listed.
func FscryptPrepareReaddir(t *kernel.Task, dir *vfs.Inode) error {
	if !dir.IsEncrypted() {
		return nil
	}
	return fscrypt.GetEncryptionInfo(t, dir, true)
}

// FscryptPrepareSetattr is fscrypt_prepare_setattr: changing the size of an
// encrypted file needs its key (ENOKEY), since the last block must be
// re-encrypted.
func FscryptPrepareSetattr(t *kernel.Task, dentry *vfs.Dentry, attr *vfs.Iattr) error {
	inode := dentry.Inode()
	if !inode.IsEncrypted() || attr.Valid&vfs.ATTR_SIZE == 0 {
		return nil
	}
	return fscrypt.RequireKey(t, inode)
}

// FscryptPrepareSymlink is fscrypt_prepare_symlink: the on-disk size of a
// symlink target created in dir, for a filesystem with maxLen bytes of room
// (counting the NUL). Errors: ENAMETOOLONG, ENOKEY.
func FscryptPrepareSymlink(t *kernel.Task, dir *vfs.Inode, target string, maxLen int) (diskLen int, encrypted bool, err error) {
	return fscrypt.PrepareSymlink(t, dir, []byte(target), maxLen)
}

// FscryptEncryptSymlink is fscrypt_encrypt_symlink, the static inline
// wrapper in include/linux/fscrypt.h (traced as inline) around
// __fscrypt_encrypt_symlink (fs/crypto/hooks.c): the on-disk target of a
// new encrypted symlink (diskLen from FscryptPrepareSymlink); the plaintext
// is cached in i_link as the kernel does. Errors: ENOKEY, ENOMEM, driver
// errors.
func FscryptEncryptSymlink(t *kernel.Task, inode *vfs.Inode, target string, diskLen int) ([]byte, error) {
	defer t.TraceInline("fscrypt_encrypt_symlink")()
	sd, err := fscrypt.EncryptSymlink(t, inode, []byte(target), diskLen)
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), sd...)
	fscrypt.FreeSymlinkData(t, sd)
	inode.SetLink(target)
	return out, nil
}

// FscryptGetSymlink is fscrypt_get_symlink: the target of an encrypted
// symlink whose on-disk form is caddr: the cached plaintext, decrypted with
// the key (then cached), or its no-key form without it. Errors: EUCLEAN,
// key setup errors.
func FscryptGetSymlink(t *kernel.Task, inode *vfs.Inode, caddr []byte) (string, error) {
	if s, ok := inode.Link(); ok {
		return s, nil
	}
	defer t.Trace("fscrypt_get_symlink")()
	target, cacheable, err := fscrypt.GetSymlink(t, inode, caddr)
	if err != nil {
		return "", err
	}
	s := string(target)
	if cacheable {
		inode.SetLink(s)
	}
	return s, nil
}

// FscryptSymlinkGetattr is fscrypt_symlink_getattr: an encrypted symlink's
// st_size is the length of the target userspace sees (decrypted or no-key),
// not of its ciphertext.
func FscryptSymlinkGetattr(t *kernel.Task, path vfs.Path, st *vfs.Stat) error {
	d := path.Dentry
	inode := d.Inode()
	link, ok := inode.Link()
	if !ok {
		var err error
		if link, err = inode.Op.GetLink(t, d, inode); err != nil {
			return err
		}
	}
	st.Size = int64(len(link))
	return nil
}

// FscryptDRevalidate is fscrypt_d_revalidate (the Linux 6.14 signature,
// with the directory and name passed in): a dentry with a plaintext name is
// always valid; a no-key dentry stays valid only while the directory's key
// is still missing. In RCU-walk it asks for ref-walk (ECHILD), since key
// setup may block.
func FscryptDRevalidate(t *kernel.Task, dir *vfs.Inode, name *dcache.Qstr, dentry *vfs.Dentry, flags uint32) (bool, error) {
	if !dentry.IsNokeyName() {
		return true, nil
	}
	if flags&vfs.LOOKUP_RCU != 0 {
		return false, vfs.ECHILD
	}
	if err := fscrypt.GetEncryptionInfo(t, dir, true); err != nil {
		return false, err
	}
	valid := !fscrypt.HasEncryptionKey(dir)
	if !valid {
		t.Inc(EvNokeyInvalidate)
	}
	return valid, nil
}

// SetSBDops is generic_set_sb_d_ops: the dentry operations of a
// filesystem's superblock. With an encoding, the case-insensitive d_hash
// and d_compare (with fscrypt_d_revalidate when the filesystem supports
// encryption, generic_encrypted_ci_dentry_ops); with encryption only,
// fscrypt_d_revalidate (generic_encrypted_dentry_ops); otherwise none.
// Call it from fill_super before making the root.
func SetSBDops(sb *vfs.SuperBlock) {
	switch {
	case sb.Encoding != nil:
		ops := dcache.GenericCIOps(dcache.CIConfig[vfs.Inode]{
			Encoding:      sb.Encoding,
			Strict:        sb.EncodingStrict,
			NeedsCasefold: (*vfs.Inode).IsCasefolded,
		})
		if sb.Cop() != nil {
			ops.Revalidate = FscryptDRevalidate
			fscryptDops.Store(ops, struct{}{})
		}
		sb.Dops = ops
	case sb.Cop() != nil:
		ops := &dcache.Operations[vfs.Inode]{Revalidate: FscryptDRevalidate}
		fscryptDops.Store(ops, struct{}{})
		sb.Dops = ops
	}
}
