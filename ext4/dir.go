package ext4

import (
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// dirFileOps are a directory's file operations (ext4_dir_operations,
// fs/ext4/dir.c). They have no ->open: since Linux 5.11 (commit "ext4:
// remove ext4_dir_open()") an encrypted directory opens whether or not
// its key can be set up, and readdir and lookup set it up themselves, so
// a key setup that fails (ENOMEM) fails getdents, not open.
type dirFileOps struct {
	vfs.DirFileOps
	sb *SuperBlock
}

// Llseek is ext4_dir_llseek: an htree directory's positions are hashes, up
// to EXT4_HTREE_EOF_64BIT (which SEEK_END also reaches); a linear
// directory's are byte offsets (ext4_llseek). Errors: EINVAL.
func (o *dirFileOps) Llseek(t *kernel.Task, f *vfs.File, off int64, whence int) (int64, error) {
	inode := f.Inode()
	if EXT4_I(inode).isDxDir() {
		return vfs.GenericFileLlseek(f, off, whence, HtreeEOF64, HtreeEOF64)
	}
	return vfs.GenericFileLlseek(f, off, whence, inode.SB().MaxBytes(), inode.Size())
}

// IterateShared is ext4_readdir, under the directory's i_rwsem held
// shared (readMu serialises the readers): fscrypt_prepare_readdir, then
// the entries from the position on ("." and ".." included, from the disk):
// in hash order (ext4_dx_readdir) for an htree or one-block directory,
// else block by block; names decrypted, or without the key shown as no-key
// names whose dirhash is the hash the name was filed under (the stored one
// in a casefolded, encrypted directory). A corrupt entry is logged and the
// rest of its block skipped, as the kernel does. Errors: EFSCORRUPTED,
// EFSBADCRC, ENOMEM, fscrypt's.
func (o *dirFileOps) IterateShared(t *kernel.Task, f *vfs.File, ctx *vfs.DirContext) error {
	defer t.Trace("ext4_readdir")()
	dir := f.Inode()
	if dir.IsEncrypted() {
		if err := hooks.FscryptPrepareReaddir(t, dir); err != nil {
			return err
		}
	}
	ei := EXT4_I(dir)
	ei.readMu.Lock()
	defer ei.readMu.Unlock()
	fctx := &DirContext{Pos: ctx.Pos}
	fctx.Actor = func(name []byte, ino uint32, dtype uint8) bool {
		ctx.Pos = fctx.Pos
		return ctx.DirEmit(string(name), uint64(ino), dtype)
	}
	err := Readdir(t, ei, fctx)
	ctx.Pos = fctx.Pos
	return err
}

// UnlockedIoctl is ext4_ioctl.
func (o *dirFileOps) UnlockedIoctl(t *kernel.Task, f *vfs.File, cmd uint32, arg any) (int, error) {
	return o.sb.ioctl(t, f, cmd, arg)
}
