package ext4

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/libfs"
	"github.com/vfslab/vfslab/vfs"
)

// dirblockCsum is ext4_dirblock_csum over the block up to its tail.
func (dir *Inode) dirblockCsum(b []byte) uint32 {
	return Crc32c(dir.csumSeed(), b[:dir.bsize()-DirEntryTailSize])
}

// dirblockCsumSet is ext4_dirblock_csum_set.
func (dir *Inode) dirblockCsumSet(t *kernel.Task, b []byte) {
	if !dir.SB.MetadataCsum {
		return
	}
	if !direntTailOK(b) {
		dir.warning(t, "ext4_dirblock_csum_set", "No space for directory leaf checksum. Please run e2fsck -D.")
		return
	}
	binary.LittleEndian.PutUint32(b[dir.bsize()-4:], dir.dirblockCsum(b))
}

// dirblockCsumVerify is ext4_dirblock_csum_verify.
func (dir *Inode) dirblockCsumVerify(t *kernel.Task, b []byte) bool {
	if !dir.SB.MetadataCsum {
		return true
	}
	if !direntTailOK(b) {
		dir.warning(t, "ext4_dirblock_csum_verify", "No space for directory leaf checksum. Please run e2fsck -D.")
		return false
	}
	return binary.LittleEndian.Uint32(b[dir.bsize()-4:]) == dir.dirblockCsum(b)
}

// getDxCountlimit is get_dx_countlimit: where {limit, count} sit in an
// index block (offset 32 in the root, 8 in a node), or -1.
func getDxCountlimit(b []byte) int {
	rlen := direntRecLen(b, 0)
	switch {
	case rlen == len(b):
		return 8
	case rlen == 12:
		if direntRecLen(b, 12) != len(b)-12 {
			return -1
		}
		info := readDxRootInfo(b)
		if info.reservedZero != 0 || info.infoLength != dxRootInfoLen {
			return -1
		}
		return 32
	}
	return -1
}

// dxCsum is ext4_dx_csum.
func (dir *Inode) dxCsum(b []byte, countOff, count int, tailOff int) uint32 {
	c := Crc32c(dir.csumSeed(), b[:countOff+count*dxEntrySize])
	c = Crc32c(c, b[tailOff:tailOff+4])
	var zero [4]byte
	return Crc32c(c, zero[:])
}

// dxCsumLocate finds the dx tail of an index block: ok false when there is
// no room for one.
func dxCsumLocate(b []byte) (countOff, count, tailOff int, ok bool) {
	countOff = getDxCountlimit(b)
	if countOff < 0 {
		return 0, 0, 0, false
	}
	limit := int(binary.LittleEndian.Uint16(b[countOff:]))
	count = int(binary.LittleEndian.Uint16(b[countOff+2:]))
	if countOff+limit*dxEntrySize > len(b)-dxTailSize {
		return 0, 0, 0, false
	}
	return countOff, count, countOff + limit*dxEntrySize, true
}

// dxCsumSet is ext4_dx_csum_set.
func (dir *Inode) dxCsumSet(t *kernel.Task, b []byte) {
	if !dir.SB.MetadataCsum {
		return
	}
	countOff, count, tailOff, ok := dxCsumLocate(b)
	if !ok || count > (dir.bsize()-countOff)/dxEntrySize {
		dir.errorInode(t, "ext4_dx_csum_set", 0, "dir seems corrupt?  Run e2fsck -D.")
		return
	}
	binary.LittleEndian.PutUint32(b[tailOff+4:], dir.dxCsum(b, countOff, count, tailOff))
}

// dxCsumVerify is ext4_dx_csum_verify.
func (dir *Inode) dxCsumVerify(t *kernel.Task, b []byte) bool {
	if !dir.SB.MetadataCsum {
		return true
	}
	countOff, count, tailOff, ok := dxCsumLocate(b)
	if !ok || count > (dir.bsize()-countOff)/dxEntrySize {
		dir.errorInode(t, "ext4_dx_csum_verify", 0, "dir seems corrupt?  Run e2fsck -D.")
		return false
	}
	return binary.LittleEndian.Uint32(b[tailOff+4:]) == dir.dxCsum(b, countOff, count, tailOff)
}

// Directory block kinds for readDirblock (dirblock_type_t).
type dirblockType int

const (
	either dirblockType = iota
	index
	dirent
	direntHtree
)

// errBadDxDir is ERR_BAD_DX_DIR: an htree format error after which the
// caller falls back to a linear search; never returned to users.
var errBadDxDir = fmt.Errorf("ERR_BAD_DX_DIR")

// EFSBADCRC is the kernel's EFSBADCRC (EBADMSG): a metadata checksum
// mismatch.
var EFSBADCRC = errno.EBADMSG

// readDirblock is __ext4_read_dirblock: the block past i_size and holes
// where the htree needs a block are EFSCORRUPTED; with metadata_csum an
// index block must pass ext4_dx_csum_verify and a leaf ext4_dirblock_csum_verify
// (EFSBADCRC otherwise). A hole elsewhere returns nil.
func (dir *Inode) readDirblock(t *kernel.Task, lblk uint32, typ dirblockType, fn string) ([]byte, error) {
	if lblk >= dir.nblocks() {
		dir.errorInode(t, fn, lblk, "Attempting to read directory block (%d) that is past i_size (%d)", lblk, dir.Size())
		return nil, errno.EFSCORRUPTED
	}
	pblk := dir.PhysBlock(lblk)
	b := dir.SB.dirBlock(pblk)
	if b == nil {
		if typ == index || typ == direntHtree || lblk == 0 {
			kind := "leaf"
			if typ == index {
				kind = "index"
			}
			dir.errorInode(t, fn, lblk, "Directory hole found for htree %s block %d", kind, lblk)
			return nil, errno.EFSCORRUPTED
		}
		return nil, nil
	}
	isDxBlock := false
	if dir.IsDx() {
		if lblk == 0 || direntRecLen(b, 0) == dir.bsize() {
			isDxBlock = true
		}
	}
	if !isDxBlock && typ == index {
		dir.errorInode(t, fn, lblk, "directory leaf block found instead of index block")
		return nil, errno.EFSCORRUPTED
	}
	if !dir.SB.MetadataCsum || dir.SB.Dev.BufferVerified(pblk) {
		return b, nil
	}
	if isDxBlock && typ == index {
		if !dir.dxCsumVerify(t, b) {
			dir.errorInode(t, fn, lblk, "Directory index failed checksum")
			return nil, EFSBADCRC
		}
		dir.SB.Dev.SetBufferVerified(pblk)
	}
	if !isDxBlock {
		if !dir.dirblockCsumVerify(t, b) {
			dir.errorInode(t, fn, lblk, "Directory block failed checksum")
			return nil, EFSBADCRC
		}
		dir.SB.Dev.SetBufferVerified(pblk)
	}
	return b, nil
}

// markDirty stands for ext4_handle_dirty_dirblock / _dx_node: the checksum
// is recomputed and the buffer stays verified.
//
// Either also stands for the inode_inc_iversion(dir) of the change that
// dirtied the block (add_dirent_to_buf, ext4_delete_entry, ext4_setent),
// which makes an open readdir rescan or refill (the dir_private_info
// cookie).
func (dir *Inode) markDirtyLeaf(t *kernel.Task, lblk uint32, b []byte) {
	dir.iVersion++
	dir.dirblockCsumSet(t, b)
	dir.SB.Dev.SetBufferVerified(dir.PhysBlock(lblk))
}

func (dir *Inode) markDirtyDx(t *kernel.Task, lblk uint32, b []byte) {
	dir.iVersion++
	dir.dxCsumSet(t, b)
	dir.SB.Dev.SetBufferVerified(dir.PhysBlock(lblk))
}

// Events counted by the directory code, once per operation.
var (
	// EvFindEntry counts __ext4_find_entry calls.
	EvFindEntry = events.Register("ext4_find_entry", "ext4 __ext4_find_entry calls (directory lookups)")
	// EvLinearFallback counts lookups that fell back to a linear search.
	EvLinearFallback = events.Register("ext4_linear_fallback", "ext4 lookups that fell back to a linear search (bad htree, or a casefolded miss)")
	// EvDirentsScanned counts dirents visited by ext4_search_dir.
	EvDirentsScanned = events.Register("ext4_dirents_scanned", "ext4 dirents visited by ext4_search_dir")
	// EvNamesCompared counts ext4_match calls on used dirents.
	EvNamesCompared = events.Register("ext4_names_compared", "ext4 ext4_match calls on used dirents")
	// EvNameDecrypts counts names decrypted by generic_ci_match.
	EvNameDecrypts = events.Register("ext4_name_decrypts", "ext4 on-disk names decrypted by generic_ci_match during lookups")
	// EvDirBlocks counts leaf blocks searched.
	EvDirBlocks = events.Register("ext4_dir_blocks_searched", "ext4 directory leaf blocks searched by lookups")
)

