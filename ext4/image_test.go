package ext4_test

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/internal/fstestutil"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// The tests in this file check the on-disk format against e2fsprogs:
// images that mke2fs -d makes from a directory tree mount and read as the
// tree says, and images vfslab writes pass e2fsck -fn. They need mke2fs,
// debugfs and e2fsck (Debian's e2fsprogs) and are skipped without them or
// with -short.

func needE2fs(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("image tests run e2fsprogs")
	}
	for _, tool := range []string{"mke2fs", "debugfs", "e2fsck"} {
		if _, err := exec.LookPath(tool); err != nil {
			if _, err := os.Stat("/usr/sbin/" + tool); err != nil {
				t.Skipf("%s not installed (apt-get install e2fsprogs)", tool)
			}
		}
	}
}

func tool(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return "/usr/sbin/" + name
}

// runTool runs an e2fsprogs tool and returns its standard output (their
// banners go to standard error).
func runTool(t testing.TB, name string, args ...string) string {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(tool(name), args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return string(out)
}

// mkfsImage runs mke2fs on a new image file of size (as mke2fs spells
// it) with extra arguments, from src when it is not empty.
func mkfsImage(t testing.TB, src, size string, args ...string) string {
	t.Helper()
	return mkfsImageBS(t, src, size, 4096, args...)
}

// mkfsImageBS is mkfsImage with block size bs (0: mke2fs.conf's).
func mkfsImageBS(t testing.TB, src, size string, bs int, args ...string) string {
	t.Helper()
	img := filepath.Join(t.TempDir(), "img")
	a := []string{"-q", "-F", "-t", "ext4", "-E", "root_owner=0:0"}
	if bs != 0 {
		a = append(a, "-b", fmt.Sprint(bs))
	}
	a = append(a, args...)
	if src != "" {
		a = append(a, "-d", src)
	}
	a = append(a, img, size)
	cmd := exec.Command(tool("mke2fs"), a...)
	cmd.Env = append(os.Environ(), "E2FSPROGS_FAKE_TIME=1700000000", "MKE2FS_DETERMINISTIC=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mke2fs %v: %v\n%s", a, err, out)
	}
	return img
}

// imageEnv is a machine whose root filesystem is the ext4 image on dev.
type imageEnv struct {
	*fstestutil.Env
	dev *vfs.BlockDevice
	sys *vfs.System
}

func bootImage(t testing.TB, dev *vfs.BlockDevice, data string) (*imageEnv, error) {
	t.Helper()
	var sys *vfs.System
	var bootErr error
	e := fstestutil.Boot(t, "ext4-img", func(tk *kernel.Task) (*vfs.System, *vfs.Proc, error) {
		s, p, err := vfs.Boot(tk, vfs.Config{}, ext4.Type, vfs.MountOptions{Device: dev, Source: "vdb", ReadOnly: dev.ReadOnly(), Data: data})
		sys, bootErr = s, err
		if err != nil {
			// A failed mount is the test's result, not a failure of Boot.
			s, p, err = ext4.Boot(tk, vfs.Config{}, nil)
		}
		return s, p, err
	})
	return &imageEnv{Env: e, dev: dev, sys: sys}, bootErr
}

func mustBootImage(t testing.TB, dev *vfs.BlockDevice, data string) *imageEnv {
	t.Helper()
	e, err := bootImage(t, dev, data)
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	return e
}

