package ext4

import "encoding/binary"

// The on-disk inode (fs/ext4/ext4.h struct ext4_inode): 128 bytes of the
// original inode, then i_extra_isize bytes of extra fields (32 in an
// inode that mke2fs 1.47 makes: up to i_projid), then the in-inode xattrs.

// Offsets of the struct ext4_inode fields.
const (
	iMode         = 0x00
	iUID          = 0x02
	iSizeLo       = 0x04
	iAtime        = 0x08
	iCtime        = 0x0C
	iMtime        = 0x10
	iDtime        = 0x14
	iGID          = 0x18
	iLinksCount   = 0x1A
	iBlocksLo     = 0x1C
	iFlags        = 0x20
	iBlock        = 0x28 // i_block[EXT4_N_BLOCKS]
	iGeneration   = 0x64
	iFileACLLo    = 0x68
	iSizeHigh     = 0x6C
	iBlocksHigh   = 0x74
	iFileACLHigh  = 0x76
	iUIDHigh      = 0x78
	iGIDHigh      = 0x7A
	iChecksumLo   = 0x7C
	iExtraIsize   = 0x80
	iChecksumHi   = 0x82
	iCrtime       = 0x90
	iProjid       = 0x9C
	iExtraEnd     = 0xA0 // the end of the extra fields the model knows
	iBlockLen     = 60   // EXT4_N_BLOCKS * 4
	extraIsizeStd = iExtraEnd - GoodOldInodeSize
)

// More inode flags (i_flags, EXT4_*_FL).
const (
	HugeFileFL   uint32 = 0x00040000 // EXT4_HUGE_FILE_FL
	ExtentsFL    uint32 = 0x00080000 // EXT4_EXTENTS_FL
	EAInodeFL    uint32 = 0x00200000 // EXT4_EA_INODE_FL
	InlineDataFL uint32 = 0x10000000 // EXT4_INLINE_DATA_FL
	VerityFL     uint32 = 0x00100000 // EXT4_VERITY_FL
)

// Reserved inode numbers (EXT4_*_INO).
const (
	BadIno         = 1
	UsrQuotaIno    = 3
	GrpQuotaIno    = 4
	BootLoaderIno  = 5
	UndelDirIno    = 6
	ResizeIno      = 7
	JournalIno     = 8
	ExcludeIno     = 9
	ReplicaIno     = 10
	lostFoundIname = "lost+found"
)

// RawInode is a view of one on-disk inode (EXT4_INODE_SIZE bytes).
type RawInode []byte

func (r RawInode) u16(off int) uint16      { return binary.LittleEndian.Uint16(r[off:]) }
func (r RawInode) u32(off int) uint32      { return binary.LittleEndian.Uint32(r[off:]) }
func (r RawInode) put16(off int, v uint16) { binary.LittleEndian.PutUint16(r[off:], v) }
func (r RawInode) put32(off int, v uint32) { binary.LittleEndian.PutUint32(r[off:], v) }

// Mode is i_mode.
func (r RawInode) Mode() uint16 { return r.u16(iMode) }

// UID is i_uid with l_i_uid_high.
func (r RawInode) UID() uint32 { return uint32(r.u16(iUID)) | uint32(r.u16(iUIDHigh))<<16 }

// GID is i_gid with l_i_gid_high.
func (r RawInode) GID() uint32 { return uint32(r.u16(iGID)) | uint32(r.u16(iGIDHigh))<<16 }

// Size is ext4_isize: i_size_lo and i_size_high.
func (r RawInode) Size() int64 { return int64(uint64(r.u32(iSizeLo)) | uint64(r.u32(iSizeHigh))<<32) }

// SetSize is ext4_isize_set.
func (r RawInode) SetSize(n int64) {
	r.put32(iSizeLo, uint32(n))
	r.put32(iSizeHigh, uint32(uint64(n)>>32))
}

// LinksCount is i_links_count.
func (r RawInode) LinksCount() uint16 { return r.u16(iLinksCount) }