// lookupEvents are the counters a lookup's libfs.LookupStats add to.
var lookupEvents = libfs.LookupEvents{Scanned: EvDirentsScanned, Compared: EvNamesCompared, Decrypts: EvNameDecrypts, Blocks: EvDirBlocks}

// DentryRef locates a dirent found by a lookup: its logical block and
// offset. It stays valid until the directory changes.
type DentryRef struct {
	Lblk  uint32
	Off   int
	Entry DirEntry
	// Name is the on-disk name (a copy).
	Name []byte
	// nameBuf holds Name, so that a found entry is one Go object. The
	// kernel returns a pointer to the ext4_dir_entry_2 in the buffer
	// head instead: the reference itself is the model's, and the one Go
	// allocation of a lookup that finds a name beyond its kmallocs.
	nameBuf [NameLen]byte
}

// String is the canonical one-line dump of a found dirent.
func (r *DentryRef) String() string {
	return fmt.Sprintf("lblk=%d off=%d %s name=%x", r.Lblk, r.Off, r.Entry, r.Name)
}

// isFakeDirEntry is is_fake_dir_entry: "." or "..", or the checksum tail.
func isFakeDirEntry(b []byte, off int) bool {
	nl := int(b[off+6])
	if nl > 0 && nl <= 2 && off+10 <= len(b) && b[off+8] == '.' && (b[off+9] == '.' || b[off+9] == 0) {
		return true
	}
	return b[off+7] == FtDirCsum
}

// checkDirEntry is __ext4_check_dir_entry (fs/ext4/dir.c) for the dirent at
// off of buf (size bytes): it logs "bad entry in directory" and returns
// true when the dirent is corrupt. absOff is the position in the directory
// for the message.
func checkDirEntry(t *kernel.Task, dir *Inode, fn string, buf []byte, size, off int, lblk uint32) bool {
	msg := ""
	rlen, nl, ino := 0, 0, uint32(0)
	fake := false
	if off+BaseDirLen > size || off+BaseDirLen > len(buf) {
		msg = "directory entry overrun"
	} else {
		rlen = direntRecLen(buf, off)
		nl = int(buf[off+6])
		ino = direntInode(buf, off)
		fake = isFakeDirEntry(buf, off)
		hashIn := dir.HashInDirent() && !fake
		next := off + rlen
		switch {
		case rlen < DirRecLen(1, hashIn):
			msg = "rec_len is smaller than minimal"
		case rlen%4 != 0:
			msg = "rec_len % 4 != 0"
		case rlen < DirRecLen(nl, hashIn):
			msg = "rec_len is too small for name_len"
		case next > size:
			msg = "directory entry overrun"
		case next > size-DirRecLen(1, dir.HashInDirent() && !dir.SB.MetadataCsum) && next != size:
			msg = "directory entry too close to block end"
		case ino > dir.SB.InodesCount:
			msg = "inode out of bounds"
		case next == size && nl == 1 && buf[off+8] == '.':
			msg = "'.' directory cannot be the last in data block"
		default:
			return false
		}
	}
	f := 0
	if fake {
		f = 1
	}
	dir.errorInode(t, fn, lblk, "bad entry in directory: %s - offset=%d, inode=%d, rec_len=%d, size=%d fake=%d",
		msg, int(lblk)*dir.bsize()+off, ino, rlen, size, f)
	return true
}

// searchDir is ext4_search_dir: a linear walk of one block; only a
// matching dirent gets the full check. The model adds a log line to the
// kernel's silent EFSCORRUPTED for a zero rec_len.
func searchDir(t *kernel.Task, dir *Inode, f *Filename, b []byte, size int, lblk uint32, st *libfs.LookupStats) (int, error) {
	off := 0
	for off < size-BaseDirLen {
		st.Scanned++
		if off+BaseDirLen+int(b[off+6]) <= size && match(t, dir, f, b, off, st) {
			if checkDirEntry(t, dir, "ext4_search_dir", b, size, off, lblk) {
				return -1, errno.EFSCORRUPTED
			}
			return off, nil
		}
		l := direntRecLen(b, off)
		if l <= 0 {
			checkDirEntry(t, dir, "ext4_search_dir", b, size, off, lblk)
			return -1, errno.EFSCORRUPTED
		}
		off += l
	}
	return -1, nil
}

func makeRef(b []byte, lblk uint32, off int) *DentryRef {
	de := readDirent(b, off)
	r := &DentryRef{Lblk: lblk, Off: off, Entry: de}
	r.Name = r.nameBuf[:de.NameLen:de.NameLen]
	copy(r.Name, b[off+8:off+8+int(de.NameLen)])
	return r
}

// dxRootLimit is dx_root_limit.
func (dir *Inode) dxRootLimit(infoSize int) int {
	space := dir.bsize() - DirRecLen(1, false) - DirRecLen(2, false) - infoSize
	if dir.SB.MetadataCsum {
		space -= dxTailSize
	}
	return space / dxEntrySize
}

// dxNodeLimit is dx_node_limit (which, as in the kernel, reserves the
// dirent hash of casefolded encrypted directories too).
func (dir *Inode) dxNodeLimit() int {
	space := dir.bsize() - DirRecLen(0, dir.HashInDirent())
	if dir.SB.MetadataCsum {
		space -= dxTailSize
	}
	return space / dxEntrySize
}

// dxFrame is struct dx_frame.
type dxFrame struct {
	lblk    uint32
	b       []byte
	entries dxEntries
	at      int
}

// dxProbe is dx_probe: it reads the root, checks it, hashes the name (into
// f.Hinfo, or hinfo when f is nil) and walks the index down to the leaf
// that covers the hash. A format error is errBadDxDir (the caller falls
// back to a linear search); read errors are returned as they are.
func dxProbe(t *kernel.Task, dir *Inode, f *Filename, hinfo *DxHashInfo) ([]dxFrame, error) {
	return dxProbeIn(t, dir, f, hinfo, new([HtreeLevel]dxFrame))
}

// dxProbeIn is dx_probe filling the caller's frames (frame_in: the kernel's
// callers declare struct dx_frame frames[EXT4_HTREE_LEVEL] on their stack);
// the frames it returns are a slice of frameIn, so a caller that keeps its
// array on the stack makes no Go allocation for them.
func dxProbeIn(t *kernel.Task, dir *Inode, f *Filename, hinfo *DxHashInfo, frameIn *[HtreeLevel]dxFrame) ([]dxFrame, error) {
	const fn = "dx_probe"
	b0, err := dir.readDirblock(t, 0, index, fn)
	if err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) ([]dxFrame, error) {
		dir.warning(t, fn, format, args...)
		dir.warning(t, fn, "Corrupt directory, running e2fsck is recommended")
		return nil, errBadDxDir
	}
	info := readDxRootInfo(b0)
	switch info.hashVersion {
	case DxHashTEA, DxHashHalfMD4, DxHashLegacy, DxHashSiphash:
	default:
		return bad("Unrecognised inode hash code %d", info.hashVersion)
	}
	if dir.HashInDirent() {
		if info.hashVersion != DxHashSiphash {
			return bad("Hash in dirent, but hash is not SIPHASH")
		}
	} else if info.hashVersion == DxHashSiphash {
		return bad("Hash code is SIPHASH, but hash not in dirent")
	}
	if f != nil {
		hinfo = &f.Hinfo
	}
	hinfo.HashVersion = info.hashVersion
	if hinfo.HashVersion <= DxHashTEA {
		hinfo.HashVersion += dir.SB.HashUnsigned
	}
	hinfo.Seed = &dir.SB.HashSeed
	if f != nil && f.DiskName != nil && !(dir.IsEncrypted() && dir.IsCasefolded()) {
		if err := Dirhash(t, dir, f.DiskName, hinfo); err != nil {
			return nil, err
		}
	}
	hash := hinfo.Hash
	if info.unusedFlags&1 != 0 {
		return bad("Unimplemented hash flags: %#06x", info.unusedFlags)
	}
	indirect := int(info.indirectLevels)
	if indirect >= dir.SB.htreeLevel() {
		dir.warning(t, fn, "Directory (ino: %d) htree depth %#06x exceed supported value", dir.ino(), dir.SB.htreeLevel())
		if dir.SB.htreeLevel() < HtreeLevel {
			dir.warning(t, fn, "Enable large directory feature to access it")
		}
		return bad("htree depth %d", indirect)
	}
	entries := dxEntries{b: b0, off: dxRootInfoOff + int(info.infoLength)}
	if !entries.fits(1) || entries.limit() != dir.dxRootLimit(int(info.infoLength)) {
		lim := -1
		if entries.fits(1) {
			lim = entries.limit()
		}
		return bad("dx entry: limit %d != root limit %d", lim, dir.dxRootLimit(int(info.infoLength)))
	}
	frames := frameIn[:0]
	blocks := [HtreeLevel + 1]uint32{0}
	lblk := uint32(0)
	b := b0
	for level := 0; ; {
		count := entries.count()
		if count == 0 || count > entries.limit() || !entries.fits(count) {
			return bad("dx entry: count %d beyond limit %d", count, entries.limit())
		}
		p, q := 1, count-1
		for p <= q {
			m := p + (q-p)/2
			if entries.hash(m) > hash {
				q = m - 1
			} else {
				p = m + 1
			}
		}
		at := p - 1
		frames = append(frames, dxFrame{lblk: lblk, b: b, entries: entries, at: at})
		block := entries.block(at)
		for i := 0; i <= level; i++ {
			if blocks[i] == block {
				return bad("dx entry: tree cycle block %d points back to block %d", blocks[level], block)
			}
		}
		level++
		if level > indirect {
			return frames, nil
		}
		blocks[level] = block
		nb, err := dir.readDirblock(t, block, index, fn)
		if err != nil {
			return nil, err
		}
		lblk, b = block, nb
		entries = dxEntries{b: nb, off: dxNodeEntriesOff}
		if entries.limit() != dir.dxNodeLimit() {
			return bad("dx entry: limit %d != node limit %d", entries.limit(), dir.dxNodeLimit())
		}
	}
}

