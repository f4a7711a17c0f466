package vfs

import (
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// Special files (fs/inode.c init_special_inode): a character or block
// device, a FIFO or a socket has no data of its own; its file operations
// are the VFS's (def_chr_fops, def_blk_fops, pipefifo_fops,
// bad_sock_fops) whatever the filesystem, and its i_rdev names the
// device. Opening one never reaches the filesystem.

// InitSpecialInode is init_special_inode: the file operations of the
// type and, for a device, its number (the kernel's dev_t, MKDEV). A mode
// of another type is logged as bogus, as the kernel does.
func InitSpecialInode(t *kernel.Task, inode *Inode, mode uint32, rdev uint32) {
	inode.mode.Store(mode)
	switch mode & S_IFMT {
	case S_IFCHR:
		inode.Fop = defChrFops
		inode.rdev = rdev
	case S_IFBLK:
		inode.Fop = defBlkFops
		inode.rdev = rdev
	case S_IFIFO:
		inode.Fop = pipefifoFops
	case S_IFSOCK:
		inode.Fop = badSockFops{}
	default:
		t.Printk("init_special_inode: bogus i_mode (%o) for inode %s:%d", mode, inode.sb.id, inode.ino)
	}
}

// Rdev is i_rdev.
func (i *Inode) Rdev() uint32 { return i.rdev }

// IsSpecial reports a device, FIFO or socket.
func (i *Inode) IsSpecial() bool {
	switch i.Mode() & S_IFMT {
	case S_IFCHR, S_IFBLK, S_IFIFO, S_IFSOCK:
		return true
	}
	return false
}

// badSockFops is bad_sock_fops: a socket's inode in a filesystem cannot
// be opened (sock_no_open: ENXIO).
type badSockFops struct{ NoFileOps }

// Open is sock_no_open.
func (badSockFops) Open(t *kernel.Task, inode *Inode, f *File) error { return errno.ENXIO }

// SpecialInodeOps are the inode operations of a filesystem's special
// files (ext4_special_inode_operations, f2fs_special_inode_operations,
// shmem_special_inode_operations): the attributes and, through list, the
// extended attributes; nothing else.
func SpecialInodeOps(list func(t *kernel.Task, d *Dentry, buf []byte) (int, error)) InodeOperations {
	return &specialInodeOps{list: list}
}

type specialInodeOps struct {
	NoInodeOps
	list func(t *kernel.Task, d *Dentry, buf []byte) (int, error)
}

// Listxattr implements Listxattrer.
func (o *specialInodeOps) Listxattr(t *kernel.Task, d *Dentry, buf []byte) (int, error) {
	if o.list == nil {
		return 0, nil
	}
	return o.list(t, d, buf)
}

// Setattr of a special file: attributes only, nothing to truncate.
func (o *specialInodeOps) Setattr(t *kernel.Task, d *Dentry, attr *Iattr) error { return nil }
