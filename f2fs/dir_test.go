package f2fs

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// find is a lookup at the simulator boundary: a BUG or KASAN report comes
// back as the error.
func find(tk *kernel.Task, dir *Inode, name string) (r *DentryRef, err error) {
	defer tk.Recover(&err)
	return FindEntry(tk, dir, []byte(name))
}

func mustAdd(t testing.TB, tk *kernel.Task, dir *Inode, name string, ino uint32) {
	t.Helper()
	if err := AddLink(tk, dir, []byte(name), ino, SIfreg|0o644); err != nil {
		t.Fatalf("AddLink(%q): %v", name, err)
	}
}

func mustCheck(t testing.TB, tk *kernel.Task, dir *Inode) {
	t.Helper()
	if err := CheckDir(tk, dir); err != nil {
		t.Fatalf("CheckDir: %v\n%s", err, DumpDir(tk, dir))
	}
}

func listDir(t testing.TB, tk *kernel.Task, dir *Inode) []string {
	t.Helper()
	var names []string
	ctx := &DirContext{Actor: func(name []byte, ino uint32, dtype uint8) bool {
		names = append(names, fmt.Sprintf("%s:%d:%d", name, ino, dtype))
		return true
	}}
	if err := Readdir(tk, dir, ctx); err != nil {
		t.Fatalf("Readdir: %v", err)
	}
	return names
}

func TestGeometry(t *testing.T) {
	if SizeOfReserved != 3 || SizeOfDentryBitmap != 27 || dentryBlockFilenameOff+SlotLen*NrDentryInBlock != BlockSize {
		t.Fatalf("dentry block geometry: reserved %d bitmap %d", SizeOfReserved, SizeOfDentryBitmap)
	}
	g := DefaultInlineGeometry
	want := InlineGeometry{ExtraIsize: 0, InlineXattrAddrs: 50, MaxInlineData: 3488, NrInlineDentry: 182, BitmapSize: 23, ReservedSize: 7, Offset: 364}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Fatalf("default inline geometry (-want +got):\n%s", diff)
	}
	// Without inline xattrs: 3688 bytes, 192 dentries.
	if g := NewInlineGeometry(0, 0); g.MaxInlineData != 3688 || g.NrInlineDentry != 192 {
		t.Fatalf("no-xattr geometry %+v", g)
	}
	// With extra_attr (i_extra_isize 36, flexible inline xattr 200 words).
	if g := NewInlineGeometry(36, 200); g.Offset != 360+4*10 || g.MaxInlineData != 4*(923-9-200-1) {
		t.Fatalf("extra-attr geometry %+v", g)
	}
}

func TestHashTableArithmetic(t *testing.T) {
	cases := []struct {
		level, dirLevel uint32
		idx, want       uint64
	}{
		{0, 0, 0, 0}, {1, 0, 0, 2}, {1, 0, 1, 4}, {2, 0, 0, 6}, {2, 0, 3, 12},
		{0, 2, 3, 6}, {1, 2, 0, 8},
	}
	for _, c := range cases {
		if got := DirBlockIndex(c.level, c.dirLevel, c.idx); got != c.want {
			t.Errorf("DirBlockIndex(%d,%d,%d) = %d, want %d", c.level, c.dirLevel, c.idx, got, c.want)
		}
		l, b, ok := LevelOfBlock(c.want, c.dirLevel, 64)
		if !ok || l != c.level || b != c.idx {
			t.Errorf("LevelOfBlock(%d) = %d,%d,%v", c.want, l, b, ok)
		}
	}
	if DirBuckets(30, 0) != 1<<30 || DirBuckets(31, 0) != MaxDirBuckets || BucketBlocks(30) != 2 || BucketBlocks(31) != 4 {
		t.Fatal("bucket counts at the depth cap")
	}
}

func TestEmptyDirAndDots(t *testing.T) {
	for _, inline := range []bool{true, false} {
		tk, dir := newTestDir(t, dirOpts{noInline: !inline})
		mustCheck(t, tk, dir)
		if !EmptyDir(tk, dir) {
			t.Fatal("new directory not empty")
		}
		got := listDir(t, tk, dir)
		want := []string{".:10:4", "..:3:4"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("inline=%v readdir (-want +got):\n%s", inline, diff)
		}
		r, err := find(tk, dir, "..")
		if err != nil || r == nil || r.Entry.Ino != rootIno || r.Entry.HashCode != 0 {
			t.Fatalf("lookup ..: %v %v", r, err)
		}
		wantSize := int64(3488)
		if !inline {
			wantSize = BlockSize
		}
		if dir.Size() != wantSize {
			t.Fatalf("i_size %d, want %d", dir.Size(), wantSize)
		}
	}
}

