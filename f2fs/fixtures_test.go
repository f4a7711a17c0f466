package f2fs

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestSloadFixture reads a directory that sload.f2fs (f2fs-tools) built,
// committed as hex in testdata/sload-two-levels.txt: it must pass CheckDir
// (every hash_code, every bucket), every listed name must be found, and
// adding the same names here in sload's order (sorted) must give the same
// bytes in the same pages.
func TestSloadFixture(t *testing.T) {
	f, err := os.Open("testdata/sload-two-levels.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tk := newTestTask(t, "")
	var ino, depth, dirLevel uint32
	var size int64
	names := 0
	type page struct {
		bidx uint64
		raw  []byte
	}
	var pages []page
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 16384), 16384)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 2 || strings.HasPrefix(fs[0], "#") {
			continue
		}
		v, _ := strconv.ParseUint(fs[1], 10, 64)
		switch fs[0] {
		case "ino":
			ino = uint32(v)
		case "size":
			size = int64(v)
		case "depth":
			depth = uint32(v)
		case "dir_level":
			dirLevel = uint32(v)
		case "names":
			names = int(v)
		case "page":
			b, err := hex.DecodeString(fs[2])
			if err != nil || len(b) != BlockSize {
				t.Fatalf("page %s", fs[1])
			}
			pages = append(pages, page{v, b})
		}
	}
	o := dirOpts{ino: ino, noInline: true, dirLevel: dirLevel}
	dir := newDirInode(t, tk, newTestSB(t, tk, o), o)
	dir.CurrentDepth = depth
	for _, p := range pages {
		dir.SetBlock(p.bidx, p.raw)
	}
	dir.SetSize(size)
	if err := CheckDir(tk, dir); err != nil {
		t.Fatalf("CheckDir: %v", err)
	}
	var listed []string
	inos := map[string]uint32{}
	ctx := &DirContext{Actor: func(n []byte, ino uint32, dt uint8) bool {
		listed = append(listed, string(n))
		inos[string(n)] = ino
		return true
	}}
	if err := Readdir(tk, dir, ctx); err != nil || len(listed) != names+2 {
		t.Fatalf("readdir: %d entries, %v", len(listed), err)
	}
	for _, n := range listed[2:] {
		if ino, err := InodeByName(tk, dir, []byte(n)); err != nil || ino != inos[n] {
			t.Fatalf("lookup %q: %d %v", n, ino, err)
		}
	}
	// Rebuild in sload's order.
	mine := newDirInode(t, tk, newTestSB(t, tk, dirOpts{}), dirOpts{ino: ino, noInline: true})
	if err := MakeEmptyDir(tk, mine, inos[".."], SIfdir); err != nil {
		t.Fatal(err)
	}
	order := append([]string(nil), listed[2:]...)
	sort.Strings(order)
	for _, n := range order {
		if err := AddLink(tk, mine, []byte(n), inos[n], SIfreg|0o644); err != nil {
			t.Fatal(err)
		}
	}
	if mine.String() != dir.String() {
		t.Fatalf("rebuilt %s, sload made %s", mine, dir)
	}
	for _, p := range dir.Pages() {
		if !bytes.Equal(mine.BlockAt(p), dir.BlockAt(p)) {
			t.Fatalf("page %d differs:\n mine %s\nsload %s", p, DumpBlock(tk, mine, p), DumpBlock(tk, dir, p))
		}
	}
}
