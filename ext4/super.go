package ext4

import (
	"fmt"
	"sync"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/libfs"
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
	// BlockSize is mke2fs -b (0: the default); UUID is -U (zero: one
	// derived from the device's size). Only mkfs on a fixed-size device
	// (a real image) uses them.
	BlockSize int
	UUID      [16]byte
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
	if o.BlockSize != 0 {
		s += fmt.Sprintf(",blocksize=%d", o.BlockSize)
	}
	if o.UUID != ([16]byte{}) {
		s += fmt.Sprintf(",uuid=%x", o.UUID)
	}
	return s
}

// SuperBlock is struct ext4_sb_info with what the directory code reads
// from the on-disk superblock: the simulated device, the features, the
// hash and checksum seeds, the encoding, the table of in-memory inodes
// (the inode table: number -> inode) and the operation tables. It hangs
// off the VFS superblock's s_fs_info (EXT4_SB). fill_super sets the
// exported fields and nothing changes them on a mounted filesystem; tools
// and tests that build one directory outside the namespace (NewDirInode)
// may set them before they make it.
type SuperBlock struct {
	// Dev holds the directory blocks and the file contents.
	Dev *Device
	// MetadataCsum, DirIndex, LargeDir and Filetype are the features
	// metadata_csum, dir_index, large_dir and filetype.
	MetadataCsum, DirIndex, LargeDir, Filetype bool
	// UUID is s_uuid; CsumSeed is s_csum_seed (crc32c(~0, s_uuid) unless
	// the csum_seed feature stores one).
	UUID     [16]byte
	CsumSeed uint32
	// HashSeed is s_hash_seed as four words (HashSeedWords).
	HashSeed [4]uint32
	// DefHashVersion is s_def_hash_version.
	DefHashVersion uint8
	// HashUnsigned is s_hash_unsigned: 3 when EXT2_FLAGS_UNSIGNED_HASH is
	// set, else 0 (EXT2_FLAGS_SIGNED_HASH; ext4_fill_super also picks 0
	// when neither flag is set, on an architecture whose char is signed).
	HashUnsigned uint8
	// InodesCount is s_inodes_count, the largest valid inode number.
	InodesCount uint32
	// Encoding is sb->s_encoding (nil without the casefold feature).
	Encoding vfs.Encoding
	// EncodingFlags is s_encoding_flags.
	EncodingFlags uint16
	// Name is the device name in log lines (s_id).
	Name string

	vsb  *vfs.SuperBlock
	opts Options

	// mu protects the inode table and the inode allocator.
	mu       sync.Mutex
	inodes   map[uint32]*Inode
	nextIno  uint32
	freeInos []uint32

	// disk is the on-disk image under a filesystem mounted from one
	// (nil on the growing device); igetMu serialises the reads of
	// inodes into the cache, wmu the write-backs.
	disk   *diskFS
	igetMu sync.Mutex
	wmu    sync.Mutex

	// XattrCrypt is ext4_cryptops: the superblock implements
	// fscrypt.Operations, the context in the encryption xattr.
	libfs.XattrCrypt

	dirOps      vfs.InodeOperations
	dirFileOps  vfs.FileOperations
	fileOps     vfs.InodeOperations
	fileFileOps vfs.FileOperations
	symlinkOps  vfs.InodeOperations
	aops        vfs.AddressSpaceOperations
}

// EXT4_SB is EXT4_SB(sb): the ext4 of a VFS superblock, or nil when the
// superblock is not an ext4.
func EXT4_SB(vsb *vfs.SuperBlock) *SuperBlock {
	sbi, _ := vsb.FsInfo.(*SuperBlock)
	return sbi
}

// VFS returns the VFS superblock (sbi->s_sb).
func (sb *SuperBlock) VFS() *vfs.SuperBlock { return sb.vsb }

// Options returns the options the filesystem was made with.
func (sb *SuperBlock) Options() Options { return sb.opts }

// SetUUID sets s_uuid and derives s_csum_seed as ext4_fill_super does.
func (sb *SuperBlock) SetUUID(uuid [16]byte) {
	sb.UUID = uuid
	sb.CsumSeed = Crc32c(^uint32(0), uuid[:])
}

// HasStrictEncoding is sb_has_strict_encoding.
func (sb *SuperBlock) HasStrictEncoding() bool { return sb.EncodingFlags&EncStrictModeFL != 0 }

// NoCasefoldCompatFallback is sb_no_casefold_compat_fallback.
func (sb *SuperBlock) NoCasefoldCompatFallback() bool {
	return sb.EncodingFlags&EncNoCompatFallbackFL != 0
}

// htreeLevel is ext4_dir_htree_level.
func (sb *SuperBlock) htreeLevel() int {
	if sb.LargeDir {
		return HtreeLevel
	}
	return HtreeLevelCompat
}

func (sb *SuperBlock) csumSize() int {
	if sb.MetadataCsum {
		return DirEntryTailSize
	}
	return 0
}

