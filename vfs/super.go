package vfs

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/vfslab/vfslab/crypto"
	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fsunicode"
	"github.com/vfslab/vfslab/kernel"
)

// FileSystemType is struct file_system_type: a filesystem that can be
// mounted.
type FileSystemType struct {
	// Name is the type's name ("memfs", "ext4"), as mount -t and
	// /proc/filesystems spell it.
	Name string
	// RequiresDev is FS_REQUIRES_DEV: a mount needs a block device that
	// the type's Mkfs formatted.
	RequiresDev bool
	// FillSuper is the filesystem's fill_super: set up sb (its root dentry
	// with MakeRoot, sb.SetOps, sb.SetCop for encryption, sb.FsInfo) from
	// the device's superblock (sb.Bdev) and the mount's option string,
	// which the filesystem parses itself (ParseMountData). Errors fail the
	// mount: EINVAL for an unknown option or a device without the type's
	// superblock, with the kernel's log line.
	FillSuper func(t *kernel.Task, sb *SuperBlock, data string) error
	// Mkfs is the type's mkfs tool (mkfs.ext4, mkfs.f2fs) run with the
	// arguments args (the options, without the program and device
	// names): it formats dev. nil for a type without a device.
	Mkfs func(t *kernel.Task, dev *BlockDevice, args []string) error
	// FeatureArgs renders the features a caller asks of a type it knows
	// only by name (Features) as the arguments of the type's Mkfs. nil for
	// a type without a device.
	FeatureArgs func(f Features) []string
	// SysfsFeatures are the files of /sys/fs/NAME/features
	// (ext4_feat_attrs, f2fs_feat_attrs): the optional features the
	// kernel's build of the filesystem has, which userspace (xfstests'
	// _require_* checks among it) reads to learn what it may use. A
	// model lists only the features it implements.
	SysfsFeatures []string
	// Magic is the superblock's magic number, statfs(2)'s f_type
	// (EXT4_SUPER_MAGIC, F2FS_SUPER_MAGIC, RAMFS_MAGIC).
	Magic uint32
}

// MountOptions are what a mount is given besides the filesystem type.
type MountOptions struct {
	// Source names the device or instance (s_id), "none" when empty.
	Source string
	// Device is the block device of a type that requires one (s_bdev),
	// formatted by the type's Mkfs.
	Device *BlockDevice
	// UUID is s_uuid.
	UUID [16]byte
	// Encoding and Strict are s_encoding and SB_ENC_STRICT_MODE_FL, for
	// filesystems with casefolded directories.
	Encoding *fsunicode.Map
	Strict   bool
	// Data is the mount's option string ("lookup_mode=perf,dir_level=1"),
	// which the filesystem parses.
	Data string
	// ReadOnly is MS_RDONLY: the device is opened for reading only
	// (sb_open_mode) and the new mount is read-only; without it, a
	// read-only device fails the mount with EACCES (setup_bdev_super).
	ReadOnly bool
}

// SuperBlock is struct super_block. It implements fscrypt.SuperBlock.
type SuperBlock struct {
	// Type is s_type.
	Type *FileSystemType
	// Root is s_root, set by FillSuper.
	Root *Dentry
	// Encoding is s_encoding (nil: no casefolding); EncodingStrict is
	// sb_has_strict_encoding.
	Encoding       *fsunicode.Map
	EncodingStrict bool
	// FsInfo is s_fs_info, the filesystem's superblock data.
	FsInfo any
	// Dops are the dentry operations every dentry of the superblock gets
	// (s_d_op), set by FillSuper before MakeRoot.
	Dops *dcache.Operations[Inode]

	id       string
	bdev     *BlockDevice
	uuid     [16]byte
	keyring  *fscrypt.Keyring
	cop      fscrypt.Operations
	op       SuperOperations
	blkbits  uint8
	maxBytes int64
	sys      *System
	// renameMutex is s_vfs_rename_mutex: cross-directory renames take it
	// so that the ancestor relation lock_rename computes stays true.
	renameMutex sync.Mutex
	nextIno     atomic.Uint64
	dev         uint64
	// rdonly is SB_RDONLY, from MS_RDONLY at mount and remount.
	rdonly atomic.Bool
	// lazytime is SB_LAZYTIME (atime.go).
	lazytime atomic.Bool
	// cached is the set of the superblock's mappings that hold page-cache
	// folios (the s_inodes that drop_pagecache_sb finds with pages).
	cached pageCacheSet
	// xattr is s_xattr, the extended attribute handlers (xattr.go).
	xattr []*XattrHandler
	// dirtyInodes is the bdi's b_dirty (and b_dirty_time) list of the
	// superblock's inodes, those writeback has yet to write, each with its
	// dirtied_when: the machine clock when it went from clean to dirty
	// (writeback.go).
	dirtyMu     sync.Mutex
	dirtyInodes map[*Inode]int64
}

