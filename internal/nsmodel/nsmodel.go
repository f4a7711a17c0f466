// Package nsmodel is a reference model of a directory tree's namespace,
// for checking a filesystem against after every operation: directories
// map a name's key (the name itself, or its casefolded form in a
// casefolded tree) to an entry that keeps the name as stored and the node
// it names; nodes are inodes, so hard links share one. The model knows
// POSIX's rules for what a successful operation does (rename(2) over an
// existing target keeps the target's stored name and drops its link;
// rename between two names of one inode does nothing; a directory's link
// count is 2 plus its subdirectories, a file's the number of its names),
// not which operations fail: the caller applies an operation only when
// the kernel says it succeeded, and the model says when that success is
// impossible (a source it does not have, a target that should have been
// refused).
//
// Compare then checks what a walk of the real tree observed against the
// model (names, types, link counts, sizes, and which names share an
// inode), and CheckLinks checks an observation against itself (every
// file's link count is the number of its names, every directory's 2 plus
// its subdirectories), for when no model is at hand.
package nsmodel

import (
	"fmt"
	"sort"
	"strings"
)

// Node is one inode of the model.
type Node struct {
	// ID identifies the node (1 is the root).
	ID int
	// Dir tells a directory from a regular file.
	Dir bool
	// Size is a regular file's i_size.
	Size int64
	// Encrypted says the node has an encryption policy.
	Encrypted bool
	kids      map[string]*entry
}

type entry struct {
	name string
	n    *Node
}

// Model is the namespace below one directory (the model's root).
type Model struct {
	fold func(name string) string
	root *Node
	next int
}

// New returns an empty tree. fold, if not nil, gives a name's key in a
// casefolded tree (names with the same key are one name); nil compares
// names as bytes. encrypted says the root has an encryption policy (its
// new nodes inherit it).
func New(fold func(name string) string, encrypted bool) *Model {
	m := &Model{fold: fold}
	m.root = m.newNode(true, encrypted)
	return m
}

func (m *Model) newNode(dir, enc bool) *Node {
	m.next++
	n := &Node{ID: m.next, Dir: dir, Encrypted: enc}
	if dir {
		n.kids = map[string]*entry{}
	}
	return n
}

func (m *Model) key(name string) string {
	if m.fold == nil {
		return name
	}
	return m.fold(name)
}

// split turns "a/b" into its components; "" is the root.
func split(path string) []string {
	path = strings.Trim(path, "/")
	if path == "" {
		return nil
	}
	return strings.Split(path, "/")
}

// lookup resolves path: the directory that holds its last component and
// that component's entry (nil when absent); dir is nil when a parent is
// missing or not a directory, and for the root.
func (m *Model) lookup(path string) (dir *Node, e *entry, last string) {
	comps := split(path)
	if len(comps) == 0 {
		return nil, &entry{n: m.root}, ""
	}
	dir = m.root
	for _, c := range comps[:len(comps)-1] {
		ce := dir.kids[m.key(c)]
		if ce == nil || !ce.n.Dir {
			return nil, nil, ""
		}
		dir = ce.n
	}
	last = comps[len(comps)-1]
	return dir, dir.kids[m.key(last)], last
}

// Lookup returns the node path names, or nil.
func (m *Model) Lookup(path string) *Node {
	if _, e, _ := m.lookup(path); e != nil {
		return e.n
	}
	return nil
}

// Create is a successful open(O_CREAT): a new empty file unless path
// names one already.
func (m *Model) Create(path string) error {
	dir, e, last := m.lookup(path)
	switch {
	case e != nil && e.n.Dir:
		return fmt.Errorf("open(O_CREAT) of %q succeeded, but it is a directory (EISDIR)", path)
	case e != nil:
		return nil
	case dir == nil:
		return fmt.Errorf("open(O_CREAT) of %q succeeded, but its parent does not exist (ENOENT)", path)
	}
	dir.kids[m.key(last)] = &entry{name: last, n: m.newNode(false, dir.Encrypted)}
	return nil
}

