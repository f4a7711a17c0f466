package ext4

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/libfs"
)

// Block kinds of WalkDirents.
const (
	KindDxRoot = "dx_root" // block 0 of an htree: "." and ".." and struct dx_root
	KindDxNode = "dx_node" // an index node of an htree (struct dx_node)
	KindLeaf   = "leaf"    // a block of linear dirents
	KindHole   = "hole"    // a logical block without a device block
)

// DirBlock is one directory block as it is on disk, decoded by
// WalkDirents.
type DirBlock struct {
	// Lblk is the logical block, Phys the device block behind it.
	Lblk, Phys uint32
	// Kind is KindDxRoot, KindDxNode, KindLeaf or KindHole.
	Kind string

	// Dot and DotDot are the inodes of the fake "." and ".." dirents of
	// a dx root; HashVersion, InfoLength and IndirectLevels its
	// struct dx_root_info.
	Dot, DotDot                             uint32
	HashVersion, InfoLength, IndirectLevels uint8
	// Limit and Count are an index block's dx_countlimit; Index its
	// struct dx_entry array (the first entry's hash is not stored: 0).
	Limit, Count int
	Index        []DxEntry
	// DxCsum is the struct dx_tail checksum (HasDxCsum with
	// metadata_csum and room for the tail).
	DxCsum    uint32
	HasDxCsum bool

	// InTree says that the htree reaches the block (a leaf or node);
	// HashLo and HashHi are the hashes its index entry gives it, [HashLo,
	// HashHi), HasHi false for the last one.
	InTree         bool
	HashLo, HashHi uint32
	HasHi          bool

	// Csum is a leaf's struct ext4_dir_entry_tail checksum (HasCsum with
	// metadata_csum).
	Csum    uint32
	HasCsum bool
	// Entries are a leaf's dirents in on-disk order.
	Entries []Dirent
	// Problem says where the walk of a malformed block stopped ("" when
	// it did not).
	Problem string
}

// DxEntry is struct dx_entry: the lowest hash of the child and its
// logical block.
type DxEntry struct {
	Hash, Block uint32
}

// Dirent is one struct ext4_dir_entry_2 of a leaf.
type Dirent struct {
	// Off is its offset in the block.
	Off int
	// Inode, RecLen, NameLen and FileType are its fields (rec_len decoded
	// by ext4_rec_len_from_disk).
	Inode    uint32
	RecLen   int
	NameLen  int
	FileType uint8
	// Name is the on-disk name (ciphertext in an encrypted directory);
	// it aliases the block.
	Name []byte
	// Hash and MinorHash are the name's htree hash: the hashes stored
	// after the name in a casefolded, encrypted directory (HashStored), or,
	// with the dir_index feature in any other directory, the hash
	// ext4fs_dirhash computes for the on-disk name with the directory's
	// hash version and seed, "." and ".." included (HashComputed; only
	// when WalkDirents has a task, and not when the hash fails).
	Hash, MinorHash uint32
	HashStored      bool
	HashComputed    bool
	// User is what readdir shows for a name of an encrypted directory:
	// fscrypt_fname_disk_to_usr given the hashes above (zero without
	// them), the plaintext with the key, a no-key name without it; UserErr
	// is fscrypt's error when the name does not convert. Both are nil when
	// the directory is not encrypted or WalkDirents has no task.
	User    []byte
	UserErr error
}

// Unused reports an unused dirent (inode 0).
func (de *Dirent) Unused() bool { return de.Inode == 0 }

