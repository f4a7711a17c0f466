package f2fs

import (
	"fmt"
	"sync"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/vfs"
)

// Type is f2fs as a VFS filesystem type, registered as "f2fs". Format a
// device with its Mkfs (mkfs.f2fs's arguments: Options.MkfsArgs renders
// them) and mount it with its option string:
//
//	sys.Mount(t, proc, f2fs.Type, "/mnt", vfs.MountOptions{Device: dev, Data: "lookup_mode=perf"})
//
// or let Mount or Boot format a fresh device with Options. A new
// filesystem has an empty root directory, inode 3.
var Type = &vfs.FileSystemType{Name: "f2fs", RequiresDev: true, FillSuper: fillSuper, Mkfs: mkfs, FeatureArgs: featureArgs}

// Options are the mkfs.f2fs features and the mount options of a simulated
// f2fs.
type Options struct {
	// Casefold is the casefold feature with the utf8 encoding (mkfs.f2fs
	// -O casefold -C utf8): the superblock's map is Unicode 12.1 from
	// package fsunicode, unless the mount's vfs.MountOptions.Encoding gives
	// one. Directories are casefolded one by one with FS_IOC_SETFLAGS
	// (FS_CASEFOLD_FL) while empty; new directories inherit the flag.
	Casefold bool
	// Strict is the strict encoding flag (mkfs.f2fs -C utf8:strict,
	// F2FS_ENC_STRICT_MODE_FL): names that are not valid UTF-8 are refused
	// with EINVAL in casefolded directories. vfs.MountOptions.Strict sets
	// it too.
	Strict bool
	// NoCompatFallback is F2FS_ENC_NO_COMPAT_FALLBACK_FL (mkfs.f2fs -C
	// utf8:hashonly): lookup_mode=auto never falls back to the linear
	// search.
	NoCompatFallback bool
	// LookupMode is the lookup_mode= mount option (default auto).
	LookupMode LookupMode
	// NoInlineDentry is the noinline_dentry mount option: new directories
	// keep their dentries in blocks from the start.
	NoInlineDentry bool
	// DirLevel is the dir_level= mount option: i_dir_level of new
	// directories (the hash table of level L has 2^(L+dir_level) buckets).
	DirLevel uint32
	// NoEncrypt leaves out the encrypt feature: the fscrypt ioctls give
	// EOPNOTSUPP.
	NoEncrypt bool
}

// String renders the options as mkfs features and mount options.
func (o Options) String() string {
	s := "lookup_mode=" + o.LookupMode.String()
	if o.Casefold {
		s += ",casefold"
		switch {
		case o.Strict && o.NoCompatFallback:
			s += "=utf8:strict,hashonly"
		case o.Strict:
			s += "=utf8:strict"
		case o.NoCompatFallback:
			s += "=utf8:hashonly"
		}
	}
	if o.NoInlineDentry {
		s += ",noinline_dentry"
	}
	if o.DirLevel != 0 {
		s += fmt.Sprintf(",dir_level=%d", o.DirLevel)
	}
	if !o.NoEncrypt {
		s += ",encrypt"
	}
	return s
}

// Inode numbers of a new filesystem (F2FS_NODE_INO, F2FS_META_INO and
// F2FS_ROOT_INO of a default mkfs.f2fs): node ids below FirstIno are
// reserved.
const (
	RootIno  = 3
	FirstIno = 4
)

// FS is a mounted f2fs (struct f2fs_sb_info): the directory code's
// superblock over the simulated device, the table of in-memory inodes (the
// node area: inode number -> inode) and the operation tables.
type FS struct {
	vsb  *vfs.SuperBlock
	sb   *SuperBlock
	opts Options

	// mu protects the inode table and the nid allocator.
	mu       sync.Mutex
	inodes   map[uint32]*vfs.Inode
	nextNid  uint32
	freeNids []uint32

	dirOps      vfs.InodeOperations
	dirFileOps  vfs.FileOperations
	fileOps     vfs.InodeOperations
	fileFileOps vfs.FileOperations
	symlinkOps  vfs.InodeOperations
	aops        vfs.AddressSpaceOperations
}

// Allocation accounting of the VFS layer.
var (
	// inodeInfoCache is f2fs_inode_cachep's share of struct f2fs_inode_info
	// beyond the struct inode the VFS accounts.
	inodeInfoCache = kmem.NewCache("f2fs_inode_cache", 560)
)

// xattr index of the encryption context (F2FS_XATTR_INDEX_ENCRYPTION) and
// its name (F2FS_XATTR_NAME_ENCRYPTION_CONTEXT).
const (
	xattrIndexEncryption = 9
	xattrNameEncryption  = "c"
)

