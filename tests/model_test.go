package tests

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vfslab/vfslab/fsunicode"
	"github.com/vfslab/vfslab/vfs"
)

// The model of the namespace below /d: directories map a name's key (the
// name itself, or its casefolded form in a casefolded tree) to an entry
// that keeps the name as stored and the node it names. Nodes are inodes:
// hard links share one.

type mnode struct {
	id   int
	dir  bool
	kids map[string]*mentry // directories
	data string             // regular files
}

type mentry struct {
	name string
	n    *mnode
}

type model struct {
	ci   bool
	um   *fsunicode.Map
	root *mnode
	next int
}

func newModel(ci bool) *model {
	m := &model{ci: ci}
	if ci {
		um, err := fsunicode.Load("12.1.0")
		if err != nil {
			panic(err)
		}
		m.um = um
	}
	m.root = m.newNode(true)
	return m
}

func (m *model) newNode(dir bool) *mnode {
	m.next++
	n := &mnode{id: m.next, dir: dir}
	if dir {
		n.kids = map[string]*mentry{}
	}
	return n
}

// key is the identity of a name in a directory: in a casefolded tree its
// NFD casefolded form (Unicode 12.1), or the bytes for a name that does
// not fold (invalid UTF-8, compared as bytes when not strict).
func (m *model) key(name string) string {
	if !m.ci {
		return name
	}
	buf := make([]byte, 1024)
	n, err := m.um.Casefold(buf, []byte(name))
	if err != nil {
		return "\x00raw:" + name
	}
	return string(buf[:n])
}

// split turns "/d/a/b" into ["a", "b"].
func split(path string) []string {
	rest := strings.TrimPrefix(path, testDir+"/")
	return strings.Split(rest, "/")
}

// lookup returns the directory holding path's last component and the
// entry of that component (nil when absent); dir is nil when a parent is
// missing or not a directory.
func (m *model) lookup(path string) (dir *mnode, e *mentry) {
	comps := split(path)
	dir = m.root
	for _, c := range comps[:len(comps)-1] {
		ce := dir.kids[m.key(c)]
		if ce == nil || !ce.n.dir {
			return nil, nil
		}
		dir = ce.n
	}
	return dir, dir.kids[m.key(comps[len(comps)-1])]
}

func last(path string) string { c := split(path); return c[len(c)-1] }

// apply changes the model as the successful op does.
func (m *model) apply(o op) {
	switch o.kind {
	case opCreat:
		dir, e := m.lookup(o.a)
		if e != nil {
			e.n.data = o.data
			return
		}
		n := m.newNode(false)
		n.data = o.data
		dir.kids[m.key(last(o.a))] = &mentry{name: last(o.a), n: n}
	case opMkdir:
		dir, _ := m.lookup(o.a)
		dir.kids[m.key(last(o.a))] = &mentry{name: last(o.a), n: m.newNode(true)}
	case opUnlink, opRmdir:
		dir, _ := m.lookup(o.a)
		delete(dir.kids, m.key(last(o.a)))
	case opLink:
		_, src := m.lookup(o.a)
		dir, _ := m.lookup(o.b)
		dir.kids[m.key(last(o.b))] = &mentry{name: last(o.b), n: src.n}
	case opRename:
		sdir, se := m.lookup(o.a)
		ddir, de := m.lookup(o.b)
		if o.flags&vfs.RENAME_EXCHANGE != 0 {
			se.n, de.n = de.n, se.n
			return
		}
		if de != nil && de.n == se.n {
			return // two names of one inode: rename does nothing
		}
		delete(sdir.kids, m.key(last(o.a)))
		if de != nil {
			de.n = se.n // the target's entry keeps its stored name
			return
		}
		ddir.kids[m.key(last(o.b))] = &mentry{name: last(o.b), n: se.n}
	case opFill:
		dir, _ := m.lookup(o.a + "/x")
		for _, name := range o.names {
			n := m.newNode(false)
			n.data = name
			dir.kids[m.key(name)] = &mentry{name: name, n: n}
		}
	case opDrain:
		dir, _ := m.lookup(o.a + "/x")
		for _, name := range o.names {
			delete(dir.kids, m.key(name))
		}
	}
}

