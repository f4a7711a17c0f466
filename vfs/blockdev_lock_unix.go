//go:build unix

package vfs

import (
	"os"
	"sync"
	"syscall"
)

// Image locks are taken against other processes, not within this one
// (where tests and the shell's reboots attach one image more than once):
// the first attach of a file takes flock's lock on a descriptor of its
// own, later attaches in the process share it (converting a shared lock
// to an exclusive one when a writable attach comes), and the last
// release drops it.
var imageLocks struct {
	mu sync.Mutex
	m  map[[2]uint64]*imageLock
}

type imageLock struct {
	f         *os.File
	exclusive bool
	refs      int
}

// lockImage takes flock's lock on the image file f without waiting:
// exclusive for a writable image, shared for a read-only one. It returns
// the function that releases it. A host filesystem without flock
// (ENOLCK, EOPNOTSUPP) leaves the image unlocked. Errors: errImageLocked
// when another process holds a conflicting lock.
func lockImage(f *os.File, exclusive bool) (func(), error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return func() {}, nil
	}
	key := [2]uint64{uint64(sys.Dev), sys.Ino}
	imageLocks.mu.Lock()
	defer imageLocks.mu.Unlock()
	if imageLocks.m == nil {
		imageLocks.m = map[[2]uint64]*imageLock{}
	}
	l := imageLocks.m[key]
	if l == nil {
		lf, err := os.Open(f.Name())
		if err != nil {
			return nil, err
		}
		l = &imageLock{f: lf}
		if err := flock(lf, exclusive); err != nil {
			lf.Close()
			return nil, err
		}
		l.exclusive = exclusive
		imageLocks.m[key] = l
	} else if exclusive && !l.exclusive {
		if err := flock(l.f, true); err != nil {
			return nil, err
		}
		l.exclusive = true
	}
	l.refs++
	released := false
	return func() {
		imageLocks.mu.Lock()
		defer imageLocks.mu.Unlock()
		if released {
			return
		}
		released = true
		if l.refs--; l.refs == 0 {
			l.f.Close()
			delete(imageLocks.m, key)
		}
	}, nil
}

func flock(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	switch err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err {
	case nil, syscall.ENOLCK, syscall.EOPNOTSUPP, syscall.EINVAL:
		return nil
	case syscall.EWOULDBLOCK:
		return errImageLocked
	default:
		return err
	}
}
