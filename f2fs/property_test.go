package f2fs

import (
	"bytes"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/libfs"
)

// findLinear searches every bucket of every level (use_hash=false) whatever
// the directory's flags.
func findLinear(tk *kernel.Task, dir *Inode, name string) (*DentryRef, error) {
	var f Filename
	if err := SetupFilename(tk, dir, []byte(name), true, &f); err != nil {
		return nil, err
	}
	defer FreeFilename(tk, dir, &f)
	var st libfs.LookupStats
	if dir.Inline {
		return findInInlineDir(tk, dir, &f, false, nil, &st)
	}
	for level := uint32(0); level < dir.CurrentDepth; level++ {
		if r, err := findInLevel(tk, dir, level, &f, false, nil, &st); r != nil || err != nil {
			return r, err
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
	rapid.StringOfN(rapid.SampledFrom([]rune("abAB.-ßs0")), 1, 12, -1),
	rapid.Custom(func(t *rapid.T) string {
		return strings.Repeat(rapid.SampledFrom([]string{"x", "Y", "zz"}).Draw(t, "unit"), rapid.IntRange(20, 120).Draw(t, "rep"))
	}),
)

// TestPropertyDirOps: any sequence of creates, unlinks and renames keeps the
// directory well-formed (CheckDir after every step) and its lookups, hashed
// and linear, in agreement with a map model, for every combination of
// inline, casefold, encryption and dir_level.
func TestPropertyDirOps(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		o := dirOpts{
			casefold: rapid.Bool().Draw(rt, "casefold"),
			encrypt:  rapid.Bool().Draw(rt, "encrypt"),
			noInline: rapid.Bool().Draw(rt, "noInline"),
			dirLevel: uint32(rapid.IntRange(0, 2).Draw(rt, "dirLevel")),
			variant:  rapid.SampledFrom([]string{"base", "v4"}).Draw(rt, "variant"),
		}
		tk, dir := newTestDir(t, o)
		type ent struct {
			name string
			ino  uint32
		}
		model := map[string]ent{}
		nextIno := uint32(100)
		lookupVFS := func(name string) *DentryRef {
			r, err := find(tk, dir, name)
			if err != nil {
				rt.Fatalf("lookup %q: %v", name, err)
			}
			return r
		}
		steps := rapid.IntRange(1, 60).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			name := nameGen.Draw(rt, "name")
			if name == "." || name == ".." {
				continue
			}
			key := modelKey(dir, name)
			switch rapid.IntRange(0, 3).Draw(rt, "op") {
			case 0, 1: // create
				r := lookupVFS(name)
				if _, ok := model[key]; ok != (r != nil) {
					rt.Fatalf("create %q: lookup found=%v, model %v", name, r != nil, ok)
				}
				if r == nil {
					nextIno++
					if err := AddLink(tk, dir, []byte(name), nextIno, SIfreg|0o644); err != nil {
						rt.Fatalf("AddLink %q: %v", name, err)
					}
					model[key] = ent{name, nextIno}
				}
			case 2: // unlink
				r := lookupVFS(name)
				if _, ok := model[key]; ok != (r != nil) {
					rt.Fatalf("unlink %q: found=%v model %v", name, r != nil, ok)
				}
				if r != nil {
					if err := DeleteEntry(tk, dir, r); err != nil {
						rt.Fatal(err)
					}
					delete(model, key)
				}
			case 3: // rename an existing name to name
				if len(model) == 0 {
					continue
				}
				var keys []string
				for k := range model {
					keys = append(keys, k)
				}
				sortStrings(keys)
				oldKey := rapid.SampledFrom(keys).Draw(rt, "old")
				if oldKey == key {
					continue
				}
				old := model[oldKey]
				newName := name
				if target := lookupVFS(name); target != nil {
					newName = model[key].name // the dentry keeps its on-disk name
					if err := SetLink(tk, dir, target, old.ino, SIfreg); err != nil {
						rt.Fatal(err)
					}
				} else if err := AddLink(tk, dir, []byte(name), old.ino, SIfreg); err != nil {
					rt.Fatalf("rename add %q: %v", name, err)
				}
				oldRef := lookupVFS(old.name) // after the add, which may have converted the dir
				if err := DeleteEntry(tk, dir, oldRef); err != nil {
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
			r := lookupVFS(e.name)
			l, err := findLinear(tk, dir, e.name)
			if r == nil || r.Entry.Ino != e.ino || err != nil || l == nil || l.Entry.Ino != e.ino {
				rt.Fatalf("%q: hashed %v, linear %v (%v), want ino %d", e.name, r, l, err, e.ino)
			}
		}
		var listed []string
		ctx := &DirContext{Actor: func(n []byte, ino uint32, dt uint8) bool {
			listed = append(listed, string(n))
			return true
		}}
		if err := Readdir(tk, dir, ctx); err != nil {
			rt.Fatal(err)
		}
		if len(listed) != len(model)+2 {
			rt.Fatalf("readdir lists %d, model %d+2", len(listed), len(model))
		}
		for _, n := range listed[2:] {
			if e, ok := model[modelKey(dir, n)]; !ok || !bytes.Equal([]byte(e.name), []byte(n)) {
				rt.Fatalf("readdir lists %q, not in model", n)
			}
		}
		if len(model) == 0 != EmptyDir(tk, dir) {
			rt.Fatal("EmptyDir disagrees with the model")
		}
	})
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// FuzzDentryBlock patches a dentry block (a few bytes at an offset: a
// small input, cheap to minimise, on directories made once per fuzzing
// process; see dirFuzzer), casefolded (compat lookup) or not: lookup
// (hashed and linear), readdir, the checker and the dump must return,
// with EFSCORRUPTED at worst, and never panic or loop.
func FuzzDentryBlock(f *testing.F) {
	zs := []*dirFuzzer{
		newDirFuzzer(f, dirOpts{noInline: true}, 30, 8),
		newDirFuzzer(f, dirOpts{noInline: true, casefold: true, mode: LookupCompat}, 30, 8),
	}
	zs[0].seedPatches(f)
	f.Fuzz(func(t *testing.T, area, off uint16, patch []byte) {
		if area == 0 {
			area = 1 // the block, not the inode's inline area
		}
		for _, z := range zs {
			z.install(area, off, patch)
			z.exercise(t)
		}
	})
}
