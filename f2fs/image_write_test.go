package f2fs_test

import (
	"flag"
	"fmt"
	"math/rand"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"

	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/vfs"
)

var (
	imageSeqs   = flag.Int("f2fs.imageseqs", 3, "generated syscall sequences whose written image fsck.f2fs must accept")
	exportFscks = flag.Int("f2fs.exportfscks", 1, "property-test cases whose exported image goes to fsck.f2fs")
)

// fsckAccepts runs fsck.f2fs --dry-run -f on img: no [Fail], [FIX] or
// ASSERT in its report.
func fsckAccepts(tb testing.TB, img string) (bool, string) {
	tb.Helper()
	out := run(tb, "fsck.f2fs", "--dry-run", "-f", img)
	bad := strings.Contains(out, "[Fail]") || strings.Contains(out, "[FIX]") || strings.Contains(out, "ASSERT")
	return !bad, out
}

// TestImageWriteFsck: generated syscall sequences (create, mkdir,
// write, rename, link, unlink, truncate) on a writable sload.f2fs image
// with the encrypt and casefold features, in plain, casefolded, encrypted
// and casefolded-and-encrypted directories, then a checkpoint (SyncFs,
// every other sequence after the key is removed) and the device written
// back: fsck.f2fs must accept the image, dump.f2fs must show the inodes
// with the machine's sizes and link counts, fsck.f2fs -t the names (the
// ciphertext for encrypted ones) under their inode numbers, and a new
// mount must read the plain files as the machine did.
func TestImageWriteFsck(t *testing.T) {
	needF2fsTools(t, "sload.f2fs", "fsck.f2fs", "dump.f2fs")
	src := srcTree(t, false)
	accepted := 0
	for seq := 0; seq < *imageSeqs; seq++ {
		img := makeImage(t, 64, src, "-O", "encrypt,casefold,extra_attr,inode_checksum,sb_checksum", "-C", "utf8")
		e, dev := bootImage(t, img, true)
		r := rand.New(rand.NewSource(int64(seq)))
		files := []string{"/small", "/a/twoblocks", "/zero"}
		dirs := []string{"/", "/a", "/many", "/empty"}
		for _, d := range []string{"/cf", "/enc", "/cfenc"} {
			e.Must(e.P.Mkdir(e.T, d, 0o755))
			dirs = append(dirs, d)
		}
		e.Must(setCasefold(e, "/cf"))
		e.Must(setCasefold(e, "/cfenc"))
		key := []byte("f2fs image test master key, 64 bytes long.......................")
		id, err := e.P.EncryptDir(e.T, "/enc", key, 0, 0)
		e.Must(err)
		_, err = e.P.EncryptDir(e.T, "/cfenc", key, 0, 0)
		e.Must(err)
		// One large file: i_addr, then a direct node (3.6 MiB).
		e.Write("/large", strings.Repeat("L", 3600000))
		files = append(files, "/large")
		links := map[string]string{}
		for op := 0; op < 80; op++ {
			if op == 40 {
				// A checkpoint in the middle: the filesystem goes on
				// from the image it wrote.
				e.Must(e.dir("/").SB.SyncFs(e.T))
			}
			d := dirs[r.Intn(len(dirs))]
			name := strings.TrimSuffix(d, "/") + fmt.Sprintf("/n%d-%d", seq, op)
			switch r.Intn(8) {
			case 7:
				target := strings.Repeat("t", 1+r.Intn(5000))
				if e.P.Symlink(e.T, target, name) == nil {
					links[name] = target
				}
			case 0, 1:
				e.Write(name, strings.Repeat("x", r.Intn(3*f2fs.BlockSize)))
				files = append(files, name)
			case 2:
				if e.P.Mkdir(e.T, name, 0o755) == nil {
					dirs = append(dirs, name)
				}
			case 3:
				if len(files) > 0 {
					i := r.Intn(len(files))
					if e.P.Rename(e.T, files[i], name, 0) == nil {
						files[i] = name
					}
				}
			case 4:
				if len(files) > 0 && e.P.Link(e.T, files[r.Intn(len(files))], name) == nil {
					files = append(files, name)
				}
			case 5:
				if len(files) > 1 {
					i := r.Intn(len(files))
					if e.P.Unlink(e.T, files[i]) == nil {
						files = append(files[:i], files[i+1:]...)
					}
				}
			case 6:
				if len(files) > 0 {
					e.P.Truncate(e.T, files[r.Intn(len(files))], int64(r.Intn(2*f2fs.BlockSize)))
				}
			}
		}
		before := map[string]string{}
		for _, f := range files {
			got, err := e.Read(f)
			e.Must(err)
			before[f] = got
		}
		if seq%2 == 1 {
			fd, err := e.P.Open(e.T, "/", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
			e.Must(err)
			_, err = e.P.RemoveEncryptionKey(e.T, fd, id)
			e.Must(err)
			e.Must(e.P.Close(e.T, fd))
		}
		sbi := e.dir("/").SB
		disk := onDiskTree(t, e)
		e.Must(sbi.SyncFs(e.T))
		e.Must(dev.Sync())
		ok, out := fsckAccepts(t, img)
		if !ok {
			t.Fatalf("sequence %d: fsck.f2fs:\n%s", seq, out)
		}
		accepted++
		compareDump(t, img, disk)
		e2, _ := bootImage(t, img, false)
		// The key again, for the encrypted files.
		fd, err := e2.P.Open(e2.T, "/", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		e.Must(err)
		_, err = e2.P.AddEncryptionKey(e2.T, fd, key)
		e.Must(err)
		e.Must(e2.P.Close(e2.T, fd))
		for l, target := range links {
			buf := make([]byte, 8192)
			n, err := e2.P.Readlink(e2.T, l, buf)
			if err != nil || string(buf[:n]) != target {
				_, lerr := e2.P.Lstat(e2.T, l)
				t.Fatalf("sequence %d: readlink %s: %d bytes %v (lstat %v), want %d; the directory lists %q", seq, l, n, err, lerr, len(target), e2.List(l[:strings.LastIndex(l, "/")+1]))
			}
		}
		for f, want := range before {
			if got, err := e2.Read(f); err != nil || got != want {
				t.Fatalf("sequence %d: %s reads %d bytes %q... (%v) after remount, want %d bytes %q...", seq, f, len(got), got[:min(len(got), 16)], err, len(want), want[:min(len(want), 16)])
			}
		}
	}
	t.Logf("fsck.f2fs accepted %d of %d written images", accepted, *imageSeqs)
}

func setCasefold(e *env, path string) error {
	fd, err := e.P.Open(e.T, path, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer e.P.Close(e.T, fd)
	fl := uint32(vfs.FS_CASEFOLD_FL)
	_, err = e.P.Ioctl(e.T, fd, vfs.FS_IOC_SETFLAGS, &fl)
	return err
}

// diskInode is what the machine says an inode holds on disk: its size,
// its link count and the on-disk names (ciphertext in encrypted
// directories) of its dentries.
type diskInode struct {
	size  int64
	nlink uint32
	names []string
}

// onDiskTree walks the mounted image's directories from the root with
// f2fs.WalkDirents.
func onDiskTree(tb testing.TB, e *env) map[uint32]*diskInode {
	tb.Helper()
	out := map[uint32]*diskInode{}
	var walk func(dir *f2fs.Inode)
	walk = func(dir *f2fs.Inode) {
		for _, a := range f2fs.WalkDirents(e.T, dir).Areas {
			for _, d := range a.Dirents {
				if d.Slots == 0 || string(d.Name) == "." || string(d.Name) == ".." {
					continue
				}
				ino := d.Entry.Ino
				fi := f2fs.LookupInode(e.T, dir.SB, ino)
				if fi == nil {
					tb.Fatalf("inode %d not found", ino)
				}
				di := out[ino]
				if di == nil {
					di = &diskInode{size: fi.Size(), nlink: fi.Nlink()}
					out[ino] = di
					if fi.IsDir() {
						walk(fi)
					}
				}
				di.names = append(di.names, string(d.Name))
			}
		}
	}
	walk(e.dir("/"))
	return out
}

var (
	reTreeEntry = regexp.MustCompile(`-- (.*) <ino = 0x([0-9a-f]+)>, <encrypted \((\d)\)>`)
	reDumpSize  = regexp.MustCompile(`(?m)^i_size\s+\[0x\s*[0-9a-f]+ : (\d+)\]`)
	reDumpLinks = regexp.MustCompile(`(?m)^i_links\s+\[0x\s*[0-9a-f]+ : (\d+)\]`)
)

// compareDump checks the written image with f2fs-tools: fsck.f2fs -t
// lists every inode under as many names as the machine has for it (the
// plain names themselves), and dump.f2fs -i shows its size and link
// count.
func compareDump(tb testing.TB, img string, disk map[uint32]*diskInode) {
	tb.Helper()
	tree := run(tb, "fsck.f2fs", "--dry-run", "-t", img)
	listed := map[uint32][]string{}
	for _, m := range reTreeEntry.FindAllStringSubmatch(tree, -1) {
		ino, _ := strconv.ParseUint(m[2], 16, 32)
		listed[uint32(ino)] = append(listed[uint32(ino)], m[1])
	}
	if len(listed) != len(disk) {
		tb.Fatalf("fsck.f2fs -t lists %d inodes, the machine %d", len(listed), len(disk))
	}
	checked := 0
	for ino, di := range disk {
		names := listed[ino]
		if len(names) != len(di.names) {
			tb.Fatalf("inode %d: fsck.f2fs -t names %q, the machine %q", ino, names, di.names)
		}
		for _, n := range di.names {
			if utf8.ValidString(n) && strings.HasPrefix(n, "n") && !slices.Contains(names, n) {
				tb.Fatalf("inode %d: fsck.f2fs -t names %q, not %q", ino, names, n)
			}
		}
		if checked < 12 {
			// dump.f2fs asks whether to dump a regular file's contents.
			cmd := exec.Command("dump.f2fs", "-i", fmt.Sprintf("0x%x", ino), img)
			cmd.Stdin = strings.NewReader("n\n")
			b, _ := cmd.CombinedOutput()
			out := string(b)
			sz, ln := reDumpSize.FindStringSubmatch(out), reDumpLinks.FindStringSubmatch(out)
			if sz == nil || ln == nil || sz[1] != fmt.Sprint(di.size) || ln[1] != fmt.Sprint(di.nlink) {
				tb.Fatalf("inode %d: dump.f2fs size %v links %v, the machine %d %d", ino, sz, ln, di.size, di.nlink)
			}
			checked++
		}
	}
}

// TestPropertyImageExport: any sequence of creates, writes, mkdirs,
// unlinks, renames, truncates and checkpoints on the base image, then the
// step "export (SyncFs), check with the real fsck (for the first
// -f2fs.exportfscks cases, when fsck.f2fs is installed), import (a new
// mount of the written blocks), compare with the model": every directory
// lists the model's names and every file reads the model's contents.
func TestPropertyImageExport(t *testing.T) {
	_, haveFsck := exec.LookPath("fsck.f2fs")
	checked, cases := 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		// -short: the first 10 cases; the others return at once.
		if cases++; testing.Short() && cases > 10 {
			return
		}
		e, dev := bootImageDev(t, baseDevice(t, 0, 0, nil))
		// The model starts as the base image: its files and directories
		// (the symlink /l is left alone and listed as it is).
		files := map[string]string{}
		dirs := map[string]bool{"/": true, "/d": true, "/empty": true, "/d/e": true}
		for d := range dirs {
			for _, n := range e.List(d) {
				p := strings.TrimSuffix(d, "/") + "/" + n
				if n == "." || n == ".." || dirs[p] || p == "/l" {
					continue
				}
				c, err := e.Read(p)
				e.Must(err)
				files[p] = c
			}
		}
		dirList := func() []string {
			var out []string
			for d := range dirs {
				out = append(out, d)
			}
			sort.Strings(out)
			return out
		}
		fileList := func() []string {
			var out []string
			for f := range files {
				out = append(out, f)
			}
			sort.Strings(out)
			return out
		}
		join := func(d, n string) string { return strings.TrimSuffix(d, "/") + "/" + n }
		name := rapid.StringMatching(`n[a-zA-Z0-9._-]{0,20}`)
		steps := rapid.IntRange(1, 30).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			switch rapid.IntRange(0, 5).Draw(rt, "op") {
			case 0:
				p := join(rapid.SampledFrom(dirList()).Draw(rt, "dir"), name.Draw(rt, "name"))
				if dirs[p] {
					continue
				}
				c := strings.Repeat(rapid.SampledFrom([]string{"x", "yz", "\x00"}).Draw(rt, "unit"), rapid.IntRange(0, 9000).Draw(rt, "len"))
				e.Write(p, c)
				files[p] = c
			case 1:
				p := join(rapid.SampledFrom(dirList()).Draw(rt, "dir"), name.Draw(rt, "name"))
				if _, ok := files[p]; ok || dirs[p] {
					continue
				}
				e.Must(e.P.Mkdir(e.T, p, 0o755))
				dirs[p] = true
			case 2:
				if len(files) == 0 {
					continue
				}
				p := rapid.SampledFrom(fileList()).Draw(rt, "victim")
				e.Must(e.P.Unlink(e.T, p))
				delete(files, p)
			case 3:
				if len(files) == 0 {
					continue
				}
				from := rapid.SampledFrom(fileList()).Draw(rt, "from")
				to := join(rapid.SampledFrom(dirList()).Draw(rt, "dir"), name.Draw(rt, "name"))
				if dirs[to] || to == from {
					continue
				}
				e.Must(e.P.Rename(e.T, from, to, 0))
				files[to] = files[from]
				delete(files, from)
			case 4:
				if len(files) == 0 {
					continue
				}
				p := rapid.SampledFrom(fileList()).Draw(rt, "trunc")
				n := rapid.IntRange(0, len(files[p])+5000).Draw(rt, "size")
				e.Must(e.P.Truncate(e.T, p, int64(n)))
				c := files[p]
				if n <= len(c) {
					files[p] = c[:n]
				} else {
					files[p] = c + strings.Repeat("\x00", n-len(c))
				}
			case 5:
				// An export in the middle.
				e.Must(e.dir("/").SB.SyncFs(e.T))
			}
		}
		// Export, check, import, compare.
		e.Must(e.dir("/").SB.SyncFs(e.T))
		if haveFsck == nil && !testing.Short() && checked < *exportFscks {
			checked++
			img := filepath.Join(t.TempDir(), "export.img")
			e.Must(dev.SaveImage(img))
			if ok, out := fsckAccepts(t, img); !ok {
				rt.Fatalf("fsck.f2fs:\n%s", out)
			}
		}
		e2, _ := bootImageDev(t, cloneDev(dev))
		for d := range dirs {
			want := []string{".", ".."}
			for p := range files {
				if path.Dir(p) == d {
					want = append(want, path.Base(p))
				}
			}
			for p := range dirs {
				if p != "/" && path.Dir(p) == d {
					want = append(want, path.Base(p))
				}
			}
			if d == "/" {
				want = append(want, "l")
			}
			sort.Strings(want)
			got := e2.List(d)
			if strings.Join(got, "/") != strings.Join(want, "/") {
				rt.Fatalf("%s lists %q after export and import, the model %q", d, got, want)
			}
		}
		for p, want := range files {
			if got, err := e2.Read(p); err != nil || got != want {
				rt.Fatalf("%s reads %d bytes (%v) after export and import, the model %d", p, len(got), err, len(want))
			}
		}
	})
}

