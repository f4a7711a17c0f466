package f2fs

import (
	"bytes"
	"encoding/binary"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/libfs"
	"github.com/vfslab/vfslab/vfs"
)

// Extended attributes (fs/f2fs/xattr.c, xattr.h): one list of entries
// (struct f2fs_xattr_entry: index, name length, value size, name, value,
// padded to 4 bytes) after a 24-byte header, that starts in the inode's
// inline xattr area (the last i_inline_xattr_size words of i_addr) and
// goes on in the xattr node (i_xattr_nid: VALID_XATTR_BLOCK_SIZE bytes,
// the node block without its footer). read_all_xattrs joins the two into
// one buffer, __f2fs_setxattr edits it (a changed entry is removed and
// added again at the end; no room is E2BIG), write_all_xattrs splits it
// again, with an xattr node only when the entries pass the inline area.
// The model keeps the joined buffer (xattrState); the checkpoint writes
// the two parts (buildNodes). Name indexes are ext4's; the encryption
// context is index 9, "c", with no handler.

// Name indexes (F2FS_XATTR_INDEX_*).
const (
	XattrIndexUser            = 1
	XattrIndexPosixACLAccess  = 2
	XattrIndexPosixACLDefault = 3
	XattrIndexTrusted         = 4
	XattrIndexSecurity        = 6
	XattrIndexAdvise          = 7
)

// fadviseModifiableBit is FADVISE_MODIFIABLE_BITS: the i_advise bits
// system.advise may change.
const fadviseModifiableBit = FadviseColdBit | FadviseHotBit

// xattrPaddingSize is XATTR_PADDING_SIZE.
const xattrPaddingSize = 4

// xattrState is an inode's xattrs: the buffer read_all_xattrs builds
// (inline_xattr_size bytes, then VALID_XATTR_BLOCK_SIZE, then the padding
// word; nil until the inode has any), whether the inode has an xattr node
// (i_xattr_nid, numbered when the checkpoint writes it), and the i_advise
// bits system.advise set.
type xattrState struct {
	buf    []byte
	node   bool
	advise uint8
}

// inlineXattrAddrs is get_inline_xattr_addrs: the words of i_addr the
// inline xattrs take (the inode's on an image, a new inode's layout
// otherwise).
func (fi *Inode) inlineXattrAddrs() int {
	if fi.onDisk {
		return fi.xattrAddrs
	}
	if fi.IsDir() {
		return fi.Geo.InlineXattrAddrs
	}
	return DefaultInlineXattrAddrs
}

// inlineXattrSize is inline_xattr_size.
func (fi *Inode) inlineXattrSize() int { return 4 * fi.inlineXattrAddrs() }

// xattrSize is XATTR_SIZE: the inline area, and the node's part when the
// inode has one.
func (fi *Inode) xattrSize() int {
	n := fi.inlineXattrSize()
	if fi.xattr.node {
		n += validXattrBlockSize
	}
	return n
}

// minOffset is MIN_OFFSET: where the entries must end.
func (fi *Inode) minOffset() int { return (fi.inlineXattrSize() + validXattrBlockSize + 3) &^ 3 }

// maxValueLen is MAX_VALUE_LEN.
func (fi *Inode) maxValueLen() int { return fi.minOffset() - xattrHeaderSize - 4 }

// readAllXattrs is read_all_xattrs: the joined buffer, with the header's
// magic and refcount set when the inode never had an xattr.
func (fi *Inode) readAllXattrs() []byte {
	x := &fi.xattr
	if x.buf == nil {
		x.buf = make([]byte, fi.inlineXattrSize()+validXattrBlockSize+xattrPaddingSize)
	}
	if binary.LittleEndian.Uint32(x.buf) != XattrMagic {
		binary.LittleEndian.PutUint32(x.buf, XattrMagic)
		binary.LittleEndian.PutUint32(x.buf[4:], 1)
	}
	return x.buf
}

// xattrEntryLen is ENTRY_SIZE of the entry at off.
func xattrEntryLen(b []byte, off int) int {
	return xattrEntrySize(int(b[off+1]), int(binary.LittleEndian.Uint16(b[off+2:])))
}

// isXattrLastEntry is IS_XATTR_LAST_ENTRY.
func isXattrLastEntry(b []byte, off int) bool { return binary.LittleEndian.Uint32(b[off:]) == 0 }

// findXattr is __find_xattr: the entry (index, name) from start, or the
// last entry (the zero word) when there is none; ok is false when an
// entry runs past limit (a corrupt list, or one that goes on past the
// inline area), last then where it stopped.
func findXattr(b []byte, start, limit int, index uint8, name string) (off int, ok bool) {
	for off = start; off+4 <= len(b) && !isXattrLastEntry(b, off); off += xattrEntryLen(b, off) {
		if off+4 > limit || off+xattrEntryLen(b, off) > limit {
			return off, false
		}
		if b[off] == index && int(b[off+1]) == len(name) && string(b[off+4:off+4+len(name)]) == name {
			break
		}
	}
	return off, true
}

