package f2fs

import (
	"encoding/binary"

	"github.com/vfslab/vfslab/errno"
)

// Node blocks (struct f2fs_node, include/linux/f2fs_fs.h): an inode
// (struct f2fs_inode), a direct node (ADDRS_PER_BLOCK block addresses) or
// an indirect node (NIDS_PER_BLOCK nids), and the footer that says which.

// Node constants (include/linux/f2fs_fs.h).
const (
	// AddrsPerBlock is ADDRS_PER_BLOCK, the addresses of a direct node.
	AddrsPerBlock = 1018
	// NidsPerBlock is NIDS_PER_BLOCK, the nids of an indirect node.
	NidsPerBlock = 1018
	// DefNidsPerInode is DEF_NIDS_PER_INODE: direct(2), indirect(2),
	// double indirect(1).
	DefNidsPerInode = 5
	// nodeFooterOff is offsetof(struct f2fs_node, footer).
	nodeFooterOff = BlockSize - 24
	// inodeINidOff is offsetof(struct f2fs_inode, i_nid).
	inodeINidOff = inodeIAddrOff + 4*DefAddrsPerInode
	// validXattrBlockSize is VALID_XATTR_BLOCK_SIZE: an xattr node
	// without its footer.
	validXattrBlockSize = BlockSize - 24
	// XattrMagic is F2FS_XATTR_MAGIC.
	XattrMagic = 0xF2F52011
	// xattrHeaderSize is sizeof(struct f2fs_xattr_header).
	xattrHeaderSize = 24
	// XattrIndexEncryption is F2FS_XATTR_INDEX_ENCRYPTION; the context's
	// name is F2FS_XATTR_NAME_ENCRYPTION_CONTEXT, "c".
	XattrIndexEncryption = 9
)

// i_inline flags (include/linux/f2fs_fs.h).
const (
	InlineXattr      = 0x01 // F2FS_INLINE_XATTR
	InlineData       = 0x02 // F2FS_INLINE_DATA
	InlineDentry     = 0x04 // F2FS_INLINE_DENTRY
	DataExist        = 0x08 // F2FS_DATA_EXIST
	InlineDots       = 0x10 // F2FS_INLINE_DOTS
	ExtraAttr        = 0x20 // F2FS_EXTRA_ATTR
	PinFile          = 0x40 // F2FS_PIN_FILE
	CompressReleased = 0x80 // F2FS_COMPRESS_RELEASED
)

// i_advise bits (FADVISE_*_BIT of fs/f2fs/f2fs.h).
const (
	FadviseColdBit     = 0x01
	FadviseLostPinoBit = 0x02
	FadviseEncryptBit  = 0x04
	FadviseEncNameBit  = 0x08
	FadviseKeepSizeBit = 0x10
	FadviseHotBit      = 0x20
	FadviseVerityBit   = 0x40
	FadviseTruncBit    = 0x80
)

// Footer flag bits (enum { COLD_BIT_SHIFT, FSYNC_BIT_SHIFT, DENT_BIT_SHIFT,
// OFFSET_BIT_SHIFT }).
const (
	coldBitShift   = 0
	fsyncBitShift  = 1
	dentBitShift   = 2
	offsetBitShift = 3
)

// Byte offsets of struct f2fs_inode's fields.
const (
	iMode            = 0
	iAdvise          = 2
	iInline          = 3
	iUID             = 4
	iGID             = 8
	iLinks           = 12
	iSize            = 16
	iBlocks          = 24
	iAtime           = 32
	iCtime           = 40
	iMtime           = 48
	iAtimeNsec       = 56
	iCtimeNsec       = 60
	iMtimeNsec       = 64
	iGeneration      = 68
	iCurrentDepth    = 72
	iXattrNid        = 76
	iFlags           = 80
	iPino            = 84
	iNamelen         = 88
	iName            = 92
	iDirLevel        = 347
	iExt             = 348
	iExtraIsize      = inodeIAddrOff
	iInlineXattrSize = inodeIAddrOff + 2
	iProjid          = inodeIAddrOff + 4
	iInodeChecksum   = inodeIAddrOff + 8
	iCrtime          = inodeIAddrOff + 12
	iCrtimeNsec      = inodeIAddrOff + 20
	// totalExtraAttrSize is F2FS_TOTAL_EXTRA_ATTR_SIZE (offsetof
	// i_extra_end - offsetof i_extra_isize).
	totalExtraAttrSize = 36
)

// Node is a node block (struct f2fs_node) as bytes, with accessors.
type Node []byte

// Footer is struct node_footer.
type Footer struct {
	Nid, Ino    uint32
	Flag        uint32
	CpVer       uint64
	NextBlkaddr uint32
}

