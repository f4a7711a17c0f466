package vfs

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// filpCache accounts struct file (the "filp" slab, 232 bytes in 6.x).
var filpCache = kmem.NewCache("filp", 232)

// File is struct file: an open file description.
type File struct {
	path  Path
	inode *Inode
	flags int    // f_flags
	mode  uint32 // f_mode (FMODE_*)
	// posMu is f_pos_lock, taken by read, write, lseek and getdents
	// (fdget_pos) so that they see and advance one position.
	posMu sync.Mutex
	pos   int64
	count atomic.Int64 // f_count
	// Op is f_op, copied from the inode's i_fop when opened.
	Op FileOperations
	// Private is private_data, the filesystem's per-open data.
	Private any
	cred    *kernel.Cred // f_cred
	// ra is f_ra, the readahead state of the file's reads
	// (readahead.go), under the mapping's lock.
	ra FileRAState
	// Pad to three cache lines (the filp slab is cache-line aligned).
	_ [32]byte
}

// Cred returns f_cred, the credentials of the process that opened the
// file.
func (f *File) Cred() *kernel.Cred { return f.cred }

// Path returns f_path.
func (f *File) Path() Path { return f.path }

// Dentry returns f_path.dentry (file_dentry).
func (f *File) Dentry() *Dentry { return f.path.Dentry }

// Inode returns f_inode.
func (f *File) Inode() *Inode { return f.inode }

// Flags returns f_flags.
func (f *File) Flags() int { return f.flags }

// FMode returns f_mode.
func (f *File) FMode() uint32 { return f.mode }

// Pos returns f_pos (a racy snapshot).
func (f *File) Pos() int64 {
	f.posMu.Lock()
	defer f.posMu.Unlock()
	return f.pos
}

// String is the canonical one-line dump.
func (f *File) String() string {
	return fmt.Sprintf("file %q flags=%#o mode=%#x pos=%d ino=%d", f.path.Dentry.Name().Name, f.flags, f.mode, f.Pos(), f.inode.Ino())
}

// allocFile is alloc_empty_file. Errors: ENOMEM.
func allocFile(t *kernel.Task, flags int) (*File, error) {
	if err := filpCache.Alloc(&t.Ctx, kmem.GFPKernel); err != nil {
		return nil, err
	}
	f := filePool.Get().(*File)
	f.flags = flags
	f.count.Store(1)
	// OPEN_FMODE: O_RDONLY -> read, O_WRONLY -> write, O_RDWR -> both.
	f.mode = uint32((flags + 1) & O_ACCMODE)
	return f, nil
}

// get takes a reference (get_file).
func (f *File) get() *File { f.count.Add(1); return f }

// fput drops a reference; the last one releases the file (__fput).
func (f *File) fput(t *kernel.Task) {
	if f.count.Add(-1) != 0 {
		return
	}
	fput(t, f)
}

// fput is __fput: ->release, then the path's references.
func fput(t *kernel.Task, f *File) {
	defer t.Trace("__fput")()
	if f.mode&FMODE_OPENED != 0 && f.Op != nil {
		f.Op.Release(t, f.inode, f)
	}
	if f.mode&FMODE_OPENED != 0 && f.path.Mnt != nil {
		f.path.Mnt.files.Add(-1)
	}
	// put_file_access: the write access do_dentry_open took.
	if f.mode&FMODE_WRITER != 0 {
		f.path.Mnt.writers.Add(-1)
	}
	dcache.Dput(t, f.path.Dentry)
	filpCache.Free(&t.Ctx)
	*f = File{}
	filePool.Put(f)
}

// filePool recycles released files, as the filp slab's per-CPU freelists
// do: a released File is never used again by the VFS (the descriptor
// table and every holder had their references), and reusing it spares the
// multi-task benchmarks a garbage collection per few thousand opens.
var filePool = sync.Pool{New: func() any { return new(File) }}

// fsStruct is struct fs_struct: a process's root and working directory,
// each with a reference. It is replaced as a whole (chdir), so that
// RCU-walk reads a consistent pair without a lock.
type fsStruct struct {
	root, pwd Path
}

// Proc is a process: its file descriptor table, its root and working
// directory and its credentials. Its syscalls may be called from many
// tasks (threads) at once.
type Proc struct {
	Sys *System
	PID int
	// Cred is the process's credentials, for the key ioctls.
	Cred *kernel.Cred

	fsMu sync.Mutex
	fs   atomic.Pointer[fsStruct]

	filesMu sync.Mutex
	fds     []*File
	// Pad to two cache lines: each process's tables are its own
	// allocations in the kernel, and a shared line would serialise
	// processes that never touch each other's files.
	_ [56]byte
}

