package memfs

import (
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// specialOps are shmem_special_inode_operations: the attributes and the
// extended attributes of a device, FIFO or socket.
var specialOps = vfs.SpecialInodeOps(listxattr)

// Mknod is shmem_mknod: a device, FIFO or socket (shmem_get_inode with
// init_special_inode) and its entry. Errors: ENOKEY (an encrypted
// directory without its key), ENOMEM, EEXIST.
func (o dirOps) Mknod(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, mode uint32, dev uint32) error {
	defer t.Trace("shmem_mknod")()
	if err := hooks.FscryptPrepareCreate(t, dir); err != nil {
		return err
	}
	inode, err := o.fs.newInode(t, dir, mode)
	if err != nil {
		return err
	}
	inode.Data.Host, inode.Data.Ops = nil, nil
	vfs.InitSpecialInode(t, inode, inode.Mode(), dev)
	inode.Op = specialOps
	if err := instantiate(t, dir, d, inode); err != nil {
		discard(t, inode)
		return err
	}
	return nil
}
