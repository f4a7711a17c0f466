package ext4

import (
	"slices"
	"sort"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// DirContext is struct dir_context: the position and the actor (dir_emit),
// which returns false when it has no room.
type DirContext struct {
	Pos   int64
	Actor func(name []byte, ino uint32, dtype uint8) bool
	// Info is the open file's dir_private_info (nil: a fresh one for
	// this call).
	Info *DirPrivateInfo
}

// HtreeEOF64 is the position after the last entry of an htree listing
// (EXT4_HTREE_EOF_64BIT).
const HtreeEOF64 = int64(HtreeEOF64Bit)

// isDxDir is is_dx_dir: dir_index and either an htree or a single block.
func (dir *Inode) isDxDir() bool {
	return dir.SB.DirIndex && (dir.Flags&IndexFL != 0 || dir.nblocks() == 1)
}

// hash2pos is hash2pos for 64-bit positions.
func hash2pos(hash, minor uint32) int64 { return int64(hash>>1)<<32 | int64(minor) }

// fname is struct fname of fs/ext4/dir.c: an entry of the htree readdir
// tree, in its kzalloc'd memory (sizeof(struct fname) + name_len + 1
// bytes, the name at the end).
type fname struct {
	hash, minor uint32
	ino         uint32
	ftype       uint8
	name        []byte
	mem         []byte
}

// fnameSize is sizeof(struct fname) on x86-64: hash, minor_hash, the
// rb_node (three words), next, inode, name_len and file_type, padded.
const fnameSize = 48

// fnameNode is an rb_node of the tree with its hash collision chain
// (fname->next): the entry stored first, then the later ones, each linked
// right after the head (ext4_htree_store_dirent).
type fnameNode struct {
	chain []*fname
}

// DirPrivateInfo is struct dir_private_info (fs/ext4/ext4.h), a directory
// file's private_data since ext4_dir_open allocates it (Linux 6.12,
// "ext4: use generic_llseek_cookie"): the rbtree of the entries read so
// far in hash order, the walk's position in it, and where the next fill
// starts. An htree readdir resumes from it, so a listing makes progress
// even when many entries share a position.
type DirPrivateInfo struct {
	nodes       []fnameNode // the rbtree, in (hash, minor_hash) order
	curr        int         // curr_node: an index into nodes, -1 for NULL
	extra       int         // extra_fname: an index into nodes[curr].chain, -1 for NULL
	lastPos     int64
	currHash    uint32
	currMinor   uint32
	nextHash    uint32
	cookie      uint64
	initialized bool
	mem         []byte
}

// dirPrivateInfoSize is sizeof(struct dir_private_info) on x86-64.
const dirPrivateInfoSize = 64

// dirOpen is ext4_dir_open: kzalloc(sizeof(struct dir_private_info),
// GFP_KERNEL) as the file's private data. Errors: ENOMEM.
func dirOpen(t *kernel.Task) (*DirPrivateInfo, error) {
	mem, err := t.Kzalloc(siteDirPrivateInfo, dirPrivateInfoSize, kmem.GFPKernel)
	if err != nil {
		return nil, errno.ENOMEM
	}
	return &DirPrivateInfo{curr: -1, extra: -1, mem: mem}, nil
}

// free is ext4_htree_free_dir_info: the tree's entries, then the info.
func (info *DirPrivateInfo) free(t *kernel.Task) {
	info.freeTree(t)
	t.Kfree(siteDirPrivateInfo, info.mem)
	info.mem = nil
}

// freeTree is free_rb_tree_fname: every entry of every chain freed, the
// tree left empty.
func (info *DirPrivateInfo) freeTree(t *kernel.Task) {
	for i := range info.nodes {
		for _, f := range info.nodes[i].chain {
			t.Kfree(siteHtreeFname, f.mem)
		}
	}
	clear(info.nodes)
	info.nodes = info.nodes[:0]
}

// storeDirent is ext4_htree_store_dirent: a new fname (kzalloc'd, GFP_KERNEL)
// for the dirent with the given name (decrypted for an encrypted
// directory) inserted into the tree; an entry with the same (hash,
// minor_hash) as one already there joins that one's chain, right after
// its head. Errors: ENOMEM.
func (info *DirPrivateInfo) storeDirent(t *kernel.Task, hash, minor, ino uint32, ftype uint8, name []byte) error {
	mem, err := t.Kzalloc(siteHtreeFname, fnameSize+len(name)+1, kmem.GFPKernel)
	if err != nil {
		return errno.ENOMEM
	}
	copy(mem[fnameSize:], name)
	f := &fname{hash: hash, minor: minor, ino: ino, ftype: ftype, name: mem[fnameSize : fnameSize+len(name)], mem: mem}
	i := sort.Search(len(info.nodes), func(i int) bool {
		h := info.nodes[i].chain[0]
		return h.hash > hash || (h.hash == hash && h.minor >= minor)
	})
	if i < len(info.nodes) {
		if h := info.nodes[i].chain[0]; h.hash == hash && h.minor == minor {
			c := info.nodes[i].chain
			c = append(c, nil)
			copy(c[2:], c[1:])
			c[1] = f
			info.nodes[i].chain = c
			return nil
		}
	}
	info.nodes = slices.Insert(info.nodes, i, fnameNode{chain: []*fname{f}})
	return nil
}

// htreeDirblockToTree is htree_dirblock_to_tree (fs/ext4/namei.c): every
// used dirent of block lblk whose hash is at or after (startHash,
// startMinor), hashed (or with the hash stored after its name in a
// casefolded, encrypted directory), stored into the tree, its name
// decrypted (or encoded as a no-key name) for an encrypted directory
// through a buffer from fscrypt_fname_alloc_buffer. A corrupt dirent
// silently ends the block. It returns the number of entries stored.
// Errors: those of reading the block, of hashing and decrypting, ENOMEM.
func htreeDirblockToTree(t *kernel.Task, dir *Inode, info *DirPrivateInfo, lblk uint32, hinfo *DxHashInfo,
	startHash, startMinor uint32) (int, error) {
	b, err := dir.readDirblock(t, lblk, direntHtree, "htree_dirblock_to_tree")
	if err != nil {
		return 0, err
	}
	var cryptoStr []byte
	if dir.IsEncrypted() {
		if cryptoStr, err = fscrypt.FnameAllocBuffer(t, NameLen); err != nil {
			return 0, err
		}
		defer fscrypt.FnameFreeBuffer(t, cryptoStr)
	}
	top := dir.bsize() - DirRecLen(0, dir.HashInDirent() && !dir.SB.MetadataCsum)
	count := 0
	for off := 0; off < top; off += direntRecLen(b, off) {
		if checkDirEntry(t, dir, "htree_dirblock_to_tree", b, dir.bsize(), off, lblk) {
			break
		}
		nl := int(b[off+6])
		if dir.HashInDirent() {
			hinfo.Hash, hinfo.MinorHash = 0, 0
			if nl != 0 && direntInode(b, off) != 0 {
				hinfo.Hash, hinfo.MinorHash, _ = direntHashes(b, off)
			}
		} else if err := Dirhash(t, dir, b[off+8:off+8+nl], hinfo); err != nil {
			return count, err
		}
		if hinfo.Hash < startHash || (hinfo.Hash == startHash && hinfo.MinorHash < startMinor) {
			continue
		}
		ino := direntInode(b, off)
		if ino == 0 {
			continue
		}
		name := b[off+8 : off+8+nl]
		if dir.IsEncrypted() {
			n, err := fscrypt.FnameDiskToUsr(t, &dir.Inode, hinfo.Hash, hinfo.MinorHash, name, cryptoStr)
			if err != nil {
				return count, err
			}
			name = cryptoStr[:n]
		}
		if err := info.storeDirent(t, hinfo.Hash, hinfo.MinorHash, ino, b[off+7], name); err != nil {
			return count, err
		}
		count++
	}
	return count, nil
}

// htreeFillTree is ext4_htree_fill_tree: the entries from (startHash,
// startMinor) on, into the tree, and the hash at which the next fill
// starts (~0 when none follows). A one-block directory (no INDEX flag) is
// that block; an htree adds "." (hash 0) and ".." (hash 2) from the root
// when the start is before them, then reads leaves from the one dx_probe
// picks for startHash until it has stored at least one entry and the next
// leaf's hash is not a continuation of a collision. It returns the number
// of entries stored and sets info.nextHash where the kernel sets
// *next_hash: a failing leaf leaves it as it was, and the entries stored
// before the failure stay in the tree, as they do in the kernel. Errors:
// errBadDxDir when the index is unusable, and htreeDirblockToTree's.
func htreeFillTree(t *kernel.Task, dir *Inode, info *DirPrivateInfo, startHash, startMinor uint32) (int, error) {
	var hinfo DxHashInfo
	if dir.Flags&IndexFL == 0 {
		hinfo.HashVersion = dir.SB.DefHashVersion
		if dir.HashInDirent() {
			hinfo.HashVersion = DxHashSiphash
		}
		if hinfo.HashVersion <= DxHashTEA {
			hinfo.HashVersion += dir.SB.HashUnsigned
		}
		hinfo.Seed = &dir.SB.HashSeed
		n, err := htreeDirblockToTree(t, dir, info, 0, &hinfo, startHash, startMinor)
		info.nextHash = ^uint32(0)
		return n, err
	}
	hinfo.Hash = startHash
	frames, err := dxProbe(t, dir, nil, &hinfo)
	if err != nil {
		return 0, err
	}
	count := 0
	b0 := frames[0].b
	if startHash == 0 && startMinor == 0 {
		if err := info.storeDirent(t, 0, 0, direntInode(b0, 0), b0[7], []byte(".")); err != nil {
			return count, err
		}
		count++
	}
	if startHash < 2 || (startHash == 2 && startMinor == 0) {
		if err := info.storeDirent(t, 2, 0, direntInode(b0, 12), b0[19], []byte("..")); err != nil {
			return count, err
		}
		count++
	}
	for {
		fr := &frames[len(frames)-1]
		n, err := htreeDirblockToTree(t, dir, info, fr.entries.block(fr.at), &hinfo, startHash, startMinor)
		if err != nil {
			return count, err
		}
		count += n
		hashval := ^uint32(0)
		more, err := htreeNextBlock(t, dir, hashNBAlways, frames, &hashval)
		info.nextHash = hashval
		if err != nil {
			return count, err
		}
		if !more || (count > 0 && hashval&1 == 0) {
			return count, nil
		}
	}
}

// callFilldir is call_filldir: every entry of node i's collision chain
// from chain index from on, at the node's position; when the reader's
// buffer fills, the entry that did not fit is kept as extra_fname and it
// returns true.
func callFilldir(t *kernel.Task, dir *Inode, info *DirPrivateInfo, ctx *DirContext, i, from int) bool {
	c := info.nodes[i].chain
	ctx.Pos = hash2pos(c[0].hash, c[0].minor)
	for j := from; j < len(c); j++ {
		if !ctx.Actor(c[j].name, c[j].ino, FsFtypeToDtype(c[j].ftype)) {
			info.extra = j
			return true
		}
	}
	return false
}

// dxReaddir is ext4_dx_readdir: the listing in hash order from ctx.Pos,
// resumed from info. A position other than where the last call stopped
// (a seek) resets the tree; a chain cut short by a full buffer is
// finished first; the tree is refilled when it runs out or the directory
// changed since it was filled (the i_version cookie). Errors:
// errBadDxDir (the caller falls back to a linear listing), those of
// htreeFillTree.
func dxReaddir(t *kernel.Task, dir *Inode, info *DirPrivateInfo, ctx *DirContext) (err error) {
	if !info.initialized {
		info.currHash, info.currMinor = pos2majHash(ctx.Pos), pos2minHash(ctx.Pos)
		info.initialized = true
	}
	if ctx.Pos == HtreeEOF64 {
		return nil
	}
	defer func() { info.lastPos = ctx.Pos }()
	if info.lastPos != ctx.Pos {
		info.freeTree(t)
		info.curr, info.extra = -1, -1
		info.currHash, info.currMinor = pos2majHash(ctx.Pos), pos2minHash(ctx.Pos)
	}
	resume := false
	if info.extra >= 0 {
		from := info.extra
		info.extra = -1
		if callFilldir(t, dir, info, ctx, info.curr, from) {
			return nil
		}
		resume = true
	} else if info.curr < 0 && len(info.nodes) > 0 {
		info.curr = 0
	}
	for {
		if !resume {
			if info.curr < 0 || dir.iVersion != info.cookie {
				info.curr = -1
				info.freeTree(t)
				info.cookie = dir.iVersion
				n, err := htreeFillTree(t, dir, info, info.currHash, info.currMinor)
				if err != nil {
					return err
				}
				if n == 0 {
					ctx.Pos = HtreeEOF64
					return nil
				}
				info.curr = 0
			}
			h := info.nodes[info.curr].chain[0]
			info.currHash, info.currMinor = h.hash, h.minor
			if callFilldir(t, dir, info, ctx, info.curr, 0) {
				return nil
			}
		}
		resume = false
		// next_node:
		if info.curr+1 < len(info.nodes) {
			info.curr++
			h := info.nodes[info.curr].chain[0]
			info.currHash, info.currMinor = h.hash, h.minor
		} else {
			info.curr = -1
			if info.nextHash == ^uint32(0) {
				ctx.Pos = HtreeEOF64
				return nil
			}
			info.currHash, info.currMinor = info.nextHash, 0
		}
	}
}

// pos2majHash and pos2minHash are pos2maj_hash and pos2min_hash for
// 64-bit positions.
func pos2majHash(pos int64) uint32 { return uint32(uint64(pos)>>32) << 1 }
func pos2minHash(pos int64) uint32 { return uint32(pos) }

// Readdir is ext4_readdir: in hash order (ext4_dx_readdir) for an htree or
// one-block directory with dir_index, positions being hash2pos(hash,
// minor), resumed from ctx.Info; else block by block in on-disk order,
// positions being byte offsets, a corrupt dirent being logged and the
// rest of its block skipped. Encrypted names are shown as
// fscrypt_fname_disk_to_usr gives them. A nil ctx.Info stands for a file
// opened for this one call.
func Readdir(t *kernel.Task, dir *Inode, ctx *DirContext) error {
	info := ctx.Info
	if info == nil {
		info = &DirPrivateInfo{curr: -1, extra: -1}
		defer info.freeTree(t)
	}
	if dir.isDxDir() {
		err := dxReaddir(t, dir, info, ctx)
		if err != errBadDxDir {
			return err
		}
		if !dir.SB.MetadataCsum {
			dir.Flags &^= IndexFL
		}
	}
	var fstr []byte
	if dir.IsEncrypted() {
		var err error
		if fstr, err = fscrypt.FnameAllocBuffer(t, NameLen); err != nil {
			return err
		}
		defer fscrypt.FnameFreeBuffer(t, fstr)
	}
	emit := func(name []byte, hash, minor, ino uint32, ft uint8) (bool, error) {
		if dir.IsEncrypted() {
			n, err := fscrypt.FnameDiskToUsr(t, &dir.Inode, hash, minor, name, fstr)
			if err != nil {
				return false, err
			}
			name = fstr[:n]
		}
		return ctx.Actor(name, ino, FsFtypeToDtype(ft)), nil
	}
	bs := int64(dir.bsize())
	for ctx.Pos < dir.Size() {
		lblk := uint32(ctx.Pos / bs)
		b, err := dir.readDirblock(t, lblk, either, "ext4_readdir")
		if err != nil {
			return err
		}
		if b == nil {
			ctx.Pos = int64(lblk+1) * bs
			continue
		}
		off := int(ctx.Pos % bs)
		// The block may have changed since the last call: rescan from
		// its start to a dirent boundary (only rec_len is checked here;
		// the full check follows).
		if dir.iVersion != info.cookie {
			i := 0
			for i < int(bs) && i < off {
				rl := direntRecLen(b, i)
				if rl < DirRecLen(1, dir.HashInDirent()) {
					break
				}
				i += rl
			}
			off = i
			ctx.Pos = ctx.Pos&^(bs-1) | int64(off)
			info.cookie = dir.iVersion
		}
		for ctx.Pos < dir.Size() && off < int(bs) {
			if checkDirEntry(t, dir, "ext4_readdir", b, int(bs), off, lblk) {
				ctx.Pos = (ctx.Pos | (bs - 1)) + 1
				break
			}
			rl := direntRecLen(b, off)
			if ino := direntInode(b, off); ino != 0 {
				nl := int(b[off+6])
				var hash, minor uint32
				if dir.HashInDirent() {
					hash, minor, _ = direntHashes(b, off)
				}
				ok, err := emit(b[off+8:off+8+nl], hash, minor, ino, b[off+7])
				if err != nil {
					return err
				}
				if !ok {
					return nil
				}
			}
			off += rl
			ctx.Pos += int64(rl)
		}
	}
	return nil
}
