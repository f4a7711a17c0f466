package f2fs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/fsunicode"
	"github.com/vfslab/vfslab/vfs"
)

// The Unicode map of package fsunicode is the superblock's encoding.
var _ vfs.Encoding = (*fsunicode.Map)(nil)

// TestUnicodeCasefold: with the kernel's Unicode 12.1 folding (package
// fsunicode), names that fold alike find each other, the stored hash_code
// is the TEA hash of the folded name, and the directory stays valid.
func TestUnicodeCasefold(t *testing.T) {
	um, err := fsunicode.Load("12.1.0")
	if err != nil {
		t.Fatal(err)
	}
	tk, dir := newTestDir(t, dirOpts{casefold: true, noInline: true})
	dir.SB.Encoding = um
	names := []string{"Straße", "ÅNGSTRÖM", "Ωμέγα", "ǅemal", "ﬁle", "a\u200bb"}
	for i, n := range names {
		mustAdd(t, tk, dir, n, uint32(100+i))
	}
	for i := 0; i < 500; i++ {
		mustAdd(t, tk, dir, fmt.Sprintf("Fill-%03d-%s", i, strings.Repeat("é", 10)), uint32(1000+i))
	}
	mustCheck(t, tk, dir)
	for q, want := range map[string]uint32{"STRASSE": 100, "ångström": 101, "ΩΜΈΓΑ": 102, "\u01c4EMAL": 103, "FILE": 104, "ab": 105} {
		if ino, err := InodeByName(tk, dir, []byte(q)); err != nil || ino != want {
			t.Errorf("lookup %q: %d %v, want %d", q, ino, err, want)
		}
	}
	r, _ := find(tk, dir, "STRASSE")
	if r.Entry.HashCode != F2fsDentryHash([]byte("strasse")) {
		t.Fatalf("hash_code %08x", r.Entry.HashCode)
	}
}
