package ext4

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/fsunicode"
	"github.com/vfslab/vfslab/vfs"
)

// The Unicode map of package fsunicode is the superblock's encoding.
var _ vfs.Encoding = (*fsunicode.Map)(nil)

func loadUTF8(t testing.TB) *fsunicode.Map {
	t.Helper()
	um, err := fsunicode.Load("12.1.0")
	if err != nil {
		t.Fatal(err)
	}
	return um
}

var unicodeNames = []string{"Straße", "ÅNGSTRÖM-Å", "Ωμέγα", "ǅemal", "ﬁle", "Ⓐbc", "Ꭰꭰ-cherokee", "a\u200bb-ignorable", "İstanbul", "ĲSSEL"}

// TestUnicodeCasefold: with the kernel's Unicode 12.1 folding, names that
// fold alike find each other and collide on create; the htree stays valid.
func TestUnicodeCasefold(t *testing.T) {
	tk, dir := newTestDir(t, dirOpts{casefold: true})
	dir.SB.Encoding = loadUTF8(t)
	for i, n := range unicodeNames {
		mustAdd(t, tk, dir, n, uint32(100+i))
	}
	for i := 0; i < 300; i++ {
		mustAdd(t, tk, dir, fmt.Sprintf("Fill-%03d-%s", i, strings.Repeat("é", 20)), uint32(1000+i))
	}
	mustCheck(t, tk, dir)
	for q, want := range map[string]uint32{"STRASSE": 100, "ångström-å": 101, "ΩΜΈΓΑ": 102, "\u01c4EMAL": 103, "FILE": 104, "ⓐBC": 105, "ᎠᎠ-CHEROKEE": 106, "ab-ignorable": 107, "FILL-007-" + strings.Repeat("É", 20): 1007} {
		if ino, err := InodeByName(tk, dir, []byte(q)); err != nil || ino != want {
			t.Errorf("lookup %q: %d %v, want %d", q, ino, err, want)
		}
	}
	if err := AddEntry(tk, dir, []byte("strasse"), 5, SIfreg); err == nil {
		t.Fatal("a name folding like an existing one was added")
	}
}

// TestE2fsprogsUnicodeCasefold: a casefolded directory of non-ASCII names
// built by e2fsprogs (which folds with its own copy of the kernel's
// utf8data tables) is read here with package fsunicode, and one built here
// passes e2fsck.
func TestE2fsprogsUnicodeCasefold(t *testing.T) {
	needTools(t, "mke2fs", "debugfs", "dumpe2fs", "e2fsck")
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src", "d")
	os.MkdirAll(src, 0o755)
	var names []string
	for i := 0; i < 400; i++ {
		n := fmt.Sprintf("%s-%d", unicodeNames[i%len(unicodeNames)], i)
		names = append(names, n)
		if err := os.WriteFile(filepath.Join(src, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	img := filepath.Join(tmp, "img")
	mk := func(index bool) {
		run(t, "mke2fs", "-q", "-F", "-t", "ext4", "-b", "4096", "-N", "4096", "-O", "metadata_csum,casefold",
			"-E", "encoding=utf8", "-d", filepath.Join(tmp, "src"), img, "16M")
		st := run(t, "debugfs", "-R", "stat /d", img)
		fl, _ := strconv.ParseUint(field(t, st, `Flags:\s+0x([0-9a-f]+)`), 16, 32)
		run(t, "debugfs", "-w", "-R", fmt.Sprintf("set_inode_field /d flags 0x%x", uint32(fl)|CasefoldFL), img)
		if index {
			exec.Command("e2fsck", "-fyD", img).Run()
		}
		run(t, "e2fsck", "-fn", img)
	}
	mk(true)
	d := inspect(t, img)
	tk, dir := dirFromImage(t, d, readBlocks(t, img, d.pblks))
	dir.SB.Encoding = loadUTF8(t)
	if err := CheckDir(tk, dir); err != nil {
		t.Fatalf("e2fsprogs' directory: %v", err)
	}
	inos := map[string]uint32{}
	for _, n := range names {
		r, err := find(tk, dir, strings.ToUpper(n))
		if err != nil || r == nil {
			t.Fatalf("lookup %q: %v %v", strings.ToUpper(n), r, err)
		}
		inos[n] = r.Entry.Inode
	}
	mk(false)
	d = inspect(t, img)
	tk2, mine := dirFromImage(t, d, nil)
	mine.SB.Encoding = loadUTF8(t)
	mine.Flags &^= IndexFL
	if err := InitNewDir(tk2, mine, 2); err != nil {
		t.Fatal(err)
	}
	for i := len(names) - 1; i >= 0; i-- {
		if err := AddEntry(tk2, mine, []byte(names[i]), inos[names[i]], SIfreg|0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustCheck(t, tk2, mine)
	nb := int(mine.nblocks())
	if nb < len(d.pblks) {
		t.Skipf("%d blocks here, %d in the image", nb, len(d.pblks))
	}
	cmds := strings.Repeat("expand_dir /d\n", nb-len(d.pblks)) + fmt.Sprintf("set_inode_field /d flags 0x%x\n", d.flags|mine.Flags&IndexFL)
	os.WriteFile(filepath.Join(tmp, "cmds"), []byte(cmds), 0o644)
	run(t, "debugfs", "-w", "-f", filepath.Join(tmp, "cmds"), img)
	d2 := inspect(t, img)
	f, _ := os.OpenFile(img, os.O_RDWR, 0)
	for i, p := range d2.pblks {
		f.WriteAt(mine.BlockAt(uint32(i)), int64(p)*BlockSize)
	}
	f.Close()
	if out, err := exec.Command("e2fsck", "-fn", img).CombinedOutput(); err != nil {
		t.Fatalf("e2fsck: %v\n%s", err, out)
	}
}
