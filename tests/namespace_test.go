package tests

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// names is the pool of components the property tests draw from: distinct
// names that casefold alike ("b"/"B", "Straße"/"STRASSE", precomposed and
// decomposed "ñ", "Å" as U+00C5 and as U+212B ANGSTROM SIGN), a 200-byte
// name, and a name that is not valid UTF-8.
var names = []string{
	"a", "b", "B", "Straße", "STRASSE", "\u00f1", "n\u0303", "\u00c5", "\u212b",
	strings.Repeat("é", 100), "\xff\xfe",
}

// genPath draws /d/X or /d/X/Y from the pool.
func genPath(t *rapid.T, label string) string {
	p := testDir + "/" + rapid.SampledFrom(names).Draw(t, label+"1")
	if rapid.IntRange(0, 2).Draw(t, label+"depth") == 0 {
		p += "/" + rapid.SampledFrom(names).Draw(t, label+"2")
	}
	return p
}

// genTarget draws a path for an operation: mostly a name the model has
// (existing) or a pool name in a directory the model has (new), else any
// pool path, so that sequences reach deep renames, cross-directory moves
// and replacements instead of failing early with ENOENT.
func genTarget(t *rapid.T, m *model, label string, existing bool) string {
	dirs, entries := m.walk()
	k := rapid.IntRange(0, 9).Draw(t, label+"kind")
	switch {
	case k < 5 && existing && len(entries) > 0:
		return rapid.SampledFrom(entries).Draw(t, label+"entry").path
	case k < 8:
		d := rapid.SampledFrom(dirs).Draw(t, label+"dir")
		if strings.Count(d, "/") > 3 {
			d = testDir
		}
		return d + "/" + rapid.SampledFrom(names).Draw(t, label+"name")
	}
	return genPath(t, label)
}

// genOp draws an operation of kind k; fill and drain are drawn against
// the model's current directories.
func genOp(t *rapid.T, m *model, k opKind, step int) op {
	switch k {
	case opCreat:
		return op{kind: opCreat, a: genTarget(t, m, "a", rapid.IntRange(0, 3).Draw(t, "overwrite") == 0), data: fmt.Sprintf("data of step %d", step)}
	case opUnlink:
		return op{kind: opUnlink, a: genTarget(t, m, "a", true)}
	case opMkdir:
		return op{kind: opMkdir, a: genTarget(t, m, "a", false)}
	case opRmdir:
		return op{kind: opRmdir, a: genTarget(t, m, "a", true)}
	case opLink:
		return op{kind: opLink, a: genTarget(t, m, "a", true), b: genTarget(t, m, "b", false)}
	case opRename:
		flags := rapid.SampledFrom([]uint32{0, vfs.RENAME_NOREPLACE, vfs.RENAME_EXCHANGE}).Draw(t, "flags")
		a := genTarget(t, m, "a", true)
		if _, entries := m.walk(); rapid.IntRange(0, 2).Draw(t, "movedir") == 0 {
			// Move a directory, to another parent most of the time.
			var subdirs []string
			for _, e := range entries {
				if e.dir {
					subdirs = append(subdirs, e.path)
				}
			}
			if len(subdirs) > 0 {
				a = rapid.SampledFrom(subdirs).Draw(t, "subdir")
			}
		}
		return op{kind: opRename, a: a, b: genTarget(t, m, "b", rapid.Bool().Draw(t, "replace")), flags: flags}
	}
	dirs, _ := m.walk()
	dir := rapid.SampledFrom(dirs).Draw(t, "filldir")
	if strings.Count(dir, "/") > 3 {
		dir = testDir
	}
	if k == opFill {
		n := rapid.IntRange(30, 200).Draw(t, "fill")
		pad := strings.Repeat("p", rapid.IntRange(0, 60).Draw(t, "pad"))
		o := op{kind: opFill, a: dir}
		for i := 0; i < n; i++ {
			o.names = append(o.names, fmt.Sprintf("fill-%d-%04d%s", step, i, pad))
		}
		return o
	}
	o := op{kind: opDrain, a: dir}
	for _, name := range m.names(dir) {
		if _, e := m.lookup(dir + "/" + name); !strings.HasPrefix(name, "fill-") || e.n.dir {
			continue // a directory an exchange put there
		}
		if rapid.IntRange(0, 2).Draw(t, "drain") != 0 {
			o.names = append(o.names, name)
		}
	}
	return o
}

// actions turns the operations into a rapid state machine over g: each
// action draws its arguments and runs on every system; the check runs
// after each.
func (g *group) actions() map[string]func(*rapid.T) {
	step := 0
	act := func(k opKind) func(*rapid.T) {
		return func(t *rapid.T) {
			step++
			o := genOp(t, g.m, k, step)
			g.last = o
			g.step(t, o)
		}
	}
	return map[string]func(*rapid.T){
		"creat":  act(opCreat),
		"unlink": act(opUnlink),
		"mkdir":  act(opMkdir),
		"rmdir":  act(opRmdir),
		"link":   act(opLink),
		"rename": act(opRename),
		"fill":   act(opFill),
		"drain":  act(opDrain),
		"":       func(t *rapid.T) { g.check(t, g.last) },
	}
}

