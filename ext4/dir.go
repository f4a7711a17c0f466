package ext4

import (
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// dirFileOps are a directory's file operations (ext4_dir_operations,
// fs/ext4/dir.c). ->open (ext4_dir_open, back since Linux 6.12's "ext4:
// use generic_llseek_cookie") only allocates the file's dir_private_info:
// an encrypted directory opens whether or not its key can be set up (the
// key setup of ext4_dir_open went in 5.11), and readdir and lookup set it
// up themselves, so a key setup that fails (ENOMEM) fails getdents, not
// open.
type dirFileOps struct {
	vfs.DirFileOps
	sb *SuperBlock
}

// Open is ext4_dir_open: the file's dir_private_info, kzalloc'd.
// Errors: ENOMEM.
func (o *dirFileOps) Open(t *kernel.Task, inode *vfs.Inode, f *vfs.File) error {
	info, err := dirOpen(t)
	if err != nil {
		return err
	}
	f.Private = info
	return nil
}

// Release is ext4_release_dir: the readdir tree and the info freed.
func (o *dirFileOps) Release(t *kernel.Task, inode *vfs.Inode, f *vfs.File) error {
	if info, ok := f.Private.(*DirPrivateInfo); ok {
		info.free(t)
		f.Private = nil
	}
	return nil
}

// Llseek is ext4_dir_llseek: an htree directory's positions are hashes, up
// to EXT4_HTREE_EOF_64BIT (which SEEK_END also reaches); a linear
// directory's are byte offsets (ext4_llseek). Either way the info's cookie
// is set one behind i_version, so the next readdir rescans its block (or
// refills its tree). Errors: EINVAL.
func (o *dirFileOps) Llseek(t *kernel.Task, f *vfs.File, off int64, whence int) (int64, error) {
	inode := f.Inode()
	ei := EXT4_I(inode)
	var pos int64
	var err error
	if ei.isDxDir() {
		pos, err = vfs.GenericFileLlseek(f, off, whence, HtreeEOF64, HtreeEOF64)
	} else {
		pos, err = vfs.GenericFileLlseek(f, off, whence, inode.SB().MaxBytes(), inode.Size())
	}
	if info, ok := f.Private.(*DirPrivateInfo); ok {
		ei.readMu.Lock()
		info.cookie = ei.iVersion - 1
		ei.readMu.Unlock()
	}
	return pos, err
}

// IterateShared is ext4_readdir, under the directory's i_rwsem held
// shared (readMu serialises the readers): fscrypt_prepare_readdir, then
// the entries from the position on ("." and ".." included, from the disk):
// in hash order (ext4_dx_readdir, resumed from the file's
// dir_private_info) for an htree or one-block directory, else block by
// block; names decrypted, or without the key shown as no-key names whose
// dirhash is the hash the name was filed under (the stored one in a
// casefolded, encrypted directory). A corrupt entry is logged and the rest
// of its block skipped, as the kernel does. Errors: EFSCORRUPTED,
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
	info, _ := f.Private.(*DirPrivateInfo)
	fctx := &DirContext{Pos: ctx.Pos, Info: info}
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