// DirLayout is a directory's on-disk structure as WalkDirents decodes it:
// the inode and superblock fields that shape it, and every block.
type DirLayout struct {
	Ino  uint64
	Size int64
	// Htree is is_dx(dir): the dir_index feature and EXT4_INDEX_FL.
	Htree bool
	// DirIndex and MetadataCsum are the superblock's features.
	DirIndex, MetadataCsum bool
	Casefold, Encrypt      bool
	// HasKey is set for an encrypted directory whose key is set up.
	HasKey bool
	// HashInDirent is set for a casefolded, encrypted directory, whose
	// dirents carry their hashes after the name.
	HashInDirent bool
	// HashVersion is the DX_HASH_* version the directory's names are
	// hashed with, as dx_probe chooses it: the dx root's (or, without an
	// htree, the superblock's default) with s_hash_unsigned added to a
	// signed version, and siphash in a casefolded, encrypted directory.
	HashVersion uint8
	// Blocks are the logical blocks 0 .. i_size/blocksize-1.
	Blocks []DirBlock
}

// WalkDirents decodes every block of the directory, the one dirent walker
// of the package: an htree is walked from its root (index blocks and the
// hash range of each node and leaf it reaches), every other block is a
// leaf; a leaf's dirents are walked by rec_len up to the checksum tail,
// stopping (Problem) at a header that runs into the tail or a rec_len that
// does not fit. Nothing is checked beyond what decoding needs (CheckDir
// does that). With a task, each dirent's hash is computed (where the
// directory does not store it) and an encrypted directory's names are
// converted as readdir converts them (Dirent.User); t may be nil, then
// neither is done. The caller must not run it concurrently with changes to
// the directory (hold its i_rwsem).
func WalkDirents(t *kernel.Task, dir *Inode) *DirLayout {
	var hinfo DxHashInfo
	(&checker{dir: dir}).hinfoFor(&hinfo)
	l := &DirLayout{Ino: dir.Ino(), Size: dir.Size(), Htree: dir.IsDx(), DirIndex: dir.SB.DirIndex,
		MetadataCsum: dir.SB.MetadataCsum, Casefold: dir.IsCasefolded(), Encrypt: dir.IsEncrypted(),
		HashInDirent: dir.HashInDirent(), HashVersion: hinfo.HashVersion}
	l.HasKey = l.Encrypt && dir.hasKey()
	n := dir.nblocks()
	blocks := make([]DirBlock, n)
	for lblk := range blocks {
		blocks[lblk] = DirBlock{Lblk: uint32(lblk), Kind: KindLeaf}
	}
	if b0 := dir.BlockAt(0); dir.IsDx() && b0 != nil && n > 0 {
		blocks[0].Kind, blocks[0].InTree = KindDxRoot, true
		seen := map[uint32]bool{0: true}
		walkDx(dir, blocks, seen, b0, dxRootInfoOff+int(b0[dxRootInfoOff+5]), int(b0[dxRootInfoOff+6]), 0, 0, false, 0)
	}
	for i := range blocks {
		walkBlock(dir, &blocks[i])
		if t != nil {
			readdirNames(t, dir, hinfo, &blocks[i])
		}
	}
	l.Blocks = blocks
	return l
}

// readdirNames fills in what needs a task for the used dirents of a leaf:
// the computed hash (with the dir_index feature, where the dirent stores
// none) and, in an encrypted directory, the name readdir shows.
func readdirNames(t *kernel.Task, dir *Inode, hinfo DxHashInfo, db *DirBlock) {
	var out []byte
	if dir.IsEncrypted() {
		out = make([]byte, max(fscrypt.NokeyNameMaxEncoded, NameLen)+1)
	}
	for i := range db.Entries {
		de := &db.Entries[i]
		if de.Unused() {
			continue
		}
		if dir.SB.DirIndex && !dir.HashInDirent() {
			h := hinfo
			if err := Dirhash(t, dir, de.Name, &h); err == nil {
				de.Hash, de.MinorHash, de.HashComputed = h.Hash, h.MinorHash, true
			}
		}
		if out == nil {
			continue
		}
		n, err := fscrypt.FnameDiskToUsr(t, &dir.Inode, de.Hash, de.MinorHash, de.Name, out)
		if err != nil {
			de.UserErr = err
			continue
		}
		de.User = bytes.Clone(out[:n])
	}
}