// inodeInfo is f2fs's part of a VFS inode (struct f2fs_inode_info) with
// the inode's on-disk data: the block addresses of its pages, its xattrs,
// a symlink's target, and for a directory the directory code's state
// (dentry blocks, inline dentries in the inode block, depth, level).
type inodeInfo struct {
	ino uint32
	// mapping is a regular file's data (i_data); its lock protects data.
	mapping vfs.AddressSpace
	// mu protects target.
	mu     sync.Mutex
	data   map[uint64]uint32 // page index -> block address
	xattrs vfs.SimpleXattrs
	target []byte
	// dir is the directory state; nil for other file types. The VFS
	// holds the directory's i_rwsem exclusive around every change and
	// lookup, but only shared around readdir: readMu serialises the
	// readers.
	dir    *Inode
	readMu sync.Mutex
}

func infoOf(i *vfs.Inode) *inodeInfo { return i.Private.(*inodeInfo) }

// Of returns the f2fs of a superblock, or nil.
func Of(sb *vfs.SuperBlock) *FS {
	fs, _ := sb.FsInfo.(*FS)
	return fs
}

// SB returns the directory code's superblock (device, encoding, lookup
// mode).
func (fs *FS) SB() *SuperBlock { return fs.sb }

// Options returns the options the filesystem was mounted with.
func (fs *FS) Options() Options { return fs.opts }

// DirOf returns the directory state of an f2fs directory inode (for
// CheckDir, DumpDir and tests), or nil for another inode. The caller must
// not run it concurrently with changes to the directory.
func DirOf(inode *vfs.Inode) *Inode {
	in, ok := inode.Private.(*inodeInfo)
	if !ok {
		return nil
	}
	return in.dir
}

// fillSuper is f2fs_fill_super for a freshly formatted device: the
// encoding, the fscrypt operations, the dentry operations and the root
// directory.
func fillSuper(t *kernel.Task, vsb *vfs.SuperBlock, data string) error {
	defer t.Trace("f2fs_fill_super")()
	fs := &FS{vsb: vsb, inodes: map[uint32]*vfs.Inode{}, nextNid: FirstIno}
	var err error
	if fs.opts, err = loadOptions(t, vsb, data); err != nil {
		return err
	}
	sb := NewSuperBlock()
	sb.Dev = vsb.Bdev()
	sb.Name = vsb.ID()
	sb.LookupMode = fs.opts.LookupMode
	sb.InlineDentry = !fs.opts.NoInlineDentry
	if fs.opts.Casefold || vsb.Encoding != nil {
		if err := vsb.LoadEncoding(fs.opts.Strict); err != nil {
			return err
		}
		sb.Encoding = vsb.Encoding
		if vsb.EncodingStrict {
			sb.EncodingFlags |= EncStrictModeFL
		}
		if fs.opts.NoCompatFallback {
			sb.EncodingFlags |= EncNoCompatFallbackFL
		}
		fs.opts.Casefold = true
		fs.opts.Strict = vsb.EncodingStrict
	}
	fs.sb = sb
	fs.dirOps, fs.dirFileOps = &dirOps{fs: fs}, &dirFileOps{fs: fs}
	fs.fileOps, fs.fileFileOps = &fileOps{fs: fs}, &fileFileOps{fs: fs}
	fs.symlinkOps = &symlinkOps{fs: fs}
	fs.aops = vfs.BlockAops(fileBlocks{fs})
	vsb.FsInfo = fs
	vsb.SetOps(fs)
	vsb.SetBlockBits(12, maxFileSize)
	if !fs.opts.NoEncrypt {
		vsb.SetCop(fs)
	}
	hooks.SetSBDops(vsb)
	root, err := fs.allocInode(t, RootIno, vfs.S_IFDIR|0o755)
	if err != nil {
		return err
	}
	if err := MakeEmptyDir(t, infoOf(root).dir, RootIno, SIfdir|0o755); err != nil {
		discard(t, root)
		return err
	}
	root.SetNlink(2)
	fs.syncDirSize(root)
	if err := vsb.MakeRoot(t, root); err != nil {
		discard(t, root)
		return err
	}
	return nil
}

// maxFileSize is the largest file of the model (s_maxbytes): 4 KiB blocks
// addressed by 32-bit page indexes.
const maxFileSize = int64(1) << 44

// Mount formats a fresh simulated device with opts (nil: the defaults) and
// mounts it on target, which proc resolves; the first mount of sys becomes
// the root of its namespace (proc and target are then ignored). The mount's
// SB is the new superblock (Of(m.SB) its f2fs), Root its root dentry.
func Mount(t *kernel.Task, sys *vfs.System, proc *vfs.Proc, target string, opts *Options) (*vfs.Mount, error) {
	if opts == nil {
		opts = &Options{}
	}
	mo, err := vfs.FormatNew(t, Type, opts.MkfsArgs(), opts.MountData())
	if err != nil {
		return nil, err
	}
	return sys.Mount(t, proc, Type, target, mo)
}