// ReadOnly is sb_rdonly: the superblock was mounted or remounted
// read-only (MS_RDONLY), so the filesystem must not write its device.
func (sb *SuperBlock) ReadOnly() bool { return sb.rdonly.Load() }

// Dev is s_dev.
func (sb *SuperBlock) Dev() uint64 { return sb.dev }

// Bdev is s_bdev: the block device under the superblock (nil for a type
// without one).
func (sb *SuperBlock) Bdev() *BlockDevice { return sb.bdev }

// ID is s_id (fscrypt.SuperBlock).
func (sb *SuperBlock) ID() string { return sb.id }

// UUID is s_uuid (fscrypt.SuperBlock).
func (sb *SuperBlock) UUID() [16]byte { return sb.uuid }

// SetUUID sets s_uuid, as a filesystem's fill_super copies its on-disk
// UUID there (ext4_fill_super's uuid_copy from es->s_uuid, f2fs_fill_super's
// from raw_super->uuid): fscrypt hashes it into IV_INO_LBLK_64/32 keys, so
// an image's files must see the image's UUID. Called before the
// superblock is visible to anything else.
func (sb *SuperBlock) SetUUID(u [16]byte) { sb.uuid = u }

// Cop is s_cop, the filesystem's fscrypt_operations (fscrypt.SuperBlock).
func (sb *SuperBlock) Cop() fscrypt.Operations { return sb.cop }

// MasterKeys is s_master_keys (fscrypt.SuperBlock).
func (sb *SuperBlock) MasterKeys() *fscrypt.Keyring { return sb.keyring }

// MaxBytes is s_maxbytes (fscrypt.SuperBlock).
func (sb *SuperBlock) MaxBytes() int64 { return sb.maxBytes }

// Crypto is the machine's Crypto API (fscrypt.SuperBlock).
func (sb *SuperBlock) Crypto() fscrypt.CryptoAPI { return sb.sys.Crypto }

// System returns the machine the superblock is mounted on.
func (sb *SuperBlock) System() *System { return sb.sys }

// EncodingMsg is the line ext4 and f2fs log when a casefolding
// superblock's encoding loads: "Using encoding defined by superblock:
// utf8-12.1.0 with flags 0x0" (ext4_encoding_init, f2fs_setup_casefold),
// flags being the superblock's s_encoding_flags.
func (sb *SuperBlock) EncodingMsg(flags uint16) string {
	v := sb.Encoding.Version()
	return fmt.Sprintf("Using encoding defined by superblock: utf8-%d.%d.%d with flags 0x%x", v>>16, (v>>8)&0xff, v&0xff, flags)
}

// SetCop sets s_cop: the filesystem supports encryption.
func (sb *SuperBlock) SetCop(cop fscrypt.Operations) { sb.cop = cop }

// SetOps sets s_op.
func (sb *SuperBlock) SetOps(op SuperOperations) { sb.op = op }

// SetBlockBits sets s_blocksize_bits (12 by default) and s_maxbytes.
func (sb *SuperBlock) SetBlockBits(bits uint8, maxBytes int64) {
	sb.blkbits, sb.maxBytes = bits, maxBytes
}

// NextIno returns a fresh inode number (get_next_ino), starting at 2.
func (sb *SuperBlock) NextIno() uint64 { return sb.nextIno.Add(1) + 1 }

// MakeRoot makes sb's root dentry for inode (d_make_root) with sb.Dops.
// The dentry takes over the caller's inode reference. Errors: ENOMEM.
func (sb *SuperBlock) MakeRoot(t *kernel.Task, inode *Inode) error {
	d, err := dcache.DMakeRoot(t, sb.sys.Dcache, inode, any(sb), sb.Dops)
	if err != nil {
		return err
	}
	sb.Root = d
	return nil
}

// DentrySB returns the superblock of a dentry.
func DentrySB(d *Dentry) *SuperBlock { return d.SB().(*SuperBlock) }

// String is the canonical one-line dump.
func (sb *SuperBlock) String() string {
	enc := "none"
	if sb.Encoding != nil {
		enc = sb.Encoding.VersionString()
		if sb.EncodingStrict {
			enc += "(strict)"
		}
	}
	return fmt.Sprintf("sb %s type=%s encoding=%s patches=%q keys=%d", sb.id, sb.Type.Name, enc, sb.sys.K.Patches().Changed(), sb.keyring.Len())
}

