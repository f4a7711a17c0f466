package ext4

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/internal/fstestutil"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// The oracle test of the image writer: generated sequences of syscalls
// (create, mkdir, rename, link, unlink, rmdir, symlink, write, truncate) in
// plain, casefolded, encrypted and casefolded+encrypted directories, and
// in an encrypted directory whose key is then removed, on an image mke2fs
// made; the image vfslab saves must pass e2fsck -fn, and debugfs must list
// every directory as vfslab holds it: the on-disk names (ciphertext in an
// encrypted directory), the inode numbers and the sizes.

var imageSeqs = flag.Int("ext4img.seqs", 4, "generated syscall sequences TestImageSequences checks with e2fsck")
var imageOps = flag.Int("ext4img.ops", 150, "syscalls per generated sequence")

// seqNames are names of every kind: ASCII, mixed case (casefolded
// directories fold them), non-ASCII, long.
var seqNames = []string{"a", "B", "file", "FILE", "Grüße", "GRÜSSE", "日本", "ǅemo", "e\u0301t\u00e9",
	"name with spaces", "x.tar.gz", strings.Repeat("long", 50), "z-\U0001F600", "q"}

type seqDir struct {
	path  string
	class int // 0 plain, 1 casefold, 2 encrypt, 3 both (a rename or link between classes may be EXDEV)
}

type seqState struct {
	tb    testing.TB
	e     *fstestutil.Env
	rng   *rand.Rand
	dirs  []seqDir
	files []string
	n     int
	// data is the model of the files' contents, shared by hard links; a
	// file that has had a name in a casefolded directory is unsure (a
	// name of another case may have replaced it there), and not checked.
	data map[string]*content
}

type content struct {
	b      []byte
	unsure bool
}

// casefolded reports whether the directory holding f is casefolded.
func (s *seqState) casefolded(f string) bool {
	dir := path.Dir(f)
	for _, d := range s.dirs {
		if d.path == dir {
			return d.class&1 != 0
		}
	}
	return true // not known: do not trust it
}

func (s *seqState) setData(f string, c *content) {
	if s.casefolded(f) {
		c.unsure = true
	}
	s.data[f] = c
}

func (s *seqState) writeAt(f string, b []byte, off int64) {
	c := s.data[f]
	if c == nil {
		return
	}
	if end := off + int64(len(b)); end > int64(len(c.b)) {
		c.b = append(c.b, make([]byte, end-int64(len(c.b)))...)
	}
	copy(c.b[off:], b)
}

func (s *seqState) pick(xs []string) string { return xs[s.rng.Intn(len(xs))] }

func (s *seqState) name() string {
	return fmt.Sprintf("%s-%d", s.pick(seqNames), s.rng.Intn(40))
}

// allowed are the errnos a generated call may get: the sequence does not
// track every name, case or policy.
func allowed(err error) bool {
	switch err {
	case nil, errno.EEXIST, errno.ENOENT, errno.ENOTEMPTY, errno.EXDEV, errno.EPERM, errno.ENAMETOOLONG,
		errno.EINVAL, errno.ENOTDIR, errno.EISDIR, errno.EMLINK:
		return true
	}
	return false
}

func (s *seqState) check(op string, err error) bool {
	s.tb.Helper()
	if !allowed(err) {
		s.tb.Fatalf("op %d %s: %v", s.n, op, err)
	}
	return err == nil
}

