package f2fs

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/libfs"
)

// AreaKind is the kind of a dentry area.
type AreaKind uint8

// Dentry area kinds.
const (
	// AreaInline is the inline dentry area of a directory's inode block
	// (make_dentry_ptr_inline).
	AreaInline AreaKind = iota
	// AreaDentryBlock is a struct f2fs_dentry_block: the bitmap, the
	// reserved bytes, 214 dentries and their name slots.
	AreaDentryBlock
)

// String names the kind as the dumps do.
func (k AreaKind) String() string {
	if k == AreaInline {
		return "inline"
	}
	return "dentry"
}

// Dirent is a dentry as WalkDirents reports it: a slot whose bit is set in
// the area's bitmap, with its decoded struct f2fs_dir_entry.
type Dirent struct {
	// Slot is the dentry's bit position in the area.
	Slot int
	// Entry is the decoded dentry: hash_code, ino, name_len, file_type.
	Entry DirEntry
	// Slots is GET_DENTRY_SLOTS(name_len): the name slots the dentry
	// takes; 0 for a set bit over a dentry whose name_len is 0.
	Slots int
	// Name is the on-disk name (a copy; ciphertext in an encrypted
	// directory); nil when Slots is 0.
	Name []byte
	// User is what readdir shows for an encrypted directory's name
	// (fscrypt_fname_disk_to_usr with the stored hash_code: the plaintext
	// with the key, a no-key name without it); nil when the directory is
	// not encrypted or the name does not convert.
	User []byte
	// UserErr is fscrypt's error when an encrypted directory's name does
	// not convert (nil otherwise).
	UserErr error
}

// DentryArea is one dentry area of a directory, decoded.
type DentryArea struct {
	// Kind says whether the area is the inline area or a dentry block.
	Kind AreaKind
	// Page is a dentry block's page index in the directory (0 for the
	// inline area).
	Page uint64
	// InTable is set when the block lies in a hash level below
	// i_current_depth; Level, Bucket and Buckets are then its level, its
	// bucket in the level and the level's bucket count (dir_buckets).
	InTable bool
	Level   uint32
	Bucket  uint64
	Buckets uint64
	// Max is the area's dentry count (NR_DENTRY_IN_BLOCK or
	// NR_INLINE_DENTRY); Used the bits set in its bitmap.
	Max, Used int
	// Dirents are the dentries in slot order, continuation slots skipped.
	Dirents []Dirent
	// BadSlot is the slot of a dentry whose name_len runs past the area
	// or past F2FS_NAME_LEN, where the walk stopped (BadNameLen is that
	// name_len); -1 when there is none.
	BadSlot    int
	BadNameLen uint16
}

// DirLayout is a directory's on-disk structure as WalkDirents decodes it:
// the inode fields that shape it and its dentry areas, the inline area or
// every dentry block by page index.
type DirLayout struct {
	Ino      uint64
	Size     int64
	Depth    uint32
	DirLevel uint32
	Inline   bool
	Casefold bool
	Encrypt  bool
	// HasKey is set for an encrypted directory whose key is set up.
	HasKey bool
	Areas  []DentryArea
}

// walkDentries is the package's dirent walker: it calls fn with each
// dentry of d whose bit is set, from slot from on, in slot order, and
// continues after the slots the name takes. A set bit over a dentry with
// name_len 0 is reported with Slots 0 and the walk goes on with the next
// set bit; a name_len that runs past the area or past F2FS_NAME_LEN is
// reported with ok false, and the walk goes on with the next set bit
// after it. fn returns false to stop. name aliases the area.
func (d *DentryPtr) walkDentries(from int, fn func(bitPos int, de DirEntry, slots int, name []byte, ok bool) bool) {
	for bitPos := d.FindNextBit(from); bitPos < d.Max; {
		de := d.Entry(bitPos)
		if de.NameLen == 0 {
			if !fn(bitPos, de, 0, nil, true) {
				return
			}
			bitPos = d.FindNextBit(bitPos + 1)
			continue
		}
		name, ok := d.Name(bitPos, int(de.NameLen))
		if !ok || de.NameLen > NameLen {
			if !fn(bitPos, de, 0, nil, false) {
				return
			}
			bitPos = d.FindNextBit(bitPos + 1)
			continue
		}
		slots := GetDentrySlots(int(de.NameLen))
		if !fn(bitPos, de, slots, name, true) {
			return
		}
		bitPos = d.FindNextBit(bitPos + slots)
	}
}

// decodeArea decodes one dentry area; for an encrypted dir (not nil) the
// names are converted as readdir converts them.
func decodeArea(t *kernel.Task, dir *Inode, d *DentryPtr, kind AreaKind, page uint64) DentryArea {
	a := DentryArea{Kind: kind, Page: page, Max: d.Max, BadSlot: -1, Dirents: []Dirent{}}
	for i := 0; i < d.Max; i++ {
		if d.TestBit(i) {
			a.Used++
		}
	}
	encrypted := t != nil && dir != nil && dir.IsEncrypted()
	var out []byte
	if encrypted {
		out = make([]byte, max(fscrypt.NokeyNameMaxEncoded, NameLen)+1)
	}
	d.walkDentries(0, func(bitPos int, de DirEntry, slots int, name []byte, ok bool) bool {
		if !ok {
			a.BadSlot, a.BadNameLen = bitPos, de.NameLen
			return false
		}
		e := Dirent{Slot: bitPos, Entry: de, Slots: slots, Name: bytes.Clone(name)}
		if encrypted && slots != 0 {
			if n, err := fscrypt.FnameDiskToUsr(t, &dir.Inode, de.HashCode, 0, name, out); err == nil {
				e.User = bytes.Clone(out[:n])
			} else {
				e.UserErr = err
			}
		}
		a.Dirents = append(a.Dirents, e)
		return true
	})
	return a
}