// xattrGet is f2fs_getxattr (lookup_all_xattrs): the inline area first,
// then the whole list. Errors: EINVAL, ERANGE (a name over F2FS_NAME_LEN,
// a short buffer), ENODATA (with "lookup inode (%lu) has corrupted
// xattr" logged for a broken list).
func (fi *Inode) xattrGet(t *kernel.Task, index uint8, name string, buf []byte) (int, error) {
	if len(name) > NameLen {
		return 0, errno.ERANGE
	}
	fi.xattrSem.RLock()
	defer fi.xattrSem.RUnlock()
	inline := fi.inlineXattrSize()
	x := &fi.xattr
	if !x.node && inline == 0 || x.buf == nil || binary.LittleEndian.Uint32(x.buf) != XattrMagic {
		return 0, errno.ENODATA
	}
	b := x.buf
	baseSize := fi.xattrSize() + xattrPaddingSize
	start := xattrHeaderSize
	off, found := 0, false
	if inline > 0 {
		o, ok := findXattr(b, start, inline, index, name)
		if ok && !(isXattrLastEntry(b, o) && o+4 > inline) {
			off, found, baseSize = o, true, inline
		} else {
			start = o
		}
	}
	if !found {
		o, ok := findXattr(b, start, fi.xattrSize(), index, name)
		if !ok {
			if t != nil {
				fi.SB.err(t, "lookup inode (%d) has corrupted xattr", fi.Ino())
			}
			return 0, errno.ENODATA
		}
		off = o
	}
	if isXattrLastEntry(b, off) {
		return 0, errno.ENODATA
	}
	size := int(binary.LittleEndian.Uint16(b[off+2:]))
	if len(buf) > 0 {
		if size > len(buf) {
			return 0, errno.ERANGE
		}
		pval := off + 4 + int(b[off+1])
		if baseSize-pval < size {
			return 0, errno.ERANGE
		}
		copy(buf, b[pval:pval+size])
	}
	return size, nil
}

// xattrSet is __f2fs_setxattr: value (nil removes) as (index, name): an
// existing entry is taken out and the rest moved down, the new one added
// at the end, then write_all_xattrs (an xattr node from when the entries
// pass the inline area, dropped when they fit in it again). An unchanged
// value only updates the ctime. Errors: ERANGE (name over F2FS_NAME_LEN),
// E2BIG (value over MAX_VALUE_LEN, or no room), EEXIST, ENODATA,
// EFSCORRUPTED.
func (fi *Inode) xattrSet(t *kernel.Task, index uint8, name string, value []byte, flags int) error {
	if len(name) > NameLen {
		return errno.ERANGE
	}
	if len(value) > fi.maxValueLen() {
		return errno.E2BIG
	}
	fi.xattrSem.Lock()
	defer fi.xattrSem.Unlock()
	x := &fi.xattr
	b := fi.readAllXattrs()
	lastBase := fi.xattrSize()
	here, ok := findXattr(b, xattrHeaderSize, lastBase, index, name)
	if !ok {
		if !x.node {
			// f2fs_recover_xattr_data: a new xattr node, and again.
			x.node = true
			fi.SB.info(t, "recover xattr in inode (%d), error(%d)", fi.Ino(), 0)
			lastBase = fi.xattrSize()
			here, ok = findXattr(b, xattrHeaderSize, lastBase, index, name)
		}
		if !ok {
			fi.SB.err(t, "set inode (%d) has corrupted xattr", fi.Ino())
			return errno.EFSCORRUPTED
		}
	}
	found := !isXattrLastEntry(b, here)
	if found {
		if flags&vfs.XATTR_CREATE != 0 {
			return errno.EEXIST
		}
		nl := int(b[here+1])
		if value != nil && int(binary.LittleEndian.Uint16(b[here+2:])) == len(value) && bytes.Equal(b[here+4+nl:here+4+nl+len(value)], value) {
			vfs.InodeSetCtimeCurrent(t, &fi.Inode)
			return nil
		}
	} else if flags&vfs.XATTR_REPLACE != 0 {
		return errno.ENODATA
	}
	last := here
	for last+4 <= len(b) && !isXattrLastEntry(b, last) {
		if last+4 > lastBase || last+xattrEntryLen(b, last) > lastBase {
			fi.SB.err(t, "inode (%d) has corrupted xattr", fi.Ino())
			return errno.EFSCORRUPTED
		}
		last += xattrEntryLen(b, last)
	}
	newSize := xattrEntrySize(len(name), len(value))
	if value != nil {
		free := fi.minOffset() - last
		if found {
			free += xattrEntryLen(b, here)
		}
		if free < newSize {
			return errno.E2BIG
		}
	}
	if found {
		old := xattrEntryLen(b, here)
		copy(b[here:], b[here+old:last])
		last -= old
		clear(b[last : last+old])
	}
	hsize := last
	if value != nil {
		b[last], b[last+1] = index, byte(len(name))
		binary.LittleEndian.PutUint16(b[last+2:], uint16(len(value)))
		copy(b[last+4:], name)
		copy(b[last+4+len(name):], value)
		hsize += newSize
		binary.LittleEndian.PutUint32(b[last+newSize:], 0)
	}
	// write_all_xattrs.
	if inline := fi.inlineXattrSize(); inline > 0 && hsize <= inline {
		x.node = false // f2fs_truncate_xattr_node
		clear(b[inline:])
	} else {
		x.node = true
	}
	if index == XattrIndexEncryption && name == "c" {
		fi.SetFlags(vfs.S_ENCRYPTED) // f2fs_set_encrypted_inode
	}
	vfs.InodeSetCtimeCurrent(t, &fi.Inode)
	return nil
}