// mstat is what the model says stat(2) shows.
type mstat struct {
	path  string
	id    int
	dir   bool
	nlink uint32
	data  string
}

// walk lists every entry of the model below /d, with directories' link
// counts (2 + subdirectories) and files' (the names they have).
func (m *model) walk() (dirs []string, entries []mstat) {
	links := map[*mnode]uint32{}
	var rec func(path string, n *mnode)
	rec = func(path string, n *mnode) {
		dirs = append(dirs, path)
		for _, e := range n.kids {
			links[e.n]++
			if e.n.dir {
				rec(path+"/"+e.name, e.n)
			}
		}
	}
	rec(testDir, m.root)
	var rec2 func(path string, n *mnode)
	rec2 = func(path string, n *mnode) {
		for _, e := range n.kids {
			p := path + "/" + e.name
			st := mstat{path: p, id: e.n.id, dir: e.n.dir, nlink: links[e.n], data: e.n.data}
			if e.n.dir {
				st.nlink = 2
				for _, k := range e.n.kids {
					if k.n.dir {
						st.nlink++
					}
				}
				rec2(p, e.n)
			}
			entries = append(entries, st)
		}
	}
	rec2(testDir, m.root)
	sort.Strings(dirs)
	sort.Slice(entries, func(i, j int) bool { return entries[i].path < entries[j].path })
	return dirs, entries
}

// names returns the stored names of the directory at path, sorted.
func (m *model) names(path string) []string {
	n := m.root
	if path != testDir {
		_, e := m.lookup(path)
		n = e.n
	}
	var out []string
	for _, e := range n.kids {
		out = append(out, e.name)
	}
	sort.Strings(out)
	return out
}

// opKind is a syscall of the property tests.
type opKind int

const (
	opCreat opKind = iota
	opUnlink
	opMkdir
	opRmdir
	opLink
	opRename
	// opFill creates many files in a directory (so that directories grow
	// past their first block, inline area or htree leaf), opDrain removes
	// them again.
	opFill
	opDrain
)

type op struct {
	kind  opKind
	a, b  string
	flags uint32
	data  string
	names []string
}

func (o op) String() string {
	switch o.kind {
	case opCreat:
		return fmt.Sprintf("creat(%q)", o.a)
	case opUnlink:
		return fmt.Sprintf("unlink(%q)", o.a)
	case opMkdir:
		return fmt.Sprintf("mkdir(%q)", o.a)
	case opRmdir:
		return fmt.Sprintf("rmdir(%q)", o.a)
	case opLink:
		return fmt.Sprintf("link(%q, %q)", o.a, o.b)
	case opRename:
		return fmt.Sprintf("rename(%q, %q, %d)", o.a, o.b, o.flags)
	case opFill:
		return fmt.Sprintf("fill(%q, %d names from %q)", o.a, len(o.names), o.names[0])
	case opDrain:
		return fmt.Sprintf("drain(%q, %d names)", o.a, len(o.names))
	}
	return "?"
}

// run performs o on s and returns the syscall's error (the first failing
// one for fill and drain).
func (s *system) run(o op) error {
	switch o.kind {
	case opCreat:
		return s.creat(o.a, []byte(o.data))
	case opUnlink:
		return s.p.Unlink(s.t, o.a)
	case opMkdir:
		return s.p.Mkdir(s.t, o.a, 0o755)
	case opRmdir:
		return s.p.Rmdir(s.t, o.a)
	case opLink:
		return s.p.Link(s.t, o.a, o.b)
	case opRename:
		return s.p.Rename(s.t, o.a, o.b, o.flags)
	case opFill:
		for _, n := range o.names {
			if err := s.creat(o.a+"/"+n, []byte(n)); err != nil {
				return err
			}
		}
	case opDrain:
		for _, n := range o.names {
			if err := s.p.Unlink(s.t, o.a+"/"+n); err != nil {
				return err
			}
		}
	}
	return nil
}
