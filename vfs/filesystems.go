package vfs

import (
	"strings"
	"sync"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// The filesystem registry (fs/filesystems.c): the types that can be
// mounted, by name, in the order they registered.
var (
	fsMu    sync.RWMutex
	fsTypes []*FileSystemType
)

// RegisterFilesystem is register_filesystem: it adds fs to the types that
// Mount and GetFsType find by name. A filesystem registers itself from its
// package's init. Errors: EBUSY when a type of that name is registered,
// EINVAL for an empty name.
func RegisterFilesystem(fs *FileSystemType) error {
	if fs.Name == "" || strings.ContainsAny(fs.Name, " \t\n.") {
		return errno.EINVAL
	}
	fsMu.Lock()
	defer fsMu.Unlock()
	for _, f := range fsTypes {
		if f.Name == fs.Name {
			return errno.EBUSY
		}
	}
	fsTypes = append(fsTypes, fs)
	return nil
}

// UnregisterFilesystem is unregister_filesystem. Errors: EINVAL when fs is
// not registered.
func UnregisterFilesystem(fs *FileSystemType) error {
	fsMu.Lock()
	defer fsMu.Unlock()
	for i, f := range fsTypes {
		if f == fs {
			fsTypes = append(fsTypes[:i:i], fsTypes[i+1:]...)
			return nil
		}
	}
	return errno.EINVAL
}

// GetFsType is get_fs_type: the registered type called name. Errors:
// ENODEV, as mount(2) fails for an unknown type.
func GetFsType(name string) (*FileSystemType, error) {
	fsMu.RLock()
	defer fsMu.RUnlock()
	for _, f := range fsTypes {
		if f.Name == name {
			return f, nil
		}
	}
	return nil, errno.ENODEV
}

// Filesystems returns the registered types in registration order, as
// /proc/filesystems lists them.
func Filesystems() []*FileSystemType {
	fsMu.RLock()
	defer fsMu.RUnlock()
	return append([]*FileSystemType(nil), fsTypes...)
}

// FilesystemNames returns the names of the registered types, for help
// texts and error messages that list the valid choices.
func FilesystemNames() []string {
	var names []string
	for _, f := range Filesystems() {
		names = append(names, f.Name)
	}
	return names
}

// MountOption is one comma-separated element of a mount's data string:
// "key" or "key=value".
type MountOption struct {
	Key, Value string
	// HasValue tells "key=" from "key".
	HasValue bool
}

// String renders the option as it was written.
func (o MountOption) String() string {
	if o.HasValue {
		return o.Key + "=" + o.Value
	}
	return o.Key
}

// ParseMountData splits a mount's data string into options, as the mount
// API's generic_parse_monolithic (vfs_parse_monolithic_sep) does: options
// are separated by commas; empty ones are skipped.
func ParseMountData(data string) []MountOption {
	var opts []MountOption
	for _, s := range strings.Split(data, ",") {
		if s == "" {
			continue
		}
		k, v, has := strings.Cut(s, "=")
		opts = append(opts, MountOption{Key: k, Value: v, HasValue: has})
	}
	return opts
}

// UnknownParameter logs the mount API's refusal of an option the
// filesystem does not know (fs_parse's invalf: "<type>: Unknown parameter
// '<key>'") and returns EINVAL.
func UnknownParameter(t *kernel.Task, fs *FileSystemType, o MountOption) error {
	t.Printk("%s: Unknown parameter '%s'", fs.Name, o.Key)
	return errno.EINVAL
}

// BadValue logs the mount API's refusal of a value ("<type>: Bad value for
// '<key>'") and returns EINVAL.
func BadValue(t *kernel.Task, fs *FileSystemType, o MountOption) error {
	t.Printk("%s: Bad value for '%s'", fs.Name, o.Key)
	return errno.EINVAL
}

// Features are the mkfs features that sim, the CLI and the tests ask of a
// filesystem type they know only by name; each type renders them as its
// own mkfs arguments (FileSystemType.FeatureArgs), as mkfs.ext4 -O
// casefold,encrypt and mkfs.f2fs -O casefold,encrypt -C utf8 differ.
type Features struct {
	// Encrypt is the encrypt feature (fscrypt policies can be set).
	Encrypt bool
	// Casefold is the casefold feature with the utf8 encoding; Strict and
	// NoCompatFallback are its strict and no-compat-fallback (hashonly)
	// encoding flags.
	Casefold, Strict, NoCompatFallback bool
	// Inodes is the number of inodes where the type has a fixed table
	// (0: the type's default).
	Inodes uint32
}

// BootNew boots a machine on t's kernel whose root is a new filesystem of
// type fs: a fresh block device formatted with the features f when the
// type needs one (FeatureArgs, then Mkfs), mounted with the option string data, as
// Boot does. Errors: the mkfs's, the mount's.
func BootNew(t *kernel.Task, cfg Config, fs *FileSystemType, f Features, data string) (*System, *Proc, error) {
	opts, err := FormatFeatures(t, fs, f, data)
	if err != nil {
		return nil, nil, err
	}
	return Boot(t, cfg, fs, opts)
}

// FormatFeatures is FormatNew with the mkfs arguments of the features f
// (the type's FeatureArgs): the mount options of a new filesystem, for a
// caller that sets its device up before it mounts it (a loop device).
func FormatFeatures(t *kernel.Task, fs *FileSystemType, f Features, data string) (MountOptions, error) {
	var args []string
	if fs.FeatureArgs != nil {
		args = fs.FeatureArgs(f)
	}
	return FormatNew(t, fs, args, data)
}

// FormatNew returns the mount options of a new filesystem of type fs: for
// a type that requires a device, a fresh one formatted by the type's Mkfs
// with args; the mount's option string is data. Errors: ENODEV for a type
// that requires a device and has no Mkfs, the mkfs's.
func FormatNew(t *kernel.Task, fs *FileSystemType, args []string, data string) (MountOptions, error) {
	opts := MountOptions{Source: fs.Name, Data: data}
	if !fs.RequiresDev {
		return opts, nil
	}
	if fs.Mkfs == nil {
		return opts, errno.ENODEV
	}
	opts.Device = NewGrowingBlockDevice()
	if err := fs.Mkfs(t, opts.Device, args); err != nil {
		return opts, err
	}
	return opts, nil
}

// MustRegister registers a built-in filesystem from its package's init;
// a name registered twice is a programming error, found at start-up.
func MustRegister(fs *FileSystemType) {
	if err := RegisterFilesystem(fs); err != nil {
		panic("register_filesystem " + fs.Name + ": " + err.Error())
	}
}

// DeviceSuper is what a filesystem's mkfs leaves on a device for fill_super
// to find. Until the simulated devices hold whole on-disk images, it stands
// in for the superblock block: FsType is the magic (the type whose mkfs
// wrote it) and Features the filesystem's parsed mkfs settings.
type DeviceSuper struct {
	FsType   string
	Features any
}

// Remounter is implemented by the super operations of a filesystem that
// can change its options on a mounted superblock (->reconfigure,
// f2fs_reconfigure): data is the remount's option string.
type Remounter interface {
	Remount(t *kernel.Task, sb *SuperBlock, data string) error
}

// Remount is mount(2) with MS_REMOUNT on the mount whose root is target
// (do_remount): the filesystem parses data and changes the options it
// allows to change. Errors: EINVAL when target is not a mount's root or
// the filesystem cannot remount, the filesystem's errors, the walk's.
func (s *System) Remount(t *kernel.Task, proc *Proc, target, data string) (err error) {
	defer t.Recover(&err)
	defer t.Trace("do_remount")()
	pa, err := proc.lookupPath(t, AT_FDCWD, target, LOOKUP_FOLLOW|LOOKUP_DIRECTORY)
	if err != nil {
		return err
	}
	defer pa.put(t)
	if pa.Dentry != pa.Mnt.Root {
		return errno.EINVAL
	}
	r, ok := pa.Mnt.SB.op.(Remounter)
	if !ok {
		return errno.EINVAL
	}
	return r.Remount(t, pa.Mnt.SB, data)
}
