package shell

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// TestScratchDevicesAreDisks: the scratch devices are 8 GiB disks by
// default and --device sizes one; mkfs.ext4's -b and mke2fs's defaults
// for the size take effect (the block size and inode count on the disk
// itself, which dumpe2fs-free scripts see through s_maxbytes and
// /proc/mounts-free probes: the superblock bytes).
func TestScratchDevicesAreDisks(t *testing.T) {
	got, st := runScript(t, "", "--device", "vdc:256M", "--device", "/dev/vdd:64K", "-c",
		`blockdev --getsize64 /dev/vdb /dev/vdc /dev/vdd /dev/vde
sb() { dd if=$1 bs=4 skip=256 count=1 status=none | od -An -tu4; dd if=$1 bs=4 skip=262 count=1 status=none | od -An -tu4; }
mkfs.ext4 -q -b 1024 /dev/vdb; sb /dev/vdb
mkfs.ext4 -q /dev/vdc; sb /dev/vdc
mkfs.ext4 -q /dev/vde; sb /dev/vde`)
	// s_inodes_count at 1024 and s_log_block_size at 1048: 8 GiB at
	// an inode per 16 KiB with 4 KiB blocks unless -b; 256 MiB is
	// mke2fs.conf's "small" type (1 KiB blocks, an inode per 4 KiB).
	want := "8589934592\n268435456\n65536\n8589934592\n524288\n0\n65536\n0\n524288\n2\n"
	if st != 0 || strings.Join(strings.Fields(got), "\n")+"\n" != want {
		t.Fatalf("got %q status %d, want %q", got, st, want)
	}
	for _, bad := range []string{"vdz:1M", "vdb", "vdb:1000", "vdb:0", "vdb:2T", "vdb:1X"} {
		got, st := runScript(t, "", "--device", bad, "-c", "true")
		if st != 2 || strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, "vfslab sh: --device") {
			t.Errorf("--device %s: %q status %d; want one usage line and status 2", bad, got, st)
		}
	}
}

// TestFullDeviceENOSPC: a file filling a small disk ends with ENOSPC, as
// does a write past the end of the raw device.
func TestFullDeviceENOSPC(t *testing.T) {
	for _, fs := range []string{"ext4", "f2fs"} {
		got, _ := runScript(t, "", "--device", "vdb:64M", "-c", `mkfs.`+fs+` -q -f /dev/vdb >/dev/null 2>&1 || mkfs.`+fs+` -q /dev/vdb
mount /dev/vdb /mnt/scratch
xfs_io -f -c "pwrite -b 1m 0 100m" /mnt/scratch/f 2>&1 >/dev/null
umount /mnt/scratch
xfs_io -c "pwrite -b 1m 63m 2m" /dev/vdb 2>&1 >/dev/null`)
		if got != "pwrite: No space left on device\npwrite: No space left on device\n" {
			t.Errorf("%s: %q", fs, got)
		}
	}
}

// TestSavedImagesCheckClean: after mkfs and a few files, --save-image
// gives images that e2fsck -fn and fsck.f2fs accept (when installed),
// that are sparse on the host, and that vfslab mounts again.
func TestSavedImagesCheckClean(t *testing.T) {
	dir := t.TempDir()
	e, f := filepath.Join(dir, "e.img"), filepath.Join(dir, "f.img")
	script := `mkfs.ext4 -q /dev/vdb; mount /dev/vdb /mnt/scratch; mkdir /mnt/scratch/d; echo e > /mnt/scratch/d/x; umount /mnt/scratch
mkfs.f2fs -q -f /dev/vdc >/dev/null; mount /dev/vdc /mnt/test; mkdir /mnt/test/d; echo f > /mnt/test/d/x; umount /mnt/test`
	if got, st := runScript(t, "", "--save-image", "/dev/vdb:"+e, "--save-image", "/dev/vdc:"+f, "-c", script); st != 0 {
		t.Fatalf("%q status %d", got, st)
	}
	for _, img := range []string{e, f} {
		fi, err := os.Stat(img)
		if err != nil || fi.Size() != 8<<30 {
			t.Fatalf("%s: %v %v", img, fi, err)
		}
		if du, err := exec.Command("du", "-k", img).Output(); err == nil {
			if k := strings.Fields(string(du)); len(k) > 0 && len(k[0]) > 6 {
				t.Errorf("%s is not sparse: %s KiB on the host", img, k[0])
			}
		}
	}
	if _, err := exec.LookPath("e2fsck"); err == nil {
		if out, err := exec.Command("e2fsck", "-fn", e).CombinedOutput(); err != nil {
			t.Errorf("e2fsck -fn: %v\n%s", err, out)
		}
	}
	if _, err := exec.LookPath("fsck.f2fs"); err == nil {
		if out, err := exec.Command("fsck.f2fs", f).CombinedOutput(); err != nil || !strings.Contains(string(out), "Done") {
			t.Errorf("fsck.f2fs: %v\n%s", err, out)
		}
	}
	got, st := runScript(t, "", "--image", e+":/dev/vdb", "--image", f+":/dev/vdc", "-c",
		`mount /dev/vdb /mnt/scratch 2>/dev/null; cat /mnt/scratch/d/x; mount /dev/vdc /mnt/test 2>/dev/null; cat /mnt/test/d/x`)
	if st != 0 || got != "e\nf\n" {
		t.Errorf("the saved images mounted again: %q status %d", got, st)
	}
}

// TestDeviceMemoryFollowsWrites: an 8 GiB disk formatted by mkfs.ext4
// and mkfs.f2fs holds a few MiB of memory, growing with the blocks
// written, and a discard gives it back.
func TestDeviceMemoryFollowsWrites(t *testing.T) {
	k := kernel.New()
	task := k.NewTask("mkfs")
	defer task.Exit()
	for _, fs := range []string{"ext4", "f2fs"} {
		dev := vfs.NewBlockDeviceSize(DefaultDeviceSize / vfs.PageSize)
		typ, err := vfs.GetFsType(fs)
		if err != nil {
			t.Fatal(err)
		}
		if err := typ.Mkfs(task, dev, nil); err != nil {
			t.Fatalf("mkfs.%s: %v", fs, err)
		}
		formatted := dev.Resident()
		if formatted > 16<<20 {
			t.Errorf("mkfs.%s on 8 GiB: %d bytes held", fs, formatted)
		}
		if _, err := dev.WriteAt(make([]byte, 16<<20), 15<<29); err != nil {
			t.Fatal(err)
		}
		if grown := dev.Resident() - formatted; grown != 16<<20 {
			t.Errorf("16 MiB written grew the disk by %d bytes", grown)
		}
		if err := dev.Discard(15<<29, 16<<20); err != nil || dev.Resident() != formatted {
			t.Errorf("discard: %v, %d bytes held, want %d", err, dev.Resident(), formatted)
		}
	}
}