// Dtime is i_dtime.
func (r RawInode) Dtime() uint32 { return r.u32(iDtime) }

// Blocks is i_blocks in 512-byte sectors (the huge_file scaling of
// ext4_inode_blocks, EXT4_HUGE_FILE_FL, in filesystem blocks, is left to
// the caller).
func (r RawInode) Blocks() uint64 { return uint64(r.u32(iBlocksLo)) | uint64(r.u16(iBlocksHigh))<<32 }

// SetBlocks sets i_blocks_lo and l_i_blocks_high.
func (r RawInode) SetBlocks(n uint64) {
	r.put32(iBlocksLo, uint32(n))
	r.put16(iBlocksHigh, uint16(n>>32))
}

// Flags is i_flags.
func (r RawInode) Flags() uint32 { return r.u32(iFlags) }

// Generation is i_generation.
func (r RawInode) Generation() uint32 { return r.u32(iGeneration) }

// FileACL is i_file_acl: the xattr block.
func (r RawInode) FileACL() uint64 {
	return uint64(r.u32(iFileACLLo)) | uint64(r.u16(iFileACLHigh))<<32
}

// IBlock is i_block: the extent tree's root, or a fast symlink's target.
func (r RawInode) IBlock() []byte { return r[iBlock : iBlock+iBlockLen] }

// ExtraIsize is i_extra_isize (0 in a 128-byte inode).
func (r RawInode) ExtraIsize() int {
	if len(r) <= GoodOldInodeSize {
		return 0
	}
	return int(r.u16(iExtraIsize))
}

// fitsChecksumHi is EXT4_FITS_IN_INODE(raw, ei, i_checksum_hi).
func (r RawInode) fitsChecksumHi() bool { return r.ExtraIsize() >= iChecksumHi+2-GoodOldInodeSize }

// Checksum is the stored checksum: l_i_checksum_lo and, when it fits,
// i_checksum_hi.
func (r RawInode) Checksum() uint32 {
	c := uint32(r.u16(iChecksumLo))
	if len(r) > GoodOldInodeSize && r.fitsChecksumHi() {
		c |= uint32(r.u16(iChecksumHi)) << 16
	}
	return c
}

// InodeCsum is ext4_inode_csum: crc32c from the inode's seed over the
// inode with both checksum fields taken as zero; only the low 16 bits
// when i_checksum_hi does not fit.
func (r RawInode) InodeCsum(seed uint32) uint32 {
	var zero [2]byte
	c := Crc32c(seed, r[:iChecksumLo])
	c = Crc32c(c, zero[:])
	c = Crc32c(c, r[iChecksumLo+2:GoodOldInodeSize])
	if len(r) > GoodOldInodeSize {
		off := iChecksumHi
		c = Crc32c(c, r[GoodOldInodeSize:off])
		if r.fitsChecksumHi() {
			c = Crc32c(c, zero[:])
			off += 2
		}
		c = Crc32c(c, r[off:])
	}
	if len(r) <= GoodOldInodeSize || !r.fitsChecksumHi() {
		c &= 0xFFFF
	}
	return c
}

// CsumSet is ext4_inode_csum_set.
func (r RawInode) CsumSet(seed uint32) {
	c := r.InodeCsum(seed)
	r.put16(iChecksumLo, uint16(c))
	if len(r) > GoodOldInodeSize && r.fitsChecksumHi() {
		r.put16(iChecksumHi, uint16(c>>16))
	}
}

// CsumVerify is ext4_inode_csum_verify.
func (r RawInode) CsumVerify(seed uint32) bool { return r.Checksum() == r.InodeCsum(seed) }

// inodeCsumSeed is the i_csum_seed of inode ino with generation gen:
// crc32c(s_csum_seed, le32 ino) then le32 gen (ext4_iget,
// __ext4_new_inode).
func inodeCsumSeed(fsSeed, ino, gen uint32) uint32 {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], ino)
	c := Crc32c(fsSeed, b[:])
	binary.LittleEndian.PutUint32(b[:], gen)
	return Crc32c(c, b[:])
}
