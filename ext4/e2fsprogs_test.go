package ext4

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/kernel"
)

// The tests in this file check the directory code against e2fsprogs, an
// independent implementation: directories that mke2fs -d and e2fsck -D
// build are read back (checker, every lookup, readdir), and directories
// this package builds are written into an image whose e2fsck -fn must then
// be clean. They need mke2fs, tune2fs, debugfs, dumpe2fs and e2fsck on the
// PATH and are skipped without them (and with -short).

func needTools(t *testing.T, tools ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("image tests are slow")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// imageDir is what a test learns about directory /d of an image.
type imageDir struct {
	ino, gen, flags uint32
	size            int64
	pblks           []uint32
	uuid            [16]byte
	hashSeed        [16]byte
	defHash         uint8
	unsigned        bool
	inodes          uint32
	csum, casefold  bool
}

var hashNames = map[string]uint8{"legacy": DxHashLegacy, "half_md4": DxHashHalfMD4, "tea": DxHashTEA}

func parseUUID(t *testing.T, s string) (u [16]byte) {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(s), "-", ""))
	if err != nil || len(b) != 16 {
		t.Fatalf("uuid %q", s)
	}
	copy(u[:], b)
	return u
}

func field(t *testing.T, out, re string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q in:\n%s", re, out)
	}
	return m[1]
}

func inspect(t *testing.T, img string) imageDir {
	t.Helper()
	var d imageDir
	h := run(t, "dumpe2fs", "-h", img)
	d.uuid = parseUUID(t, field(t, h, `Filesystem UUID:\s+(\S+)`))
	d.hashSeed = parseUUID(t, field(t, h, `Directory Hash Seed:\s+(\S+)`))
	d.defHash = hashNames[field(t, h, `Default directory hash:\s+(\S+)`)]
	d.unsigned = strings.Contains(field(t, h, `Filesystem flags:\s+(.*)`), "unsigned_directory_hash")
	n, _ := strconv.Atoi(field(t, h, `Inode count:\s+(\d+)`))
	d.inodes = uint32(n)
	feats := field(t, h, `Filesystem features:\s+(.*)`)
	d.csum = strings.Contains(feats, "metadata_csum")
	st := run(t, "debugfs", "-R", "stat /d", img)
	num := func(re string, base int) uint32 {
		v, err := strconv.ParseUint(field(t, st, re), base, 32)
		if err != nil {
			t.Fatal(err)
		}
		return uint32(v)
	}
	d.ino = num(`Inode:\s+(\d+)`, 10)
	d.gen = num(`Generation:\s+(\d+)`, 10)
	d.flags = num(`Flags:\s+0x([0-9a-f]+)`, 16)
	d.casefold = d.flags&CasefoldFL != 0
	sz, _ := strconv.ParseInt(field(t, st, `Size:\s+(\d+)`), 10, 64)
	d.size = sz
	for _, f := range strings.Fields(run(t, "debugfs", "-R", "blocks /d", img)) {
		if v, err := strconv.ParseUint(f, 10, 32); err == nil {
			d.pblks = append(d.pblks, uint32(v))
		}
	}
	return d
}

// dirFromImage builds an Inode over /d's blocks as read from the image.
func dirFromImage(t *testing.T, d imageDir, raw [][]byte) (*kernel.Task, *Inode) {
	tk := kernel.New().NewTask("e2fs")
	tk.EnableCounting()
	t.Cleanup(tk.Exit)
	sb := testSB(t, tk)
	sb.SetUUID(d.uuid)
	sb.MetadataCsum = d.csum
	sb.HashSeed = HashSeedWords(&d.hashSeed)
	sb.DefHashVersion = d.defHash
	sb.HashUnsigned = 0
	if d.unsigned {
		sb.HashUnsigned = 3
	}
	sb.InodesCount = d.inodes
	if d.casefold {
		sb.Encoding = asciiFold{}
	}
	dir := testDirInode(t, tk, sb, d.ino, d.gen, false)
	dir.Flags = d.flags
	dir.SetInodeFlags()
	dir.SetBlocks(raw)
	return tk, dir
}