// Mount is struct mount: a superblock attached to the namespace at a
// mountpoint.
type Mount struct {
	SB   *SuperBlock
	Root *Dentry
	// parent and mountpoint locate the mount: nil for the root mount.
	parent     *Mount
	mountpoint *Dentry
	// readonly is MNT_READONLY (mount -o ro, remount,ro).
	readonly atomic.Bool
	// writers is mnt_writers: the files open for writing on the mount
	// (FMODE_WRITER), which a remount read-only waits for in vain
	// (sb_prepare_remount_readonly's EBUSY).
	writers atomic.Int64
	// atimeFlags are MNT_NOATIME, MNT_NODIRATIME and MNT_RELATIME
	// (atime.go).
	atimeFlags atomic.Uint32
	// files counts the files open through the mount (its share of
	// mnt_count that a umount finds busy); source is the mount a bind
	// mount was cloned from (nil for a new mount), whose root reference
	// the bind mount holds (namespace_bind.go).
	files  atomic.Int64
	source *Mount
}

// SetReadonly sets or clears MNT_READONLY unconditionally; a remount goes
// through RemountReadonly, which refuses while files are open for
// writing.
func (m *Mount) SetReadonly(ro bool) { m.readonly.Store(ro) }

// IsReadonly is __mnt_is_readonly.
func (m *Mount) IsReadonly() bool { return m.readonly.Load() }

// mntWantWrite is fs/namespace.c mnt_want_write, reduced to its read-only
// check (no freeze protection): EROFS on a read-only mount.
func mntWantWrite(m *Mount) error {
	if m != nil && m.IsReadonly() {
		return errno.EROFS
	}
	return nil
}

// String is the canonical one-line dump.
func (m *Mount) String() string {
	mp := "/"
	if m.mountpoint != nil {
		mp = fmt.Sprintf("%q", m.mountpoint.Name().Name)
	}
	return fmt.Sprintf("mount %s type=%s on %s", m.SB.id, m.SB.Type.Name, mp)
}

// Path is struct path: a mount and a dentry in it.
type Path struct {
	Mnt    *Mount
	Dentry *Dentry
}

// mountKey finds the mount on a mountpoint (the mount hash table).
type mountKey struct {
	parent *Mount
	d      *Dentry
}

// Config configures a System.
type Config struct {
	// Dcache configures the dentry cache (its Inodes field is set by the
	// VFS).
	Dcache dcache.Config[Inode]
}

// System is one simulated machine: the kernel (RCU, log, BUG records), the
// Crypto API, the dentry cache and the mount table. Processes (NewProc)
// make syscalls on it.
type System struct {
	K      *kernel.Kernel
	Crypto *crypto.API
	Dcache *dcache.Cache[Inode]
	// dropCachesQuiet is drop_caches_sysctl_handler's static stfu: set
	// once 4 is written, it silences the handler's log line.
	dropCachesQuiet atomic.Bool

	mu      sync.Mutex
	mounts  atomic.Pointer[map[mountKey]*Mount]
	rootMnt *Mount
	nextPID atomic.Int64
	nextDev atomic.Uint64
	// clock is the machine's clock (atime.go).
	clock atomic.Int64
	// chrdevs is the cdev_map (char_dev.go), disks the block devices
	// block special files open (block_dev.go).
	chrdevs chrdevs
	disks   disks
}

// NewSystem returns a machine on k with the Crypto API api (a new one when
// nil) and no filesystem mounted yet.
func NewSystem(k *kernel.Kernel, api *crypto.API, cfg Config) *System {
	if api == nil {
		api = crypto.NewAPI()
	}
	dc := cfg.Dcache
	dc.Inodes = inodeOps
	s := &System{K: k, Crypto: api, Dcache: dcache.NewCache(dc)}
	s.clock.Store(ClockEpoch)
	s.chrDevInit()
	m := map[mountKey]*Mount{}
	s.mounts.Store(&m)
	return s
}

// Boot makes a machine on t's kernel (whose patch set, kernel.Kernel.Patches,
// every layer's code runs), mounts a new superblock of fs with opts as the
// root of its namespace (as the kernel mounts its root filesystem,
// init/do_mounts.c) and starts a process on it, with root credentials, as
// init.
func Boot(t *kernel.Task, cfg Config, fs *FileSystemType, opts MountOptions) (*System, *Proc, error) {
	sys := NewSystem(t.K, nil, cfg)
	if _, err := sys.Mount(t, nil, fs, "/", opts); err != nil {
		return nil, nil, err
	}
	return sys, sys.NewProc(t, nil), nil
}

// LoadEncoding is the casefolding part of a filesystem's fill_super
// (ext4_encoding_init, f2fs_setup_casefold): s_encoding becomes the map
// the mount gave (MountOptions.Encoding), else utf8_load of Unicode
// 12.1.0, the version mkfs records; strict (the superblock's strict
// encoding flag) is added to EncodingStrict. Errors: EINVAL when the map
// cannot be loaded.
func (sb *SuperBlock) LoadEncoding(strict bool) error {
	if sb.Encoding == nil {
		um, err := fsunicode.Load("12.1.0")
		if err != nil {
			return errno.EINVAL
		}
		sb.Encoding = um
	}
	sb.EncodingStrict = sb.EncodingStrict || strict
	return nil
}