func (s *seqState) step() {
	s.n++
	p, t, e := s.e.P, s.e.T, s.e
	d := s.dirs[s.rng.Intn(len(s.dirs))]
	switch op := s.rng.Intn(14); {
	case op < 3 || len(s.files) == 0:
		f := path.Join(d.path, s.name())
		fd, err := p.Open(t, f, vfs.O_CREAT|vfs.O_EXCL|vfs.O_RDWR, 0o644)
		if s.check("creat "+f, err) {
			b := make([]byte, s.rng.Intn(3*BlockSize))
			s.rng.Read(b)
			_, err = p.Write(t, fd, b)
			s.check("write "+f, err)
			e.Must(p.Close(t, fd))
			s.files = append(s.files, f)
			s.setData(f, &content{b: b})
		}
	case op == 3:
		dn := path.Join(d.path, s.name())
		if s.check("mkdir "+dn, p.Mkdir(t, dn, 0o755)) {
			s.dirs = append(s.dirs, seqDir{dn, d.class})
		}
	case op == 4:
		f := s.pick(s.files)
		fd, err := p.Open(t, f, vfs.O_WRONLY, 0)
		if s.check("open "+f, err) {
			b := bytes.Repeat([]byte{byte(s.rng.Intn(256))}, 1+s.rng.Intn(2*BlockSize))
			off := int64(s.rng.Intn(40))*BlockSize + int64(s.rng.Intn(BlockSize))
			_, err = p.Pwrite(t, fd, b, off)
			if s.check("pwrite "+f, err) {
				s.writeAt(f, b, off)
			}
			e.Must(p.Close(t, fd))
		}
	case op == 5:
		f := s.pick(s.files)
		n := s.rng.Intn(20 * BlockSize)
		if s.check("truncate "+f, p.Truncate(t, f, int64(n))) {
			if c := s.data[f]; c != nil {
				if n < len(c.b) {
					c.b = c.b[:n]
				} else {
					c.b = append(c.b, make([]byte, n-len(c.b))...)
				}
			}
		}
	case op == 6:
		f := s.pick(s.files)
		to := path.Join(d.path, s.name())
		if s.check("rename "+f, p.Rename(t, f, to, 0)) {
			s.replace(f, to)
		}
	case op == 7:
		f := s.pick(s.files)
		to := path.Join(d.path, s.name())
		if s.check("link "+f, p.Link(t, f, to)) {
			s.files = append(s.files, to)
			if c := s.data[f]; c != nil {
				s.setData(to, c)
			}
		}
	case op == 8:
		f := s.pick(s.files)
		if s.check("unlink "+f, p.Unlink(t, f)) {
			s.remove(f)
			delete(s.data, f)
		}
	case op == 9:
		l := path.Join(d.path, s.name())
		target := s.pick([]string{"t", "../up", strings.Repeat("deep/", 20) + "end"})
		s.check("symlink "+l, p.Symlink(t, target, l))
	case op == 10 && len(s.dirs) > 5:
		i := 5 + s.rng.Intn(len(s.dirs)-5)
		if s.check("rmdir "+s.dirs[i].path, p.Rmdir(t, s.dirs[i].path)) {
			s.dirs = append(s.dirs[:i], s.dirs[i+1:]...)
		}
	case op == 12:
		// A fragmented file: one byte in every other block, so its extents
		// outgrow i_block (a depth-1 tree, deeper with -ext4img.ops large).
		f := s.pick(s.files)
		fd, err := p.Open(t, f, vfs.O_WRONLY, 0)
		if s.check("open "+f, err) {
			start := s.rng.Intn(100)
			for k := 0; k < 5+s.rng.Intn(40); k++ {
				_, err = p.Pwrite(t, fd, []byte{byte(k)}, int64(start+2*k)*BlockSize)
				if s.check("pwrite "+f, err) {
					s.writeAt(f, []byte{byte(k)}, int64(start+2*k)*BlockSize)
				}
			}
			e.Must(p.Close(t, fd))
		}
	case op == 13:
		// A burst of names: a directory that outgrows a block gets an
		// htree.
		for k := 0; k < 60; k++ {
			f := path.Join(d.path, fmt.Sprintf("%s-burst-%d-%d", s.pick(seqNames), s.n, k))
			fd, err := p.Open(t, f, vfs.O_CREAT|vfs.O_EXCL|vfs.O_RDWR, 0o644)
			if s.check("creat "+f, err) {
				e.Must(p.Close(t, fd))
				s.files = append(s.files, f)
				s.setData(f, &content{})
			}
		}
	case op == 11 && len(s.dirs) > 5:
		i := 5 + s.rng.Intn(len(s.dirs)-5)
		from := s.dirs[i].path
		to := path.Join(d.path, s.name())
		if !strings.HasPrefix(to, from+"/") && s.check("rename dir "+from, p.Rename(t, from, to, 0)) {
			s.replaceDir(from, to)
		}
	}
}