func readBlocks(t *testing.T, img string, pblks []uint32) [][]byte {
	t.Helper()
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	for _, p := range pblks {
		b := make([]byte, BlockSize)
		if _, err := f.ReadAt(b, int64(p)*BlockSize); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func testNames(casefold bool, n int) []string {
	r := rand.New(rand.NewSource(int64(n)))
	var names []string
	seen := map[string]bool{}
	for len(names) < n {
		var s string
		switch i := len(names); {
		case i%50 == 0:
			s = fmt.Sprintf("%03d%s", i, strings.Repeat("Long", 63)) // 255 bytes
		case !casefold && i%7 == 0:
			s = fmt.Sprintf("h\xc3\xa9\xe2\x82\xac\xff-%d", i) // bytes >= 0x80 (and not UTF-8)
		default:
			s = fmt.Sprintf("File-%d-%x", i, r.Int63())
		}
		key := s
		if casefold {
			key = strings.ToLower(s)
		}
		if !seen[key] {
			seen[key] = true
			names = append(names, s)
		}
	}
	return names
}

func TestE2fsprogsInterop(t *testing.T) {
	needTools(t, "mke2fs", "tune2fs", "debugfs", "dumpe2fs", "e2fsck")
	cases := []struct {
		name, features, hash string
		casefold             bool
		n                    int
	}{
		{"csum-half_md4", "metadata_csum", "half_md4", false, 700},
		{"nocsum-tea", "^metadata_csum", "tea", false, 700},
		{"csum-legacy-small", "metadata_csum", "legacy", false, 60},
		{"casefold", "metadata_csum,casefold", "half_md4", true, 700},
		{"fixture-csum-half_md4", "metadata_csum", "half_md4", false, 200},
		{"fixture-casefold-tea", "metadata_csum,casefold", "tea", true, 200},
		{"fixture-nocsum-legacy", "^metadata_csum", "legacy", false, 200},
		{"two-level", "metadata_csum,large_dir", "half_md4", false, -11000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			src := filepath.Join(tmp, "src")
			if err := os.MkdirAll(filepath.Join(src, "d"), 0o755); err != nil {
				t.Fatal(err)
			}
			n := c.n
			if n < 0 {
				if os.Getenv("VFSLAB_LONG") == "" {
					t.Skip("set VFSLAB_LONG=1 for the 11000-name two-level htree")
				}
				n = -n
			}
			names := testNames(c.casefold, n)
			if c.n < 0 {
				for i := range names {
					names[i] = fmt.Sprintf("%s-%s", names[i], strings.Repeat("x", 240))[:240]
				}
			}
			for _, n := range names {
				if err := os.WriteFile(filepath.Join(src, "d", n), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			mkimg := func(img string, index bool) {
				ext := "hash_seed=5a4d2c1b-0f3e-4d5c-8b7a-69584736251a"
				if c.casefold {
					ext += ",encoding=utf8"
				}
				run(t, "mke2fs", "-q", "-F", "-t", "ext4", "-b", "4096", "-N", "16384", "-O", c.features,
					"-U", "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9fa", "-E", ext, "-d", src, img, "32M")
				run(t, "tune2fs", "-E", "hash_alg="+c.hash, img)
				if c.casefold {
					st := run(t, "debugfs", "-R", "stat /d", img)
					fl, _ := strconv.ParseUint(field(t, st, `Flags:\s+0x([0-9a-f]+)`), 16, 32)
					run(t, "debugfs", "-w", "-R", fmt.Sprintf("set_inode_field /d flags 0x%x", uint32(fl)|CasefoldFL), img)
				}
				if index {
					// e2fsck -D (re)builds every directory as e2fsprogs lays them out.
					exec.Command("e2fsck", "-fyD", img).Run()
				}
				run(t, "e2fsck", "-fn", img)
			}
			img := filepath.Join(tmp, "img")
			mkimg(img, true)

			// Read: e2fsprogs' directory through this package.
			d := inspect(t, img)
			tk, dir := dirFromImage(t, d, readBlocks(t, img, d.pblks))
			if err := CheckDir(tk, dir); err != nil {
				t.Fatalf("e2fsprogs' directory fails CheckDir: %v", err)
			}
			inos := map[string]uint32{}
			for _, n := range names {
				r, err := find(tk, dir, n)
				if err != nil || r == nil {
					t.Fatalf("lookup %q in e2fsprogs' directory: %v %v", n, r, err)
				}
				inos[n] = r.Entry.Inode
				if c.casefold {
					if r2, _ := find(tk, dir, strings.ToUpper(n)); r2 == nil || r2.Entry.Inode != r.Entry.Inode {
						t.Fatalf("casefolded lookup of %q", n)
					}
				}
			}
			if got := len(listDir(t, tk, dir)); got != len(names)+2 {
				t.Fatalf("readdir: %d entries", got)
			}
			t.Logf("read %d names from %d blocks (htree=%v)", len(names), len(d.pblks), dir.IsDx())
			if strings.HasPrefix(c.name, "fixture-") && os.Getenv("VFSLAB_GEN_FIXTURES") != "" {
				writeFixture(t, "testdata/e2fsprogs-"+strings.TrimPrefix(c.name, "fixture-")+".txt", d, readBlocks(t, img, d.pblks), len(names))
			}

			// Write: the same names, added in another order by this package,
			// into an image whose /d is still mke2fs's packed linear directory
			// (the inode numbers are the same).
			img = filepath.Join(tmp, "img2")
			mkimg(img, false)
			d = inspect(t, img)
			tkl, lin := dirFromImage(t, d, readBlocks(t, img, d.pblks))
			if err := CheckDir(tkl, lin); err != nil {
				t.Fatalf("mke2fs's linear directory fails CheckDir: %v", err)
			}
			for _, n := range names {
				if r, err := find(tkl, lin, n); err != nil || r == nil || r.Entry.Inode != inos[n] {
					t.Fatalf("lookup %q in mke2fs's linear directory: %v %v", n, r, err)
				}
			}
			tk2, mine := dirFromImage(t, d, nil)
			mine.Flags &^= IndexFL
			if err := InitNewDir(tk2, mine, 2); err != nil {
				t.Fatal(err)
			}
			order := append([]string(nil), names...)
			sort.Sort(sort.Reverse(sort.StringSlice(order)))
			for _, n := range order {
				if err := AddEntry(tk2, mine, []byte(n), inos[n], SIfreg|0o644); err != nil {
					t.Fatalf("AddEntry %q: %v", n, err)
				}
			}
			mustCheck(t, tk2, mine)
			nb := int(mine.nblocks())
			if nb < len(d.pblks) {
				t.Skipf("this package's directory has %d blocks, the image's %d", nb, len(d.pblks))
			}
			cmds := strings.Repeat("expand_dir /d\n", nb-len(d.pblks))
			cmds += fmt.Sprintf("set_inode_field /d flags 0x%x\n", d.flags&^IndexFL|mine.Flags&IndexFL)
			cf := filepath.Join(tmp, "cmds")
			os.WriteFile(cf, []byte(cmds), 0o644)
			run(t, "debugfs", "-w", "-f", cf, img)
			d2 := inspect(t, img)
			if len(d2.pblks) != nb {
				t.Fatalf("image directory has %d blocks, want %d", len(d2.pblks), nb)
			}
			f, err := os.OpenFile(img, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range d2.pblks {
				if _, err := f.WriteAt(mine.BlockAt(uint32(i)), int64(p)*BlockSize); err != nil {
					t.Fatal(err)
				}
			}
			f.Close()
			out, err := exec.Command("e2fsck", "-fn", img).CombinedOutput()
			if err != nil {
				t.Fatalf("e2fsck -fn on this package's directory: %v\n%s\n%s", err, out, DumpDir(tk2, mine))
			}
			ht := run(t, "debugfs", "-R", "htree /d", img)
			if mine.IsDx() && !strings.Contains(ht, "Number of entries") && !bytes.Contains([]byte(ht), []byte("Entry #")) {
				t.Logf("debugfs htree:\n%s", ht)
			}
			t.Logf("wrote %d names in %d blocks (htree=%v); e2fsck -fn clean", len(names), nb, mine.IsDx())

			// The control: one flipped byte in a leaf must make e2fsck fail.
			f, _ = os.OpenFile(img, os.O_RDWR, 0)
			last := mine.BlockAt(uint32(nb - 1))
			bad := bytes.Clone(last)
			bad[4], bad[5] = 5, 0 // rec_len 5
			f.WriteAt(bad, int64(d2.pblks[nb-1])*BlockSize)
			f.Close()
			if out, err := exec.Command("e2fsck", "-fn", img).CombinedOutput(); err == nil {
				t.Fatalf("e2fsck accepted a corrupted leaf:\n%s", out)
			}
		})
	}
}

// writeFixture saves /d's blocks and the parameters needed to read them.
func writeFixture(t *testing.T, path string, d imageDir, raw [][]byte, names int) {
	var b strings.Builder
	fmt.Fprintf(&b, "# /d of an image made by mke2fs -d and e2fsck -fyD (e2fsprogs); see README\n")
	fmt.Fprintf(&b, "ino %d\ngen %d\nflags %x\nuuid %x\nhash_seed %x\ndef_hash %d\nunsigned %v\ninodes %d\ncsum %v\nnames %d\n",
		d.ino, d.gen, d.flags, d.uuid, d.hashSeed, d.defHash, d.unsigned, d.inodes, d.csum, names)
	for i, blk := range raw {
		fmt.Fprintf(&b, "block %d %x\n", i, blk)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