// Write is n bytes written at off of an existing file.
func (m *Model) Write(path string, off, n int64) error {
	node := m.Lookup(path)
	if node == nil || node.Dir {
		return fmt.Errorf("a write to %q succeeded, but it is not a file", path)
	}
	if n > 0 && off+n > node.Size {
		node.Size = off + n
	}
	return nil
}

// Truncate is a successful ftruncate to size.
func (m *Model) Truncate(path string, size int64) error {
	node := m.Lookup(path)
	if node == nil || node.Dir {
		return fmt.Errorf("truncate of %q succeeded, but it is not a file", path)
	}
	node.Size = size
	return nil
}

// Mkdir is a successful mkdir.
func (m *Model) Mkdir(path string) error {
	dir, e, last := m.lookup(path)
	switch {
	case e != nil:
		return fmt.Errorf("mkdir of %q succeeded, but the name exists (EEXIST)", path)
	case dir == nil:
		return fmt.Errorf("mkdir of %q succeeded, but its parent does not exist (ENOENT)", path)
	}
	dir.kids[m.key(last)] = &entry{name: last, n: m.newNode(true, dir.Encrypted)}
	return nil
}

// Rmdir is a successful rmdir.
func (m *Model) Rmdir(path string) error {
	dir, e, last := m.lookup(path)
	switch {
	case e == nil || dir == nil:
		return fmt.Errorf("rmdir of %q succeeded, but it does not exist (ENOENT)", path)
	case !e.n.Dir:
		return fmt.Errorf("rmdir of %q succeeded, but it is not a directory (ENOTDIR)", path)
	case len(e.n.kids) > 0:
		return fmt.Errorf("rmdir of %q succeeded, but it has %d entries (ENOTEMPTY)", path, len(e.n.kids))
	}
	delete(dir.kids, m.key(last))
	return nil
}

// Unlink is a successful unlink.
func (m *Model) Unlink(path string) error {
	dir, e, last := m.lookup(path)
	switch {
	case e == nil || dir == nil:
		return fmt.Errorf("unlink of %q succeeded, but it does not exist (ENOENT)", path)
	case e.n.Dir:
		return fmt.Errorf("unlink of %q succeeded, but it is a directory (EISDIR)", path)
	}
	delete(dir.kids, m.key(last))
	return nil
}

// Link is a successful link(oldpath, newpath).
func (m *Model) Link(oldpath, newpath string) error {
	_, src, _ := m.lookup(oldpath)
	dir, dst, last := m.lookup(newpath)
	switch {
	case src == nil:
		return fmt.Errorf("link of %q succeeded, but it does not exist (ENOENT)", oldpath)
	case src.n.Dir:
		return fmt.Errorf("link of directory %q succeeded (EPERM)", oldpath)
	case dst != nil:
		return fmt.Errorf("link to %q succeeded, but the name exists (EEXIST)", newpath)
	case dir == nil:
		return fmt.Errorf("link to %q succeeded, but its parent does not exist (ENOENT)", newpath)
	}
	dir.kids[m.key(last)] = &entry{name: last, n: src.n}
	return nil
}

