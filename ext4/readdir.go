package ext4

import (
	"bytes"
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
// tree.
type fname struct {
	hash, minor uint32
	ino         uint32
	ftype       uint8
	name        []byte
	seq         int
}

// htreeDirblockToTree is htree_dirblock_to_tree: every used dirent of a
// block, hashed (or with the hash stored after its name), at or after
// (startHash, startMinor). A corrupt dirent silently ends the block.
func htreeDirblockToTree(t *kernel.Task, dir *Inode, lblk uint32, hinfo DxHashInfo, out *[]fname) error {
	b, err := dir.readDirblock(t, lblk, direntHtree, "htree_dirblock_to_tree")
	if err != nil {
		return err
	}
	top := dir.bsize() - DirRecLen(0, dir.HashInDirent() && !dir.SB.MetadataCsum)
	for off := 0; off < top; {
		if checkDirEntry(t, dir, "htree_dirblock_to_tree", b, dir.bsize(), off, lblk) {
			break
		}
		nl := int(b[off+6])
		if dir.HashInDirent() {
			hinfo.Hash, hinfo.MinorHash = 0, 0
			if nl != 0 && direntInode(b, off) != 0 {
				hinfo.Hash, hinfo.MinorHash, _ = direntHashes(b, off)
			}
		} else if err := Dirhash(t, dir, b[off+8:off+8+nl], &hinfo); err != nil {
			return err
		}
		if ino := direntInode(b, off); ino != 0 {
			*out = append(*out, fname{hash: hinfo.Hash, minor: hinfo.MinorHash, ino: ino, ftype: b[off+7],
				name: bytes.Clone(b[off+8 : off+8+nl]), seq: len(*out)})
		}
		off += direntRecLen(b, off)
	}
	return nil
}

// rbOrder orders entries as ext4's readdir rbtree and its collision chains
// emit them: by (hash, minor_hash); for equal pairs the first stored comes
// first and the later ones follow in reverse order of storing
// (ext4_htree_store_dirent links each new one right after the head).
func rbOrder(list []fname) {
	type key struct{ h, m uint32 }
	first := map[key]int{}
	for _, f := range list {
		k := key{f.hash, f.minor}
		if _, ok := first[k]; !ok {
			first[k] = f.seq
		}
	}
	sort.SliceStable(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.hash != b.hash {
			return a.hash < b.hash
		}
		if a.minor != b.minor {
			return a.minor < b.minor
		}
		ah, bh := a.seq == first[key{a.hash, a.minor}], b.seq == first[key{b.hash, b.minor}]
		if ah != bh {
			return ah
		}
		return a.seq > b.seq
	})
}

// dxReaddirList is ext4_htree_fill_tree over the whole directory: for a
// one-block directory every dirent hashed; for an htree "." (hash 0) and
// ".." (hash 2) from the root, then each leaf in index order. Returns
// errBadDxDir when the index is unusable.
func dxReaddirList(t *kernel.Task, dir *Inode) ([]fname, error) {
	var list []fname
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
		err := htreeDirblockToTree(t, dir, 0, hinfo, &list)
		return list, err
	}
	frames, err := dxProbe(t, dir, nil, &hinfo)
	if err != nil {
		return nil, err
	}
	b0 := frames[0].b
	list = append(list, fname{hash: 0, ino: direntInode(b0, 0), ftype: b0[7], name: []byte(".")})
	list = append(list, fname{hash: 2, ino: direntInode(b0, 12), ftype: b0[19], name: []byte(".."), seq: 1})
	for {
		fr := &frames[len(frames)-1]
		if err := htreeDirblockToTree(t, dir, fr.entries.block(fr.at), hinfo, &list); err != nil {
			return nil, err
		}
		more, err := htreeNextBlock(t, dir, hashNBAlways, frames, nil)
		if err != nil {
			return nil, err
		}
		if !more {
			return list, nil
		}
	}
}

// Readdir is ext4_readdir: in hash order (ext4_dx_readdir) for an htree or
// one-block directory with dir_index, positions being hash2pos(hash,
// minor); else block by block in on-disk order, positions being byte
// offsets, a corrupt dirent being logged and the rest of its block skipped.
// Encrypted names are shown as fscrypt_fname_disk_to_usr gives them.
//
// Resuming an htree listing restarts at the first entry whose position is
// at least ctx.Pos; entries sharing a (hash, minor) pair with an entry
// already emitted may repeat (the kernel keeps the rest of such a chain in
// its per-file state).
func Readdir(t *kernel.Task, dir *Inode, ctx *DirContext) error {
	var fstr []byte
	if dir.IsEncrypted() {
		var err error
		if fstr, err = t.Kmalloc(siteReaddirFstr, NameLen, kmem.GFPNoFS); err != nil {
			return errno.ENOMEM
		}
		defer t.Kfree(siteReaddirFstr, fstr)
	}
	emit := func(name []byte, hash, minor, ino uint32, ft uint8) (bool, error) {
		if dir.IsEncrypted() && !isDotDotdot(name) {
			n, err := fscrypt.FnameDiskToUsr(t, &dir.Inode, hash, minor, name, fstr)
			if err != nil {
				return false, err
			}
			name = fstr[:n]
		}
		return ctx.Actor(name, ino, FsFtypeToDtype(ft)), nil
	}
	if dir.isDxDir() {
		list, err := dxReaddirList(t, dir)
		if err != errBadDxDir {
			if err != nil {
				return err
			}
			if ctx.Pos == HtreeEOF64 {
				return nil
			}
			rbOrder(list)
			for _, f := range list {
				pos := hash2pos(f.hash, f.minor)
				if pos < ctx.Pos {
					continue
				}
				// ext4_dx_readdir sets ctx->pos to the entry's
				// position before dir_emit.
				ctx.Pos = pos
				ok, err := emit(f.name, f.hash, f.minor, f.ino, f.ftype)
				if err != nil {
					return err
				}
				if !ok {
					return nil
				}
			}
			ctx.Pos = HtreeEOF64
			return nil
		}
		if !dir.SB.MetadataCsum {
			dir.Flags &^= IndexFL
		}
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
		for off := int(ctx.Pos % bs); ctx.Pos < dir.Size() && off < int(bs); {
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
