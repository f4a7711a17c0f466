package conformance_test

// A reference model of the namespace for the syscall conformance test: a
// tree of nodes (files with contents, directories with ordered entries,
// symlinks with targets), the process's descriptors, and each syscall's
// result written from the Linux man pages and the order in which fs/namei.c
// checks things, independently of package vfs's code. In a casefolded
// tree two names are the same entry when their casefolded forms are equal
// (key); the entry keeps the name it was created with.

import (
	"sort"
	"strings"
	"syscall"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/vfs"
)

type mNode struct {
	// key is the identity of a name in the directory (model.key).
	key    func(string) string
	ino    uint64
	mode   uint32 // S_IFMT | permission bits
	data   []byte // regular file
	target string // symlink
	links  int    // names pointing at a file or symlink
	// directory
	entries    []*mEntry // by position
	nextCookie int64
	parent     *mNode
	dead       bool
	// pipe is a FIFO's contents, xattrs the node's extended attributes
	// (special_model_test.go).
	pipe   []byte
	xattrs map[string][]byte
}

type mEntry struct {
	name   string
	node   *mNode
	cookie int64
}

func (n *mNode) isDir() bool { return n.mode&vfs.S_IFMT == vfs.S_IFDIR }
func (n *mNode) isLnk() bool { return n.mode&vfs.S_IFMT == vfs.S_IFLNK }
func (n *mNode) isReg() bool { return n.mode&vfs.S_IFMT == vfs.S_IFREG }

func (n *mNode) find(name string) *mEntry {
	k := n.key(name)
	for _, e := range n.entries {
		if n.key(e.name) == k {
			return e
		}
	}
	return nil
}

func (n *mNode) child(name string) *mNode {
	if e := n.find(name); e != nil {
		return e.node
	}
	return nil
}

func (n *mNode) add(name string, c *mNode) {
	n.entries = append(n.entries, &mEntry{name: name, node: c, cookie: n.nextCookie})
	n.nextCookie++
	if c.isDir() {
		c.parent = n
	}
}

func (n *mNode) remove(name string) {
	k := n.key(name)
	for i, e := range n.entries {
		if n.key(e.name) == k {
			n.entries = append(n.entries[:i], n.entries[i+1:]...)
			return
		}
	}
}

func (n *mNode) nlink() uint32 {
	if !n.isDir() {
		return uint32(n.links)
	}
	if n.dead {
		return 0
	}
	k := 2
	for _, e := range n.entries {
		if e.node.isDir() {
			k++
		}
	}
	return uint32(k)
}

func (n *mNode) size() int64 {
	switch {
	case n.isDir():
		return int64(len(n.entries)) * 20
	case n.isLnk():
		return int64(len(n.target))
	}
	return int64(len(n.data))
}

type mFile struct {
	node  *mNode
	pos   int64
	flags int
}

type model struct {
	root    *mNode
	fds     []*mFile
	nextIno uint64
	key     func(string) string
	// rootDotdot, when set, is the inode number getdents gives ".." in
	// the root: a process chrooted into a directory lists the directory's
	// real parent there, though ".." in a path stays at the root.
	rootDotdot uint64
}

// newModel returns an empty namespace whose names are the same when key
// gives the same string (nil: when they are equal).
func newModel(key func(string) string) *model {
	if key == nil {
		key = func(s string) string { return s }
	}
	m := &model{nextIno: 2, key: key}
	m.root = m.newNode(vfs.S_IFDIR | 0o755)
	m.root.parent = m.root
	return m
}

func (m *model) newNode(mode uint32) *mNode {
	n := &mNode{ino: m.nextIno, mode: mode, key: m.key}
	m.nextIno++
	if n.isDir() {
		n.nextCookie = 2
	}
	return n
}

// path resolution ----------------------------------------------------

const (
	tNorm = iota
	tRoot
	tDot
	tDotdot
)

// parentOf is what a walk of every component but the last gives.
type parentOf struct {
	dir   *mNode
	last  string
	typ   int
	slash bool
}

type walker struct {
	m     *model
	links int
}

func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

