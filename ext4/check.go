package ext4

import (
	"errors"
	"fmt"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/libfs"
)

// IsCorrupt reports whether err says a directory is corrupt.
func IsCorrupt(err error) bool { return errors.Is(err, errno.EFSCORRUPTED) }

type checker struct {
	t        *kernel.Task
	dir      *Inode
	problems []string
	names    map[string]string
}

func (c *checker) fail(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// CheckLeaf checks one leaf block in the spirit of e2fsck pass 2
// (check_dir_block): the rec_len chain covers the block exactly up to the
// checksum tail, every dirent passes __ext4_check_dir_entry's rules, used
// names are non-empty and free of '/' and NUL (unless encrypted), the file
// type is known, the tail and its crc32c are right with metadata_csum, and
// in casefolded encrypted directories the stored hashes are the name's.
// lo and hi bound the hashes of the leaf's entries in an htree (hi
// exclusive unless its low bit says the next leaf continues the hash);
// pass checkHash false outside an htree.
func (c *checker) leaf(lblk uint32, b []byte, checkHash bool, lo, hi uint32) {
	dir := c.dir
	csum := dir.SB.csumSize()
	end := len(b) - csum
	where := fmt.Sprintf("block %d", lblk)
	var hinfo DxHashInfo
	if checkHash {
		c.hinfoFor(&hinfo)
	}
	off := 0
	for off < end {
		if off+BaseDirLen > end {
			c.fail("%s off %d: dirent header runs into the tail", where, off)
			return
		}
		de := readDirent(b, off)
		fake := isFakeDirEntry(b, off)
		hashIn := dir.HashInDirent() && !fake
		switch {
		case de.RecLen < DirRecLen(1, hashIn) || de.RecLen%4 != 0:
			c.fail("%s off %d: bad rec_len %d", where, off, de.RecLen)
			return
		case de.RecLen < DirRecLen(int(de.NameLen), hashIn):
			c.fail("%s off %d: rec_len %d too small for name_len %d", where, off, de.RecLen, de.NameLen)
			return
		case off+de.RecLen > end:
			c.fail("%s off %d: rec_len %d runs past the block", where, off, de.RecLen)
			return
		}
		if de.Inode > dir.SB.InodesCount {
			c.fail("%s off %d: inode %d out of bounds", where, off, de.Inode)
		}
		if de.Inode != 0 {
			name := b[off+8 : off+8+int(de.NameLen)]
			c.entry(where, off, lblk, b, de, name, checkHash, hinfo, lo, hi)
		}
		off += de.RecLen
	}
	if off != end {
		c.fail("%s: rec_len chain ends at %d, not %d", where, off, end)
	}
	if csum != 0 {
		if !direntTailOK(b) {
			c.fail("%s: checksum tail missing", where)
		} else if got, want := le32(b[len(b)-4:]), dir.dirblockCsum(b); got != want {
			c.fail("%s: leaf checksum %08x, want %08x", where, got, want)
		}
	}
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func (c *checker) hinfoFor(h *DxHashInfo) {
	dir := c.dir
	h.HashVersion = dir.SB.DefHashVersion
	if dir.IsDx() {
		if b := dir.BlockAt(0); b != nil {
			h.HashVersion = readDxRootInfo(b).hashVersion
		}
	}
	if dir.HashInDirent() {
		h.HashVersion = DxHashSiphash
	}
	if h.HashVersion <= DxHashTEA {
		h.HashVersion += dir.SB.HashUnsigned
	}
	h.Seed = &dir.SB.HashSeed
}

func (c *checker) entry(where string, off int, lblk uint32, b []byte, de DirEntry, name []byte, checkHash bool, hinfo DxHashInfo, lo, hi uint32) {
	dir := c.dir
	if de.NameLen == 0 {
		c.fail("%s off %d: used dirent with an empty name", where, off)
		return
	}
	if !dir.IsEncrypted() && (bytesIndex(name, '/') >= 0 || bytesIndex(name, 0) >= 0) {
		c.fail("%s off %d: name %s contains '/' or NUL", where, off, libfs.QuoteName(name))
	}
	if dir.SB.Filetype && de.FileType >= FtMax {
		c.fail("%s off %d: file type %d", where, off, de.FileType)
	}
	isDot := isDotDotdot(name)
	if dir.IsEncrypted() && !isDot && len(name) < fscrypt.FnameMinMsgLen {
		// e2fsck's check_encrypted_dirent: a ciphertext name is at least
		// one cipher block.
		c.fail("%s off %d: encrypted name of %d bytes, shorter than %d", where, off, len(name), fscrypt.FnameMinMsgLen)
	}
	if isDot && !(lblk == 0 && (off == 0 || off == 12)) {
		c.fail("%s off %d: %s outside the first block's first two slots", where, off, libfs.QuoteName(name))
	}
	if dir.HashInDirent() && !isDot {
		h, m, ok := direntHashes(b, off)
		if !ok {
			c.fail("%s off %d: no room for the dirent hash", where, off)
		} else if plain, ok := decryptName(c.t, dir, name); ok {
			var want DxHashInfo
			c.hinfoFor(&want)
			if err := Dirhash(c.t, dir, plain, &want); err == nil && (want.Hash != h || want.MinorHash != m) {
				c.fail("%s off %d: stored hash %08x:%08x, name hashes to %08x:%08x", where, off, h, m, want.Hash, want.MinorHash)
			}
		}
	}
	if checkHash && !isDot {
		var hash uint32
		ok := true
		if dir.HashInDirent() {
			hash, _, ok = direntHashes(b, off)
		} else if err := Dirhash(c.t, dir, name, &hinfo); err == nil {
			hash = hinfo.Hash
		} else {
			ok = false
		}
		bad := hash < lo&^1
		if hi != 0 {
			bad = bad || hash > hi&^1 || (hash == hi&^1 && hi&1 == 0)
		}
		if ok && bad {
			c.fail("%s off %d: hash %08x outside the leaf's range [%08x, %08x)", where, off, hash, lo, hi)
		}
	}
	if !isDot {
		if key, ok := nameKey(c.t, dir, name); ok {
			if prev, dup := c.names[key]; dup {
				c.fail("%s off %d: duplicate name %s (also %s)", where, off, libfs.QuoteName(name), prev)
			} else {
				c.names[key] = fmt.Sprintf("%s off %d", where, off)
			}
		}
	}
}

func bytesIndex(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// dots checks "." and ".." at the start of block 0.
func (c *checker) dots(b []byte) {
	if direntInode(b, 0) != c.dir.ino() || b[6] != 1 || b[8] != '.' || direntRecLen(b, 0) != 12 && c.dir.IsDx() {
		c.fail("block 0: first dirent is not \".\" for inode %d", c.dir.ino())
	}
	o := direntRecLen(b, 0)
	if o+12 > len(b) || direntInode(b, o) == 0 || b[o+6] != 2 || b[o+8] != '.' || b[o+9] != '.' {
		c.fail("block 0: second dirent is not \"..\"")
	}
}

// CheckDir checks a whole directory in the spirit of e2fsck pass 2: "."
// and ".." first; every leaf with CheckLeaf's rules; for an htree the root
// (fake dirents, dx_root_info, limit and count, the dx tail checksum), each
// index node, hashes strictly increasing within each index block and
// inside their parent's range, every leaf referenced once and its entries
// inside its hash range, and no block left out of the tree; no name twice.
// It returns nil or a *libfs.CheckError and logs the first problem.
func CheckDir(t *kernel.Task, dir *Inode) error {
	c := &checker{t: t, dir: dir, names: map[string]string{}}
	n := dir.nblocks()
	b0 := dir.BlockAt(0)
	if b0 == nil {
		c.fail("block 0 missing")
	} else {
		c.dots(b0)
		if dir.IsDx() {
			c.htree(b0, n)
		} else {
			for lblk := uint32(0); lblk < n; lblk++ {
				if b := dir.BlockAt(lblk); b != nil {
					c.leaf(lblk, b, false, 0, 0)
				}
			}
		}
	}
	if len(c.problems) == 0 {
		return nil
	}
	if t != nil {
		dir.errorInode(t, "ext4_check_dir", 0, "%s, running e2fsck is recommended", c.problems[0])
	}
	return &libfs.CheckError{FS: "ext4", Problems: c.problems}
}

func (c *checker) htree(b0 []byte, n uint32) {
	dir := c.dir
	info := readDxRootInfo(b0)
	if direntRecLen(b0, 0) != 12 || direntRecLen(b0, 12) != len(b0)-12 {
		c.fail("root: fake dirents have rec_len %d and %d", direntRecLen(b0, 0), direntRecLen(b0, 12))
		return
	}
	want := dir.SB.DefHashVersion
	if dir.HashInDirent() {
		want = DxHashSiphash
	}
	if info.reservedZero != 0 || info.infoLength != dxRootInfoLen || info.hashVersion != want || info.unusedFlags&1 != 0 {
		c.fail("root: bad dx_root_info %+v", info)
		return
	}
	if int(info.indirectLevels) >= dir.SB.htreeLevel() {
		c.fail("root: %d indirect levels", info.indirectLevels)
		return
	}
	seen := map[uint32]string{0: "root"}
	c.index(0, b0, dxEntries{b: b0, off: dxRootEntriesOff}, dir.dxRootLimit(dxRootInfoLen), int(info.indirectLevels), 0, 0, seen, n)
	for lblk := uint32(1); lblk < n; lblk++ {
		if _, ok := seen[lblk]; !ok && dir.BlockAt(lblk) != nil {
			c.fail("block %d is not referenced by the htree", lblk)
		}
	}
}

func (c *checker) index(lblk uint32, b []byte, e dxEntries, limit, levels int, lo, hi uint32, seen map[uint32]string, n uint32) {
	where := fmt.Sprintf("index block %d", lblk)
	if e.limit() != limit {
		c.fail("%s: limit %d, want %d", where, e.limit(), limit)
		return
	}
	count := e.count()
	if count == 0 || count > limit {
		c.fail("%s: count %d (limit %d)", where, count, limit)
		return
	}
	if c.dir.SB.MetadataCsum {
		if !c.dir.dxCsumVerify(c.t, b) {
			c.fail("%s: dx tail checksum wrong", where)
		}
	}
	for i := 0; i < count; i++ {
		start := lo
		if i > 0 {
			start = e.hash(i)
			if i > 1 && start <= e.hash(i-1) {
				c.fail("%s: hash %08x at %d not above %08x", where, start, i, e.hash(i-1))
			}
			if start&^1 < lo&^1 || (hi != 0 && start&^1 > hi&^1) {
				c.fail("%s: hash %08x outside the parent's range [%08x, %08x)", where, start, lo, hi)
			}
		}
		end := hi
		if i+1 < count {
			end = e.hash(i + 1)
		}
		child := e.block(i)
		if child == 0 || child >= n {
			c.fail("%s: entry %d points to block %d", where, i, child)
			continue
		}
		if prev, dup := seen[child]; dup {
			c.fail("%s: block %d already used by %s", where, child, prev)
			continue
		}
		seen[child] = where
		cb := c.dir.BlockAt(child)
		if cb == nil {
			c.fail("%s: entry %d points to a hole", where, i)
			continue
		}
		if levels > 0 {
			if direntRecLen(cb, 0) != len(cb) || direntInode(cb, 0) != 0 {
				c.fail("index block %d: no fake dirent spanning the block", child)
				continue
			}
			c.index(child, cb, dxEntries{b: cb, off: dxNodeEntriesOff}, c.dir.dxNodeLimit(), levels-1, start, end, seen, n)
		} else {
			c.leaf(child, cb, true, start, end)
		}
	}
}

// decryptName decrypts an on-disk name with the directory's key.
func decryptName(t *kernel.Task, dir *Inode, disk []byte) ([]byte, bool) {
	if !dir.IsEncrypted() {
		return disk, true
	}
	return libfs.DecryptNameForCheck(t, &dir.Inode, disk)
}

// nameKey is a name's identity for duplicate detection.
func nameKey(t *kernel.Task, dir *Inode, disk []byte) (string, bool) {
	if !dir.IsCasefolded() {
		return string(disk), true
	}
	plain, ok := decryptName(t, dir, disk)
	if !ok {
		return "", false
	}
	buf := make([]byte, pathMax)
	if n, err := dir.SB.Encoding.Casefold(buf, plain); err == nil {
		return "cf:" + string(buf[:n]), true
	}
	return "raw:" + string(plain), true
}
