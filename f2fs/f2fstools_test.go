package f2fs

import (
	"bytes"
	"fmt"
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

// The tests in this file check the directory code against f2fs-tools, an
// independent implementation: sload.f2fs builds a directory from a host
// directory, which is read back here (checker, lookups, readdir) and
// rebuilt here byte for byte; a directory built here in another order is
// written into the image, and fsck.f2fs, which checks every dentry's
// hash_code and slot layout, must find nothing to fix. They need
// mkfs.f2fs, sload.f2fs, dump.f2fs and fsck.f2fs and are skipped without
// them (and with -short).

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

func runIn(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		if len(out) > 2000 {
			out = out[len(out)-2000:]
		}
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// f2fsInode is what dump.f2fs -i tells about an inode.
type f2fsInode struct {
	size             int64
	depth, dirLevel  uint32
	inline           uint8
	addrs            map[uint64]uint32
	extraIsize       int
	inlineXattrAddrs int
}

var (
	reField = regexp.MustCompile(`(?m)^(i_\w+)\s+\[0x\s*[0-9a-f]+ : (\d+)\]`)
	reAddr  = regexp.MustCompile(`(?m)^i_addr\[0x([0-9a-f]+)\]\s+\[0x\s*[0-9a-f]+ : (\d+)\]`)
)

func dumpInode(t *testing.T, dir, img string, ino uint32) f2fsInode {
	out := runIn(t, dir, "dump.f2fs", "-i", fmt.Sprintf("0x%x", ino), img)
	in := f2fsInode{addrs: map[uint64]uint32{}}
	for _, m := range reField.FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseInt(m[2], 10, 64)
		switch m[1] {
		case "i_size":
			in.size = v
		case "i_current_depth":
			in.depth = uint32(v)
		case "i_dir_level":
			in.dirLevel = uint32(v)
		case "i_inline":
			in.inline = uint8(v)
		case "i_extra_isize":
			in.extraIsize = int(v)
		}
	}
	for _, m := range reAddr.FindAllStringSubmatch(out, -1) {
		idx, _ := strconv.ParseUint(m[1], 16, 64)
		a, _ := strconv.ParseUint(m[2], 10, 32)
		if a != 0 && a != 0xffffffff {
			in.addrs[idx] = uint32(a)
		}
	}
	if in.inline&0x01 != 0 { // F2FS_INLINE_XATTR
		in.inlineXattrAddrs = DefaultInlineXattrAddrs
	}
	return in
}

// nodeAddr returns the block of node nid from dump.f2fs's NAT dump.
func nodeAddr(t *testing.T, dir, img string, nid uint32) uint32 {
	runIn(t, dir, "dump.f2fs", "-n", fmt.Sprintf("%d~%d", nid, nid), img)
	nat, err := os.ReadFile(filepath.Join(dir, "dump_nat"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(fmt.Sprintf(`nid:\s+%d\s+ino:\s+\d+\s+offset:\s+\d+\s+blkaddr:\s+(\d+)`, nid)).FindStringSubmatch(string(nat))
	if m == nil {
		t.Fatalf("nid %d not in NAT dump", nid)
	}
	a, _ := strconv.ParseUint(m[1], 10, 32)
	return uint32(a)
}

func readBlock(t *testing.T, img string, addr uint32) []byte {
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, BlockSize)
	if _, err := f.ReadAt(b, int64(addr)*BlockSize); err != nil {
		t.Fatal(err)
	}
	return b
}

func writeBlock(t *testing.T, img string, addr uint32, b []byte) {
	f, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, int64(addr)*BlockSize); err != nil {
		t.Fatal(err)
	}
}

// loadDir builds an Inode from an image's inode; it returns the node block
// address of an inline directory.
func loadDir(t *testing.T, tk *kernel.Task, tmp, img string, ino uint32) (*Inode, uint32) {
	in := dumpInode(t, tmp, img, ino)
	geo := NewInlineGeometry(in.extraIsize, in.inlineXattrAddrs)
	o := dirOpts{ino: ino, geo: &geo, dirLevel: in.dirLevel, noInline: in.inline&0x04 == 0} // F2FS_INLINE_DENTRY
	dir := newDirInode(t, tk, newTestSB(t, tk, o), o)
	dir.CurrentDepth = in.depth
	var node uint32
	if dir.Inline {
		node = nodeAddr(t, tmp, img, ino)
		copy(dir.Node, readBlock(t, img, node))
	} else {
		for idx, a := range in.addrs {
			dir.SetBlock(idx, readBlock(t, img, a))
		}
	}
	dir.SetSize(in.size)
	return dir, node
}

func fsckClean(t *testing.T, tmp, img string) (bool, string) {
	out := runIn(t, tmp, "fsck.f2fs", "--dry-run", "-f", img)
	bad := strings.Contains(out, "[FIX]") || strings.Contains(out, "[Fail]") || strings.Contains(out, "Mismatch")
	return !bad, out
}

func TestF2fsToolsInterop(t *testing.T) {
	needTools(t, "mkfs.f2fs", "sload.f2fs", "dump.f2fs", "fsck.f2fs")
	for _, c := range []struct {
		name string
		n    int
	}{{"one-block", 40}, {"two-levels", 300}, {"deeper", 2500}} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			src := filepath.Join(tmp, "src", "d")
			os.MkdirAll(src, 0o755)
			var names []string
			for i := 0; i < c.n; i++ {
				n := fmt.Sprintf("file-%d", i)
				switch {
				case i%40 == 0:
					n = fmt.Sprintf("%04d%s", i, strings.Repeat("L", 251)) // 255 bytes
				case i%9 == 0:
					n = fmt.Sprintf("h\xc3\xa9\xff%d", i)
				}
				names = append(names, n)
				if err := os.WriteFile(filepath.Join(src, n), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			img := filepath.Join(tmp, "img")
			if err := os.WriteFile(img, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			os.Truncate(img, 512<<20)
			runIn(t, tmp, "mkfs.f2fs", "-q", "-f", img)
			runIn(t, tmp, "sload.f2fs", "-f", filepath.Join(tmp, "src"), img)
			if ok, out := fsckClean(t, tmp, img); !ok {
				t.Fatalf("fsck of sload's image:\n%s", out)
			}
			tk := kernel.New().NewTask("f2fs-tools")
			tk.EnableCounting()
			defer tk.Exit()

			// Find /d in the root directory (inode 3).
			root, _ := loadDir(t, tk, tmp, img, 3)
			r, err := find(tk, root, "d")
			if err != nil || r == nil {
				t.Fatalf("/d: %v %v", r, err)
			}
			dir, node := loadDir(t, tk, tmp, img, r.Entry.Ino)
			if err := CheckDir(tk, dir); err != nil {
				t.Fatalf("sload's directory fails CheckDir: %v", err)
			}
			inos := map[string]uint32{}
			for _, n := range names {
				r, err := find(tk, dir, n)
				if err != nil || r == nil {
					t.Fatalf("lookup %q: %v %v", n, r, err)
				}
				inos[n] = r.Entry.Ino
			}
			if got := len(listDir(t, tk, dir)); got != len(names)+2 {
				t.Fatalf("readdir: %d", got)
			}
			t.Logf("read %d names: %s", len(names), dir)
			if c.name == "two-levels" && os.Getenv("VFSLAB_GEN_FIXTURES") != "" {
				writeFixture(t, "testdata/sload-two-levels.txt", dir, len(names))
			}

			// sload adds the names in sorted order: doing the same here must
			// give the same bytes.
			rebuild := func(order []string) *Inode {
				// sload.f2fs makes no inline dentries.
				o := dirOpts{ino: dir.nid(), geo: &dir.Geo, noInline: true}
				mine := newDirInode(t, tk, newTestSB(t, tk, o), o)
				if err := MakeEmptyDir(tk, mine, 3, SIfdir); err != nil {
					t.Fatal(err)
				}
				for _, n := range order {
					if err := AddLink(tk, mine, []byte(n), inos[n], SIfreg|0o644); err != nil {
						t.Fatal(err)
					}
				}
				mustCheck(t, tk, mine)
				return mine
			}
			sorted := append([]string(nil), names...)
			sort.Strings(sorted)
			same := rebuild(sorted)
			if same.Inline != dir.Inline || same.CurrentDepth != dir.CurrentDepth || same.Size() != dir.Size() {
				t.Fatalf("rebuilt %s, sload made %s", same, dir)
			}
			if dir.Inline {
				if !bytes.Equal(same.inlineArea(), dir.inlineArea()) {
					t.Fatalf("inline areas differ:\n%s\n%s", DumpDir(tk, same), DumpDir(tk, dir))
				}
			} else {
				if fmt.Sprint(same.Pages()) != fmt.Sprint(dir.Pages()) {
					t.Fatalf("pages %v, sload's %v", same.Pages(), dir.Pages())
				}
				for _, p := range dir.Pages() {
					if !bytes.Equal(same.BlockAt(p), dir.BlockAt(p)) {
						t.Fatalf("page %d differs:\n mine %s\nsload %s", p, DumpBlock(tk, same, p), DumpBlock(tk, dir, p))
					}
				}
			}

			// Another order gives another layout over the same pages (for a
			// one-bucket level); written into the image, fsck.f2fs must
			// accept it.
			rev := append([]string(nil), sorted...)
			sort.Sort(sort.Reverse(sort.StringSlice(rev)))
			other := rebuild(rev)
			if other.Inline != dir.Inline || fmt.Sprint(other.Pages()) != fmt.Sprint(dir.Pages()) {
				t.Logf("reverse order uses pages %v, sload %v: not written", other.Pages(), dir.Pages())
				return
			}
			in := dumpInode(t, tmp, img, dir.nid())
			if dir.Inline {
				nb := readBlock(t, img, node)
				copy(nb[dir.Geo.Offset:], other.inlineArea())
				writeBlock(t, img, node, nb)
			} else {
				for _, p := range other.Pages() {
					writeBlock(t, img, in.addrs[p], other.BlockAt(p))
				}
			}
			if ok, out := fsckClean(t, tmp, img); !ok {
				t.Fatalf("fsck.f2fs on this package's directory:\n%s\n%s", out, DumpDir(tk, other))
			}
			// The control: a wrong hash_code must be reported.
			if !dir.Inline {
				p := other.Pages()[0]
				b := bytes.Clone(other.BlockAt(p))
				d := MakeDentryPtrBlock(b)
				e := d.Entry(2)
				e.HashCode ^= 1
				d.putEntry(2, e)
				writeBlock(t, img, in.addrs[p], b)
				if ok, _ := fsckClean(t, tmp, img); ok {
					t.Fatal("fsck.f2fs accepted a wrong hash_code")
				}
			}
			t.Logf("reverse-order directory written; fsck.f2fs clean")
		})
	}
}

// writeFixture saves a directory's dentry blocks with its inode fields.
func writeFixture(t *testing.T, path string, dir *Inode, names int) {
	var b strings.Builder
	fmt.Fprintf(&b, "# a directory made by sload.f2fs (f2fs-tools); see sload-README.md\n")
	fmt.Fprintf(&b, "ino %d\nsize %d\ndepth %d\ndir_level %d\nnames %d\n", dir.Ino(), dir.Size(), dir.CurrentDepth, dir.DirLevel, names)
	for _, p := range dir.Pages() {
		fmt.Fprintf(&b, "page %d %x\n", p, dir.BlockAt(p))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