// Footer decodes the node footer.
func (n Node) Footer() Footer {
	f := n[nodeFooterOff:]
	le := binary.LittleEndian
	return Footer{Nid: le.Uint32(f), Ino: le.Uint32(f[4:]), Flag: le.Uint32(f[8:]),
		CpVer: le.Uint64(f[12:]), NextBlkaddr: le.Uint32(f[20:])}
}

// SetFooter writes the node footer.
func (n Node) SetFooter(ft Footer) {
	f := n[nodeFooterOff:]
	le := binary.LittleEndian
	le.PutUint32(f, ft.Nid)
	le.PutUint32(f[4:], ft.Ino)
	le.PutUint32(f[8:], ft.Flag)
	le.PutUint64(f[12:], ft.CpVer)
	le.PutUint32(f[20:], ft.NextBlkaddr)
}

// NidOfNode is nid_of_node.
func (n Node) NidOfNode() uint32 { return binary.LittleEndian.Uint32(n[nodeFooterOff:]) }

// InoOfNode is ino_of_node.
func (n Node) InoOfNode() uint32 { return binary.LittleEndian.Uint32(n[nodeFooterOff+4:]) }

// OfsOfNode is ofs_of_node: the node's offset in its inode's node tree.
func (n Node) OfsOfNode() uint32 {
	return binary.LittleEndian.Uint32(n[nodeFooterOff+8:]) >> offsetBitShift
}

// IsInode is IS_INODE: a node whose offset is 0.
func (n Node) IsInode() bool { return n.OfsOfNode() == 0 }

func (n Node) u16(off int) uint16      { return binary.LittleEndian.Uint16(n[off:]) }
func (n Node) u32(off int) uint32      { return binary.LittleEndian.Uint32(n[off:]) }
func (n Node) u64(off int) uint64      { return binary.LittleEndian.Uint64(n[off:]) }
func (n Node) put16(off int, v uint16) { binary.LittleEndian.PutUint16(n[off:], v) }
func (n Node) put32(off int, v uint32) { binary.LittleEndian.PutUint32(n[off:], v) }
func (n Node) put64(off int, v uint64) { binary.LittleEndian.PutUint64(n[off:], v) }

// Mode is i_mode.
func (n Node) Mode() uint16 { return n.u16(iMode) }

// Advise is i_advise.
func (n Node) Advise() uint8 { return n[iAdvise] }

// Inline is i_inline.
func (n Node) Inline() uint8 { return n[iInline] }

// UID is i_uid.
func (n Node) UID() uint32 { return n.u32(iUID) }

// Links is i_links.
func (n Node) Links() uint32 { return n.u32(iLinks) }

// Size is i_size.
func (n Node) Size() uint64 { return n.u64(iSize) }

// Blocks is i_blocks (in 512-byte sectors).
func (n Node) Blocks() uint64 { return n.u64(iBlocks) }

// Generation is i_generation.
func (n Node) Generation() uint32 { return n.u32(iGeneration) }

// CurrentDepth is i_current_depth.
func (n Node) CurrentDepth() uint32 { return n.u32(iCurrentDepth) }

// XattrNid is i_xattr_nid.
func (n Node) XattrNid() uint32 { return n.u32(iXattrNid) }

// Flags is i_flags.
func (n Node) Flags() uint32 { return n.u32(iFlags) }

// Pino is i_pino.
func (n Node) Pino() uint32 { return n.u32(iPino) }

// DirLevel is i_dir_level.
func (n Node) DirLevel() uint8 { return n[iDirLevel] }

// ExtraIsize is i_extra_isize, 0 without F2FS_EXTRA_ATTR in i_inline
// (get_extra_isize).
func (n Node) ExtraIsize() int {
	if n.Inline()&ExtraAttr == 0 {
		return 0
	}
	return int(n.u16(iExtraIsize))
}

// InodeChecksum is i_inode_checksum.
func (n Node) InodeChecksum() uint32 { return n.u32(iInodeChecksum) }

// Addr is i_addr[i] of an inode, or addr[i] of a direct node.
func (n Node) Addr(inode bool, i int) uint32 {
	if inode {
		return n.u32(inodeIAddrOff + 4*i)
	}
	return n.u32(4 * i)
}

// SetAddr sets i_addr[i] or addr[i].
func (n Node) SetAddr(inode bool, i int, a uint32) {
	if inode {
		n.put32(inodeIAddrOff+4*i, a)
		return
	}
	n.put32(4*i, a)
}

// INid is i_nid[i] of an inode.
func (n Node) INid(i int) uint32 { return n.u32(inodeINidOff + 4*i) }

// SetINid sets i_nid[i].
func (n Node) SetINid(i int, nid uint32) { n.put32(inodeINidOff+4*i, nid) }

// Nid is nid[i] of an indirect node.
func (n Node) Nid(i int) uint32 { return n.u32(4 * i) }

