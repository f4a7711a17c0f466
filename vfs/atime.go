package vfs

import (
	"time"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/kernel"
)

// Timestamps: the machine's clock, current_time, and the kernel's rules
// for updating i_atime, i_mtime and i_ctime (fs/inode.c touch_atime,
// atime_needs_update, relatime_need_update, file_update_time,
// inode_update_time, generic_update_time; fs/attr.c for setattr's times).
//
// The clock is the machine's own, deterministic: it starts at the epoch
// below and moves only when told to (System.AdvanceClock: the shell's
// sleep), so a script gives the same bytes every run. Under a clock that
// does not move, atime_needs_update's last test (the atime already equals
// now) keeps every later read from updating anything, as the kernel does
// within one clock tick.
//
// Every update of a timestamp marks the inode dirty (__mark_inode_dirty:
// I_DIRTY_SYNC, or I_DIRTY_TIME for an atime-only change on a lazytime
// superblock) and calls the filesystem's ->dirty_inode when it has one
// (DirtyInoder), as ext4_dirty_inode and f2fs_dirty_inode are told.
//
// Where the kernel's filesystems stamp times themselves (a new inode in
// __ext4_new_inode, f2fs_new_inode and ramfs_get_inode; a directory's
// mtime and ctime in ext4_add_entry, f2fs_update_dentry and the ramfs
// ops; the times of setattr_copy), the model stamps them in the VFS:
// InodeInitOwner, which the three filesystems call for every new inode,
// and the vfs_* operation after the filesystem's call succeeded.

// ClockEpoch is the machine clock's start: 2026-01-01 00:00:00 UTC, in
// nanoseconds since the Unix epoch.
var ClockEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()

// Mount flags of the atime policy (include/linux/mount.h).
const (
	MNT_NOATIME    = 0x08
	MNT_NODIRATIME = 0x10
	MNT_RELATIME   = 0x20
)

// Inode dirty states (include/linux/fs.h).
const (
	I_DIRTY_SYNC  = 1 << 0
	I_DIRTY_PAGES = 1 << 2
	I_DIRTY_TIME  = 1 << 11
)

// Timestamp events.
var (
	EvAtimeUpdate   = events.Register("atime_update", "i_atime updates by touch_atime (each dirties the inode)")
	EvCMtimeUpdate  = events.Register("cmtime_update", "i_mtime/i_ctime updates by file_update_time and the namespace operations")
	EvMarkDirtySync = events.Register("mark_inode_dirty_sync", "inodes dirtied with I_DIRTY_SYNC (__mark_inode_dirty)")
	EvMarkDirtyTime = events.Register("mark_inode_dirty_time", "inodes dirtied with I_DIRTY_TIME (lazytime atime updates)")
)

// DirtyInoder is implemented by the super operations of a filesystem
// that wants to know when an inode's in-core fields change
// (->dirty_inode, ext4_dirty_inode, f2fs_dirty_inode): flags are
// I_DIRTY_SYNC or I_DIRTY_TIME.
type DirtyInoder interface {
	DirtyInode(t *kernel.Task, inode *Inode, flags int)
}

// Now returns the machine clock (ktime_get_coarse_real_ts64), in
// nanoseconds since the Unix epoch.
func (s *System) Now() int64 { return s.clock.Load() }

// AdvanceClock moves the machine clock forward by d (time passing).
// A negative d is ignored.
func (s *System) AdvanceClock(d time.Duration) {
	if d > 0 {
		s.clock.Add(int64(d))
		s.flushExpired()
	}
}

// currentTime is current_time(inode): the clock (the model's filesystems
// keep nanosecond timestamps, s_time_gran 1).
func currentTime(inode *Inode) int64 { return inode.sb.sys.Now() }

// Atime, Mtime and Ctime return i_atime, i_mtime and i_ctime in
// nanoseconds since the Unix epoch.
func (i *Inode) Atime() int64 { return i.atime.Load() }

// Mtime returns i_mtime.
func (i *Inode) Mtime() int64 { return i.mtime.Load() }

// Ctime returns i_ctime.
func (i *Inode) Ctime() int64 { return i.ctime.Load() }

// SetTimes sets the three timestamps (a filesystem reading them from its
// on-disk inode).
func (i *Inode) SetTimes(atime, mtime, ctime int64) {
	i.atime.Store(atime)
	i.mtime.Store(mtime)
	i.ctime.Store(ctime)
}