// walkDx marks the children of the index entries at off of block b:
// nodes (level > 0, walked in turn) or leaves, with their hash ranges.
func walkDx(dir *Inode, blocks []DirBlock, seen map[uint32]bool, b []byte, off, level int, lo, hi uint32, hasHi bool, depth int) {
	if depth > HtreeLevel || off+4 > len(b) {
		return
	}
	e := dxEntries{b: b, off: off}
	count := e.count()
	for i := 0; i < count && e.fits(i+1); i++ {
		start := lo
		if i > 0 {
			start = e.hash(i)
		}
		end, endOK := hi, hasHi
		if i+1 < count && e.fits(i+2) {
			end, endOK = e.hash(i+1), true
		}
		blk := e.block(i)
		if seen[blk] || int(blk) >= len(blocks) {
			continue
		}
		seen[blk] = true
		db := &blocks[blk]
		db.InTree, db.HashLo, db.HashHi, db.HasHi = true, start, end, endOK
		if level == 0 {
			continue
		}
		db.Kind = KindDxNode
		if cb := dir.BlockAt(blk); cb != nil {
			walkDx(dir, blocks, seen, cb, dxNodeEntriesOff, level-1, start, end, endOK, depth+1)
		}
	}
}

// walkBlock decodes one block whose kind is known.
func walkBlock(dir *Inode, db *DirBlock) {
	b := dir.BlockAt(db.Lblk)
	if b == nil {
		db.Kind = KindHole
		return
	}
	db.Phys = dir.PhysBlock(db.Lblk)
	csum := dir.SB.MetadataCsum
	if db.Kind == KindDxRoot || db.Kind == KindDxNode {
		off := dxNodeEntriesOff
		if db.Kind == KindDxRoot {
			info := readDxRootInfo(b)
			db.Dot, db.DotDot = direntInode(b, 0), direntInode(b, 12)
			db.HashVersion, db.InfoLength, db.IndirectLevels = info.hashVersion, info.infoLength, info.indirectLevels
			off = dxRootInfoOff + int(info.infoLength)
		}
		e := dxEntries{b: b, off: off}
		if !e.fits(1) {
			db.Problem = "dx entries past the block"
			return
		}
		db.Limit, db.Count = e.limit(), e.count()
		for i := 0; i < db.Count && e.fits(i+1); i++ {
			de := DxEntry{Block: e.block(i)}
			if i > 0 {
				de.Hash = e.hash(i)
			}
			db.Index = append(db.Index, de)
		}
		if csum && e.fits(db.Limit+1) {
			db.DxCsum, db.HasDxCsum = binary.LittleEndian.Uint32(b[off+db.Limit*dxEntrySize+4:]), true
		}
		return
	}
	end := len(b)
	if csum {
		end -= DirEntryTailSize
		db.Csum, db.HasCsum = binary.LittleEndian.Uint32(b[len(b)-4:]), true
	}
	for off := 0; off < end; {
		if off+BaseDirLen > end {
			db.Problem = fmt.Sprintf("offset %d: dirent header runs into the tail", off)
			return
		}
		de := readDirent(b, off)
		if de.RecLen < 8 || off+de.RecLen > end || off+8+int(de.NameLen) > off+de.RecLen {
			db.Problem = fmt.Sprintf("offset %d: bad rec_len %d (name_len %d)", off, de.RecLen, de.NameLen)
			return
		}
		d := Dirent{Off: off, Inode: de.Inode, RecLen: de.RecLen, NameLen: int(de.NameLen), FileType: de.FileType,
			Name: b[off+8 : off+8+int(de.NameLen)]}
		if d.Inode != 0 && dir.HashInDirent() && !isDotDotdot(d.Name) {
			p := off + 8 + (d.NameLen+dirRound)&^dirRound
			if p+8 <= off+d.RecLen {
				d.Hash, d.MinorHash, d.HashStored = binary.LittleEndian.Uint32(b[p:]), binary.LittleEndian.Uint32(b[p+4:]), true
			}
		}
		db.Entries = append(db.Entries, d)
		off += de.RecLen
	}
}

