package vfs

import (
	"sort"
	"strings"
	"sync"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// Extended attributes (fs/xattr.c, include/uapi/linux/xattr.h,
// include/uapi/linux/limits.h): the setxattr, getxattr, listxattr and
// removexattr families of syscalls, the VFS's permission rules for the
// user., trusted., security. and system. namespaces, and the dispatch of
// a name to the filesystem's handler by prefix (sb->s_xattr). The model
// has no LSM (security_inode_getsecurity and friends answer as with none
// loaded) and no POSIX ACLs: a system.posix_acl_* name is EOPNOTSUPP
// (vfs_set_acl on an inode without IS_POSIXACL), which differs from ext4,
// f2fs and tmpfs as Debian builds them (their acl options are on by
// default).

// setxattr(2) flags and the limits of the xattr syscalls.
const (
	XATTR_CREATE  = 0x1 // set value, fail if attr already exists
	XATTR_REPLACE = 0x2 // set value, fail if attr does not exist
	// XATTR_NAME_MAX is the longest name, XATTR_SIZE_MAX the largest
	// value and XATTR_LIST_MAX the largest list (include/uapi/linux/limits.h).
	XATTR_NAME_MAX = 255
	XATTR_SIZE_MAX = 65536
	XATTR_LIST_MAX = 65536
)

// The namespace prefixes (include/uapi/linux/xattr.h).
const (
	XATTR_SECURITY_PREFIX  = "security."
	XATTR_SYSTEM_PREFIX    = "system."
	XATTR_TRUSTED_PREFIX   = "trusted."
	XATTR_USER_PREFIX      = "user."
	XATTR_NAME_POSIX_ACL_A = "system.posix_acl_access"
	XATTR_NAME_POSIX_ACL_D = "system.posix_acl_default"
)

// XattrHandler is struct xattr_handler: the filesystem's get and set of
// the names that start with Prefix (user., trusted., security.) or that
// are exactly Name (f2fs's system.advise). Flags is the filesystem's own
// number for the namespace (its name index on disk). Get and Set receive
// the name without the prefix; Set's value is nil to remove the
// attribute (removexattr), and an empty, non-nil slice for a value of
// length zero. List, when set, says whether the namespace's names appear
// in listxattr for the task (trusted.: capable(CAP_SYS_ADMIN)).
type XattrHandler struct {
	Name   string
	Prefix string
	Flags  int
	List   func(t *kernel.Task, d *Dentry) bool
	Get    func(t *kernel.Task, h *XattrHandler, d *Dentry, inode *Inode, name string, buf []byte) (int, error)
	Set    func(t *kernel.Task, h *XattrHandler, d *Dentry, inode *Inode, name string, value []byte, flags int) error
}

// XattrPrefix is xattr_prefix: the handler's prefix, or its full name.
func (h *XattrHandler) XattrPrefix() string {
	if h.Prefix != "" {
		return h.Prefix
	}
	return h.Name
}

// XattrHandlerCanList is xattr_handler_can_list: a handler exists and its
// list() allows the name (or it has none).
func XattrHandlerCanList(t *kernel.Task, h *XattrHandler, d *Dentry) bool {
	return h != nil && (h.List == nil || h.List(t, d))
}

// Listxattrer is implemented by the inode operations of a filesystem with
// ->listxattr (ext4_listxattr, f2fs_listxattr, simple_xattr_list): the
// names of the inode's attributes, each with its prefix and a NUL, into
// buf, or the length they need when buf is empty. Errors: ERANGE when buf
// is too small.
type Listxattrer interface {
	Listxattr(t *kernel.Task, d *Dentry, buf []byte) (int, error)
}

// SetXattrHandlers sets s_xattr: the superblock's inodes have IOP_XATTR
// (inode_init_always), and names are resolved against hs in order.
func (sb *SuperBlock) SetXattrHandlers(hs []*XattrHandler) { sb.xattr = hs }

// XattrHandlers returns s_xattr.
func (sb *SuperBlock) XattrHandlers() []*XattrHandler { return sb.xattr }

// InodeSetCtimeCurrent is inode_set_ctime_current followed by the
// filesystem's mark_inode_dirty: the attribute change of an xattr set.
func InodeSetCtimeCurrent(t *kernel.Task, inode *Inode) { inodeChanged(t, inode, false) }

// xattrResolveName is xattr_resolve_name: the handler whose prefix name
// starts with (the rest of the name is the handler's), or whose full name
// it is. A prefix alone ("user.") is EINVAL; an inode of a superblock
// without handlers (no IOP_XATTR) and a name no handler takes are
// EOPNOTSUPP.
func xattrResolveName(inode *Inode, name string) (*XattrHandler, string, error) {
	hs := inode.sb.xattr
	if hs == nil {
		return nil, "", errno.EOPNOTSUPP
	}
	for _, h := range hs {
		rest, ok := strings.CutPrefix(name, h.XattrPrefix())
		if !ok {
			continue
		}
		if (h.Prefix == "") != (rest == "") {
			if rest != "" {
				continue
			}
			return nil, "", errno.EINVAL
		}
		return h, rest, nil
	}
	return nil, "", errno.EOPNOTSUPP
}

// mayWriteXattr is may_write_xattr: an immutable or append-only inode's
// attributes cannot change (EPERM).
func mayWriteXattr(inode *Inode) error {
	if inode.Flags()&(S_IMMUTABLE|S_APPEND) != 0 {
		return errno.EPERM
	}
	return nil
}

// inodeOwnerOrCapable is inode_owner_or_capable: the caller owns the
// inode or has CAP_FOWNER.
func inodeOwnerOrCapable(cred *kernel.Cred, inode *Inode) bool {
	return cred.UID == inode.uid || capFowner(cred)
}

// xattrPermission is xattr_permission: security. and system. are the
// filesystem's to decide; trusted. needs CAP_SYS_ADMIN (EPERM to write,
// ENODATA to read); user. is only for regular files and directories
// (EPERM, ENODATA), and in a sticky directory only its owner may write;
// then inode_permission with mask.
func xattrPermission(t *kernel.Task, inode *Inode, name string, mask int) error {
	if mask&MAY_WRITE != 0 {
		if err := mayWriteXattr(inode); err != nil {
			return err
		}
	}
	if strings.HasPrefix(name, XATTR_SECURITY_PREFIX) || strings.HasPrefix(name, XATTR_SYSTEM_PREFIX) {
		return nil
	}
	cred := t.CurrentCred()
	if strings.HasPrefix(name, XATTR_TRUSTED_PREFIX) {
		if !cred.CapSysAdmin {
			if mask&MAY_WRITE != 0 {
				return errno.EPERM
			}
			return errno.ENODATA
		}
		return nil
	}
	if strings.HasPrefix(name, XATTR_USER_PREFIX) {
		if !inode.IsReg() && !inode.IsDir() {
			if mask&MAY_WRITE != 0 {
				return errno.EPERM
			}
			return errno.ENODATA
		}
		if inode.IsDir() && inode.Mode()&S_ISVTX != 0 && mask&MAY_WRITE != 0 && !inodeOwnerOrCapable(cred, inode) {
			return errno.EPERM
		}
	}
	return inodePermission(t, inode, mask)
}

// isPosixACLXattr is is_posix_acl_xattr.
func isPosixACLXattr(name string) bool {
	return name == XATTR_NAME_POSIX_ACL_A || name == XATTR_NAME_POSIX_ACL_D
}

// importXattrName is import_xattr_name / the strncpy_from_user of the
// xattr syscalls: the name as a C string (up to a NUL), which must be 1
// to XATTR_NAME_MAX bytes long (ERANGE otherwise).
func importXattrName(name string) (string, error) {
	if i := strings.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	if len(name) == 0 || len(name) > XATTR_NAME_MAX {
		return "", errno.ERANGE
	}
	return name, nil
}

// xattrHandlerFor is what vfs_setxattr, vfs_getxattr and
// vfs_removexattr share: xattr_permission with mask, the POSIX ACL names
// (EOPNOTSUPP: no ACLs in the model), then the handler of the name
// (xattr_resolve_name) with the operation the mask asks for (EOPNOTSUPP
// without it).
func xattrHandlerFor(t *kernel.Task, inode *Inode, name string, mask int) (*XattrHandler, string, error) {
	if err := xattrPermission(t, inode, name, mask); err != nil {
		return nil, "", err
	}
	if isPosixACLXattr(name) {
		return nil, "", errno.EOPNOTSUPP
	}
	h, rest, err := xattrResolveName(inode, name)
	if err != nil {
		return nil, "", err
	}
	if mask&MAY_WRITE != 0 && h.Set == nil || mask&MAY_READ != 0 && h.Get == nil {
		return nil, "", errno.EOPNOTSUPP
	}
	return h, rest, nil
}

// vfsSetxattr is vfs_setxattr: under the inode's i_rwsem,
// xattr_permission with MAY_WRITE, then the handler's set
// (__vfs_setxattr); a value of size 0 is an empty value, not a removal.
func vfsSetxattr(t *kernel.Task, d *Dentry, name string, value []byte, flags int) error {
	defer t.Trace("vfs_setxattr")()
	inode := d.Inode()
	inodeLock(t, inode, "vfs_setxattr")
	defer inodeUnlock(t, inode)
	h, rest, err := xattrHandlerFor(t, inode, name, MAY_WRITE)
	if err != nil {
		return err
	}
	if value == nil {
		value = []byte{}
	}
	return h.Set(t, h, d, inode, rest, value, flags)
}

// vfsGetxattr is vfs_getxattr: xattr_permission with MAY_READ, then the
// handler's get (__vfs_getxattr). buf empty asks for the value's length.
func vfsGetxattr(t *kernel.Task, d *Dentry, name string, buf []byte) (int, error) {
	defer t.Trace("vfs_getxattr")()
	inode := d.Inode()
	h, rest, err := xattrHandlerFor(t, inode, name, MAY_READ)
	if err != nil {
		return 0, err
	}
	return h.Get(t, h, d, inode, rest, buf)
}

// vfsListxattr is vfs_listxattr: the filesystem's ->listxattr, or
// security_inode_listsecurity (nothing, without an LSM).
func vfsListxattr(t *kernel.Task, d *Dentry, buf []byte) (int, error) {
	defer t.Trace("vfs_listxattr")()
	if l, ok := d.Inode().Op.(Listxattrer); ok {
		return l.Listxattr(t, d, buf)
	}
	return 0, nil
}

// vfsRemovexattr is vfs_removexattr: under i_rwsem, xattr_permission
// with MAY_WRITE, then the handler's set with no value and XATTR_REPLACE
// (so a missing attribute is ENODATA).
func vfsRemovexattr(t *kernel.Task, d *Dentry, name string) error {
	defer t.Trace("vfs_removexattr")()
	inode := d.Inode()
	inodeLock(t, inode, "vfs_removexattr")
	defer inodeUnlock(t, inode)
	h, rest, err := xattrHandlerFor(t, inode, name, MAY_WRITE)
	if err != nil {
		return err
	}
	return h.Set(t, h, d, inode, rest, nil, XATTR_REPLACE)
}

// setxattrCopy is setxattr_copy: the flags (EINVAL beyond XATTR_CREATE and
// XATTR_REPLACE), the name (ERANGE) and the value's size (E2BIG past
// XATTR_SIZE_MAX), checked before the path is looked up.
func setxattrCopy(name string, value []byte, flags int) (string, error) {
	if flags&^(XATTR_CREATE|XATTR_REPLACE) != 0 {
		return "", errno.EINVAL
	}
	name, err := importXattrName(name)
	if err != nil {
		return "", err
	}
	if len(value) > XATTR_SIZE_MAX {
		return "", errno.E2BIG
	}
	return name, nil
}

// xattrLookupFlags are the walk's flags of the path and l- variants.
func xattrLookupFlags(follow bool) uint32 {
	if follow {
		return LOOKUP_FOLLOW
	}
	return 0
}

// Setxattr is setxattr(2), and lsetxattr(2) when follow is false
// (path_setxattr): value (of len(value) bytes, which may be 0) becomes
// the attribute name of the file at path. flags is XATTR_CREATE (EEXIST
// if the attribute exists), XATTR_REPLACE (ENODATA if it does not), or 0.
// Errors: EINVAL (flags, or a bare namespace prefix), ERANGE (name empty
// or longer than XATTR_NAME_MAX), E2BIG (value over XATTR_SIZE_MAX), the
// walk's, EROFS, EPERM and EACCES (xattr_permission), EOPNOTSUPP (no
// handler for the namespace), ENOSPC and E2BIG (no room: ext4, f2fs),
// EEXIST, ENODATA.
func (p *Proc) Setxattr(t *kernel.Task, path, name string, value []byte, flags int, follow bool) (err error) {
	defer t.Recover(&err)
	defer t.Trace("path_setxattr")()
	t.Inc(EvSyscall)
	kname, err := setxattrCopy(name, value, flags)
	if err != nil {
		return err
	}
	pa, err := p.lookupPath(t, AT_FDCWD, path, xattrLookupFlags(follow))
	if err != nil {
		return err
	}
	defer pa.put(t)
	if err := mntWantWrite(pa.Mnt); err != nil {
		return err
	}
	return vfsSetxattr(t, pa.Dentry, kname, value, flags)
}

// Fsetxattr is fsetxattr(2): Setxattr on an open file (EBADF for a bad
// descriptor, checked first; EROFS on a read-only mount).
func (p *Proc) Fsetxattr(t *kernel.Task, fd int, name string, value []byte, flags int) (err error) {
	defer t.Recover(&err)
	defer t.Trace("fsetxattr")()
	t.Inc(EvSyscall)
	f, err := p.fdget(fd)
	if err != nil {
		return err
	}
	defer f.fput(t)
	kname, err := setxattrCopy(name, value, flags)
	if err != nil {
		return err
	}
	if err := mntWantWrite(f.path.Mnt); err != nil {
		return err
	}
	return vfsSetxattr(t, f.path.Dentry, kname, value, flags)
}

// getxattr is getxattr() and do_getxattr: the size asked for is capped at
// XATTR_SIZE_MAX, and a value that would not fit even then is E2BIG.
func getxattr(t *kernel.Task, d *Dentry, name string, buf []byte) (int, error) {
	kname, err := importXattrName(name)
	if err != nil {
		return 0, err
	}
	if len(buf) > XATTR_SIZE_MAX {
		buf = buf[:XATTR_SIZE_MAX]
	}
	n, err := vfsGetxattr(t, d, kname, buf)
	if err == errno.ERANGE && len(buf) >= XATTR_SIZE_MAX {
		return 0, errno.E2BIG
	}
	return n, err
}

// Getxattr is getxattr(2), and lgetxattr(2) when follow is false
// (path_getxattr): the value of attribute name copied into buf, and its
// length; an empty buf asks only for the length. Errors: ERANGE (name, or
// buf too small), the walk's, ENODATA (no such attribute, or trusted.
// without CAP_SYS_ADMIN, or user. on a file that is neither regular nor a
// directory), EACCES, EOPNOTSUPP, EINVAL, E2BIG.
func (p *Proc) Getxattr(t *kernel.Task, path, name string, buf []byte, follow bool) (n int, err error) {
	defer t.Recover(&err)
	defer t.Trace("path_getxattr")()
	t.Inc(EvSyscall)
	pa, err := p.lookupPath(t, AT_FDCWD, path, xattrLookupFlags(follow))
	if err != nil {
		return 0, err
	}
	defer pa.put(t)
	return getxattr(t, pa.Dentry, name, buf)
}

// Fgetxattr is fgetxattr(2). Errors: EBADF, and Getxattr's.
func (p *Proc) Fgetxattr(t *kernel.Task, fd int, name string, buf []byte) (n int, err error) {
	defer t.Recover(&err)
	defer t.Trace("fgetxattr")()
	t.Inc(EvSyscall)
	f, err := p.fdget(fd)
	if err != nil {
		return 0, err
	}
	defer f.fput(t)
	return getxattr(t, f.path.Dentry, name, buf)
}

// listxattr is listxattr(): the size asked for is capped at
// XATTR_LIST_MAX, and a list that would not fit even then is E2BIG.
func listxattr(t *kernel.Task, d *Dentry, buf []byte) (int, error) {
	if len(buf) > XATTR_LIST_MAX {
		buf = buf[:XATTR_LIST_MAX]
	}
	n, err := vfsListxattr(t, d, buf)
	if err == errno.ERANGE && len(buf) >= XATTR_LIST_MAX {
		return 0, errno.E2BIG
	}
	return n, err
}

// Listxattr is listxattr(2), and llistxattr(2) when follow is false: the
// names of the file's attributes that the caller may see, each followed
// by a NUL, into buf, and their total length (an empty buf asks for the
// length). No permission on the file is needed. Errors: the walk's,
// ERANGE (buf too small), E2BIG.
func (p *Proc) Listxattr(t *kernel.Task, path string, buf []byte, follow bool) (n int, err error) {
	defer t.Recover(&err)
	defer t.Trace("path_listxattr")()
	t.Inc(EvSyscall)
	pa, err := p.lookupPath(t, AT_FDCWD, path, xattrLookupFlags(follow))
	if err != nil {
		return 0, err
	}
	defer pa.put(t)
	return listxattr(t, pa.Dentry, buf)
}

// Flistxattr is flistxattr(2). Errors: EBADF, and Listxattr's.
func (p *Proc) Flistxattr(t *kernel.Task, fd int, buf []byte) (n int, err error) {
	defer t.Recover(&err)
	defer t.Trace("flistxattr")()
	t.Inc(EvSyscall)
	f, err := p.fdget(fd)
	if err != nil {
		return 0, err
	}
	defer f.fput(t)
	return listxattr(t, f.path.Dentry, buf)
}

// Removexattr is removexattr(2), and lremovexattr(2) when follow is false
// (path_removexattr). Errors: ERANGE (name), the walk's, EROFS, EPERM,
// EACCES, EOPNOTSUPP, EINVAL, ENODATA (no such attribute).
func (p *Proc) Removexattr(t *kernel.Task, path, name string, follow bool) (err error) {
	defer t.Recover(&err)
	defer t.Trace("path_removexattr")()
	t.Inc(EvSyscall)
	kname, err := importXattrName(name)
	if err != nil {
		return err
	}
	pa, err := p.lookupPath(t, AT_FDCWD, path, xattrLookupFlags(follow))
	if err != nil {
		return err
	}
	defer pa.put(t)
	if err := mntWantWrite(pa.Mnt); err != nil {
		return err
	}
	return vfsRemovexattr(t, pa.Dentry, kname)
}

// Fremovexattr is fremovexattr(2). Errors: EBADF, and Removexattr's.
func (p *Proc) Fremovexattr(t *kernel.Task, fd int, name string) (err error) {
	defer t.Recover(&err)
	defer t.Trace("fremovexattr")()
	t.Inc(EvSyscall)
	f, err := p.fdget(fd)
	if err != nil {
		return err
	}
	defer f.fput(t)
	kname, err := importXattrName(name)
	if err != nil {
		return err
	}
	if err := mntWantWrite(f.path.Mnt); err != nil {
		return err
	}
	return vfsRemovexattr(t, f.path.Dentry, kname)
}

// XattrListOne is xattr_list_one: name and a NUL appended to the list in
// *buf at *used (only its length counted when buf is empty). Errors:
// ERANGE when it does not fit.
func XattrListOne(buf []byte, used *int, name string) error {
	n := len(name) + 1
	if len(buf) > 0 {
		if len(buf)-*used < n {
			return errno.ERANGE
		}
		copy(buf[*used:], name)
		buf[*used+len(name)] = 0
	}
	*used += n
	return nil
}

// SimpleXattrs is an inode's extended attributes kept in memory by their
// full names (struct simple_xattrs, fs/xattr.c: an rbtree ordered by
// strcmp, which simple_xattr_list walks in order), as tmpfs keeps them.
// The zero value is empty and ready for use.
type SimpleXattrs struct {
	mu    sync.Mutex
	attrs []simpleXattr // sorted by name
}

type simpleXattr struct {
	name  string
	value []byte
}

// find is the rbtree search: the index of name, or where it would go.
func (x *SimpleXattrs) find(name string) (int, bool) {
	i := sort.Search(len(x.attrs), func(i int) bool { return x.attrs[i].name >= name })
	return i, i < len(x.attrs) && x.attrs[i].name == name
}

// Get is simple_xattr_get: the value's length, copied into buf unless buf
// is empty. Errors: ENODATA when absent, ERANGE when buf is too small.
func (x *SimpleXattrs) Get(name string, buf []byte) (int, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	i, ok := x.find(name)
	if !ok {
		return 0, errno.ENODATA
	}
	v := x.attrs[i].value
	if len(buf) > 0 {
		if len(buf) < len(v) {
			return 0, errno.ERANGE
		}
		copy(buf, v)
	}
	return len(v), nil
}

// Set is simple_xattr_set: value (copied; nil removes the attribute)
// under name with setxattr's flags. Errors: EEXIST (XATTR_CREATE over an
// existing attribute), ENODATA (XATTR_REPLACE of a missing one). It returns the size of the value replaced or removed (-1 when
// there was none), for the caller's space accounting.
func (x *SimpleXattrs) Set(name string, value []byte, flags int) (int, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	i, ok := x.find(name)
	if ok {
		if flags&XATTR_CREATE != 0 {
			return 0, errno.EEXIST
		}
		old := len(x.attrs[i].value)
		if value == nil {
			x.attrs = append(x.attrs[:i], x.attrs[i+1:]...)
		} else {
			x.attrs[i].value = append([]byte{}, value...)
		}
		return old, nil
	}
	if flags&XATTR_REPLACE != 0 {
		return 0, errno.ENODATA
	}
	if value == nil {
		return -1, nil
	}
	x.attrs = append(x.attrs, simpleXattr{})
	copy(x.attrs[i+1:], x.attrs[i:])
	x.attrs[i] = simpleXattr{name: name, value: append([]byte{}, value...)}
	return -1, nil
}

// List is simple_xattr_list: the names in order, each with a NUL, into
// buf (only counted when buf is empty), leaving out trusted. names unless
// trusted (the caller's CAP_SYS_ADMIN). Errors: ERANGE.
func (x *SimpleXattrs) List(buf []byte, trusted bool) (int, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	used := 0
	for _, a := range x.attrs {
		if !trusted && strings.HasPrefix(a.name, XATTR_TRUSTED_PREFIX) {
			continue
		}
		if err := XattrListOne(buf, &used, a.name); err != nil {
			return 0, err
		}
	}
	return used, nil
}

// Len is the number of attributes.
func (x *SimpleXattrs) Len() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.attrs)
}

// Free is simple_xattrs_free: every attribute goes.
func (x *SimpleXattrs) Free() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.attrs = nil
}

// SimpleXattrSpace is simple_xattr_space: what tmpfs charges its
// free_ispace for an attribute (a fixed 40 for the struct, the value and
// the name).
func SimpleXattrSpace(name string, size int) int { return 40 + size + len(name) }
