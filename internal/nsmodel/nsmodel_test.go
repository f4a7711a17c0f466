package nsmodel

import (
	"strings"
	"testing"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// observe turns the model's own entries into an observation (inode
// numbers offset, so that identity is compared, not equality of numbers).
func observe(m *Model) []Entry {
	es := m.Entries(5)
	for i := range es {
		es[i].Ino += 100
	}
	return es
}

func TestModelRulesAndCompare(t *testing.T) {
	m := New(strings.ToLower, false)
	must(t, m.Mkdir("sub"))
	must(t, m.Create("a"))
	must(t, m.Write("a", 0, 10))
	must(t, m.Link("A", "sub/b")) // casefolded: A is a
	must(t, m.Create("c"))
	must(t, m.Rename("c", "SUB/B")) // over b: b keeps its stored name, a's inode loses a link
	must(t, m.Rename("a", "a"))
	if err := m.Rename("sub", "sub/x"); err == nil {
		t.Error("a directory renamed into itself")
	}
	if err := m.Mkdir("A"); err == nil {
		t.Error("mkdir over an existing (casefolded) name")
	}
	got := map[string]Entry{}
	for _, e := range m.Entries(5) {
		got[e.Path] = e
	}
	if e := got["a"]; e.Nlink != 1 || e.Size != 10 {
		t.Errorf("a: %+v, want nlink 1 size 10", e)
	}
	if e, ok := got["sub/b"]; !ok || e.Size != 0 || e.Nlink != 1 {
		t.Errorf("sub/b: %+v (present %v), want c's inode under b's name", e, ok)
	}
	if e := got["."]; e.Nlink != 3 {
		t.Errorf("root nlink %d, want 3", e.Nlink)
	}
	if m.Nodes() != 4 {
		t.Errorf("%d nodes, want 4 (root, sub, a, c)", m.Nodes())
	}
	obs := observe(m)
	if d := Compare(m.Entries(5), obs); len(d) != 0 {
		t.Errorf("the model against itself: %v", d)
	}
	if d := CheckLinks(obs, 5); len(d) != 0 {
		t.Errorf("CheckLinks of a consistent walk: %v", d)
	}
	// A link count one too high (a rename that forgot drop_nlink), a
	// directory's too low, a second name of one inode on one side.
	bad := observe(m)
	for i := range bad {
		switch bad[i].Path {
		case "a":
			bad[i].Nlink = 2
		case ".":
			bad[i].Nlink = 2
		case "sub/b":
			bad[i].Ino = bad[0].Ino
		}
	}
	d := Compare(m.Entries(5), bad)
	joined := strings.Join(d, "\n")
	for _, want := range []string{`"a" has nlink 2, the model 1`, `"." has nlink 2, the model 3`, "shares its inode"} {
		if !strings.Contains(joined, want) {
			t.Errorf("Compare misses %q:\n%s", want, joined)
		}
	}
	if d := CheckLinks(bad, 5); len(d) < 2 {
		t.Errorf("CheckLinks: %v, want the file's and the root's link counts", d)
	}
}
