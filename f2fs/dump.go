package f2fs

import (
	"fmt"
	"strings"

	"github.com/vfslab/vfslab/kernel"
)

// String is the canonical one-line dump of a dentry area: the number of
// slots in use and each valid dentry as slot:hash/ino/type/name, in the
// spirit of dump.f2fs's dentry listing. A corrupt name_len is shown as
// "!len=N" and stops the walk.
func (d *DentryPtr) String() string { return dumpArea(nil, nil, d) }

func dumpArea(t *kernel.Task, dir *Inode, d *DentryPtr) string {
	var b strings.Builder
	used := 0
	for i := 0; i < d.Max; i++ {
		if d.TestBit(i) {
			used++
		}
	}
	fmt.Fprintf(&b, "slots=%d/%d", used, d.Max)
	for bitPos := d.FindNextBit(0); bitPos < d.Max; {
		de := d.Entry(bitPos)
		if de.NameLen == 0 {
			fmt.Fprintf(&b, " %d:empty", bitPos)
			bitPos = d.FindNextBit(bitPos + 1)
			continue
		}
		name, ok := d.Name(bitPos, int(de.NameLen))
		if !ok || de.NameLen > NameLen {
			fmt.Fprintf(&b, " %d:!len=%d", bitPos, de.NameLen)
			break
		}
		shown := quoteName(name)
		if dir != nil && dir.IsEncrypted() && !isDotDotdotName(name) {
			if plain, ok := decryptForCheck(t, dir, name); ok {
				shown = quoteName(plain)
			}
		}
		fmt.Fprintf(&b, " %d:%08x/%d/%d/%s", bitPos, de.HashCode, de.Ino, de.FileType, shown)
		bitPos = d.FindNextBit(bitPos + GetDentrySlots(int(de.NameLen)))
	}
	return b.String()
}

// DumpBlock is the canonical one-line dump of the dentry block at page
// index bidx: its level and bucket, then its dentries (names decrypted when
// the directory is encrypted and its key is present).
func DumpBlock(t *kernel.Task, dir *Inode, bidx uint64) string {
	blk := dir.findDataBlock(bidx)
	if blk == nil {
		return fmt.Sprintf("page %d: hole", bidx)
	}
	d := MakeDentryPtrBlock(blk)
	where := fmt.Sprintf("page %d", bidx)
	if level, bucket, ok := LevelOfBlock(bidx, dir.DirLevel, dir.CurrentDepth); ok {
		where += fmt.Sprintf(" L%d/B%d", level, bucket)
	}
	return where + ": " + dumpArea(t, dir, &d)
}

// DumpDir is the canonical one-line dump of a whole directory: the inode's
// state, then the inline area or every dentry block ("; "-separated).
func DumpDir(t *kernel.Task, dir *Inode) string {
	var parts []string
	if dir.Inline {
		d := dir.InlineDentryPtr()
		parts = append(parts, "inline: "+dumpArea(t, dir, &d))
	} else {
		for _, bidx := range dir.Pages() {
			parts = append(parts, DumpBlock(t, dir, bidx))
		}
	}
	return dir.String() + " {" + strings.Join(parts, "; ") + "}"
}