// sourceTree writes a tree with names of every kind: long, non-ASCII,
// with spaces and odd bytes; a directory big enough for an htree; files
// of several sizes (empty, one block, several, sparse); fast and slow
// symlinks; hard links.
func sourceTree(t testing.TB, rng *rand.Rand) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "src")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(src, "dir/sub/deeper"), 0o755))
	must(os.MkdirAll(filepath.Join(src, "big"), 0o700))
	write := func(rel string, n int) {
		b := make([]byte, n)
		rng.Read(b)
		must(os.WriteFile(filepath.Join(src, rel), b, 0o644))
	}
	write("empty", 0)
	write("small.txt", 13)
	write("one-block", 4096)
	write("dir/several", 3*4096+17)
	write("dir/sub/deeper/large", 300000)
	names := []string{"espace dans le nom", "Größe", "日本語のファイル", "emoji-\U0001F600", "tab\there",
		strings.Repeat("L", 255), "-dash", ".hidden", "x", "UPPER", "upper"}
	for _, n := range names {
		write(filepath.Join("dir", n), len(n))
	}
	for i := 0; i < 400; i++ {
		write(filepath.Join("big", fmt.Sprintf("entry-%04d-%s", i, strings.Repeat("n", i%40))), i%7)
	}
	must(os.Symlink("small.txt", filepath.Join(src, "fastlink")))
	must(os.Symlink(strings.Repeat("d/", 60)+"target", filepath.Join(src, "slowlink")))
	must(os.Link(filepath.Join(src, "small.txt"), filepath.Join(src, "dir/hardlink")))
	f, err := os.Create(filepath.Join(src, "sparse"))
	must(err)
	_, err = f.WriteAt([]byte("tail"), 5*4096+100)
	must(err)
	must(f.Close())
	return src
}

