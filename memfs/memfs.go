// Package memfs is a minimal in-memory filesystem for the VFS, in the
// manner of ramfs, tmpfs and libfs's simple_* operations. Like Linux's
// tmpfs (mm/shmem.c) it has no fscrypt: no fscrypt_operations on its
// superblock, no ->unlocked_ioctl (the fscrypt ioctls are ENOTTY, as
// vfs_ioctl answers without one), and an ->open that is
// generic_file_open, which never calls fscrypt_file_open.
//
// For the layer tests that need an encrypting filesystem without a block
// device, the test_fscrypt mount option (Options.TestFscrypt) gives it
// the fscrypt support ext4 has, which no tmpfs has: encryption policies
// on directories, names stored as the ciphertext fscrypt produces
// (listed as no-key names without the key), file contents encrypted per
// 4 KiB block through fscrypt's contents encryption and the Crypto API,
// encrypted symlink targets, and the hooks ext4 calls (fscrypt_file_open
// from ->open, fscrypt_prepare_lookup from ->lookup, the prepare hooks
// from link, rename, setattr and symlink).
//
// A directory is a map from on-disk names to inodes, plus the creation
// order that getdents lists them in (positions 0 and 1 are "." and "..",
// an entry's position is fixed when it is added, so a listing resumes
// correctly after concurrent changes). Inodes stay in memory while they
// have links; the last iput of an unlinked inode frees its data.
//
// It registers as "memfs", a type without a device (like ramfs). Mount it
// with vfs.System.Mount(t, proc, memfs.Type, target, vfs.MountOptions{Data:
// opts.MountData()}); an empty option string gives the defaults (tmpfs:
// no encryption).
package memfs

import (
	"sort"
	"strings"
	"sync"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/libfs"
	"github.com/vfslab/vfslab/vfs"
)

// Type is the memfs filesystem type.
var Type = &vfs.FileSystemType{Name: "memfs", FillSuper: fillSuper, Magic: 0x858458f6}

// Options are memfs's mount options.
type Options struct {
	// TestFscrypt gives memfs ext4's fscrypt support (s_cop, the fscrypt
	// ioctls, fscrypt_file_open in ->open), which tmpfs does not have: a
	// test double for the layer tests (hooks, conformance) that need an
	// encrypting filesystem without a block device. Never set it where
	// memfs stands for tmpfs (a machine's / and /tmp).
	TestFscrypt bool
	// UnsafeSkipRenameHook makes rename skip fscrypt_prepare_rename, so a
	// test can move a file into a directory whose policy forbids it, as an
	// offline tool editing the disk could. Never set it otherwise.
	UnsafeSkipRenameHook bool
}

// FS is a mounted memfs (s_fs_info).
type FS struct {
	sb   *vfs.SuperBlock
	opts Options
	// The operation tables, shared by the inodes.
	dirOps      vfs.InodeOperations
	dirFileOps  vfs.FileOperations
	symlinkOps  vfs.InodeOperations
	fileOps     vfs.InodeOperations
	fileFileOps vfs.FileOperations
}

// Allocation sites of memfs.
var (
	infoCache = kmem.NewCache("memfs_inode_info", 96)
	siteBlock = kmem.NewSite("memfs:block")
)

// blockSize is the size of a data block, the data unit of contents
// encryption.
const (
	blockBits = 12
	blockSize = 1 << blockBits
)

// info is memfs's part of an inode (the filesystem-private data of
// struct inode).
type info struct {
	// ctx is the fscrypt context, as an xattr would hold it; mu protects
	// it.
	ctx []byte
	mu  sync.Mutex
	// A regular file's pages are the VFS inode's i_data, whose lock
	// protects blocks.
	blocks [][]byte // file data; nil blocks are holes
	// Directory state, under the directory's i_rwsem.
	entries    map[string]*dirent
	order      []*dirent // by position
	nextCookie int64
	// target is a symlink's on-disk target: the bytes and a NUL, or
	// fscrypt_symlink_data for an encrypted one.
	target []byte
	// xattrs are the extended attributes (xattr.go).
	xattrs vfs.SimpleXattrs
}

// dirent is a directory entry: an on-disk name and an inode at a position.
type dirent struct {
	name   string
	inode  *vfs.Inode
	cookie int64
}

func infoOf(i *vfs.Inode) *info { return i.Private.(*info) }