// step looks up one component in dir for a walk that continues past it:
// the result must be a directory (symlinks followed).
func (w *walker) stepDir(dir *mNode, c string) (*mNode, error) {
	switch c {
	case ".":
		return dir, nil
	case "..":
		return dir.parent, nil
	}
	if len(c) > vfs.NAME_MAX {
		return nil, errno.ENAMETOOLONG
	}
	n := dir.child(c)
	if n == nil {
		return nil, errno.ENOENT
	}
	if n.isLnk() {
		r, err := w.follow(dir, n.target)
		if err != nil {
			return nil, err
		}
		n = r
	}
	if !n.isDir() {
		return nil, errno.ENOTDIR
	}
	return n, nil
}

// follow resolves a symlink body seen from dir, as a component that more
// components follow: everything, its last component too, is followed.
func (w *walker) follow(dir *mNode, body string) (*mNode, error) {
	if w.links >= vfs.MAXSYMLINKS {
		return nil, errno.ELOOP
	}
	w.links++
	start := dir
	if strings.HasPrefix(body, "/") {
		start = w.m.root
	}
	cur := start
	for _, c := range splitPath(body) {
		n, err := w.stepDir(cur, c)
		if err != nil {
			return nil, err
		}
		cur = n
	}
	return cur, nil
}

// parent walks every component of p but the last.
func (w *walker) parent(p string, from *mNode) (parentOf, error) {
	cur := from
	if strings.HasPrefix(p, "/") {
		cur = w.m.root
	}
	comps := splitPath(p)
	if len(comps) == 0 {
		return parentOf{dir: cur, typ: tRoot}, nil
	}
	for _, c := range comps[:len(comps)-1] {
		n, err := w.stepDir(cur, c)
		if err != nil {
			return parentOf{}, err
		}
		cur = n
	}
	last := comps[len(comps)-1]
	r := parentOf{dir: cur, last: last, typ: tNorm, slash: strings.HasSuffix(p, "/")}
	switch last {
	case ".":
		r.typ = tDot
	case "..":
		r.typ = tDotdot
	}
	return r, nil
}

func (po parentOf) dotNode() *mNode {
	switch po.typ {
	case tDotdot:
		return po.dir.parent
	}
	return po.dir
}

func checkName(p string, emptyOK bool) error {
	if i := strings.IndexByte(p, 0); i >= 0 {
		p = p[:i]
	}
	if len(p) >= vfs.PATH_MAX {
		return errno.ENAMETOOLONG
	}
	if p == "" && !emptyOK {
		return errno.ENOENT
	}
	return nil
}

// lookup resolves p to a node: a trailing slash makes the last component a
// directory whose symlinks are followed; follow follows a trailing symlink.
func (m *model) lookup(p string, follow bool) (*mNode, error) {
	if err := checkName(p, false); err != nil {
		return nil, err
	}
	w := &walker{m: m}
	return w.lookupFrom(p, m.root, follow, false)
}

func (w *walker) lookupFrom(p string, from *mNode, follow, mustDir bool) (*mNode, error) {
	for {
		po, err := w.parent(p, from)
		if err != nil {
			return nil, err
		}
		if po.typ != tNorm {
			return po.dotNode(), nil
		}
		if po.slash {
			follow, mustDir = true, true
		}
		if len(po.last) > vfs.NAME_MAX {
			return nil, errno.ENAMETOOLONG
		}
		n := po.dir.child(po.last)
		if n == nil {
			return nil, errno.ENOENT
		}
		if n.isLnk() && follow {
			if w.links >= vfs.MAXSYMLINKS {
				return nil, errno.ELOOP
			}
			w.links++
			p, from = n.target, po.dir
			continue
		}
		if mustDir && !n.isDir() {
			return nil, errno.ENOTDIR
		}
		return n, nil
	}
}

// syscalls -------------------------------------------------------------

func (m *model) fd(fd int) (*mFile, error) {
	if fd < 0 || fd >= len(m.fds) || m.fds[fd] == nil {
		return nil, errno.EBADF
	}
	return m.fds[fd], nil
}

func (m *model) install(f *mFile) int {
	for i, g := range m.fds {
		if g == nil {
			m.fds[i] = f
			return i
		}
	}
	m.fds = append(m.fds, f)
	return len(m.fds) - 1
}

