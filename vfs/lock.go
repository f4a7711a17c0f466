package vfs

import "github.com/vfslab/vfslab/kernel"

// Lockdep class names of i_rwsem (fs/inode.c lockdep_annotate_inode_mutex_key).
const (
	iMutexDirKey = "&type->i_mutex_dir_key"
	iMutexKey    = "&sb->s_type->i_mutex_key"
)

// inodeLock is inode_lock (include/linux/fs.h): take i_rwsem for writing,
// and record it in the task's held locks (lockdep's lock_acquire), so that
// a BUG raised before the matching inodeUnlock does not leave the lock
// held forever in the simulator: kernel.Task.Recover lists and releases
// it. Use it where the unlock is straight-line code that an unwinding
// panic would skip; a deferred Unlock needs no record. site is the
// caller's kernel function name.
func inodeLock(t *kernel.Task, inode *Inode, site string) {
	inode.Rwsem.Lock()
	class := iMutexKey
	if inode.IsDir() {
		class = iMutexDirKey
	}
	t.LockAcquire(&inode.Rwsem, class, inode.ino, site)
}

// inodeUnlock is inode_unlock: the release of inodeLock.
func inodeUnlock(t *kernel.Task, inode *Inode) {
	t.LockRelease(&inode.Rwsem)
	inode.Rwsem.Unlock()
}