// xattrList is f2fs_listxattr: every entry whose handler lists it for the
// task, with its prefix. A broken list stops the listing (logged). Errors:
// ERANGE.
func (fi *Inode) xattrList(t *kernel.Task, d *vfs.Dentry, buf []byte) (int, error) {
	fi.xattrSem.RLock()
	defer fi.xattrSem.RUnlock()
	b := fi.xattr.buf
	if b == nil || binary.LittleEndian.Uint32(b) != XattrMagic {
		return 0, nil
	}
	lastBase := fi.xattrSize()
	used := 0
	for off := xattrHeaderSize; off+4 <= len(b) && !isXattrLastEntry(b, off); off += xattrEntryLen(b, off) {
		h := xattrHandlerOf(b[off])
		if off+4 > lastBase || off+xattrEntryLen(b, off) > lastBase {
			fi.SB.err(t, "list inode (%d) has corrupted xattr", fi.Ino())
			break
		}
		if !vfs.XattrHandlerCanList(t, h, d) {
			continue
		}
		if err := vfs.XattrListOne(buf, &used, h.XattrPrefix()+string(b[off+4:off+4+int(b[off+1])])); err != nil {
			return 0, err
		}
	}
	return used, nil
}

// loadXattrs is read_all_xattrs for an inode read from an image: the
// inline area of its node block and its xattr node's contents, joined.
func (fi *Inode) loadXattrs(inline, node []byte) {
	if !(len(inline) >= 4 && binary.LittleEndian.Uint32(inline) == XattrMagic) && node == nil {
		return
	}
	b := make([]byte, len(inline)+validXattrBlockSize+xattrPaddingSize)
	copy(b, inline)
	if node != nil {
		copy(b[len(inline):], node)
		fi.xattr.node = true
	}
	fi.xattr.buf = b
}

// loadAdvise is do_read_inode's i_advise: the bits system.advise may
// change, as the inode block has them.
func (fi *Inode) loadAdvise(n Node) { fi.xattr.advise = n.Advise() & fadviseModifiableBit }

var (
	xattrUserHandler = &vfs.XattrHandler{Prefix: vfs.XATTR_USER_PREFIX, Flags: XattrIndexUser,
		List: libfs.XattrListAlways, Get: xattrHandlerGet, Set: xattrHandlerSet}
	xattrTrustedHandler = &vfs.XattrHandler{Prefix: vfs.XATTR_TRUSTED_PREFIX, Flags: XattrIndexTrusted,
		List: libfs.XattrListTrusted, Get: xattrHandlerGet, Set: xattrHandlerSet}
	xattrSecurityHandler = &vfs.XattrHandler{Prefix: vfs.XATTR_SECURITY_PREFIX, Flags: XattrIndexSecurity,
		Get: xattrHandlerGet, Set: xattrHandlerSet}
	xattrAdviseHandler = &vfs.XattrHandler{Name: "system.advise", Flags: XattrIndexAdvise,
		Get: xattrAdviseGet, Set: xattrAdviseSet}
	xattrACLAccessHandler  = libfs.PosixACLHandler(vfs.XATTR_NAME_POSIX_ACL_A, XattrIndexPosixACLAccess)
	xattrACLDefaultHandler = libfs.PosixACLHandler(vfs.XATTR_NAME_POSIX_ACL_D, XattrIndexPosixACLDefault)
)

