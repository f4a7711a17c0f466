package shell

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vfslab/vfslab/vfs"
)

var writebackKills = flag.Int("writeback-kills", 50, "TestWriteBackKilled: how many times to kill vfslab sh during write-back (the long version: 1000)")

// TestWriteBackKilled kills vfslab sh (SIGKILL) at random moments while
// it writes a writable 64 MiB image back again and again (a loop of
// writes, removals and sync), alternately an ext4 and an f2fs image, then
// attaches the image again (which completes or discards a write-back
// left unfinished) and checks it with e2fsck -fn or fsck.f2fs: after every
// kill the image must be a clean filesystem, its state after some sync.
// Skipped without e2fsprogs and f2fs-tools; -writeback-kills N sets the
// number of kills.
func TestWriteBackKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	for _, tool := range []string{"e2fsck", "fsck.f2fs"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	imgs := []string{filepath.Join(dir, "ext4.img"), filepath.Join(dir, "f2fs.img")}
	if got, st := runScript(t, "", "--device", "vdb:64M", "--device", "vdc:64M",
		"--save-image", "/dev/vdb:"+imgs[0], "--save-image", "/dev/vdc:"+imgs[1], "-c",
		"mkfs.ext4 -q /dev/vdb; mkfs.f2fs -q -f /dev/vdc >/dev/null"); st != 0 {
		t.Fatalf("mkfs: %q status %d", got, st)
	}
	// Each round starts where the last kill left the image: the files
	// change size and contents, directories come and go.
	const loop = `mount /dev/vdb /mnt/scratch || exit 1
i=$1
while [ $i -lt $(($1 + 100000)) ]; do
	i=$((i + 1))
	d=/mnt/scratch/d$((i % 5))
	mkdir -p $d
	xfs_io -f -c "pwrite -S $((i % 250)) 0 $((i % 7 * 96 + 4))k" $d/f$((i % 11)) >/dev/null 2>&1
	rm -f /mnt/scratch/d$(((i + 2) % 5))/f$(((i + 3) % 11))
	[ $((i % 9)) = 0 ] && rm -rf /mnt/scratch/d$(((i + 4) % 5))
	sync
done`
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d (kills at random moments: a failure names its round)", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	leftover := 0
	start := time.Now()
	for round := 0; round < *writebackKills; round++ {
		img := imgs[round%2]
		cmd := exec.Command(exe, "--image", img+":/dev/vdb", "--writable", "-c", loop, "sh", fmt.Sprint(round*1000))
		cmd.Env = append(os.Environ(), "VFSLAB_SH_MAIN=1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(50+rng.IntN(400)) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		if _, err := os.Stat(img + vfs.WALSuffix); err == nil {
			leftover++
		}
		d, err := vfs.OpenImage(img, true)
		if err != nil {
			t.Fatalf("round %d: attaching %s again: %v", round, img, err)
		}
		d.Close()
		if _, err := os.Stat(img + vfs.WALSuffix); err == nil {
			t.Fatalf("round %d: the write-ahead record is still there after the attach", round)
		}
		var out []byte
		if round%2 == 0 {
			out, err = exec.Command("e2fsck", "-fn", img).CombinedOutput()
		} else {
			out, err = exec.Command("fsck.f2fs", "--dry-run", "-f", img).CombinedOutput()
			if s := string(out); err == nil && (strings.Contains(s, "[Fail]") || strings.Contains(s, "[FIX]") || strings.Contains(s, "ASSERT")) {
				err = fmt.Errorf("fsck.f2fs found problems")
			}
		}
		if err != nil {
			t.Fatalf("round %d (%s, seed %d): %v\n%s", round, filepath.Base(img), seed, err, out)
		}
	}
	t.Logf("%d kills, %d images checked clean (%d left a write-ahead record, completed at the next attach), %v",
		*writebackKills, *writebackKills, leftover, time.Since(start).Round(time.Millisecond))
}