// errName renders an error for comparisons: the errno's name, or the text.
func errName(err error) string {
	if err == nil {
		return "ok"
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return errno.Name(e)
	}
	return err.Error()
}

// group is systems that must agree: the same operations give the same
// results on each.
type group struct {
	systems []*system
	m       *model
	// inos maps a model node to its inode number on each system.
	inos []map[int]uint64
	// last is the last operation, for messages.
	last op
}

func newGroup(t *rapid.T, cfgs []config, ci bool) *group {
	g := &group{m: newModel(ci)}
	for _, c := range cfgs {
		s, err := boot(c)
		if err != nil {
			t.Fatal(err)
		}
		g.systems = append(g.systems, s)
		g.inos = append(g.inos, map[int]uint64{})
	}
	return g
}

func (g *group) close() {
	for _, s := range g.systems {
		s.close()
	}
}

// step runs o on every system, requires the same result from all, and
// applies a success to the model.
func (g *group) step(t *rapid.T, o op) {
	var first string
	for i, s := range g.systems {
		err := s.run(o)
		if _, bug := kernel.AsBug(err); bug {
			t.Fatalf("%s: %s: %v", s.cfg, o, err)
		}
		got := errName(err)
		if i == 0 {
			first = got
		} else if got != first {
			t.Fatalf("%s: %s = %s, but %s on %s", s.cfg, o, got, first, g.systems[0].cfg)
		}
	}
	if first == "ok" {
		g.m.apply(o)
	} else if o.kind == opFill || o.kind == opDrain {
		t.Fatalf("%s failed: %s", o, first)
	}
}

// check compares every system with the model: directory listings, stat of
// every entry (type, link count, and one inode number per model node), the
// absence of every other pool name, file contents, and the directory
// checker on every directory.
func (g *group) check(t *rapid.T, o op) {
	dirs, entries := g.m.walk()
	for i, s := range g.systems {
		for _, d := range dirs {
			ds, dot, dotdot, err := s.listDirDots(d)
			if err != nil {
				t.Fatalf("%s after %s: getdents %q: %v", s.cfg, o, d, err)
			}
			self, err1 := s.p.Lstat(s.t, d)
			parent, err2 := s.p.Lstat(s.t, d[:strings.LastIndex(d, "/")]+"/")
			if err1 != nil || err2 != nil || dot != self.Ino || dotdot != parent.Ino {
				t.Fatalf("%s after %s: %q lists . = %d and .. = %d; it is %d, its parent %d (%v %v)", s.cfg, o, d, dot, dotdot, self.Ino, parent.Ino, err1, err2)
			}
			var got []string
			for _, e := range ds {
				got = append(got, e.Name)
			}
			if diff := cmp.Diff(g.m.names(d), got); diff != "" {
				t.Fatalf("%s after %s: listing of %q (-model +fs):\n%s", s.cfg, o, d, diff)
			}
			if err := s.checkDir(d); err != nil {
				t.Fatalf("%s after %s: %q: %v", s.cfg, o, d, err)
			}
			if !touched(o, d) {
				continue
			}
			for _, n := range names {
				p := d + "/" + n
				if _, e := g.m.lookup(p); e != nil {
					continue
				}
				if _, err := s.p.Lstat(s.t, p); err != errno.ENOENT {
					t.Fatalf("%s after %s: lstat %q = %v, the model has no such name", s.cfg, o, p, err)
				}
			}
		}
		byIno := map[uint64]int{}
		fills := 0
		for _, e := range entries {
			if strings.Contains(e.path, "/fill-") && !e.dir && e.nlink == 1 {
				// The listing covers fill files; stat a sample.
				if fills++; fills%8 != 0 {
					continue
				}
			}
			st, err := s.p.Lstat(s.t, e.path)
			if err != nil {
				t.Fatalf("%s after %s: lstat %q: %v", s.cfg, o, e.path, err)
			}
			if isDir := st.Mode&vfs.S_IFMT == vfs.S_IFDIR; isDir != e.dir || st.Nlink != e.nlink {
				t.Fatalf("%s after %s: %q is %v, model: dir=%v nlink=%d", s.cfg, o, e.path, st, e.dir, e.nlink)
			}
			if ino, ok := g.inos[i][e.id]; ok && ino != st.Ino {
				t.Fatalf("%s after %s: %q has inode %d, was %d", s.cfg, o, e.path, st.Ino, ino)
			}
			g.inos[i][e.id] = st.Ino
			if id, ok := byIno[st.Ino]; ok && id != e.id {
				t.Fatalf("%s after %s: %q shares inode %d with another file", s.cfg, o, e.path, st.Ino)
			}
			byIno[st.Ino] = e.id
			if !e.dir && !strings.Contains(e.path, "/fill-") && touched(o, e.path[:strings.LastIndex(e.path, "/")]) {
				data, err := s.readFile(e.path)
				if err != nil || string(data) != e.data {
					t.Fatalf("%s after %s: %q reads %q %v, model %q", s.cfg, o, e.path, data, err, e.data)
				}
			}
		}
		if n := s.k.Bugs.Len(); n != 0 {
			t.Fatalf("%s: BUG reports %v", s.cfg, s.k.Bugs.All())
		}
	}
}

