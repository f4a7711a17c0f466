package f2fs

import (
	"errors"
	"fmt"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/libfs"
)

// areaCheck is the state of checking one dentry area.
type areaCheck struct {
	problems []string
	where    string
}

func (c *areaCheck) fail(format string, args ...any) {
	c.problems = append(c.problems, c.where+": "+fmt.Sprintf(format, args...))
}

// CheckDentryPtr checks one dentry area in the spirit of fsck.f2fs's
// __chk_dentries: every valid dentry has a name_len in 1..255 whose slots
// stay inside the area and are all marked in the bitmap, continuation slots
// carry name_len 0 (dentries do not overlap), the file type is known and the
// inode number is not 0. hashOf, when not nil, computes the expected
// hash_code of an on-disk name (ok false when it cannot, e.g. without the
// key); bucketOK, when not nil, says whether a hash belongs in this block's
// bucket. It returns the problems found.
func CheckDentryPtr(d *DentryPtr, where string, hashOf func(name []byte) (uint32, bool), bucketOK func(hash uint32) bool) []string {
	c := &areaCheck{where: where}
	d.walkDentries(0, func(bitPos int, de DirEntry, slots int, name []byte, ok bool) bool {
		switch {
		case !ok:
			c.fail("slot %d: name_len %d runs past the area", bitPos, de.NameLen)
			return true
		case slots == 0:
			c.fail("slot %d: bitmap bit set over an empty slot (name_len 0)", bitPos)
			return true
		}
		for i := 1; i < slots; i++ {
			if !d.TestBit(bitPos + i) {
				c.fail("slot %d: continuation slot %d not in the bitmap", bitPos, bitPos+i)
			}
			if n := d.nameLenAt(bitPos + i); n != 0 {
				c.fail("slot %d: overlaps the dentry in slot %d (name_len %d)", bitPos, bitPos+i, n)
			}
		}
		if de.Ino == 0 {
			c.fail("slot %d: inode 0", bitPos)
		}
		if de.FileType >= FtMax {
			c.fail("slot %d: file type %d", bitPos, de.FileType)
		}
		if hashOf != nil {
			if h, ok := hashOf(name); ok && h != de.HashCode {
				c.fail("slot %d: hash_code %08x, name %s hashes to %08x", bitPos, de.HashCode, libfs.QuoteName(name), h)
			}
		}
		if bucketOK != nil && !bucketOK(de.HashCode) {
			c.fail("slot %d: hash_code %08x is not in this block's bucket", bitPos, de.HashCode)
		}
		return true
	})
	return c.problems
}