func (s *seqState) replace(from, to string) {
	s.remove(to)
	if c := s.data[from]; c != nil {
		delete(s.data, from)
		s.setData(to, c)
	} else {
		delete(s.data, to)
	}
	for i, f := range s.files {
		if f == from {
			s.files[i] = to
		}
	}
}

func (s *seqState) remove(f string) {
	for i, g := range s.files {
		if g == f {
			s.files = append(s.files[:i], s.files[i+1:]...)
			return
		}
	}
}

func (s *seqState) replaceDir(from, to string) {
	fix := func(p string) string {
		if p == from || strings.HasPrefix(p, from+"/") {
			return to + strings.TrimPrefix(p, from)
		}
		return p
	}
	for i := range s.dirs {
		s.dirs[i].path = fix(s.dirs[i].path)
	}
	data := map[string]*content{}
	for f, c := range s.data {
		data[fix(f)] = c
	}
	s.data = data
	for i := range s.files {
		s.files[i] = fix(s.files[i])
	}
}

// debugfsLS renders a directory as debugfs's ls -p -r prints it
// (debugfs/ls.c, list_dir_proc with PARSE_OPT and RAW_OPT over
// ext2fs_dir_iterate with DIRENT_FLAG_INCLUDE_EMPTY): every dirent in
// block order, unused ones and an index node's fake dirent included, as
// "/ino/mode/uid/gid/name/size/" (no size for a directory; the name raw,
// up to a NUL, as fprintf's %.*s stops there), the inode's fields from the
// model's inodes.
func debugfsLS(tb testing.TB, t *kernel.Task, sb *SuperBlock, dir *Inode, sub *[]*Inode) []byte {
	var out bytes.Buffer
	line := func(ino uint32, name []byte) {
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if ino == 0 {
			fmt.Fprintf(&out, "/0/000000/0/0/%s/0/\n", name)
			return
		}
		var child *Inode
		if ino == dir.ino() {
			child = dir
		} else {
			c, err := sb.iget(t, dir, ino)
			if err != nil {
				tb.Fatalf("iget %d: %v", ino, err)
			}
			child = c
			defer func() {
				if string(name) == ".." || !c.IsDir() {
					vfs.Iput(t, &c.Inode)
				} else {
					*sub = append(*sub, c)
				}
			}()
		}
		gid := uint32(0)
		if child.disk != nil {
			gid = child.disk.raw.GID()
		}
		fmt.Fprintf(&out, "/%d/%06o/%d/%d/%s/", ino, child.Mode(), child.OwnerUID(), gid, name)
		if child.IsDir() {
			out.WriteString("/")
		} else {
			fmt.Fprintf(&out, "%d/", child.Size())
		}
		out.WriteString("\n")
	}
	for _, blk := range WalkDirents(nil, dir).Blocks {
		switch blk.Kind {
		case KindDxRoot:
			line(blk.Dot, []byte("."))
			line(blk.DotDot, []byte(".."))
		case KindDxNode:
			line(0, nil)
		}
		for _, de := range blk.Entries {
			line(de.Inode, de.Name)
		}
	}
	return out.Bytes()
}

// compareDebugfs checks every directory reachable from the root against
// debugfs's listing of the saved image img; it returns how many it
// compared.
func compareDebugfs(tb testing.TB, t *kernel.Task, sb *SuperBlock, img string) int {
	n := 0
	var walk func(dir *Inode)
	walk = func(dir *Inode) {
		var sub []*Inode
		want := debugfsLS(tb, t, sb, dir, &sub)
		var stderr bytes.Buffer
		cmd := exec.Command(e2tool("debugfs"), "-R", fmt.Sprintf("ls -p -r <%d>", dir.ino()), img)
		cmd.Stderr = &stderr
		got, err := cmd.Output()
		if err != nil {
			tb.Fatalf("debugfs: %v\n%s", err, stderr.Bytes())
		}
		// debugfs ends the listing with an empty line.
		got = bytes.TrimSuffix(got, []byte("\n"))
		if !bytes.Equal(got, want) {
			tb.Errorf("directory %d:\ndebugfs:\n%q\nvfslab:\n%q", dir.ino(), got, want)
		}
		n++
		for _, c := range sub {
			walk(c)
			vfs.Iput(t, &c.Inode)
		}
	}
	root, err := sb.iget(t, nil, RootIno)
	if err != nil {
		tb.Fatal(err)
	}
	walk(root)
	vfs.Iput(t, &root.Inode)
	return n
}