// dumpLeaf renders a decoded leaf: each dirent as
// offset:inode/rec_len/type/name (with /hash:minor when stored after the
// name), unused ones as offset:-/rec_len, a stop as "!" and the problem,
// then the checksum tail; names are decrypted when the directory is
// encrypted and its key is present.
func dumpLeaf(t *kernel.Task, dir *Inode, db *DirBlock) string {
	var s strings.Builder
	for i := range db.Entries {
		de := &db.Entries[i]
		if de.Unused() {
			fmt.Fprintf(&s, " %d:-/%d", de.Off, de.RecLen)
			continue
		}
		shown := libfs.QuoteName(de.Name)
		if dir.IsEncrypted() && !isDotDotdot(de.Name) {
			if plain, ok := decryptName(t, dir, de.Name); ok {
				shown = libfs.QuoteName(plain)
			}
		}
		fmt.Fprintf(&s, " %d:%d/%d/%d/%s", de.Off, de.Inode, de.RecLen, de.FileType, shown)
		if de.HashStored {
			fmt.Fprintf(&s, "/%08x:%08x", de.Hash, de.MinorHash)
		}
	}
	if db.Problem != "" {
		fmt.Fprintf(&s, " !%s", db.Problem)
	}
	if db.HasCsum {
		fmt.Fprintf(&s, " tail=%08x", db.Csum)
	}
	return strings.TrimPrefix(s.String(), " ")
}

// dumpIndex renders a decoded index block (root or node) in the spirit of
// debugfs htree: limit, count and each entry as hash->block (the first
// entry has no hash).
func dumpIndex(db *DirBlock) string {
	var s strings.Builder
	if db.Kind == KindDxRoot {
		fmt.Fprintf(&s, "\".\"=%d \"..\"=%d root hash_version=%d levels=%d ", db.Dot, db.DotDot, db.HashVersion, db.IndirectLevels)
	} else {
		s.WriteString("node ")
	}
	if db.Problem != "" {
		return s.String() + "!info_length"
	}
	fmt.Fprintf(&s, "limit=%d count=%d", db.Limit, db.Count)
	for i, e := range db.Index {
		if i == 0 {
			fmt.Fprintf(&s, " 0->%d", e.Block)
		} else {
			fmt.Fprintf(&s, " %08x->%d", e.Hash, e.Block)
		}
	}
	return s.String()
}

// dumpBlock renders one decoded block.
func dumpBlock(t *kernel.Task, dir *Inode, db *DirBlock) string {
	switch db.Kind {
	case KindHole:
		return fmt.Sprintf("block %d: hole", db.Lblk)
	case KindDxRoot, KindDxNode:
		return fmt.Sprintf("block %d: %s", db.Lblk, dumpIndex(db))
	}
	return fmt.Sprintf("block %d: %s", db.Lblk, dumpLeaf(t, dir, db))
}

// DumpBlock is the canonical one-line dump of logical block lblk as
// WalkDirents decodes it: an index block of the htree or a leaf.
func DumpBlock(t *kernel.Task, dir *Inode, lblk uint32) string {
	blocks := WalkDirents(nil, dir).Blocks
	if int(lblk) >= len(blocks) {
		return fmt.Sprintf("block %d: hole", lblk)
	}
	return dumpBlock(t, dir, &blocks[lblk])
}

// DumpDir is the canonical one-line dump of a whole directory: the inode's
// state, then every block ("; "-separated).
func DumpDir(t *kernel.Task, dir *Inode) string {
	var parts []string
	blocks := WalkDirents(nil, dir).Blocks
	for i := range blocks {
		parts = append(parts, dumpBlock(t, dir, &blocks[i]))
	}
	return dir.String() + " {" + strings.Join(parts, "; ") + "}"
}
