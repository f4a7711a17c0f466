package f2fs

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vfslab/vfslab/errno"
)

// TestWalkDirentsInline: the inline area of a small directory, dentry by
// dentry.
func TestWalkDirentsInline(t *testing.T) {
	tk, dir := newTestDir(t, dirOpts{})
	mustAdd(t, tk, dir, "hello", 11)
	mustAdd(t, tk, dir, "a-much-longer-name", 12)
	l := WalkDirents(tk, dir)
	if len(l.Areas) != 1 || l.Areas[0].Kind != AreaInline || !l.Inline || l.Ino != 10 || l.Size != 3488 {
		t.Fatalf("layout %+v", l)
	}
	a := l.Areas[0]
	type row struct {
		Slot, Slots int
		Entry       DirEntry
		Name        string
	}
	var got []row
	for _, e := range a.Dirents {
		got = append(got, row{e.Slot, e.Slots, e.Entry, string(e.Name)})
		if e.User != nil {
			t.Fatalf("%q: a readdir name in an unencrypted directory", e.Name)
		}
	}
	want := []row{
		{0, 1, DirEntry{HashCode: 0, Ino: 10, NameLen: 1, FileType: FtDir}, "."},
		{1, 1, DirEntry{HashCode: 0, Ino: 3, NameLen: 2, FileType: FtDir}, ".."},
		{2, 1, DirEntry{HashCode: F2fsDentryHash([]byte("hello")), Ino: 11, NameLen: 5, FileType: FtRegFile}, "hello"},
		{3, 3, DirEntry{HashCode: F2fsDentryHash([]byte("a-much-longer-name")), Ino: 12, NameLen: 18, FileType: FtRegFile}, "a-much-longer-name"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("inline dirents (-want +got):\n%s", diff)
	}
	if a.Max != DefaultInlineGeometry.NrInlineDentry || a.Used != 6 || a.BadSlot != -1 {
		t.Fatalf("max %d used %d bad %d", a.Max, a.Used, a.BadSlot)
	}
}

// TestWalkDirentsLevels: a directory of several hash levels: every dentry
// block is reported with the level and bucket its page index belongs to,
// every dentry's hash falls in that bucket, the bitmap counts match the
// slots the names take, and every name is reported once.
func TestWalkDirentsLevels(t *testing.T) {
	for _, dirLevel := range []uint32{0, 1} {
		tk, dir := newTestDir(t, dirOpts{noInline: true, dirLevel: dirLevel})
		const n = 1500
		for i := 0; i < n; i++ {
			mustAdd(t, tk, dir, fmt.Sprintf("name-%05d", i), uint32(100+i))
		}
		l := WalkDirents(tk, dir)
		if l.Inline || l.Depth != dir.CurrentDepth || l.Depth < 2 || len(l.Areas) != len(dir.Pages()) {
			t.Fatalf("dir_level %d: layout depth %d, %d areas", dirLevel, l.Depth, len(l.Areas))
		}
		seen := map[string]bool{}
		levels := map[uint32]bool{}
		for _, a := range l.Areas {
			if a.Kind != AreaDentryBlock || !a.InTable || a.Max != NrDentryInBlock {
				t.Fatalf("page %d: %+v", a.Page, a)
			}
			levels[a.Level] = true
			if a.Buckets != DirBuckets(a.Level, dirLevel) || DirBlockIndex(a.Level, dirLevel, a.Bucket) > a.Page ||
				a.Page >= DirBlockIndex(a.Level, dirLevel, a.Bucket)+BucketBlocks(a.Level) {
				t.Fatalf("page %d: level %d bucket %d/%d", a.Page, a.Level, a.Bucket, a.Buckets)
			}
			used := 0
			for _, e := range a.Dirents {
				used += e.Slots
				name := string(e.Name)
				if seen[name] {
					t.Fatalf("%q twice", name)
				}
				seen[name] = true
				if name != "." && name != ".." && uint64(e.Entry.HashCode)%a.Buckets != a.Bucket {
					t.Fatalf("page %d: %q hash %08x outside bucket %d", a.Page, name, e.Entry.HashCode, a.Bucket)
				}
				if e.Slots != GetDentrySlots(int(e.Entry.NameLen)) || len(e.Name) != int(e.Entry.NameLen) {
					t.Fatalf("%q: %+v", name, e)
				}
			}
			if used != a.Used {
				t.Fatalf("page %d: names take %d slots, bitmap has %d", a.Page, used, a.Used)
			}
		}
		if len(seen) != n+2 || len(levels) < 2 {
			t.Fatalf("%d names over %d levels", len(seen), len(levels))
		}
	}
}

// TestWalkDirentsEncrypted: in an encrypted directory the walker gives the
// ciphertext and the name readdir shows: the plaintext with the key, and
// without it a no-key name that looks up to the same dentry.
func TestWalkDirentsEncrypted(t *testing.T) {
	tk, dir := newTestDir(t, dirOpts{casefold: true, encrypt: true, noInline: true})
	names := []string{"alpha", "Beta", strings.Repeat("long", 50)}
	for i, n := range names {
		mustAdd(t, tk, dir, n, uint32(100+i))
	}
	check := func(dir *Inode, withKey bool) {
		l := WalkDirents(tk, dir)
		if !l.Encrypt || !l.Casefold || l.HasKey != withKey {
			t.Fatalf("layout flags %+v", l)
		}
		found := 0
		for _, a := range l.Areas {
			for _, e := range a.Dirents {
				if isDotDotdotName(e.Name) {
					continue
				}
				found++
				if e.UserErr != nil {
					t.Fatalf("dirent %+v: %v", e, e.UserErr)
				}
				ino := int(e.Entry.Ino) - 100
				if ino < 0 || ino >= len(names) || bytes.Equal(e.Name, []byte(names[ino])) || len(e.Name)%16 != 0 {
					t.Fatalf("dirent %+v is not the ciphertext of a name", e)
				}
				if withKey {
					if string(e.User) != names[ino] {
						t.Fatalf("with the key: %q, want %q", e.User, names[ino])
					}
					continue
				}
				r, err := find(tk, dir, string(e.User))
				if err != nil || r == nil || r.Entry != e.Entry || !bytes.Equal(r.Name, e.Name) {
					t.Fatalf("no-key name %q: %v %v", e.User, r, err)
				}
			}
		}
		if found != len(names) {
			t.Fatalf("%d names walked", found)
		}
	}
	check(dir, true)
	check(keylessCopy(t, tk, dir), false)

	// A name_len of 4 leaves too little for a ciphertext: fscrypt's
	// EUCLEAN, and no readdir name.
	r := setNameLen(t, tk, dir, "alpha", 4)
	hit := false
	for _, a := range WalkDirents(tk, dir).Areas {
		for _, e := range a.Dirents {
			if a.Page != r.Page || e.Slot != r.BitPos {
				continue
			}
			hit = true
			if e.User != nil || e.UserErr != errno.EUCLEAN || len(e.Name) != 4 {
				t.Fatalf("short name: %+v", e)
			}
		}
	}
	if !hit {
		t.Fatal("the shortened dentry was not walked")
	}
}

// TestWalkDirentsCorrupt: a name_len past the area ends the walk of its
// area there, after the dentries before it.
func TestWalkDirentsCorrupt(t *testing.T) {
	tk, dir := newTestDir(t, dirOpts{noInline: true})
	mustAdd(t, tk, dir, "first", 11)
	mustAdd(t, tk, dir, "victim", 12)
	mustAdd(t, tk, dir, "after", 13)
	r := setNameLen(t, tk, dir, "victim", 0xfff0)
	a := WalkDirents(tk, dir).Areas[0]
	if a.BadSlot != r.BitPos || a.BadNameLen != 0xfff0 {
		t.Fatalf("bad slot %d len %d, want %d", a.BadSlot, a.BadNameLen, r.BitPos)
	}
	for _, e := range a.Dirents {
		if e.Slot >= r.BitPos {
			t.Fatalf("walked past the corrupt dentry: %+v", e)
		}
	}
	if !strings.Contains(DumpDir(tk, dir), fmt.Sprintf(" %d:!len=65520}", r.BitPos)) {
		t.Fatal(DumpDir(tk, dir))
	}
}