// RootMount returns the root mount (nil before the first Mount).
func (s *System) RootMount() *Mount {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rootMnt
}

// Mount mounts a new superblock of fs. The first mount becomes the root
// of the namespace (target is ignored); later ones are mounted on the
// directory target, resolved by proc. Errors: those of FillSuper and of
// the path walk, ENOTDIR, EBUSY (target already a mountpoint).
func (s *System) Mount(t *kernel.Task, proc *Proc, fs *FileSystemType, target string, opts MountOptions) (m *Mount, err error) {
	defer t.Recover(&err)
	defer t.Trace("do_new_mount")()
	sb := &SuperBlock{Type: fs, id: opts.Source, uuid: opts.UUID, keyring: fscrypt.NewKeyring(),
		blkbits: 12, maxBytes: 1 << 44, sys: s, Encoding: opts.Encoding, EncodingStrict: opts.Strict,
		dev: s.nextDev.Add(1)}
	if sb.id == "" {
		sb.id = "none"
	}
	mounted := false
	if fs.RequiresDev {
		if opts.Device == nil {
			return nil, errno.ENOTBLK
		}
		sb.bdev = opts.Device
		// setup_bdev_super: a read-write mount of a write-protected
		// device is EACCES, after which mount(8) retries read-only.
		if !opts.ReadOnly && opts.Device.ReadOnly() {
			return nil, errno.EACCES
		}
		sb.rdonly.Store(opts.ReadOnly)
		if !opts.Device.claim() {
			return nil, errno.EBUSY
		}
		// The claim ends unless the mount succeeds, also when fill_super
		// dies in a BUG that t.Recover turns into an error (that deferred
		// call runs after this one, so err is not yet set here).
		defer func() {
			if !mounted {
				opts.Device.release()
			}
		}()
	}
	var mp Path
	s.mu.Lock()
	first := s.rootMnt == nil
	s.mu.Unlock()
	if !first {
		if proc == nil {
			return nil, errno.EINVAL
		}
		mp, err = proc.lookupPath(t, AT_FDCWD, target, LOOKUP_FOLLOW|LOOKUP_DIRECTORY)
		if err != nil {
			return nil, err
		}
	}
	if err := fs.FillSuper(t, sb, opts.Data); err != nil {
		mp.put(t)
		return nil, err
	}
	if sb.Root == nil {
		mp.put(t)
		return nil, errno.EINVAL
	}
	m = &Mount{SB: sb, Root: sb.Root}
	m.readonly.Store(opts.ReadOnly)
	m.atimeFlags.Store(MNT_RELATIME)
	s.mu.Lock()
	defer s.mu.Unlock()
	if first {
		if s.rootMnt != nil {
			return nil, errno.EBUSY
		}
		s.rootMnt = m
		mounted = true
		return m, nil
	}
	if err := s.attachMnt(t, m, mp); err != nil {
		return nil, err
	}
	mounted = true
	return m, nil
}

// attachMnt is attach_mnt: m goes on the mountpoint mp, which keeps the
// walk's reference, in a new copy of the mount table (lockless readers
// see the old or the new one). The caller holds s.mu. Errors: EBUSY when
// mp is already a mountpoint (mp's reference is then dropped).
func (s *System) attachMnt(t *kernel.Task, m *Mount, mp Path) error {
	old := *s.mounts.Load()
	k := mountKey{mp.Mnt, mp.Dentry}
	if _, busy := old[k]; busy {
		mp.put(t)
		return errno.EBUSY
	}
	m.parent, m.mountpoint = mp.Mnt, mp.Dentry
	nm := make(map[mountKey]*Mount, len(old)+1)
	for kk, v := range old {
		nm[kk] = v
	}
	nm[k] = m
	s.mounts.Store(&nm)
	mp.Dentry.SetFlags(t, dcache.Mounted)
	return nil
}

// lookupMnt is __lookup_mnt: the mount on (parent, d), if any. Lockless:
// the table is replaced, never changed in place.
func (s *System) lookupMnt(parent *Mount, d *Dentry) *Mount {
	return (*s.mounts.Load())[mountKey{parent, d}]
}

// Mounts returns the mounts in the order they were made.
func (s *System) Mounts() []*Mount {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []*Mount{}
	if s.rootMnt != nil {
		out = append(out, s.rootMnt)
	}
	var rest []*Mount
	for _, m := range *s.mounts.Load() {
		rest = append(rest, m)
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i].SB.dev < rest[j].SB.dev })
	return append(out, rest...)
}