// compareTree checks that the mounted tree at root lists, stats and reads
// as the host tree src does.
func compareTree(t *testing.T, e *imageEnv, src, root string) int {
	t.Helper()
	n := 0
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		vp := filepath.Join(root, rel)
		n++
		st, err := e.P.Lstat(e.T, vp)
		if err != nil {
			t.Errorf("lstat %q: %v", vp, err)
			return nil
		}
		if got, want := st.Mode&vfs.S_IFMT, hostType(fi); got != want {
			t.Errorf("%q: type %#o, want %#o", vp, got, want)
		}
		if got, want := st.Mode&0o7777, uint32(fi.Mode().Perm()); fi.Mode()&os.ModeSymlink == 0 && got != want {
			t.Errorf("%q: mode %#o, want %#o", vp, got, want)
		}
		if !fi.IsDir() && st.Size != fi.Size() {
			t.Errorf("%q: size %d, want %d", vp, st.Size, fi.Size())
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			want, _ := os.Readlink(p)
			buf := make([]byte, 4096)
			k, err := e.P.Readlink(e.T, vp, buf)
			if err != nil || string(buf[:k]) != want {
				t.Errorf("readlink %q: %q, %v; want %q", vp, buf[:k], err, want)
			}
		case fi.IsDir():
			ents, _ := os.ReadDir(p)
			var want []string
			for _, d := range ents {
				want = append(want, d.Name())
			}
			if rel == "." {
				want = append(want, "lost+found")
			}
			var got []string
			for _, n := range e.List(vp) {
				if n != "." && n != ".." {
					got = append(got, n)
				}
			}
			sort.Strings(want)
			sort.Strings(got)
			if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
				t.Errorf("ls %q: %d names, want %d", vp, len(got), len(want))
			}
		default:
			want, _ := os.ReadFile(p)
			got, err := e.Read(vp)
			if err != nil || got != string(want) {
				t.Errorf("read %q: %d bytes, %v; want %d", vp, len(got), err, len(want))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func hostType(fi os.FileInfo) uint32 {
	switch {
	case fi.IsDir():
		return vfs.S_IFDIR
	case fi.Mode()&os.ModeSymlink != 0:
		return vfs.S_IFLNK
	}
	return vfs.S_IFREG
}

// TestImageMke2fsRead: an image that mke2fs -d made from a tree mounts
// (read-only: the device is attached without write access) and lists,
// stats and reads as the tree does; the inode numbers are debugfs's.
func TestImageMke2fsRead(t *testing.T) {
	needE2fs(t)
	src := sourceTree(t, rand.New(rand.NewSource(1)))
	for _, bs := range []int{1024, 2048, 4096} {
		t.Run(fmt.Sprint(bs), func(t *testing.T) { testMke2fsRead(t, src, bs) })
	}
}

func testMke2fsRead(t *testing.T, src string, bs int) {
	img := mkfsImageBS(t, src, "32M", bs)
	dev, err := vfs.OpenImage(img, false)
	if err != nil {
		t.Fatal(err)
	}
	e := mustBootImage(t, dev, "")
	if n := compareTree(t, e, src, "/"); n < 400 {
		t.Fatalf("walked %d paths", n)
	}
	// Inode numbers as debugfs lists them.
	out := runTool(t, "debugfs", "-R", "ls -l /dir", img)
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 9 || f[len(f)-1] == "." || f[len(f)-1] == ".." {
			continue
		}
		name := f[len(f)-1]
		if len(f) > 9 || strings.Contains(name, `\x`) {
			continue // names with blanks split into fields; debugfs escapes other bytes as \xNN
		}
		st, err := e.P.Lstat(e.T, "/dir/"+name)
		if err != nil {
			t.Errorf("lstat /dir/%s: %v", name, err)
			continue
		}
		if fmt.Sprint(st.Ino) != f[0] {
			t.Errorf("/dir/%s: ino %d, debugfs %s", name, st.Ino, f[0])
		}
	}
	// A read-only image refuses changes.
	if err := e.P.Mkdir(e.T, "/new", 0o755); err != errno.EROFS {
		t.Fatalf("mkdir on a read-only image: %v", err)
	}
	if _, err := e.P.Open(e.T, "/one-block", vfs.O_WRONLY, 0); err != errno.EROFS {
		t.Fatalf("open for writing on a read-only image: %v", err)
	}
	if err := e.P.Truncate(e.T, "/one-block", 0); err != errno.EROFS {
		t.Fatalf("truncate on a read-only image: %v", err)
	}
}

// TestImageMountChecks: a corrupt superblock fails the mount with the
// kernel's errno and log line.
func TestImageMountChecks(t *testing.T) {
	needE2fs(t)
	img := mkfsImage(t, "", "16M")
	data, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		patch func(b []byte)
		err   error
		log   string
		roDev bool
		data  string
	}{
		{"csum", func(b []byte) { b[1024+0x78] ^= 1 }, ext4.EFSBADCRC, "invalid superblock checksum", false, ""},
		{"incompat", func(b []byte) { b[1024+0x60+3] |= 0x80; fixSuperCsum(b) }, errno.EINVAL, "unsupported optional features (80000000)", false, ""},
		{"magic", func(b []byte) { b[1024+0x38] = 0 }, errno.EINVAL, "", false, ""},
		{"gdcsum", func(b []byte) { b[4096+0x1E] ^= 0xFF }, errno.EFSCORRUPTED, "Checksum for group 0 failed", false, ""},
		{"recover-rodev", func(b []byte) { b[1024+0x60] |= 0x04; fixSuperCsum(b) }, errno.EROFS, "write access unavailable", true, ""},
		{"recover-noload", func(b []byte) { b[1024+0x60] |= 0x04; fixSuperCsum(b) }, errno.EINVAL, "recovery suppressed", false, "noload"},
		{"recover-clean-log", func(b []byte) { b[1024+0x60] |= 0x04; fixSuperCsum(b) }, nil, "recovery complete", false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := append([]byte(nil), data...)
			c.patch(b)
			p := filepath.Join(t.TempDir(), "img")
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			dev, err := vfs.OpenImage(p, !c.roDev)
			if err != nil {
				t.Fatal(err)
			}
			e, err := bootImage(t, dev, c.data)
			if c.name == "magic" {
				// No magic: not an image, so the model's growing-device
				// path says there is no ext4 on it.
				if err == nil {
					t.Fatal("mounted a device with no magic")
				}
				return
			}
			if err != c.err {
				t.Fatalf("mount: %v, want %v", err, c.err)
			}
			if e != nil && c.log != "" && !e.T.K.Log.Contains(c.log) {
				t.Fatalf("no %q in the log:\n%s", c.log, strings.Join(e.T.K.Log.Lines(), "\n"))
			}
		})
	}
}