func (m *model) open(p string, flags int, mode uint32) (int, error) {
	if flags&(vfs.O_DIRECTORY|vfs.O_CREAT) == vfs.O_DIRECTORY|vfs.O_CREAT {
		return -1, errno.EINVAL
	}
	if err := checkName(p, false); err != nil {
		return -1, err
	}
	creat := flags&vfs.O_CREAT != 0
	excl := creat && flags&vfs.O_EXCL != 0
	follow := flags&vfs.O_NOFOLLOW == 0 && !excl
	mustDir := flags&vfs.O_DIRECTORY != 0
	w := &walker{m: m}
	from := m.root
	var node *mNode
	created := false
	for {
		po, err := w.parent(p, from)
		if err != nil {
			return -1, err
		}
		if po.typ != tNorm {
			node = po.dotNode()
			break
		}
		if !creat {
			if po.slash {
				follow, mustDir = true, true
			}
		} else if po.slash {
			return -1, errno.EISDIR
		}
		if len(po.last) > vfs.NAME_MAX {
			return -1, errno.ENAMETOOLONG
		}
		n := po.dir.child(po.last)
		if n == nil {
			if !creat {
				return -1, errno.ENOENT
			}
			n = m.newNode(mode&0o7777 | vfs.S_IFREG)
			n.links = 1
			po.dir.add(po.last, n)
			created = true
		}
		if n.isLnk() && follow {
			if w.links >= vfs.MAXSYMLINKS {
				return -1, errno.ELOOP
			}
			w.links++
			p, from = n.target, po.dir
			continue
		}
		node = n
		break
	}
	if creat {
		if excl && !created {
			return -1, errno.EEXIST
		}
		if node.isDir() {
			return -1, errno.EISDIR
		}
	}
	if mustDir && !node.isDir() {
		return -1, errno.ENOTDIR
	}
	acc := [4]int{4, 2, 6, 6}[flags&vfs.O_ACCMODE]
	if flags&vfs.O_TRUNC != 0 {
		acc |= 2
	}
	trunc := false
	if created {
		acc = 0
	} else if node.isReg() && flags&vfs.O_TRUNC != 0 {
		trunc = true
	}
	switch {
	case node.isLnk():
		return -1, errno.ELOOP
	case node.isDir() && acc&2 != 0:
		return -1, errno.EISDIR
	case node.isFifo() && flags&vfs.O_ACCMODE == 3:
		return -1, errno.EINVAL // fifo_open: neither FMODE_READ nor FMODE_WRITE
	}
	if trunc {
		node.data = nil
	}
	return m.install(&mFile{node: node, flags: flags &^ (vfs.O_CREAT | vfs.O_EXCL | vfs.O_TRUNC)}), nil
}

func (m *model) close(fd int) error {
	f, err := m.fd(fd)
	if err != nil {
		return err
	}
	m.fds[fd] = nil
	for len(m.fds) > 0 && m.fds[len(m.fds)-1] == nil {
		m.fds = m.fds[:len(m.fds)-1]
	}
	if f.node.isFifo() {
		m.fifoClosed(f.node)
	}
	return nil
}

func canRead(f *mFile) bool  { return (f.flags&vfs.O_ACCMODE+1)&1 != 0 }
func canWrite(f *mFile) bool { return (f.flags&vfs.O_ACCMODE+1)&2 != 0 }

func (m *model) readAt(f *mFile, n int, pos int64) ([]byte, error) {
	if !canRead(f) {
		return nil, errno.EBADF
	}
	if pos < 0 {
		return nil, errno.EINVAL
	}
	if f.node.isDir() {
		return nil, errno.EISDIR
	}
	if f.node.isFifo() {
		return fifoRead(f, n), nil
	}
	d := f.node.data
	if pos >= int64(len(d)) {
		return []byte{}, nil
	}
	end := min(int64(len(d)), pos+int64(n))
	return append([]byte{}, d[pos:end]...), nil
}

func (m *model) read(fd, n int) ([]byte, error) {
	f, err := m.fd(fd)
	if err != nil {
		return nil, err
	}
	b, err := m.readAt(f, n, f.pos)
	if err == nil {
		f.pos += int64(len(b))
	}
	return b, err
}

