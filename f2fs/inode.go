package f2fs

import (
	"fmt"
	"sort"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// Device is the simulated block device under f2fs. Block 0 is never handed
// out (NULL_ADDR). The directory code reads and writes blocks in place,
// like pages of the page cache that are always up to date.
type Device = vfs.BlockDevice

// NewDevice returns an empty device.
func NewDevice() *Device { return vfs.NewBlockDevice() }

// Encoding flags of the superblock (s_encoding_flags; F2FS_ENC_*_FL in
// include/linux/f2fs_fs.h, copied into sb->s_encoding_flags as
// SB_ENC_*_FL of include/linux/fs.h).
const (
	// EncStrictModeFL rejects names that are not valid UTF-8
	// (F2FS_ENC_STRICT_MODE_FL, mkfs.f2fs -C utf8:strict).
	EncStrictModeFL uint16 = 1 << 0
	// EncNoCompatFallbackFL disables the linear lookup fallback in
	// casefolded directories (F2FS_ENC_NO_COMPAT_FALLBACK_FL, mkfs.f2fs -C
	// utf8:hashonly; sb_no_casefold_compat_fallback).
	EncNoCompatFallbackFL uint16 = 1 << 1
)

// LookupMode is the lookup_mode= mount option (fs/f2fs/super.c,
// F2FS_OPTION(sbi).lookup_mode).
type LookupMode uint8

// Lookup modes. LookupAuto is the default.
const (
	// LookupAuto falls back to a linear search after a hashed miss in a
	// casefolded directory unless the superblock has EncNoCompatFallbackFL.
	LookupAuto LookupMode = iota
	// LookupPerf never falls back (hash-only lookups).
	LookupPerf
	// LookupCompat always falls back.
	LookupCompat
)

// String names the mode as the mount option spells it.
func (m LookupMode) String() string {
	switch m {
	case LookupPerf:
		return "perf"
	case LookupCompat:
		return "compat"
	}
	return "auto"
}

// ParseLookupMode reads a lookup_mode= value. Errors: EINVAL.
func ParseLookupMode(s string) (LookupMode, error) {
	switch s {
	case "auto":
		return LookupAuto, nil
	case "perf":
		return LookupPerf, nil
	case "compat":
		return LookupCompat, nil
	}
	return 0, errno.EINVAL
}

// SuperBlock holds the filesystem-wide state the directory code reads
// (parts of struct f2fs_sb_info, struct super_block and the mount options).
type SuperBlock struct {
	// Dev is the block device holding dentry blocks.
	Dev *Device
	// Encoding is sb->s_encoding; nil when the filesystem has no casefold
	// feature.
	Encoding Encoding
	// EncodingFlags is sb->s_encoding_flags (EncStrictModeFL,
	// EncNoCompatFallbackFL).
	EncodingFlags uint16
	// LookupMode is the lookup_mode= mount option.
	LookupMode LookupMode
	// InlineDentry is the inline_dentry mount option (default on).
	InlineDentry bool
	// Inline is the inline dentry geometry of new directories.
	Inline InlineGeometry
	// Name is the device name used in log lines.
	Name string
}

// NewSuperBlock returns a superblock with f2fs's defaults: inline dentries
// on with the default geometry, lookup_mode=auto, no casefolding.
func NewSuperBlock() *SuperBlock {
	return &SuperBlock{Dev: NewDevice(), InlineDentry: true, Inline: DefaultInlineGeometry, Name: "vfslab"}
}

// HasStrictEncoding is sb_has_strict_encoding.
func (sb *SuperBlock) HasStrictEncoding() bool { return sb.EncodingFlags&EncStrictModeFL != 0 }

// NoCasefoldCompatFallback is sb_no_casefold_compat_fallback.
func (sb *SuperBlock) NoCasefoldCompatFallback() bool {
	return sb.EncodingFlags&EncNoCompatFallbackFL != 0
}

// warn logs like f2fs_warn: "F2FS-fs (dev): msg".
func (sb *SuperBlock) warn(t *kernel.Task, format string, args ...any) {
	t.Printk("F2FS-fs (%s): "+format, append([]any{sb.Name}, args...)...)
}

// Inode flags (i_flags) and advise bits the directory code tests.
const (
	// CasefoldFL is F2FS_CASEFOLD_FL.
	CasefoldFL uint32 = 0x40000000
)

// Inode is a directory inode as the directory code sees it: the fields of
// struct f2fs_inode_info it reads and writes, the inode block holding the
// inline dentries, and the map from page index to block address (the
// dnodes). A directory is used by one task at a time (the VFS holds its
// i_rwsem).
type Inode struct {
	// SB is the filesystem.
	SB *SuperBlock
	// Ino is i_ino.
	Ino uint32
	// Mode is i_mode.
	Mode uint32
	// Flags is i_flags (CasefoldFL).
	Flags uint32
	// Crypt is the fscrypt name handling of an encrypted directory (the
	// FADVISE_ENCRYPT_BIT); nil when the directory is not encrypted.
	Crypt NameCrypt
	// Size is i_size.
	Size int64
	// CurrentDepth is i_current_depth, the number of hash levels in use.
	CurrentDepth uint32
	// DirLevel is i_dir_level.
	DirLevel uint32
	// Inline is FI_INLINE_DENTRY: the dentries live in the inode block.
	Inline bool
	// Geo is the inline dentry geometry of this inode.
	Geo InlineGeometry
	// Node is the inode block (struct f2fs_inode); only its inline area is
	// used.
	Node []byte

	pages map[uint64]uint32 // page index -> block address

	chash  uint32
	clevel uint32
	task   *kernel.Task
}

// NewDirInode returns an empty directory inode (no dentries yet: call
// MakeEmptyDir). inline says whether it starts with inline dentries
// (f2fs_may_inline_dentry: the inline_dentry mount option).
func NewDirInode(sb *SuperBlock, ino uint32, mode uint32) *Inode {
	return &Inode{SB: sb, Ino: ino, Mode: SIfdir | mode&^SIfmt, Inline: sb.InlineDentry,
		Geo: sb.Inline, Node: make([]byte, BlockSize), pages: map[uint64]uint32{}}
}

// IsCasefolded is IS_CASEFOLDED(dir).
func (dir *Inode) IsCasefolded() bool { return dir.Flags&CasefoldFL != 0 && dir.SB.Encoding != nil }

// IsEncrypted is IS_ENCRYPTED(dir).
func (dir *Inode) IsEncrypted() bool { return dir.Crypt != nil }

// inlineArea is inline_data_addr(dir, ipage).
func (dir *Inode) inlineArea() []byte {
	return dir.Node[dir.Geo.Offset : dir.Geo.Offset+dir.Geo.MaxInlineData]
}

// InlineDentryPtr is make_dentry_ptr_inline over the inode's inline area.
func (dir *Inode) InlineDentryPtr() DentryPtr {
	return MakeDentryPtrInline(dir.Geo, dir.inlineArea())
}

// dirBlocks is dir_blocks(inode): i_size in pages.
func (dir *Inode) dirBlocks() uint64 { return uint64(dir.Size+BlockSize-1) / BlockSize }

// findDataBlock is f2fs_find_data_folio: the dentry block at page index
// bidx, or nil for a hole.
func (dir *Inode) findDataBlock(bidx uint64) []byte {
	a, ok := dir.pages[bidx]
	if !ok {
		return nil
	}
	return dir.SB.Dev.Block(a)
}

// getNewDataBlock is f2fs_get_new_data_folio(dir, NULL, bidx, true): the
// block at bidx, allocated (zeroed) if it is a hole, growing i_size to
// cover it.
func (dir *Inode) getNewDataBlock(bidx uint64) []byte {
	if b := dir.findDataBlock(bidx); b != nil {
		return b
	}
	a, b := dir.SB.Dev.Alloc()
	dir.pages[bidx] = a
	if end := int64(bidx+1) * BlockSize; dir.Size < end {
		dir.Size = end
	}
	return b
}

// truncateHole is f2fs_truncate_hole(dir, bidx, bidx+1): the block goes back
// to the device and the page index becomes a hole (i_size is kept).
func (dir *Inode) truncateHole(bidx uint64) {
	if a, ok := dir.pages[bidx]; ok {
		dir.SB.Dev.Free(a)
		delete(dir.pages, bidx)
	}
}

// releaseBlocks gives every dentry block back to the device (the
// directory's inode is being evicted).
func (dir *Inode) releaseBlocks() {
	for p, a := range dir.pages {
		dir.SB.Dev.Free(a)
		delete(dir.pages, p)
	}
	dir.Size = 0
}

// Pages returns the page indexes that hold dentry blocks, in order.
func (dir *Inode) Pages() []uint64 {
	out := make([]uint64, 0, len(dir.pages))
	for p := range dir.pages {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// BlockAt returns the dentry block at page index bidx, or nil for a hole.
func (dir *Inode) BlockAt(bidx uint64) []byte { return dir.findDataBlock(bidx) }

// SetBlock installs raw as the dentry block at page index bidx (copying it
// to a new device block), growing i_size; for tests and images built
// elsewhere.
func (dir *Inode) SetBlock(bidx uint64, raw []byte) {
	b := dir.getNewDataBlock(bidx)
	copy(b, raw)
}

// String is the canonical one-line dump of the directory inode's state.
func (dir *Inode) String() string {
	s := fmt.Sprintf("f2fs dir ino=%d size=%d depth=%d dir_level=%d", dir.Ino, dir.Size, dir.CurrentDepth, dir.DirLevel)
	if dir.Inline {
		s += " inline"
	}
	if dir.IsCasefolded() {
		s += " casefold"
	}
	if dir.IsEncrypted() {
		s += " encrypt"
	}
	return s + fmt.Sprintf(" blocks=%d", len(dir.pages))
}
