package conformance_test

// The model's FIFOs and extended attributes, from mknod(2), fifo(7),
// pipe(7) and xattr(7) and the order fs/namei.c, fs/pipe.c and
// fs/xattr.c check things in, for a caller with root's credentials: a
// FIFO's contents are its pipe's (shared by its descriptors, gone with the
// last), it cannot be seeked, pread or pwritten; an open for reading or
// writing only would wait for the other end and is not drawn. Attributes
// are a node's (hard links share them) in the user., trusted. and
// security. namespaces, user. only on regular files and directories.

import (
	"sort"
	"strings"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/vfs"
)

func (n *mNode) isFifo() bool { return n.mode&vfs.S_IFMT == vfs.S_IFIFO }

// pipeCapacity is the pipe's 16 pages.
const pipeCapacity = 16 * 4096

// mknod is mknod(2): may_mknod's type check first, then filename_create;
// S_IFREG (or no type) is a regular file, S_IFIFO a FIFO.
func (m *model) mknod(p string, mode uint32) error {
	switch mode & vfs.S_IFMT {
	case 0, vfs.S_IFREG, vfs.S_IFIFO:
	case vfs.S_IFDIR:
		return errno.EPERM
	default:
		return errno.EINVAL
	}
	po, err := m.create(p, false)
	if err != nil {
		return err
	}
	typ := mode & vfs.S_IFMT
	if typ == 0 {
		typ = vfs.S_IFREG
	}
	n := m.newNode(typ | mode&0o7777)
	n.links = 1
	po.dir.add(po.last, n)
	return nil
}

// fifoOpenWaits reports that open(p, flags) would reach a FIFO for
// reading or writing only, which waits for the other end.
func (m *model) fifoOpenWaits(p string, flags int) bool {
	excl := flags&vfs.O_CREAT != 0 && flags&vfs.O_EXCL != 0
	n, err := m.lookup(p, flags&vfs.O_NOFOLLOW == 0 && !excl)
	if err != nil || !n.isFifo() || excl || flags&vfs.O_DIRECTORY != 0 {
		return false
	}
	acc := flags & vfs.O_ACCMODE
	return acc == vfs.O_RDONLY || acc == vfs.O_WRONLY
}

// fifoWaits reports that a read of n bytes or a write of b on fd would
// wait: an empty pipe with a writer, a pipe without the room.
func (m *model) fifoWaits(fd int, n int, b []byte, write bool) bool {
	f, err := m.fd(fd)
	if err != nil || !f.node.isFifo() {
		return false
	}
	if write {
		return canWrite(f) && len(f.node.pipe)+len(b) > pipeCapacity
	}
	return canRead(f) && n > 0 && len(f.node.pipe) == 0 && m.fifoWriters(f.node) > 0
}

// fifoWriters counts the descriptors open for writing on a FIFO.
func (m *model) fifoWriters(n *mNode) int {
	k := 0
	for _, f := range m.fds {
		if f != nil && f.node == n && canWrite(f) {
			k++
		}
	}
	return k
}

// fifoRead is pipe_read: what the pipe holds, up to n bytes.
func fifoRead(f *mFile, n int) []byte {
	k := min(n, len(f.node.pipe))
	out := append([]byte{}, f.node.pipe[:k]...)
	f.node.pipe = f.node.pipe[k:]
	return out
}

// fifoClosed is put_pipe_info: the last descriptor frees the pipe.
func (m *model) fifoClosed(n *mNode) {
	for _, f := range m.fds {
		if f != nil && f.node == n {
			return
		}
	}
	n.pipe = nil
}

// checkXattrName is the strncpy_from_user of the xattr syscalls.
func checkXattrName(name string) error {
	if name == "" || len(name) > vfs.XATTR_NAME_MAX {
		return errno.ERANGE
	}
	return nil
}

// xattrRules are xattr_permission for root and xattr_resolve_name: the
// namespaces the three filesystems share.
func xattrRules(n *mNode, name string, write bool) error {
	if strings.HasPrefix(name, "user.") && !n.isReg() && !n.isDir() {
		if write {
			return errno.EPERM
		}
		return errno.ENODATA
	}
	for _, p := range []string{"user.", "trusted.", "security."} {
		if name == p {
			return errno.EINVAL
		}
		if strings.HasPrefix(name, p) {
			return nil
		}
	}
	return errno.EOPNOTSUPP
}

func (m *model) setxattr(p, name string, value []byte, flags int, follow bool) error {
	if flags&^(vfs.XATTR_CREATE|vfs.XATTR_REPLACE) != 0 {
		return errno.EINVAL
	}
	if err := checkXattrName(name); err != nil {
		return err
	}
	n, err := m.lookup(p, follow)
	if err != nil {
		return err
	}
	if err := xattrRules(n, name, true); err != nil {
		return err
	}
	_, ok := n.xattrs[name]
	switch {
	case ok && flags&vfs.XATTR_CREATE != 0:
		return errno.EEXIST
	case !ok && flags&vfs.XATTR_REPLACE != 0:
		return errno.ENODATA
	}
	if n.xattrs == nil {
		n.xattrs = map[string][]byte{}
	}
	n.xattrs[name] = append([]byte{}, value...)
	return nil
}

// getxattr is path_getxattr: the walk first, then the name.
func (m *model) getxattr(p, name string, size int, follow bool) ([]byte, int, error) {
	n, err := m.lookup(p, follow)
	if err != nil {
		return nil, 0, err
	}
	if err := checkXattrName(name); err != nil {
		return nil, 0, err
	}
	if err := xattrRules(n, name, false); err != nil {
		return nil, 0, err
	}
	v, ok := n.xattrs[name]
	if !ok {
		return nil, 0, errno.ENODATA
	}
	if size == 0 {
		return nil, len(v), nil
	}
	if len(v) > size {
		return nil, 0, errno.ERANGE
	}
	return v, len(v), nil
}

func (m *model) removexattr(p, name string, follow bool) error {
	if err := checkXattrName(name); err != nil {
		return err
	}
	n, err := m.lookup(p, follow)
	if err != nil {
		return err
	}
	if err := xattrRules(n, name, true); err != nil {
		return err
	}
	if _, ok := n.xattrs[name]; !ok {
		return errno.ENODATA
	}
	delete(n.xattrs, name)
	return nil
}

// listxattr gives the names in order (each filesystem lists them in its
// own: the test compares sets).
func (m *model) listxattr(p string, follow bool) ([]string, error) {
	n, err := m.lookup(p, follow)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for k := range n.xattrs {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}
