package vfs

import (
	"strings"
	"sync"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// Flags of walk_component and step_into (fs/namei.c).
const (
	walkTrailing = 1 << iota // the last component of the path
	walkMore                 // more components follow
	walkNofollow             // never follow a symlink ("..")
)

// ndPool recycles nameidata: the kernel keeps it on the stack, and here it
// would otherwise be a heap allocation per path walk (its qstr is passed to
// the dentry operations' function values, so it escapes), whose garbage
// collection would weigh on every multi-task benchmark.
var ndPool = sync.Pool{New: func() any { return new(nameidata) }}

// nameidata is struct nameidata (fs/namei.c): the state of one path walk.
//
// In RCU mode (LOOKUP_RCU in flags) the walk holds no reference: it is
// inside an RCU read-side section and path.Dentry is valid only as long as
// its d_seq still reads seq. In ref mode path.Dentry holds a reference.
type nameidata struct {
	t     *kernel.Task
	p     *Proc
	sys   *System
	path  Path
	inode *Inode // path.Dentry's inode
	seq   uint32 // path.Dentry's d_seq (RCU)
	// nextSeq is the d_seq of the dentry the walk is stepping onto.
	nextSeq uint32
	root    Path
	rootSeq uint32
	rootSet bool
	flags   uint32
	// last is the last component seen, with its hash; lastType its kind;
	// lastSlash reports slashes after it (nd->last.name[nd->last.len]).
	last       dcache.Qstr
	lastType   int
	lastSlash  bool
	totalLinks int
	// dfd is the file a relative path starts from (nil: the cwd).
	dfd *File
	// Pad to a multiple of the cache line: the kernel's nameidata is on
	// the task's stack, so two tasks' walks never share a line.
	_ [48]byte
}

func (nd *nameidata) rcu() bool { return nd.flags&LOOKUP_RCU != 0 }

// leaveRCU ends the walk's RCU section (leave_rcu).
func (nd *nameidata) leaveRCU() {
	nd.flags &^= LOOKUP_RCU
	nd.t.RCU.ReadUnlock()
}

// setRoot is set_root: the process's root. In RCU mode it records the
// root's d_seq; in ref mode the root is pinned by the process.
func (nd *nameidata) setRoot() {
	fs := nd.p.fs.Load()
	nd.root = fs.root
	nd.rootSet = true
	if nd.rcu() {
		nd.rootSeq = fs.root.Dentry.Seq().RawBegin()
	}
}

// pathInit is path_init: start the walk at the root for an absolute path,
// at the working directory (or dfd) otherwise.
func (nd *nameidata) pathInit(name string, flags uint32) error {
	nd.flags = flags
	nd.lastType = LAST_ROOT
	nd.last = dcache.Qstr{}
	nd.lastSlash = false
	nd.rootSet = false
	if nd.rcu() {
		nd.t.RCU.ReadLock()
	}
	fs := nd.p.fs.Load()
	if fs == nil {
		if nd.rcu() {
			nd.leaveRCU()
		}
		return errno.ENOENT
	}
	switch {
	case strings.HasPrefix(name, "/"):
		nd.setRoot()
		nd.path = nd.root
		if nd.rcu() {
			nd.seq = nd.rootSeq
		}
	case nd.dfd != nil:
		nd.path = nd.dfd.path
		if !nd.path.Dentry.IsDir() {
			if nd.rcu() {
				nd.leaveRCU()
			}
			nd.path = Path{}
			return errno.ENOTDIR
		}
		if nd.rcu() {
			nd.seq = nd.path.Dentry.Seq().RawBegin()
		}
	default:
		if nd.rcu() {
			nd.path = fs.pwd
			nd.seq = nd.path.Dentry.Seq().RawBegin()
		} else {
			nd.p.fsMu.Lock()
			nd.path = nd.p.fs.Load().pwd
			dcache.Dget(nd.t, nd.path.Dentry)
			nd.p.fsMu.Unlock()
			nd.inode = nd.path.Dentry.Inode()
			return nil
		}
	}
	if nd.rcu() {
		nd.inode = nd.path.Dentry.InodeRCU(nd.t)
	} else {
		dcache.Dget(nd.t, nd.path.Dentry)
		nd.inode = nd.path.Dentry.Inode()
	}
	return nil
}

// terminate is terminate_walk: drop what the walk holds.
func (nd *nameidata) terminate() {
	if nd.rcu() {
		nd.leaveRCU()
	} else if nd.path.Dentry != nil {
		dcache.Dput(nd.t, nd.path.Dentry)
	}
	nd.path = Path{}
}

// legitimize is legitimize_path: take a reference on a dentry found in
// RCU mode and check that it has not changed since seq. It returns false
// (holding nothing) if it was freed or moved.
func (nd *nameidata) legitimize(d *Dentry, seq uint32) bool {
	if !dcache.DgetNotDead(nd.t, d) {
		return false
	}
	if d.Seq().Retry(seq) {
		dcache.Dput(nd.t, d)
		return false
	}
	return true
}

// tryToUnlazy is try_to_unlazy: turn the RCU-walk into a ref-walk at the
// current position. On failure the walk holds nothing and must be
// restarted (ECHILD).
func (nd *nameidata) tryToUnlazy() bool {
	ok := nd.legitimize(nd.path.Dentry, nd.seq)
	if !ok {
		nd.path.Dentry = nil
	}
	nd.leaveRCU()
	if ok {
		nd.t.Inc(EvPathWalkUnlazy)
	}
	return ok
}

// tryToUnlazyNext is try_to_unlazy_next: tryToUnlazy, also legitimizing
// d, the dentry being stepped onto (seq nd.nextSeq). On success both hold
// a reference.
func (nd *nameidata) tryToUnlazyNext(d *Dentry) bool {
	if !nd.legitimize(nd.path.Dentry, nd.seq) {
		nd.path.Dentry = nil
		nd.leaveRCU()
		return false
	}
	if !nd.legitimize(d, nd.nextSeq) {
		nd.leaveRCU()
		return false
	}
	nd.leaveRCU()
	nd.t.Inc(EvPathWalkUnlazy)
	return true
}

// completeWalk is complete_walk: leave RCU mode with a reference on the
// final position.
func (nd *nameidata) completeWalk() error {
	if nd.rcu() {
		if nd.t.Tracing() {
			nd.t.TraceNote("complete_walk: RCU-walk ends, reference taken on %q", nd.path.Dentry.Name().Name)
		}
		if !nd.tryToUnlazy() {
			return ECHILD
		}
	}
	return nil
}

// linkPathWalk is link_path_walk: walk every component but the last,
// following symlinks, and leave the last one in nd.last.
func (nd *nameidata) linkPathWalk(name string) error {
	for len(name) > 0 && name[0] == '/' {
		name = name[1:]
	}
	if name == "" {
		return nil
	}
	var stack []string // the rest of the paths of symlinks being walked
	for {
		if err := nd.mayLookup(); err != nil {
			return err
		}
		comp, rest := name, ""
		if i := strings.IndexByte(name, '/'); i >= 0 {
			comp, rest = name[:i], name[i:]
		}
		nd.lastType = LAST_NORM
		switch comp {
		case ".":
			nd.lastType = LAST_DOT
		case "..":
			nd.lastType = LAST_DOTDOT
		}
		nd.last = dcache.Qstr{Name: comp}
		if nd.lastType == LAST_NORM {
			if err := dcache.DHash(nd.t, nd.path.Dentry, &nd.last); err != nil {
				return err
			}
		}
		slash := rest != ""
		for len(rest) > 0 && rest[0] == '/' {
			rest = rest[1:]
		}
		var link string
		var isLink bool
		var err error
		if rest == "" {
			if len(stack) == 0 {
				nd.lastSlash = slash
				return nil
			}
			// The last component of a nested symlink.
			name = stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			link, isLink, err = nd.walkComponent(0)
		} else {
			name = rest
			link, isLink, err = nd.walkComponent(walkMore)
		}
		if err != nil {
			return err
		}
		if isLink {
			stack = append(stack, name)
			name = link
			continue
		}
		if testHookStep != nil {
			testHookStep(nd)
		}
		if !nd.path.Dentry.IsDir() {
			if nd.rcu() && !nd.tryToUnlazy() {
				return ECHILD
			}
			return errno.ENOTDIR
		}
	}
}

// testHookStep, set by tests only, runs after each intermediate component
// of a walk, so that a test can change the tree in the middle of an
// RCU-walk.
var testHookStep func(nd *nameidata)

// walkComponent is walk_component: step onto nd.last. It returns a
// symlink body to walk when the component is a symlink to follow.
func (nd *nameidata) walkComponent(flags int) (string, bool, error) {
	if nd.lastType != LAST_NORM {
		return "", false, nd.handleDots(nd.lastType)
	}
	d, err := nd.lookupFast()
	if err != nil {
		return "", false, err
	}
	if d == nil {
		if d, err = nd.lookupSlow(); err != nil {
			return "", false, err
		}
	}
	return nd.stepInto(flags, nd.path.Mnt, d)
}

// lookupFast is lookup_fast: the name in the dcache. In RCU mode the
// dentry comes without a reference and nd.nextSeq holds its d_seq; a miss
// first turns the walk into a ref-walk. It returns nil when the slow path
// must ask the filesystem.
func (nd *nameidata) lookupFast() (*Dentry, error) {
	defer nd.t.Trace("lookup_fast")()
	parent := nd.path.Dentry
	if nd.rcu() {
		d, seq := dcache.DLookupRCU(nd.t, parent, &nd.last)
		if d == nil {
			if nd.t.Tracing() {
				nd.t.TraceNote("dcache miss on %q: RCU-walk -> ref-walk", nd.last.Name)
			}
			if !nd.tryToUnlazy() {
				return nil, ECHILD
			}
			return nil, nil
		}
		nd.nextSeq = seq
		if parent.Seq().Retry(nd.seq) {
			return nil, ECHILD
		}
		valid, err := dcache.DRevalidate(nd.t, nd.inode, &nd.last, d, nd.flags)
		if err == nil && valid {
			if nd.t.Tracing() {
				nd.t.TraceNote("dcache hit on %q in RCU-walk (__d_lookup_rcu, no reference)", nd.last.Name)
			}
			return d, nil
		}
		if !nd.tryToUnlazyNext(d) {
			return nil, ECHILD
		}
		if err == ECHILD {
			valid, err = dcache.DRevalidate(nd.t, nd.inode, &nd.last, d, nd.flags)
		}
		return nd.revalidated(d, valid, err)
	}
	d := dcache.DLookup(nd.t, parent, &nd.last)
	if d == nil {
		if nd.t.Tracing() {
			nd.t.TraceNote("dcache miss on %q in ref-walk", nd.last.Name)
		}
		return nil, nil
	}
	if nd.t.Tracing() {
		nd.t.TraceNote("dcache hit on %q in ref-walk (__d_lookup, reference taken)", nd.last.Name)
	}
	valid, err := dcache.DRevalidate(nd.t, nd.inode, &nd.last, d, nd.flags)
	return nd.revalidated(d, valid, err)
}

// revalidated finishes a ref-mode d_revalidate: an invalid dentry is
// invalidated and dropped, and the slow path looks the name up again.
func (nd *nameidata) revalidated(d *Dentry, valid bool, err error) (*Dentry, error) {
	if err == nil && valid {
		return d, nil
	}
	if err == nil {
		dcache.DInvalidate(nd.t, d)
	}
	dcache.Dput(nd.t, d)
	return nil, err
}

// lookupSlow is lookup_slow: ask the filesystem, under the directory's
// i_rwsem. The model serialises lookups of one directory with the lock
// held exclusive (there is no d_alloc_parallel).
func (nd *nameidata) lookupSlow() (*Dentry, error) {
	defer nd.t.Trace("lookup_slow")()
	dir := nd.inode
	dir.Rwsem.Lock()
	defer dir.Rwsem.Unlock()
	return lookupSlowLocked(nd.t, &nd.last, nd.path.Dentry, nd.flags)
}

// lookupSlowLocked is __lookup_slow and lookup_one_qstr_excl: the dcache
// again (another task may have looked the name up meanwhile), then the
// filesystem's ->lookup with a new dentry. The caller holds the
// directory's i_rwsem. The result has a reference; it may be negative.
func lookupSlowLocked(t *kernel.Task, name *dcache.Qstr, base *Dentry, flags uint32) (*Dentry, error) {
	dir := base.Inode()
	for {
		d := dcache.DLookup(t, base, name)
		if d == nil {
			break
		}
		valid, err := dcache.DRevalidate(t, dir, name, d, flags&^LOOKUP_RCU)
		if err != nil {
			dcache.Dput(t, d)
			return nil, err
		}
		if valid {
			return d, nil
		}
		dcache.DInvalidate(t, d)
		dcache.Dput(t, d)
	}
	if dir.IsDeadDir() {
		return nil, errno.ENOENT
	}
	d, err := dcache.DAlloc(t, base, *name)
	if err != nil {
		return nil, err
	}
	t.Inc(EvLookupSlow)
	old, err := dir.Op.Lookup(t, dir, d, flags&^LOOKUP_RCU)
	if err != nil {
		dcache.Dput(t, d)
		return nil, err
	}
	if old != nil {
		dcache.Dput(t, d)
		d = old
	}
	return d, nil
}

// stepInto is step_into: move onto d (found in mount mnt), crossing mounts,
// or return the body of a symlink to follow. In ref mode the walk's
// reference moves from the old position to d.
func (nd *nameidata) stepInto(flags int, mnt *Mount, d *Dentry) (string, bool, error) {
	// handle_mounts
	for d.Flags()&dcache.Mounted != 0 {
		m := nd.sys.lookupMnt(mnt, d)
		if m == nil {
			break
		}
		if nd.rcu() {
			if d.Seq().Retry(nd.nextSeq) {
				return "", false, ECHILD
			}
			nd.nextSeq = m.Root.Seq().RawBegin()
		} else {
			dcache.Dget(nd.t, m.Root)
			dcache.Dput(nd.t, d)
		}
		mnt, d = m, m.Root
	}
	var inode *Inode
	if nd.rcu() {
		inode = d.InodeRCU(nd.t)
	} else {
		if d.IsNegative() {
			dcache.Dput(nd.t, d)
			return "", false, errno.ENOENT
		}
		inode = d.Inode()
	}
	if !d.IsSymlink() || (flags&walkTrailing != 0 && nd.flags&LOOKUP_FOLLOW == 0) || flags&walkNofollow != 0 {
		if nd.rcu() {
			if d.Seq().Retry(nd.nextSeq) {
				return "", false, ECHILD
			}
			if inode == nil {
				return "", false, errno.ENOENT
			}
		} else {
			dcache.Dput(nd.t, nd.path.Dentry)
		}
		nd.path = Path{mnt, d}
		nd.inode = inode
		nd.seq = nd.nextSeq
		return "", false, nil
	}
	if nd.rcu() && d.Seq().Retry(nd.nextSeq) {
		return "", false, ECHILD
	}
	return nd.pickLink(mnt, d, inode)
}

// pickLink is pick_link: count the link, read its body (i_link or
// ->get_link) and jump to the root for an absolute one. In ref mode the
// link dentry's reference is dropped once its body is read (the body is
// immutable Go memory).
func (nd *nameidata) pickLink(mnt *Mount, d *Dentry, inode *Inode) (string, bool, error) {
	held := !nd.rcu()
	put := func() {
		if held {
			dcache.Dput(nd.t, d)
		}
	}
	if nd.totalLinks >= MAXSYMLINKS {
		put()
		return "", false, errno.ELOOP
	}
	nd.totalLinks++
	nd.t.Inc(EvSymlinkFollow)
	body, ok := inode.Link()
	if !ok {
		var err error
		if nd.rcu() {
			body, err = inode.Op.GetLink(nd.t, nil, inode)
			if err == ECHILD {
				if !nd.tryToUnlazyNext(d) {
					return "", false, ECHILD
				}
				held = true
				body, err = inode.Op.GetLink(nd.t, d, inode)
			}
		} else {
			body, err = inode.Op.GetLink(nd.t, d, inode)
		}
		if err != nil {
			put()
			return "", false, err
		}
	}
	put()
	if strings.HasPrefix(body, "/") {
		if err := nd.jumpRoot(); err != nil {
			return "", false, err
		}
		for strings.HasPrefix(body, "/") {
			body = body[1:]
		}
		nd.lastType = LAST_ROOT
		if body == "" {
			return "", false, nil
		}
	}
	return body, true, nil
}

// jumpRoot is nd_jump_root: continue the walk at the root.
func (nd *nameidata) jumpRoot() error {
	if !nd.rootSet {
		nd.setRoot()
	}
	if nd.rcu() {
		d := nd.root.Dentry
		nd.path = nd.root
		nd.inode = d.InodeRCU(nd.t)
		nd.seq = nd.rootSeq
		if d.Seq().Retry(nd.seq) {
			return ECHILD
		}
		return nil
	}
	dcache.Dget(nd.t, nd.root.Dentry)
	dcache.Dput(nd.t, nd.path.Dentry)
	nd.path = nd.root
	nd.inode = nd.root.Dentry.Inode()
	return nil
}

// handleDots is handle_dots: "." stays, ".." goes up (not above the root,
// across mounts).
func (nd *nameidata) handleDots(typ int) error {
	if typ != LAST_DOTDOT {
		return nil
	}
	if !nd.rootSet {
		nd.setRoot()
	}
	if nd.rcu() {
		return nd.followDotdotRCU()
	}
	nd.followDotdot()
	return nil
}

// followDotdotRCU is follow_dotdot_rcu.
func (nd *nameidata) followDotdotRCU() error {
	for {
		if nd.path == nd.root {
			return nil
		}
		m := nd.path.Mnt
		if nd.path.Dentry != m.Root {
			break
		}
		if m.parent == nil {
			return nil
		}
		if nd.path.Dentry.Seq().Retry(nd.seq) {
			return ECHILD
		}
		mp := m.mountpoint
		nd.path = Path{m.parent, mp}
		nd.seq = mp.Seq().RawBegin()
		nd.inode = mp.InodeRCU(nd.t)
	}
	old := nd.path.Dentry
	parent := old.ParentRCU(nd.t)
	seq := parent.Seq().RawBegin()
	if old.Seq().Retry(nd.seq) {
		return ECHILD
	}
	nd.path.Dentry = parent
	nd.seq = seq
	nd.inode = parent.InodeRCU(nd.t)
	return nil
}

// followDotdot is follow_dotdot (ref mode).
func (nd *nameidata) followDotdot() {
	for {
		if nd.path == nd.root {
			return
		}
		m := nd.path.Mnt
		if nd.path.Dentry != m.Root {
			break
		}
		if m.parent == nil {
			return
		}
		dcache.Dget(nd.t, m.mountpoint)
		dcache.Dput(nd.t, nd.path.Dentry)
		nd.path = Path{m.parent, m.mountpoint}
		nd.inode = m.mountpoint.Inode()
	}
	parent := dcache.DgetParent(nd.t, nd.path.Dentry)
	dcache.Dput(nd.t, nd.path.Dentry)
	nd.path.Dentry = parent
	nd.inode = parent.Inode()
}

// lookupLast is lookup_last: the trailing component, which a trailing
// slash makes a directory that symlinks are followed to.
func (nd *nameidata) lookupLast() (string, bool, error) {
	if nd.lastType == LAST_NORM && nd.lastSlash {
		nd.flags |= LOOKUP_FOLLOW | LOOKUP_DIRECTORY
	}
	return nd.walkComponent(walkTrailing)
}

// pathLookupat is path_lookupat: resolve name to a path with a
// reference.
func (nd *nameidata) pathLookupat(name string, flags uint32) (Path, error) {
	err := nd.pathInit(name, flags)
	if err != nil {
		return Path{}, err
	}
	s := name
	for {
		if err = nd.linkPathWalk(s); err != nil {
			break
		}
		var isLink bool
		if s, isLink, err = nd.lookupLast(); err != nil || !isLink {
			break
		}
	}
	if err == nil {
		err = nd.completeWalk()
	}
	if err == nil && nd.flags&LOOKUP_DIRECTORY != 0 && !nd.path.Dentry.IsDir() {
		err = errno.ENOTDIR
	}
	var res Path
	if err == nil {
		res = nd.path
		nd.path = Path{}
	}
	nd.terminate()
	return res, err
}

// getname checks a user path (getname_flags): empty is ENOENT (unless
// LOOKUP_EMPTY), PATH_MAX bytes or more is ENAMETOOLONG. A NUL byte ends
// the string, as it does in C.
func getname(name string, flags uint32) (string, error) {
	if i := strings.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	if len(name) >= PATH_MAX {
		return "", errno.ENAMETOOLONG
	}
	if name == "" && flags&LOOKUP_EMPTY == 0 {
		return "", errno.ENOENT
	}
	return name, nil
}

// walk runs fn in RCU mode first and again in ref mode if it fails with
// ECHILD (the retry of filename_lookup, path_openat and their kin). As in
// the kernel, where set_nameidata runs once before both attempts, the
// count of symlinks followed carries over from the failed RCU attempt into
// the ref-walk.
func (p *Proc) walk(t *kernel.Task, dfd int, fn func(nd *nameidata, flags uint32) error, flags uint32) error {
	nd := ndPool.Get().(*nameidata)
	*nd = nameidata{t: t, p: p, sys: p.Sys}
	defer func() {
		*nd = nameidata{}
		ndPool.Put(nd)
	}()
	if dfd != AT_FDCWD {
		f, err := p.fdget(dfd)
		if err != nil {
			return err
		}
		defer f.fput(t)
		nd.dfd = f
	}
	t.Inc(EvPathWalkRCU)
	err := fn(nd, flags|LOOKUP_RCU)
	if err == ECHILD {
		t.Inc(EvPathWalkFallback)
		if t.Tracing() {
			t.TraceNote("RCU-walk failed (-ECHILD): ref-walk")
		}
		err = fn(nd, flags&^LOOKUP_RCU)
	}
	return err
}

// lookupPath is filename_lookup: the path name resolves to, with a
// reference the caller drops with put.
func (p *Proc) lookupPath(t *kernel.Task, dfd int, name string, flags uint32) (Path, error) {
	name, err := getname(name, flags)
	if err != nil {
		return Path{}, err
	}
	var res Path
	err = p.walk(t, dfd, func(nd *nameidata, fl uint32) error {
		var err error
		res, err = nd.pathLookupat(name, fl)
		return err
	}, flags)
	return res, err
}

// put drops a path's reference (path_put).
func (pa Path) put(t *kernel.Task) {
	if pa.Dentry != nil {
		dcache.Dput(t, pa.Dentry)
	}
}

// parentResult is what filename_parentat returns.
type parentResult struct {
	path  Path
	last  dcache.Qstr
	typ   int
	slash bool
}

// lookupParent is filename_parentat: the directory holding the last
// component of name (with a reference), the component and its type.
func (p *Proc) lookupParent(t *kernel.Task, dfd int, name string) (parentResult, error) {
	name, err := getname(name, 0)
	if err != nil {
		return parentResult{}, err
	}
	var res parentResult
	err = p.walk(t, dfd, func(nd *nameidata, fl uint32) error {
		if err := nd.pathInit(name, fl); err != nil {
			return err
		}
		err := nd.linkPathWalk(name)
		if err == nil {
			err = nd.completeWalk()
		}
		if err == nil {
			res = parentResult{path: nd.path, last: nd.last, typ: nd.lastType, slash: nd.lastSlash}
			nd.path = Path{}
		}
		nd.terminate()
		return err
	}, 0)
	return res, err
}

// lookupOneQstrExcl is lookup_one_qstr_excl: the dentry of name in base,
// whose i_rwsem the caller holds, looked up in the dcache or by the
// filesystem (negative if absent), with a reference.
func lookupOneQstrExcl(t *kernel.Task, name *dcache.Qstr, base *Dentry, flags uint32) (*Dentry, error) {
	return lookupSlowLocked(t, name, base, flags)
}

// dAncestor is d_ancestor: if p1 is an ancestor of p2, the child of p1 on
// the way to p2; nil otherwise. The caller holds s_vfs_rename_mutex.
func dAncestor(p1, p2 *Dentry) *Dentry {
	for p := p2; !p.IsRoot(); {
		parent := p.Parent()
		if parent == p1 {
			return p
		}
		p = parent
	}
	return nil
}
