package f2fs

import (
	"encoding/binary"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// Special files (fs/f2fs/namei.c f2fs_mknod; __set_inode_rdev and
// __get_inode_rdev, fs/f2fs/inode.c): a device's number is in the first
// word of the inode's addresses (i_addr after the extra attributes) in
// the old encoding when it fits, else in the second in the new one; a
// special inode has no data, no inline data, and the inline xattr area.

// specialInodeOps is f2fs_special_inode_operations.
var specialInodeOps = vfs.SpecialInodeOps(listxattr)

// Mknod is f2fs_mknod: f2fs_new_inode, init_special_inode and
// f2fs_add_link. Errors: EROFS, ENOKEY, ENOSPC, ENOMEM, EEXIST and those
// of the entry.
func (o *dirOps) Mknod(t *kernel.Task, vdir *vfs.Inode, d *vfs.Dentry, mode uint32, dev uint32) error {
	defer t.Trace("f2fs_mknod")()
	if err := o.sbi.checkWritable(); err != nil {
		return err
	}
	dir := F2FS_I(vdir)
	fi, err := o.sbi.newInode(t, dir, mode)
	if err != nil {
		return err
	}
	vfs.InitSpecialInode(t, &fi.Inode, fi.Mode(), dev)
	fi.Op = specialInodeOps
	if err := addLink(t, dir, d, &fi.Inode); err != nil {
		discard(t, fi)
		return err
	}
	dcache.DInstantiate(t, d, &fi.Inode)
	return nil
}

// setInodeRdev is __set_inode_rdev on the inode block's addresses from
// word base.
func setInodeRdev(n Node, base int, rdev uint32) {
	addr := n[inodeIAddrOff+4*base:]
	if vfs.OldValidDev(rdev) {
		binary.LittleEndian.PutUint32(addr[0:], uint32(vfs.OldEncodeDev(rdev)))
		binary.LittleEndian.PutUint32(addr[4:], 0)
		return
	}
	binary.LittleEndian.PutUint32(addr[0:], 0)
	binary.LittleEndian.PutUint32(addr[4:], vfs.NewEncodeDev(rdev))
	binary.LittleEndian.PutUint32(addr[8:], 0)
}

// inodeRdev is __get_inode_rdev.
func inodeRdev(n Node, base int) uint32 {
	addr := n[inodeIAddrOff+4*base:]
	if v := binary.LittleEndian.Uint32(addr[0:]); v != 0 {
		return vfs.OldDecodeDev(uint16(v))
	}
	return vfs.NewDecodeDev(binary.LittleEndian.Uint32(addr[4:]))
}