func (m *model) pread(fd, n int, off int64) ([]byte, error) {
	if off < 0 {
		return nil, errno.EINVAL
	}
	f, err := m.fd(fd)
	if err != nil {
		return nil, err
	}
	if f.node.isFifo() {
		return nil, errno.ESPIPE
	}
	return m.readAt(f, n, off)
}

func (m *model) writeAt(f *mFile, b []byte, pos *int64) (int, error) {
	if !canWrite(f) {
		return 0, errno.EBADF
	}
	if *pos < 0 {
		return 0, errno.EINVAL
	}
	if len(b) == 0 {
		return 0, nil
	}
	if f.node.isFifo() {
		f.node.pipe = append(f.node.pipe, b...)
		return len(b), nil
	}
	if f.flags&vfs.O_APPEND != 0 {
		*pos = int64(len(f.node.data))
	}
	end := *pos + int64(len(b))
	for int64(len(f.node.data)) < end {
		f.node.data = append(f.node.data, 0)
	}
	copy(f.node.data[*pos:], b)
	*pos = end
	return len(b), nil
}

func (m *model) write(fd int, b []byte) (int, error) {
	f, err := m.fd(fd)
	if err != nil {
		return 0, err
	}
	return m.writeAt(f, b, &f.pos)
}

func (m *model) pwrite(fd int, b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errno.EINVAL
	}
	f, err := m.fd(fd)
	if err != nil {
		return 0, err
	}
	if f.node.isFifo() {
		return 0, errno.ESPIPE
	}
	return m.writeAt(f, b, &off)
}

func (m *model) lseek(fd int, off int64, whence int) (int64, error) {
	f, err := m.fd(fd)
	if err != nil {
		return 0, err
	}
	if whence < 0 || whence > vfs.SEEK_HOLE {
		return 0, errno.EINVAL
	}
	if f.node.isFifo() {
		return 0, errno.ESPIPE
	}
	if f.node.isDir() {
		switch whence {
		case vfs.SEEK_CUR:
			off += f.pos
		case vfs.SEEK_SET:
		default:
			return 0, errno.EINVAL
		}
		if off < 0 {
			return 0, errno.EINVAL
		}
		f.pos = off
		return off, nil
	}
	size := int64(len(f.node.data))
	switch whence {
	case vfs.SEEK_END:
		off += size
	case vfs.SEEK_CUR:
		off += f.pos
	case vfs.SEEK_DATA, vfs.SEEK_HOLE:
		if off < 0 || off >= size {
			return 0, syscall.Errno(6) // ENXIO
		}
		if whence == vfs.SEEK_HOLE {
			off = size
		}
	}
	if off < 0 {
		return 0, errno.EINVAL
	}
	f.pos = off
	return off, nil
}

type mStat struct {
	Ino   uint64
	Mode  uint32
	Nlink uint32
	Size  int64
}

func statOf(n *mNode) mStat {
	return mStat{Ino: n.ino, Mode: n.mode, Nlink: n.nlink(), Size: n.size()}
}

func (m *model) stat(p string, follow bool) (mStat, error) {
	n, err := m.lookup(p, follow)
	if err != nil {
		return mStat{}, err
	}
	return statOf(n), nil
}

// create is filename_create: the parent and the (absent) last component.
func (m *model) create(p string, wantDir bool) (parentOf, error) {
	if err := checkName(p, false); err != nil {
		return parentOf{}, err
	}
	w := &walker{m: m}
	po, err := w.parent(p, m.root)
	if err != nil {
		return po, err
	}
	if po.typ != tNorm {
		return po, errno.EEXIST
	}
	if len(po.last) > vfs.NAME_MAX {
		return po, errno.ENAMETOOLONG
	}
	if po.dir.child(po.last) != nil {
		return po, errno.EEXIST
	}
	if po.slash && !wantDir {
		return po, errno.ENOENT
	}
	return po, nil
}

func (m *model) mkdir(p string, mode uint32) error {
	po, err := m.create(p, true)
	if err != nil {
		return err
	}
	po.dir.add(po.last, m.newNode(mode&0o1777|vfs.S_IFDIR))
	return nil
}

