package f2fs

import (
	"fmt"
	"sync"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/libfs"
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
//
// /sys/fs/f2fs/features lists what the model implements of the kernel's
// f2fs_feat_attrs: encryption, casefold and encrypted_casefold; not
// verity or compression (neither is modelled).
var Type = &vfs.FileSystemType{Name: "f2fs", RequiresDev: true, FillSuper: fillSuper, Mkfs: mkfsDevice, FeatureArgs: featureArgs,
	SysfsFeatures: []string{"encryption", "casefold", "encrypted_casefold"}, Magic: 0xF2F52010}

// Encoding flags of the superblock (s_encoding_flags; F2FS_ENC_*_FL in
// include/linux/f2fs_fs.h, copied into sb->s_encoding_flags as
// SB_ENC_*_FL of include/linux/fs.h).
const (
	// EncStrictModeFL rejects names that are not valid UTF-8
	// (F2FS_ENC_STRICT_MODE_FL, mkfs.f2fs -C utf8:strict).
	EncStrictModeFL uint16 = 1 << 0
	// EncNoCompatFallbackFL disables the linear lookup fallback in
	// casefolded directories (F2FS_ENC_NO_COMPAT_FALLBACK_FL, mkfs.f2fs -C
	// utf8:hashonly; sb_no_casefold_compat_fallback).
	EncNoCompatFallbackFL uint16 = 1 << 1
)

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
	// LookupMode is the lookup_mode= mount option (default perf, as the
	// kernel's default_options sets it: its zero value).
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

// SuperBlock is a mounted f2fs, struct f2fs_sb_info (fs/f2fs/f2fs.h): the
// simulated device, what the directory code reads from the superblock
// (s_encoding, s_encoding_flags, the lookup_mode= and inline_dentry mount
// options), the table of in-memory inodes (the node area: nid -> inode),
// the nid allocator and the operation tables. F2FS_SB finds it from the
// VFS superblock (s_fs_info).
type SuperBlock struct {
	// Dev is the block device holding dentry blocks and file data.
	Dev *Device
	// Encoding is sb->s_encoding; nil when the filesystem has no casefold
	// feature.
	Encoding vfs.Encoding
	// EncodingFlags is sb->s_encoding_flags (EncStrictModeFL,
	// EncNoCompatFallbackFL).
	EncodingFlags uint16
	// LookupMode is the lookup_mode= mount option.
	LookupMode LookupMode
	// InlineDentry is the inline_dentry mount option (default on).
	InlineDentry bool
	// Inline is the inline dentry geometry of new directories.
	Inline InlineGeometry
	// Name is the device name used in log lines (s_id).
	Name string

	vsb  *vfs.SuperBlock
	opts Options

	// img is the on-disk state of a filesystem mounted from an image
	// (nil on a growing device); imgMu serialises reading inodes from it.
	img   *imageInfo
	imgMu sync.Mutex

	// mu protects the inode table and the nid allocator.
	mu       sync.Mutex
	inodes   map[uint32]*Inode
	nextNid  uint32
	freeNids []uint32

	// XattrCrypt is f2fs_cryptops: the superblock implements
	// fscrypt.Operations, the context in the encryption xattr.
	libfs.XattrCrypt

	dirOps      vfs.InodeOperations
	dirFileOps  vfs.FileOperations
	fileOps     vfs.InodeOperations
	fileFileOps vfs.FileOperations
	symlinkOps  vfs.InodeOperations
	aops        vfs.AddressSpaceOperations
}

// F2FS_SB is F2FS_SB(sb): the f2fs superblock of a VFS superblock, or nil
// when sb is not an f2fs.
func F2FS_SB(vsb *vfs.SuperBlock) *SuperBlock {
	sbi, _ := vsb.FsInfo.(*SuperBlock)
	return sbi
}

// VFS returns the VFS superblock (sbi->sb).
func (sbi *SuperBlock) VFS() *vfs.SuperBlock { return sbi.vsb }

// Options returns the options the filesystem was mounted with.
func (sbi *SuperBlock) Options() Options { return sbi.opts }

// HasStrictEncoding is sb_has_strict_encoding.
func (sbi *SuperBlock) HasStrictEncoding() bool { return sbi.EncodingFlags&EncStrictModeFL != 0 }

// NoCasefoldCompatFallback is sb_no_casefold_compat_fallback.
func (sbi *SuperBlock) NoCasefoldCompatFallback() bool {
	return sbi.EncodingFlags&EncNoCompatFallbackFL != 0
}

// warn logs like f2fs_warn: "F2FS-fs (dev): msg".
func (sbi *SuperBlock) warn(t *kernel.Task, format string, args ...any) {
	t.Printk("F2FS-fs (%s): "+format, append([]any{sbi.Name}, args...)...)
}

// Allocation accounting of the VFS layer.
var (
	// inodeInfoCache is f2fs_inode_cachep's share of struct f2fs_inode_info
	// beyond the struct inode the VFS accounts.
	inodeInfoCache = kmem.NewCache("f2fs_inode_cache", 560)
)

// fillSuper is f2fs_fill_super: the features mkfs wrote on the device
// and the mount's option string, the encoding (f2fs_setup_casefold), the
// fscrypt operations, the dentry operations and the root directory.
// Errors: EINVAL (no f2fs on the device, a bad option, an encoding that
// does not load), ENOMEM.
func fillSuper(t *kernel.Task, vsb *vfs.SuperBlock, data string) error {
	defer t.Trace("f2fs_fill_super")()
	sbi := &SuperBlock{Dev: vsb.Bdev(), InlineDentry: true, Inline: DefaultInlineGeometry, Name: vsb.ID(),
		vsb: vsb, inodes: map[uint32]*Inode{}, nextNid: FirstIno}
	var err error
	if sbi.Dev != nil && sbi.Dev.Fixed() && vsb.Bdev().Super().FsType != vsb.Type.Name {
		if sbi.img, err = sbi.loadImage(t); err != nil {
			return err
		}
		vsb.SetUUID(sbi.img.raw.UUID) // f2fs_fill_super: sb->s_uuid from raw_super->uuid
		if sbi.img.raw.HasFeature(FeatCasefold) && sbi.img.raw.Encoding != encUTF8_12_1 {
			// f2fs_sb_read_encoding
			sbi.err(t, "Encoding requested by superblock is unknown")
			return errno.EINVAL
		}
		sbi.opts = sbi.img.options()
		if err := parseOptions(t, vsb.Type, &sbi.opts, data); err != nil {
			return err
		}
		sbi.Inline = NewInlineGeometry(sbi.img.newExtraIsize(), DefaultInlineXattrAddrs)
		if !sbi.Dev.ReadOnly() {
			if err := sbi.prepareWrite(t); err != nil {
				return err
			}
		}
	} else if sbi.opts, err = loadOptions(t, vsb, data); err != nil {
		return err
	}
	sbi.LookupMode = sbi.opts.LookupMode
	sbi.InlineDentry = !sbi.opts.NoInlineDentry
	if sbi.opts.Casefold || vsb.Encoding != nil {
		if err := vsb.LoadEncoding(sbi.opts.Strict); err != nil {
			return err
		}
		sbi.Encoding = vsb.Encoding
		if vsb.EncodingStrict {
			sbi.EncodingFlags |= EncStrictModeFL
		}
		if sbi.opts.NoCompatFallback {
			sbi.EncodingFlags |= EncNoCompatFallbackFL
		}
		sbi.opts.Casefold = true
		sbi.opts.Strict = vsb.EncodingStrict
	}
	sbi.dirOps, sbi.dirFileOps = &dirOps{sbi: sbi}, &dirFileOps{sbi: sbi}
	sbi.fileOps, sbi.fileFileOps = libfs.RegularFile("f2fs", sbi.ioctl, libfs.WithFiemap(
		func(i *vfs.Inode) *vfs.BlockMap { return &F2FS_I(i).data },
		// f2fs_fiemap: every extent is FIEMAP_EXTENT_MERGED, an encrypted
		// file's also FIEMAP_EXTENT_DATA_ENCRYPTED.
		func(i *vfs.Inode) uint32 {
			if i.IsEncrypted() {
				return vfs.FIEMAP_EXTENT_MERGED | vfs.FIEMAP_EXTENT_DATA_ENCRYPTED
			}
			return vfs.FIEMAP_EXTENT_MERGED
		}))
	sbi.fileOps = libfs.WithListxattr(sbi.fileOps, listxattr)
	sbi.symlinkOps = libfs.WithListxattr(libfs.Symlink(func(i *vfs.Inode) []byte { return F2FS_I(i).target }), listxattr)
	sbi.aops = inlineAops{vfs.BlockAops(func(i *vfs.Inode) *vfs.BlockMap { return &F2FS_I(i).data })}
	sbi.XattrCrypt = libfs.XattrCrypt{
		Xattrs:    func(i *vfs.Inode) libfs.XattrStore { return (*inodeXattrs)(F2FS_I(i)) },
		KeyPrefix: "f2fs:", // f2fs_cryptops.legacy_key_prefix
		Empty:     func(t *kernel.Task, i *vfs.Inode) bool { return EmptyDir(t, F2FS_I(i)) },
		// f2fs_cryptops.supports_subblock_data_units (fs/f2fs/super.c,
		// since Linux 6.7): data units smaller than the 4 KiB block.
		Subblock: true,
		// f2fs_has_stable_inodes: f2fs never renumbers inodes.
		StableInodes: func() bool { return true },
	}
	vsb.FsInfo = sbi
	vsb.SetOps(sbi)
	vsb.SetXattrHandlers(xattrHandlers)
	vsb.SetBlockBits(12, maxFileSize)
	if !sbi.opts.NoEncrypt {
		vsb.SetCop(sbi)
	}
	hooks.SetSBDops(vsb)
	if sbi.img != nil {
		root, err := sbi.iget(t, sbi.img.raw.RootIno)
		if err != nil {
			return err
		}
		if !root.IsDir() || root.Size() == 0 || root.Nlink() == 0 {
			sbi.err(t, "Invalid root inode")
			vfs.Iput(t, &root.Inode)
			return errno.EINVAL
		}
		if err := vsb.MakeRoot(t, &root.Inode); err != nil {
			vfs.Iput(t, &root.Inode)
			return err
		}
		sbi.mountedMsg(t)
		return nil
	}
	root, err := sbi.allocInode(t, RootIno, vfs.S_IFDIR|0o755)
	if err != nil {
		return err
	}
	// mkfs.f2fs (f2fs_write_root_inode) gives the root a dentry block:
	// it is not inline.
	root.Inline = false
	if err := MakeEmptyDir(t, root, RootIno, SIfdir|0o755); err != nil {
		discard(t, root)
		return err
	}
	root.SetNlink(2)
	if err := vsb.MakeRoot(t, &root.Inode); err != nil {
		discard(t, root)
		return err
	}
	sbi.mountedMsg(t)
	return nil
}

// CP_NAT_BITS_FLAG is the checkpoint flag of a pack that carries nat_bits.
const CP_NAT_BITS_FLAG = 0x00000080

// mountedMsg is what f2fs_fill_super logs on the way and at its end: the
// encoding (f2fs_setup_casefold), "Found nat_bits in checkpoint"
// (f2fs_init_nat_bits, when the checkpoint has them) and the checkpoint
// version. A device in the model's own layout has no checkpoint: it stands
// for what mkfs.f2fs leaves, whose first checkpoint has nat_bits, at
// version 1.
func (sbi *SuperBlock) mountedMsg(t *kernel.Task) {
	if sbi.Encoding != nil {
		sbi.info(t, "%s", sbi.vsb.EncodingMsg(sbi.EncodingFlags))
	}
	natBits, ver := true, uint64(1)
	if sbi.img != nil {
		natBits, ver = sbi.img.ckpt.CkptFlags&CP_NAT_BITS_FLAG != 0, sbi.img.ckpt.CheckpointVer
	}
	if natBits {
		sbi.info(t, "Found nat_bits in checkpoint")
	}
	sbi.info(t, "Mounted with checkpoint version = %x", ver)
}

// Mounted implements vfs.MountLogger: vfs.MountSuper stands for a new
// f2fs_fill_super of what the device holds.
func (sbi *SuperBlock) Mounted(t *kernel.Task) { sbi.mountedMsg(t) }

// maxFileSize is the largest file of the model (s_maxbytes): 4 KiB blocks
// addressed by 32-bit page indexes.
const maxFileSize = int64(1) << 44

// Mount formats a fresh simulated device with opts (nil: the defaults) and
// mounts it on target, which proc resolves; the first mount of sys becomes
// the root of its namespace (proc and target are then ignored). The mount's
// SB is the new superblock (F2FS_SB(m.SB) its f2fs), Root its root dentry.
// Errors: those of vfs.System.Mount and fillSuper.
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
// variants are those of t's kernel. Errors: those of Mount.
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

// allocInode is f2fs_alloc_inode with new_inode's initialisation: a
// struct f2fs_inode_info whose embedded VFS inode (vfs.InodeInit) has
// f2fs's operations for the file type, under inode number ino (0: a free
// nid, f2fs_alloc_nid), entered in the inode table. A directory starts
// with the inline_dentry option's layout and the dir_level= option's
// level, and no dentries (MakeEmptyDir adds "." and ".."). Errors: ENOSPC
// when nids run out, ENOMEM.
func (sbi *SuperBlock) allocInode(t *kernel.Task, ino uint32, mode uint32) (*Inode, error) {
	if err := inodeInfoCache.Alloc(&t.Ctx, kmem.GFPNoFS); err != nil {
		return nil, err
	}
	sbi.mu.Lock()
	if ino == 0 {
		if n := len(sbi.freeNids); n > 0 {
			ino = sbi.freeNids[n-1]
			sbi.freeNids = sbi.freeNids[:n-1]
		} else if sbi.nextNid == 0 {
			sbi.mu.Unlock()
			inodeInfoCache.Free(&t.Ctx)
			return nil, errno.ENOSPC
		} else {
			ino = sbi.nextNid
			sbi.nextNid++
		}
	}
	sbi.mu.Unlock()
	fi := &Inode{SB: sbi}
	fi.data.Init(sbi.Dev)
	if err := vfs.InodeInit(t, &fi.Inode, sbi.vsb, uint64(ino), mode, fi); err != nil {
		sbi.freeNid(ino)
		inodeInfoCache.Free(&t.Ctx)
		return nil, err
	}
	switch mode & vfs.S_IFMT {
	case vfs.S_IFDIR:
		fi.Inline, fi.Geo = sbi.InlineDentry, sbi.Inline
		fi.Node = make([]byte, BlockSize)
		fi.DirLevel = sbi.opts.DirLevel
		fi.Op, fi.Fop = sbi.dirOps, sbi.dirFileOps
	case vfs.S_IFLNK:
		fi.Op, fi.Fop = sbi.symlinkOps, vfs.NoFileOps{}
	case vfs.S_IFCHR, vfs.S_IFBLK, vfs.S_IFIFO, vfs.S_IFSOCK:
		// The caller's init_special_inode sets i_fop (special.go).
		fi.Op, fi.Fop = specialInodeOps, vfs.NoFileOps{}
	default:
		fi.Data.Host, fi.Data.Ops = &fi.Inode, sbi.aops
		fi.Op, fi.Fop = sbi.fileOps, sbi.fileFileOps
	}
	sbi.mu.Lock()
	sbi.inodes[ino] = fi
	sbi.mu.Unlock()
	return fi, nil
}

// freeNid is f2fs_alloc_nid_failed / the nid release of eviction.
func (sbi *SuperBlock) freeNid(ino uint32) {
	sbi.mu.Lock()
	defer sbi.mu.Unlock()
	delete(sbi.inodes, ino)
	sbi.freeNids = append(sbi.freeNids, ino)
}

// EvictInode implements vfs.SuperOperations (f2fs_evict_inode): an inode
// with no links left gives its blocks (file data or dentry blocks) back
// to the device and its number back; in every case the in-core state
// goes, its key with fscrypt_put_encryption_info. The VFS calls it once
// the last reference is gone.
func (sbi *SuperBlock) EvictInode(t *kernel.Task, inode *vfs.Inode) {
	fi := F2FS_I(inode)
	if inode.Nlink() == 0 {
		fi.Data.Lock()
		fi.truncateBlocks(0)
		fi.Data.Unlock()
		fi.xattr = xattrState{}
		sbi.freeNid(fi.nid())
		inodeInfoCache.Free(&t.Ctx)
	}
	vfs.ClearInode(inode)
	fscrypt.PutEncryptionInfo(t, inode)
}

// DropInode implements vfs.SuperOperations (f2fs_drop_inode):
// generic_drop_inode, or fscrypt_drop_inode once the inode's master key is
// removed.
func (sbi *SuperBlock) DropInode(t *kernel.Task, inode *vfs.Inode) bool {
	return vfs.GenericDropInode(t, inode)
}