func fillSuper(t *kernel.Task, sb *vfs.SuperBlock, data string) error {
	fs := &FS{sb: sb}
	if err := fs.opts.parse(t, sb.Type, data); err != nil {
		return err
	}
	fs.dirOps, fs.dirFileOps = &dirOps{fs: fs}, &dirFileOps{fs: fs}
	fs.symlinkOps = libfs.WithListxattr(libfs.Symlink(func(i *vfs.Inode) []byte { return infoOf(i).target }), listxattr)
	fs.fileOps, fs.fileFileOps = libfs.RegularFile("memfs", fs.ioctl)
	if !fs.opts.TestFscrypt {
		fs.fileFileOps = shmemFileOps{fs.fileFileOps}
	}
	fs.fileOps = libfs.WithListxattr(fs.fileOps, listxattr)
	sb.SetXattrHandlers(xattrHandlers)
	sb.FsInfo = fs
	sb.SetOps(fs)
	sb.SetBlockBits(blockBits, 1<<44)
	if fs.opts.TestFscrypt {
		sb.SetCop(fs)
	}
	hooks.SetSBDops(sb)
	root, err := fs.allocInode(t, vfs.S_IFDIR|0o755)
	if err != nil {
		return err
	}
	root.SetNlink(2)
	return sb.MakeRoot(t, root)
}

// Of returns the memfs of a superblock, or nil.
func Of(sb *vfs.SuperBlock) *FS {
	fs, _ := sb.FsInfo.(*FS)
	return fs
}

// allocInode is new_inode with memfs's operations for the file type.
func (fs *FS) allocInode(t *kernel.Task, mode uint32) (*vfs.Inode, error) {
	if err := infoCache.Alloc(&t.Ctx, kmem.GFPKernel); err != nil {
		return nil, err
	}
	inode, err := vfs.NewInode(t, fs.sb, fs.sb.NextIno(), mode)
	if err != nil {
		infoCache.Free(&t.Ctx)
		return nil, err
	}
	in := &info{}
	inode.Private = in
	switch mode & vfs.S_IFMT {
	case vfs.S_IFDIR:
		in.entries = map[string]*dirent{}
		in.nextCookie = 2
		inode.Op = fs.dirOps
		inode.Fop = fs.dirFileOps
	case vfs.S_IFLNK:
		inode.Op = fs.symlinkOps
		inode.Fop = noFileOps
	default:
		inode.Data.Host, inode.Data.Ops = inode, aops{}
		inode.Op = fs.fileOps
		inode.Fop = fs.fileFileOps
	}
	return inode, nil
}

var noFileOps vfs.FileOperations = vfs.NoFileOps{}

// discard drops a new inode that never got a name.
func discard(t *kernel.Task, inode *vfs.Inode) {
	inode.ClearNlink()
	vfs.Iput(t, inode)
}

