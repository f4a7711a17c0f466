package vfs

import (
	"sync"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// FIFOs (fs/pipe.c): a FIFO's inode gets a pipe (struct
// pipe_inode_info, i_pipe) while it is open. fifo_open counts readers and
// writers: a reader waits for a writer and a writer for a reader unless
// O_NONBLOCK (then a writer without readers is ENXIO), O_RDWR never waits.
// pipe_read gives what the pipe holds (0 once no writer is left, EAGAIN
// with O_NONBLOCK while one is), pipe_write fills it up to its capacity
// (16 pages; PIPE_BUF bytes or less at once, or waiting), EPIPE without
// readers (the kernel also sends SIGPIPE, which the model has not). A task
// that waits sleeps through kernel.Task.Schedule; a signal ends the wait
// with EINTR (the kernel's -ERESTARTSYS, restarted or EINTR by the signal
// handler).

// Pipe sizes (include/linux/pipe_fs_i.h, include/uapi/linux/limits.h).
const (
	PIPE_DEF_BUFFERS = 16
	PIPE_BUF         = 4096
	pipeCapacity     = PIPE_DEF_BUFFERS * PageSize
)

// pipeInodeInfo is struct pipe_inode_info: the contents, the counts, and
// one wait queue for rd_wait and wr_wait (woken by closing wake).
type pipeInodeInfo struct {
	mu                 sync.Mutex
	buf                []byte
	readers, writers   int
	files              int
	rCounter, wCounter int
	wake               chan struct{}
}

// wakeUp is wake_up_interruptible_all on both queues.
func (p *pipeInodeInfo) wakeUp() {
	close(p.wake)
	p.wake = make(chan struct{})
}

// wait sleeps until the next wakeUp with the pipe's mutex dropped
// (pipe_wait_readable, pipe_wait_writable). false: interrupted.
func (p *pipeInodeInfo) wait(t *kernel.Task) bool {
	ch := p.wake
	p.mu.Unlock()
	ok := t.Schedule(ch)
	p.mu.Lock()
	return ok
}

// pipefifoFops is pipefifo_fops.
var pipefifoFops FileOperations = fifoFops{}

type fifoFops struct{ NoFileOps }

// streamOpen is stream_open: no position, no seeking, no pread/pwrite.
func streamOpen(f *File) {
	f.mode &^= FMODE_LSEEK | FMODE_PREAD | FMODE_PWRITE
	f.mode |= FMODE_STREAM
}

// Open is fifo_open. Errors: ENXIO (O_WRONLY|O_NONBLOCK without a
// reader), EINTR (a wait interrupted), EINVAL (no access mode).
func (fifoFops) Open(t *kernel.Task, inode *Inode, f *File) error {
	defer t.Trace("fifo_open")()
	inode.ilock.Lock()
	p := inode.pipe
	if p == nil {
		p = &pipeInodeInfo{wake: make(chan struct{})}
		inode.pipe = p
	}
	p.files++
	inode.ilock.Unlock()
	f.Private = p
	p.mu.Lock()
	streamOpen(f)
	waitFor := func(cnt *int) bool {
		cur := *cnt
		for cur == *cnt {
			if !p.wait(t) {
				break
			}
		}
		return cur != *cnt
	}
	var err error
	switch f.mode & (FMODE_READ | FMODE_WRITE) {
	case FMODE_READ:
		p.rCounter++
		if p.readers++; p.readers == 1 {
			p.wakeUp()
		}
		if p.writers == 0 && f.flags&O_NONBLOCK == 0 && !waitFor(&p.wCounter) {
			if p.readers--; p.readers == 0 {
				p.wakeUp()
			}
			err = errno.EINTR
		}
	case FMODE_WRITE:
		if f.flags&O_NONBLOCK != 0 && p.readers == 0 {
			err = errno.ENXIO
			break
		}
		p.wCounter++
		if p.writers++; p.writers == 1 {
			p.wakeUp()
		}
		if p.readers == 0 && !waitFor(&p.rCounter) {
			if p.writers--; p.writers == 0 {
				p.wakeUp()
			}
			err = errno.EINTR
		}
	case FMODE_READ | FMODE_WRITE:
		p.readers++
		p.writers++
		p.rCounter++
		p.wCounter++
		if p.readers == 1 || p.writers == 1 {
			p.wakeUp()
		}
	default:
		err = errno.EINVAL
	}
	p.mu.Unlock()
	if err != nil {
		putPipeInfo(inode, p)
	}
	return err
}

// putPipeInfo is put_pipe_info: the last file frees the pipe.
func putPipeInfo(inode *Inode, p *pipeInodeInfo) {
	inode.ilock.Lock()
	defer inode.ilock.Unlock()
	if p.files--; p.files == 0 && inode.pipe == p {
		inode.pipe = nil
	}
}

// Release is pipe_release.
func (fifoFops) Release(t *kernel.Task, inode *Inode, f *File) error {
	p := f.Private.(*pipeInodeInfo)
	p.mu.Lock()
	if f.mode&FMODE_READ != 0 {
		p.readers--
	}
	if f.mode&FMODE_WRITE != 0 {
		p.writers--
	}
	if (p.readers == 0) != (p.writers == 0) {
		p.wakeUp()
	}
	p.mu.Unlock()
	putPipeInfo(inode, p)
	return nil
}

// ReadIter is pipe_read. Errors: EAGAIN (O_NONBLOCK, empty, a writer
// left), EINTR.
func (fifoFops) ReadIter(t *kernel.Task, f *File, buf []byte, pos *int64) (int, error) {
	defer t.Trace("pipe_read")()
	if len(buf) == 0 {
		return 0, nil
	}
	p := f.Private.(*pipeInodeInfo)
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.buf) == 0 {
		if p.writers == 0 {
			return 0, nil
		}
		if f.flags&O_NONBLOCK != 0 {
			return 0, errno.EAGAIN
		}
		if !p.wait(t) {
			return 0, errno.EINTR
		}
	}
	n := copy(buf, p.buf)
	p.buf = p.buf[n:]
	if len(p.buf) == 0 {
		p.buf = nil
	}
	p.wakeUp()
	fileAccessed(t, f)
	return n, nil
}

// WriteIter is pipe_write. Errors: EPIPE (no reader), EAGAIN (O_NONBLOCK
// and full), EINTR.
func (fifoFops) WriteIter(t *kernel.Task, f *File, buf []byte, pos *int64) (int, error) {
	defer t.Trace("pipe_write")()
	if len(buf) == 0 {
		return 0, nil
	}
	p := f.Private.(*pipeInodeInfo)
	p.mu.Lock()
	defer p.mu.Unlock()
	done := 0
	for done < len(buf) {
		if p.readers == 0 {
			if done == 0 {
				return 0, errno.EPIPE
			}
			break
		}
		room := pipeCapacity - len(p.buf)
		rest := len(buf) - done
		// Up to PIPE_BUF bytes are written at once or not at all.
		if room > 0 && (rest > PIPE_BUF || room >= rest) {
			n := min(room, rest)
			p.buf = append(p.buf, buf[done:done+n]...)
			done += n
			p.wakeUp()
			continue
		}
		if f.flags&O_NONBLOCK != 0 {
			if done == 0 {
				return 0, errno.EAGAIN
			}
			break
		}
		if !p.wait(t) {
			if done == 0 {
				return 0, errno.EINTR
			}
			break
		}
	}
	fileUpdateTime(t, f)
	return done, nil
}