// Rename is a successful rename(oldpath, newpath) with flags 0.
func (m *Model) Rename(oldpath, newpath string) error {
	sdir, se, slast := m.lookup(oldpath)
	ddir, de, dlast := m.lookup(newpath)
	switch {
	case se == nil || sdir == nil:
		return fmt.Errorf("rename of %q succeeded, but it does not exist (ENOENT)", oldpath)
	case ddir == nil:
		return fmt.Errorf("rename to %q succeeded, but its parent does not exist (ENOENT)", newpath)
	}
	if de != nil && de.n == se.n {
		return nil // two names of one inode (or one name): nothing happens
	}
	if se.n.Dir && m.below(ddir, se.n) {
		return fmt.Errorf("rename of %q into itself (%q) succeeded (EINVAL)", oldpath, newpath)
	}
	if de != nil {
		switch {
		case se.n.Dir && !de.n.Dir:
			return fmt.Errorf("rename of directory %q over file %q succeeded (ENOTDIR)", oldpath, newpath)
		case !se.n.Dir && de.n.Dir:
			return fmt.Errorf("rename of file %q over directory %q succeeded (EISDIR)", oldpath, newpath)
		case de.n.Dir && len(de.n.kids) > 0:
			return fmt.Errorf("rename over non-empty directory %q succeeded (ENOTEMPTY)", newpath)
		}
	}
	delete(sdir.kids, m.key(slast))
	if de != nil {
		de.n = se.n // the target's entry keeps its stored name
		return nil
	}
	ddir.kids[m.key(dlast)] = &entry{name: dlast, n: se.n}
	return nil
}

// below reports whether dir is n or a directory below it.
func (m *Model) below(dir, n *Node) bool {
	if dir == n {
		return true
	}
	for _, e := range n.kids {
		if e.n.Dir && m.below(dir, e.n) {
			return true
		}
	}
	return false
}

// Nodes is the number of nodes the tree holds, the root's included.
func (m *Model) Nodes() int {
	seen := map[*Node]bool{}
	var rec func(n *Node)
	rec = func(n *Node) {
		if seen[n] {
			return
		}
		seen[n] = true
		for _, e := range n.kids {
			rec(e.n)
		}
	}
	rec(m.root)
	return len(seen)
}

// Entry is one name of a tree, as a walk sees it: its path below the root,
// the inode it names (the model's node ID, or an observed inode number),
// its type, link count and size (a file's).
type Entry struct {
	Path  string
	Ino   uint64
	Dir   bool
	Nlink uint32
	Size  int64
}

// Entries lists every name of the model below the root, and the root
// itself as ".", sorted by path,
// down to maxDepth components (directories below are not listed, as a
// walk bounded the same way does not list them). Link counts are POSIX's:
// a file's is its number of names, a directory's 2 plus its
// subdirectories.
func (m *Model) Entries(maxDepth int) []Entry {
	links := map[*Node]uint32{}
	var count func(n *Node)
	count = func(n *Node) {
		for _, e := range n.kids {
			links[e.n]++
			if e.n.Dir {
				count(e.n)
			}
		}
	}
	count(m.root)
	var out []Entry
	var rec func(prefix string, n *Node, depth int)
	rec = func(prefix string, n *Node, depth int) {
		for _, e := range n.kids {
			p := prefix + e.name
			en := Entry{Path: p, Ino: uint64(e.n.ID), Dir: e.n.Dir, Nlink: links[e.n], Size: e.n.Size}
			if e.n.Dir {
				en.Nlink, en.Size = 2, 0
				for _, k := range e.n.kids {
					if k.n.Dir {
						en.Nlink++
					}
				}
				if depth < maxDepth {
					rec(p+"/", e.n, depth+1)
				}
			}
			out = append(out, en)
		}
	}
	rec("", m.root, 1)
	root := Entry{Path: ".", Ino: uint64(m.root.ID), Dir: true, Nlink: 2}
	for _, k := range m.root.kids {
		if k.n.Dir {
			root.Nlink++
		}
	}
	out = append(out, root)
	sortEntries(out)
	return out
}

func sortEntries(es []Entry) {
	sort.Slice(es, func(i, j int) bool { return es[i].Path < es[j].Path })
}

