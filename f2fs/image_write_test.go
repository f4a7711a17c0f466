package f2fs_test

import (
	"flag"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/f2fs"
)

var imageSeqs = flag.Int("f2fs.imageseqs", 4, "generated syscall sequences whose written image fsck.f2fs must accept")

// fsckAccepts runs fsck.f2fs --dry-run -f on img: no [Fail], [FIX] or
// ASSERT in its report.
func fsckAccepts(tb testing.TB, img string) (bool, string) {
	tb.Helper()
	out := run(tb, "fsck.f2fs", "--dry-run", "-f", img)
	bad := strings.Contains(out, "[Fail]") || strings.Contains(out, "[FIX]") || strings.Contains(out, "ASSERT")
	return !bad, out
}

// TestImageWriteFsck: generated syscall sequences (create, mkdir,
// write, rename, link, unlink, truncate) on a writable sload.f2fs image,
// then a checkpoint (SyncFs) and the device written back: fsck.f2fs
// must accept the image, and a new mount must list and read it as the
// machine did.
func TestImageWriteFsck(t *testing.T) {
	needF2fsTools(t, "sload.f2fs", "fsck.f2fs")
	src := srcTree(t, false)
	accepted := 0
	for seq := 0; seq < *imageSeqs; seq++ {
		img := makeImage(t, 64, src, "-O", "extra_attr,inode_checksum,sb_checksum")
		e, dev := bootImage(t, img, true)
		r := rand.New(rand.NewSource(int64(seq)))
		files := []string{"/small", "/a/twoblocks", "/zero"}
		dirs := []string{"/", "/a", "/many", "/empty"}
		for op := 0; op < 60; op++ {
			d := dirs[r.Intn(len(dirs))]
			name := strings.TrimSuffix(d, "/") + fmt.Sprintf("/n%d-%d", seq, op)
			switch r.Intn(7) {
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
		sbi := e.dir("/").SB
		e.Must(sbi.SyncFs(e.T))
		e.Must(dev.Sync())
		ok, out := fsckAccepts(t, img)
		if !ok {
			t.Fatalf("sequence %d: fsck.f2fs:\n%s", seq, out)
		}
		accepted++
		e2, _ := bootImage(t, img, false)
		for f, want := range before {
			if got, err := e2.Read(f); err != nil || got != want {
				t.Fatalf("sequence %d: %s reads %q (%v) after remount, want %q", seq, f, got, err, want)
			}
		}
	}
	t.Logf("fsck.f2fs accepted %d of %d written images", accepted, *imageSeqs)
}