// hashNBAlways is HASH_NB_ALWAYS.
const hashNBAlways = 1

// htreeNextBlock is ext4_htree_next_block: it advances the frames to the
// next leaf, reading the index nodes on the way, and reports whether the
// search should go on there (always for an odd hash, else only when the
// next leaf continues the same hash).
func htreeNextBlock(t *kernel.Task, dir *Inode, hash uint32, frames []dxFrame, startHash *uint32) (bool, error) {
	p := len(frames) - 1
	numFrames := 0
	for {
		frames[p].at++
		if frames[p].at < frames[p].entries.count() {
			break
		}
		if p == 0 {
			return false, nil
		}
		numFrames++
		p--
	}
	bhash := frames[p].entries.hash(frames[p].at)
	if startHash != nil {
		*startHash = bhash
	}
	if hash&1 == 0 && bhash&^1 != hash {
		return false, nil
	}
	for ; numFrames > 0; numFrames-- {
		blk := frames[p].entries.block(frames[p].at)
		b, err := dir.readDirblock(t, blk, index, "ext4_htree_next_block")
		if err != nil {
			return false, err
		}
		p++
		frames[p] = dxFrame{lblk: blk, b: b, entries: dxEntries{b: b, off: dxNodeEntriesOff}, at: 0}
	}
	return true, nil
}

// dxFindEntry is ext4_dx_find_entry.
func dxFindEntry(t *kernel.Task, dir *Inode, f *Filename, st *libfs.LookupStats) (*DentryRef, error) {
	var frameIn [HtreeLevel]dxFrame // struct dx_frame frames[EXT4_HTREE_LEVEL]
	frames, err := dxProbeIn(t, dir, f, nil, &frameIn)
	if err != nil {
		return nil, err
	}
	for {
		fr := &frames[len(frames)-1]
		block := fr.entries.block(fr.at)
		b, err := dir.readDirblock(t, block, direntHtree, "ext4_dx_find_entry")
		if err != nil {
			return nil, err
		}
		st.Blocks++
		off, err := searchDir(t, dir, f, b, dir.bsize(), block, st)
		if err != nil {
			return nil, errBadDxDir
		}
		if off >= 0 {
			return makeRef(b, block, off), nil
		}
		more, err := htreeNextBlock(t, dir, f.Hinfo.Hash, frames, nil)
		if err != nil {
			dir.warning(t, "ext4_dx_find_entry", "error %v reading directory index block", err)
			return nil, err
		}
		if !more {
			return nil, nil
		}
	}
}

// isDxInternalNode is is_dx_internal_node.
func (dir *Inode) isDxInternalNode(lblk uint32, b []byte) bool {
	if !dir.IsDx() {
		return false
	}
	return lblk == 0 || (direntInode(b, 0) == 0 && direntRecLen(b, 0) == dir.bsize())
}

// FindEntryFname is __ext4_find_entry: "." and ".." in block 0; the htree
// when the directory has one, falling back to the linear search when the
// index is bad, or when the name is missing from a casefolded directory
// whose superblock lacks the no-compat-fallback flag; else every block in
// turn from the last block where a name was found. It returns nil and no
// error when the name is absent. Errors: EFSCORRUPTED, EFSBADCRC, ENOMEM.
func FindEntryFname(t *kernel.Task, dir *Inode, f *Filename) (*DentryRef, error) {
	defer t.Trace("__ext4_find_entry")()
	t.Inc(EvFindEntry)
	var st libfs.LookupStats
	defer st.Flush(t, &lookupEvents)
	if len(f.UsrName) > NameLen {
		return nil, nil
	}
	var start, nblocks uint32
	if isDotDotdot(f.UsrName) {
		start, nblocks = 0, 1
	} else {
		if dir.IsDx() {
			r, err := dxFindEntry(t, dir, f, &st)
			switch {
			case err == errBadDxDir:
				t.Inc(EvLinearFallback)
			case !dir.SB.NoCasefoldCompatFallback() && r == nil && dir.IsCasefolded():
				t.Inc(EvLinearFallback)
			default:
				return r, err
			}
		}
		nblocks = dir.nblocks()
		if nblocks == 0 {
			return nil, nil
		}
		start = dir.dirStartLookup
		if start >= nblocks {
			start = 0
		}
	}
	block := start
	for {
		pblk := dir.PhysBlock(block)
		b := dir.SB.dirBlock(pblk)
		if b != nil {
			if !dir.SB.Dev.BufferVerified(pblk) && !dir.isDxInternalNode(block, b) && !dir.dirblockCsumVerify(t, b) {
				dir.errorInode(t, "__ext4_find_entry", block, "checksumming directory block %d", block)
				return nil, EFSBADCRC
			}
			dir.SB.Dev.SetBufferVerified(pblk)
			st.Blocks++
			off, err := searchDir(t, dir, f, b, dir.bsize(), block, &st)
			if err != nil {
				return nil, err
			}
			if off >= 0 {
				dir.dirStartLookup = block
				return makeRef(b, block, off), nil
			}
		}
		if block++; block >= nblocks {
			block = 0
		}
		if block == start {
			return nil, nil
		}
	}
}

func isDotDotdot(name []byte) bool {
	return (len(name) == 1 && name[0] == '.') || (len(name) == 2 && name[0] == '.' && name[1] == '.')
}