func (m *model) symlink(target, p string) error {
	if err := checkName(target, false); err != nil {
		return err
	}
	po, err := m.create(p, false)
	if err != nil {
		return err
	}
	n := m.newNode(vfs.S_IFLNK | 0o777)
	n.target = target
	n.links = 1
	po.dir.add(po.last, n)
	return nil
}

func (m *model) link(oldp, newp string) error {
	old, err := m.lookup(oldp, false)
	if err != nil {
		return err
	}
	po, err := m.create(newp, false)
	if err != nil {
		return err
	}
	if old.isDir() {
		return errno.EPERM
	}
	old.links++
	po.dir.add(po.last, old)
	return nil
}

func (m *model) readlink(p string, n int) (string, error) {
	if n <= 0 {
		return "", errno.EINVAL
	}
	node, err := m.lookup(p, false)
	if err != nil {
		return "", err
	}
	if !node.isLnk() {
		return "", errno.EINVAL
	}
	s := node.target
	if len(s) > n {
		s = s[:n]
	}
	return s, nil
}

// parentForDelete walks to the parent of p for unlink/rmdir/rename.
func (m *model) parentForDelete(p string) (parentOf, error) {
	if err := checkName(p, false); err != nil {
		return parentOf{}, err
	}
	w := &walker{m: m}
	return w.parent(p, m.root)
}

func (m *model) unlink(p string) error {
	po, err := m.parentForDelete(p)
	if err != nil {
		return err
	}
	if po.typ != tNorm {
		return errno.EISDIR
	}
	if len(po.last) > vfs.NAME_MAX {
		return errno.ENAMETOOLONG
	}
	n := po.dir.child(po.last)
	switch {
	case n == nil:
		return errno.ENOENT
	case n.isDir():
		return errno.EISDIR
	case po.slash:
		return errno.ENOTDIR
	}
	po.dir.remove(po.last)
	n.links--
	return nil
}

func (m *model) rmdir(p string) error {
	po, err := m.parentForDelete(p)
	if err != nil {
		return err
	}
	switch po.typ {
	case tDotdot:
		return errno.ENOTEMPTY
	case tDot:
		return errno.EINVAL
	case tRoot:
		return errno.EBUSY
	}
	if len(po.last) > vfs.NAME_MAX {
		return errno.ENAMETOOLONG
	}
	n := po.dir.child(po.last)
	switch {
	case n == nil:
		return errno.ENOENT
	case !n.isDir():
		return errno.ENOTDIR
	case len(n.entries) != 0:
		return errno.ENOTEMPTY
	}
	po.dir.remove(po.last)
	n.dead = true
	return nil
}

// ancestorChild returns, if a is a proper ancestor of b, a's child on the
// way to b; nil otherwise.
func ancestorChild(a, b *mNode) *mNode {
	for p := b; p.parent != p; p = p.parent {
		if p.parent == a {
			return p
		}
	}
	return nil
}