// newInode is __ext4_new_inode's part that matters here: a new inode in
// dir, encrypted with dir's policy if dir is encrypted
// (fscrypt_prepare_new_inode and fscrypt_set_context). Errors: ENOKEY,
// ENOMEM.
func (fs *FS) newInode(t *kernel.Task, dir *vfs.Inode, mode uint32) (*vfs.Inode, error) {
	inode, err := fs.allocInode(t, mode)
	if err != nil {
		return nil, err
	}
	vfs.InodeInitOwner(t, inode, dir, mode)
	if dir.IsCasefolded() && inode.IsDir() {
		inode.SetFlags(vfs.S_CASEFOLD)
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

// EvictInode implements vfs.SuperOperations: the data of an inode with
// no links goes, and in every case its key (fscrypt_put_encryption_info).
func (fs *FS) EvictInode(t *kernel.Task, inode *vfs.Inode) {
	if inode.Nlink() == 0 {
		in := infoOf(inode)
		inode.Data.Lock()
		for _, b := range in.blocks {
			if b != nil {
				t.Kfree(siteBlock, b)
			}
		}
		in.blocks = nil
		inode.Data.Unlock()
		in.xattrs.Free()
		infoCache.Free(&t.Ctx)
	}
	vfs.ClearInode(inode)
	fscrypt.PutEncryptionInfo(t, inode)
}

// DropInode implements vfs.SuperOperations: generic_drop_inode, or
// fscrypt_drop_inode once the inode's master key is removed.
func (fs *FS) DropInode(t *kernel.Task, inode *vfs.Inode) bool { return vfs.GenericDropInode(t, inode) }

// GetContext implements fscrypt.Operations.
func (fs *FS) GetContext(t *kernel.Task, inode fscrypt.Inode, buf []byte) (int, error) {
	in := infoOf(inode.(*vfs.Inode))
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.ctx == nil {
		return 0, errno.ENODATA
	}
	if len(buf) < len(in.ctx) {
		return 0, errno.ERANGE
	}
	return copy(buf, in.ctx), nil
}

// SetContext implements fscrypt.Operations: store the context and set
// S_ENCRYPTED.
func (fs *FS) SetContext(t *kernel.Task, inode fscrypt.Inode, ctx []byte, fsData any) error {
	i := inode.(*vfs.Inode)
	in := infoOf(i)
	in.mu.Lock()
	in.ctx = append([]byte(nil), ctx...)
	in.mu.Unlock()
	i.SetFlags(vfs.S_ENCRYPTED)
	return nil
}

// EmptyDir implements fscrypt.Operations.
func (fs *FS) EmptyDir(t *kernel.Task, inode fscrypt.Inode) bool {
	return len(infoOf(inode.(*vfs.Inode)).entries) == 0
}

// HasStableInodes implements fscrypt.Operations: inode numbers never
// change.
func (fs *FS) HasStableInodes() bool { return true }

// Has32BitInodes implements fscrypt.Operations.
func (fs *FS) Has32BitInodes() bool { return true }

// SupportsSubblockDataUnits implements fscrypt.Operations: the data unit
// is the block.
func (fs *FS) SupportsSubblockDataUnits() bool { return false }

// EvictDecryptedInode implements fscrypt.Operations for a key removal
// (vfs.EvictDecryptedInode).
func (fs *FS) EvictDecryptedInode(t *kernel.Task, inode fscrypt.Inode) {
	vfs.EvictDecryptedInode(t, inode.(*vfs.Inode))
}

// UnsafeSetContext stores ctx as inode's fscrypt context without any
// check (nil removes it), as an offline tool writing the xattr would; with
// it a test builds the inconsistent states that make fscrypt_file_open
// return EPERM. The inode's key, if set up, is forgotten.
func UnsafeSetContext(t *kernel.Task, inode *vfs.Inode, ctx []byte) {
	in := infoOf(inode)
	in.mu.Lock()
	in.ctx = append([]byte(nil), ctx...)
	if ctx == nil {
		in.ctx = nil
	}
	in.mu.Unlock()
	if ctx == nil {
		inode.ClearFlags(vfs.S_ENCRYPTED)
	} else {
		inode.SetFlags(vfs.S_ENCRYPTED)
	}
	fscrypt.PutEncryptionInfo(t, inode)
	inode.ClearLink()
}

// Context returns a copy of inode's stored fscrypt context (nil if none).
func Context(inode *vfs.Inode) []byte {
	in := infoOf(inode)
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]byte(nil), in.ctx...)
}

// DiskNames returns the on-disk names of a directory's entries in listing
// order: ciphertext for an encrypted directory. The caller must not run it
// concurrently with changes to the directory.
func DiskNames(dir *vfs.Inode) []string {
	dir.Rwsem.RLock()
	defer dir.Rwsem.RUnlock()
	var out []string
	for _, e := range infoOf(dir).order {
		out = append(out, e.name)
	}
	return out
}

// RawBlocks returns copies of a regular file's stored blocks (ciphertext
// for an encrypted file; nil for holes).
func RawBlocks(inode *vfs.Inode) [][]byte {
	in := infoOf(inode)
	inode.Data.Lock()
	defer inode.Data.Unlock()
	out := make([][]byte, len(in.blocks))
	for i, b := range in.blocks {
		if b != nil {
			out[i] = append([]byte(nil), b...)
		}
	}
	return out
}

// RawTarget returns a symlink's on-disk target.
func RawTarget(inode *vfs.Inode) []byte { return append([]byte(nil), infoOf(inode).target...) }

// Directory helpers; the caller holds the directory's i_rwsem.

// findEntry finds the entry fname names (ext4_find_entry's match with
// fscrypt_match_name).
func findEntry(dir *vfs.Inode, fname *fscrypt.Name) *dirent {
	in := infoOf(dir)
	if fname.DiskName != nil {
		return in.entries[string(fname.DiskName)]
	}
	for _, e := range in.order {
		if fscrypt.MatchName(fname, []byte(e.name)) {
			return e
		}
	}
	return nil
}

