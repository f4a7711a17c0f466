package ext4

import (
	"fmt"
	"math"
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
//
// /sys/fs/ext4/features lists what the model implements of the kernel's
// ext4_feat_attrs: encryption, casefold and encrypted_casefold
// (CONFIG_FS_ENCRYPTION, CONFIG_UNICODE); not verity (fs-verity is not
// modelled), nor the others.
var Type = &vfs.FileSystemType{Name: "ext4", RequiresDev: true, FillSuper: fillSuper, Mkfs: mkfs, FeatureArgs: featureArgs,
	SysfsFeatures: []string{"encryption", "casefold", "encrypted_casefold"}, Magic: 0xEF53}

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
	// StableInodes is the stable_inodes feature (mke2fs -O stable_inodes,
	// EXT4_FEATURE_COMPAT_STABLE_INODES): inode numbers never change, so
	// IV_INO_LBLK_64 and IV_INO_LBLK_32 policies are allowed
	// (ext4_has_stable_inodes).
	StableInodes bool
	// BlockSize is mke2fs -b (0: the default); UUID is -U (zero: one
	// derived from the device's size). Only mkfs on a fixed-size device
	// (a real image) uses them.
	BlockSize int
	UUID      [16]byte
	// FsSize is mke2fs's fs-size operand in bytes (0: the whole device):
	// the filesystem takes only that much of a larger device. Label is
	// -L, written to s_volume_name.
	FsSize int64
	Label  string
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
	if o.StableInodes {
		s += ",stable_inodes"
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

// mountedMsg is the encoding's line (ext4_encoding_init, for a casefolding
// filesystem) and the line ext4_fill_super logs at its end: the UUID, "ro"
// or "r/w", the data mode (the journal's; "without journal" when the
// filesystem has none) and the quota mode (none: quotas are not
// modelled).
func (sb *SuperBlock) mountedMsg(t *kernel.Task) {
	rw := "r/w"
	if sb.vsb.ReadOnly() || sb.ReadOnly() {
		rw = "ro"
	}
	if sb.Encoding != nil {
		imageMsg(t, sb.vsb.ID(), "%s", sb.vsb.EncodingMsg(sb.EncodingFlags))
	}
	descr := " ordered data mode"
	if sb.disk != nil && sb.disk.es.Compat()&CompatHasJournal == 0 {
		descr = "out journal"
	}
	imageMsg(t, sb.vsb.ID(), "mounted filesystem %s %s with%s. Quota mode: none.", fmtUUID(sb.UUID), rw, descr)
}

// Mounted implements vfs.MountLogger: vfs.MountSuper, which stands for a
// new ext4_fill_super of what the device holds, logs what it logs.
func (sb *SuperBlock) Mounted(t *kernel.Task) {
	if d := sb.disk; d != nil && !d.readOnly && !sb.vsb.ReadOnly() && !d.dev.ReadOnly() {
		d.mu.Lock()
		if d.jw != nil {
			d.jw.remount()
		}
		if err := d.setupSuper(); err != nil {
			imageMsg(t, sb.vsb.ID(), "unable to write superblock: %v", err)
		}
		d.mu.Unlock()
	}
	sb.mountedMsg(t)
}

// PutSuper is ext4_put_super (vfs.SuperPutter): on an image mounted
// read-write the journal destroyed (its last transaction committed and
// checkpointed, the log marked empty), needs_recovery cleared and the
// superblock committed; then the message, "unmounting filesystem UUID.".
func (sb *SuperBlock) PutSuper(t *kernel.Task) {
	if d := sb.disk; d != nil {
		if err := d.putSuper(); err != nil {
			imageMsg(t, sb.vsb.ID(), "unable to write superblock: %v", err)
		}
	}
	imageMsg(t, sb.vsb.ID(), "unmounting filesystem %s.", fmtUUID(sb.UUID))
}

// fmtUUID is printk's %pU: lower-case 8-4-4-4-12 hex.
func fmtUUID(u [16]byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

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
	sb.mountedMsg(t)
	return nil
}

// setupOps gives the superblock its operation tables and fscrypt's
// operations (the part of ext4_fill_super that sets s_op, s_cop and the
// inode operation tables) and hangs it off vsb.
func (sb *SuperBlock) setupOps(vsb *vfs.SuperBlock) {
	sb.dirOps, sb.dirFileOps = &dirOps{sb: sb}, &dirFileOps{sb: sb}
	sb.fileOps, sb.fileFileOps = libfs.RegularFile("ext4", sb.ioctl, libfs.WithSizeLimit(sb.sizeLimit), libfs.WithFiemap(
		func(i *vfs.Inode) *vfs.BlockMap { return &EXT4_I(i).data },
		// ext4_iomap_begin_report: an extent-mapped file's extents are
		// IOMAP_F_MERGED, hence FIEMAP_EXTENT_MERGED.
		func(*vfs.Inode) uint32 { return vfs.FIEMAP_EXTENT_MERGED }))
	sb.fileOps = libfs.WithListxattr(sb.fileOps, listxattr)
	sb.symlinkOps = libfs.WithListxattr(libfs.Symlink(func(i *vfs.Inode) []byte { return EXT4_I(i).target }), listxattr)
	sb.aops = aops{vfs.BlockAops(func(i *vfs.Inode) *vfs.BlockMap { return &EXT4_I(i).data }), sb}
	sb.XattrCrypt = libfs.XattrCrypt{
		Xattrs:    func(i *vfs.Inode) libfs.XattrStore { return (*inodeXattrs)(EXT4_I(i)) },
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
		// ext4_has_stable_inodes (fs/ext4/crypto.c): the stable_inodes
		// feature (EXT4_FEATURE_COMPAT_STABLE_INODES), which promises
		// that the filesystem is never shrunk or otherwise renumbered.
		StableInodes: func() bool { return sb.opts.StableInodes },
	}
	vsb.FsInfo = sb
	vsb.SetOps(sb)
	vsb.SetXattrHandlers(xattrHandlers)
}

// maxLFSFilesize is MAX_LFS_FILESIZE on a 64-bit kernel (LLONG_MAX).
const maxLFSFilesize = int64(math.MaxInt64)

// ext4MaxSize is ext4_max_size (fs/ext4/super.c), s_maxbytes: the largest
// extent-mapped file. ee_block is 32 bits, and s_maxbytes is one block
// less than 2^32 blocks so that an extent's ee_len can reach it; without
// huge_file, i_blocks (2^32 512-byte sectors) limits it too. 4 KiB
// blocks: 2^44 - 4 KiB; 1 KiB blocks: 2^42 - 1 KiB (about 4 TiB).
func ext4MaxSize(blkbits uint, hugeFiles bool) int64 {
	upper := maxLFSFilesize
	if !hugeFiles {
		upper = int64(1)<<32 - 1
		upper >>= blkbits - 9
		upper <<= blkbits
	}
	res := (int64(1)<<32 - 1) << blkbits
	return min(res, upper)
}

// ext4MaxBitmapSize is ext4_max_bitmap_size (fs/ext4/super.c),
// s_bitmap_maxbytes: the largest block-mapped file (no EXT4_EXTENTS_FL),
// whose twelve direct, indirect, double and triple indirect blocks
// address it, and whose data and indirect blocks together stay within
// i_blocks (2^48 - 1 sectors with huge_file, else 2^32 - 1 sectors). 4 KiB
// blocks: about 4 TiB; 1 KiB blocks: about 16 GiB.
func ext4MaxBitmapSize(bits uint, hugeFiles bool) int64 {
	ppb := int64(1) << (bits - 2)
	var upper int64
	if !hugeFiles {
		upper = int64(1)<<32 - 1
		upper >>= bits - 9
	} else {
		upper = int64(1)<<48 - 1
	}
	res := int64(ndirBlocks) + ppb + ppb*ppb + ppb*ppb*ppb
	meta := int64(1) + (1 + ppb) + (1 + ppb + ppb*ppb)
	if res+meta > upper {
		res = upper
		upper -= ndirBlocks
		meta = 1
		upper -= ppb
		if upper < ppb*ppb {
			meta += 1 + (upper+ppb-1)/ppb
			res -= meta
		} else {
			meta += 1 + ppb
			upper -= ppb * ppb
			meta += 1 + (upper+ppb-1)/ppb + (upper+ppb*ppb-1)/(ppb*ppb)
			res -= meta
		}
	}
	res <<= bits
	return min(res, maxLFSFilesize)
}

// ndirBlocks is EXT4_NDIR_BLOCKS: the direct block pointers of i_block.
const ndirBlocks = 12

// maxFileSize is s_maxbytes of the growing device's 4 KiB-block
// filesystem, made with huge_file as mke2fs makes it.
var maxFileSize = ext4MaxSize(12, true)

// getMaxbytes is ext4_get_maxbytes: s_maxbytes for an extent-mapped file,
// s_bitmap_maxbytes for a block-mapped one (an image's inode without
// EXT4_EXTENTS_FL). The growing device's files are all extent-mapped, as
// __ext4_new_inode makes them on a filesystem with the extents feature.
func (sb *SuperBlock) getMaxbytes(flags uint32) int64 {
	if sb.disk == nil || flags&ExtentsFL != 0 {
		return sb.vsb.MaxBytes()
	}
	return sb.disk.bitmapMaxBytes
}

// sizeLimit is ext4's own size check, past the VFS's s_maxbytes, of an
// ATTR_SIZE setattr (ext4_setattr) and a write (ext4_generic_write_checks):
// s_bitmap_maxbytes for a block-mapped file.
func (sb *SuperBlock) sizeLimit(i *vfs.Inode) int64 { return sb.getMaxbytes(EXT4_I(i).Flags) }

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