// touched reports whether o changed (or tried to change) the directory
// dir: the absence of the pool's other names is checked there only, since
// a miss in a big casefolded, encrypted directory decrypts every name.
func touched(o op, dir string) bool {
	for _, p := range []string{o.a, o.b} {
		if p != "" && (p == dir || strings.HasPrefix(p, dir+"/") && !strings.Contains(p[len(dir)+1:], "/")) {
			return true
		}
	}
	return false
}

// drawF2fs and drawExt4 draw filesystem options around the defaults, so
// that the differential runs also cover block dentries from the start,
// hash levels, linear ext4 directories, checksums off and other hashes.
func drawF2fs(t *rapid.T) *f2fs.Options {
	return &f2fs.Options{
		NoInlineDentry: rapid.Bool().Draw(t, "f2fs_noinline"),
		DirLevel:       uint32(rapid.IntRange(0, 2).Draw(t, "f2fs_dir_level")),
		LookupMode:     f2fs.LookupMode(rapid.IntRange(0, 2).Draw(t, "f2fs_lookup_mode")),
	}
}

func drawExt4(t *rapid.T) *ext4.Options {
	return &ext4.Options{
		NoDirIndex:     rapid.IntRange(0, 3).Draw(t, "ext4_nodx") == 0,
		NoMetadataCsum: rapid.Bool().Draw(t, "ext4_nocsum"),
		Hash:           rapid.SampledFrom([]string{"", "legacy", "tea"}).Draw(t, "ext4_hash"),
		UnsignedHash:   rapid.Bool().Draw(t, "ext4_unsigned"),
	}
}

// TestNamespaceProperty: any sequence of creat, unlink, mkdir, rmdir,
// link and rename (plain, RENAME_NOREPLACE, RENAME_EXCHANGE) through the
// syscalls gives the same results and errnos on memfs, f2fs and ext4 (the
// differential; memfs is itself checked against a reference model in its
// own package), and after every step each filesystem agrees with the map
// model of the namespace (listings, stat, contents) and its directories
// pass the fsck-style checker. Casefolded trees run on f2fs and ext4
// (memfs has no casefolding) against the model's Unicode 12.1 casefolding;
// encrypted trees have their key present.
//
// The default run draws the casefold and encrypt settings per case (rapid's
// 100 cases over the four combinations, which tests/conformance also
// covers); -namespace.all runs 100 cases of each combination, -short the
// first shortCases.
func TestNamespaceProperty(t *testing.T) {
	run := func(t *testing.T, ci, enc func(*rapid.T) bool) {
		cases := 0
		rapid.Check(t, func(rt *rapid.T) {
			// -short: the first shortCases cases; the others return
			// at once.
			if cases++; testing.Short() && cases > shortCases {
				return
			}
			ci, enc := ci(rt), enc(rt)
			var cfgs []config
			if !ci {
				cfgs = append(cfgs, config{fs: kMemfs, encrypt: enc})
			}
			cfgs = append(cfgs,
				config{fs: kF2fs, casefold: ci, encrypt: enc, f2fs: drawF2fs(rt)},
				config{fs: kExt4, casefold: ci, encrypt: enc, ext4: drawExt4(rt)})
			g := newGroup(rt, cfgs, ci)
			defer g.close()
			rt.Repeat(g.actions())
		})
	}
	if !*namespaceAll {
		draw := func(label string) func(*rapid.T) bool {
			return func(rt *rapid.T) bool { return rapid.Bool().Draw(rt, label) }
		}
		run(t, draw("casefold"), draw("encrypt"))
		return
	}
	for _, ci := range []bool{false, true} {
		for _, enc := range []bool{false, true} {
			name := fmt.Sprintf("casefold=%v/encrypt=%v", ci, enc)
			fixed := func(v bool) func(*rapid.T) bool { return func(*rapid.T) bool { return v } }
			t.Run(name, func(t *testing.T) { run(t, fixed(ci), fixed(enc)) })
		}
	}
}

// shortCases is how many of rapid's cases the property tests run with
// -short.
const shortCases = 10

// namespaceAll runs TestNamespaceProperty's 100 cases for each of the four
// casefold and encrypt combinations.
var namespaceAll = flag.Bool("namespace.all", false, "run TestNamespaceProperty on each casefold/encrypt combination")