func TestDumpGolden(t *testing.T) {
	tk, dir := newTestDir(t, dirOpts{})
	mustAdd(t, tk, dir, "hello", 11)
	mustAdd(t, tk, dir, "a-much-longer-name", 12)
	got := DumpDir(tk, dir)
	want := fmt.Sprintf(`f2fs dir ino=10 size=3488 depth=0 dir_level=0 inline blocks=0 {inline: slots=6/182 0:00000000/10/2/"." 1:00000000/3/2/".." 2:%08x/11/1/"hello" 3:%08x/12/1/"a-much-longer-name"}`,
		F2fsDentryHash([]byte("hello")), F2fsDentryHash([]byte("a-much-longer-name")))
	if got != want {
		t.Fatalf("dump:\n got %s\nwant %s", got, want)
	}
}

func TestInlineConversionAndGrowth(t *testing.T) {
	for _, dirLevel := range []uint32{0, 1} {
		t.Run(fmt.Sprint("dir_level=", dirLevel), func(t *testing.T) {
			tk, dir := newTestDir(t, dirOpts{dirLevel: dirLevel})
			const n = 3000
			for i := 0; i < n; i++ {
				mustAdd(t, tk, dir, fmt.Sprintf("file-%05d", i), uint32(100+i))
				if i < 200 || i%500 == 0 {
					mustCheck(t, tk, dir)
				}
			}
			mustCheck(t, tk, dir)
			if dir.Inline {
				t.Fatal("still inline after 3000 names")
			}
			if dir.CurrentDepth < 2 {
				t.Fatalf("depth %d after %d names", dir.CurrentDepth, n)
			}
			for i := 0; i < n; i++ {
				ino, err := InodeByName(tk, dir, []byte(fmt.Sprintf("file-%05d", i)))
				if err != nil || ino != uint32(100+i) {
					t.Fatalf("lookup %d: ino %d err %v", i, ino, err)
				}
			}
			if len(listDir(t, tk, dir)) != n+2 {
				t.Fatal("readdir count")
			}
			// Delete every other name; the rest stay findable.
			for i := 0; i < n; i += 2 {
				r, err := find(tk, dir, fmt.Sprintf("file-%05d", i))
				if err != nil || r == nil {
					t.Fatalf("find %d: %v", i, err)
				}
				if err := DeleteEntry(tk, dir, r); err != nil {
					t.Fatal(err)
				}
			}
			mustCheck(t, tk, dir)
			for i := 0; i < n; i++ {
				ino, _ := InodeByName(tk, dir, []byte(fmt.Sprintf("file-%05d", i)))
				if (i%2 == 0) != (ino == 0) {
					t.Fatalf("after deletes, %d -> ino %d", i, ino)
				}
			}
			if EmptyDir(tk, dir) {
				t.Fatal("EmptyDir with names left")
			}
		})
	}
}

func TestDeleteFreesEmptyBlocks(t *testing.T) {
	tk, dir := newTestDir(t, dirOpts{noInline: true})
	// The directory's block 0, and the root's dentry block (mkfs.f2fs's
	// root is not inline).
	start := dir.SB.Dev.InUse()
	for i := 0; i < 600; i++ {
		mustAdd(t, tk, dir, fmt.Sprintf("n%04d", i), uint32(100+i))
	}
	used := dir.SB.Dev.InUse()
	for i := 0; i < 600; i++ {
		r, _ := find(tk, dir, fmt.Sprintf("n%04d", i))
		if err := DeleteEntry(tk, dir, r); err != nil {
			t.Fatal(err)
		}
	}
	mustCheck(t, tk, dir)
	if !EmptyDir(tk, dir) {
		t.Fatal("not empty")
	}
	if got := dir.SB.Dev.InUse(); got != start || got >= used {
		t.Fatalf("blocks in use after deleting all: %d (was %d, %d before the names); only block 0 should stay", got, used, start)
	}
}

func TestReaddirResume(t *testing.T) {
	for _, inline := range []bool{true, false} {
		tk, dir := newTestDir(t, dirOpts{noInline: !inline})
		for i := 0; i < 500; i++ {
			mustAdd(t, tk, dir, fmt.Sprintf("r%03d", i), uint32(100+i))
		}
		all := listDir(t, tk, dir)
		// Read again three entries per call.
		var got []string
		ctx := &DirContext{}
		for {
			n := 0
			ctx.Actor = func(name []byte, ino uint32, dtype uint8) bool {
				if n == 3 {
					return false
				}
				n++
				got = append(got, fmt.Sprintf("%s:%d:%d", name, ino, dtype))
				return true
			}
			if err := Readdir(tk, dir, ctx); err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
		}
		if diff := cmp.Diff(all, got); diff != "" {
			t.Fatalf("resumed readdir differs (-all +resumed):\n%s", diff)
		}
	}
}

