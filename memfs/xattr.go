package memfs

import (
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/libfs"
	"github.com/vfslab/vfslab/vfs"
)

// Extended attributes as tmpfs keeps them with CONFIG_TMPFS_XATTR
// (mm/shmem.c shmem_xattr_handlers, shmem_listxattr): in memory, by full
// name, in the security., trusted. and user. namespaces (user. since
// Linux 6.6), listed in name order. tmpfs charges each attribute's
// simple_xattr_space to the mount's free_ispace when the mount has an
// inode limit; memfs has none (as tmpfs with nr_inodes=0), so a set never
// fails for space.

// xattrHandlers is shmem_xattr_handlers.
var xattrHandlers = []*vfs.XattrHandler{
	{Prefix: vfs.XATTR_SECURITY_PREFIX, Get: xattrGet, Set: xattrSet},
	{Prefix: vfs.XATTR_TRUSTED_PREFIX, Get: xattrGet, Set: xattrSet},
	{Prefix: vfs.XATTR_USER_PREFIX, Get: xattrGet, Set: xattrSet},
}

// xattrGet is shmem_xattr_handler_get: simple_xattr_get of the full name.
func xattrGet(t *kernel.Task, h *vfs.XattrHandler, d *vfs.Dentry, inode *vfs.Inode, name string, buf []byte) (int, error) {
	return infoOf(inode).xattrs.Get(libfs.XattrFullName(h, name), buf)
}

// xattrSet is shmem_xattr_handler_set: simple_xattr_set of the full name,
// and the inode's ctime on success. The VFS holds the inode's i_rwsem.
func xattrSet(t *kernel.Task, h *vfs.XattrHandler, d *vfs.Dentry, inode *vfs.Inode, name string, value []byte, flags int) error {
	defer t.Trace("shmem_xattr_handler_set")()
	if _, err := infoOf(inode).xattrs.Set(libfs.XattrFullName(h, name), value, flags); err != nil {
		return err
	}
	vfs.InodeSetCtimeCurrent(t, inode)
	return nil
}

// listxattr is shmem_listxattr (simple_xattr_list): trusted. names only
// for a caller with CAP_SYS_ADMIN.
func listxattr(t *kernel.Task, d *vfs.Dentry, buf []byte) (int, error) {
	defer t.Trace("simple_xattr_list")()
	return infoOf(d.Inode()).xattrs.List(buf, t.CurrentCred().CapSysAdmin)
}

// Listxattr implements vfs.Listxattrer for directories.
func (o dirOps) Listxattr(t *kernel.Task, d *vfs.Dentry, buf []byte) (int, error) {
	return listxattr(t, d, buf)
}