// DirtyState returns i_state's dirty bits (I_DIRTY_SYNC, I_DIRTY_TIME)
// since the filesystem last cleared them (ClearDirty).
func (i *Inode) DirtyState() int { return int(i.dirty.Load()) }

// ClearDirty clears i_state's dirty bits (the inode was written back) and
// takes it off its superblock's dirty list.
func (i *Inode) ClearDirty() {
	if i.dirty.Swap(0) != 0 && i.sb != nil {
		i.sb.dirtyMu.Lock()
		delete(i.sb.dirtyInodes, i)
		i.sb.dirtyMu.Unlock()
	}
}

// markInodeDirty is __mark_inode_dirty: the filesystem's ->dirty_inode,
// then the state bits.
func markInodeDirty(t *kernel.Task, inode *Inode, flags int) {
	if flags&I_DIRTY_TIME != 0 {
		t.Inc(EvMarkDirtyTime)
	} else {
		t.Inc(EvMarkDirtySync)
	}
	if d, ok := inode.sb.op.(DirtyInoder); ok {
		d.DirtyInode(t, inode, flags)
	}
	setDirtyBits(inode, flags)
}

// setDirtyBits sets i_state's dirty bits; an inode going from clean to
// dirty is queued for writeback, stamped with dirtied_when (the part of
// __mark_inode_dirty that I_DIRTY_PAGES, from a page dirtied by a write,
// also reaches).
func setDirtyBits(inode *Inode, flags int) {
	for {
		old := inode.dirty.Load()
		if inode.dirty.CompareAndSwap(old, old|uint32(flags)) {
			if old == 0 && inode.sb != nil {
				// Clean to dirty: queued for writeback, stamped with
				// dirtied_when.
				var now int64
				if inode.sb.sys != nil {
					now = inode.sb.sys.Now()
				}
				inode.sb.dirtyMu.Lock()
				if inode.sb.dirtyInodes == nil {
					inode.sb.dirtyInodes = map[*Inode]int64{}
				}
				inode.sb.dirtyInodes[inode] = now
				inode.sb.dirtyMu.Unlock()
			}
			return
		}
	}
}

// stampNew gives a new inode its three timestamps (the filesystems'
// new-inode stamps; see the comment at the top).
func stampNew(inode *Inode) {
	now := currentTime(inode)
	inode.SetTimes(now, now, now)
}

// relatimeNeedUpdate is relatime_need_update.
func relatimeNeedUpdate(m *Mount, inode *Inode, now int64) bool {
	if m.atimeFlags.Load()&MNT_RELATIME == 0 {
		return true
	}
	atime := inode.Atime()
	if inode.Mtime() >= atime || inode.Ctime() >= atime {
		return true
	}
	return (now-atime)/int64(time.Second) >= 24*60*60
}

// atimeNeedsUpdate is atime_needs_update.
func atimeNeedsUpdate(path Path, inode *Inode) bool {
	if inode.Flags()&S_NOATIME != 0 {
		return false
	}
	m := path.Mnt
	fl := m.atimeFlags.Load()
	if fl&MNT_NOATIME != 0 || fl&MNT_NODIRATIME != 0 && inode.IsDir() {
		return false
	}
	now := currentTime(inode)
	if !relatimeNeedUpdate(m, inode, now) {
		return false
	}
	return inode.Atime() != now
}

// touchAtime is touch_atime: on a mount that can be written, the atime
// becomes now and the inode is dirtied (inode_update_time with S_ATIME:
// I_DIRTY_TIME on a lazytime superblock, else I_DIRTY_SYNC).
func touchAtime(t *kernel.Task, path Path) {
	inode := path.Dentry.Inode()
	if inode == nil || !atimeNeedsUpdate(path, inode) {
		return
	}
	// __mnt_want_write: no atime update on a read-only mount.
	if path.Mnt.IsReadonly() || inode.sb.ReadOnly() {
		return
	}
	defer t.Trace("touch_atime")()
	inode.atime.Store(currentTime(inode))
	t.Inc(EvAtimeUpdate)
	flags := I_DIRTY_SYNC
	if inode.sb.lazytime.Load() {
		flags = I_DIRTY_TIME
	}
	markInodeDirty(t, inode, flags)
}

// fileAccessed is file_accessed: touch_atime unless the file was opened
// with O_NOATIME.
func fileAccessed(t *kernel.Task, f *File) {
	if f.flags&O_NOATIME == 0 {
		touchAtime(t, f.path)
	}
}

