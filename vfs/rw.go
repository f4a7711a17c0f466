package vfs

import (
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// maxRWCount is MAX_RW_COUNT: INT_MAX rounded down to a page.
const maxRWCount = 0x7ffff000

// rwVerifyArea is rw_verify_area: a negative position (or one the count
// would overflow) is EINVAL.
func rwVerifyArea(pos int64, n int) error {
	if pos < 0 || pos+int64(n) < 0 {
		return errno.EINVAL
	}
	return nil
}

// vfsRead is vfs_read.
func vfsRead(t *kernel.Task, f *File, buf []byte, pos *int64) (int, error) {
	defer t.Trace("vfs_read")()
	if f.mode&FMODE_READ == 0 {
		return 0, errno.EBADF
	}
	if f.mode&FMODE_CAN_READ == 0 {
		return 0, errno.EINVAL
	}
	if err := rwVerifyArea(*pos, len(buf)); err != nil {
		return 0, err
	}
	if len(buf) > maxRWCount {
		buf = buf[:maxRWCount]
	}
	n, err := f.Op.ReadIter(t, f, buf, pos)
	// filemap_read's file_accessed, for the regular files whose
	// ->read_iter is generic_file_read_iter (atime.go).
	if len(buf) > 0 && (err == nil || n > 0) && f.inode.IsReg() {
		fileAccessed(t, f)
	}
	return n, err
}

// vfsWrite is vfs_write.
func vfsWrite(t *kernel.Task, f *File, buf []byte, pos *int64) (int, error) {
	defer t.Trace("vfs_write")()
	if f.mode&FMODE_WRITE == 0 {
		return 0, errno.EBADF
	}
	if f.mode&FMODE_CAN_WRITE == 0 {
		return 0, errno.EINVAL
	}
	if err := rwVerifyArea(*pos, len(buf)); err != nil {
		return 0, err
	}
	if len(buf) > maxRWCount {
		buf = buf[:maxRWCount]
	}
	return f.Op.WriteIter(t, f, buf, pos)
}

// Read is read(2): up to len(buf) bytes from fd's position, which it
// advances. Errors: EBADF (bad fd or not open for reading), EISDIR
// (directory), EINVAL, ENOKEY, the filesystem's errors.
func (p *Proc) Read(t *kernel.Task, fd int, buf []byte) (n int, err error) {
	defer t.Recover(&err)
	defer t.Trace("ksys_read")()
	t.Inc(EvSyscall)
	f, err := p.fdget(fd)
	if err != nil {
		return 0, err
	}
	defer f.fput(t)
	if f.mode&FMODE_STREAM != 0 {
		// file_ppos of a stream: no position and no f_pos_lock.
		var pos int64
		return vfsRead(t, f, buf, &pos)
	}
	f.posMu.Lock()
	defer f.posMu.Unlock()
	pos := f.pos
	n, err = vfsRead(t, f, buf, &pos)
	if n >= 0 {
		f.pos = pos
	}
	return n, err
}

// Write is write(2). Errors: EBADF, EINVAL, EFBIG, ENOSPC, ENOKEY, the
// filesystem's errors.
func (p *Proc) Write(t *kernel.Task, fd int, buf []byte) (n int, err error) {
	defer t.Recover(&err)
	defer t.Trace("ksys_write")()
	t.Inc(EvSyscall)
	f, err := p.fdget(fd)
	if err != nil {
		return 0, err
	}
	defer f.fput(t)
	if f.mode&FMODE_STREAM != 0 {
		var pos int64
		return vfsWrite(t, f, buf, &pos)
	}
	f.posMu.Lock()
	defer f.posMu.Unlock()
	pos := f.pos
	n, err = vfsWrite(t, f, buf, &pos)
	if n >= 0 {
		f.pos = pos
	}
	return n, err
}

// Pread is pread64(2): read at off without moving the position. Errors:
// EINVAL (negative off), ESPIPE (unseekable), those of Read.
func (p *Proc) Pread(t *kernel.Task, fd int, buf []byte, off int64) (n int, err error) {
	defer t.Recover(&err)
	defer t.Trace("ksys_pread64")()
	t.Inc(EvSyscall)
	if off < 0 {
		return 0, errno.EINVAL
	}
	f, err := p.fdget(fd)
	if err != nil {
		return 0, err
	}
	defer f.fput(t)
	if f.mode&FMODE_PREAD == 0 {
		return 0, errno.ESPIPE
	}
	return vfsRead(t, f, buf, &off)
}

// Pwrite is pwrite64(2): write at off (at the end with O_APPEND, as Linux
// does) without moving the position.
func (p *Proc) Pwrite(t *kernel.Task, fd int, buf []byte, off int64) (n int, err error) {
	defer t.Recover(&err)
	defer t.Trace("ksys_pwrite64")()
	t.Inc(EvSyscall)
	if off < 0 {
		return 0, errno.EINVAL
	}
	f, err := p.fdget(fd)
	if err != nil {
		return 0, err
	}
	defer f.fput(t)
	if f.mode&FMODE_PWRITE == 0 {
		return 0, errno.ESPIPE
	}
	return vfsWrite(t, f, buf, &off)
}

// Lseek is lseek(2). Errors: EBADF, EINVAL (bad whence or a negative
// result), ENXIO (SEEK_DATA/SEEK_HOLE at or past the end), ESPIPE.
func (p *Proc) Lseek(t *kernel.Task, fd int, off int64, whence int) (pos int64, err error) {
	defer t.Recover(&err)
	defer t.Trace("ksys_lseek")()
	t.Inc(EvSyscall)
	f, err := p.fdget(fd)
	if err != nil {
		return 0, err
	}
	defer f.fput(t)
	if whence < 0 || whence > SEEK_HOLE {
		return 0, errno.EINVAL
	}
	f.posMu.Lock()
	defer f.posMu.Unlock()
	return f.Op.Llseek(t, f, off, whence)
}

// GenericFileLlseek is generic_file_llseek_size for a file of size bytes
// and maximum maxSize: the new position is stored in f and returned. The
// caller holds f_pos_lock (the VFS does).
func GenericFileLlseek(f *File, off int64, whence int, maxSize, size int64) (int64, error) {
	switch whence {
	case SEEK_END:
		off += size
	case SEEK_CUR:
		if off == 0 {
			return f.pos, nil
		}
		off += f.pos
	case SEEK_DATA:
		if off < 0 || off >= size {
			return 0, ENXIO
		}
	case SEEK_HOLE:
		if off < 0 || off >= size {
			return 0, ENXIO
		}
		off = size
	case SEEK_SET:
	default:
		return 0, errno.EINVAL
	}
	if off < 0 || off > maxSize {
		return 0, errno.EINVAL
	}
	f.pos = off
	return off, nil
}

// SetPos sets f_pos; for ->llseek implementations (the caller holds
// f_pos_lock).
func (f *File) SetPos(pos int64) { f.pos = pos }

// PosLocked returns f_pos to an ->llseek or ->iterate_shared
// implementation, which runs with f_pos_lock held.
func (f *File) PosLocked() int64 { return f.pos }