// NewProc starts a process whose root and working directory are the root
// of the namespace, with root's credentials (kernel.RootCred) unless
// cred is given.
func (s *System) NewProc(t *kernel.Task, cred *kernel.Cred) *Proc {
	if cred == nil {
		c := *kernel.RootCred
		cred = &c
	}
	p := &Proc{Sys: s, PID: int(s.nextPID.Add(1)), Cred: cred}
	// The descriptor array is the process's own, cache-line sized block
	// (files_struct's fd_array), not a small allocation that could share a
	// line with another process's.
	p.fds = make([]*File, 0, 16)
	root := s.RootMount()
	if root != nil {
		r := Path{root, root.Root}
		dcache.Dget(t, r.Dentry)
		dcache.Dget(t, r.Dentry)
		p.fs.Store(&fsStruct{root: r, pwd: r})
	}
	return p
}

// stdio stands for the standard streams a process inherits from what
// started it (a terminal, a pipe), which the model does not back with a
// file: InheritStdio puts it at descriptors 0, 1 and 2, so that the files
// the process opens get 3 and up, as a program started from a shell does
// on Linux. A syscall on it is EBADF (the model has nothing to read or
// write there); close frees the descriptor.
var stdio = &File{}

// InheritStdio gives the process descriptors 0, 1 and 2 (those not
// already open) on the standard streams it inherits (stdio).
func (p *Proc) InheritStdio() {
	p.filesMu.Lock()
	defer p.filesMu.Unlock()
	for len(p.fds) < 3 {
		p.fds = append(p.fds, nil)
	}
	for i := 0; i < 3; i++ {
		if p.fds[i] == nil {
			p.fds[i] = stdio
		}
	}
}

// Exit closes every file of the process and drops its root and working
// directory (do_exit's exit_files and exit_fs).
func (p *Proc) Exit(t *kernel.Task) {
	p.filesMu.Lock()
	fds := p.fds
	p.fds = nil
	p.filesMu.Unlock()
	for _, f := range fds {
		if f != nil && f != stdio {
			f.fput(t)
		}
	}
	p.fsMu.Lock()
	fs := p.fs.Swap(nil)
	p.fsMu.Unlock()
	if fs != nil {
		dcache.Dput(t, fs.root.Dentry)
		dcache.Dput(t, fs.pwd.Dentry)
	}
}

// installFd is get_unused_fd_flags + fd_install: the lowest free
// descriptor. Errors: EMFILE past 1<<20 descriptors.
func (p *Proc) installFd(f *File) (int, error) {
	p.filesMu.Lock()
	defer p.filesMu.Unlock()
	for i, g := range p.fds {
		if g == nil {
			p.fds[i] = f
			return i, nil
		}
	}
	if len(p.fds) >= 1<<20 {
		return -1, errno.EMFILE
	}
	p.fds = append(p.fds, f)
	return len(p.fds) - 1, nil
}

// fdget returns the file of fd with a reference (fdget). Errors: EBADF,
// also for an inherited standard stream (stdio).
func (p *Proc) fdget(fd int) (*File, error) {
	p.filesMu.Lock()
	defer p.filesMu.Unlock()
	if fd < 0 || fd >= len(p.fds) || p.fds[fd] == nil || p.fds[fd] == stdio {
		return nil, errno.EBADF
	}
	return p.fds[fd].get(), nil
}

// closeFd removes fd from the table (file_close_fd); the file is nil for
// an inherited standard stream (stdio). Errors: EBADF.
func (p *Proc) closeFd(fd int) (*File, error) {
	p.filesMu.Lock()
	defer p.filesMu.Unlock()
	if fd < 0 || fd >= len(p.fds) || p.fds[fd] == nil {
		return nil, errno.EBADF
	}
	f := p.fds[fd]
	p.fds[fd] = nil
	for len(p.fds) > 0 && p.fds[len(p.fds)-1] == nil {
		p.fds = p.fds[:len(p.fds)-1]
	}
	if f == stdio {
		return nil, nil
	}
	return f, nil
}

// File returns the open file of fd with a reference the caller drops with
// PutFile: for hooks and tests that look at a file's state. Errors: EBADF.
func (p *Proc) File(fd int) (*File, error) { return p.fdget(fd) }

// PutFile drops a reference from File.
func PutFile(t *kernel.Task, f *File) { f.fput(t) }

// OpenFiles returns the number of open descriptors.
func (p *Proc) OpenFiles() int {
	p.filesMu.Lock()
	defer p.filesMu.Unlock()
	n := 0
	for _, f := range p.fds {
		if f != nil {
			n++
		}
	}
	return n
}