// fileUpdateTime is file_update_time (file_modified's part): before a
// write, i_mtime and i_ctime become now unless they already are, and the
// inode is dirtied.
func fileUpdateTime(t *kernel.Task, f *File) {
	inode := f.inode
	now := currentTime(inode)
	if inode.Mtime() == now && inode.Ctime() == now {
		return
	}
	inode.mtime.Store(now)
	inode.ctime.Store(now)
	t.Inc(EvCMtimeUpdate)
	markInodeDirty(t, inode, I_DIRTY_SYNC)
}

// inodeChanged stamps i_ctime (and i_mtime with mtime) with now and
// dirties the inode: a directory whose entries changed, an inode whose
// attributes or link count changed (inode_set_ctime_current and the
// filesystems' mark_inode_dirty after it).
func inodeChanged(t *kernel.Task, inode *Inode, mtime bool) {
	if inode == nil {
		return
	}
	now := currentTime(inode)
	if mtime {
		inode.mtime.Store(now)
	}
	inode.ctime.Store(now)
	t.Inc(EvCMtimeUpdate)
	markInodeDirty(t, inode, I_DIRTY_SYNC)
}

// SetAtimeFlags sets the mount's atime policy: MNT_NOATIME,
// MNT_NODIRATIME and MNT_RELATIME (mount -o noatime, nodiratime,
// relatime; strictatime clears MNT_RELATIME). New mounts have
// MNT_RELATIME, the kernel's default since 2.6.30 (path_mount).
func (m *Mount) SetAtimeFlags(flags uint32) {
	m.atimeFlags.Store(flags & (MNT_NOATIME | MNT_NODIRATIME | MNT_RELATIME))
}

// AtimeFlags returns the mount's atime policy.
func (m *Mount) AtimeFlags() uint32 { return m.atimeFlags.Load() }

// SetLazytime sets or clears SB_LAZYTIME (mount -o lazytime): atime
// updates dirty inodes with I_DIRTY_TIME instead of I_DIRTY_SYNC.
func (sb *SuperBlock) SetLazytime(on bool) { sb.lazytime.Store(on) }

// Utimens is utimensat(2) with UTIME_NOW for both times (touch on an
// existing file): atime, mtime and ctime become now. The owner (or
// CAP_FOWNER) may do it, and anyone who may write the file
// (utimes_common's inode_permission MAY_WRITE). Errors: EACCES, EROFS,
// the walk's.
func (p *Proc) Utimens(t *kernel.Task, path string, follow bool) (err error) {
	defer t.Recover(&err)
	defer t.Trace("do_utimes")()
	t.Inc(EvSyscall)
	pa, err := p.attrPath(t, path, follow)
	if err != nil {
		return err
	}
	defer pa.put(t)
	return utimesNow(t, pa.Dentry.Inode())
}

// Futimens is utimensat(fd, NULL, NULL, 0) (futimens(3) with both times
// UTIME_NOW, do_utimes_fd): Utimens on the open file, with no path walk,
// as coreutils' touch sets the times of the file it has just opened.
// Errors: EBADF, EACCES, EPERM, EROFS.
func (p *Proc) Futimens(t *kernel.Task, fd int) (err error) {
	defer t.Recover(&err)
	defer t.Trace("do_utimes")()
	t.Inc(EvSyscall)
	f, err := p.fdget(fd)
	if err != nil {
		return err
	}
	defer f.fput(t)
	return utimesNow(t, f.path.Dentry.Inode())
}

// utimesNow is vfs_utimes with both times now: utimes_common's
// permission (the owner, CAP_FOWNER, or write access), no append-only or
// immutable inode, then atime, mtime and ctime set under i_rwsem.
func utimesNow(t *kernel.Task, inode *Inode) error {
	cred := t.CurrentCred()
	if cred.UID != inode.uid && !capFowner(cred) {
		if err := inodePermission(t, inode, MAY_WRITE); err != nil {
			return err
		}
	}
	if inode.Flags()&(S_APPEND|S_IMMUTABLE) != 0 {
		return errno.EPERM
	}
	inode.Rwsem.Lock()
	defer inode.Rwsem.Unlock()
	now := currentTime(inode)
	inode.SetTimes(now, now, now)
	t.Inc(EvCMtimeUpdate)
	markInodeDirty(t, inode, I_DIRTY_SYNC)
	return nil
}
