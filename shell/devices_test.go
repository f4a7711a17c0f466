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

// TestMkfsCommandLine: mkfs reads its command line as mke2fs's and
// mkfs.f2fs's getopt do (an option's value is never taken for the
// device; clustered flags), passes -b, -U and -L through, refuses a block
// size that is not a power of two, and makes a filesystem of the size
// operand on a larger disk (mke2fs's fs-size in blocks of -b, mkfs.f2fs's
// 512-byte sectors), which then runs out of space at that size: xfs_io's
// pwrite ends at the short write with no message (io/pwrite.c
// write_buffer).
func TestMkfsCommandLine(t *testing.T) {
	got, st := runScript(t, "", "--device", "vdb:256M", "-c",
		`sb() { dd if=/dev/vdb bs=4 skip=$1 count=1 status=none | od -An -tu4 | tr -d ' '; }
mkfs -t ext4 -Fq -b 4096 -U 5d9c3b2a-4e1f-4a6b-9c8d-7e6f5a4b3c2d -L lab -O encrypt /dev/vdb 8192
blkid /dev/vdb; sb 257; sb 262
mkfs.ext4 -q -F -b 1000 /dev/vdb; echo status $?
mkfs.ext4 -q -F -b 4096 /dev/vdb 1G; echo status $?
mkfs.f2fs -q -f -O encrypt -U 5d9c3b2a-4e1f-4a6b-9c8d-7e6f5a4b3c2d /dev/vdb 131072 >/dev/null
blkid /dev/vdb; dd if=/dev/vdb bs=4 skip=265 count=2 status=none | od -An -tu8 | tr -d ' ' 
mount /dev/vdb /mnt/scratch
xfs_io -f -c "pwrite -b 1m 0 100m" /mnt/scratch/f 2>&1 >/dev/null
umount /mnt/scratch`)
	// s_blocks_count_lo at 1028, s_log_block_size at 1048; f2fs's
	// block_count at 1024+36 (the 4 KiB blocks of 64 MiB).
	want := `/dev/vdb: LABEL="lab" UUID="5d9c3b2a-4e1f-4a6b-9c8d-7e6f5a4b3c2d" TYPE="ext4"
8192
2
mkfs.ext4: invalid block size - 1000
status 1
mkfs.ext4: Filesystem larger than apparent device size (1073741824 > 268435456 bytes)
status 1
/dev/vdb: UUID="5d9c3b2a-4e1f-4a6b-9c8d-7e6f5a4b3c2d" TYPE="f2fs"
16384
`
	if st != 0 || got != want {
		t.Errorf("status %d, got:\n%s\nwant:\n%s", st, got, want)
	}
}

// TestFullDeviceENOSPC: a file filling a small disk ends in a short
// write, and a write past the end of the raw device is ENOSPC.
func TestFullDeviceENOSPC(t *testing.T) {
	for _, fs := range []string{"ext4", "f2fs"} {
		got, _ := runScript(t, "", "--device", "vdb:64M", "-c", `mkfs.`+fs+` -q -f /dev/vdb >/dev/null 2>&1 || mkfs.`+fs+` -q /dev/vdb
mount /dev/vdb /mnt/scratch
xfs_io -f -c "pwrite -b 1m 0 100m" /mnt/scratch/f 2>&1 >/dev/null
umount /mnt/scratch
xfs_io -c "pwrite -b 1m 63m 2m" /dev/vdb 2>&1 >/dev/null`)
		// The file's write ends short (xfs_io stops there, silent);
		// the device's second megabyte starts past its end: ENOSPC.
		if got != "pwrite: No space left on device\n" {
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