// Boot makes a machine on t's kernel whose root filesystem is a fresh f2fs
// with opts (nil: the defaults), and starts a process on it; the patch
// variants are those of t's kernel.
func Boot(t *kernel.Task, cfg vfs.Config, opts *Options) (*vfs.System, *vfs.Proc, error) {
	if opts == nil {
		opts = &Options{}
	}
	mo, err := vfs.FormatNew(t, Type, opts.MkfsArgs(), opts.MountData())
	if err != nil {
		return nil, nil, err
	}
	return vfs.Boot(t, cfg, Type, mo)
}

// allocInode is new_inode with f2fs's operations for the file type, under
// inode number ino (0: a free nid, f2fs_alloc_nid), entered in the inode
// table. Errors: ENOSPC when nids run out, ENOMEM.
func (fs *FS) allocInode(t *kernel.Task, ino uint32, mode uint32) (*vfs.Inode, error) {
	if err := inodeInfoCache.Alloc(&t.Ctx, kmem.GFPNoFS); err != nil {
		return nil, err
	}
	fs.mu.Lock()
	if ino == 0 {
		if n := len(fs.freeNids); n > 0 {
			ino = fs.freeNids[n-1]
			fs.freeNids = fs.freeNids[:n-1]
		} else if fs.nextNid == 0 {
			fs.mu.Unlock()
			inodeInfoCache.Free(&t.Ctx)
			return nil, errno.ENOSPC
		} else {
			ino = fs.nextNid
			fs.nextNid++
		}
	}
	fs.mu.Unlock()
	inode, err := vfs.NewInode(t, fs.vsb, uint64(ino), mode)
	if err != nil {
		fs.freeNid(ino)
		inodeInfoCache.Free(&t.Ctx)
		return nil, err
	}
	in := &inodeInfo{ino: ino}
	inode.Private = in
	switch mode & vfs.S_IFMT {
	case vfs.S_IFDIR:
		in.dir = NewDirInode(fs.sb, ino, mode&^vfs.S_IFMT)
		in.dir.DirLevel = fs.opts.DirLevel
		inode.Op, inode.Fop = fs.dirOps, fs.dirFileOps
	case vfs.S_IFLNK:
		inode.Op, inode.Fop = fs.symlinkOps, vfs.NoFileOps{}
	default:
		in.data = map[uint64]uint32{}
		in.mapping.Host, in.mapping.Ops = inode, fs.aops
		inode.Op, inode.Fop = fs.fileOps, fs.fileFileOps
	}
	fs.mu.Lock()
	fs.inodes[ino] = inode
	fs.mu.Unlock()
	return inode, nil
}

// freeNid is f2fs_alloc_nid_failed / the nid release of eviction.
func (fs *FS) freeNid(ino uint32) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	delete(fs.inodes, ino)
	fs.freeNids = append(fs.freeNids, ino)
}

// discard drops a new inode that never got a name (f2fs_handle_failed_inode).
func discard(t *kernel.Task, inode *vfs.Inode) {
	inode.ClearNlink()
	vfs.Iput(t, inode)
}

// iget is f2fs_iget for an inode number read from a dentry: the in-memory
// inode with a new reference. A nid outside the node area is corruption
// (f2fs_check_nid_range: a warning, EFSCORRUPTED); an in-range nid that is
// not allocated reads as a node with NULL_ADDR (read_node_folio), ENOENT.
func (fs *FS) iget(t *kernel.Task, ino uint32) (*vfs.Inode, error) {
	fs.mu.Lock()
	inode := fs.inodes[ino]
	end := fs.nextNid
	fs.mu.Unlock()
	if ino < RootIno || (end != 0 && ino >= end) {
		fs.sb.warn(t, "f2fs_check_nid_range: out-of-range nid=%x, run fsck to fix.", ino)
		return nil, errno.EFSCORRUPTED
	}
	if inode == nil || !vfs.Igrab(inode) {
		return nil, errno.ENOENT
	}
	return inode, nil
}