// TestImageJournalReplay: a journal with committed transactions (written
// by debugfs's journal commands: blocks logged, one revoked by a later
// transaction) is replayed at mount as e2fsck replays it, and the image is
// clean afterwards.
func TestImageJournalReplay(t *testing.T) {
	needE2fs(t)
	for _, bs := range []int{1024, 4096} {
		t.Run(fmt.Sprint(bs), func(t *testing.T) {
			img := mkfsImageBS(t, "", "32M", bs)
			dir := t.TempDir()
			d1 := bytes.Repeat([]byte("first transaction "), 2*bs/18+1)[:2*bs]
			d2 := bytes.Repeat([]byte("second one "), bs/11+1)[:bs]
			if err := os.WriteFile(filepath.Join(dir, "d1"), d1, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "d2"), d2, 0o644); err != nil {
				t.Fatal(err)
			}
			// Blocks far in the free space; B is logged, then revoked.
			a, b, c := 6000, 6001, 6100
			cmds := fmt.Sprintf("jo -c\njw -b %d,%d %s\njc\njo\njw -b %d -r %d %s\njc\n", a, b, filepath.Join(dir, "d1"), c, b, filepath.Join(dir, "d2"))
			cf := filepath.Join(dir, "cmds")
			if err := os.WriteFile(cf, []byte(cmds), 0o644); err != nil {
				t.Fatal(err)
			}
			runTool(t, "debugfs", "-w", "-f", cf, img)
			if h := runTool(t, "dumpe2fs", "-h", img); !strings.Contains(h, "needs_recovery") {
				t.Fatalf("debugfs left no transaction to recover:\n%s", h)
			}
			ref := filepath.Join(dir, "ref")
			raw, err := os.ReadFile(img)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(ref, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(tool("e2fsck"), "-fy", ref).CombinedOutput(); err != nil {
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() > 1 {
					t.Fatalf("e2fsck -fy: %v\n%s", err, out)
				}
			}
			refData, err := os.ReadFile(ref)
			if err != nil {
				t.Fatal(err)
			}
			dev, err := vfs.OpenImage(img, true)
			if err != nil {
				t.Fatal(err)
			}
			e := mustBootImage(t, dev, "")
			if !e.T.K.Log.Contains("recovery complete") {
				t.Fatalf("no recovery in the log:\n%s", strings.Join(e.T.K.Log.Lines(), "\n"))
			}
			got := make([]byte, bs)
			for _, blk := range []int{a, b, c} {
				if _, err := dev.ReadAt(got, int64(blk*bs)); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, refData[blk*bs:(blk+1)*bs]) {
					t.Errorf("block %d after replay differs from e2fsck's replay", blk)
				}
			}
			if _, err := dev.ReadAt(got, int64(a*bs)); err != nil || !bytes.Equal(got, d1[:bs]) {
				t.Errorf("block %d not replayed", a)
			}
			if _, err := dev.ReadAt(got, int64(b*bs)); err != nil || bytes.Equal(got, d1[bs:]) {
				t.Errorf("revoked block %d replayed", b)
			}
			out := saveImage(t, e)
			e2fsckClean(t, out)
			// Mounted read-write again, needs_recovery is set.
			if h := runTool(t, "dumpe2fs", "-h", out); !strings.Contains(h, "needs_recovery") {
				t.Errorf("after replay and a sync while mounted, want needs_recovery:\n%s", h)
			}
		})
	}
}