func (m *model) rename(oldp, newp string, flags uint32) error {
	if flags&^(vfs.RENAME_NOREPLACE|vfs.RENAME_EXCHANGE|vfs.RENAME_WHITEOUT) != 0 {
		return errno.EINVAL
	}
	if flags&(vfs.RENAME_NOREPLACE|vfs.RENAME_WHITEOUT) != 0 && flags&vfs.RENAME_EXCHANGE != 0 {
		return errno.EINVAL
	}
	op, err := m.parentForDelete(oldp)
	if err != nil {
		return err
	}
	np, err := m.parentForDelete(newp)
	if err != nil {
		return err
	}
	if op.typ != tNorm {
		return errno.EBUSY
	}
	if np.typ != tNorm {
		if flags&vfs.RENAME_NOREPLACE != 0 {
			return errno.EEXIST
		}
		return errno.EBUSY
	}
	if len(op.last) > vfs.NAME_MAX {
		return errno.ENAMETOOLONG
	}
	src := op.dir.child(op.last)
	if src == nil {
		return errno.ENOENT
	}
	if len(np.last) > vfs.NAME_MAX {
		return errno.ENAMETOOLONG
	}
	dst := np.dir.child(np.last)
	exchange := flags&vfs.RENAME_EXCHANGE != 0
	if flags&vfs.RENAME_NOREPLACE != 0 && dst != nil {
		return errno.EEXIST
	}
	if exchange {
		if dst == nil {
			return errno.ENOENT
		}
		if !dst.isDir() && np.slash {
			return errno.ENOTDIR
		}
	}
	if !src.isDir() {
		if op.slash || (!exchange && np.slash) {
			return errno.ENOTDIR
		}
	}
	var trap *mNode
	if op.dir != np.dir {
		if trap = ancestorChild(op.dir, np.dir); trap == nil {
			trap = ancestorChild(np.dir, op.dir)
		}
	}
	if trap != nil && src == trap {
		return errno.EINVAL
	}
	if trap != nil && dst == trap {
		if exchange {
			return errno.EINVAL
		}
		return errno.ENOTEMPTY
	}
	if src == dst {
		return nil
	}
	if dst != nil && !exchange {
		if src.isDir() && !dst.isDir() {
			return errno.ENOTDIR
		}
		if !src.isDir() && dst.isDir() {
			return errno.EISDIR
		}
	}
	// memfs
	if flags&vfs.RENAME_WHITEOUT != 0 {
		return errno.EINVAL
	}
	if exchange {
		oe, ne := op.dir.find(op.last), np.dir.find(np.last)
		oe.node, ne.node = dst, src
		if dst.isDir() {
			dst.parent = op.dir
		}
		if src.isDir() {
			src.parent = np.dir
		}
		return nil
	}
	if dst != nil && dst.isDir() && len(dst.entries) != 0 {
		return errno.ENOTEMPTY
	}
	name := np.last
	if dst != nil {
		// The target's entry keeps its name: the filesystems rewrite the
		// inode number of the existing dirent (ext4_setent,
		// f2fs_set_link), which in a casefolded directory may be spelt
		// otherwise than the rename's new name.
		name = np.dir.find(np.last).name
		np.dir.remove(np.last)
		if dst.isDir() {
			dst.dead = true
		} else {
			dst.links--
		}
	}
	op.dir.remove(op.last)
	np.dir.add(name, src)
	return nil
}

type mDirent struct {
	Name string
	Ino  uint64
	Off  int64
	Type uint8
}

func (m *model) getdents(fd, bufSize int) ([]mDirent, int, error) {
	f, err := m.fd(fd)
	if err != nil {
		return nil, 0, err
	}
	d := f.node
	if !d.isDir() {
		return nil, 0, errno.ENOTDIR
	}
	if d.dead {
		return nil, 0, errno.ENOENT
	}
	type item struct {
		pos  int64
		name string
		n    *mNode
	}
	var items []item
	if f.pos <= 0 {
		items = append(items, item{0, ".", d})
	}
	if f.pos <= 1 {
		items = append(items, item{1, "..", d.parent})
	}
	dotdotIno := func(it item) uint64 {
		if it.name == ".." && d == m.root && m.rootDotdot != 0 {
			return m.rootDotdot
		}
		return it.n.ino
	}
	ents := append([]*mEntry(nil), d.entries...)
	sort.Slice(ents, func(i, j int) bool { return ents[i].cookie < ents[j].cookie })
	for _, e := range ents {
		if e.cookie >= f.pos {
			items = append(items, item{e.cookie, e.name, e.node})
		}
	}
	var out []mDirent
	used := 0
	for _, it := range items {
		rl := vfs.DirentReclen(len(it.name))
		if rl > bufSize-used {
			if len(out) == 0 {
				return nil, 0, errno.EINVAL
			}
			break
		}
		used += rl
		out = append(out, mDirent{Name: it.name, Ino: dotdotIno(it), Off: it.pos + 1, Type: vfs.DtType(it.n.mode)})
		f.pos = it.pos + 1
	}
	return out, used, nil
}

// tree dumps the namespace as path -> description, for the comparison
// with the real one.
func (m *model) tree() map[string]mStat {
	out := map[string]mStat{}
	var rec func(n *mNode, p string)
	rec = func(n *mNode, p string) {
		out[p] = statOf(n)
		if n.isDir() {
			for _, e := range n.entries {
				rec(e.node, strings.TrimSuffix(p, "/")+"/"+e.name)
			}
		}
	}
	rec(m.root, "/")
	return out
}