// cloneDev copies a device's blocks to a new one (the root mount keeps
// its device claimed); zero blocks are left untouched, so that the copy
// costs what the image holds.
func cloneDev(d *vfs.BlockDevice) *vfs.BlockDevice {
	n, err := d.Clone()
	if err != nil {
		panic(err)
	}
	return n
}

// TestImageInlineTruncatedPastMax: a new inline file truncated past
// MAX_INLINE_DATA is written converted (f2fs_setattr's
// f2fs_convert_inline_inode), with a new inode's own layout: fsck.f2fs
// refused "wrong inline size:3500" when the limit was taken before it.
func TestImageInlineTruncatedPastMax(t *testing.T) {
	needF2fsTools(t, "sload.f2fs", "fsck.f2fs", "dump.f2fs")
	src := srcTree(t, false)
	for _, opts := range [][]string{{"-O", "encrypt"}, {"-O", "encrypt,extra_attr"}} {
		img := makeImage(t, 64, src, opts...)
		e, dev := bootImage(t, img, true)
		for i, size := range []int64{3452, 3453, 3488, 3489, 3500, 9000} {
			name := fmt.Sprintf("/t%d", i)
			e.Write(name, "hi")
			e.Must(e.P.Truncate(e.T, name, size))
		}
		e.Must(e.dir("/").SB.SyncFs(e.T))
		e.Must(dev.Sync())
		if ok, out := fsckAccepts(t, img); !ok {
			t.Fatalf("%v: fsck.f2fs:\n%s", opts, out)
		}
	}
}