func fixSuperCsum(b []byte) {
	var s ext4.RawSuper
	copy(s[:], b[1024:2048])
	s.SuperblockCsumSet()
	copy(b[1024:2048], s[:])
}

// e2fsckClean runs e2fsck -fn on img and fails the test on any complaint.
func e2fsckClean(t testing.TB, img string) {
	t.Helper()
	out, err := exec.Command(tool("e2fsck"), "-fn", img).CombinedOutput()
	if err != nil {
		t.Fatalf("e2fsck -fn: %v\n%s", err, out)
	}
}

func saveImage(t testing.TB, e *imageEnv) string {
	t.Helper()
	if err := ext4.SyncFS(e.T, e.sys.RootMount().SB); err != nil {
		t.Fatalf("syncfs: %v", err)
	}
	p := filepath.Join(t.TempDir(), "out.img")
	if err := e.dev.SaveImage(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestImageWriteBasic: a few changes on a mke2fs image, saved, pass
// e2fsck -fn, and debugfs sees them.
func TestImageWriteBasic(t *testing.T) {
	needE2fs(t)
	src := sourceTree(t, rand.New(rand.NewSource(2)))
	for _, bs := range []int{1024, 4096} {
		t.Run(fmt.Sprint(bs), func(t *testing.T) { testWriteBasic(t, src, bs) })
	}
}

func testWriteBasic(t *testing.T, src string, bs int) {
	img := mkfsImageBS(t, src, "32M", bs)
	dev, err := vfs.OpenImage(img, true)
	if err != nil {
		t.Fatal(err)
	}
	e := mustBootImage(t, dev, "")
	e.Must(e.P.Mkdir(e.T, "/newdir", 0o755))
	e.Write("/newdir/file", strings.Repeat("z", 10000))
	e.Must(e.P.Unlink(e.T, "/small.txt"))
	e.Must(e.P.Rename(e.T, "/dir/several", "/newdir/moved", 0))
	e.Must(e.P.Symlink(e.T, strings.Repeat("s", 100), "/newdir/slow"))
	e.Must(e.P.Symlink(e.T, "short", "/newdir/fast"))
	e.Must(e.P.Link(e.T, "/one-block", "/newdir/hl"))
	for i := 0; i < 200; i++ {
		e.Write(fmt.Sprintf("/newdir/n%03d", i), "q")
	}
	e.Must(e.P.Unlink(e.T, "/big/entry-0003-nnn"))
	// No encrypt feature: the fscrypt ioctls are EOPNOTSUPP (ext4_ioctl).
	e.Must(e.P.Mkdir(e.T, "/noenc", 0o700))
	if _, err := e.P.EncryptDir(e.T, "/noenc", make([]byte, 64), 0, 0); err != errno.EOPNOTSUPP {
		t.Fatalf("fscrypt ioctls without the encrypt feature: %v", err)
	}
	e.Must(e.P.Mkdir(e.T, "/newdir/gone", 0o700))
	e.Must(e.P.Rmdir(e.T, "/newdir/gone"))
	if err := e.P.Rmdir(e.T, "/dir/sub"); err != errno.ENOTEMPTY {
		t.Fatalf("rmdir of a full directory: %v", err)
	}
	out := saveImage(t, e)
	e2fsckClean(t, out)
	ls := runTool(t, "debugfs", "-R", "ls -l /newdir", out)
	for _, n := range []string{"file", "moved", "slow", "fast", "hl", "n199"} {
		if !strings.Contains(ls, " "+n+"\n") && !strings.HasSuffix(strings.TrimSpace(ls), n) {
			t.Errorf("debugfs ls /newdir lacks %s:\n%s", n, ls)
		}
	}
	if got := runTool(t, "debugfs", "-R", "cat /newdir/file", out); got != strings.Repeat("z", 10000) {
		t.Errorf("debugfs cat: %d bytes", len(got))
	}
}

// TestImageMkfs: vfslab's mkfs.ext4 on a fixed-size device writes an image
// e2fsck -fn accepts, with mke2fs's geometry for that size (block and
// inode counts, inodes per group, the journal's size) and its features
// but resize_inode; the image mounts, takes changes and stays clean.
func TestImageMkfs(t *testing.T) {
	needE2fs(t)
	for _, c := range []struct {
		size string
		mb   int
		args []string
	}{
		{"4M", 4, nil},
		{"160M", 160, nil},
		{"48M", 48, []string{"-O", "casefold,encrypt"}},
		{"24M", 24, []string{"-O", "^metadata_csum,^dir_index", "-N", "2000"}},
	} {
		t.Run(c.size+strings.Join(c.args, ""), func(t *testing.T) {
			dev := vfs.NewBlockDeviceSize(uint32(c.mb << 20 / vfs.PageSize))
			tk := kernel.New().NewTask("mkfs")
			defer tk.Exit()
			if err := ext4.Type.Mkfs(tk, dev, c.args); err != nil {
				t.Fatal(err)
			}
			img := filepath.Join(t.TempDir(), "vfslab.img")
			if err := dev.SaveImage(img); err != nil {
				t.Fatal(err)
			}
			e2fsckClean(t, img)
			ref := mkfsImageBS(t, "", c.size, 0, c.args...)
			got, want := runTool(t, "dumpe2fs", "-h", img), runTool(t, "dumpe2fs", "-h", ref)
			for _, f := range []string{"Inode count", "Block count", "Reserved block count", "Inodes per group", "Blocks per group",
				"Inode size", "First block", "Block size", "Total journal blocks", "Inode blocks per group", "Default directory hash", "Filesystem flags", "Character encoding"} {
				if g, w := dumpField(got, f), dumpField(want, f); g != w {
					t.Errorf("%s: %q, mke2fs %q", f, g, w)
				}
			}
			if g, w := dumpField(got, "Filesystem features"), strings.Replace(dumpField(want, "Filesystem features"), "resize_inode ", "", 1); g != w {
				t.Errorf("features %q, mke2fs %q", g, w)
			}
			e := mustBootImage(t, dev, "")
			e.Must(e.P.Mkdir(e.T, "/d", 0o755))
			for i := 0; i < 100; i++ {
				e.Write(fmt.Sprintf("/d/f%03d", i), strings.Repeat("y", i*100))
			}
			e2fsckClean(t, saveImage(t, e))
		})
	}
}

func dumpField(out, name string) string {
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// TestImageCasefoldMke2fs: a casefolded directory in an image e2fsprogs
// made (mke2fs -O casefold -d, the flag set with debugfs and the htree
// rebuilt with casefolded hashes by e2fsck -fyD, since mke2fs -d cannot
// set +F) finds its names in any case, through the htree, in vfslab.
func TestImageCasefoldMke2fs(t *testing.T) {
	needE2fs(t)
	src := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(filepath.Join(src, "cf"), 0o755); err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := 0; i < 150; i++ {
		names = append(names, fmt.Sprintf("File-With-A-Longer-Name-%03d.TXT", i))
	}
	names = append(names, "Straße", "ǅemo", "café")
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(src, "cf", n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	img := mkfsImage(t, src, "16M", "-O", "casefold")
	runTool(t, "debugfs", "-w", "-R", "set_inode_field /cf flags 0x40081000", img)
	if out, err := exec.Command(tool("e2fsck"), "-fyD", img).CombinedOutput(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() > 1 {
			t.Fatalf("e2fsck -fyD: %v\n%s", err, out)
		}
	}
	e2fsckClean(t, img)
	dev, err := vfs.OpenImage(img, false)
	if err != nil {
		t.Fatal(err)
	}
	e := mustBootImage(t, dev, "")
	d, err := e.P.LookupDentry(e.T, "/cf", true)
	e.Must(err)
	dir := ext4.EXT4_I(d.Inode())
	if !dir.IsCasefolded() || !dir.IsDx() {
		t.Fatalf("/cf: %v", dir)
	}
	for _, n := range names {
		for _, v := range []string{n, strings.ToUpper(n), strings.ToLower(n)} {
			got, err := e.Read("/cf/" + v)
			if err != nil || got != n {
				t.Errorf("read /cf/%s: %q, %v", v, got, err)
			}
		}
	}
	if err := ext4.CheckDir(e.T, dir); err != nil {
		t.Fatal(err)
	}
}

// TestImageFull: on a full image, write(2) stops with ENOSPC (or short),
// creating names fails with ENOSPC once no block or inode is left, and
// the image stays clean for e2fsck.
func TestImageFull(t *testing.T) {
	needE2fs(t)
	for _, bs := range []int{1024, 4096} {
		t.Run(fmt.Sprint(bs), func(t *testing.T) {
			img := mkfsImageBS(t, "", "8M", bs, "-N", "64")
			dev, err := vfs.OpenImage(img, true)
			if err != nil {
				t.Fatal(err)
			}
			e := mustBootImage(t, dev, "")
			fd, err := e.P.Open(e.T, "/big", vfs.O_CREAT|vfs.O_RDWR, 0o644)
			e.Must(err)
			chunk := bytes.Repeat([]byte("f"), 64<<10)
			total := 0
			for i := 0; i < 200; i++ {
				n, err := e.P.Write(e.T, fd, chunk)
				total += n
				if err == errno.ENOSPC || n < len(chunk) {
					break
				}
				e.Must(err)
			}
			e.Must(e.P.Close(e.T, fd))
			if total == 0 || total >= 8<<20 {
				t.Fatalf("wrote %d bytes on an 8 MiB image", total)
			}
			var cerr error
			for i := 0; i < 100 && cerr == nil; i++ {
				fd, cerr = e.P.Open(e.T, fmt.Sprintf("/n%03d", i), vfs.O_CREAT|vfs.O_RDWR, 0o644)
				if cerr == nil {
					e.Must(e.P.Close(e.T, fd))
				}
			}
			if cerr != errno.ENOSPC {
				t.Fatalf("creating names on a full image: %v", cerr)
			}
			out := saveImage(t, e)
			e2fsckClean(t, out)
			if got, err := e.Read("/big"); err != nil || len(got) != total {
				t.Fatalf("read back %d of %d bytes: %v", len(got), total, err)
			}
		})
	}
}

// TestImageUmount: an image mounted on /mnt, changed and unmounted, is
// clean for e2fsck without an explicit sync: the inodes are written back
// as the operations end and as umount evicts them, with the superblock.
func TestImageUmount(t *testing.T) {
	needE2fs(t)
	img := mkfsImage(t, "", "16M")
	dev, err := vfs.OpenImage(img, true)
	if err != nil {
		t.Fatal(err)
	}
	var sys *vfs.System
	e := fstestutil.Boot(t, "ext4-umount", func(tk *kernel.Task) (*vfs.System, *vfs.Proc, error) {
		s, p, err := ext4.Boot(tk, vfs.Config{}, nil)
		sys = s
		return s, p, err
	})
	e.Must(e.P.Mkdir(e.T, "/mnt", 0o755))
	if _, err := sys.Mount(e.T, e.P, ext4.Type, "/mnt", vfs.MountOptions{Device: dev, Source: "vdb", ReadOnly: dev.ReadOnly()}); err != nil {
		t.Fatal(err)
	}
	e.Must(e.P.Mkdir(e.T, "/mnt/d", 0o755))
	for i := 0; i < 50; i++ {
		e.Write(fmt.Sprintf("/mnt/d/f%02d", i), strings.Repeat("u", 5000*i))
	}
	e.Must(e.P.Unlink(e.T, "/mnt/d/f07"))
	if _, err := sys.Umount(e.T, e.P, "/mnt"); err != nil {
		t.Fatal(err)
	}
	e.Must(dev.Sync())
	e2fsckClean(t, img)
	if got := runTool(t, "debugfs", "-R", "stat /d/f49", img); !strings.Contains(got, fmt.Sprintf("Size: %d", 5000*49)) {
		t.Fatalf("debugfs stat /d/f49:\n%s", got)
	}
}

// TestImageBlockMapped: an image without the extent feature (files mapped
// by direct, indirect and double indirect blocks, as ext2 and ext3 map
// them) mounts read-only and reads as its source tree.
func TestImageBlockMapped(t *testing.T) {
	needE2fs(t)
	src := sourceTree(t, rand.New(rand.NewSource(3)))
	for _, bs := range []int{1024, 4096} {
		t.Run(fmt.Sprint(bs), func(t *testing.T) {
			img := mkfsImageBS(t, src, "32M", bs, "-O", "^extent,^64bit,^flex_bg")
			dev, err := vfs.OpenImage(img, true)
			if err != nil {
				t.Fatal(err)
			}
			e := mustBootImage(t, dev, "")
			compareTree(t, e, src, "/")
			if err := e.P.Mkdir(e.T, "/new", 0o755); err != errno.EROFS {
				t.Fatalf("mkdir without the extent feature: %v", err)
			}
		})
	}
}

// TestImageUnwritten: preallocated (unwritten) extents, as debugfs's
// fallocate makes them within and past i_size, read as zeroes, survive a
// write-back, and give their block back when a write lands on one.
func TestImageUnwritten(t *testing.T) {
	needE2fs(t)
	for _, bs := range []int{1024, 4096} {
		t.Run(fmt.Sprint(bs), func(t *testing.T) {
			img := mkfsImageBS(t, "", "16M", bs)
			dir := t.TempDir()
			head := filepath.Join(dir, "head")
			if err := os.WriteFile(head, []byte("abc"), 0o644); err != nil {
				t.Fatal(err)
			}
			cmds := fmt.Sprintf("write %s /past\nfallocate /past 0 9\nwrite %s /within\nfallocate /within 0 9\nsif /within size %d\n", head, head, 10*bs)
			cf := filepath.Join(dir, "cmds")
			if err := os.WriteFile(cf, []byte(cmds), 0o644); err != nil {
				t.Fatal(err)
			}
			runTool(t, "debugfs", "-w", "-f", cf, img)
			if st := runTool(t, "debugfs", "-R", "stat /within", img); !strings.Contains(st, "[u]") {
				t.Fatalf("no unwritten extent:\n%s", st)
			}
			e2fsckClean(t, img)
			dev, err := vfs.OpenImage(img, true)
			if err != nil {
				t.Fatal(err)
			}
			e := mustBootImage(t, dev, "")
			want := "abc" + strings.Repeat("\x00", 10*bs-3)
			if got, err := e.Read("/within"); err != nil || got != want {
				t.Fatalf("read /within: %d bytes, %v", len(got), err)
			}
			fd, err := e.P.Open(e.T, "/within", vfs.O_WRONLY, 0)
			e.Must(err)
			_, err = e.P.Pwrite(e.T, fd, []byte("middle"), int64(5*bs))
			e.Must(err)
			e.Must(e.P.Close(e.T, fd))
			e.Write("/past2", "x") // another inode written; /past only read
			if got, err := e.Read("/past"); err != nil || got != "abc" {
				t.Fatalf("read /past: %q, %v", got, err)
			}
			out := saveImage(t, e)
			e2fsckClean(t, out)
			want = want[:5*bs] + "middle" + want[5*bs+6:]
			if got := runTool(t, "debugfs", "-R", "cat /within", out); got != want {
				t.Fatalf("debugfs cat /within: %d bytes, %q...", len(got), got[5*bs:5*bs+6])
			}
		})
	}
}
