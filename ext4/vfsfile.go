package ext4

import (
	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// Inode attribute ioctls (include/uapi/linux/fs.h, x86-64 numbers:
// _IOR('f', 1, long) and _IOW('f', 2, long)) and the flags they carry. The
// argument of both is a *uint32. The model's VFS has no fileattr layer, so
// ext4 answers them from its ->unlocked_ioctl, as it did before Linux 5.13
// (EXT4_IOC_GETFLAGS / EXT4_IOC_SETFLAGS in ext4_ioctl).
const (
	FS_IOC_GETFLAGS = 0x80086601
	FS_IOC_SETFLAGS = 0x40086602

	FS_ENCRYPT_FL  = 0x00000800
	FS_INDEX_FL    = 0x00001000
	FS_CASEFOLD_FL = 0x40000000
)

// fileOps are a regular file's inode operations (ext4_file_inode_operations).
type fileOps struct {
	vfs.NoInodeOps
	fs *FS
}

// Setattr is ext4_setattr: fscrypt_prepare_setattr (an encrypted file's
// size changes need its key), then the truncation. The VFS holds i_rwsem.
func (o *fileOps) Setattr(t *kernel.Task, d *vfs.Dentry, attr *vfs.Iattr) error {
	defer t.Trace("ext4_setattr")()
	if err := hooks.FscryptPrepareSetattr(t, d, attr); err != nil {
		return err
	}
	if attr.Valid&vfs.ATTR_SIZE != 0 {
		return o.fs.truncate(t, d.Inode(), attr.Size)
	}
	return nil
}

// fileFileOps are a regular file's file operations (ext4_file_operations).
type fileFileOps struct {
	vfs.NoFileOps
	fs *FS
}

// Open is ext4_file_open: fscrypt_file_open first (ENOKEY for an encrypted
// file without its key; the parent check of seed 004's variants).
func (o *fileFileOps) Open(t *kernel.Task, inode *vfs.Inode, f *vfs.File) error {
	defer t.Trace("ext4_file_open")()
	return hooks.FscryptFileOpen(t, inode, f)
}

// ReadIter is ext4_file_read_iter (the buffered read path): the pages are
// read from the device and, in an encrypted file, decrypted per data unit.
func (o *fileFileOps) ReadIter(t *kernel.Task, f *vfs.File, buf []byte, pos *int64) (int, error) {
	return o.fs.read(t, f.Inode(), buf, pos)
}

// WriteIter is ext4_file_write_iter, under the inode's i_rwsem: each page
// is written through (read, modified, encrypted into a bounce page in an
// encrypted file, stored).
func (o *fileFileOps) WriteIter(t *kernel.Task, f *vfs.File, buf []byte, pos *int64) (int, error) {
	inode := f.Inode()
	inode.Rwsem.Lock()
	defer inode.Rwsem.Unlock()
	return o.fs.write(t, inode, buf, pos, f.Flags()&vfs.O_APPEND != 0)
}

// Llseek is ext4_llseek for SEEK_SET/CUR/END (generic_file_llseek_size);
// SEEK_DATA and SEEK_HOLE are answered as for a file without holes.
func (o *fileFileOps) Llseek(t *kernel.Task, f *vfs.File, off int64, whence int) (int64, error) {
	inode := f.Inode()
	return vfs.GenericFileLlseek(f, off, whence, inode.SB().MaxBytes(), inode.Size())
}

// UnlockedIoctl is ext4_ioctl.
func (o *fileFileOps) UnlockedIoctl(t *kernel.Task, f *vfs.File, cmd uint32, arg any) (int, error) {
	return o.fs.ioctl(t, f, cmd, arg)
}

// dirFileOps are a directory's file operations (ext4_dir_operations).
type dirFileOps struct {
	vfs.NoFileOps
	fs *FS
}

// Open is ext4_dir_open: an encrypted directory's key is set up if
// available (fscrypt_prepare_readdir; EIO if that fails).
func (o *dirFileOps) Open(t *kernel.Task, inode *vfs.Inode, f *vfs.File) error {
	if inode.IsEncrypted() && hooks.FscryptPrepareReaddir(t, inode) != nil {
		return errno.EIO
	}
	return nil
}

// ReadIter is generic_read_dir: EISDIR.
func (o *dirFileOps) ReadIter(t *kernel.Task, f *vfs.File, buf []byte, pos *int64) (int, error) {
	return 0, errno.EISDIR
}

// Llseek is ext4_dir_llseek: an htree directory's positions are hashes, up
// to EXT4_HTREE_EOF_64BIT (which SEEK_END also reaches); a linear
// directory's are byte offsets (ext4_llseek).
func (o *dirFileOps) Llseek(t *kernel.Task, f *vfs.File, off int64, whence int) (int64, error) {
	inode := f.Inode()
	if d := infoOf(inode).dir; d.isDxDir() {
		return vfs.GenericFileLlseek(f, off, whence, HtreeEOF64, HtreeEOF64)
	}
	return vfs.GenericFileLlseek(f, off, whence, inode.SB().MaxBytes(), inode.Size())
}

// IterateShared is ext4_readdir: fscrypt_prepare_readdir, then the entries
// from the position on ("." and ".." included, from the disk): in hash
// order (ext4_dx_readdir) for an htree or one-block directory, else block
// by block; names decrypted, or without the key shown as no-key names
// whose dirhash is the hash the name was filed under (the stored one in a
// casefolded, encrypted directory). A corrupt entry is logged and the rest
// of its block skipped, as the kernel does.
func (o *dirFileOps) IterateShared(t *kernel.Task, f *vfs.File, ctx *vfs.DirContext) error {
	defer t.Trace("ext4_readdir")()
	dir := f.Inode()
	if dir.IsEncrypted() {
		if err := hooks.FscryptPrepareReaddir(t, dir); err != nil {
			return err
		}
	}
	in := infoOf(dir)
	in.readMu.Lock()
	defer in.readMu.Unlock()
	fctx := &DirContext{Pos: ctx.Pos}
	fctx.Actor = func(name []byte, ino uint32, dtype uint8) bool {
		ctx.Pos = fctx.Pos
		return ctx.DirEmit(string(name), uint64(ino), dtype)
	}
	err := Readdir(t, in.dir, fctx)
	ctx.Pos = fctx.Pos
	return err
}

// UnlockedIoctl is ext4_ioctl.
func (o *dirFileOps) UnlockedIoctl(t *kernel.Task, f *vfs.File, cmd uint32, arg any) (int, error) {
	return o.fs.ioctl(t, f, cmd, arg)
}

// ioctl is ext4_ioctl: the fscrypt ioctls (EOPNOTSUPP without the encrypt
// feature) and FS_IOC_GETFLAGS / FS_IOC_SETFLAGS.
func (fs *FS) ioctl(t *kernel.Task, f *vfs.File, cmd uint32, arg any) (int, error) {
	switch cmd {
	case FS_IOC_GETFLAGS:
		p, ok := arg.(*uint32)
		if !ok {
			return 0, errno.EFAULT
		}
		*p = fs.getflags(f.Inode())
		return 0, nil
	case FS_IOC_SETFLAGS:
		p, ok := arg.(*uint32)
		if !ok {
			return 0, errno.EFAULT
		}
		return 0, fs.setflags(t, f.Inode(), *p)
	case vfs.FS_IOC_SET_ENCRYPTION_POLICY, vfs.FS_IOC_GET_ENCRYPTION_POLICY,
		vfs.FS_IOC_GET_ENCRYPTION_POLICY_EX, vfs.FS_IOC_GET_ENCRYPTION_NONCE,
		vfs.FS_IOC_ADD_ENCRYPTION_KEY, vfs.FS_IOC_REMOVE_ENCRYPTION_KEY,
		vfs.FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS, vfs.FS_IOC_GET_ENCRYPTION_KEY_STATUS:
		if fs.opts.NoEncrypt {
			return 0, errno.EOPNOTSUPP
		}
		_, ret, err := vfs.FscryptIoctl(t, f, cmd, arg)
		return ret, err
	}
	return 0, errno.ENOTTY
}

// getflags is ext4_fileattr_get's flags: casefold, encrypt and the htree
// index flag from i_flags.
func (fs *FS) getflags(inode *vfs.Inode) uint32 {
	inode.Rwsem.RLock()
	defer inode.Rwsem.RUnlock()
	var fl uint32
	if inode.IsCasefolded() {
		fl |= FS_CASEFOLD_FL
	}
	if inode.IsEncrypted() {
		fl |= FS_ENCRYPT_FL
	}
	if d := infoOf(inode).dir; d != nil && d.Flags&IndexFL != 0 {
		fl |= FS_INDEX_FL
	}
	return fl
}

// setflags is ext4_fileattr_set for FS_CASEFOLD_FL, the only settable flag
// the model keeps: fscrypt_prepare_setflags (an encrypted directory needs a
// v2 policy and its key, and gets its dirhash key), then
// ext4_ioctl_setflags's checks: the casefold feature (EOPNOTSUPP), a
// directory (ENOTDIR), empty (ENOTEMPTY). Flags users cannot change
// (FS_ENCRYPT_FL, FS_INDEX_FL) are ignored, as the kernel keeps them; other
// unknown flags are EOPNOTSUPP.
func (fs *FS) setflags(t *kernel.Task, inode *vfs.Inode, flags uint32) error {
	defer t.Trace("ext4_fileattr_set")()
	if flags&^(FS_CASEFOLD_FL|FS_ENCRYPT_FL|FS_INDEX_FL) != 0 {
		return errno.EOPNOTSUPP
	}
	inode.Rwsem.Lock()
	defer inode.Rwsem.Unlock()
	want := flags&FS_CASEFOLD_FL != 0
	if want == inode.IsCasefolded() {
		return nil
	}
	if err := fscrypt.PrepareSetflags(t, inode, want); err != nil {
		return err
	}
	if !fs.opts.Casefold {
		return errno.EOPNOTSUPP
	}
	d := infoOf(inode).dir
	if d == nil {
		return errno.ENOTDIR
	}
	if !EmptyDir(t, d) {
		return errno.ENOTEMPTY
	}
	if want {
		d.Flags |= CasefoldFL
		inode.SetFlags(vfs.S_CASEFOLD)
	} else {
		d.Flags &^= CasefoldFL
		inode.ClearFlags(vfs.S_CASEFOLD)
	}
	return nil
}

// needKey fails an encrypted file's data access without its key.
func needKey(inode *vfs.Inode) error {
	if inode.IsEncrypted() && inode.CryptInfo() == nil {
		return errno.ENOKEY
	}
	return nil
}

// readPage reads block idx of a regular file into out (zeros for a hole),
// decrypting it in an encrypted file (fscrypt_decrypt_pagecache_blocks
// over the page's data units). The caller holds in.mu.
func (fs *FS) readPage(t *kernel.Task, inode *vfs.Inode, in *inodeInfo, idx uint64, out []byte) error {
	addr, ok := in.data[idx]
	if !ok {
		clear(out)
		return nil
	}
	copy(out, fs.sb.Dev.Block(addr))
	if !inode.IsEncrypted() {
		return nil
	}
	folio := block.Folio{Index: idx, Data: out, Host: fscrypt.Inode(inode)}
	return fscrypt.DecryptPagecacheBlocks(t, &folio, BlockSize, 0)
}

// writePage stores plaintext page idx of a regular file, allocating its
// block if it is a hole; an encrypted file's page goes through a bounce
// page (fscrypt_encrypt_pagecache_blocks), as ext4_bio_write_folio does. The caller
// holds in.mu.
func (fs *FS) writePage(t *kernel.Task, inode *vfs.Inode, in *inodeInfo, idx uint64, plain []byte) error {
	src := plain
	if inode.IsEncrypted() {
		folio := block.Folio{Index: idx, Data: plain, Host: fscrypt.Inode(inode)}
		bounce, err := fscrypt.EncryptPagecacheBlocks(t, &folio, BlockSize, 0)
		if err != nil {
			return err
		}
		defer fscrypt.FreeBouncePage(t, bounce)
		src = bounce
	}
	addr, ok := in.data[idx]
	if !ok {
		var b []byte
		addr, b = fs.sb.Dev.Alloc()
		in.data[idx] = addr
		copy(b, src)
		return nil
	}
	copy(fs.sb.Dev.Block(addr), src)
	return nil
}

// read reads from a regular file at *pos.
func (fs *FS) read(t *kernel.Task, inode *vfs.Inode, buf []byte, pos *int64) (int, error) {
	defer t.Trace("ext4_file_read_iter")()
	if err := needKey(inode); err != nil {
		return 0, err
	}
	in := infoOf(inode)
	in.mu.Lock()
	defer in.mu.Unlock()
	size := inode.Size()
	if *pos >= size || len(buf) == 0 {
		return 0, nil
	}
	n := int(min(int64(len(buf)), size-*pos))
	var page [BlockSize]byte
	done := 0
	for done < n {
		p := *pos + int64(done)
		idx, off := uint64(p/BlockSize), int(p%BlockSize)
		if err := fs.readPage(t, inode, in, idx, page[:]); err != nil {
			return done, err
		}
		done += copy(buf[done:n], page[off:])
	}
	*pos += int64(n)
	return n, nil
}

// write writes buf at *pos (at the end with appendMode).
func (fs *FS) write(t *kernel.Task, inode *vfs.Inode, buf []byte, pos *int64, appendMode bool) (int, error) {
	defer t.Trace("ext4_file_write_iter")()
	if len(buf) == 0 {
		return 0, nil
	}
	if err := needKey(inode); err != nil {
		return 0, err
	}
	in := infoOf(inode)
	in.mu.Lock()
	defer in.mu.Unlock()
	if appendMode {
		*pos = inode.Size()
	}
	maxBytes := inode.SB().MaxBytes()
	if *pos >= maxBytes {
		return 0, errno.EFBIG
	}
	n := int(min(int64(len(buf)), maxBytes-*pos))
	var page [BlockSize]byte
	done := 0
	for done < n {
		p := *pos + int64(done)
		idx, off := uint64(p/BlockSize), int(p%BlockSize)
		c := min(n-done, BlockSize-off)
		if c < BlockSize {
			if err := fs.readPage(t, inode, in, idx, page[:]); err != nil {
				return done, err
			}
		}
		copy(page[off:], buf[done:done+c])
		if err := fs.writePage(t, inode, in, idx, page[:]); err != nil {
			return done, err
		}
		done += c
		if end := p + int64(c); end > inode.Size() {
			inode.SetSize(end)
		}
	}
	*pos += int64(n)
	return n, nil
}

// truncate is ext4_truncate: the blocks past the new size go back to the
// device and the tail of the last page is zeroed (re-encrypted).
func (fs *FS) truncate(t *kernel.Task, inode *vfs.Inode, size int64) error {
	if err := needKey(inode); err != nil {
		return err
	}
	in := infoOf(inode)
	in.mu.Lock()
	defer in.mu.Unlock()
	npages := uint64((size + BlockSize - 1) / BlockSize)
	for idx, addr := range in.data {
		if idx >= npages {
			fs.sb.Dev.Free(addr)
			delete(in.data, idx)
		}
	}
	if off := int(size % BlockSize); off != 0 {
		if _, ok := in.data[npages-1]; ok {
			var page [BlockSize]byte
			if err := fs.readPage(t, inode, in, npages-1, page[:]); err != nil {
				return err
			}
			clear(page[off:])
			if err := fs.writePage(t, inode, in, npages-1, page[:]); err != nil {
				return err
			}
		}
	}
	inode.SetSize(size)
	return nil
}

// RawBlocks returns copies of a regular file's stored blocks by page index
// (ciphertext for an encrypted file; nil for holes).
func RawBlocks(inode *vfs.Inode) [][]byte {
	fs := Of(inode.SB())
	in := infoOf(inode)
	in.mu.Lock()
	defer in.mu.Unlock()
	n := uint64(0)
	for idx := range in.data {
		n = max(n, idx+1)
	}
	out := make([][]byte, n)
	for idx, addr := range in.data {
		out[idx] = append([]byte(nil), fs.sb.Dev.Block(addr)...)
	}
	return out
}