// runSequence runs one generated sequence on a fresh mke2fs image and
// checks the saved image. It returns the number of calls made.
func runSequence(t *testing.T, seed int64, bs int, ownMkfs bool) int {
	img := filepath.Join(t.TempDir(), "img")
	if ownMkfs {
		// vfslab's own mkfs.ext4 makes the image.
		d := vfs.NewBlockDeviceSize(64 << 20 / vfs.PageSize)
		tk := kernel.New().NewTask("mkfs")
		if err := Type.Mkfs(tk, d, []string{"-b", strconv.Itoa(bs), "-O", "casefold,encrypt"}); err != nil {
			t.Fatal(err)
		}
		tk.Exit()
		if err := d.SaveImage(img); err != nil {
			t.Fatal(err)
		}
	} else {
		cmd := exec.Command(e2tool("mke2fs"), "-q", "-F", "-t", "ext4", "-b", strconv.Itoa(bs), "-O", "casefold,encrypt", "-E", "root_owner=0:0", img, "64M")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("mke2fs: %v\n%s", err, out)
		}
	}
	dev, err := vfs.OpenImage(img, true)
	if err != nil {
		t.Fatal(err)
	}
	var sys *vfs.System
	e := fstestutil.Boot(t, "ext4-seq", func(tk *kernel.Task) (*vfs.System, *vfs.Proc, error) {
		s, p, err := vfs.Boot(tk, vfs.Config{}, Type, vfs.MountOptions{Device: dev, Source: "vdb", ReadOnly: dev.ReadOnly()})
		sys = s
		return s, p, err
	})
	s := &seqState{tb: t, e: e, rng: rand.New(rand.NewSource(seed)), data: map[string]*content{}}
	p, tk := e.P, e.T
	key1 := bytes.Repeat([]byte{0x11}, 64)
	key2 := bytes.Repeat([]byte{0x22}, 64)
	for _, d := range []string{"/plain", "/ci", "/enc", "/cienc", "/nokey"} {
		e.Must(p.Mkdir(tk, d, 0o755))
	}
	setCasefold := func(d string) {
		fd, err := p.Open(tk, d, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		e.Must(err)
		fl := uint32(vfs.FS_CASEFOLD_FL)
		_, err = p.Ioctl(tk, fd, vfs.FS_IOC_SETFLAGS, &fl)
		e.Must(err)
		e.Must(p.Close(tk, fd))
	}
	setCasefold("/ci")
	setCasefold("/cienc")
	_, err = p.EncryptDir(tk, "/enc", key1, 0, 0)
	e.Must(err)
	_, err = p.EncryptDir(tk, "/cienc", key1, 0, 0)
	e.Must(err)
	id2, err := p.EncryptDir(tk, "/nokey", key2, 0, 0)
	e.Must(err)
	s.dirs = []seqDir{{"/plain", 0}, {"/ci", 1}, {"/enc", 2}, {"/cienc", 3}, {"/", 0}}
	for i := 0; i < *imageOps; i++ {
		s.step()
	}
	// An encrypted directory filled with its key, then used without it:
	// its names are no-key names, which unlink and rmdir take.
	for i := 0; i < 30; i++ {
		e.Write(fmt.Sprintf("/nokey/%s-%d", s.pick(seqNames), i), strings.Repeat("k", i*300))
	}
	e.Must(p.Mkdir(tk, "/nokey/sub", 0o700))
	fd, err := p.Open(tk, "/", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	e.Must(err)
	_, err = p.RemoveEncryptionKey(tk, fd, id2)
	e.Must(err)
	e.Must(p.Close(tk, fd))
	if err := p.Mkdir(tk, "/nokey/new", 0o700); err != errno.ENOKEY {
		t.Fatalf("mkdir without the key: %v", err)
	}
	names := e.List("/nokey")
	for i, n := range names {
		if n == "." || n == ".." || i%3 != 0 {
			continue
		}
		if err := p.Unlink(tk, "/nokey/"+n); err == errno.EISDIR {
			e.Must(p.Rmdir(tk, "/nokey/"+n))
		} else {
			e.Must(err)
		}
	}
	sb := EXT4_SB(sys.RootMount().SB)
	e.Must(SyncFS(tk, sb.VFS()))
	out := filepath.Join(t.TempDir(), "out.img")
	e.Must(dev.SaveImage(out))
	if b, err := exec.Command(e2tool("e2fsck"), "-fn", out).CombinedOutput(); err != nil {
		keep := filepath.Join(os.TempDir(), fmt.Sprintf("ext4img-seq-%d.img", seed))
		_ = os.WriteFile(keep, mustRead(t, out), 0o644)
		t.Fatalf("sequence %d: e2fsck -fn: %v (image kept as %s)\n%s", seed, err, keep, b)
	}
	if n := compareDebugfs(t, tk, sb, out); n < 5 {
		t.Fatalf("compared %d directories", n)
	}
	// Import: the saved image, mounted read-only on a new machine with the
	// key added again, reads as the model says.
	checked := s.verifyImport(t, out, key1)
	htrees, deep := 0, 0
	sb.mu.Lock()
	for _, ei := range sb.inodes {
		if ei.IsDir() && ei.IsDx() {
			htrees++
		}
		if ei.disk != nil && len(ei.disk.nodes) > 0 {
			deep++
		}
	}
	sb.mu.Unlock()
	t.Logf("sequence %d (%d-byte blocks): %d calls, %d htree directories, %d extent trees of depth > 0, %d files' contents checked after import",
		seed, bs, s.n, htrees, deep, checked)
	return s.n
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestImageSequences: -ext4img.seqs generated sequences (4 by default) of
// -ext4img.ops calls each, on images of 4, 1 and 2 KiB blocks in turn,
// made by mke2fs (and every fourth by vfslab's own mkfs);
// every saved image must pass e2fsck -fn and list in debugfs as in
// vfslab.
func TestImageSequences(t *testing.T) {
	needE2fsprogs(t)
	accepted, calls := 0, 0
	for i := 0; i < *imageSeqs; i++ {
		bs := []int{4096, 1024, 2048}[i%3]
		own := i%4 == 3
		mk := "mke2fs"
		if own {
			mk = "vfslab-mkfs"
		}
		ok := t.Run(fmt.Sprintf("%d/bs=%d/%s", i, bs, mk), func(t *testing.T) { calls += runSequence(t, int64(i), bs, own) })
		if ok {
			accepted++
		}
	}
	t.Logf("%d of %d generated sequences (%d calls) gave images e2fsck -fn accepted", accepted, *imageSeqs, calls)
}

var _ = fscrypt.PolicyV2

// verifyImport mounts img read-only on a new machine, adds key, and reads
// every file the model is sure of; it returns how many it checked.
func (s *seqState) verifyImport(t *testing.T, img string, key []byte) int {
	dev, err := vfs.OpenImage(img, false)
	if err != nil {
		t.Fatal(err)
	}
	e := fstestutil.Boot(t, "ext4-import", func(tk *kernel.Task) (*vfs.System, *vfs.Proc, error) {
		// The image was saved while mounted: needs_recovery is set
		// (its journal is empty), which a read-only device refuses to
		// replay; noload mounts it as it is.
		return vfs.Boot(tk, vfs.Config{}, Type, vfs.MountOptions{Device: dev, Source: "vdc", ReadOnly: dev.ReadOnly(), Data: "noload"})
	})
	fd, err := e.P.Open(e.T, "/", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	e.Must(err)
	_, err = e.P.AddEncryptionKey(e.T, fd, key)
	e.Must(err)
	e.Must(e.P.Close(e.T, fd))
	n := 0
	for f, c := range s.data {
		if c.unsure {
			continue
		}
		got, err := e.Read(f)
		if err != nil || got != string(c.b) {
			t.Errorf("after import, %s: %d bytes, %v; the model has %d", f, len(got), err, len(c.b))
		}
		n++
	}
	return n
}