// blockArea decodes the dentry block at page index bidx with its place in
// the hash table.
func blockArea(t *kernel.Task, dir *Inode, bidx uint64) DentryArea {
	d := MakeDentryPtrBlock(dir.findDataBlock(bidx))
	a := decodeArea(t, dir, &d, AreaDentryBlock, bidx)
	if level, bucket, ok := LevelOfBlock(bidx, dir.DirLevel, dir.CurrentDepth); ok {
		a.InTable, a.Level, a.Bucket, a.Buckets = true, level, bucket, dirBuckets(level, dir.DirLevel)
	}
	return a
}

// WalkDirents decodes a directory's on-disk structure, as dump.f2fs would
// list it: the inline area of an inline directory, else every dentry
// block by page index with its hash level and bucket, and in each area
// every dentry (slot, hash_code, ino, name_len, file_type, name slots,
// on-disk name, and for an encrypted directory the name readdir shows).
// A corrupt name_len ends its area's walk (DentryArea.BadSlot). The
// caller must not change the directory meanwhile (hold its i_rwsem); t
// may be nil, then encrypted names are not converted.
func WalkDirents(t *kernel.Task, dir *Inode) *DirLayout {
	l := &DirLayout{Ino: dir.Ino(), Size: dir.Size(), Depth: dir.CurrentDepth, DirLevel: dir.DirLevel,
		Inline: dir.Inline, Casefold: dir.IsCasefolded(), Encrypt: dir.IsEncrypted()}
	l.HasKey = l.Encrypt && fscrypt.HasEncryptionKey(&dir.Inode)
	if dir.Inline {
		d := dir.InlineDentryPtr()
		l.Areas = append(l.Areas, decodeArea(t, dir, &d, AreaInline, 0))
		return l
	}
	for _, bidx := range dir.Pages() {
		l.Areas = append(l.Areas, blockArea(t, dir, bidx))
	}
	return l
}

// String is the canonical one-line dump of a dentry area: the number of
// slots in use and each valid dentry as slot:hash/ino/type/name, in the
// spirit of dump.f2fs's dentry listing. A corrupt name_len is shown as
// "!len=N" and stops the walk.
func (d *DentryPtr) String() string {
	a := decodeArea(nil, nil, d, AreaDentryBlock, 0)
	return a.text(false)
}

// text renders the area as String does; showUser shows the names readdir
// shows (an encrypted directory with its key) instead of the on-disk
// bytes.
func (a *DentryArea) text(showUser bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "slots=%d/%d", a.Used, a.Max)
	for _, e := range a.Dirents {
		if e.Slots == 0 {
			fmt.Fprintf(&b, " %d:empty", e.Slot)
			continue
		}
		shown := libfs.QuoteName(e.Name)
		if showUser && e.User != nil && !isDotDotdotName(e.Name) {
			shown = libfs.QuoteName(e.User)
		}
		fmt.Fprintf(&b, " %d:%08x/%d/%d/%s", e.Slot, e.Entry.HashCode, e.Entry.Ino, e.Entry.FileType, shown)
	}
	if a.BadSlot >= 0 {
		fmt.Fprintf(&b, " %d:!len=%d", a.BadSlot, a.BadNameLen)
	}
	return b.String()
}

// blockText renders a dentry block's area with its place in the table.
func (a *DentryArea) blockText(showUser bool) string {
	where := fmt.Sprintf("page %d", a.Page)
	if a.InTable {
		where += fmt.Sprintf(" L%d/B%d", a.Level, a.Bucket)
	}
	return where + ": " + a.text(showUser)
}

// DumpBlock is the canonical one-line dump of the dentry block at page
// index bidx: its level and bucket, then its dentries (names decrypted when
// the directory is encrypted and its key is present).
func DumpBlock(t *kernel.Task, dir *Inode, bidx uint64) string {
	if dir.findDataBlock(bidx) == nil {
		return fmt.Sprintf("page %d: hole", bidx)
	}
	a := blockArea(t, dir, bidx)
	return a.blockText(dir.IsEncrypted() && fscrypt.HasEncryptionKey(&dir.Inode))
}

// DumpDir is the canonical one-line dump of a whole directory: the inode's
// state, then the inline area or every dentry block ("; "-separated).
func DumpDir(t *kernel.Task, dir *Inode) string {
	l := WalkDirents(t, dir)
	var parts []string
	for i := range l.Areas {
		a := &l.Areas[i]
		if a.Kind == AreaInline {
			parts = append(parts, "inline: "+a.text(l.HasKey))
		} else {
			parts = append(parts, a.blockText(l.HasKey))
		}
	}
	return dir.String() + " {" + strings.Join(parts, "; ") + "}"
}
