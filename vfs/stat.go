package vfs

import (
	"fmt"

	"github.com/vfslab/vfslab/kernel"
)

// Stat is struct kstat as stat(2) reports it.
type Stat struct {
	Dev     uint64
	Ino     uint64
	Mode    uint32
	Nlink   uint32
	UID     uint32
	GID     uint32
	Size    int64
	Blksize int64
	Blocks  int64
	// Rdev is st_rdev, the device of a device file (the kernel's dev_t:
	// MAJOR and MINOR decode it).
	Rdev uint32
	// Atime, Mtime and Ctime are in nanoseconds since the Unix epoch.
	Atime, Mtime, Ctime int64
}

// String is the canonical one-line dump.
func (s Stat) String() string {
	return fmt.Sprintf("stat ino=%d mode=%#o nlink=%d size=%d", s.Ino, s.Mode, s.Nlink, s.Size)
}

// GenericFillattr is generic_fillattr: the attributes every inode has.
func GenericFillattr(inode *Inode, st *Stat) {
	st.Ino = inode.ino
	st.Mode = inode.Mode()
	st.Nlink = inode.Nlink()
	st.UID = inode.uid
	st.GID = inode.gid
	st.Atime, st.Mtime, st.Ctime = inode.Atime(), inode.Mtime(), inode.Ctime()
	st.Size = inode.Size()
	st.Rdev = inode.rdev
	st.Blksize = 1 << inode.blkbits
	st.Blocks = (st.Size + 511) / 512
}

// vfsGetattr is vfs_getattr: ->getattr.
func vfsGetattr(t *kernel.Task, path Path) (Stat, error) {
	defer t.Trace("vfs_getattr")()
	var st Stat
	inode := path.Dentry.Inode()
	st.Dev = path.Mnt.SB.dev
	if err := inode.Op.Getattr(t, path, &st); err != nil {
		return Stat{}, err
	}
	return st, nil
}

// Stat is stat(2): the attributes of the file at path, following
// symlinks. Errors: those of the path walk.
func (p *Proc) Stat(t *kernel.Task, path string) (st Stat, err error) {
	defer t.Recover(&err)
	defer t.Trace("vfs_statx")()
	t.Inc(EvSyscall)
	return p.statx(t, path, LOOKUP_FOLLOW)
}

// Lstat is lstat(2): Stat without following a trailing symlink.
func (p *Proc) Lstat(t *kernel.Task, path string) (st Stat, err error) {
	defer t.Recover(&err)
	defer t.Trace("vfs_statx")()
	t.Inc(EvSyscall)
	return p.statx(t, path, 0)
}

func (p *Proc) statx(t *kernel.Task, path string, flags uint32) (Stat, error) {
	pa, err := p.lookupPath(t, AT_FDCWD, path, flags)
	if err != nil {
		return Stat{}, err
	}
	defer pa.put(t)
	return vfsGetattr(t, pa)
}

// Fstat is fstat(2). Errors: EBADF.
func (p *Proc) Fstat(t *kernel.Task, fd int) (st Stat, err error) {
	defer t.Recover(&err)
	defer t.Trace("vfs_fstat")()
	t.Inc(EvSyscall)
	f, err := p.fdget(fd)
	if err != nil {
		return Stat{}, err
	}
	defer f.fput(t)
	return vfsGetattr(t, f.path)
}
