package ext4

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

// Type is ext4 as a VFS filesystem type, registered as "ext4". Format a
// device with its Mkfs (mkfs.ext4's arguments: Options.MkfsArgs renders
// them) and mount it with
//
//	sys.Mount(t, proc, ext4.Type, "/mnt", vfs.MountOptions{Device: dev})
//
// or let Mount or Boot format a fresh device with Options. A new
// filesystem has an empty root directory, inode 2 (no lost+found).
var Type = &vfs.FileSystemType{Name: "ext4", RequiresDev: true, FillSuper: fillSuper, Mkfs: mkfs, FeatureArgs: featureArgs}

// Options are the mke2fs features and settings of a simulated ext4. The
// zero value is mke2fs's ext4 default: metadata_csum, dir_index, filetype,
// signed half_md4 directory hashes with a zero seed, encryption supported.
type Options struct {
	// NoMetadataCsum, NoDirIndex turn off metadata_csum and dir_index.
	NoMetadataCsum, NoDirIndex bool
	// LargeDir is the large_dir feature (three-level htrees).
	LargeDir bool
	// Hash is s_def_hash_version, as mke2fs -E hash_alg= spells it:
	// "legacy", "half_md4" (the default, also when empty) or "tea".
	Hash string
	// UnsignedHash makes the superblock carry EXT2_FLAGS_UNSIGNED_HASH,
	// as mke2fs writes it on a host whose char is unsigned (arm64); the
	// default is EXT2_FLAGS_SIGNED_HASH, as on x86.
	UnsignedHash bool
	// HashSeed is s_hash_seed (zero: the default start values).
	HashSeed [16]byte
	// InodesCount is s_inodes_count (0: 65536).
	InodesCount uint32
	// Casefold is the casefold feature with the utf8 encoding (mke2fs -O
	// casefold -E encoding=utf8): Unicode 12.1 from package fsunicode,
	// unless the mount's vfs.MountOptions.Encoding gives a map.
	// Directories are casefolded one by one with FS_IOC_SETFLAGS while
	// empty; new directories inherit the flag.
	Casefold bool
	// Strict is the strict encoding flag (-E encoding_flags=strict);
	// vfs.MountOptions.Strict sets it too.
	Strict bool
	// NoCompatFallback is the superblock flag that stops a casefolded
	// lookup from falling back to a linear search after an htree miss.
	NoCompatFallback bool
	// NoEncrypt leaves out the encrypt feature: the fscrypt ioctls give
	// EOPNOTSUPP.
	NoEncrypt bool
}

// String renders the options as mke2fs features and settings.
func (o Options) String() string {
	s := "ext4"
	if o.NoMetadataCsum {
		s += ",^metadata_csum"
	}
	if o.NoDirIndex {
		s += ",^dir_index"
	}
	if o.LargeDir {
		s += ",large_dir"
	}
	if o.Hash != "" {
		s += ",hash_alg=" + o.Hash
	}
	if o.UnsignedHash {
		s += ",unsigned_hash"
	}
	if o.HashSeed != ([16]byte{}) {
		s += fmt.Sprintf(",hash_seed=%x", o.HashSeed)
	}
	if o.Casefold {
		s += ",casefold"
		if o.Strict {
			s += ",strict"
		}
		if o.NoCompatFallback {
			s += ",no_compat_fallback"
		}
	}
	if !o.NoEncrypt {
		s += ",encrypt"
	}
	return s
}

// Inode numbers of a new filesystem: EXT4_ROOT_INO, and
// EXT4_GOOD_OLD_FIRST_INO, the first one handed out (s_first_ino).
const (
	RootIno  = 2
	FirstIno = 11
)

// FS is a mounted ext4 (struct ext4_sb_info): the directory code's
// superblock over the simulated device, the table of in-memory inodes
// (the inode table: number -> inode) and the operation tables.
type FS struct {
	vsb  *vfs.SuperBlock
	sb   *SuperBlock
	opts Options

	// mu protects the inode table and the inode allocator.
	mu       sync.Mutex
	inodes   map[uint32]*vfs.Inode
	nextIno  uint32
	freeInos []uint32

	dirOps      vfs.InodeOperations
	dirFileOps  vfs.FileOperations
	fileOps     vfs.InodeOperations
	fileFileOps vfs.FileOperations
	symlinkOps  vfs.InodeOperations
	aops        vfs.AddressSpaceOperations
}

