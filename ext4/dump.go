package ext4

import (
	"fmt"
	"strings"

	"github.com/vfslab/vfslab/kernel"
)

// DumpLeaf is the canonical one-line dump of a leaf block: each dirent as
// offset:inode/rec_len/type/name (with /hash:minor when stored after the
// name), unused ones as offset:-/rec_len, then the checksum tail; names are
// decrypted when the directory is encrypted and its key is present. A
// corrupt rec_len is shown as "!rec_len=N" and stops the walk.
func DumpLeaf(t *kernel.Task, dir *Inode, b []byte) string {
	var s strings.Builder
	end := BlockSize - dir.SB.csumSize()
	for off := 0; off < end; {
		if off+BaseDirLen > end {
			fmt.Fprintf(&s, " %d:!short", off)
			break
		}
		de := readDirent(b, off)
		if de.RecLen < 8 || off+de.RecLen > BlockSize || off+8+int(de.NameLen) > BlockSize {
			fmt.Fprintf(&s, " %d:!rec_len=%d", off, de.RecLen)
			break
		}
		if de.Inode == 0 {
			fmt.Fprintf(&s, " %d:-/%d", off, de.RecLen)
		} else {
			name := b[off+8 : off+8+int(de.NameLen)]
			shown := quoteName(name)
			if dir.IsEncrypted() && !isDotDotdot(name) {
				if plain, ok := decryptName(t, dir, name); ok {
					shown = quoteName(plain)
				}
			}
			fmt.Fprintf(&s, " %d:%d/%d/%d/%s", off, de.Inode, de.RecLen, de.FileType, shown)
			if dir.HashInDirent() && !isFakeDirEntry(b, off) {
				if h, m, ok := direntHashes(b, off); ok {
					fmt.Fprintf(&s, "/%08x:%08x", h, m)
				}
			}
		}
		off += de.RecLen
	}
	if dir.SB.MetadataCsum {
		fmt.Fprintf(&s, " tail=%08x", le32(b[BlockSize-4:]))
	}
	return strings.TrimPrefix(s.String(), " ")
}

// DumpIndex is the canonical one-line dump of an index block (root or
// node) in the spirit of debugfs htree: limit, count and each entry as
// hash->block (the first entry has no hash).
func DumpIndex(b []byte, root bool) string {
	e := dxEntries{b: b, off: dxNodeEntriesOff}
	var s strings.Builder
	if root {
		info := readDxRootInfo(b)
		e.off = dxRootInfoOff + int(info.infoLength)
		fmt.Fprintf(&s, "root hash_version=%d levels=%d ", info.hashVersion, info.indirectLevels)
	} else {
		s.WriteString("node ")
	}
	if !e.fits(1) {
		return s.String() + "!info_length"
	}
	fmt.Fprintf(&s, "limit=%d count=%d", e.limit(), e.count())
	for i := 0; i < e.count() && e.fits(i+1); i++ {
		if i == 0 {
			fmt.Fprintf(&s, " 0->%d", e.block(0))
		} else {
			fmt.Fprintf(&s, " %08x->%d", e.hash(i), e.block(i))
		}
	}
	return s.String()
}

// DumpBlock is the canonical one-line dump of logical block lblk: an index
// block of an htree or a leaf.
func DumpBlock(t *kernel.Task, dir *Inode, lblk uint32) string {
	b := dir.BlockAt(lblk)
	if b == nil {
		return fmt.Sprintf("block %d: hole", lblk)
	}
	if dir.isDxInternalNode(lblk, b) {
		s := fmt.Sprintf("block %d: ", lblk)
		if lblk == 0 {
			s += fmt.Sprintf("\".\"=%d \"..\"=%d ", direntInode(b, 0), direntInode(b, 12))
		}
		return s + DumpIndex(b, lblk == 0)
	}
	return fmt.Sprintf("block %d: %s", lblk, DumpLeaf(t, dir, b))
}

// DumpDir is the canonical one-line dump of a whole directory: the inode's
// state, then every block ("; "-separated).
func DumpDir(t *kernel.Task, dir *Inode) string {
	var parts []string
	for lblk := uint32(0); lblk < dir.nblocks(); lblk++ {
		parts = append(parts, DumpBlock(t, dir, lblk))
	}
	return dir.String() + " {" + strings.Join(parts, "; ") + "}"
}
