package f2fs

import (
	"encoding/binary"
	"fmt"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// What f2fs-tools do to an unmounted image's bytes (inject.f2fs's
// dentry injection, fsck.f2fs's superblock flag update), for the
// machine's tools: they read the image as the kernel's fill_super does
// (superblock, checkpoint, NAT) and write the device's blocks in place.

// openImage reads the image on dev far enough to look nodes up. Errors:
// those of f2fs_fill_super's reads.
func openImage(t *kernel.Task, dev *Device, name string) (*SuperBlock, error) {
	sbi := &SuperBlock{Dev: dev, Name: name}
	im, err := sbi.loadImage(t)
	if err != nil {
		return nil, err
	}
	sbi.img = im
	return sbi, nil
}

// InjectDentHash is inject.f2fs --dent --mb d_hash --nid NID --val VAL:
// the dentry of inode nid in its parent directory (i_pino) gets hash_code
// val, in the parent's inline dentry area (whose inode checksum is set
// again, as the tool's update_inode does) or in one of its dentry blocks.
// It returns the old hash. Errors: ENOENT when no dentry of the parent
// names nid, the image's read errors.
func InjectDentHash(t *kernel.Task, dev *Device, name string, nid, val uint32) (uint32, error) {
	sbi, err := openImage(t, dev, name)
	if err != nil {
		return 0, err
	}
	im := sbi.img
	child, err := sbi.readNode(t, nid, nodeTypeInode)
	if err != nil {
		return 0, err
	}
	pino := child.Pino()
	parent, err := sbi.readNode(t, pino, nodeTypeInode)
	if err != nil {
		return 0, err
	}
	set := func(d *DentryPtr) (uint32, bool) {
		for i := d.FindNextBit(0); i < d.Max; i = d.FindNextBit(i + 1) {
			if de := d.Entry(i); de.Ino == nid && de.NameLen > 0 {
				p := d.Dentry[i*SizeOfDirEntry:]
				binary.LittleEndian.PutUint32(p, val)
				return de.HashCode, true
			}
		}
		return 0, false
	}
	if parent.Inline()&InlineDentry != 0 {
		extra := parent.ExtraIsize()
		g := NewInlineGeometry(extra, inlineXattrAddrs(im.raw.Feature, parent))
		d := MakeDentryPtrInline(g, parent[g.Offset:g.Offset+g.MaxInlineData])
		old, ok := set(&d)
		if !ok {
			return 0, fmt.Errorf("no dentry of inode %d in directory %d: %w", nid, pino, errno.ENOENT)
		}
		if enableInodeChksum(im.raw.Feature, parent) {
			parent.put32(iInodeChecksum, inodeChksum(im.chksumSeed, parent))
		}
		return old, nil
	}
	xaddrs := inlineXattrAddrs(im.raw.Feature, parent)
	naddrs := addrsPerInode(parent.ExtraIsize(), xaddrs)
	nblocks := (parent.Size() + BlockSize - 1) / BlockSize
	for i := 0; i < naddrs && uint64(i) < nblocks; i++ {
		addr := parent.Addr(true, i+parent.ExtraIsize()/4)
		if !im.isValidBlkaddr(addr) {
			continue
		}
		blk := sbi.metaBlock(addr)
		if blk == nil {
			return 0, errno.EIO
		}
		d := MakeDentryPtrBlock(blk)
		if old, ok := set(&d); ok {
			return old, nil
		}
	}
	return 0, fmt.Errorf("no dentry of inode %d in directory %d: %w", nid, pino, errno.ENOENT)
}

// RawSuperOf reads the first valid superblock copy of the image on dev
// (nil when there is none).
func RawSuperOf(dev *Device) *RawSuper {
	for block := uint32(0); block < 2; block++ {
		if uint64(block) >= uint64(dev.Blocks()) {
			return nil
		}
		b := dev.Block(block)
		if len(b) < SuperOffset+superSize {
			return nil
		}
		s := DecodeRawSuper(b[SuperOffset : SuperOffset+superSize])
		if s.Magic == SuperMagic {
			return s
		}
	}
	return nil
}

// SetEncodingFlags writes both superblock copies of the image on dev with
// s_encoding_flags set to flags (and the checksum of the sb_checksum
// feature), as fsck.f2fs's fsck_update_sb_flags and update_superblock do.
func SetEncodingFlags(dev *Device, flags uint16) error {
	for block := uint32(0); block < 2; block++ {
		if uint64(block) >= uint64(dev.Blocks()) {
			return errno.EIO
		}
		b := dev.Block(block)
		if len(b) < SuperOffset+superSize {
			return errno.EINVAL
		}
		s := DecodeRawSuper(b[SuperOffset : SuperOffset+superSize])
		if s.Magic != SuperMagic {
			return errno.EINVAL
		}
		s.EncodingFlags = flags
		copy(b[SuperOffset:], s.Encode())
	}
	return nil
}