// FindEntry is ext4_find_entry: SetupFilename (as a lookup), then
// FindEntryFname. ENOENT from fscrypt means not found. Errors: those of
// SetupFilename and FindEntryFname.
func FindEntry(t *kernel.Task, dir *Inode, name []byte) (*DentryRef, error) {
	f, err := SetupFilename(t, dir, name, true)
	if err == errno.ENOENT {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer FreeFilename(t, f)
	return FindEntryFname(t, dir, f)
}

// InodeByName returns the inode number of name, or 0; errors as
// FindEntry's.
func InodeByName(t *kernel.Task, dir *Inode, name []byte) (uint32, error) {
	r, err := FindEntry(t, dir, name)
	if r == nil {
		return 0, err
	}
	return r.Entry.Inode, nil
}

// findDestDe is ext4_find_dest_de: the first dirent of the block with room
// for the name (free space after a used dirent, or an unused one). Errors:
// EEXIST when the name is there, ENOSPC, EFSCORRUPTED.
func findDestDe(t *kernel.Task, dir *Inode, f *Filename, b []byte, bufSize int, lblk uint32) (int, error) {
	reclen := DirRecLen(len(f.DiskName), dir.HashInDirent())
	top := bufSize - reclen
	off := 0
	var st libfs.LookupStats
	defer st.Flush(t, &lookupEvents)
	for off <= top {
		if checkDirEntry(t, dir, "ext4_find_dest_de", b, bufSize, off, lblk) {
			return -1, errno.EFSCORRUPTED
		}
		if match(t, dir, f, b, off, &st) {
			return -1, errno.EEXIST
		}
		nlen := DirRecLen(int(b[off+6]), dir.HashInDirent())
		rlen := direntRecLen(b, off)
		free := rlen
		if direntInode(b, off) != 0 {
			free = rlen - nlen
		}
		if free >= reclen {
			return off, nil
		}
		off += rlen
	}
	return -1, errno.ENOSPC
}

// insertDentry is ext4_insert_dentry: the name goes into the dirent at off,
// after splitting the dirent's slack off when it is in use.
func insertDentry(dir *Inode, ino, mode uint32, b []byte, off int, f *Filename) {
	nlen := DirRecLen(int(b[off+6]), dir.HashInDirent())
	rlen := direntRecLen(b, off)
	if direntInode(b, off) != 0 {
		setRecLen(b, off+nlen, rlen-nlen)
		setRecLen(b, off, nlen)
		off += nlen
	}
	b[off+7] = FtUnknown
	setInode(b, off, ino)
	if dir.SB.Filetype {
		b[off+7] = FsUmodeToFtype(mode)
	}
	b[off+6] = byte(len(f.DiskName))
	copy(b[off+8:], f.DiskName)
	if dir.HashInDirent() {
		p := off + ((8 + len(f.DiskName) + dirRound) &^ dirRound)
		putLE32(b[p:], f.Hinfo.Hash)
		putLE32(b[p+4:], f.Hinfo.MinorHash)
	}
}

// addDirentToBuf is add_dirent_to_buf: into the dirent at off, or the first
// with room when off < 0. Errors: ENOSPC, EEXIST, EFSCORRUPTED.
func addDirentToBuf(t *kernel.Task, dir *Inode, f *Filename, ino, mode uint32, b []byte, lblk uint32, off int) error {
	if off < 0 {
		var err error
		off, err = findDestDe(t, dir, f, b, dir.bsize()-dir.SB.csumSize(), lblk)
		if err != nil {
			return err
		}
	}
	insertDentry(dir, ino, mode, b, off, f)
	dir.markDirtyLeaf(t, lblk, b)
	return nil
}

// checkDxRoot is ext4_check_dx_root.
func checkDxRoot(t *kernel.Task, dir *Inode, b []byte) bool {
	msg := ""
	switch {
	case b[6] != 1:
		msg = "invalid name_len for '.'"
	case b[8] != '.':
		msg = "invalid name for '.'"
	case direntRecLen(b, 0) >= dir.bsize():
		msg = "invalid rec_len for '.'"
	case b[12+6] != 2:
		msg = "invalid name_len for '..'"
	case b[20] != '.' || b[21] != '.':
		msg = "invalid name for '..'"
	case 12+direntRecLen(b, 12) >= dir.bsize():
		msg = "invalid rec_len for '..'"
	default:
		return true
	}
	dir.errorInode(t, "make_indexed_dir", 0, "Corrupt dir, %s, running e2fsck is recommended", msg)
	return false
}

// makeIndexedDir is make_indexed_dir: a full one-block directory becomes
// an htree. Its dirents after ".." move to a new block 1, block 0 becomes
// the root (".." now spans it, dx_root_info and one dx_entry follow), and
// block 1 is split at once with do_split before the name is added.
func makeIndexedDir(t *kernel.Task, dir *Inode, f *Filename, ino, mode uint32, b0 []byte) error {
	csum := dir.SB.csumSize()
	if !checkDxRoot(t, dir, b0) {
		return errno.EFSCORRUPTED
	}
	deOff := 12 + direntRecLen(b0, 12)
	l := dir.bsize() - csum - deOff
	lblk1, b1, err := dir.appendBlock()
	if err != nil {
		return err
	}
	dir.Flags |= IndexFL
	copy(b1, b0[deOff:deOff+l])
	clear(b0[deOff : deOff+l])
	de := 0
	for {
		de2 := de + direntRecLen(b1, de)
		if de2 >= l {
			break
		}
		if checkDirEntry(t, dir, "make_indexed_dir", b1, l, de, lblk1) {
			return errno.EFSCORRUPTED
		}
		de = de2
	}
	setRecLen(b1, de, dir.bsize()-csum-de)
	if csum != 0 {
		initializeDirentTail(b1)
	}
	setRecLen(b0, 12, dir.bsize()-DirRecLen(2, false))
	clear(b0[dxRootInfoOff : dxRootInfoOff+dxRootInfoLen])
	b0[dxRootInfoOff+5] = dxRootInfoLen
	hv := dir.SB.DefHashVersion
	if dir.HashInDirent() {
		hv = DxHashSiphash
	}
	b0[dxRootInfoOff+4] = hv
	entries := dxEntries{b: b0, off: dxRootEntriesOff}
	entries.setBlock(0, 1)
	entries.setCount(1)
	entries.setLimit(dir.dxRootLimit(dxRootInfoLen))

	f.Hinfo.HashVersion = hv
	if hv <= DxHashTEA {
		f.Hinfo.HashVersion += dir.SB.HashUnsigned
	}
	f.Hinfo.Seed = &dir.SB.HashSeed
	if !dir.HashInDirent() {
		if err := Dirhash(t, dir, f.DiskName, &f.Hinfo); err != nil {
			return err
		}
	}
	frame := dxFrame{lblk: 0, b: b0, entries: entries, at: 0}
	dir.markDirtyDx(t, 0, b0)
	dir.markDirtyLeaf(t, lblk1, b1)
	off, tb, tlblk, err := doSplit(t, dir, lblk1, b1, &frame, &f.Hinfo)
	if err != nil {
		return err
	}
	return addDirentToBuf(t, dir, f, ino, mode, tb, tlblk, off)
}

// dxMapEntry is struct dx_map_entry.
type dxMapEntry struct {
	hash uint32
	offs uint16 // offset / 4
	size uint16 // rec_len
}

// dxMakeMap is dx_make_map: hash, offset and rec_len of every used dirent
// of the block (up to the checksum tail), in the kernel's order: built
// from the end of the map backwards, so the last dirent comes first.
func dxMakeMap(t *kernel.Task, dir *Inode, b []byte, lblk uint32, hinfo *DxHashInfo) ([]dxMapEntry, error) {
	buflen := dir.bsize() - dir.SB.csumSize()
	var m []dxMapEntry
	h := *hinfo
	for off := 0; off < buflen; {
		if checkDirEntry(t, dir, "dx_make_map", b, buflen, off, lblk) {
			return nil, errno.EFSCORRUPTED
		}
		if nl := int(b[off+6]); nl != 0 && direntInode(b, off) != 0 {
			if dir.HashInDirent() {
				h.Hash, _, _ = direntHashes(b, off)
			} else if err := Dirhash(t, dir, b[off+8:off+8+nl], &h); err != nil {
				return nil, err
			}
			m = append(m, dxMapEntry{hash: h.Hash, offs: uint16(off >> 2), size: uint16(direntRecLen(b, off))})
		}
		off += direntRecLen(b, off)
	}
	for i, j := 0, len(m)-1; i < j; i, j = i+1, j-1 {
		m[i], m[j] = m[j], m[i]
	}
	return m, nil
}

// dxSortMap is dx_sort_map: a comb sort, then a bubble sort, by hash (the
// order of equal hashes, which decides the split, follows the kernel's).
func dxSortMap(m []dxMapEntry) {
	count := len(m)
	top := count - 1
	for count > 2 {
		count = count * 10 / 13
		if count == 9 || count == 10 { // count - 9 < 2, unsigned
			count = 11
		}
		for p, q := top, top-count; q >= 0; p, q = p-1, q-1 {
			if m[p].hash < m[q].hash {
				m[p], m[q] = m[q], m[p]
			}
		}
	}
	for more := true; more; {
		more = false
		for q := top; q > 0; {
			q--
			if m[q+1].hash >= m[q].hash {
				continue
			}
			m[q+1], m[q] = m[q], m[q+1]
			more = true
		}
	}
}

// dxMoveDirents is dx_move_dirents: the mapped dirents are copied packed to
// the start of to and wiped (but for their rec_len) in from; it returns the
// offset of the last one copied.
func dxMoveDirents(dir *Inode, from, to []byte, m []dxMapEntry) int {
	toOff, recLen := 0, 0
	for _, e := range m {
		de := int(e.offs) << 2
		recLen = DirRecLen(int(from[de+6]), dir.HashInDirent())
		copy(to[toOff:toOff+recLen], from[de:de+recLen])
		setRecLen(to, toOff, recLen)
		setInode(from, de, 0)
		clear(from[de+6 : de+direntRecLen(from, de)])
		toOff += recLen
	}
	return toOff - recLen
}

// dxPackDirents is dx_pack_dirents: used dirents slide to the front with
// minimal rec_lens; it returns the offset of the last.
func dxPackDirents(dir *Inode, b []byte) int {
	prev, to := 0, 0
	for de := 0; de < dir.bsize(); {
		rl0 := direntRecLen(b, de)
		if rl0 <= 0 {
			break
		}
		next := de + rl0
		if direntInode(b, de) != 0 && b[de+6] != 0 {
			rl := DirRecLen(int(b[de+6]), dir.HashInDirent())
			if de > to {
				copy(b[to:to+rl], b[de:de+rl])
			}
			setRecLen(b, to, rl)
			prev = to
			to += rl
		}
		de = next
	}
	return prev
}

// dxInsertBlock is dx_insert_block: a new index entry after frame.at.
func dxInsertBlock(fr *dxFrame, hash, block uint32) {
	e := fr.entries
	count := e.count()
	kernel.BUGOn(count >= e.limit(), "dx_insert_block: count < limit")
	kernel.BUGOn(fr.at >= count, "dx_insert_block: old < entries + count")
	nw := fr.at + 1
	copy(e.b[e.off+(nw+1)*8:e.off+(count+1)*8], e.b[e.off+nw*8:e.off+count*8])
	e.setHash(nw, hash)
	e.setBlock(nw, block)
	e.setCount(count + 1)
}

// doSplit is do_split: a full leaf gets a new block; the dirents are
// sorted by hash and the upper part (no more than half the block) moves to
// the new block, which is inserted in the index after frame.at with the
// first moved hash (+1 when equal hashes straddle the split). It returns
// the dirent, block and logical block the new name goes to.
func doSplit(t *kernel.Task, dir *Inode, lblk uint32, b []byte, fr *dxFrame, hinfo *DxHashInfo) (int, []byte, uint32, error) {
	csum := dir.SB.csumSize()
	m, err := dxMakeMap(t, dir, b, lblk, hinfo)
	if err != nil {
		return 0, nil, 0, err
	}
	newLblk, b2, err := dir.appendBlock()
	if err != nil {
		return 0, nil, 0, err
	}
	count := len(m)
	dxSortMap(m)
	size, move := 0, 0
	i := count - 1
	for ; i >= 0; i-- {
		if size+int(m[i].size)/2 > dir.bsize()/2 {
			break
		}
		size += int(m[i].size)
		move++
	}
	split := count / 2
	if i >= 0 {
		split = count - move
	}
	if t.WarnOn(split == 0, "do_split: split == 0") {
		dir.errorInode(t, "do_split", lblk, "bad indexed directory? hash=%08x:%08x count=%d move=%d", hinfo.Hash, hinfo.MinorHash, count, move)
		return 0, nil, 0, errno.EFSCORRUPTED
	}
	hash2 := m[split].hash
	continued := uint32(0)
	if hash2 == m[split-1].hash {
		continued = 1
	}
	de2 := dxMoveDirents(dir, b, b2, m[split:])
	de := dxPackDirents(dir, b)
	setRecLen(b, de, dir.bsize()-csum-de)
	setRecLen(b2, de2, dir.bsize()-csum-de2)
	if csum != 0 {
		initializeDirentTail(b)
		initializeDirentTail(b2)
	}
	tb, tl, toff := b, lblk, de
	if hinfo.Hash >= hash2 {
		tb, tl, toff = b2, newLblk, de2
	}
	dxInsertBlock(fr, hash2+continued, newLblk)
	dir.markDirtyLeaf(t, lblk, b)
	dir.markDirtyLeaf(t, newLblk, b2)
	dir.markDirtyDx(t, fr.lblk, fr.b)
	return toff, tb, tl, nil
}

// dxAddEntry is ext4_dx_add_entry: the name goes into the leaf dx_probe
// finds; a full leaf is split, after splitting a full index node (or
// adding a level, up to two, three with largedir) when needed.
func dxAddEntry(t *kernel.Task, dir *Inode, f *Filename, ino, mode uint32) error {
	var frameIn [HtreeLevel]dxFrame // struct dx_frame frames[EXT4_HTREE_LEVEL]
	for {
		frames, err := dxProbeIn(t, dir, f, nil, &frameIn)
		if err != nil {
			return err
		}
		frame := len(frames) - 1
		entries := frames[frame].entries
		at := frames[frame].at
		lblk := entries.block(at)
		b, err := dir.readDirblock(t, lblk, direntHtree, "ext4_dx_add_entry")
		if err != nil {
			return err
		}
		err = addDirentToBuf(t, dir, f, ino, mode, b, lblk, -1)
		if err != errno.ENOSPC {
			return err
		}
		restart := false
		if entries.count() == entries.limit() {
			levels := frame + 1
			addLevel := true
			for frame > 0 {
				if frames[frame-1].entries.count() < frames[frame-1].entries.limit() {
					addLevel = false
					break
				}
				frame--
				at = frames[frame].at
				entries = frames[frame].entries
				restart = true
			}
			if addLevel && levels == dir.SB.htreeLevel() {
				dir.warning(t, "ext4_dx_add_entry", "Directory (ino: %d) index full, reach max htree level :%d", dir.ino(), levels)
				if dir.SB.htreeLevel() < HtreeLevel {
					dir.warning(t, "ext4_dx_add_entry", "Large directory feature is not enabled on this filesystem")
				}
				return errno.ENOSPC
			}
			icount := entries.count()
			newLblk, b2, err := dir.appendBlock()
			if err != nil {
				return err
			}
			setRecLen(b2, 0, dir.bsize())
			entries2 := dxEntries{b: b2, off: dxNodeEntriesOff}
			if !addLevel {
				icount1 := icount / 2
				icount2 := icount - icount1
				hash2 := entries.hash(icount1)
				copy(b2[entries2.off:], entries.b[entries.off+icount1*8:entries.off+icount*8])
				entries.setCount(icount1)
				entries2.setCount(icount2)
				entries2.setLimit(dir.dxNodeLimit())
				oldLblk, oldB := frames[frame].lblk, frames[frame].b
				if at >= icount1 {
					frames[frame].at = at - icount1
					frames[frame].entries = entries2
					frames[frame].lblk, frames[frame].b = newLblk, b2
				}
				dxInsertBlock(&frames[frame-1], hash2, newLblk)
				dir.markDirtyDx(t, newLblk, b2)
				dir.markDirtyDx(t, oldLblk, oldB)
				dir.markDirtyDx(t, frames[frame-1].lblk, frames[frame-1].b)
				if restart {
					continue
				}
			} else {
				copy(b2[entries2.off:], entries.b[entries.off:entries.off+icount*8])
				entries2.setLimit(dir.dxNodeLimit())
				entries.setCount(1)
				entries.setBlock(0, newLblk)
				frames[0].b[dxRootInfoOff+6]++
				dir.markDirtyDx(t, frames[frame].lblk, frames[frame].b)
				dir.markDirtyDx(t, newLblk, b2)
				continue
			}
		}
		off, tb, tl, err := doSplit(t, dir, lblk, b, &frames[frame], &f.Hinfo)
		if err != nil {
			return err
		}
		return addDirentToBuf(t, dir, f, ino, mode, tb, tl, off)
	}
}

// validateStrictName is generic_ci_validate_strict_name.
func validateStrictName(dir *Inode, name []byte) bool {
	if !dir.IsCasefolded() || !dir.SB.HasStrictEncoding() {
		return true
	}
	return dir.SB.Encoding.Validate(name) == nil
}

// AddEntry is ext4_add_entry: the htree when the directory has one (a bad
// index is dropped and the directory searched linearly, unless
// metadata_csum forbids it); else the first block with room, converting a
// full one-block directory to an htree (make_indexed_dir) when dir_index is
// on, or appending a block. Errors: EEXIST, EINVAL (strict encoding),
// ENOSPC, ENAMETOOLONG, EFSCORRUPTED, EFSBADCRC, ENOMEM and fscrypt's.
func AddEntry(t *kernel.Task, dir *Inode, name []byte, ino, mode uint32) error {
	defer t.Trace("ext4_add_entry")()
	if !validateStrictName(dir, name) {
		return errno.EINVAL
	}
	f, err := SetupFilename(t, dir, name, false)
	if err != nil {
		return err
	}
	defer FreeFilename(t, f)
	dxFallback := false
	if dir.IsDx() {
		err := dxAddEntry(t, dir, f, ino, mode)
		if err != errBadDxDir {
			return err
		}
		if dir.SB.MetadataCsum {
			dir.errorInode(t, "ext4_add_entry", 0, "Directory has corrupted htree index.")
			return errno.EFSCORRUPTED
		}
		dir.Flags &^= IndexFL
		dxFallback = true
	}
	csum := dir.SB.csumSize()
	blocks := dir.nblocks()
	for block := uint32(0); block < blocks; block++ {
		b, err := dir.readDirblock(t, block, dirent, "ext4_add_entry")
		if err != nil {
			return err
		}
		if b == nil { // a hole: allocate it (ext4_bread with CREATE)
			a, nb := dir.SB.allocBlock()
			if nb == nil {
				return errno.ENOSPC
			}
			dir.blocks[block] = a
			setRecLen(nb, 0, dir.bsize()-csum)
			if csum != 0 {
				initializeDirentTail(nb)
			}
			return addDirentToBuf(t, dir, f, ino, mode, nb, block, 0)
		}
		err = addDirentToBuf(t, dir, f, ino, mode, b, block, -1)
		if err != errno.ENOSPC {
			return err
		}
		if blocks == 1 && !dxFallback && dir.SB.DirIndex {
			return makeIndexedDir(t, dir, f, ino, mode, b)
		}
	}
	lblk, b, err := dir.appendBlock()
	if err != nil {
		return err
	}
	setRecLen(b, 0, dir.bsize()-csum)
	if csum != 0 {
		initializeDirentTail(b)
	}
	return addDirentToBuf(t, dir, f, ino, mode, b, lblk, 0)
}

// DeleteEntry is ext4_delete_entry / ext4_generic_delete_entry: the dirent
// merges into the previous one (and is wiped), or, first in its block, is
// marked unused (inode 0) and wiped but for its rec_len. Errors: ENOENT
// when the ref is stale, EFSCORRUPTED.
func DeleteEntry(t *kernel.Task, dir *Inode, r *DentryRef) error {
	b := dir.BlockAt(r.Lblk)
	if b == nil {
		return errno.ENOENT
	}
	csum := dir.SB.csumSize()
	pde := -1
	for i := 0; i < dir.bsize()-csum; {
		if checkDirEntry(t, dir, "ext4_generic_delete_entry", b, dir.bsize(), i, r.Lblk) {
			return errno.EFSCORRUPTED
		}
		if i == r.Off {
			if direntInode(b, i) == 0 || !bytes.Equal(b[i+8:i+8+int(b[i+6])], r.Name) {
				return errno.ENOENT
			}
			rl := direntRecLen(b, i)
			if pde >= 0 {
				setRecLen(b, pde, direntRecLen(b, pde)+rl)
				clear(b[i : i+rl])
			} else {
				setInode(b, i, 0)
				clear(b[i+6 : i+rl])
			}
			dir.markDirtyLeaf(t, r.Lblk, b)
			return nil
		}
		pde = i
		i += direntRecLen(b, i)
	}
	return errno.ENOENT
}

// SetLink is ext4_setent: the dirent now names inode ino (rename onto an
// existing name). Errors: ENOENT when the ref is stale.
func SetLink(t *kernel.Task, dir *Inode, r *DentryRef, ino, mode uint32) error {
	b := dir.BlockAt(r.Lblk)
	if b == nil || direntInode(b, r.Off) == 0 {
		return errno.ENOENT
	}
	setInode(b, r.Off, ino)
	if dir.SB.Filetype {
		b[r.Off+7] = FsUmodeToFtype(mode)
	}
	dir.markDirtyLeaf(t, r.Lblk, b)
	r.Entry.Inode = ino
	return nil
}

// SetDotdot is ext4_rename_dir_prepare + ext4_rename_dir_finish: the ".."
// entry of a directory that moved to a new parent now names parentIno
// (the second dirent of block 0, in the dx root of an htree), and the
// block's checksum follows. Errors: EFSCORRUPTED when block 0 does not
// start with "." and "..", EFSBADCRC.
func SetDotdot(t *kernel.Task, dir *Inode, parentIno uint32) error {
	b, err := dir.readDirblock(t, 0, either, "ext4_get_first_dir_block")
	if err != nil {
		return err
	}
	if b == nil || checkDirEntry(t, dir, "ext4_get_first_dir_block", b, dir.bsize(), 0, 0) ||
		direntInode(b, 0) != dir.ino() || b[6] != 1 || b[8] != '.' {
		dir.warning(t, "ext4_get_first_dir_block", "directory missing '.'")
		return errno.EFSCORRUPTED
	}
	off := direntRecLen(b, 0)
	if checkDirEntry(t, dir, "ext4_get_first_dir_block", b, dir.bsize(), off, 0) ||
		direntInode(b, off) == 0 || b[off+6] != 2 || b[off+8] != '.' || b[off+9] != '.' {
		dir.warning(t, "ext4_get_first_dir_block", "directory missing '..'")
		return errno.EFSCORRUPTED
	}
	setInode(b, off, parentIno)
	if dir.IsDx() {
		dir.markDirtyDx(t, 0, b)
	} else {
		dir.markDirtyLeaf(t, 0, b)
	}
	return nil
}

// InitNewDir is ext4_init_new_dir with ext4_init_dot_dotdot: block 0 holds
// "." (rec_len 12) and ".." spanning the rest of the block (up to the
// checksum tail). The directory must have no blocks yet (a new inode).
func InitNewDir(t *kernel.Task, dir *Inode, parentIno uint32) error {
	csum := dir.SB.csumSize()
	dir.SetSize(0)
	dir.blocks = nil
	lblk, b, err := dir.appendBlock()
	if err != nil {
		return err
	}
	setInode(b, 0, dir.ino())
	b[6] = 1
	setRecLen(b, 0, DirRecLen(1, false))
	b[8] = '.'
	setInode(b, 12, parentIno)
	b[12+6] = 2
	setRecLen(b, 12, dir.bsize()-(csum+DirRecLen(1, false)))
	b[20], b[21] = '.', '.'
	if dir.SB.Filetype {
		b[7], b[12+7] = FtDir, FtDir
	}
	if csum != 0 {
		initializeDirentTail(b)
	}
	dir.markDirtyLeaf(t, lblk, b)
	return nil
}

// EmptyDir is ext4_empty_dir: only "." and "..". A directory whose blocks
// cannot be read, or whose "." or ".." is missing, is not empty (with a
// log line).
func EmptyDir(t *kernel.Task, dir *Inode) bool {
	if dir.Size() < int64(DirRecLen(1, false)+DirRecLen(2, false)) {
		dir.errorInode(t, "ext4_empty_dir", 0, "invalid size")
		return false
	}
	b, err := dir.readDirblock(t, 0, either, "ext4_empty_dir")
	if err != nil || b == nil {
		return false
	}
	if checkDirEntry(t, dir, "ext4_empty_dir", b, dir.bsize(), 0, 0) || direntInode(b, 0) != dir.ino() || b[6] != 1 || b[8] != '.' {
		dir.warning(t, "ext4_empty_dir", "directory missing '.'")
		return false
	}
	offset := direntRecLen(b, 0)
	if checkDirEntry(t, dir, "ext4_empty_dir", b, dir.bsize(), offset, 0) || direntInode(b, offset) == 0 || b[offset+6] != 2 || b[offset+8] != '.' || b[offset+9] != '.' {
		dir.warning(t, "ext4_empty_dir", "directory missing '..'")
		return false
	}
	offset += direntRecLen(b, offset)
	for int64(offset) < dir.Size() {
		if offset%dir.bsize() == 0 {
			lblk := uint32(offset / dir.bsize())
			nb, err := dir.readDirblock(t, lblk, either, "ext4_empty_dir")
			if err != nil {
				return false
			}
			if nb == nil {
				offset += dir.bsize()
				continue
			}
			b = nb
		}
		o := offset % dir.bsize()
		if checkDirEntry(t, dir, "ext4_empty_dir", b, dir.bsize(), o, uint32(offset/dir.bsize())) || direntInode(b, o) != 0 {
			return false
		}
		offset += direntRecLen(b, o)
	}
	return true
}

// putLE32 writes v little-endian.
func putLE32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// The inode operations of directories (ext4_dir_inode_operations,
// fs/ext4/namei.c). The VFS calls each with the directory's i_rwsem held
// exclusive (shared for Lookup of a walk) and with references on the
// dentries and inodes it passes; a rename holds both parents' locks and,
// across directories, s_vfs_rename_mutex.

// LinkMax is EXT4_LINK_MAX: the most links a non-directory may have.
const LinkMax = 65000

// dirOps are a directory's inode operations (ext4_dir_inode_operations).
type dirOps struct {
	vfs.NoInodeOps
	sb *SuperBlock
}

// Lookup is ext4_lookup: ext4_lookup_entry (the htree, or the linear
// search, with the fallback a casefolded miss takes), the inode number's
// checks, ext4_iget, and d_splice_alias, which takes over the inode
// reference. An encrypted directory refuses a directory or symlink whose
// policy it does not permit (EPERM, with a warning). As in Linux before
// 6.9, a miss in a casefolded directory leaves the dentry unhashed rather
// than caching a negative dentry (the model has no
// generic_ci_d_revalidate). Errors: ENAMETOOLONG, EFSCORRUPTED (a corrupt
// block, a bad inode number), EFSBADCRC, EPERM, ENOMEM, fscrypt's.
func (o *dirOps) Lookup(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, flags uint32) (*vfs.Dentry, error) {
	defer t.Trace("ext4_lookup")()
	if len(d.Name().Name) > NameLen {
		return nil, errno.ENAMETOOLONG
	}
	ei := EXT4_I(dir)
	var inode *vfs.Inode
	f, err := prepareLookup(t, ei, d)
	switch {
	case err == errno.ENOENT:
	case err != nil:
		return nil, err
	default:
		ref, err := FindEntryFname(t, ei, f)
		FreeFilename(t, f)
		if err != nil {
			return nil, err
		}
		if ref != nil {
			ino := ref.Entry.Inode
			if uint64(ino) == dir.Ino() {
				ei.errorInode(t, "ext4_lookup", 0, "'%s' linked to parent dir", d.Name().Name)
				return nil, errno.EFSCORRUPTED
			}
			found, err := o.sb.iget(t, ei, ino)
			if err != nil {
				return nil, err
			}
			inode = &found.Inode
		}
	}
	return libfs.FinishLookup(t, dir, d, inode, func(dir, inode *vfs.Inode) {
		t.Printk("EXT4-fs warning (device %s): ext4_lookup: Inconsistent encryption contexts: %d/%d", o.sb.Name, dir.Ino(), inode.Ino())
	})
}

// addEntry is ext4_add_entry for the dentry's name (ext4_fname_setup_filename
// without lookup: ENOKEY without the key).
func addEntry(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, inode *vfs.Inode) error {
	return AddEntry(t, EXT4_I(dir), []byte(d.Name().Name), uint32(inode.Ino()), inode.Mode())
}

// Create is ext4_create: a new regular file (__ext4_new_inode, with
// fscrypt_prepare_new_inode and fscrypt_set_context), then
// ext4_add_nondir. Errors: ENOKEY, ENOSPC, EEXIST, EINVAL (strict
// encoding), EFSCORRUPTED, EFSBADCRC, ENOMEM, fscrypt's.
func (o *dirOps) Create(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, mode uint32, excl bool) error {
	defer t.Trace("ext4_create")()
	if err := o.sb.writable(); err != nil {
		return err
	}
	inode, err := o.sb.newInode(t, EXT4_I(dir), mode&^vfs.S_IFMT|vfs.S_IFREG)
	if err != nil {
		return err
	}
	if err := addEntry(t, dir, d, &inode.Inode); err != nil {
		discard(t, inode)
		return err
	}
	o.sb.dirtyInodes(t, dir, &inode.Inode)
	dcache.DInstantiate(t, d, &inode.Inode)
	return nil
}

// Mkdir is ext4_mkdir: a new directory (ext4_init_new_dir: "." and ".."
// in block 0), its entry, and the link counts (2, and one more for the
// parent). Errors: those of Create.
func (o *dirOps) Mkdir(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, mode uint32) error {
	defer t.Trace("ext4_mkdir")()
	if err := o.sb.writable(); err != nil {
		return err
	}
	inode, err := o.sb.newInode(t, EXT4_I(dir), mode&^vfs.S_IFMT|vfs.S_IFDIR)
	if err != nil {
		return err
	}
	if err := InitNewDir(t, inode, uint32(dir.Ino())); err != nil {
		discard(t, inode)
		return err
	}
	if err := addEntry(t, dir, d, &inode.Inode); err != nil {
		discard(t, inode)
		return err
	}
	inode.SetNlink(2)
	dir.IncNlink()
	o.sb.dirtyInodes(t, dir, &inode.Inode)
	dcache.DInstantiate(t, d, &inode.Inode)
	return nil
}

// findDentry is ext4_find_entry for a dentry's name (a no-key name is
// decoded), checked against the inode the dentry holds (ENOENT
// otherwise, as __ext4_unlink and ext4_rename do).
func findDentry(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry) (*DentryRef, error) {
	ref, err := FindEntry(t, EXT4_I(dir), []byte(d.Name().Name))
	if err != nil {
		return nil, err
	}
	if ref == nil || (d.Inode() != nil && uint64(ref.Entry.Inode) != d.Inode().Ino()) {
		return nil, errno.ENOENT
	}
	return ref, nil
}

// Unlink is ext4_unlink (__ext4_unlink): find the entry, delete it
// (ext4_delete_entry), drop the link. In a casefolded directory the dentry
// is invalidated rather than left negative, as Linux before 6.9 does (see
// Lookup): a negative "b" would otherwise be reused, name and all, by a
// create of "B". The VFS also holds the victim's i_rwsem. Errors: ENOENT,
// EFSCORRUPTED, EFSBADCRC, ENOMEM, fscrypt's.
func (o *dirOps) Unlink(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry) error {
	defer t.Trace("ext4_unlink")()
	if err := o.sb.writable(); err != nil {
		return err
	}
	ref, err := findDentry(t, dir, d)
	if err != nil {
		return err
	}
	if err := DeleteEntry(t, EXT4_I(dir), ref); err != nil {
		return err
	}
	if dir.IsCasefolded() {
		dcache.DInvalidate(t, d)
	}
	d.Inode().DropNlink(t)
	o.sb.dirtyInodes(t, dir, d.Inode())
	return nil
}

// Rmdir is ext4_rmdir: find the entry (EFSCORRUPTED if it names another
// inode), ENOTEMPTY unless the directory is empty, delete the entry, clear
// the directory's links and drop the parent's. The VFS also holds the
// victim's i_rwsem. Errors: ENOENT, ENOTEMPTY, EFSCORRUPTED, EFSBADCRC,
// ENOMEM, fscrypt's.
func (o *dirOps) Rmdir(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry) error {
	defer t.Trace("ext4_rmdir")()
	if err := o.sb.writable(); err != nil {
		return err
	}
	ei := EXT4_I(dir)
	ref, err := FindEntry(t, ei, []byte(d.Name().Name))
	if err != nil {
		return err
	}
	if ref == nil {
		return errno.ENOENT
	}
	inode := d.Inode()
	if uint64(ref.Entry.Inode) != inode.Ino() {
		return errno.EFSCORRUPTED
	}
	if !EmptyDir(t, EXT4_I(inode)) {
		return errno.ENOTEMPTY
	}
	if err := DeleteEntry(t, ei, ref); err != nil {
		return err
	}
	if dir.IsCasefolded() {
		dcache.DInvalidate(t, d)
	}
	inode.ClearNlink()
	dir.DropNlink(t)
	o.sb.dirtyInodes(t, dir)
	return nil
}

// Rename is ext4_rename2: the flags (RENAME_WHITEOUT is not modelled:
// EINVAL), fscrypt_prepare_rename (ENOKEY for a no-key name, EXDEV for a
// move the new directory's policy forbids), then ext4_cross_rename for
// RENAME_EXCHANGE or ext4_rename. Errors besides: ENOENT, ENOTEMPTY,
// EEXIST, ENOSPC, EFSCORRUPTED, EFSBADCRC, ENOMEM.
func (o *dirOps) Rename(t *kernel.Task, oldDir *vfs.Inode, oldD *vfs.Dentry, newDir *vfs.Inode, newD *vfs.Dentry, flags uint32) error {
	defer t.Trace("ext4_rename2")()
	if err := o.sb.writable(); err != nil {
		return err
	}
	exchange, err := libfs.PrepareRename2(t, oldDir, oldD, newDir, newD, flags)
	if err != nil {
		return err
	}
	oldInode, newInode := oldD.Inode(), newD.Inode()
	if exchange {
		err = crossRename(t, oldDir, oldD, newDir, newD)
	} else {
		err = rename(t, oldDir, oldD, newDir, newD)
	}
	o.sb.dirtyInodes(t, oldDir, newDir, oldInode, newInode)
	return err
}

// rename is ext4_rename: the old entry (ENOENT if it names another inode),
// the new one if the target exists, ENOTEMPTY for a non-empty target
// directory, then the new name (ext4_add_entry, or ext4_setent over the
// target), the old entry's removal (ext4_rename_delete, which finds it
// again when the directory changed under it), the target's link, and for a
// directory ".." (ext4_rename_dir_finish) and the parents' links.
func rename(t *kernel.Task, oldDir *vfs.Inode, oldD *vfs.Dentry, newDir *vfs.Inode, newD *vfs.Dentry) error {
	oldInode, newInode := oldD.Inode(), newD.Inode()
	oldRef, err := findDentry(t, oldDir, oldD)
	if err != nil {
		return err
	}
	var newRef *DentryRef
	if newInode != nil {
		if newRef, err = findDentry(t, newDir, newD); err != nil {
			return err
		}
	}
	isDir := oldInode.IsDir()
	if isDir && newInode != nil && !EmptyDir(t, EXT4_I(newInode)) {
		return errno.ENOTEMPTY
	}
	if newRef == nil {
		if err := addEntry(t, newDir, newD, oldInode); err != nil {
			return err
		}
	} else if err := SetLink(t, EXT4_I(newDir), newRef, uint32(oldInode.Ino()), oldInode.Mode()); err != nil {
		return err
	}
	// "Now we can't fail": the old entry's removal only warns.
	renameDelete(t, EXT4_I(oldDir), oldRef, oldD, uint32(oldInode.Ino()))
	if newInode != nil {
		newInode.DropNlink(t)
	}
	if isDir {
		if oldDir != newDir {
			if err := SetDotdot(t, EXT4_I(oldInode), uint32(newDir.Ino())); err != nil {
				return err
			}
		}
		oldDir.DropNlink(t)
		if newInode != nil {
			newInode.ClearNlink()
		} else {
			newDir.IncNlink()
		}
	}
	return nil
}

// renameDelete is ext4_rename_delete: the old entry removed where it was
// found, unless the dirent there no longer has the old inode and the
// dentry's name (a split of its block moved it; and always in an
// encrypted or case-insensitively matched directory, whose on-disk name
// is not d_name), when it is looked up again by name
// (ext4_find_delete_entry); so also when ext4_delete_entry finds it gone
// (ENOENT). It returns nothing: a failure is logged ("Deleting old file")
// and the rename goes on, leaving the old name linked.
func renameDelete(t *kernel.Task, dir *Inode, ref *DentryRef, d *vfs.Dentry, ino uint32) {
	name := []byte(d.Name().Name)
	b := dir.BlockAt(ref.Lblk)
	var err error
	if b == nil || ref.Off+8+len(name) > len(b) || direntInode(b, ref.Off) != ino ||
		int(b[ref.Off+6]) != len(name) || !bytes.Equal(b[ref.Off+8:ref.Off+8+len(name)], name) {
		err = findDeleteEntry(t, dir, name)
	} else if err = DeleteEntry(t, dir, ref); err == errno.ENOENT {
		err = findDeleteEntry(t, dir, name)
	}
	if err != nil {
		e, _ := errno.Of(err)
		dir.warning(t, "ext4_rename_delete", "Deleting old file: nlink %d, error=%d", dir.Nlink(), -int(e))
	}
}

// findDeleteEntry is ext4_find_delete_entry: the entry named name found
// (ext4_find_entry) and deleted. Errors: ENOENT, ext4_find_entry's and
// ext4_delete_entry's.
func findDeleteEntry(t *kernel.Task, dir *Inode, name []byte) error {
	ref, err := FindEntry(t, dir, name)
	if err != nil {
		return err
	}
	if ref == nil {
		return errno.ENOENT
	}
	return DeleteEntry(t, dir, ref)
}

// crossRename is ext4_cross_rename (RENAME_EXCHANGE): each entry names the
// other inode (ext4_setent), moved directories get their ".." updated, and
// the parents' link counts follow a directory that changes parent.
func crossRename(t *kernel.Task, oldDir *vfs.Inode, oldD *vfs.Dentry, newDir *vfs.Inode, newD *vfs.Dentry) error {
	oldInode, newInode := oldD.Inode(), newD.Inode()
	oldRef, err := findDentry(t, oldDir, oldD)
	if err != nil {
		return err
	}
	newRef, err := findDentry(t, newDir, newD)
	if err != nil {
		return err
	}
	if err := SetLink(t, EXT4_I(newDir), newRef, uint32(oldInode.Ino()), oldInode.Mode()); err != nil {
		return err
	}
	if err := SetLink(t, EXT4_I(oldDir), oldRef, uint32(newInode.Ino()), newInode.Mode()); err != nil {
		return err
	}
	if oldDir != newDir {
		if oldInode.IsDir() {
			if err := SetDotdot(t, EXT4_I(oldInode), uint32(newDir.Ino())); err != nil {
				return err
			}
		}
		if newInode.IsDir() {
			if err := SetDotdot(t, EXT4_I(newInode), uint32(oldDir.Ino())); err != nil {
				return err
			}
		}
		if oldInode.IsDir() != newInode.IsDir() {
			if oldInode.IsDir() {
				oldDir.DropNlink(t)
				newDir.IncNlink()
			} else {
				newDir.DropNlink(t)
				oldDir.IncNlink()
			}
		}
	}
	return nil
}

// Link is ext4_link: EMLINK at EXT4_LINK_MAX, fscrypt_prepare_link (ENOKEY
// for a no-key dentry, EXDEV when the directory's policy does not permit
// the inode), then __ext4_link's new entry, which takes a reference on the
// inode. The VFS also holds the inode's i_rwsem. Errors besides: EEXIST,
// ENOSPC, EFSCORRUPTED, EFSBADCRC, ENOMEM.
func (o *dirOps) Link(t *kernel.Task, oldD *vfs.Dentry, dir *vfs.Inode, newD *vfs.Dentry) error {
	defer t.Trace("ext4_link")()
	if err := o.sb.writable(); err != nil {
		return err
	}
	inode := oldD.Inode()
	if inode.Nlink() >= LinkMax {
		return errno.EMLINK
	}
	if err := hooks.FscryptPrepareLink(t, oldD, dir, newD); err != nil {
		return err
	}
	vfs.Ihold(inode)
	if err := addEntry(t, dir, newD, inode); err != nil {
		vfs.Iput(t, inode)
		return err
	}
	inode.IncNlink()
	o.sb.dirtyInodes(t, dir, inode)
	dcache.DInstantiate(t, newD, inode)
	return nil
}

// Symlink is ext4_symlink: fscrypt_prepare_symlink (the target fits a
// block: ENAMETOOLONG otherwise), the new inode, its target
// (fscrypt_encrypt_symlink in an encrypted directory), then
// ext4_add_nondir. Errors besides: those of Create.
func (o *dirOps) Symlink(t *kernel.Task, dir *vfs.Inode, d *vfs.Dentry, target string) error {
	defer t.Trace("ext4_symlink")()
	if err := o.sb.writable(); err != nil {
		return err
	}
	diskLen, _, err := hooks.FscryptPrepareSymlink(t, dir, target, o.sb.blocksize())
	if err != nil {
		return err
	}
	inode, err := o.sb.newInode(t, EXT4_I(dir), vfs.S_IFLNK|0o777)
	if err != nil {
		return err
	}
	if inode.IsEncrypted() {
		sd, err := hooks.FscryptEncryptSymlink(t, &inode.Inode, target, diskLen)
		if err != nil {
			discard(t, inode)
			return err
		}
		inode.target = sd
		inode.SetSize(int64(diskLen - 1))
	} else {
		inode.target = append([]byte(target), 0)
		inode.SetSize(int64(len(target)))
		inode.SetLink(target)
	}
	// On an image the target goes to disk first (a slow symlink's block
	// may be the one a full image lacks: ENOSPC before the name).
	if err := o.sb.writeInode(t, inode); err != nil {
		discard(t, inode)
		return err
	}
	if err := addEntry(t, dir, d, &inode.Inode); err != nil {
		discard(t, inode)
		return err
	}
	o.sb.dirtyInodes(t, dir, &inode.Inode)
	dcache.DInstantiate(t, d, &inode.Inode)
	return nil
}

// writable is the read-only check the VFS's mnt_want_write makes before
// a change on a read-only superblock (sb_rdonly): EROFS.
func (sb *SuperBlock) writable() error {
	if sb.disk != nil && sb.disk.readOnly {
		return errno.EROFS
	}
	return nil
}

// Setattr of a directory: nothing to truncate.
func (o *dirOps) Setattr(t *kernel.Task, d *vfs.Dentry, attr *vfs.Iattr) error { return nil }
