package shell

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// validTestName is common/test_names' VALID_TEST_NAME: three digits and
// an optional name ("123" or "123-foo").
var validTestName = regexp.MustCompile(`^[0-9]{3}-?[[:alnum:]-]*$`)

// srcGroups is check's SRC_GROUPS: the test directories every filesystem
// runs, besides its own.
var srcGroups = []string{"generic"}

// groupList is one test directory's group list: test name -> groups.
type groupList map[string][]string

// readGroupList reads tests/DIR's group list as check finds it. check
// reads tests/DIR/group.list, which the checkout's build generates from
// each test's `_begin_fstest GROUP...` line (tools/mkgroupfile); older
// checkouts keep a hand-written tests/DIR/group in the same format
// ("NNN group group ...", # comments). A checkout that was never built
// has neither, so the list is made from the tests' _begin_fstest lines
// as mkgroupfile would make it. A directory that does not exist has no
// list (nil, nil).
func readGroupList(root, dir string) (groupList, error) {
	d := filepath.Join(root, "tests", dir)
	if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
		return nil, nil
	}
	for _, name := range []string{"group.list", "group"} {
		data, err := readInside(root, filepath.Join(d, name))
		if err != nil {
			continue
		}
		gl := groupList{}
		for _, line := range strings.Split(string(data), "\n") {
			if i := strings.IndexByte(line, '#'); i >= 0 {
				line = line[:i]
			}
			f := strings.Fields(line)
			if len(f) > 0 && validTestName.MatchString(f[0]) {
				gl[f[0]] = append(gl[f[0]], f[1:]...)
			}
		}
		return gl, nil
	}
	ents, err := os.ReadDir(d)
	if err != nil {
		return nil, err
	}
	gl := groupList{}
	for _, e := range ents {
		if e.IsDir() || !validTestName.MatchString(e.Name()) {
			continue
		}
		// A test that resolves outside the checkout is not read.
		if _, err := resolveInside(root, filepath.Join(d, e.Name())); err != nil {
			continue
		}
		groups, ok, err := beginFstestGroups(filepath.Join(d, e.Name()))
		if err != nil {
			return nil, err
		}
		if ok {
			gl[e.Name()] = groups
		}
	}
	return gl, nil
}

// beginFstestGroups returns the groups of a test's `_begin_fstest` line
// (the line must start with it, as mkgroupfile's grep wants).
func beginFstestGroups(file string) ([]string, bool, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if rest, ok := bytes.CutPrefix(line, []byte("_begin_fstest")); ok && (len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t') {
			return strings.Fields(string(rest)), true, nil
		}
	}
	return nil, false, sc.Err()
}

// testSet is what check's _prepare_test_list works from: the checkout,
// the filesystem and the group lists it reads lazily.
type testSet struct {
	root, fstyp string
	lists       map[string]groupList
}

func newTestSet(root, fstyp string) *testSet {
	return &testSet{root: root, fstyp: fstyp, lists: map[string]groupList{}}
}

// list returns tests/DIR's group list (nil when DIR has none).
func (ts *testSet) list(dir string) (groupList, error) {
	if gl, ok := ts.lists[dir]; ok {
		return gl, nil
	}
	gl, err := readGroupList(ts.root, dir)
	if err != nil {
		return nil, err
	}
	ts.lists[dir] = gl
	return gl, nil
}

// fsDirs are the directories check collects a group from: SRC_GROUPS and
// the filesystem's own (ext2 and ext3 use ext4's).
func (ts *testSet) fsDirs() []string {
	fs := ts.fstyp
	if fs == "ext2" || fs == "ext3" {
		fs = "ext4"
	}
	return append(append([]string(nil), srcGroups...), fs)
}