// xattrHandlers is f2fs_xattr_handlers (user_xattr is the default mount
// option; the model has no nouser_xattr).
var xattrHandlers = []*vfs.XattrHandler{xattrUserHandler, xattrTrustedHandler, xattrSecurityHandler, xattrAdviseHandler}

// xattrHandlerOf is f2fs_xattr_handler_map.
func xattrHandlerOf(index uint8) *vfs.XattrHandler {
	switch index {
	case XattrIndexUser:
		return xattrUserHandler
	case XattrIndexPosixACLAccess:
		return xattrACLAccessHandler
	case XattrIndexPosixACLDefault:
		return xattrACLDefaultHandler
	case XattrIndexTrusted:
		return xattrTrustedHandler
	case XattrIndexSecurity:
		return xattrSecurityHandler
	case XattrIndexAdvise:
		return xattrAdviseHandler
	}
	return nil
}

// xattrHandlerGet is f2fs_xattr_generic_get.
func xattrHandlerGet(t *kernel.Task, h *vfs.XattrHandler, d *vfs.Dentry, inode *vfs.Inode, name string, buf []byte) (int, error) {
	defer t.Trace("f2fs_getxattr")()
	return F2FS_I(inode).xattrGet(t, uint8(h.Flags), name, buf)
}

// xattrHandlerSet is f2fs_xattr_generic_set (f2fs_setxattr). The VFS holds
// the inode's i_rwsem.
func xattrHandlerSet(t *kernel.Task, h *vfs.XattrHandler, d *vfs.Dentry, inode *vfs.Inode, name string, value []byte, flags int) error {
	defer t.Trace("f2fs_setxattr")()
	return F2FS_I(inode).xattrSet(t, uint8(h.Flags), name, value, flags)
}

// iAdvise is i_advise: the encryption bits and what system.advise set.
func (fi *Inode) iAdvise() uint8 {
	var adv uint8
	if fi.onDisk && fi.Node != nil {
		adv = Node(fi.Node).Advise() &^ (FadviseEncryptBit | FadviseEncNameBit | fadviseModifiableBit)
	}
	if fi.IsEncrypted() {
		adv |= FadviseEncryptBit
		if fi.IsDir() {
			adv |= FadviseEncNameBit
		}
	}
	return adv | fi.xattr.advise
}

// xattrAdviseGet is f2fs_xattr_advise_get: the i_advise byte.
func xattrAdviseGet(t *kernel.Task, h *vfs.XattrHandler, d *vfs.Dentry, inode *vfs.Inode, name string, buf []byte) (int, error) {
	if len(buf) > 0 {
		buf[0] = F2FS_I(inode).iAdvise()
	}
	return 1, nil
}

// xattrAdviseSet is f2fs_xattr_advise_set: the owner (or CAP_FOWNER) sets
// the hot and cold bits. Errors: EPERM, EINVAL (removal, other bits).
func xattrAdviseSet(t *kernel.Task, h *vfs.XattrHandler, d *vfs.Dentry, inode *vfs.Inode, name string, value []byte, flags int) error {
	cred := t.CurrentCred()
	if cred.UID != inode.OwnerUID() && !(cred.UID == 0 || cred.CapFowner) {
		return errno.EPERM
	}
	if value == nil {
		return errno.EINVAL
	}
	var v uint8
	if len(value) > 0 {
		v = value[0]
	}
	if v&^fadviseModifiableBit != 0 {
		return errno.EINVAL
	}
	F2FS_I(inode).xattr.advise = v
	vfs.InodeSetCtimeCurrent(t, inode)
	return nil
}

// listxattr is f2fs_listxattr.
func listxattr(t *kernel.Task, d *vfs.Dentry, buf []byte) (int, error) {
	defer t.Trace("f2fs_listxattr")()
	return F2FS_I(d.Inode()).xattrList(t, d, buf)
}

// Listxattr implements vfs.Listxattrer for directories.
func (o *dirOps) Listxattr(t *kernel.Task, d *vfs.Dentry, buf []byte) (int, error) {
	return listxattr(t, d, buf)
}

// inodeXattrs is the inode's xattrs as libfs.XattrStore (f2fs_cryptops'
// get_context and set_context).
type inodeXattrs Inode

// Get implements libfs.XattrStore.
func (x *inodeXattrs) Get(index uint8, name string, buf []byte) (int, error) {
	return (*Inode)(x).xattrGet(nil, index, name, buf)
}

// Set implements libfs.XattrStore.
func (x *inodeXattrs) Set(t *kernel.Task, index uint8, name string, value []byte, flags int) error {
	return (*Inode)(x).xattrSet(t, index, name, value, flags)
}

var _ libfs.XattrStore = (*inodeXattrs)(nil)