// inodeInfoCache is ext4_inode_cachep's share of struct ext4_inode_info
// beyond the struct inode the VFS accounts.
var inodeInfoCache = kmem.NewCache("ext4_inode_cache", 520)

// xattr index of the encryption context (EXT4_XATTR_INDEX_ENCRYPTION) and
// its name (EXT4_XATTR_NAME_ENCRYPTION_CONTEXT).
const (
	xattrIndexEncryption = 9
	xattrNameEncryption  = "c"
)

// inodeInfo is ext4's part of a VFS inode (struct ext4_inode_info) with the
// inode's on-disk data: the block map of its pages, its xattrs, a
// symlink's target, and for a directory the directory code's state.
type inodeInfo struct {
	ino uint32
	// mapping is a regular file's data (i_data); its lock protects data.
	mapping vfs.AddressSpace
	// mu protects target.
	mu     sync.Mutex
	data   map[uint64]uint32 // logical block -> device block
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

// Of returns the ext4 of a superblock, or nil.
func Of(sb *vfs.SuperBlock) *FS {
	fs, _ := sb.FsInfo.(*FS)
	return fs
}

// SB returns the directory code's superblock.
func (fs *FS) SB() *SuperBlock { return fs.sb }

// Options returns the options the filesystem was made with.
func (fs *FS) Options() Options { return fs.opts }

// DirOf returns the directory state of an ext4 directory inode (for
// CheckDir, DumpDir and tests), or nil for another inode. The caller must
// not run it concurrently with changes to the directory.
func DirOf(inode *vfs.Inode) *Inode {
	in, ok := inode.Private.(*inodeInfo)
	if !ok {
		return nil
	}
	return in.dir
}

// fillSuper is ext4_fill_super for a freshly formatted device.
func fillSuper(t *kernel.Task, vsb *vfs.SuperBlock, data string) error {
	defer t.Trace("ext4_fill_super")()
	fs := &FS{vsb: vsb, inodes: map[uint32]*vfs.Inode{}, nextIno: FirstIno}
	var err error
	if fs.opts, err = loadOptions(t, vsb, data); err != nil {
		return err
	}
	o := &fs.opts
	sb := NewSuperBlock()
	sb.Dev = vsb.Bdev()
	sb.Name = vsb.ID()
	sb.SetUUID(vsb.UUID())
	sb.MetadataCsum = !o.NoMetadataCsum
	sb.DirIndex = !o.NoDirIndex
	sb.LargeDir = o.LargeDir
	switch o.Hash {
	case "", "half_md4":
		sb.DefHashVersion = DxHashHalfMD4
	case "legacy":
		sb.DefHashVersion = DxHashLegacy
	case "tea":
		sb.DefHashVersion = DxHashTEA
	default:
		return errno.EINVAL
	}
	if o.UnsignedHash {
		sb.HashUnsigned = 3
	}
	sb.HashSeed = HashSeedWords(&o.HashSeed)
	if o.InodesCount != 0 {
		if o.InodesCount < FirstIno {
			return errno.EINVAL
		}
		sb.InodesCount = o.InodesCount
	}
	if o.Casefold || vsb.Encoding != nil {
		if err := vsb.LoadEncoding(o.Strict); err != nil {
			return err
		}
		sb.Encoding = vsb.Encoding
		if vsb.EncodingStrict {
			sb.EncodingFlags |= EncStrictModeFL
		}
		if o.NoCompatFallback {
			sb.EncodingFlags |= EncNoCompatFallbackFL
		}
		o.Casefold, o.Strict = true, vsb.EncodingStrict
	}
	fs.sb = sb
	fs.dirOps, fs.dirFileOps = &dirOps{fs: fs}, &dirFileOps{fs: fs}
	fs.fileOps, fs.fileFileOps = &fileOps{fs: fs}, &fileFileOps{fs: fs}
	fs.symlinkOps = &symlinkOps{fs: fs}
	fs.aops = vfs.BlockAops(fileBlocks{fs})
	vsb.FsInfo = fs
	vsb.SetOps(fs)
	vsb.SetBlockBits(12, maxFileSize)
	if !o.NoEncrypt {
		vsb.SetCop(fs)
	}
	hooks.SetSBDops(vsb)
	root, err := fs.allocInode(t, RootIno, vfs.S_IFDIR|0o755)
	if err != nil {
		return err
	}
	if err := InitNewDir(t, infoOf(root).dir, RootIno); err != nil {
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

// maxFileSize is s_maxbytes of a 4 KiB-block extent-mapped file
// (ext4_max_size: 2^32 blocks).
const maxFileSize = int64(1)<<44 - BlockSize

// Mount formats a fresh simulated device with opts (nil: the defaults) and
// mounts it on target, which proc resolves; the first mount of sys becomes
// the root of its namespace (proc and target are then ignored). The mount's
// SB is the new superblock (Of(m.SB) its ext4), Root its root dentry.
func Mount(t *kernel.Task, sys *vfs.System, proc *vfs.Proc, target string, opts *Options) (*vfs.Mount, error) {
	if opts == nil {
		opts = &Options{}
	}
	mo, err := vfs.FormatNew(t, Type, opts.MkfsArgs(), "")
	if err != nil {
		return nil, err
	}
	return sys.Mount(t, proc, Type, target, mo)
}

// Boot makes a machine on t's kernel whose root filesystem is a fresh ext4
// with opts (nil: the defaults), and starts a process on it; the patch
// variants are those of t's kernel.
func Boot(t *kernel.Task, cfg vfs.Config, opts *Options) (*vfs.System, *vfs.Proc, error) {
	if opts == nil {
		opts = &Options{}
	}
	mo, err := vfs.FormatNew(t, Type, opts.MkfsArgs(), "")
	if err != nil {
		return nil, nil, err
	}
	return vfs.Boot(t, cfg, Type, mo)
}

// generation is i_generation of a new inode: ext4 draws it at random; the
// model derives it from the inode number so that runs repeat.
func generation(ino uint32) uint32 { return ino * 2654435761 }

// allocInode is new_inode with ext4's operations for the file type, under
// inode number ino (0: a free one, as ext4_new_inode's bitmap search
// finds), entered in the inode table. Errors: ENOSPC when the inode table
// is full, ENOMEM.
func (fs *FS) allocInode(t *kernel.Task, ino uint32, mode uint32) (*vfs.Inode, error) {
	if err := inodeInfoCache.Alloc(&t.Ctx, kmem.GFPNoFS); err != nil {
		return nil, err
	}
	fs.mu.Lock()
	if ino == 0 {
		if n := len(fs.freeInos); n > 0 {
			ino = fs.freeInos[n-1]
			fs.freeInos = fs.freeInos[:n-1]
		} else if fs.nextIno > fs.sb.InodesCount {
			fs.mu.Unlock()
			inodeInfoCache.Free(&t.Ctx)
			return nil, errno.ENOSPC
		} else {
			ino = fs.nextIno
			fs.nextIno++
		}
	}
	fs.mu.Unlock()
	inode, err := vfs.NewInode(t, fs.vsb, uint64(ino), mode)
	if err != nil {
		fs.freeIno(ino)
		inodeInfoCache.Free(&t.Ctx)
		return nil, err
	}
	in := &inodeInfo{ino: ino}
	inode.Private = in
	switch mode & vfs.S_IFMT {
	case vfs.S_IFDIR:
		in.dir = NewDirInode(fs.sb, ino, generation(ino), mode&^vfs.S_IFMT)
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

// freeIno is ext4_free_inode: the number goes back to the bitmap.
func (fs *FS) freeIno(ino uint32) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	delete(fs.inodes, ino)
	fs.freeInos = append(fs.freeInos, ino)
}

// discard drops a new inode that never got a name.
func discard(t *kernel.Task, inode *vfs.Inode) {
	inode.ClearNlink()
	vfs.Iput(t, inode)
}

// iget is ext4_lookup's checks and ext4_iget for an inode number read from
// a dirent: an invalid number (ext4_valid_inum) and an unallocated inode
// ("deleted inode referenced", ext4_iget's ESTALE) are logged as errors on
// dir and are EFSCORRUPTED.
func (fs *FS) iget(t *kernel.Task, dir *Inode, ino uint32) (*vfs.Inode, error) {
	if ino != RootIno && (ino < FirstIno || ino > fs.sb.InodesCount) {
		dir.errorInode(t, "ext4_lookup", 0, "bad inode number: %d", ino)
		return nil, errno.EFSCORRUPTED
	}
	fs.mu.Lock()
	inode := fs.inodes[ino]
	fs.mu.Unlock()
	if inode == nil || !vfs.Igrab(inode) {
		dir.errorInode(t, "ext4_lookup", 0, "deleted inode referenced: %d", ino)
		return nil, errno.EFSCORRUPTED
	}
	return inode, nil
}

// newInode is __ext4_new_inode's part that matters here: a new inode in
// dir, casefolded if it is a directory in a casefolded one (ext4_mask_flags
// of the inherited EXT4_CASEFOLD_FL), with the directory's encryption
// policy (fscrypt_prepare_new_inode, then fscrypt_set_context). Errors:
// ENOKEY, ENOSPC, ENOMEM.
func (fs *FS) newInode(t *kernel.Task, dir *vfs.Inode, mode uint32) (*vfs.Inode, error) {
	defer t.Trace("__ext4_new_inode")()
	// The require-key step of fscrypt_prepare_new_inode
	// (fscrypt_policy_to_inherit), before an inode is taken.
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

// EvictInode implements vfs.SuperOperations (ext4_evict_inode, ext4_clear_inode): an inode
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
		fs.freeIno(in.ino)
		inodeInfoCache.Free(&t.Ctx)
	}
	vfs.ClearInode(inode)
	fscrypt.PutEncryptionInfo(t, inode)
}

// DropInode implements vfs.SuperOperations (ext4_drop_inode):
// generic_drop_inode, or fscrypt_drop_inode once the inode's master key is
// removed.
func (fs *FS) DropInode(t *kernel.Task, inode *vfs.Inode) bool { return vfs.GenericDropInode(t, inode) }

// GetContext implements fscrypt.Operations (ext4_get_context): the
// encryption context xattr.
func (fs *FS) GetContext(t *kernel.Task, inode fscrypt.Inode, buf []byte) (int, error) {
	return infoOf(inode.(*vfs.Inode)).xattrs.Get(xattrIndexEncryption, xattrNameEncryption, buf)
}

// SetContext implements fscrypt.Operations (ext4_set_context): the root
// directory cannot be encrypted (EPERM: e2fsck expects an unencrypted
// lost+found); the context is stored as the encryption xattr with
// XATTR_CREATE and EXT4_INODE_ENCRYPT is set (S_ENCRYPTED); a directory's
// names are from then on encrypted through fscrypt.
func (fs *FS) SetContext(t *kernel.Task, inode fscrypt.Inode, ctx []byte, fsData any) error {
	i := inode.(*vfs.Inode)
	if i.Ino() == RootIno {
		return errno.EPERM
	}
	in := infoOf(i)
	if err := in.xattrs.Set(xattrIndexEncryption, xattrNameEncryption, ctx, true); err != nil {
		return err
	}
	i.SetFlags(vfs.S_ENCRYPTED)
	if in.dir != nil {
		in.dir.Flags |= EncryptFL
		in.dir.Crypt = FscryptNames{Dir: i}
	}
	return nil
}

// EmptyDir implements fscrypt.Operations (ext4_empty_dir).
func (fs *FS) EmptyDir(t *kernel.Task, inode fscrypt.Inode) bool {
	d := infoOf(inode.(*vfs.Inode)).dir
	return d != nil && EmptyDir(t, d)
}

// HasStableInodes implements fscrypt.Operations: ext4 never renumbers
// inodes (unless the stable_inodes feature is off and the filesystem is
// shrunk, which the model never does).
func (fs *FS) HasStableInodes() bool { return true }

// Has32BitInodes implements fscrypt.Operations.
func (fs *FS) Has32BitInodes() bool { return true }

// SupportsSubblockDataUnits implements fscrypt.Operations: ext4 may
// encrypt in data units smaller than its blocks.
func (fs *FS) SupportsSubblockDataUnits() bool { return true }

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
