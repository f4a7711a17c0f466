package ext4

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/libfs"
)

// findLinear searches every leaf block in order (no htree), as
// __ext4_find_entry's fallback does.
func findLinear(tk *kernel.Task, dir *Inode, name string) (*DentryRef, error) {
	f, err := SetupFilename(tk, dir, []byte(name), true)
	if err != nil {
		return nil, err
	}
	defer FreeFilename(tk, f)
	var st libfs.LookupStats
	for lblk := uint32(0); lblk < dir.nblocks(); lblk++ {
		b := dir.BlockAt(lblk)
		if b == nil || (lblk != 0 && dir.isDxInternalNode(lblk, b)) {
			continue
		}
		off, err := searchDir(tk, dir, f, b, BlockSize, lblk, &st)
		if err != nil || off >= 0 {
			if off >= 0 {
				return makeRef(b, lblk, off), nil
			}
			return nil, err
		}
	}
	return nil, nil
}

func modelKey(dir *Inode, name string) string {
	if !dir.IsCasefolded() {
		return name
	}
	buf := make([]byte, 2*NameLen)
	n, err := asciiFold{}.Casefold(buf, []byte(name))
	if err != nil {
		return "raw:" + name
	}
	return string(buf[:n])
}

var nameGen = rapid.OneOf(
	rapid.StringOfN(rapid.SampledFrom([]rune("abAB.-s0")), 1, 10, -1),
	rapid.Custom(func(t *rapid.T) string {
		return fmt.Sprintf("%s%d", strings.Repeat(rapid.SampledFrom([]string{"x", "Y", "zz"}).Draw(t, "unit"), rapid.IntRange(40, 120).Draw(t, "rep")), rapid.IntRange(0, 9).Draw(t, "k"))
	}),
)

// TestPropertyDirOps: any sequence of creates, unlinks and renames keeps
// the directory well-formed (CheckDir after every step: rec_len chains,
// checksums, htree order) and lookups, through the htree and linear, in
// agreement with a map model, with and without metadata_csum, dir_index,
// casefolding and encryption.
func TestPropertyDirOps(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		o := dirOpts{
			casefold:   rapid.Bool().Draw(rt, "casefold"),
			encrypt:    rapid.Bool().Draw(rt, "encrypt"),
			noCsum:     rapid.Bool().Draw(rt, "noCsum"),
			noDirIndex: rapid.IntRange(0, 4).Draw(rt, "dirIndex") == 0,
			legacyHash: rapid.Bool().Draw(rt, "legacy"),
		}
		tk, dir := newTestDir(t, o)
		type ent struct {
			name string
			ino  uint32
		}
		model := map[string]ent{}
		next := uint32(100)
		lookup := func(name string) *DentryRef {
			r, err := find(tk, dir, name)
			if err != nil {
				rt.Fatalf("lookup %q: %v", name, err)
			}
			return r
		}
		steps := rapid.IntRange(1, 80).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			name := nameGen.Draw(rt, "name")
			if name == "." || name == ".." {
				continue
			}
			key := modelKey(dir, name)
			switch rapid.IntRange(0, 4).Draw(rt, "op") {
			case 0, 1, 2:
				r := lookup(name)
				if _, ok := model[key]; ok != (r != nil) {
					rt.Fatalf("create %q: found=%v model=%v", name, r != nil, ok)
				}
				if r == nil {
					next++
					if err := AddEntry(tk, dir, []byte(name), next, SIfreg); err != nil {
						rt.Fatalf("AddEntry %q: %v", name, err)
					}
					model[key] = ent{name, next}
				}
			case 3:
				r := lookup(name)
				if _, ok := model[key]; ok != (r != nil) {
					rt.Fatalf("unlink %q: found=%v model=%v", name, r != nil, ok)
				}
				if r != nil {
					if err := DeleteEntry(tk, dir, r); err != nil {
						rt.Fatal(err)
					}
					delete(model, key)
				}
			case 4:
				if len(model) == 0 {
					continue
				}
				var keys []string
				for k := range model {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				oldKey := rapid.SampledFrom(keys).Draw(rt, "old")
				if oldKey == key {
					continue
				}
				old := model[oldKey]
				newName := name
				if target := lookup(name); target != nil {
					newName = model[key].name
					if err := SetLink(tk, dir, target, old.ino, SIfreg); err != nil {
						rt.Fatal(err)
					}
				} else if err := AddEntry(tk, dir, []byte(name), old.ino, SIfreg); err != nil {
					rt.Fatalf("rename add %q: %v", name, err)
				}
				if err := DeleteEntry(tk, dir, lookup(old.name)); err != nil {
					rt.Fatal(err)
				}
				delete(model, oldKey)
				model[key] = ent{newName, old.ino}
			}
			if err := CheckDir(tk, dir); err != nil {
				rt.Fatalf("after step %d: %v\n%s", i, err, DumpDir(tk, dir))
			}
		}
		for _, e := range model {
			r := lookup(e.name)
			l, err := findLinear(tk, dir, e.name)
			if r == nil || r.Entry.Inode != e.ino || err != nil || l == nil || l.Entry.Inode != e.ino {
				rt.Fatalf("%q: htree %v, linear %v (%v), want %d", e.name, r, l, err, e.ino)
			}
		}
		n := 0
		ctx := &DirContext{Actor: func(name []byte, ino uint32, dt uint8) bool {
			n++
			if string(name) != "." && string(name) != ".." {
				if e, ok := model[modelKey(dir, string(name))]; !ok || e.name != string(name) || e.ino != ino {
					rt.Fatalf("readdir lists %q ino %d", name, ino)
				}
			}
			return true
		}}
		if err := Readdir(tk, dir, ctx); err != nil || n != len(model)+2 {
			rt.Fatalf("readdir: %d entries, model %d+2, %v", n, len(model), err)
		}
		if (len(model) == 0) != EmptyDir(tk, dir) {
			rt.Fatal("EmptyDir disagrees")
		}
	})
}

// FuzzDirBlock patches the blocks of a linear directory and of an htree
// (a few bytes at an offset of one block: a small input, cheap to
// minimise, on a directory made once per fuzzing process; see
// dirFuzzer), casefolded or not: lookups, adds, deletes, readdir, the
// checker and the dump must return (EFSCORRUPTED at worst), never panic
// or loop.
func FuzzDirBlock(f *testing.F) {
	var zs [4]*dirFuzzer
	for i := range zs {
		zs[i] = newDirFuzzer(f, dirOpts{noCsum: true, casefold: i&1 != 0}, 3+37*(i>>1), 60)
	}
	zs[0].seedPatches(f, false)
	zs[2].seedPatches(f, true)
	f.Fuzz(func(t *testing.T, blk, off uint16, patch []byte, htree bool) {
		for _, casefold := range []int{0, 1} {
			z := zs[casefold]
			if htree {
				z = zs[2+casefold]
			}
			z.install(blk, off, patch, false)
			z.exercise(t)
		}
	})
}