// inodeChksum is f2fs_inode_chksum: crc32 from the superblock's seed over
// the footer's ino and i_generation (the seed of the inode), then the
// whole block with i_inode_checksum taken as zero.
func inodeChksum(seed uint32, n Node) uint32 {
	var w [4]byte
	binary.LittleEndian.PutUint32(w[:], n.InoOfNode())
	crc := f2fsChksum(seed, w[:])
	binary.LittleEndian.PutUint32(w[:], n.Generation())
	crc = f2fsChksum(crc, w[:])
	crc = f2fsChksum(crc, n[:iInodeChecksum])
	crc = f2fsChksum(crc, []byte{0, 0, 0, 0})
	return f2fsChksum(crc, n[iInodeChecksum+4:BlockSize])
}

// enableInodeChksum is f2fs_enable_inode_chksum: the feature, an inode
// node with extra attributes large enough to hold i_inode_checksum
// (F2FS_FITS_IN_INODE).
func enableInodeChksum(feature uint32, n Node) bool {
	if feature&FeatInodeChksum == 0 || !n.IsInode() || n.Inline()&ExtraAttr == 0 {
		return false
	}
	return int(n.u16(iExtraIsize)) >= iInodeChecksum+4-inodeIAddrOff
}

// inlineXattrAddrs is the i_inline_xattr_size that do_read_inode sets:
// i_inline_xattr_size with extra attributes and flexible_inline_xattr,
// DEFAULT_INLINE_XATTR_ADDRS for an inode with inline xattrs or inline
// dentries, else 0 (get_inline_xattr_addrs).
func inlineXattrAddrs(feature uint32, n Node) int {
	switch {
	case n.Inline()&ExtraAttr != 0 && feature&FeatFlexibleInlineXattr != 0:
		return int(n.u16(iInlineXattrSize))
	case n.Inline()&(InlineXattr|InlineDentry) != 0:
		return DefaultInlineXattrAddrs
	}
	return 0
}

// Xattr is one decoded struct f2fs_xattr_entry.
type Xattr struct {
	Index uint8
	Name  string
	Value []byte
}

// xattrEntrySize is ENTRY_SIZE: the 4-byte header, name and value,
// rounded up to 4 (XATTR_ALIGN).
func xattrEntrySize(nameLen, valueSize int) int { return (4 + nameLen + valueSize + 3) &^ 3 }

// parseXattrs decodes the xattr entries after the header of buf (the
// inline area, followed by the xattr node's contents: read_all_xattrs),
// up to the last entry (IS_XATTR_LAST_ENTRY, four zero bytes). A buffer
// without F2FS_XATTR_MAGIC holds no xattrs yet (a new inode). Errors:
// EFSCORRUPTED for an entry that runs past the buffer
// (__find_xattr's "inode (%lu) has corrupted xattr").
func parseXattrs(buf []byte) ([]Xattr, error) {
	if len(buf) < xattrHeaderSize || binary.LittleEndian.Uint32(buf) != XattrMagic {
		return nil, nil
	}
	var out []Xattr
	for off := xattrHeaderSize; ; {
		if off+4 > len(buf) {
			return out, errno.EFSCORRUPTED
		}
		if binary.LittleEndian.Uint32(buf[off:]) == 0 {
			return out, nil
		}
		idx, nl, vs := buf[off], int(buf[off+1]), int(binary.LittleEndian.Uint16(buf[off+2:]))
		sz := xattrEntrySize(nl, vs)
		if off+sz > len(buf) {
			return out, errno.EFSCORRUPTED
		}
		name := string(buf[off+4 : off+4+nl])
		val := append([]byte(nil), buf[off+4+nl:off+4+nl+vs]...)
		out = append(out, Xattr{Index: idx, Name: name, Value: val})
		off += sz
	}
}

// encodeXattrs writes the header and the entries into buf (the inline
// area, then the xattr node: write_all_xattrs); false when they do not
// fit (with room for the last-entry marker).
func encodeXattrs(buf []byte, xs []Xattr) bool {
	clear(buf)
	if len(xs) == 0 {
		return true
	}
	if len(buf) < xattrHeaderSize+4 {
		return false
	}
	binary.LittleEndian.PutUint32(buf, XattrMagic)
	binary.LittleEndian.PutUint32(buf[4:], 1)
	off := xattrHeaderSize
	for _, x := range xs {
		sz := xattrEntrySize(len(x.Name), len(x.Value))
		if off+sz+4 > len(buf) {
			return false
		}
		buf[off], buf[off+1] = x.Index, uint8(len(x.Name))
		binary.LittleEndian.PutUint16(buf[off+2:], uint16(len(x.Value)))
		copy(buf[off+4:], x.Name)
		copy(buf[off+4+len(x.Name):], x.Value)
		off += sz
	}
	return true
}
