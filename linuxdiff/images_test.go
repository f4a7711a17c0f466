package linuxdiff

import (
	"strings"
	"testing"
)

// TestImageSections splits the guest's output at its "=== NAME" lines.
func TestImageSections(t *testing.T) {
	m := splitSections("noise\n=== make ext4\n. directory\nno key: enc: 3 names\n=== read ext4\nfsck status 0\n. directory\n")
	if got := m["make ext4"]; got != ". directory\nno key: enc: 3 names\n" {
		t.Errorf("make ext4 = %q", got)
	}
	if got := m["read ext4"]; got != "fsck status 0\n. directory\n" {
		t.Errorf("read ext4 = %q", got)
	}
	if _, ok := m[""]; ok {
		t.Error("the lines before the first section became a section")
	}
}

// TestCompareListings: a row is OK only when the listing and the no-key
// lines are the maker's and the checker passed; each difference shows in
// the diff.
func TestCompareListings(t *testing.T) {
	maker := ". directory 755 4096 6\n./a regular file 644 6 1\nno key: enc: 10 names, 0 not in the no-key form\n"
	for _, c := range []struct {
		name, reader string
		fsckOK       bool
		ok           bool
		inDiff       string
	}{
		{"same", maker, true, true, ""},
		{"size", strings.Replace(maker, "644 6 1", "644 7 1", 1), true, false, "+./a regular file 644 7 1"},
		{"no-key count", strings.Replace(maker, "10 names", "9 names", 1), true, false, "+no key: enc: 9 names"},
		{"checker", maker, false, false, ""},
		{"empty", "", true, false, "-. directory"},
	} {
		r := ImageRow{Fs: "ext4", MadeBy: "vfslab", ReadBy: "linux", Fsck: "e2fsck -fn 0", FsckOK: c.fsckOK}
		if !c.fsckOK {
			r.Fsck = "e2fsck -fn 4"
		}
		compareListings(&r, maker, c.reader)
		if r.OK() != c.ok {
			t.Errorf("%s: OK() = %v, want %v (%+v)", c.name, r.OK(), c.ok, r)
		}
		if c.inDiff != "" && !strings.Contains(r.Diff, c.inDiff) {
			t.Errorf("%s: the diff lacks %q:\n%s", c.name, c.inDiff, r.Diff)
		}
	}
	// A maker that printed nothing is never "identical".
	var r ImageRow
	compareListings(&r, "", "")
	if r.OK() {
		t.Error("two empty listings compared identical")
	}
}
