package ext4

import (
	"encoding/binary"
	"fmt"
)

// Extended attributes on disk (fs/ext4/xattr.h, xattr.c): in the inode
// body after i_extra_isize (a magic, then the entries, their values at the
// end of the space) and in a block (i_file_acl: a 32-byte header, the
// entries, their values at the end of the block). The encryption context
// is the attribute of name index 9 (EXT4_XATTR_INDEX_ENCRYPTION), name "c".

// Xattr constants.
const (
	// XattrMagic is EXT4_XATTR_MAGIC.
	XattrMagic = 0xEA020000
	// XattrIndexEncryption is EXT4_XATTR_INDEX_ENCRYPTION.
	XattrIndexEncryption = 9
	// XattrNameEncryption is EXT4_XATTR_NAME_ENCRYPTION_CONTEXT.
	XattrNameEncryption = "c"
	// xattrEntrySize is sizeof(struct ext4_xattr_entry) before e_name.
	xattrEntrySize = 16
	// xattrBlockHeader is sizeof(struct ext4_xattr_header).
	xattrBlockHeader = 32
	xattrPad         = 4 // EXT4_XATTR_PAD
)

// Xattr is one decoded extended attribute.
type Xattr struct {
	Index uint8
	Name  string
	Value []byte
}

// xattrLen is EXT4_XATTR_LEN(name_len).
func xattrLen(nameLen int) int { return (nameLen + xattrEntrySize + xattrPad - 1) &^ (xattrPad - 1) }

// xattrSize is EXT4_XATTR_SIZE(size).
func xattrSize(n int) int { return (n + xattrPad - 1) &^ (xattrPad - 1) }

// XattrHashEntry is ext4_xattr_hash_entry: the name's bytes, then the
// value's little-endian words (the value padded with zeroes to a whole
// word), each folded into the hash with the kernel's shifts
// (NAME_HASH_SHIFT 5, VALUE_HASH_SHIFT 16).
func XattrHashEntry(name []byte, value []byte) uint32 {
	var h uint32
	for _, c := range name {
		h = h<<5 ^ h>>27 ^ uint32(c)
	}
	for i := 0; i < len(value); i += 4 {
		var w [4]byte
		copy(w[:], value[i:])
		h = h<<16 ^ h>>16 ^ binary.LittleEndian.Uint32(w[:])
	}
	return h
}

// parseXattrEntries decodes the entries that start at first in area;
// values lie at e_value_offs from base. Errors name the first bad entry
// (ext4_xattr_check_entries: "corrupted xattr entries").
func parseXattrEntries(area []byte, first, base int) ([]Xattr, error) {
	var out []Xattr
	off := first
	for {
		if off+4 > len(area) {
			return nil, fmt.Errorf("corrupted in-inode xattr: entries overrun")
		}
		if binary.LittleEndian.Uint32(area[off:]) == 0 {
			return out, nil
		}
		if off+xattrEntrySize > len(area) {
			return nil, fmt.Errorf("corrupted xattr entries")
		}
		nl := int(area[off])
		idx := area[off+1]
		voff := int(binary.LittleEndian.Uint16(area[off+2:]))
		inum := binary.LittleEndian.Uint32(area[off+4:])
		vsize := int(binary.LittleEndian.Uint32(area[off+8:]))
		next := off + xattrLen(nl)
		if next > len(area) || nl == 0 {
			return nil, fmt.Errorf("corrupted xattr entries")
		}
		if inum != 0 {
			return nil, fmt.Errorf("corrupted xattr entries: ea_inode value")
		}
		if base+voff+vsize > len(area) || vsize < 0 || base+voff < first {
			return nil, fmt.Errorf("corrupted xattr entries: value out of bounds")
		}
		out = append(out, Xattr{Index: idx, Name: string(area[off+xattrEntrySize : off+xattrEntrySize+nl]),
			Value: append([]byte(nil), area[base+voff:base+voff+vsize]...)})
		off = next
	}
}

// ibodyXattrs decodes the in-inode xattrs of raw (inode size isz), nil
// when there is no magic.
func ibodyXattrs(raw RawInode) ([]Xattr, error) {
	start := GoodOldInodeSize + raw.ExtraIsize()
	if len(raw) <= GoodOldInodeSize || start+4 > len(raw) {
		return nil, nil
	}
	if binary.LittleEndian.Uint32(raw[start:]) != XattrMagic {
		return nil, nil
	}
	area := raw[start+4:]
	return parseXattrEntries(area, 0, 0)
}

// xattrBlockCsum is ext4_xattr_block_csum: crc32c(s_csum_seed, le64 block
// number, the block with h_checksum zeroed).
func xattrBlockCsum(seed uint32, blk uint64, b []byte) uint32 {
	var le [8]byte
	binary.LittleEndian.PutUint64(le[:], blk)
	c := Crc32c(seed, le[:])
	c = Crc32c(c, b[:16])
	var zero [4]byte
	c = Crc32c(c, zero[:])
	return Crc32c(c, b[20:])
}

// blockXattrs decodes an xattr block (ext4_xattr_block_get's checks:
// h_magic, h_blocks 1, the checksum with metadata_csum).
func blockXattrs(b []byte, blk uint64, csum bool, seed uint32) ([]Xattr, error) {
	if binary.LittleEndian.Uint32(b) != XattrMagic || binary.LittleEndian.Uint32(b[8:]) != 1 {
		return nil, fmt.Errorf("bad block %d: corrupted xattr block", blk)
	}
	if csum && binary.LittleEndian.Uint32(b[16:]) != xattrBlockCsum(seed, blk, b) {
		return nil, fmt.Errorf("bad block %d: xattr block checksum invalid", blk)
	}
	return parseXattrEntries(b, xattrBlockHeader, 0)
}
