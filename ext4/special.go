package ext4

import (
	"encoding/binary"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// Special files (fs/ext4/namei.c ext4_mknod, inode.c's i_rdev in
// i_block): a device's number is in i_block[0] in the old 16-bit
// encoding when major and minor fit in a byte each, else in i_block[1]
// in the new 32-bit one (i_block[0] zero); a FIFO's or socket's i_block
// is zero. Special inodes have no extents (EXT4_EXTENTS_FL is only for
// files, directories and symlinks, __ext4_new_inode) and no data.

// specialInodeOps is ext4_special_inode_operations.
var specialInodeOps = vfs.SpecialInodeOps(listxattr)

// Mknod is ext4_mknod: a new inode of the special type (with the
// directory's encryption rules for its name: fscrypt_prepare_new_inode
// gives special files no context of their own), init_special_inode, and
// its entry. Errors: EROFS, ENOKEY, ENOSPC, ENOMEM, EEXIST and those of
// the entry.
func (o *dirOps) Mknod(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, mode uint32, dev uint32) error {
	defer t.Trace("ext4_mknod")()
	if err := o.sb.writable(); err != nil {
		return err
	}
	inode, err := o.sb.newInode(t, EXT4_I(dir), mode)
	if err != nil {
		return err
	}
	vfs.InitSpecialInode(t, &inode.Inode, inode.Mode(), dev)
	inode.Op = specialInodeOps
	if err := addEntry(t, dir, d, &inode.Inode); err != nil {
		discard(t, inode)
		return err
	}
	o.sb.dirtyInodes(t, dir, &inode.Inode)
	dcache.DInstantiate(t, d, &inode.Inode)
	return nil
}

// putDeviceNumber is ext4_fill_raw_inode's i_block for a device.
func putDeviceNumber(iblock []byte, rdev uint32) {
	if vfs.OldValidDev(rdev) {
		binary.LittleEndian.PutUint32(iblock[0:], uint32(vfs.OldEncodeDev(rdev)))
		binary.LittleEndian.PutUint32(iblock[4:], 0)
		return
	}
	binary.LittleEndian.PutUint32(iblock[0:], 0)
	binary.LittleEndian.PutUint32(iblock[4:], vfs.NewEncodeDev(rdev))
	binary.LittleEndian.PutUint32(iblock[8:], 0)
}

// deviceNumber is __ext4_iget's i_rdev from i_block.
func deviceNumber(iblock []byte) uint32 {
	if v := binary.LittleEndian.Uint32(iblock[0:]); v != 0 {
		return vfs.OldDecodeDev(uint16(v))
	}
	return vfs.NewDecodeDev(binary.LittleEndian.Uint32(iblock[4:]))
}