// newInode is f2fs_new_inode's part that matters here: a new inode in dir,
// casefolded if it is a directory in a casefolded one (f2fs_mask_flags of
// the inherited F2FS_CASEFOLD_FL), with the directory's encryption policy
// (fscrypt_prepare_new_inode; the context is stored by fscrypt_set_context,
// which f2fs_init_inode_metadata calls). Errors: ENOKEY, ENOSPC, ENOMEM.
func (fs *FS) newInode(t *kernel.Task, dir *vfs.Inode, mode uint32) (*vfs.Inode, error) {
	defer t.Trace("f2fs_new_inode")()
	// The require-key step of fscrypt_prepare_new_inode
	// (fscrypt_policy_to_inherit), before a nid is taken.
	if err := hooks.FscryptPrepareCreate(t, dir); err != nil {
		return nil, err
	}
	inode, err := fs.allocInode(t, 0, mode)
	if err != nil {
		return nil, err
	}
	inode.SetOwner(dir.OwnerUID())
	if dir.IsCasefolded() && inode.IsDir() {
		inode.SetFlags(vfs.S_CASEFOLD)
		infoOf(inode).dir.Flags |= CasefoldFL
	}
	encrypt, err := fscrypt.PrepareNewInode(t, dir, inode)
	if err == nil && encrypt {
		err = fscrypt.SetContext(t, inode, nil)
	}
	if err != nil {
		discard(t, inode)
		return nil, err
	}
	return inode, nil
}

// syncDirSize copies a directory's i_size from the directory code.
func (fs *FS) syncDirSize(inode *vfs.Inode) {
	if d := infoOf(inode).dir; d != nil {
		inode.SetSize(d.Size)
	}
}

// EvictInode implements vfs.SuperOperations (f2fs_evict_inode): an inode
// with no links left gives its blocks back to the device and its number
// back; in every case the in-core state goes, its key with
// fscrypt_put_encryption_info.
func (fs *FS) EvictInode(t *kernel.Task, inode *vfs.Inode) {
	in := infoOf(inode)
	if inode.Nlink() == 0 {
		in.mapping.Lock()
		fileBlocks{fs}.TruncateBlocks(inode, 0)
		in.mapping.Unlock()
		in.xattrs.Free()
		if in.dir != nil {
			in.dir.releaseBlocks()
		}
		fs.freeNid(in.ino)
		inodeInfoCache.Free(&t.Ctx)
	}
	vfs.ClearInode(inode)
	fscrypt.PutEncryptionInfo(t, inode)
}

// DropInode implements vfs.SuperOperations (f2fs_drop_inode):
// generic_drop_inode, or fscrypt_drop_inode once the inode's master key is
// removed.
func (fs *FS) DropInode(t *kernel.Task, inode *vfs.Inode) bool { return vfs.GenericDropInode(t, inode) }

// GetContext implements fscrypt.Operations (f2fs_get_context): the
// encryption context xattr.
func (fs *FS) GetContext(t *kernel.Task, inode fscrypt.Inode, buf []byte) (int, error) {
	return infoOf(inode.(*vfs.Inode)).xattrs.Get(xattrIndexEncryption, xattrNameEncryption, buf)
}

// SetContext implements fscrypt.Operations (f2fs_set_context): the context
// is stored as the encryption xattr with XATTR_CREATE, which marks the
// inode encrypted (f2fs_set_encrypted_inode); a directory's names are from
// then on encrypted through fscrypt.
func (fs *FS) SetContext(t *kernel.Task, inode fscrypt.Inode, ctx []byte, fsData any) error {
	i := inode.(*vfs.Inode)
	in := infoOf(i)
	if err := in.xattrs.Set(xattrIndexEncryption, xattrNameEncryption, ctx, true); err != nil {
		return err
	}
	i.SetFlags(vfs.S_ENCRYPTED)
	if in.dir != nil {
		in.dir.Crypt = FscryptNames{Dir: i}
	}
	return nil
}

// EmptyDir implements fscrypt.Operations (f2fs_empty_dir).
func (fs *FS) EmptyDir(t *kernel.Task, inode fscrypt.Inode) bool {
	d := infoOf(inode.(*vfs.Inode)).dir
	return d != nil && EmptyDir(t, d)
}

// HasStableInodes implements fscrypt.Operations: nids never change.
func (fs *FS) HasStableInodes() bool { return true }

// Has32BitInodes implements fscrypt.Operations: nids are 32-bit.
func (fs *FS) Has32BitInodes() bool { return true }

// SupportsSubblockDataUnits implements fscrypt.Operations: f2fs's data
// unit is the block.
func (fs *FS) SupportsSubblockDataUnits() bool { return false }

// EvictDecryptedInode implements fscrypt.Operations for a key removal
// (vfs.EvictDecryptedInode).
func (fs *FS) EvictDecryptedInode(t *kernel.Task, inode fscrypt.Inode) {
	vfs.EvictDecryptedInode(t, inode.(*vfs.Inode))
}

// Context returns a copy of an inode's stored fscrypt context (nil if
// none): the bytes of the encryption xattr, 28 (v1) or 40 (v2) long.
func Context(inode *vfs.Inode) []byte {
	in := infoOf(inode)
	buf := make([]byte, 64)
	n, err := in.xattrs.Get(xattrIndexEncryption, xattrNameEncryption, buf)
	if err != nil {
		return nil
	}
	return buf[:n]
}