// addEntry adds name -> inode at the next position.
func addEntry(dir *vfs.Inode, name string, inode *vfs.Inode) {
	in := infoOf(dir)
	e := &dirent{name: name, inode: inode, cookie: in.nextCookie}
	in.nextCookie++
	in.entries[name] = e
	in.order = append(in.order, e)
	dir.SetSize(int64(len(in.entries)) * bogoDirentSize)
}

// removeEntry removes e.
func removeEntry(dir *vfs.Inode, e *dirent) {
	in := infoOf(dir)
	delete(in.entries, e.name)
	i := sort.Search(len(in.order), func(i int) bool { return in.order[i].cookie >= e.cookie })
	if i < len(in.order) && in.order[i] == e {
		in.order = append(in.order[:i], in.order[i+1:]...)
	}
	dir.SetSize(int64(len(in.entries)) * bogoDirentSize)
}

// bogoDirentSize is BOGO_DIRENT_SIZE: the size simple filesystems count
// per directory entry.
const bogoDirentSize = 20

// lookupName prepares the name of a dentry of dir for a search
// (fscrypt_setup_filename with lookup set, which decodes no-key names).
// Errors: ENOENT for a name that cannot exist, ENOKEY, ENOMEM.
func lookupName(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, fname *fscrypt.Name) error {
	return fscrypt.SetupFilename(t, dir, []byte(d.Name().Name), true, fname)
}

// entryOf finds the entry of a positive dentry of dir. Errors: ENOENT,
// ENOKEY, ENOMEM.
func entryOf(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry) (*dirent, error) {
	var fname fscrypt.Name
	if err := lookupName(t, dir, d, &fname); err != nil {
		return nil, err
	}
	defer fscrypt.FreeFilename(t, &fname)
	e := findEntry(dir, &fname)
	if e == nil || e.inode != d.Inode() {
		return nil, errno.ENOENT
	}
	return e, nil
}

// createName is the on-disk name of a new entry for the negative dentry d
// (fscrypt_setup_filename without lookup: ENOKEY without the key). An
// existing entry of that name gives EEXIST, as ext4_find_dest_de does: the
// dentry can be a stale no-key negative one, looked up before another task
// added the directory's key, under which the name does exist.
func createName(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry) (string, error) {
	var fname fscrypt.Name
	if err := fscrypt.SetupFilename(t, dir, []byte(d.Name().Name), false, &fname); err != nil {
		return "", err
	}
	defer fscrypt.FreeFilename(t, &fname)
	name := string(fname.DiskName)
	if infoOf(dir).entries[name] != nil {
		return "", errno.EEXIST
	}
	return name, nil
}

// instantiate adds d's name to dir for inode and attaches the inode to d
// (the dentry takes the caller's inode reference).
func instantiate(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, inode *vfs.Inode) error {
	name, err := createName(t, dir, d)
	if err != nil {
		return err
	}
	addEntry(dir, name, inode)
	dcache.DInstantiate(t, d, inode)
	return nil
}

// Boot makes a machine on k whose root filesystem is a memfs with opts
// (nil: the defaults), and starts a process on it; the patch variants are
// those of t's kernel. t is the task that mounts.
func Boot(t *kernel.Task, cfg vfs.Config, opts *Options) (*vfs.System, *vfs.Proc, error) {
	var data string
	if opts != nil {
		data = opts.MountData()
	}
	return vfs.Boot(t, cfg, Type, vfs.MountOptions{Source: "memfs", Data: data})
}

func init() { vfs.MustRegister(Type) }

// MountData renders the options as memfs's mount option string:
// "test_fscrypt" and "unsafe_skip_rename_hook".
func (o Options) MountData() string {
	var opts []string
	if o.TestFscrypt {
		opts = append(opts, "test_fscrypt")
	}
	if o.UnsafeSkipRenameHook {
		opts = append(opts, "unsafe_skip_rename_hook")
	}
	return strings.Join(opts, ",")
}

// parse reads a mount option string (MountData's options); an unknown one
// is EINVAL with the mount API's log line.
func (o *Options) parse(t *kernel.Task, fst *vfs.FileSystemType, data string) error {
	for _, opt := range vfs.ParseMountData(data) {
		switch {
		case opt.HasValue:
			return vfs.BadValue(t, fst, opt)
		case opt.Key == "test_fscrypt":
			o.TestFscrypt = true
		case opt.Key == "unsafe_skip_rename_hook":
			o.UnsafeSkipRenameHook = true
		default:
			return vfs.UnknownParameter(t, fst, opt)
		}
	}
	return nil
}
