package vfs

import (
	"github.com/vfslab/vfslab/kernel"
)

// Statfs is struct statfs (struct kstatfs): what statfs(2) reports of
// the filesystem a path is on.
type Statfs struct {
	// Type is f_type, the filesystem's magic number.
	Type int64
	// Bsize is f_bsize (the optimal transfer size), Frsize f_frsize
	// (the fundamental block size); both are the block size.
	Bsize, Frsize int64
	// Blocks, Bfree and Bavail count Frsize blocks; Files and Ffree
	// inodes. A filesystem without ->statfs leaves them 0.
	Blocks, Bfree, Bavail, Files, Ffree uint64
	// Namelen is f_namelen.
	Namelen int64
	// Flags is f_flags: ST_RDONLY and the other mount flags.
	Flags int64
}

// ST_RDONLY is the read-only bit of Statfs.Flags (calculate_f_flags).
const ST_RDONLY = 0x0001

// StatFSer is implemented by the super operations of a filesystem that
// counts its blocks and inodes (->statfs: ext4_statfs, f2fs_statfs).
type StatFSer interface {
	StatFS(t *kernel.Task, sb *SuperBlock, st *Statfs) error
}

// Statfs is statfs(2) (fs/statfs.c user_statfs, vfs_statfs): f_bsize
// and f_frsize are the superblock's block size, f_namelen NAME_MAX and
// f_type the type's Magic unless the filesystem's ->statfs says
// otherwise; f_flags has ST_RDONLY for a read-only mount or superblock.
// Errors: the walk's, the filesystem's.
func (p *Proc) Statfs(t *kernel.Task, path string) (st Statfs, err error) {
	defer t.Recover(&err)
	defer t.Trace("vfs_statfs")()
	t.Inc(EvSyscall)
	pa, err := p.lookupPath(t, AT_FDCWD, path, LOOKUP_FOLLOW)
	if err != nil {
		return Statfs{}, err
	}
	defer pa.put(t)
	sb := pa.Mnt.SB
	st = Statfs{Type: int64(sb.Type.Magic), Bsize: 1 << sb.blkbits, Namelen: 255}
	if sb.blkbits == 0 {
		st.Bsize = PageSize
	}
	if s, ok := sb.op.(StatFSer); ok {
		if err := s.StatFS(t, sb, &st); err != nil {
			return Statfs{}, err
		}
	}
	if st.Frsize == 0 {
		st.Frsize = st.Bsize
	}
	if pa.Mnt.readonly.Load() || sb.ReadOnly() {
		st.Flags |= ST_RDONLY
	}
	return st, nil
}
