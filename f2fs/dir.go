package f2fs

import (
	"bytes"
	"fmt"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/libfs"
	"github.com/vfslab/vfslab/vfs"
)

// Events counted by the directory code, once per operation.
var (
	// EvFindEntry counts __f2fs_find_entry calls.
	EvFindEntry = events.Register("f2fs_find_entry", "f2fs __f2fs_find_entry calls (directory lookups)")
	// EvLinearFallback counts lookups restarted with use_hash=false.
	EvLinearFallback = events.Register("f2fs_linear_fallback", "f2fs lookups restarted as a linear search after a hashed miss in a casefolded directory")
	// EvDirentsScanned counts valid dentries visited by lookups.
	EvDirentsScanned = events.Register("f2fs_dirents_scanned", "f2fs dentries visited by f2fs_find_target_dentry")
	// EvNamesCompared counts f2fs_match_name calls.
	EvNamesCompared = events.Register("f2fs_names_compared", "f2fs f2fs_match_name calls (dentries whose hash matched, or every dentry with use_hash=false)")
	// EvNameDecrypts counts on-disk names decrypted by generic_ci_match.
	EvNameDecrypts = events.Register("f2fs_name_decrypts", "f2fs on-disk names decrypted by generic_ci_match during lookups")
	// EvDentryBlocks counts dentry blocks (and inline areas) searched.
	EvDentryBlocks = events.Register("f2fs_dentry_blocks_searched", "f2fs dentry blocks and inline dentry areas searched by lookups")
)

// Allocation sites of the directory code.
var siteRehashBackup = kmem.NewSite("f2fs_move_rehashed_dirents:backup")

// lookupEvents are the counters a lookup's libfs.LookupStats add to.
var lookupEvents = libfs.LookupEvents{Scanned: EvDirentsScanned, Compared: EvNamesCompared, Decrypts: EvNameDecrypts, Blocks: EvDentryBlocks}

// DentryRef locates a dentry found by a lookup: the block (page index) or
// the inline area, and the slot. It is what the kernel's (de, folio) pair
// stands for, and stays valid until the directory changes.
type DentryRef struct {
	// Inline is set when the dentry is in the inode's inline area.
	Inline bool
	// Page is the page index of the dentry block.
	Page uint64
	// BitPos is the dentry's slot.
	BitPos int
	// Entry is the dentry.
	Entry DirEntry
	// Name is the on-disk name (a copy).
	Name []byte
	// nameBuf holds Name for names of up to NameLen bytes, so that a
	// found entry is one Go object. The kernel returns a pointer to the
	// f2fs_dir_entry in the page instead: the reference itself is the
	// model's, and the one Go allocation of a lookup that finds a name
	// beyond its kmallocs.
	nameBuf [NameLen]byte
}

// String is the canonical one-line dump of a found dentry.
func (r *DentryRef) String() string {
	where := fmt.Sprintf("page=%d", r.Page)
	if r.Inline {
		where = "inline"
	}
	return fmt.Sprintf("%s slot=%d %s name=%x", where, r.BitPos, r.Entry, r.Name)
}

// dentryPtrOf returns the dentry pointer a ref points into.
func (dir *Inode) dentryPtrOf(r *DentryRef) (DentryPtr, bool) {
	if r.Inline {
		if !dir.Inline {
			return DentryPtr{}, false
		}
		return dir.InlineDentryPtr(), true
	}
	blk := dir.findDataBlock(r.Page)
	if blk == nil {
		return DentryPtr{}, false
	}
	return MakeDentryPtrBlock(blk), true
}

// corrupted reports a dentry whose name runs past its area, as
// f2fs_fill_dentries does, and returns EFSCORRUPTED.
func corrupted(t *kernel.Task, dir *Inode, fn string, nameLen int) error {
	dir.SB.warn(t, "%s: corrupted namelen=%d, run fsck to fix.", fn, nameLen)
	return errno.EFSCORRUPTED
}