// group is check's get_group_list: the tests of group grp from every
// directory check collects from, or from one directory when grp is
// DIR/GROUP and tests/DIR exists. "all" is every test.
func (ts *testSet) group(grp string) ([]string, error) {
	dirs := ts.fsDirs()
	if sub, g, ok := strings.Cut(grp, "/"); ok {
		if fi, err := os.Stat(filepath.Join(ts.root, "tests", sub)); err == nil && fi.IsDir() {
			dirs, grp = []string{sub}, g
		}
	}
	var out []string
	for _, d := range dirs {
		gl, err := ts.list(d)
		if err != nil {
			return nil, err
		}
		for name, groups := range gl {
			for _, g := range groups {
				if g == grp || grp == "all" {
					out = append(out, d+"/"+name)
					break
				}
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// selection is the outcome of check's argument processing: the tests to
// run in order, and the notes check prints for arguments it ignores.
type selection struct {
	tests []string
	notes []string
}

// errEmptyGroup is check's fatal "Group "X" is empty or not defined?".
type errEmptyGroup string

func (e errEmptyGroup) Error() string {
	return fmt.Sprintf("Group %q is empty or not defined?", string(e))
}

// selectTests is check's test selection: each TEST argument is a pattern
// under tests/ (generic/39?, */001) whose matches must be in their
// directory's group list ("NAME - unknown test, ignored" otherwise); each
// -g group adds its tests, each -x group removes its tests; without tests
// or groups the group is "auto". The list is sorted (check's sort -n on
// equal numeric keys falls back to the whole line) and without
// duplicates.
func (ts *testSet) selectTests(args, groups, xgroups []string) (selection, error) {
	var sel selection
	seen := map[string]bool{}
	add := func(t string) {
		if !seen[t] {
			seen[t] = true
			sel.tests = append(sel.tests, t)
		}
	}
	for _, a := range args {
		if err := testName(a); err != nil {
			return sel, err
		}
		matches, err := filepath.Glob(filepath.Join(ts.root, "tests", a))
		if err != nil || len(matches) == 0 {
			matches = []string{filepath.Join(ts.root, "tests", a)}
		}
		for _, m := range matches {
			rel, err := filepath.Rel(filepath.Join(ts.root, "tests"), m)
			if err != nil {
				rel = a
			}
			rel = filepath.ToSlash(rel)
			dir, name, _ := strings.Cut(rel, "/")
			gl, err := ts.list(dir)
			if err != nil {
				return sel, err
			}
			if _, ok := gl[name]; !ok || strings.Contains(name, "/") {
				sel.notes = append(sel.notes, rel+" - unknown test, ignored")
				continue
			}
			add(rel)
		}
	}
	if len(args) == 0 && len(groups) == 0 {
		groups = []string{"auto"}
	}
	for _, g := range groups {
		list, err := ts.group(g)
		if err != nil {
			return sel, err
		}
		if len(list) == 0 {
			return sel, errEmptyGroup(g)
		}
		for _, t := range list {
			add(t)
		}
	}
	for _, g := range xgroups {
		list, err := ts.group(g)
		if err != nil {
			return sel, err
		}
		if len(list) == 0 {
			sel.notes = append(sel.notes, errEmptyGroup(g).Error())
			continue
		}
		drop := map[string]bool{}
		for _, t := range list {
			drop[t] = true
		}
		kept := sel.tests[:0]
		for _, t := range sel.tests {
			if !drop[t] {
				kept = append(kept, t)
			}
		}
		sel.tests = kept
	}
	sort.Strings(sel.tests)
	return sel, nil
}

// maxTestNameLen is check's max_test_namelen: the longest DIR/NNN name
// among the checkout's tests, which sets the width of the name column.
func maxTestNameLen(root string) int {
	n := 0
	dirs, _ := os.ReadDir(filepath.Join(root, "tests"))
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		ents, _ := os.ReadDir(filepath.Join(root, "tests", d.Name()))
		for _, e := range ents {
			name := e.Name()
			if strings.Trim(name, "0123456789") == "" {
				n = max(n, len(d.Name())+1+len(name))
			}
		}
	}
	return n
}

// testName refuses a TEST argument that could name a file outside the
// checkout's tests/: an absolute path or one with a ".." element.
func testName(a string) error {
	if filepath.IsAbs(a) || a == "" {
		return fmt.Errorf("--xfstests: test %q: not a test under tests/ (DIR/NNN; no absolute path)", a)
	}
	for _, el := range strings.Split(filepath.ToSlash(a), "/") {
		if el == ".." {
			return fmt.Errorf("--xfstests: test %q: not a test under tests/ (DIR/NNN; no '..')", a)
		}
	}
	return nil
}

// readInside reads the checkout's file p, refusing one that resolves
// (through symbolic links) outside root: a test is never a way to read a
// host file the user did not give.
func readInside(root, p string) ([]byte, error) {
	q, err := resolveInside(root, p)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(q)
}

// resolveInside is p with its symbolic links resolved, or an error if
// that is outside root.
func resolveInside(root, p string) (string, error) {
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	q, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(r, q)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%s resolves to %s, outside the checkout %s", p, q, root)
	}
	return q, nil
}
