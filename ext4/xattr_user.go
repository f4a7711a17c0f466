package ext4

import (
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/libfs"
	"github.com/vfslab/vfslab/vfs"
)

// ext4's xattr handlers (fs/ext4/xattr_user.c, xattr_trusted.c,
// xattr_security.c, xattr_hurd.c, ext4_xattr_handler_map): user. and
// gnu. (the Hurd's namespace), on with the user_xattr option, which ext4
// always sets since Linux 6.1 (nouser_xattr is gone), trusted. (listed
// for CAP_SYS_ADMIN only) and security.; the POSIX ACL names are mapped
// for listing only and, without IS_POSIXACL in the model, never listed.
// The encryption context (index 9) has no handler: it is neither listed
// nor reachable by name.

var (
	xattrUserHandler = &vfs.XattrHandler{Prefix: vfs.XATTR_USER_PREFIX, Flags: XattrIndexUser,
		List: libfs.XattrListAlways, Get: xattrHandlerGet, Set: xattrHandlerSet}
	xattrTrustedHandler = &vfs.XattrHandler{Prefix: vfs.XATTR_TRUSTED_PREFIX, Flags: XattrIndexTrusted,
		List: libfs.XattrListTrusted, Get: xattrHandlerGet, Set: xattrHandlerSet}
	xattrSecurityHandler = &vfs.XattrHandler{Prefix: vfs.XATTR_SECURITY_PREFIX, Flags: XattrIndexSecurity,
		Get: xattrHandlerGet, Set: xattrHandlerSet}
	xattrHurdHandler = &vfs.XattrHandler{Prefix: "gnu.", Flags: XattrIndexHurd,
		List: libfs.XattrListAlways, Get: xattrHandlerGet, Set: xattrHandlerSet}
	xattrACLAccessHandler  = libfs.PosixACLHandler(vfs.XATTR_NAME_POSIX_ACL_A, XattrIndexPosixACLAccess)
	xattrACLDefaultHandler = libfs.PosixACLHandler(vfs.XATTR_NAME_POSIX_ACL_D, XattrIndexPosixACLDefault)
)

// xattrHandlers is ext4_xattr_handlers, the superblock's s_xattr.
var xattrHandlers = []*vfs.XattrHandler{xattrUserHandler, xattrTrustedHandler, xattrSecurityHandler, xattrHurdHandler}

// xattrHandlerOf is ext4_xattr_handler_map: the handler of a stored
// entry's name index (nil for the encryption context and unknown ones).
func xattrHandlerOf(index uint8) *vfs.XattrHandler {
	switch index {
	case XattrIndexUser:
		return xattrUserHandler
	case XattrIndexPosixACLAccess:
		return xattrACLAccessHandler
	case XattrIndexPosixACLDefault:
		return xattrACLDefaultHandler
	case XattrIndexTrusted:
		return xattrTrustedHandler
	case XattrIndexSecurity:
		return xattrSecurityHandler
	case XattrIndexHurd:
		return xattrHurdHandler
	}
	return nil
}

// xattrHandlerGet is ext4_xattr_user_get and its siblings: ext4_xattr_get
// of the handler's index.
func xattrHandlerGet(t *kernel.Task, h *vfs.XattrHandler, d *vfs.Dentry, inode *vfs.Inode, name string, buf []byte) (int, error) {
	defer t.Trace("ext4_xattr_get")()
	return EXT4_I(inode).xattrGet(uint8(h.Flags), name, buf)
}

// xattrHandlerSet is ext4_xattr_user_set and its siblings: ext4_xattr_set
// of the handler's index in a handle of its own, which writes the inode.
// The VFS holds the inode's i_rwsem.
func xattrHandlerSet(t *kernel.Task, h *vfs.XattrHandler, d *vfs.Dentry, inode *vfs.Inode, name string, value []byte, flags int) error {
	defer t.Trace("ext4_xattr_set")()
	ei := EXT4_I(inode)
	if err := ei.xattrSet(t, uint8(h.Flags), name, value, flags); err != nil {
		return err
	}
	ei.SB.dirtyInodes(t, inode)
	return nil
}

// listxattr is ext4_listxattr.
func listxattr(t *kernel.Task, d *vfs.Dentry, buf []byte) (int, error) {
	defer t.Trace("ext4_listxattr")()
	return EXT4_I(d.Inode()).xattrList(t, d, buf)
}

// Listxattr implements vfs.Listxattrer for directories
// (ext4_dir_inode_operations.listxattr).
func (o *dirOps) Listxattr(t *kernel.Task, d *vfs.Dentry, buf []byte) (int, error) {
	return listxattr(t, d, buf)
}

// Listxattr implements vfs.Listxattrer on a read-only image's files.
func (o roInodeOps) Listxattr(t *kernel.Task, d *vfs.Dentry, buf []byte) (int, error) {
	return listxattr(t, d, buf)
}

// inodeXattrs is the inode's xattrs as libfs.XattrStore, for
// ext4_cryptops' get_context and set_context.
type inodeXattrs Inode

// Get implements libfs.XattrStore (ext4_xattr_get).
func (x *inodeXattrs) Get(index uint8, name string, buf []byte) (int, error) {
	return (*Inode)(x).xattrGet(index, name, buf)
}

// Set implements libfs.XattrStore (ext4_xattr_set_handle in the caller's
// handle: the caller writes the inode).
func (x *inodeXattrs) Set(t *kernel.Task, index uint8, name string, value []byte, flags int) error {
	return (*Inode)(x).xattrSet(t, index, name, value, flags)
}

var _ libfs.XattrStore = (*inodeXattrs)(nil)