// fillSuper is ext4_fill_super for a device mkfs formatted: mke2fs's
// defaults (dir_index, filetype and metadata_csum on, half_md4 as the
// default hash, signed as mke2fs makes it on x86, a zero seed, 65536
// inodes) changed by the features mkfs recorded (loadOptions).
//
// The signedness is a property of the host that ran mke2fs, not of the
// kernel: ext2fs_initialize (lib/ext2fs/initialize.c) sets
// EXT2_FLAGS_SIGNED_HASH when a plain char is signed, as on x86 and
// x86-64, and EXT2_FLAGS_UNSIGNED_HASH otherwise (arm64, powerpc);
// ext4_fill_super turns the flag into s_hash_unsigned (0 signed, 3
// unsigned). So the default is DX_HASH_HALF_MD4 (1), signed.
func fillSuper(t *kernel.Task, vsb *vfs.SuperBlock, data string) error {
	defer t.Trace("ext4_fill_super")()
	if HasImage(vsb.Bdev()) {
		return fillSuperImage(t, vsb, data)
	}
	sb := &SuperBlock{Dev: vsb.Bdev(), MetadataCsum: true, DirIndex: true, Filetype: true,
		DefHashVersion: DxHashHalfMD4, HashUnsigned: 0, InodesCount: 65536,
		vsb: vsb, inodes: map[uint32]*Inode{}, nextIno: FirstIno}
	var err error
	if sb.opts, err = loadOptions(t, vsb, data); err != nil {
		return err
	}
	o := &sb.opts
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
	sb.setupOps(vsb)
	vsb.SetBlockBits(12, maxFileSize)
	if !o.NoEncrypt {
		vsb.SetCop(sb)
	}
	hooks.SetSBDops(vsb)
	root, err := sb.allocInode(t, RootIno, vfs.S_IFDIR|0o755)
	if err != nil {
		return err
	}
	if err := InitNewDir(t, root, RootIno); err != nil {
		discard(t, root)
		return err
	}
	root.SetNlink(2)
	if err := vsb.MakeRoot(t, &root.Inode); err != nil {
		discard(t, root)
		return err
	}
	return nil
}

// setupOps gives the superblock its operation tables and fscrypt's
// operations (the part of ext4_fill_super that sets s_op, s_cop and the
// inode operation tables) and hangs it off vsb.
func (sb *SuperBlock) setupOps(vsb *vfs.SuperBlock) {
	sb.dirOps, sb.dirFileOps = &dirOps{sb: sb}, &dirFileOps{sb: sb}
	sb.fileOps, sb.fileFileOps = libfs.RegularFile("ext4", sb.ioctl)
	sb.symlinkOps = libfs.Symlink(func(i *vfs.Inode) []byte { return EXT4_I(i).target })
	sb.aops = aops{vfs.BlockAops(func(i *vfs.Inode) *vfs.BlockMap { return &EXT4_I(i).data }), sb}
	sb.XattrCrypt = libfs.XattrCrypt{
		Xattrs:    func(i *vfs.Inode) *vfs.SimpleXattrs { return &EXT4_I(i).xattrs },
		KeyPrefix: "ext4:", // ext4_cryptops.legacy_key_prefix
		// The root directory cannot be encrypted: e2fsck expects an
		// unencrypted lost+found (ext4_set_context).
		Permit: func(i *vfs.Inode) error {
			if i.Ino() == RootIno {
				return errno.EPERM
			}
			return nil
		},
		Encrypted: func(i *vfs.Inode) { EXT4_I(i).Flags |= EncryptFL },
		Empty:     func(t *kernel.Task, i *vfs.Inode) bool { return EmptyDir(t, EXT4_I(i)) },
		// ext4 may encrypt in data units smaller than its blocks.
		Subblock: true,
	}
	vsb.FsInfo = sb
	vsb.SetOps(sb)
}

// maxFileSize is s_maxbytes of a 4 KiB-block extent-mapped file
// (ext4_max_size: 2^32 blocks).
const maxFileSize = int64(1)<<44 - BlockSize

// Mount formats a fresh simulated device with opts (nil: the defaults) and
// mounts it on target, which proc resolves; the first mount of sys becomes
// the root of its namespace (proc and target are then ignored). The mount's
// SB is the new superblock (EXT4_SB(m.SB) its ext4), Root its root dentry.
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

// DropInode implements vfs.SuperOperations (ext4_drop_inode):
// generic_drop_inode, or fscrypt_drop_inode once the inode's master key is
// removed. The caller holds the last reference.
func (sb *SuperBlock) DropInode(t *kernel.Task, inode *vfs.Inode) bool {
	return vfs.GenericDropInode(t, inode)
}

// errorInode logs like ext4_error_inode: "EXT4-fs error (device D): FN:
// inode #N: block B: comm C: MSG".
func (dir *Inode) errorInode(t *kernel.Task, fn string, block uint32, format string, args ...any) {
	t.Printk("EXT4-fs error (device %s): %s: inode #%d: block %d: comm %s: %s", dir.SB.Name, fn, dir.ino(), block, t.Comm, fmt.Sprintf(format, args...))
}

// warning logs like ext4_warning_inode.
func (dir *Inode) warning(t *kernel.Task, fn string, format string, args ...any) {
	t.Printk("EXT4-fs warning (device %s): %s: inode #%d: comm %s: %s", dir.SB.Name, fn, dir.ino(), t.Comm, fmt.Sprintf(format, args...))
}