// findTargetDentry is f2fs_find_target_dentry: it walks the valid dentries
// of d and compares those whose hash matches (every one when useHash is
// false). It returns the slot of the match or -1, and the longest run of free
// slots seen (max_slots).
//
// The model adds one check the kernel makes in f2fs_fill_dentries but not
// here: a name that runs past the last slot, or is longer than F2FS_NAME_LEN,
// is EFSCORRUPTED instead of a read past the block.
func findTargetDentry(t *kernel.Task, dir *Inode, d *DentryPtr, f *Filename, useHash bool, pre *vfs.DecryptedNamePrealloc, st *libfs.LookupStats) (int, int, error) {
	bitPos, maxLen, maxSlots := 0, 0, 0
	for bitPos < d.Max {
		if !d.TestBit(bitPos) {
			bitPos++
			maxLen++
			continue
		}
		nl := d.nameLenAt(bitPos)
		if nl == 0 {
			bitPos++
			continue
		}
		st.Scanned++
		if !useHash || d.hashAt(bitPos) == f.Hash {
			name, ok := d.Name(bitPos, nl)
			if !ok || nl > NameLen {
				return -1, maxSlots, corrupted(t, dir, "f2fs_find_target_dentry", nl)
			}
			st.Compared++
			res, err := matchName(t, dir, f, name, pre, st)
			if err != nil {
				return -1, maxSlots, err
			}
			if res {
				if maxLen > maxSlots {
					maxSlots = maxLen
				}
				return bitPos, maxSlots, nil
			}
		}
		if maxLen > maxSlots {
			maxSlots = maxLen
		}
		maxLen = 0
		bitPos += GetDentrySlots(nl)
	}
	if maxLen > maxSlots {
		maxSlots = maxLen
	}
	return -1, maxSlots, nil
}

// matchName is f2fs_match_name: generic_ci_match when the lookup has a
// casefolded name, else fscrypt_match_name.
func matchName(t *kernel.Task, dir *Inode, f *Filename, deName []byte, pre *vfs.DecryptedNamePrealloc, st *libfs.LookupStats) (bool, error) {
	if f.CfName != nil {
		parent := ciParent(dir)
		if parent.Crypt != nil {
			st.Decrypts++
		}
		res, err := vfs.GenericCIMatch(t, &parent, f.UsrName, f.CfName, deName, pre)
		return res > 0, err
	}
	if f.hasCrypt {
		return f.matchCrypt(deName), nil
	}
	return bytes.Equal(f.DiskName, deName), nil
}

func makeRef(d *DentryPtr, inline bool, page uint64, bitPos int) *DentryRef {
	de := d.Entry(bitPos)
	name, _ := d.Name(bitPos, int(de.NameLen))
	r := &DentryRef{Inline: inline, Page: page, BitPos: bitPos, Entry: de}
	if len(name) <= len(r.nameBuf) {
		r.Name = r.nameBuf[:len(name):len(name)]
		copy(r.Name, name)
	} else {
		r.Name = bytes.Clone(name) // a corrupt name_len
	}
	return r
}

// findInInlineDir is f2fs_find_in_inline_dir.
func findInInlineDir(t *kernel.Task, dir *Inode, f *Filename, useHash bool, pre *vfs.DecryptedNamePrealloc, st *libfs.LookupStats) (*DentryRef, error) {
	d := dir.InlineDentryPtr()
	st.Blocks++
	pos, _, err := findTargetDentry(t, dir, &d, f, useHash, pre, st)
	if err != nil || pos < 0 {
		return nil, err
	}
	return makeRef(&d, true, 0, pos), nil
}

