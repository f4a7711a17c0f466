package vfs

import (
	"encoding/binary"
	"fmt"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// DirContext is struct dir_context: the position of a directory read and
// the actor that receives each entry.
type DirContext struct {
	// Pos is the position of the next entry (ctx->pos); ->iterate_shared
	// advances it past each entry emitted.
	Pos   int64
	actor func(name string, off int64, ino uint64, dtype uint8) bool
}

// NewDirContext returns a context starting at pos whose actor is fn (for
// tests and in-kernel readers); fn returns false when it wants no more.
func NewDirContext(pos int64, fn func(name string, off int64, ino uint64, dtype uint8) bool) *DirContext {
	return &DirContext{Pos: pos, actor: fn}
}

// DirEmit is dir_emit: pass one entry to the actor at the current
// position. It returns false when the reader's buffer is full; the
// filesystem then stops without advancing Pos.
func (ctx *DirContext) DirEmit(name string, ino uint64, dtype uint8) bool {
	return ctx.actor(name, ctx.Pos, ino, dtype)
}

// DirEmitDots is dir_emit_dots: "." at position 0 and ".." at position 1,
// with the inode numbers of the directory and of its parent
// (parent_ino).
func (ctx *DirContext) DirEmitDots(f *File) bool {
	if ctx.Pos == 0 {
		if !ctx.DirEmit(".", f.inode.ino, DT_DIR) {
			return false
		}
		ctx.Pos = 1
	}
	if ctx.Pos == 1 {
		d := f.path.Dentry
		d.Lock(nil)
		pino := d.Parent().Inode().ino
		d.Unlock()
		if !ctx.DirEmit("..", pino, DT_DIR) {
			return false
		}
		ctx.Pos = 2
	}
	return true
}

// Dirent is one decoded struct linux_dirent64.
type Dirent struct {
	Ino    uint64
	Off    int64
	Reclen uint16
	Type   uint8
	Name   string
}

// String is the canonical one-line dump.
func (d Dirent) String() string {
	return fmt.Sprintf("dirent %q ino=%d off=%d type=%d reclen=%d", d.Name, d.Ino, d.Off, d.Type, d.Reclen)
}

// direntNameOff is offsetof(struct linux_dirent64, d_name).
const direntNameOff = 19

// DirentReclen is the record length of a linux_dirent64 with a name of n
// bytes: ALIGN(19 + n + 1, 8).
func DirentReclen(n int) int { return (direntNameOff + n + 1 + 7) &^ 7 }

// ParseDirents decodes the records Getdents64 wrote into buf[:n].
func ParseDirents(buf []byte) ([]Dirent, error) {
	var out []Dirent
	for len(buf) > 0 {
		if len(buf) < direntNameOff {
			return out, errno.EINVAL
		}
		d := Dirent{
			Ino:    binary.LittleEndian.Uint64(buf),
			Off:    int64(binary.LittleEndian.Uint64(buf[8:])),
			Reclen: binary.LittleEndian.Uint16(buf[16:]),
			Type:   buf[18],
		}
		if int(d.Reclen) < direntNameOff+1 || int(d.Reclen) > len(buf) {
			return out, errno.EINVAL
		}
		name := buf[direntNameOff:d.Reclen]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		d.Name = string(name)
		out = append(out, d)
		buf = buf[d.Reclen:]
	}
	return out, nil
}

// iterateDir is iterate_dir: ->iterate_shared under the directory's
// i_rwsem held shared, from and to f_pos. Errors: ENOTDIR, ENOENT (a
// removed directory).
func iterateDir(t *kernel.Task, f *File, ctx *DirContext) error {
	defer t.Trace("iterate_dir")()
	inode := f.inode
	inode.Rwsem.RLock()
	defer inode.Rwsem.RUnlock()
	if inode.IsDeadDir() {
		return errno.ENOENT
	}
	ctx.Pos = f.pos
	err := f.Op.IterateShared(t, f, ctx)
	f.pos = ctx.Pos
	fileAccessed(t, f)
	return err
}

// Getdents64 is getdents64(2): fill buf with linux_dirent64 records
// (ParseDirents decodes them) from fd's position and return the number of
// bytes used; 0 at the end of the directory. Each record's d_off is the
// position after it. Errors: EBADF, ENOTDIR, EINVAL (buf too small for
// the next entry), ENOENT (removed directory), ENOKEY-free (no-key names
// are listed without the key).
func (p *Proc) Getdents64(t *kernel.Task, fd int, buf []byte) (n int, err error) {
	defer t.Recover(&err)
	defer t.Trace("getdents64")()
	t.Inc(EvSyscall)
	f, err := p.fdget(fd)
	if err != nil {
		return 0, err
	}
	defer f.fput(t)
	f.posMu.Lock()
	defer f.posMu.Unlock()
	used, prev := 0, -1
	var fillErr error
	ctx := &DirContext{actor: func(name string, off int64, ino uint64, dtype uint8) bool {
		if len(name) == 0 {
			fillErr = errno.EIO
			return false
		}
		for i := 0; i < len(name); i++ {
			if name[i] == '/' {
				fillErr = errno.EIO
				return false
			}
		}
		reclen := DirentReclen(len(name))
		fillErr = errno.EINVAL
		if reclen > len(buf)-used {
			return false
		}
		fillErr = nil
		if prev >= 0 {
			binary.LittleEndian.PutUint64(buf[prev+8:], uint64(off))
		}
		r := buf[used : used+reclen]
		binary.LittleEndian.PutUint64(r, ino)
		binary.LittleEndian.PutUint16(r[16:], uint16(reclen))
		r[18] = dtype
		copy(r[direntNameOff:], name)
		clear(r[direntNameOff+len(name):])
		prev = used
		used += reclen
		return true
	}}
	err = iterateDir(t, f, ctx)
	if err == nil {
		err = fillErr
	}
	if prev >= 0 {
		binary.LittleEndian.PutUint64(buf[prev+8:], uint64(ctx.Pos))
		return used, nil
	}
	return 0, err
}