// Compare checks an observed walk against the model's entries (both
// Entries-shaped; Ino the model's node ID on one side and the inode
// number on the other) and describes every difference: a name on one
// side only, a type, link count or size that differs, and names that
// share an inode on one side but not on the other. Directory sizes are
// not compared (they are the filesystem's blocks).
func Compare(model, observed []Entry) []string {
	model, observed = sorted(model), sorted(observed)
	var out []string
	mi := map[string]Entry{}
	for _, e := range model {
		mi[e.Path] = e
	}
	oi := map[string]Entry{}
	for _, e := range observed {
		oi[e.Path] = e
		me, ok := mi[e.Path]
		if !ok {
			out = append(out, fmt.Sprintf("%q exists, the model has no such name", e.Path))
			continue
		}
		if me.Dir != e.Dir {
			out = append(out, fmt.Sprintf("%q is a %s, the model's is a %s", e.Path, typ(e.Dir), typ(me.Dir)))
			continue
		}
		if me.Nlink != e.Nlink {
			out = append(out, fmt.Sprintf("%q has nlink %d, the model %d", e.Path, e.Nlink, me.Nlink))
		}
		if !e.Dir && me.Size != e.Size {
			out = append(out, fmt.Sprintf("%q has size %d, the model %d", e.Path, e.Size, me.Size))
		}
	}
	for _, e := range model {
		if _, ok := oi[e.Path]; !ok {
			out = append(out, fmt.Sprintf("%q is missing (the model has a %s there)", e.Path, typ(e.Dir)))
		}
	}
	// Identity: two names share an observed inode exactly when they
	// share a model node.
	byModel, byObs := map[uint64][]string{}, map[uint64][]string{}
	for _, e := range observed {
		if me, ok := mi[e.Path]; ok {
			byModel[me.Ino] = append(byModel[me.Ino], e.Path)
			byObs[e.Ino] = append(byObs[e.Ino], e.Path)
		}
	}
	for _, e := range observed {
		me, ok := mi[e.Path]
		if !ok {
			continue
		}
		if a, b := strings.Join(byObs[e.Ino], ", "), strings.Join(byModel[me.Ino], ", "); a != b {
			out = append(out, fmt.Sprintf("%q shares its inode with [%s], the model with [%s]", e.Path, a, b))
			break
		}
	}
	return out
}

func sorted(es []Entry) []Entry {
	es = append([]Entry(nil), es...)
	sortEntries(es)
	return es
}

func typ(dir bool) string {
	if dir {
		return "directory"
	}
	return "file"
}

// CheckLinks checks an observed walk against itself: a file's link count
// is the number of names of its inode the walk saw, a directory's 2 plus
// the subdirectories it holds (the root is "."); directories at the walk's depth bound
// (whose children it did not list) are skipped, as are files whose names
// may lie below that bound. maxDepth is the walk's bound in components.
func CheckLinks(observed []Entry, maxDepth int) []string {
	names := map[uint64]int{}
	subdirs := map[string]uint32{}
	deep := false
	for _, e := range observed {
		depth := strings.Count(e.Path, "/") + 1
		if e.Path == "." {
			depth = 0
		}
		if !e.Dir {
			names[e.Ino]++
		}
		if e.Dir && depth >= maxDepth {
			deep = true
		}
		if e.Dir && e.Path != "." {
			parent := "."
			if i := strings.LastIndexByte(e.Path, '/'); i >= 0 {
				parent = e.Path[:i]
			}
			subdirs[parent]++
		}
	}
	var out []string
	for _, e := range sorted(observed) {
		depth := strings.Count(e.Path, "/") + 1
		if e.Path == "." {
			depth = 0
		}
		switch {
		case e.Dir && depth < maxDepth:
			if want := 2 + subdirs[e.Path]; e.Nlink != want {
				out = append(out, fmt.Sprintf("directory %q has nlink %d but %d subdirectories (want %d)", e.Path, e.Nlink, want-2, want))
			}
		case !e.Dir && !deep:
			if n := names[e.Ino]; int(e.Nlink) != n {
				out = append(out, fmt.Sprintf("file %q (inode %d) has nlink %d but %d names", e.Path, e.Ino, e.Nlink, n))
			}
		}
	}
	return out
}