func TestEEXISTAndNameTooLong(t *testing.T) {
	tk, dir := newTestDir(t, dirOpts{})
	mustAdd(t, tk, dir, "x", 11)
	if err := AddLink(tk, dir, []byte("x"), 12, SIfreg); err != errno.EEXIST {
		t.Fatalf("duplicate add: %v", err)
	}
	if err := AddLink(tk, dir, []byte(strings.Repeat("a", 256)), 12, SIfreg); err != errno.ENAMETOOLONG {
		t.Fatalf("256-byte name: %v", err)
	}
	mustAdd(t, tk, dir, strings.Repeat("b", 255), 13)
	mustCheck(t, tk, dir)
}

func TestCasefoldLookup(t *testing.T) {
	for _, enc := range []bool{false, true} {
		tk, dir := newTestDir(t, dirOpts{casefold: true, encrypt: enc, noInline: true})
		mustAdd(t, tk, dir, "Straße", 11)
		for _, q := range []string{"Straße", "STRASSE", "strasse"} {
			r, err := find(tk, dir, q)
			if err != nil || r == nil || r.Entry.Ino != 11 {
				t.Fatalf("encrypt=%v lookup %q: %v %v", enc, q, r, err)
			}
		}
		if err := AddLink(tk, dir, []byte("STRASSE"), 12, SIfreg); err != errno.EEXIST {
			t.Fatalf("casefold duplicate: %v", err)
		}
		mustCheck(t, tk, dir)
		// The stored hash is the hash of the folded name.
		var f Filename
		if err := SetupFilename(tk, dir, []byte("STRASSE"), true, &f); err != nil {
			t.Fatal(err)
		}
		want := F2fsDentryHash([]byte("strasse"))
		if enc {
			key, ok := dirhashKey(dir)
			if !ok {
				t.Fatal("no dirhash key")
			}
			want = F2fsDentryHashSiphash([]byte("strasse"), key)
		}
		if f.Hash != want {
			t.Fatalf("hash %08x want %08x", f.Hash, want)
		}
		FreeFilename(tk, dir, &f)
	}
}

func TestStrictEncoding(t *testing.T) {
	bad := "bad\xff"
	tk, dir := newTestDir(t, dirOpts{casefold: true, flags: EncStrictModeFL})
	if err := AddLink(tk, dir, []byte(bad), 11, SIfreg); err != errno.EINVAL {
		t.Fatalf("strict: invalid UTF-8 add: %v", err)
	}
	tk, dir = newTestDir(t, dirOpts{casefold: true})
	mustAdd(t, tk, dir, bad, 11)
	if r, err := find(tk, dir, bad); err != nil || r == nil {
		t.Fatalf("non-strict: invalid name as raw bytes: %v %v", r, err)
	}
	if r, _ := find(tk, dir, "BAD\xff"); r != nil {
		t.Fatal("invalid UTF-8 matched case-insensitively")
	}
	mustCheck(t, tk, dir)
}

// plantStale writes a dentry for name whose hash_code is stale (as left by a
// kernel with another casefolding rule) into block 0 of a non-inline dir.
func plantStale(t testing.TB, tk *kernel.Task, dir *Inode, name string, ino uint32) {
	t.Helper()
	var f Filename
	if err := SetupFilename(tk, dir, []byte(name), false, &f); err != nil {
		t.Fatal(err)
	}
	defer FreeFilename(tk, dir, &f)
	d := MakeDentryPtrBlock(dir.findDataBlock(0))
	pos := RoomForFilename(&d, GetDentrySlots(len(f.DiskName)))
	d.UpdateDentry(ino, SIfreg, f.DiskName, f.Hash^0x40000000, pos)
}

func TestLinearFallback(t *testing.T) {
	cases := []struct {
		mode      LookupMode
		flags     uint16
		casefold  bool
		wantFound bool
	}{
		{LookupAuto, 0, true, true},
		{LookupAuto, EncNoCompatFallbackFL, true, false},
		{LookupPerf, 0, true, false},
		{LookupCompat, EncNoCompatFallbackFL, true, true},
		{LookupCompat, 0, false, false}, // only casefolded directories fall back
	}
	for _, c := range cases {
		name := fmt.Sprintf("%v/flags=%d/cf=%v", c.mode, c.flags, c.casefold)
		t.Run(name, func(t *testing.T) {
			tk, dir := newTestDir(t, dirOpts{casefold: c.casefold, noInline: true, mode: c.mode, flags: c.flags})
			for i := 0; i < 50; i++ {
				mustAdd(t, tk, dir, fmt.Sprintf("f%02d", i), uint32(100+i))
			}
			plantStale(t, tk, dir, "stale", 99)
			before := tk.Ev.Get(EvLinearFallback)
			r, err := find(tk, dir, "stale")
			if err != nil {
				t.Fatal(err)
			}
			if (r != nil) != c.wantFound {
				t.Fatalf("found=%v want %v", r != nil, c.wantFound)
			}
			fellBack := tk.Ev.Get(EvLinearFallback) - before
			if want := c.casefold && c.wantFound; (fellBack == 1) != want {
				t.Fatalf("linear fallbacks %d", fellBack)
			}
			// A miss in a casefolded directory with the fallback on compares
			// every dentry.
			cmpBefore := tk.Ev.Get(EvNamesCompared)
			if r, _ := find(tk, dir, "absent"); r != nil {
				t.Fatal("found absent")
			}
			compared := tk.Ev.Get(EvNamesCompared) - cmpBefore
			if c.casefold && shouldFallbackToLinear(dir) && compared < 53 {
				t.Fatalf("linear miss compared %d dentries, want all 53", compared)
			}
			if !shouldFallbackToLinear(dir) && compared > 3 {
				t.Fatalf("hashed miss compared %d dentries", compared)
			}
		})
	}
}