// findInLevel is find_in_level: the blocks of the name's bucket at level
// (with useHash), or of every bucket of the level (without). A hashed miss
// that saw room for the name remembers the level (chash/clevel) for the
// create that usually follows.
func findInLevel(t *kernel.Task, dir *Inode, level uint32, f *Filename, useHash bool, pre *vfs.DecryptedNamePrealloc, st *libfs.LookupStats) (*DentryRef, error) {
	s := GetDentrySlots(len(f.DiskName))
	nbucket := dirBuckets(level, dir.DirLevel)
	nblock := bucketBlocks(level)
	room := false

	search := func(bidx uint64) (*DentryRef, error) {
		blk := dir.findDataBlock(bidx)
		if blk == nil {
			room = true
			return nil, nil
		}
		st.Blocks++
		d := MakeDentryPtrBlock(blk)
		pos, maxSlots, err := findTargetDentry(t, dir, &d, f, useHash, pre, st)
		if err != nil {
			return nil, err
		}
		if pos >= 0 {
			return makeRef(&d, false, bidx, pos), nil
		}
		if maxSlots >= s {
			room = true
		}
		return nil, nil
	}

	if useHash {
		bidx := dirBlockIndex(level, dir.DirLevel, uint64(f.Hash)%nbucket)
		for end := bidx + nblock; bidx < end; bidx++ {
			if r, err := search(bidx); r != nil || err != nil {
				return r, err
			}
		}
		if room && dir.chash != f.Hash {
			dir.chash = f.Hash
			dir.clevel = level
		}
		return nil, nil
	}
	// Every bucket of the level in order. Holes are skipped, as
	// f2fs_find_data_folio's next_pgofs does, by walking the mapped pages
	// of the level's range rather than each of its (up to 2^32) indexes.
	start := dirBlockIndex(level, dir.DirLevel, 0)
	end := start + nbucket*nblock
	if end-start <= 4*uint64(dir.data.Len())+64 {
		// A range not much larger than the mapped pages is walked
		// index by index, holes skipped by the lookup itself: the same
		// pages in the same order, without the sorted list of every
		// mapped page (a Go allocation and a sort per level that the
		// kernel's next_pgofs walk does not make).
		for bidx := start; bidx < end; bidx++ {
			if _, mapped := dir.data.Addr(bidx); !mapped {
				continue
			}
			if r, err := search(bidx); r != nil || err != nil {
				return r, err
			}
		}
		return nil, nil
	}
	for _, bidx := range dir.Pages() {
		if bidx < start || bidx >= end {
			continue
		}
		if r, err := search(bidx); r != nil || err != nil {
			return r, err
		}
	}
	return nil, nil
}

// shouldFallbackToLinear is f2fs_should_fallback_to_linear.
func shouldFallbackToLinear(dir *Inode) bool {
	switch dir.SB.LookupMode {
	case LookupPerf:
		return false
	case LookupCompat:
		return true
	case LookupAuto:
		return !dir.SB.NoCasefoldCompatFallback()
	}
	return false
}

// FindEntryFname is __f2fs_find_entry: it searches the inline area, or each
// level of the hash table in turn, for the prepared name; in a casefolded
// directory a miss is retried as a linear search of every bucket when
// lookup_mode (and the superblock's encoding flags) allow it. It returns nil
// and no error when the name is absent.
//
// The f2fs-lookup-prealloc variant decides how generic_ci_match gets its
// decryption buffers: base kmallocs one per compared dentry; v2 and v4
// thread a decrypted_name_prealloc through the search and free it at the
// end.
//
// The caller holds dir's i_rwsem (a miss records, for the create that
// follows, the level with room and the task). Errors: EFSCORRUPTED (a
// name_len past its area), EUCLEAN (an undecryptable name in a casefolded,
// encrypted directory), ENOMEM.
func FindEntryFname(t *kernel.Task, dir *Inode, f *Filename) (*DentryRef, error) {
	defer t.Trace("__f2fs_find_entry")()
	t.Inc(EvFindEntry)
	var st libfs.LookupStats
	defer st.Flush(t, &lookupEvents)
	var pre *vfs.DecryptedNamePrealloc
	switch lookupPrealloc.Of(t.K.Patches()) {
	case LookupPreallocBase:
	case LookupPreallocV2:
		pre = &vfs.DecryptedNamePrealloc{Site: sitePrealloc}
	case LookupPreallocV4:
		pre = &vfs.DecryptedNamePrealloc{Fixed: true, Site: sitePrealloc}
	}
	useHash := true
	var de *DentryRef
	var resErr error
	for {
		var err error
		if dir.Inline {
			de, err = findInInlineDir(t, dir, f, useHash, pre, &st)
		} else if dir.dirBlocks() != 0 {
			maxDepth := dir.CurrentDepth
			if maxDepth > MaxDirHashDepth {
				dir.SB.warn(t, "Corrupted max_depth of %d: %d", dir.Ino(), maxDepth)
				maxDepth = MaxDirHashDepth
				dir.CurrentDepth = maxDepth
			}
			for level := uint32(0); level < maxDepth; level++ {
				de, err = findInLevel(t, dir, level, f, useHash, pre, &st)
				// The kernel breaks on IS_ERR(*res_folio), which
				// still holds the hashed pass's error in the
				// linear retry (*res_folio = NULL comes before
				// the start_find_entry label): that retry then
				// searches level 0 only.
				if de != nil || err != nil || resErr != nil {
					break
				}
			}
		}
		if err != nil {
			resErr = err
		}
		if shouldFallbackToLinear(dir) && dir.IsCasefolded() && de == nil && useHash {
			useHash = false
			t.Inc(EvLinearFallback)
			continue
		}
		break
	}
	if pre != nil {
		pre.Release(t)
	}
	if de == nil {
		dir.task = t
		return nil, resErr
	}
	return de, nil
}

