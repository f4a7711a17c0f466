package ext4_test

import (
	"context"
	"crypto/md5"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/internal/fstestutil"
	"github.com/vfslab/vfslab/linuxvm"
	"github.com/vfslab/vfslab/vfs"
)

// findListing is the tree under /mnt as the guest's find -printf '%p %y
// %s %n' and md5sum print it: "./path TYPE SIZE NLINK [MD5]", sorted,
// lost+found left out.
func findListing(e *fstestutil.Env) string {
	var out []string
	var walk func(dir, rel string)
	walk = func(dir, rel string) {
		for _, n := range e.List(dir) {
			if n == "." || n == ".." || (rel == "." && n == "lost+found") {
				continue
			}
			st, err := e.P.Lstat(e.T, dir+"/"+n)
			e.Must(err)
			y := map[uint32]string{vfs.S_IFDIR: "d", vfs.S_IFLNK: "l", vfs.S_IFREG: "f"}[st.Mode&vfs.S_IFMT]
			line := fmt.Sprintf("%s/%s %s %d %d", rel, n, y, st.Size, st.Nlink)
			if y == "f" {
				data, err := e.Read(dir + "/" + n)
				e.Must(err)
				line += fmt.Sprintf(" %x", md5.Sum([]byte(data)))
			}
			out = append(out, line)
			if y == "d" {
				walk(dir+"/"+n, rel+"/"+n)
			}
		}
	}
	walk("/mnt", ".")
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// guestListing is the script's part for one device: mount (the kernel's
// journal recovery), the listing, umount, e2fsck -fn.
const guestListing = `echo "=== $1"
mount /dev/$1 /mnt || echo "mount failed"
cd /mnt
find . -path ./lost+found -prune -o ! -name . -printf '%p %y %s %n\n' | sort >/tmp/list
find . -path ./lost+found -prune -o -type f -print | while read -r f; do echo "$f $(md5sum <"$f" | cut -d' ' -f1)"; done >/tmp/md5
cd /
while read -r p y s n; do echo "$p $y $s $n $(grep -F "$p " /tmp/md5 | cut -d' ' -f2)" | sed 's/ $//'; done </tmp/list
umount /mnt
e2fsck -fn /dev/$1 >/tmp/fsck 2>&1; echo "fsck $?"
`

// TestImageCrashLinuxRecovery (VFSLAB_LINUX=1, QEMU and the host's
// kernel): the images a crash leaves just after each commit block of a
// workload, before the checkpoint, mount on Linux, whose jbd2 replays the
// model's journal: each reads as the model's state after that commit
// (names, types, sizes, links, contents) and is clean for e2fsck -fn
// after Linux's umount; just before each commit block, each reads as the
// state before it. 1 and 4 KiB blocks.
func TestImageCrashLinuxRecovery(t *testing.T) {
	if os.Getenv("VFSLAB_LINUX") == "" {
		t.Skip("linux: QEMU boots are off; set VFSLAB_LINUX=1 to run them")
	}
	h, err := linuxvm.Find("")
	if err != nil {
		t.Skip(err)
	}
	for _, bs := range []int{1024, 4096} {
		t.Run(fmt.Sprint(bs), func(t *testing.T) { testCrashLinux(t, h, bs) })
	}
}

func testCrashLinux(t *testing.T, h *linuxvm.Host, bs int) {
	dev, base := crashDevice(t, "-b", fmt.Sprint(bs))
	var writes []ext4.BlockWrite
	ext4.LogWrites(dev, func(w ext4.BlockWrite) { writes = append(writes, w) })
	defer ext4.LogWrites(dev, nil)
	e, sys := mountAt(t, dev, "ext4-linux")
	steps := []func(){
		func() {
			e.Must(e.P.Mkdir(e.T, "/mnt/a", 0o755))
			e.Write("/mnt/a/f", strings.Repeat("crash point data ", 700))
			e.Write("/mnt/a/small", "s")
		},
		func() {
			e.Must(e.P.Rename(e.T, "/mnt/a/f", "/mnt/a/g", 0))
			e.Must(e.P.Mkdir(e.T, "/mnt/a/sub", 0o700))
			e.Write("/mnt/a/sub/h", strings.Repeat("h", 5000))
		},
		func() {
			e.Must(e.P.Unlink(e.T, "/mnt/a/small"))
			e.Must(e.P.Symlink(e.T, escapedTarget, "/mnt/lnk"))
		},
		func() {
			e.Must(e.P.Unlink(e.T, "/mnt/a/sub/h"))
			e.Must(e.P.Rmdir(e.T, "/mnt/a/sub"))
			e.Must(e.P.Unlink(e.T, "/mnt/a/g"))
			e.Write("/mnt/last", "L")
		},
	}
	var states []string
	var commitEnds []int // the write after each step's commit block
	for i, step := range steps {
		step()
		e.Must(sys.Sync(e.T))
		states = append(states, findListing(e))
		k := len(writes)
		for k > 0 && !isCommit(writes[k-1]) {
			k--
		}
		if k == 0 {
			t.Fatalf("step %d committed nothing", i)
		}
		commitEnds = append(commitEnds, k)
	}
	// Two boots of four images: just after each commit block (the
	// state after it), and just before it (the state before).
	for _, after := range []bool{true, false} {
		images := map[string]string{}
		var want []string
		src := "list() {\n" + guestListing + "}\n"
		for i, k := range commitEnds {
			w := ""
			if after {
				w = states[i]
			} else {
				k--
				if i > 0 {
					w = states[i-1]
				}
			}
			want = append(want, w)
			img := filepath.Join(t.TempDir(), fmt.Sprintf("crash%d.img", i))
			if err := os.WriteFile(img, crashImage(base, writes[:k]), 0o644); err != nil {
				t.Fatal(err)
			}
			images[linuxvm.DefaultDisks[i]] = img
			src += "list " + linuxvm.DefaultDisks[i] + "\n"
		}
		checkLinux(t, h, src, images, want, after)
	}
}

// checkLinux runs src on Linux with the crash images attached and wants
// each listing and a clean e2fsck.
func checkLinux(t *testing.T, h *linuxvm.Host, src string, images map[string]string, want []string, after bool) {
	t.Helper()
	run, err := h.Run(context.Background(), []linuxvm.Script{{Name: "crash", Source: []byte(src), Images: images,
		Env: []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root"}}},
		linuxvm.Options{ScriptTimeout: 5 * time.Minute, Progress: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	r := run.Results[0]
	if r.Err != nil || r.Status != 0 {
		t.Fatalf("guest: status %d, %v\n%s\n%s", r.Status, r.Err, r.Stdout, r.Stderr)
	}
	parts := strings.Split(string(r.Stdout), "=== ")[1:]
	if len(parts) != len(want) {
		t.Fatalf("guest printed %d listings, want %d:\n%s", len(parts), len(want), r.Stdout)
	}
	where := "after"
	if !after {
		where = "before"
	}
	for i, part := range parts {
		lines := strings.Split(strings.TrimSpace(part), "\n")[1:]
		fsck := lines[len(lines)-1]
		got := strings.Join(lines[:len(lines)-1], "\n")
		if got != want[i] {
			t.Errorf("crash just %s commit block %d: Linux's recovery reads\n%s\nthe model's state\n%s", where, i+1, got, want[i])
		}
		if fsck != "fsck 0" {
			t.Errorf("crash just %s commit block %d: e2fsck -fn after Linux's umount: %s", where, i+1, fsck)
		}
	}
	if n := strings.Count(string(r.Dmesg), "recovery complete"); n != len(want) {
		t.Errorf("Linux recovered %d journals, want %d:\n%s", n, len(want), r.Dmesg)
	}
}