// CheckDir checks a whole directory in the spirit of fsck.f2fs: each area
// with CheckDentryPtr (hash codes recomputed as f2fs_hash_filename does,
// decrypting names when the directory is encrypted and casefolded and the
// key is present), "." and ".." in slots 0 and 1 of the inline area or of
// block 0, each dentry block in a bucket of a level below i_current_depth
// with every hash in that bucket, no block past i_size, and no name twice
// (by casefolded form in a casefolded directory). It returns nil or a
// *libfs.CheckError, and logs the first problem.
func CheckDir(t *kernel.Task, dir *Inode) error {
	var problems []string
	hashOf := func(name []byte) (uint32, bool) { return expectedHash(t, dir, name) }
	seen := map[string]string{}
	checkDups := func(d *DentryPtr, where string) {
		d.walkDentries(0, func(bitPos int, _ DirEntry, slots int, name []byte, ok bool) bool {
			if !ok || slots == 0 {
				return true
			}
			if key, ok := nameKey(t, dir, name); ok {
				if prev, dup := seen[key]; dup {
					problems = append(problems, fmt.Sprintf("%s slot %d: name %s also at %s", where, bitPos, libfs.QuoteName(name), prev))
				} else {
					seen[key] = fmt.Sprintf("%s slot %d", where, bitPos)
				}
			}
			return true
		})
	}
	checkDots := func(d *DentryPtr, where string) {
		for i, want := range []string{".", ".."} {
			de := d.Entry(i)
			name, _ := d.Name(i, int(de.NameLen))
			if !d.TestBit(i) || string(name) != want || de.HashCode != 0 {
				problems = append(problems, fmt.Sprintf("%s: slot %d is not %q with hash 0", where, i, want))
			} else if i == 0 && de.Ino != dir.nid() {
				problems = append(problems, fmt.Sprintf("%s: \".\" points to inode %d, not %d", where, de.Ino, dir.Ino()))
			}
		}
	}
	if dir.Inline {
		d := dir.InlineDentryPtr()
		problems = append(problems, CheckDentryPtr(&d, "inline", hashOf, nil)...)
		checkDots(&d, "inline")
		checkDups(&d, "inline")
		if dir.data.Len() != 0 {
			problems = append(problems, fmt.Sprintf("inline directory has %d dentry blocks", dir.data.Len()))
		}
	} else {
		sawBlock0 := false
		for _, bidx := range dir.Pages() {
			where := fmt.Sprintf("page %d", bidx)
			if bidx >= dir.dirBlocks() {
				problems = append(problems, where+": past i_size")
			}
			level, bucket, ok := LevelOfBlock(bidx, dir.DirLevel, dir.CurrentDepth)
			var bucketOK func(uint32) bool
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: beyond i_current_depth %d", where, dir.CurrentDepth))
			} else {
				nb := dirBuckets(level, dir.DirLevel)
				bucketOK = func(h uint32) bool { return uint64(h)%nb == bucket }
				where = fmt.Sprintf("page %d (level %d bucket %d)", bidx, level, bucket)
			}
			d := MakeDentryPtrBlock(dir.findDataBlock(bidx))
			if bidx == 0 {
				sawBlock0 = true
				checkDots(&d, where)
			}
			problems = append(problems, CheckDentryPtr(&d, where, hashOf, bucketOK)...)
			checkDups(&d, where)
		}
		if !sawBlock0 {
			problems = append(problems, "block 0 (with \".\" and \"..\") missing")
		}
		if dir.CurrentDepth > MaxDirHashDepth {
			problems = append(problems, fmt.Sprintf("i_current_depth %d > %d", dir.CurrentDepth, MaxDirHashDepth))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	if t != nil {
		dir.SB.warn(t, "inode %d: %s, run fsck to fix.", dir.Ino(), problems[0])
	}
	return &libfs.CheckError{FS: "f2fs", Problems: problems}
}

// expectedHash is f2fs_hash_filename for an on-disk name.
func expectedHash(t *kernel.Task, dir *Inode, disk []byte) (uint32, bool) {
	f := &Filename{DiskName: disk, UsrName: disk}
	if isDotDotdotName(disk) {
		return 0, true
	}
	if dir.IsCasefolded() {
		if dir.IsEncrypted() {
			plain, ok := libfs.DecryptNameForCheck(t, &dir.Inode, disk)
			if !ok {
				return 0, false
			}
			f.UsrName = plain
		}
		buf := make([]byte, NameLen)
		if n, err := dir.SB.Encoding.Casefold(buf, f.UsrName); err == nil && n > 0 {
			f.CfName = buf[:n]
		}
	}
	if err := HashFilename(dir, f); err != nil {
		return 0, false
	}
	return f.Hash, true
}

// nameKey is the identity of a name for duplicate detection: the
// casefolded plaintext in a casefolded directory, else the on-disk bytes.
func nameKey(t *kernel.Task, dir *Inode, disk []byte) (string, bool) {
	if !dir.IsCasefolded() || isDotDotdotName(disk) {
		return string(disk), true
	}
	plain := disk
	if dir.IsEncrypted() {
		var ok bool
		if plain, ok = libfs.DecryptNameForCheck(t, &dir.Inode, disk); !ok {
			return "", false
		}
	}
	buf := make([]byte, NameLen)
	if n, err := dir.SB.Encoding.Casefold(buf, plain); err == nil && n > 0 {
		return "cf:" + string(buf[:n]), true
	}
	return "raw:" + string(plain), true
}

// IsCorrupt reports whether err says a directory is corrupt.
func IsCorrupt(err error) bool { return errors.Is(err, errno.EFSCORRUPTED) }
