package shell

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/patch"
)

// hostImage writes a host image of size bytes, each byte its offset mod
// 251, and returns its path.
func hostImage(t *testing.T, size int) string {
	t.Helper()
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i % 251)
	}
	p := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestImageBytesRoundTrip attaches a host image writable, writes bytes
// into it with dd, and checks that sync wrote exactly those bytes back
// and left the rest as it was.
func TestImageBytesRoundTrip(t *testing.T) {
	img := hostImage(t, 64<<10)
	before, _ := os.ReadFile(img)
	got, st := runScript(t, "", "--image", img+":/dev/vdc", "--writable", "-c",
		`blockdev --getsize64 --getro /dev/vdc; printf 'vfslab!' | dd of=/dev/vdc bs=1 seek=5000 conv=notrunc status=none; sync; dd if=/dev/vdc bs=1 skip=4999 count=9 status=none | od -An -c; xxd -s 5000 -l 7 /dev/vdc`)
	if st != 0 || got != "65536\n0\n 346   v   f   s   l   a   b   ! 356\n00001388: 7666 736c 6162 21                        vfslab!\n" {
		t.Fatalf("output %q status %d", got, st)
	}
	after, _ := os.ReadFile(img)
	want := append([]byte{}, before...)
	copy(want[5000:], "vfslab!")
	if !bytes.Equal(after, want) {
		t.Fatalf("the image holds other bytes than the ones written at 5000")
	}
}

// TestImageReadOnlyUntouched: an image attached without --writable is
// read-only (blockdev --getro 1, dd into it EPERM) and never written.
func TestImageReadOnlyUntouched(t *testing.T) {
	img := hostImage(t, 8192)
	before, _ := os.ReadFile(img)
	got, st := runScript(t, "", "--image", img+":/dev/vdb", "-c",
		`blockdev --getro $SCRATCH_DEV; echo x | dd of=$SCRATCH_DEV status=none; mkfs.ext4 -q $SCRATCH_DEV; su fsgqa -c "blockdev --setrw $SCRATCH_DEV"; blockdev --setrw $SCRATCH_DEV; blockdev --getro $SCRATCH_DEV; echo y | dd of=$SCRATCH_DEV status=none; sync`)
	want := "1\ndd: error writing '/dev/vdb': Operation not permitted\n" +
		"mkfs.ext4: /dev/vdb: Operation not permitted while setting up superblock\n" +
		"blockdev: ioctl error on BLKROSET: Permission denied\n0\n"
	if st != 0 || got != want {
		t.Fatalf("output %q status %d; want %q", got, st, want)
	}
	after, _ := os.ReadFile(img)
	if !bytes.Equal(before, after) {
		t.Fatal("a read-only image was written (blockdev --setrw makes the in-memory device writable, not the file)")
	}
}

// TestSaveImage: --save-image writes the device as the run left it; the
// file attached again reads back the same bytes.
func TestSaveImage(t *testing.T) {
	out := filepath.Join(t.TempDir(), "new.img")
	got, st := runScript(t, "", "--device", "vdb:64M", "--save-image", "/dev/vdb:"+out, "-c",
		`_scratch_mkfs >/dev/null; _scratch_mount; echo saved > $SCRATCH_MNT/f; md5sum < $SCRATCH_DEV`)
	if st != 0 {
		t.Fatalf("output %q status %d", got, st)
	}
	fi, err := os.Stat(out)
	if err != nil || fi.Size() == 0 || fi.Size()%4096 != 0 {
		t.Fatalf("saved image: %v, %v", fi, err)
	}
	again, st := runScript(t, "", "--image", out+":/dev/vdd", "-c", `md5sum < /dev/vdd; blockdev --getsize64 /dev/vdd`)
	if st != 0 || !strings.HasPrefix(again, got) || !strings.HasSuffix(again, "\n"+strconv.FormatInt(fi.Size(), 10)+"\n") {
		t.Fatalf("attached again: %q, saved: %q (size %d)", again, got, fi.Size())
	}
}

