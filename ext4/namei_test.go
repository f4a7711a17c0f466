package ext4

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

const parentIno = 2

type dirOpts struct {
	casefold, encrypt, noCsum, largeDir, noDirIndex bool
	legacyHash                                      bool
	hashVersion                                     uint8 // 0: half_md4
	flags                                           uint16
	seed                                            [4]uint32
}

func newTestDir(t testing.TB, o dirOpts) (*kernel.Task, *Inode) {
	t.Helper()
	tk := kernel.New().NewTask("test")
	tk.EnableCounting()
	t.Cleanup(tk.Exit)
	sb := testSB(t, tk)
	sb.SetUUID([16]byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	sb.MetadataCsum = !o.noCsum
	sb.LargeDir = o.largeDir
	sb.DirIndex = !o.noDirIndex
	sb.DefHashVersion = o.hashVersion
	if o.hashVersion == 0 {
		sb.DefHashVersion = DxHashHalfMD4
	}
	if o.legacyHash {
		sb.DefHashVersion = DxHashLegacy
	}
	sb.EncodingFlags = o.flags
	sb.HashSeed = o.seed
	if o.casefold {
		sb.Encoding = asciiFold{}
	}
	dir := testDirInode(t, tk, sb, 12, 0x1234abcd, o.casefold)
	if o.encrypt {
		encryptDir(t, tk, dir)
	}
	if err := InitNewDir(tk, dir, parentIno); err != nil {
		t.Fatal(err)
	}
	return tk, dir
}

func find(tk *kernel.Task, dir *Inode, name string) (r *DentryRef, err error) {
	defer tk.Recover(&err)
	return FindEntry(tk, dir, []byte(name))
}

func mustAdd(t testing.TB, tk *kernel.Task, dir *Inode, name string, ino uint32) {
	t.Helper()
	if err := AddEntry(tk, dir, []byte(name), ino, SIfreg|0o644); err != nil {
		t.Fatalf("AddEntry(%q): %v\n%s", name, err, DumpDir(tk, dir))
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
	var out []string
	ctx := &DirContext{Actor: func(name []byte, ino uint32, dt uint8) bool {
		out = append(out, fmt.Sprintf("%s:%d:%d", name, ino, dt))
		return true
	}}
	if err := Readdir(tk, dir, ctx); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRecLen(t *testing.T) {
	for _, c := range []struct{ n, want, wantHash int }{{1, 12, 20}, {2, 12, 20}, {4, 12, 20}, {5, 16, 24}, {255, 264, 272}, {0, 8, 16}} {
		if DirRecLen(c.n, false) != c.want || DirRecLen(c.n, true) != c.wantHash {
			t.Errorf("DirRecLen(%d) = %d/%d", c.n, DirRecLen(c.n, false), DirRecLen(c.n, true))
		}
	}
	// 64 KiB blocks on 64 KiB pages: 65536 is stored as 65535, lengths
	// past 16 bits use the low bits.
	for _, l := range []int{12, 4096, 65532, 65536, 65536 + 4, 131072 - 4} {
		d, ok := RecLenToDisk(l, 1<<17, 65536)
		if !ok || RecLenFromDisk(d, 1<<17, 65536) != l {
			t.Errorf("rec_len %d -> %d (%v) -> %d", l, d, ok, RecLenFromDisk(d, 1<<17, 65536))
		}
	}
	if d, _ := RecLenToDisk(65536, 65536, 65536); d != MaxRecLen || RecLenFromDisk(0, 65536, 65536) != 65536 {
		t.Error("EXT4_MAX_REC_LEN")
	}
}

func TestCrc32c(t *testing.T) {
	// crc32c("123456789") = e3069283 (the standard check value); the raw
	// form chains: Crc32c(~0, a||b) == Crc32c(Crc32c(~0, a), b).
	if got := ^Crc32c(^uint32(0), []byte("123456789")); got != 0xe3069283 {
		t.Fatalf("crc32c check value %08x", got)
	}
	if Crc32c(^uint32(0), []byte("1234")) == 0 || Crc32c(Crc32c(^uint32(0), []byte("1234")), []byte("56789")) != Crc32c(^uint32(0), []byte("123456789")) {
		t.Fatal("chaining")
	}
}

func TestInitNewDir(t *testing.T) {
	for _, csum := range []bool{true, false} {
		tk, dir := newTestDir(t, dirOpts{noCsum: !csum})
		mustCheck(t, tk, dir)
		got := DumpDir(tk, dir)
		want := "ext4 dir ino=12 size=4096 blocks=1 csum {block 0: 0:12/12/2/\".\" 12:2/4072/2/\"..\" tail="
		if !csum {
			want = "ext4 dir ino=12 size=4096 blocks=1 {block 0: 0:12/12/2/\".\" 12:2/4084/2/\"..\"}"
		}
		if !strings.HasPrefix(got, want) {
			t.Fatalf("dump:\n got %s\nwant %s", got, want)
		}
		if !EmptyDir(tk, dir) {
			t.Fatal("not empty")
		}
		if diff := cmp.Diff([]string{".:12:4", "..:2:4"}, listDir(t, tk, dir)); diff != "" {
			t.Fatal(diff)
		}
	}
}

func TestLinearThenHtree(t *testing.T) {
	for _, o := range []dirOpts{{}, {noCsum: true}, {hashVersion: DxHashTEA}, {legacyHash: true, seed: [4]uint32{1, 2, 3, 4}}, {casefold: true}, {casefold: true, encrypt: true}, {encrypt: true}} {
		t.Run(fmt.Sprintf("%+v", o), func(t *testing.T) {
			tk, dir := newTestDir(t, o)
			const n = 3000
			for i := 0; i < n; i++ {
				mustAdd(t, tk, dir, fmt.Sprintf("entry-%05d", i), uint32(100+i))
				if i < 300 || i%300 == 0 {
					mustCheck(t, tk, dir)
				}
			}
			mustCheck(t, tk, dir)
			if !dir.IsDx() {
				t.Fatal("not an htree after 3000 names")
			}
			for i := 0; i < n; i++ {
				ino, err := InodeByName(tk, dir, []byte(fmt.Sprintf("entry-%05d", i)))
				if err != nil || ino != uint32(100+i) {
					t.Fatalf("lookup %d: %d %v", i, ino, err)
				}
			}
			if got := listDir(t, tk, dir); len(got) != n+2 || got[0] != ".:12:4" || got[1] != "..:2:4" {
				t.Fatalf("readdir: %d entries, starts %v", len(got), got[:2])
			}
			for i := 0; i < n; i += 3 {
				r, err := find(tk, dir, fmt.Sprintf("entry-%05d", i))
				if err != nil || r == nil {
					t.Fatal(err)
				}
				if err := DeleteEntry(tk, dir, r); err != nil {
					t.Fatal(err)
				}
			}
			mustCheck(t, tk, dir)
			for i := 0; i < n; i++ {
				ino, _ := InodeByName(tk, dir, []byte(fmt.Sprintf("entry-%05d", i)))
				if (i%3 == 0) != (ino == 0) {
					t.Fatalf("after deletes: %d -> %d", i, ino)
				}
			}
		})
	}
}

// TestTwoLevelHtree grows an htree past the root's 507 leaves (long names,
// about ten per leaf) so that index nodes are split and a level is added.
func TestTwoLevelHtree(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	tk, dir := newTestDir(t, dirOpts{})
	name := func(i int) string { return fmt.Sprintf("%05d-%s", i, strings.Repeat("n", 240)) }
	const n = 9000
	for i := 0; i < n; i++ {
		mustAdd(t, tk, dir, name(i), uint32(100+i))
	}
	if lv := readDxRootInfo(dir.BlockAt(0)).indirectLevels; lv != 1 {
		t.Fatalf("indirect levels %d", lv)
	}
	mustCheck(t, tk, dir)
	for i := 0; i < n; i += 7 {
		if ino, err := InodeByName(tk, dir, []byte(name(i))); ino != uint32(100+i) || err != nil {
			t.Fatalf("%d: %d %v", i, ino, err)
		}
	}
}

func TestEEXISTAndStrict(t *testing.T) {
	tk, dir := newTestDir(t, dirOpts{casefold: true, flags: EncStrictModeFL})
	mustAdd(t, tk, dir, "Name", 20)
	if err := AddEntry(tk, dir, []byte("NAME"), 21, SIfreg); err != errno.EEXIST {
		t.Fatalf("casefold duplicate: %v", err)
	}
	if err := AddEntry(tk, dir, []byte("bad\xff"), 21, SIfreg); err != errno.EINVAL {
		t.Fatalf("strict invalid UTF-8: %v", err)
	}
	if err := AddEntry(tk, dir, []byte(strings.Repeat("x", 256)), 21, SIfreg); err != errno.ENAMETOOLONG {
		t.Fatalf("long name: %v", err)
	}
}

// plantStale adds name with the hash of another name, as a kernel with
// another casefolding rule would have: it lands in the wrong leaf.
func plantStale(t testing.TB, tk *kernel.Task, dir *Inode, name, hashedAs string, ino uint32) {
	t.Helper()
	f, err := SetupFilename(tk, dir, []byte(name), false)
	if err != nil {
		t.Fatal(err)
	}
	defer FreeFilename(tk, f)
	g, _ := SetupFilename(tk, dir, []byte(hashedAs), false)
	frames, err := dxProbe(tk, dir, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	lblk := frames[len(frames)-1].entries.block(frames[len(frames)-1].at)
	f.Hinfo = g.Hinfo
	if err := addDirentToBuf(tk, dir, f, ino, SIfreg, dir.BlockAt(lblk), lblk, -1); err != nil {
		t.Fatal(err)
	}
	FreeFilename(tk, g)
}

func TestCasefoldFallback(t *testing.T) {
	for _, noFallback := range []bool{false, true} {
		var flags uint16
		if noFallback {
			flags = EncNoCompatFallbackFL
		}
		tk, dir := newTestDir(t, dirOpts{casefold: true, flags: flags})
		for i := 0; i < 400; i++ {
			mustAdd(t, tk, dir, fmt.Sprintf("f%03d", i), uint32(100+i))
		}
		// Find a name whose leaf differs from "stale"'s.
		var other string
		for i := 0; other == ""; i++ {
			c := fmt.Sprintf("zz%d", i)
			g1, _ := SetupFilename(tk, dir, []byte(c), true)
			g2, _ := SetupFilename(tk, dir, []byte("stale"), true)
			f1, _ := dxProbe(tk, dir, g1, nil)
			f2, _ := dxProbe(tk, dir, g2, nil)
			if f1[0].entries.block(f1[0].at) != f2[0].entries.block(f2[0].at) {
				other = c
			}
		}
		plantStale(t, tk, dir, "stale", other, 99)
		before := tk.Ev.Get(EvLinearFallback)
		r, err := find(tk, dir, "STALE")
		if err != nil {
			t.Fatal(err)
		}
		if (r != nil) == noFallback {
			t.Fatalf("noFallback=%v: found %v", noFallback, r)
		}
		if got := tk.Ev.Get(EvLinearFallback) - before; (got == 1) == noFallback {
			t.Fatalf("fallbacks %d", got)
		}
	}
}

func TestCorruptBlocks(t *testing.T) {
	t.Run("rec_len past the block", func(t *testing.T) {
		tk, dir := newTestDir(t, dirOpts{noCsum: true, noDirIndex: true})
		mustAdd(t, tk, dir, "a", 20)
		mustAdd(t, tk, dir, "b", 21)
		r, _ := find(tk, dir, "a")
		b := dir.BlockAt(r.Lblk)
		b[r.Off+4], b[r.Off+5] = 0x40, 0x1f // 8000
		if err := AddEntry(tk, dir, []byte("c"), 22, SIfreg); !IsCorrupt(err) {
			t.Fatalf("add: %v", err)
		}
		if !tk.K.Log.Contains("EXT4-fs error") || !tk.K.Log.Contains("directory entry overrun") {
			t.Fatalf("log: %v", tk.K.Log.Lines())
		}
		got := listDir(t, tk, dir) // the bad block is skipped after "." and ".."
		if len(got) != 2 {
			t.Fatalf("readdir: %v", got)
		}
		if err := CheckDir(tk, dir); !IsCorrupt(err) || !strings.Contains(err.Error(), "runs past the block") {
			t.Fatalf("check: %v", err)
		}
		if err := DeleteEntry(tk, dir, r); !IsCorrupt(err) {
			t.Fatalf("delete: %v", err)
		}
	})
	t.Run("rec_len zero", func(t *testing.T) {
		tk, dir := newTestDir(t, dirOpts{noCsum: true, noDirIndex: true})
		mustAdd(t, tk, dir, "a", 20)
		r, _ := find(tk, dir, "a")
		setRecLen(dir.BlockAt(0), r.Off, 0)
		if _, err := find(tk, dir, "zzz"); !IsCorrupt(err) {
			t.Fatalf("lookup: %v", err)
		}
	})
	t.Run("name_len too big", func(t *testing.T) {
		tk, dir := newTestDir(t, dirOpts{noCsum: true})
		mustAdd(t, tk, dir, "a", 20)
		r, _ := find(tk, dir, "a")
		b := dir.BlockAt(0)
		setRecLen(b, r.Off, 12)
		setRecLen(b, r.Off+12, BlockSize-r.Off-12)
		b[r.Off+6] = 200
		if err := CheckDir(tk, dir); !IsCorrupt(err) {
			t.Fatal("check passed")
		}
		if _, err := find(tk, dir, "a"); err != nil {
			t.Fatalf("lookup: %v", err)
		}
	})
	t.Run("checksum", func(t *testing.T) {
		tk, dir := newTestDir(t, dirOpts{})
		mustAdd(t, tk, dir, "a", 20)
		b := dir.BlockAt(0)
		b[40] ^= 1
		dir.SB.Dev.Unverify(dir.PhysBlock(0))
		if _, err := find(tk, dir, "zzz"); err != EFSBADCRC {
			t.Fatalf("lookup: %v", err)
		}
		if err := CheckDir(tk, dir); !IsCorrupt(err) || !strings.Contains(err.Error(), "checksum") {
			t.Fatalf("check: %v", err)
		}
	})
	t.Run("bad dx root falls back", func(t *testing.T) {
		tk, dir := newTestDir(t, dirOpts{noCsum: true})
		for i := 0; i < 500; i++ {
			mustAdd(t, tk, dir, fmt.Sprintf("n%03d", i), uint32(100+i))
		}
		e := dxEntries{b: dir.BlockAt(0), off: dxRootEntriesOff}
		e.setLimit(e.limit() + 1)
		ino, err := InodeByName(tk, dir, []byte("n123"))
		if err != nil || ino != 223 {
			t.Fatalf("lookup through the linear fallback: %d %v", ino, err)
		}
		if !tk.K.Log.Contains("dx entry: limit 509 != root limit 508") || !tk.K.Log.Contains("Corrupt directory, running e2fsck is recommended") {
			t.Fatalf("log: %v", tk.K.Log.Lines())
		}
		if err := CheckDir(tk, dir); !IsCorrupt(err) {
			t.Fatal("check passed")
		}
	})
}

func TestReaddirOrder(t *testing.T) {
	// A linear directory without dir_index lists in block order; with
	// dir_index even one block lists in hash order.
	tk, dir := newTestDir(t, dirOpts{noDirIndex: true})
	for _, n := range []string{"c", "a", "b"} {
		mustAdd(t, tk, dir, n, 20)
	}
	if diff := cmp.Diff([]string{".:12:4", "..:2:4", "c:20:8", "a:20:8", "b:20:8"}, listDir(t, tk, dir)); diff != "" {
		t.Fatal(diff)
	}
	tk, dir = newTestDir(t, dirOpts{})
	for _, n := range []string{"c", "a", "b"} {
		mustAdd(t, tk, dir, n, 20)
	}
	got := listDir(t, tk, dir)
	var hashes []uint32
	for _, e := range got {
		name := strings.SplitN(e, ":", 2)[0]
		h := DxHashInfo{HashVersion: dir.SB.DefHashVersion + dir.SB.HashUnsigned}
		if err := Ext4fsDirhash([]byte(name), &h, nil); err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, h.Hash)
	}
	for i := 1; i < len(hashes); i++ {
		if hashes[i] < hashes[i-1] {
			t.Fatalf("one-block dx readdir not in hash order: %v %x", got, hashes)
		}
	}
}

func TestDeleteMergesIntoPrevious(t *testing.T) {
	tk, dir := newTestDir(t, dirOpts{noDirIndex: true})
	mustAdd(t, tk, dir, "aaaa", 20)
	mustAdd(t, tk, dir, "bbbb", 21)
	mustAdd(t, tk, dir, "cccc", 22)
	r, _ := find(tk, dir, "bbbb")
	if err := DeleteEntry(tk, dir, r); err != nil {
		t.Fatal(err)
	}
	got := DumpBlock(tk, dir, 0)
	want := `block 0: 0:12/12/2/"." 12:2/12/2/".." 24:20/24/1/"aaaa" 48:22/4036/1/"cccc" tail=`
	if !strings.HasPrefix(got, want) {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
	mustCheck(t, tk, dir)
	if err := DeleteEntry(tk, dir, r); err != errno.ENOENT {
		t.Fatalf("stale ref: %v", err)
	}
}

func TestErrorsAreErrnos(t *testing.T) {
	tk, dir := newTestDir(t, dirOpts{})
	_, err := find(tk, dir, strings.Repeat("x", 300))
	if err != errno.ENAMETOOLONG {
		t.Fatalf("%v", err)
	}
	if errors.Is(err, errno.EFSCORRUPTED) {
		t.Fatal("ENAMETOOLONG is not corruption")
	}
}

// TestHtreeLookupBounded: an htree lookup compares at most the names of one
// or two leaves, whatever the directory size; in a casefolded encrypted
// directory with the no-compat-fallback flag ext4_match first compares the
// stored hashes, so only the matching name is decrypted.
func TestHtreeLookupBounded(t *testing.T) {
	for _, flags := range []uint16{0, EncNoCompatFallbackFL} {
		for _, n := range []int{1000, 20000} {
			tk, dir := newTestDir(t, dirOpts{casefold: true, encrypt: true, flags: flags})
			dir.SB.InodesCount = 1 << 20
			for i := 0; i < n; i++ {
				mustAdd(t, tk, dir, fmt.Sprintf("file-%06d", i), uint32(100+i))
			}
			ev0 := tk.Ev.Clone()
			const probes = 300
			for i := 0; i < probes; i++ {
				if r, _ := find(tk, dir, fmt.Sprintf("FILE-%06d", i*(n/probes))); r == nil {
					t.Fatal("miss")
				}
			}
			d := tk.Ev.Sub(ev0)
			dec := float64(d.Get(EvNameDecrypts)) / probes
			t.Logf("flags=%d n=%d: %.1f names decrypted per hit", flags, n, dec)
			limit := 2.0 * BlockSize / float64(DirRecLen(11, true))
			if flags != 0 {
				limit = 1.01
			}
			if dec > limit {
				t.Fatalf("flags=%d n=%d: %.1f decrypts per hit, limit %.1f", flags, n, dec, limit)
			}
		}
	}
}

// TestHtreeContinuation: a name whose hash equals the next leaf's starting
// hash with the continuation bit set is searched for in that next leaf too
// (ext4_htree_next_block); without the bit the search stops.
func TestHtreeContinuation(t *testing.T) {
	for _, cont := range []bool{true, false} {
		tk, dir := newTestDir(t, dirOpts{noCsum: true})
		for i := 0; i < 120; i++ {
			mustAdd(t, tk, dir, fmt.Sprintf("%03d-%s", i, strings.Repeat("q", 30)), uint32(100+i))
		}
		root := dxEntries{b: dir.BlockAt(0), off: dxRootEntriesOff}
		if root.count() < 2 {
			t.Fatal("need two leaves")
		}
		f, _ := SetupFilename(tk, dir, []byte("collider"), false)
		if _, err := dxProbe(tk, dir, f, nil); err != nil {
			t.Fatal(err)
		}
		h := f.Hinfo.Hash
		// Leaf 1 starts at h (continued): put the name there.
		start := h + 2
		if cont {
			start = h | 1
		}
		root.setHash(1, start)
		lblk := root.block(1)
		if err := addDirentToBuf(tk, dir, f, 999, SIfreg, dir.BlockAt(lblk), lblk, -1); err != nil {
			t.Fatal(err)
		}
		r, err := find(tk, dir, "collider")
		if err != nil || (r != nil) != cont {
			t.Fatalf("continued=%v: found %v (%v)", cont, r, err)
		}
	}
}

// TestIsCasefoldedNeedsEncoding: IS_CASEFOLDED for the directory code is
// S_CASEFOLD on a superblock with an encoding: without one, a directory
// flagged casefolded looks names up exactly, as before the one inode.
func TestIsCasefoldedNeedsEncoding(t *testing.T) {
	tk := kernel.New().NewTask("test")
	t.Cleanup(tk.Exit)
	sb := testSB(t, tk)
	if sb.Encoding != nil {
		t.Fatal("default mount has an encoding")
	}
	dir := testDirInode(t, tk, sb, 12, 1, true)
	if err := InitNewDir(tk, dir, parentIno); err != nil {
		t.Fatal(err)
	}
	if !dir.Inode.IsCasefolded() || dir.IsCasefolded() || dir.HashInDirent() {
		t.Fatalf("S_CASEFOLD %v, IS_CASEFOLDED %v without an encoding", dir.Inode.IsCasefolded(), dir.IsCasefolded())
	}
	mustAdd(t, tk, dir, "Name", 20)
	if r, err := find(tk, dir, "name"); r != nil || err != nil {
		t.Fatalf("exact lookup found %v %v", r, err)
	}
	sb.Encoding = asciiFold{}
	if !dir.IsCasefolded() {
		t.Fatal("not casefolded with an encoding")
	}
	if r, err := find(tk, dir, "name"); r == nil || err != nil || r.Entry.Inode != 20 {
		t.Fatalf("casefolded lookup: %v %v", r, err)
	}
	dir.Flags &^= CasefoldFL
	dir.SetInodeFlags()
	if dir.Inode.IsCasefolded() || dir.IsCasefolded() {
		t.Fatal("S_CASEFOLD does not follow EXT4_CASEFOLD_FL")
	}
}
