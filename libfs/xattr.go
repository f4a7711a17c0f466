package libfs

import (
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// Listxattr is a filesystem's ->listxattr (vfs.Listxattrer's method).
type Listxattr func(t *kernel.Task, d *vfs.Dentry, buf []byte) (int, error)

// WithListxattr returns ops with ->listxattr set to list, for the inode
// operations libfs builds (RegularFile, Symlink) of a filesystem with
// extended attributes: ext4_file_inode_operations and
// ext4_symlink_inode_operations have .listxattr = ext4_listxattr, and so
// on for f2fs and tmpfs.
func WithListxattr(ops vfs.InodeOperations, list Listxattr) vfs.InodeOperations {
	return &listxattrOps{InodeOperations: ops, list: list}
}

type listxattrOps struct {
	vfs.InodeOperations
	list Listxattr
}

// Listxattr implements vfs.Listxattrer.
func (o *listxattrOps) Listxattr(t *kernel.Task, d *vfs.Dentry, buf []byte) (int, error) {
	return o.list(t, d, buf)
}

// XattrFullName is xattr_full_name: the handler's prefix before the name
// the VFS handed it without.
func XattrFullName(h *vfs.XattrHandler, name string) string { return h.XattrPrefix() + name }

// XattrListAlways is the list() of user. (and ext4's gnu.): the names are
// listed (the user_xattr option, which the model's filesystems keep on).
func XattrListAlways(*kernel.Task, *vfs.Dentry) bool { return true }

// XattrListTrusted is ext4_xattr_trusted_list and f2fs_xattr_trusted_list:
// capable(CAP_SYS_ADMIN).
func XattrListTrusted(t *kernel.Task, _ *vfs.Dentry) bool { return t.CurrentCred().CapSysAdmin }

// PosixACLHandler is nop_posix_acl_access or nop_posix_acl_default in a
// filesystem's index map under its index: listed only for an inode with
// IS_POSIXACL, which the model's never have (no ACLs), and reached by no
// name (the VFS answers system.posix_acl_* itself).
func PosixACLHandler(name string, index int) *vfs.XattrHandler {
	return &vfs.XattrHandler{Name: name, Flags: index, List: func(*kernel.Task, *vfs.Dentry) bool { return false }}
}

// Fiemap forwards ->fiemap to the wrapped operations (vfs.Fiemapper), so
// that adding ->listxattr hides no other operation; EOPNOTSUPP when they
// have none, as ioctl_fiemap answers without ->fiemap.
func (o *listxattrOps) Fiemap(t *kernel.Task, inode *vfs.Inode, fm *vfs.Fiemap, start, length uint64) error {
	if fi, ok := o.InodeOperations.(vfs.Fiemapper); ok {
		return fi.Fiemap(t, inode, fm, start, length)
	}
	return errno.EOPNOTSUPP
}