func TestParseLookupMode(t *testing.T) {
	for _, s := range []string{"auto", "perf", "compat"} {
		m, err := ParseLookupMode(s)
		if err != nil || m.String() != s {
			t.Fatalf("%s: %v %v", s, m, err)
		}
	}
	if _, err := ParseLookupMode("fast"); err != errno.EINVAL {
		t.Fatal("bad mode accepted")
	}
}

func TestCorruptNameLen(t *testing.T) {
	tk, dir := newTestDir(t, dirOpts{noInline: true, casefold: true})
	mustAdd(t, tk, dir, "victim", 11)
	setNameLen(t, tk, dir, "victim", 0xfff0) // name_len past the block
	_, err := find(tk, dir, "victim")
	if !errors.Is(err, errno.EFSCORRUPTED) {
		t.Fatalf("lookup of corrupt dentry: %v", err)
	}
	if !tk.K.Log.Contains("corrupted namelen=65520") {
		t.Fatalf("no log line: %v", tk.K.Log.Lines())
	}
	ctx := &DirContext{Actor: func([]byte, uint32, uint8) bool { return true }}
	if err := Readdir(tk, dir, ctx); !errors.Is(err, errno.EFSCORRUPTED) {
		t.Fatalf("readdir: %v", err)
	}
	if err := CheckDir(tk, dir); !IsCorrupt(err) {
		t.Fatalf("check: %v", err)
	}
}

func TestCheckerFindsCorruption(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(d *DentryPtr, pos int)
		want   string
	}{
		{"bitmap over empty slot", func(d *DentryPtr, pos int) { d.setBit(100) }, "bitmap bit set over an empty slot"},
		{"wrong hash", func(d *DentryPtr, pos int) {
			e := d.Entry(pos)
			e.HashCode ^= 1
			d.putEntry(pos, e)
		}, "hashes to"},
		{"overlap", func(d *DentryPtr, pos int) {
			d.putEntry(pos+1, DirEntry{Ino: 5, NameLen: 3})
		}, "overlaps"},
		{"continuation missing", func(d *DentryPtr, pos int) { d.clearBit(pos + 1) }, "continuation slot"},
		{"bad file type", func(d *DentryPtr, pos int) {
			e := d.Entry(pos)
			e.FileType = 9
			d.putEntry(pos, e)
		}, "file type 9"},
		{"dot missing", func(d *DentryPtr, pos int) { d.clearBit(0) }, `slot 0 is not "."`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tk, dir := newTestDir(t, dirOpts{noInline: true})
			mustAdd(t, tk, dir, "a-long-name-of-3-slots", 11)
			r, _ := find(tk, dir, "a-long-name-of-3-slots")
			d := MakeDentryPtrBlock(dir.findDataBlock(r.Page))
			c.mutate(&d, r.BitPos)
			err := CheckDir(tk, dir)
			if !IsCorrupt(err) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("CheckDir = %v, want %q", err, c.want)
			}
			if !tk.K.Log.Contains("run fsck to fix") {
				t.Fatal("no log line")
			}
		})
	}
}

func TestCorruptMaxDepth(t *testing.T) {
	tk, dir := newTestDir(t, dirOpts{noInline: true})
	mustAdd(t, tk, dir, "x", 11)
	dir.CurrentDepth = 100
	if ino, err := InodeByName(tk, dir, []byte("x")); err != nil || ino != 11 {
		t.Fatalf("lookup: %d %v", ino, err)
	}
	if dir.CurrentDepth != MaxDirHashDepth || !tk.K.Log.Contains("Corrupted max_depth of 10: 100") {
		t.Fatalf("depth %d, log %v", dir.CurrentDepth, tk.K.Log.Lines())
	}
	if err := AddLink(tk, dir, []byte("y"), 12, SIfreg); err == nil {
		t.Fatal("add at MAX_DIR_HASH_DEPTH succeeded")
	}
}