// TestWriteProtectedMount: a mount of a write-protected device goes
// read-only with mount(8)'s warning, unless rw was asked for; remount,rw
// is refused; remount,ro while a file is open for writing is EBUSY
// (sb_prepare_remount_readonly).
func TestWriteProtectedMount(t *testing.T) {
	cases := []struct{ name, script, want string }{
		{"ro retry", `_scratch_mkfs >/dev/null; blockdev --setro $SCRATCH_DEV; mount $SCRATCH_DEV $SCRATCH_MNT; grep scratch /proc/mounts; touch $SCRATCH_MNT/x`,
			"mount: /mnt/scratch: WARNING: source write-protected, mounted read-only.\n/dev/vdb /mnt/scratch ext4 ro,relatime 0 0\ntouch: cannot touch '/mnt/scratch/x': Read-only file system\n"},
		{"explicit rw", `_scratch_mkfs >/dev/null; blockdev --setro $SCRATCH_DEV; mount -o rw $SCRATCH_DEV $SCRATCH_MNT; echo $?`,
			"mount: /mnt/scratch: /dev/vdb is write-protected but explicit read-write mode requested.\n       dmesg(1) may have more information after failed mount system call.\n32\n"},
		{"remount rw refused", `_scratch_mkfs >/dev/null; blockdev --setro $SCRATCH_DEV; mount $SCRATCH_DEV $SCRATCH_MNT 2>/dev/null; mount -o remount,rw $SCRATCH_MNT; echo $?`,
			"mount: /mnt/scratch: cannot remount /dev/vdb read-write, is write-protected.\n       dmesg(1) may have more information after failed mount system call.\n32\n"},
		{"kept superblock, write-protected", `_scratch_mkfs >/dev/null; _scratch_mount; echo k > $SCRATCH_MNT/k; _scratch_unmount; blockdev --setro $SCRATCH_DEV; _scratch_mount; cat $SCRATCH_MNT/k`,
			"mount: /mnt/scratch: WARNING: source write-protected, mounted read-only.\nk\n"},
		{"remount ro busy", `_scratch_mkfs >/dev/null; _scratch_mount; exec 3>$SCRATCH_MNT/f; mount -o remount,ro $SCRATCH_MNT; echo $?; exec 3>&-; mount -o remount,ro $SCRATCH_MNT; grep scratch /proc/mounts`,
			"mount: /mnt/scratch: mount point is busy.\n       dmesg(1) may have more information after failed mount system call.\n32\n/dev/vdb /mnt/scratch ext4 ro,relatime 0 0\n"},
		{"remount ro with a file open for reading", `_scratch_mkfs >/dev/null; _scratch_mount; echo r > $SCRATCH_MNT/f; exec 3<$SCRATCH_MNT/f; mount -o remount,ro $SCRATCH_MNT && echo ok; exec 3<&-`,
			"ok\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := runScript(t, "", "-c", tc.script)
			if got != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestImageUsage: bad --image and --save-image specs are one line and
// status 2.
func TestImageUsage(t *testing.T) {
	img := hostImage(t, 4096)
	for _, args := range [][]string{
		{"--image", img},
		{"--image", img + ":/dev/sda"},
		{"--image", img + ":"},
		{"--image", img + ":/dev/vdb", "--image", img + ":/dev/vdb"},
		{"--image", filepath.Join(t.TempDir(), "none.img") + ":/dev/vdb"},
		{"--save-image", "/dev/vdz:" + img},
		{"--save-image", "/dev/vdb"},
		{"--image"},
	} {
		got, st := runScript(t, "", append(args, "-c", "true")...)
		if st != 2 || strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, "vfslab sh: ") {
			t.Errorf("%q: %q status %d; want one line and status 2", args, got, st)
		}
	}
	odd := filepath.Join(t.TempDir(), "odd.img")
	os.WriteFile(odd, make([]byte, 1000), 0o644)
	if got, st := runScript(t, "", "--image", odd+":/dev/vdb", "-c", "true"); st != 2 || !strings.Contains(got, "not a positive multiple of 512") {
		t.Errorf("1000-byte image: %q status %d", got, st)
	}
}

// TestImageKeptAcrossPatches: `patches` boots a new machine with the same
// images attached.
func TestImageKeptAcrossPatches(t *testing.T) {
	img := hostImage(t, 8192)
	got, st := runScript(t, "", "--image", img+":/dev/vde", "-c", `patches fscrypt-file-open=v2; blockdev --getsize64 --getro /dev/vde`)
	if st != 0 || got != "8192\n1\n" {
		t.Fatalf("%q status %d", got, st)
	}
}

// TestWritableImageWrittenBack: through the Go API, a writable image's
// file keeps its bytes until sync (or Close) writes the device back, and
// a read-only one never changes. (umount's write-back needs a filesystem
// that mounts an image, which the model's ext4 and f2fs do not yet.)
func TestWritableImageWrittenBack(t *testing.T) {
	rw, ro := hostImage(t, 8192), hostImage(t, 8192)
	orig, _ := os.ReadFile(rw)
	m, err := NewMachine(patch.Set{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AttachImage("/dev/vdb", rw, true); err != nil {
		t.Fatal(err)
	}
	if err := m.AttachImage("/dev/vdc", ro, false); err != nil {
		t.Fatal(err)
	}
	s := &Shell{m: m, fstyp: "ext4"}
	var out bytes.Buffer
	run := func(script string) {
		t.Helper()
		if st := s.run(strings.NewReader(script), "test", strings.NewReader(""), &out, &out, nil); st != 0 {
			t.Fatalf("%q: status %d, %q", script, st, out.String())
		}
	}
	run(`printf abcd | dd of=/dev/vdb conv=notrunc status=none; blockdev --setrw /dev/vdc; printf efgh | dd of=/dev/vdc conv=notrunc status=none`)
	if b, _ := os.ReadFile(rw); !bytes.Equal(b, orig) {
		t.Fatal("the image changed before sync")
	}
	run(`sync`)
	if b, _ := os.ReadFile(rw); string(b[:4]) != "abcd" {
		t.Fatalf("after sync the image starts %q, want abcd", b[:4])
	}
	run(`printf wxyz | dd of=/dev/vdb conv=notrunc status=none`)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(rw); string(b[:4]) != "wxyz" {
		t.Fatalf("after Close the image starts %q, want wxyz", b[:4])
	}
	if b, _ := os.ReadFile(ro); !bytes.Equal(b, orig) {
		t.Fatal("a read-only image was written back")
	}
}
