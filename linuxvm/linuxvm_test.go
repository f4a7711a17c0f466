package linuxvm

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// readNewc parses a newc archive into names, modes and contents.
func readNewc(t *testing.T, b []byte) (names []string, files map[string]string, modes map[string]uint32) {
	t.Helper()
	files, modes = map[string]string{}, map[string]uint32{}
	off := 0
	for {
		if off+110 > len(b) || string(b[off:off+6]) != "070701" {
			t.Fatalf("no newc header at %d", off)
		}
		field := func(i int) int {
			n, err := strconv.ParseUint(string(b[off+6+8*i:off+14+8*i]), 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
		mode, size, nameSize := field(1), field(6), field(11)
		name := string(b[off+110 : off+110+nameSize-1])
		off += 110 + nameSize
		off += pad4(off)
		if name == "TRAILER!!!" {
			return
		}
		names = append(names, name)
		files[name] = string(b[off : off+size])
		modes[name] = uint32(mode)
		off += size
		off += pad4(off)
		if off%4 != 0 {
			t.Fatalf("entry %s not aligned", name)
		}
	}
}

// TestCpio writes a tree and reads it back: parents first, contents,
// modes, device numbers and links as given, 4-byte alignment throughout.
func TestCpio(t *testing.T) {
	tr := tree{}
	tr.file("usr/bin/tool", 0o755, []byte("abc"))
	tr.symlink("bin", "usr/bin")
	tr.char("dev/console", 0o600, 5, 1)
	tr.file("etc/x", 0o644, []byte("12345"))
	var buf bytes.Buffer
	if err := tr.writeCpio(&buf, nil); err != nil {
		t.Fatal(err)
	}
	names, files, modes := readNewc(t, buf.Bytes())
	want := "bin dev dev/console etc etc/x usr usr/bin usr/bin/tool"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("entries %q, want %q", got, want)
	}
	if files["usr/bin/tool"] != "abc" || files["etc/x"] != "12345" || files["bin"] != "usr/bin" {
		t.Errorf("contents: %q", files)
	}
	if modes["usr/bin/tool"] != modeRegular|0o755 || modes["bin"] != modeSymlink|0o777 ||
		modes["dev/console"] != modeChar|0o600 || modes["usr"] != modeDir|0o755 {
		t.Errorf("modes: %v", modes)
	}
}

// TestReadRecords parses the guest's records and leaves out one cut short.
func TestReadRecords(t *testing.T) {
	rec := func(i int, out, st, dmesg string) string {
		return "VFSLAB-FILE " + strconv.Itoa(i) + " stdout " + strconv.Itoa(len(out)) + "\n" + out +
			"VFSLAB-FILE " + strconv.Itoa(i) + " stderr 0\n" +
			"VFSLAB-FILE " + strconv.Itoa(i) + " status " + strconv.Itoa(len(st)) + "\n" + st +
			"VFSLAB-FILE " + strconv.Itoa(i) + " dmesg " + strconv.Itoa(len(dmesg)) + "\n" + dmesg +
			"VFSLAB-RECORD-END " + strconv.Itoa(i) + "\n"
	}
	whole := rec(0, "a\nVFSLAB-FILE 9 x 1\n", "0\n", "[    1.250000] EXT4-fs (vdb): mounted\n") + rec(1, "b", "124\n", "")
	got, err := readRecords(bufio.NewReader(strings.NewReader(whole + strings.Repeat("\x00", 600))))
	if err != nil || len(got) != 2 {
		t.Fatalf("%d records, %v", len(got), err)
	}
	if string(got[0].Stdout) != "a\nVFSLAB-FILE 9 x 1\n" || got[0].Status != 0 || string(got[0].Dmesg) != "EXT4-fs (vdb): mounted\n" {
		t.Errorf("record 0: %+v", got[0])
	}
	if got[1].Status != 124 || !got[1].TimedOut {
		t.Errorf("record 1: %+v", got[1])
	}
	cut := whole + rec(2, "ccccc", "0\n", "")[:30]
	got, err = readRecords(bufio.NewReader(strings.NewReader(cut)))
	if err == nil || len(got) != 2 {
		t.Errorf("cut record: %d records, err %v", len(got), err)
	}
}

func TestStripTimestamps(t *testing.T) {
	in := "[    0.000000] Linux version\n[12345.123456] f2fs: x [1.0] kept\nno stamp\n"
	if got := string(StripTimestamps([]byte(in))); got != "Linux version\nf2fs: x [1.0] kept\nno stamp\n" {
		t.Errorf("got %q", got)
	}
}

func TestMissingError(t *testing.T) {
	e := &MissingError{What: []string{"xfs_io (xfsprogs)", "qemu-system-x86_64 (qemu-system-x86)"}, Packages: []string{"xfsprogs", "qemu-system-x86"}}
	want := "linux: not on this host: xfs_io (xfsprogs), qemu-system-x86_64 (qemu-system-x86); install with: apt-get install xfsprogs qemu-system-x86"
	if e.Error() != want || strings.Contains(e.Error(), "\n") {
		t.Errorf("got %q", e.Error())
	}
}

func TestVersionLess(t *testing.T) {
	for _, c := range [][2]string{
		{"/boot/vmlinuz-6.1.0-37-amd64", "/boot/vmlinuz-6.12.95+deb12-amd64"},
		{"/boot/vmlinuz-5.10.0-9-amd64", "/boot/vmlinuz-5.10.0-10-amd64"},
	} {
		if !versionLess(c[0], c[1]) || versionLess(c[1], c[0]) {
			t.Errorf("%s < %s not seen", c[0], c[1])
		}
	}
}

func TestGuestPath(t *testing.T) {
	for in, want := range map[string]string{
		"/bin/bash": "/usr/bin/bash", "/lib64/ld-linux-x86-64.so.2": "/usr/lib64/ld-linux-x86-64.so.2",
		"/usr/sbin/mke2fs": "/usr/sbin/mke2fs", "/etc/alternatives/awk": "/etc/alternatives/awk",
		"/libexec/x": "/libexec/x",
	} {
		if got := guestPath(in); got != want {
			t.Errorf("guestPath(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestInitScript: the guest's init parses.
func TestInitScript(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	cmd := exec.Command(bash, "-n")
	cmd.Stdin = bytes.NewReader(initScript)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("init.sh: %v: %s", err, out)
	}
}

// TestCollect lays out the guest's tree from the host (no boot): the
// tools with their libraries, the modules modprobe names in load order,
// the accounts; a changed prelude changes the key.
func TestCollect(t *testing.T) {
	h, err := Find("")
	if err != nil {
		t.Skip(err)
	}
	b, err := h.collect(context.Background(), "", []byte("p1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"init", "usr/bin/bash", "usr/lib64/ld-linux-x86-64.so.2", "usr/lib/x86_64-linux-gnu/libc.so.6",
		"usr/sbin/mkfs.f2fs", "usr/bin/xfs_io", "usr/sbin/xfs_io", "usr/bin/keyctl", "usr/bin/su", "etc/passwd", "etc/vfslab/prelude.sh", "dev/console"} {
		if _, ok := b.t[p]; !ok && !(p == "usr/bin/xfs_io" || p == "usr/sbin/xfs_io") {
			t.Errorf("no %s in the tree", p)
		}
	}
	if _, ok := b.t["usr/bin/xfs_io"]; !ok {
		if _, ok := b.t["usr/sbin/xfs_io"]; !ok {
			t.Errorf("no xfs_io in the tree")
		}
	}
	// With a C compiler, xfs_io is the wrapper and the real one and the
	// set_encpolicy helper (a static ELF file) are under /usr/lib/vfslab.
	if h.CC != "" {
		helper, ok := b.t["usr/lib/vfslab/set_encpolicy"]
		if !ok || !bytes.HasPrefix(helper.data, []byte("\x7fELF")) {
			t.Errorf("no set_encpolicy helper in the tree (cc %s)", h.CC)
		}
		if _, ok := b.t["usr/lib/vfslab/xfs_io"]; !ok {
			t.Errorf("the real xfs_io is not under usr/lib/vfslab")
		}
		if w := b.t[strings.Trim(guestPath(h.Tools["xfs_io"]), "/")]; w == nil || !bytes.Equal(w.data, xfsIoWrapper) {
			t.Errorf("xfs_io is not the wrapper")
		}
	}
	mods := string(b.t["etc/vfslab/modules"].data)
	for _, m := range []string{"ext4\n", "f2fs\n", "jbd2\n", "virtio_blk\n", "dm-mod\n", "dm-log-writes\n", "dm-flakey\n"} {
		if !strings.Contains(mods, m) {
			t.Errorf("modules lack %q: %s", m, mods)
		}
	}
	if strings.Index(mods, "jbd2\n") > strings.Index(mods, "ext4\n") {
		t.Errorf("jbd2 loads after ext4: %s", mods)
	}
	key := func(b *builder) string { return strings.Join(b.inputs, "\n") }
	b2, err := h.collect(context.Background(), "", []byte("p2"))
	if err != nil {
		t.Fatal(err)
	}
	if key(b) == key(b2) {
		t.Error("the key ignores the prelude")
	}
}