// FindEntry is f2fs_find_entry: SetupFilename (as a lookup), then
// FindEntryFname. A name that cannot exist (ENOENT from fscrypt) is simply
// not found. The caller holds dir's i_rwsem. Errors: FindEntryFname's,
// SetupFilename's but ENOENT.
func FindEntry(t *kernel.Task, dir *Inode, name []byte) (*DentryRef, error) {
	var f Filename
	err := SetupFilename(t, dir, name, true, &f)
	if err == errno.ENOENT {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer FreeFilename(t, dir, &f)
	return FindEntryFname(t, dir, &f)
}

// InodeByName is f2fs_inode_by_name: the inode number of name, or 0.
// Locks and errors as FindEntry's.
func InodeByName(t *kernel.Task, dir *Inode, name []byte) (uint32, error) {
	r, err := FindEntry(t, dir, name)
	if r == nil {
		return 0, err
	}
	return r.Entry.Ino, nil
}

// updateParentMetadata is the part of f2fs_update_parent_metadata the
// directory layer owns: the new depth.
func updateParentMetadata(dir *Inode, currentDepth uint32) {
	if dir.CurrentDepth != currentDepth {
		dir.CurrentDepth = currentDepth
	}
}

// AddRegularEntry is f2fs_add_regular_entry: it puts the name in the first
// block of its bucket with room, starting at level 0 (or at the level a
// preceding lookup found room in), going one level deeper when the bucket
// is full and growing i_current_depth. Every block it probes is allocated.
// The caller holds dir's i_rwsem exclusive. Errors: ENOSPC at
// MAX_DIR_HASH_DEPTH.
func AddRegularEntry(t *kernel.Task, dir *Inode, f *Filename, ino, mode uint32) error {
	level := uint32(0)
	slots := GetDentrySlots(len(f.DiskName))
	currentDepth := dir.CurrentDepth
	if dir.chash == f.Hash {
		level = dir.clevel
		dir.chash = 0
	}
	for {
		if currentDepth == MaxDirHashDepth {
			return errno.ENOSPC
		}
		if level == currentDepth {
			currentDepth++
		}
		nbucket := dirBuckets(level, dir.DirLevel)
		nblock := bucketBlocks(level)
		bidx := dirBlockIndex(level, dir.DirLevel, uint64(f.Hash)%nbucket)
		for block := bidx; block <= bidx+nblock-1; block++ {
			b := dir.getNewDataBlock(block)
			if b == nil {
				return errno.ENOSPC
			}
			d := MakeDentryPtrBlock(b)
			if bitPos := RoomForFilename(&d, slots); bitPos < NrDentryInBlock {
				d.UpdateDentry(ino, mode, f.DiskName, f.Hash, bitPos)
				updateParentMetadata(dir, currentDepth)
				return nil
			}
		}
		level++
	}
}

// AddInlineEntry is f2fs_add_inline_entry: the name goes into the inline
// area; when there is no room the directory is converted to dentry blocks
// (f2fs_convert_inline_dir) and EAGAIN tells the caller to add it there.
// The caller holds dir's i_rwsem exclusive. Errors: EAGAIN and
// ConvertInlineDir's.
func AddInlineEntry(t *kernel.Task, dir *Inode, f *Filename, ino, mode uint32) error {
	d := dir.InlineDentryPtr()
	bitPos := RoomForFilename(&d, GetDentrySlots(len(f.DiskName)))
	if bitPos >= d.Max {
		if err := ConvertInlineDir(t, dir); err != nil {
			return err
		}
		return errno.EAGAIN
	}
	d.UpdateDentry(ino, mode, f.DiskName, f.Hash, bitPos)
	updateParentMetadata(dir, 0)
	return nil
}

// ConvertInlineDir is f2fs_convert_inline_dir: with i_dir_level 0 the inline
// bitmap, dentries and names are copied as they are into block 0
// (f2fs_move_inline_dirents: level 0 has a single bucket, so every hash
// belongs there); otherwise every dentry is re-added to the hash table
// (f2fs_move_rehashed_dirents). The caller holds dir's i_rwsem exclusive.
// Errors: ENOMEM, EFSCORRUPTED (a corrupt inline dentry), ENOSPC; the
// inline dentries are restored on error.
func ConvertInlineDir(t *kernel.Task, dir *Inode) error {
	if dir.DirLevel == 0 {
		src := dir.InlineDentryPtr()
		b := dir.getNewDataBlock(0)
		if b == nil {
			return errno.ENOSPC
		}
		dst := MakeDentryPtrBlock(b)
		copy(dst.Bitmap, src.Bitmap)
		clear(dst.Bitmap[src.NrBitmap:])
		copy(dst.Dentry, src.Dentry[:SizeOfDirEntry*src.Max])
		copy(dst.Filename, src.Filename[:SlotLen*src.Max])
		clear(dir.inlineArea())
		dir.Inline = false
		dir.CurrentDepth = 1
		if dir.Size() < BlockSize {
			dir.SetSize(BlockSize)
		}
		return nil
	}
	backup, err := t.Kzalloc(siteRehashBackup, dir.Geo.MaxInlineData, kmem.GFPNoFS)
	if err != nil {
		return errno.ENOMEM
	}
	defer t.Kfree(siteRehashBackup, backup)
	copy(backup, dir.inlineArea())
	clear(dir.inlineArea())
	dir.CurrentDepth = 0
	d := MakeDentryPtrInline(dir.Geo, backup)
	for bitPos := 0; bitPos < d.Max; {
		if !d.TestBit(bitPos) {
			bitPos++
			continue
		}
		de := d.Entry(bitPos)
		if de.NameLen == 0 {
			bitPos++
			continue
		}
		name, ok := d.Name(bitPos, int(de.NameLen))
		if !ok {
			copy(dir.inlineArea(), backup)
			return corrupted(t, dir, "f2fs_add_inline_entries", int(de.NameLen))
		}
		f := &Filename{DiskName: name, Hash: de.HashCode}
		if err := AddRegularEntry(t, dir, f, de.Ino, uint32(FsFtypeToDtype(de.FileType))<<12); err != nil {
			// punch_dentry_pages, then restore the inline dentries.
			for _, p := range dir.Pages() {
				dir.truncateHole(p)
			}
			copy(dir.inlineArea(), backup)
			dir.CurrentDepth = 0
			dir.SetSize(int64(dir.Geo.MaxInlineData))
			return err
		}
		bitPos += GetDentrySlots(int(de.NameLen))
	}
	dir.Inline = false
	return nil
}

// AddDentry is f2fs_add_dentry: inline first, then the hash table. The
// caller holds dir's i_rwsem exclusive. Errors: AddRegularEntry's and
// ConvertInlineDir's.
func AddDentry(t *kernel.Task, dir *Inode, f *Filename, ino, mode uint32) error {
	var err error = errno.EAGAIN
	if dir.Inline {
		err = AddInlineEntry(t, dir, f, ino, mode)
	}
	if err == errno.EAGAIN {
		err = AddRegularEntry(t, dir, f, ino, mode)
	}
	return err
}

// AddLink is f2fs_do_add_link: it prepares the name, checks that it is not
// there yet (unless this task's own lookup just missed it, f2fs's create
// shortcut), and adds a dentry for inode ino of the given mode. The
// caller holds dir's i_rwsem exclusive. Errors: EEXIST, ENOSPC,
// ENAMETOOLONG, EINVAL (strict encoding), EFSCORRUPTED, ENOMEM and
// fscrypt's (ENOKEY without the directory's key).
func AddLink(t *kernel.Task, dir *Inode, name []byte, ino, mode uint32) error {
	defer t.Trace("f2fs_do_add_link")()
	var f Filename
	if err := SetupFilename(t, dir, name, false, &f); err != nil {
		return err
	}
	defer FreeFilename(t, dir, &f)
	var de *DentryRef
	var err error
	if dir.task != t {
		de, err = FindEntryFname(t, dir, &f)
		dir.task = nil
	}
	switch {
	case de != nil:
		return errno.EEXIST
	case err != nil:
		return err
	}
	return AddDentry(t, dir, &f, ino, mode)
}

// DeleteEntry is f2fs_delete_entry (and f2fs_delete_inline_entry): it clears
// the dentry's slots in the bitmap (the dentry and name bytes stay) and
// punches the block out of the directory when it holds no dentry anymore.
// The caller holds dir's i_rwsem exclusive. Errors: ENOENT when the ref
// no longer points at a valid dentry.
func DeleteEntry(t *kernel.Task, dir *Inode, r *DentryRef) error {
	d, ok := dir.dentryPtrOf(r)
	if !ok || r.BitPos < 0 || r.BitPos >= d.Max || !d.TestBit(r.BitPos) {
		return errno.ENOENT
	}
	slots := GetDentrySlots(int(r.Entry.NameLen))
	for i := 0; i < slots && r.BitPos+i < d.Max; i++ {
		d.clearBit(r.BitPos + i)
	}
	if !r.Inline && d.FindNextBit(0) == d.Max {
		dir.truncateHole(r.Page)
	}
	return nil
}

// SetLink is f2fs_set_link: the dentry now names inode ino of the given
// mode (rename onto an existing name). The caller holds dir's i_rwsem
// exclusive. Errors: ENOENT when the ref no longer points at a valid
// dentry.
func SetLink(t *kernel.Task, dir *Inode, r *DentryRef, ino, mode uint32) error {
	d, ok := dir.dentryPtrOf(r)
	if !ok || !d.TestBit(r.BitPos) {
		return errno.ENOENT
	}
	d.setIno(r.BitPos, ino, FsUmodeToFtype(mode))
	r.Entry.Ino, r.Entry.FileType = ino, FsUmodeToFtype(mode)
	return nil
}

// ParentDirRef is f2fs_parent_dir: the ".." dentry, in slot 1 of the inline
// area or of block 0. The caller holds dir's i_rwsem. Errors: EIO when
// block 0 is missing (a hole).
func ParentDirRef(dir *Inode) (*DentryRef, error) {
	if dir.Inline {
		d := dir.InlineDentryPtr()
		return makeRef(&d, true, 0, 1), nil
	}
	blk := dir.findDataBlock(0)
	if blk == nil {
		return nil, errno.EIO
	}
	d := MakeDentryPtrBlock(blk)
	return makeRef(&d, false, 0, 1), nil
}

// MakeEmptyDir is make_empty_dir (with f2fs_do_make_empty_dir and
// f2fs_make_empty_inline_dir): "." and ".." in slots 0 and 1 of the inline
// area (i_size becomes MAX_INLINE_DATA) or of block 0. A new directory
// starts at depth 1 (f2fs_new_inode). dir is new: no one else can see
// it yet. Errors: ENOSPC when no block is left for block 0 (an image).
func MakeEmptyDir(t *kernel.Task, dir *Inode, parentIno, parentMode uint32) error {
	dir.CurrentDepth = 1
	var d DentryPtr
	if dir.Inline {
		d = dir.InlineDentryPtr()
		if dir.Size() < int64(dir.Geo.MaxInlineData) {
			dir.SetSize(int64(dir.Geo.MaxInlineData))
		}
	} else {
		b := dir.getNewDataBlock(0)
		if b == nil {
			return errno.ENOSPC
		}
		d = MakeDentryPtrBlock(b)
	}
	d.UpdateDentry(dir.nid(), dir.Mode(), []byte("."), 0, 0)
	d.UpdateDentry(parentIno, parentMode, []byte(".."), 0, 1)
	return nil
}

// EmptyDir is f2fs_empty_dir: no dentry besides "." and "..". The caller
// holds dir's i_rwsem.
func EmptyDir(t *kernel.Task, dir *Inode) bool {
	if dir.Inline {
		d := dir.InlineDentryPtr()
		return d.FindNextBit(2) >= d.Max
	}
	for _, bidx := range dir.Pages() {
		if bidx >= dir.dirBlocks() {
			break
		}
		d := MakeDentryPtrBlock(dir.findDataBlock(bidx))
		from := 0
		if bidx == 0 {
			from = 2
		}
		if d.FindNextBit(from) < d.Max {
			return false
		}
	}
	return true
}

// dirFileOps are a directory's file operations (f2fs_dir_operations).
// They have no ->open: since Linux 5.11 (commit "f2fs: remove
// f2fs_dir_open()") an encrypted directory opens whether or not its key
// can be set up, and readdir sets it up itself, so a key setup that fails
// (ENOMEM) fails getdents, not open.
type dirFileOps struct {
	vfs.DirFileOps
	sbi *SuperBlock
}

// Llseek is generic_file_llseek_size over the directory's positions
// (slots: page * 214 + slot, or inline slots). The VFS holds f_pos_lock.
// Errors: EINVAL, ENXIO (SEEK_DATA or SEEK_HOLE at or past i_size).
func (o *dirFileOps) Llseek(t *kernel.Task, f *vfs.File, off int64, whence int) (int64, error) {
	inode := f.Inode()
	return vfs.GenericFileLlseek(f, off, whence, inode.SB().MaxBytes(), inode.Size())
}

// IterateShared is f2fs_readdir: fscrypt_prepare_readdir, then the dentries
// from the position on, in slot order of the inline area or of each dentry
// block ("." and ".." are the first two dentries), names decrypted, or
// shown as no-key names whose dirhash is the dentry's hash_code without the
// key. The VFS holds the directory's i_rwsem shared (iterate_dir) and
// f_pos_lock; readers of one directory are serialised by readMu. Errors:
// EFSCORRUPTED (a corrupt dentry, with a warning), ENOMEM, fscrypt's.
func (o *dirFileOps) IterateShared(t *kernel.Task, f *vfs.File, ctx *vfs.DirContext) error {
	defer t.Trace("f2fs_readdir")()
	dir := f.Inode()
	if dir.IsEncrypted() {
		if err := hooks.FscryptPrepareReaddir(t, dir); err != nil {
			return err
		}
	}
	fi := F2FS_I(dir)
	fi.readMu.Lock()
	defer fi.readMu.Unlock()
	fctx := &DirContext{Pos: ctx.Pos}
	fctx.Actor = func(name []byte, ino uint32, dtype uint8) bool {
		ctx.Pos = fctx.Pos
		return ctx.DirEmit(string(name), uint64(ino), dtype)
	}
	err := Readdir(t, fi, fctx)
	ctx.Pos = fctx.Pos
	return err
}

// UnlockedIoctl is f2fs_ioctl (see SuperBlock.ioctl).
func (o *dirFileOps) UnlockedIoctl(t *kernel.Task, f *vfs.File, cmd uint32, arg any) (int, error) {
	return o.sbi.ioctl(t, f, cmd, arg)
}

// DirContext is struct dir_context: the readdir position and the actor that
// receives each entry (dir_emit); the actor returns false when it has no
// room for more.
type DirContext struct {
	Pos   int64
	Actor func(name []byte, ino uint32, dtype uint8) bool
}

// fillDentries is f2fs_fill_dentries.
func fillDentries(t *kernel.Task, dir *Inode, ctx *DirContext, d *DentryPtr, startPos int64, fstr []byte) (stop bool, err error) {
	bitPos := int(ctx.Pos % int64(d.Max))
	found := false
	for bitPos < d.Max {
		bitPos = d.FindNextBit(bitPos)
		if bitPos >= d.Max {
			break
		}
		de := d.Entry(bitPos)
		if de.NameLen == 0 {
			if found || bitPos == 0 {
				dir.SB.warn(t, "invalid namelen(0), ino:%d, run fsck to fix.", de.Ino)
			}
			bitPos++
			ctx.Pos = startPos + int64(bitPos)
			continue
		}
		dtype := FsFtypeToDtype(de.FileType)
		namePos := bitPos
		bitPos += GetDentrySlots(int(de.NameLen))
		if bitPos > d.Max || de.NameLen > NameLen {
			return false, corrupted(t, dir, "f2fs_fill_dentries", int(de.NameLen))
		}
		name, _ := d.Name(namePos, int(de.NameLen))
		if dir.IsEncrypted() {
			n, err := fscrypt.FnameDiskToUsr(t, &dir.Inode, de.HashCode, 0, name, fstr)
			if err != nil {
				return false, err
			}
			name = fstr[:n]
		}
		if !ctx.Actor(name, de.Ino, dtype) {
			return true, nil
		}
		ctx.Pos = startPos + int64(bitPos)
		found = true
	}
	return false, nil
}

// Readdir is f2fs_readdir (and f2fs_read_inline_dir): it emits the entries
// from ctx.Pos on, in slot order of the inline area or of each dentry block
// by page index (positions are page*214 + slot), decrypting names in an
// encrypted directory. It stops early when the actor is full. The caller
// holds dir's i_rwsem (shared is enough) and serialises readers of one
// directory. Errors: EFSCORRUPTED for a corrupt name_len, ENOMEM,
// fscrypt's errors (EUCLEAN for an undecryptable name).
func Readdir(t *kernel.Task, dir *Inode, ctx *DirContext) error {
	var fstr []byte
	if dir.IsEncrypted() {
		var err error
		fstr, err = t.Kmalloc(siteFstr, NameLen, kmem.GFPNoFS)
		if err != nil {
			return errno.ENOMEM
		}
		defer t.Kfree(siteFstr, fstr)
	}
	if dir.Inline {
		d := dir.InlineDentryPtr()
		if ctx.Pos == int64(d.Max) {
			return nil
		}
		stop, err := fillDentries(t, dir, ctx, &d, 0, fstr)
		if err == nil && !stop {
			ctx.Pos = int64(d.Max)
		}
		return err
	}
	// Holes are skipped as f2fs_find_data_folio's next_pgofs does, by
	// walking the mapped pages.
	npages := dir.dirBlocks()
	first := uint64(ctx.Pos / NrDentryInBlock)
	for _, n := range dir.Pages() {
		if n < first {
			continue
		}
		if n >= npages {
			break
		}
		ctx.Pos = max(ctx.Pos, int64(n)*NrDentryInBlock)
		d := MakeDentryPtrBlock(dir.findDataBlock(n))
		stop, err := fillDentries(t, dir, ctx, &d, int64(n)*NrDentryInBlock, fstr)
		if err != nil {
			return err
		}
		if stop {
			return nil
		}
		ctx.Pos = int64(n+1) * NrDentryInBlock
	}
	if p := int64(npages) * NrDentryInBlock; ctx.Pos < p {
		ctx.Pos = p
	}
	return nil
}
