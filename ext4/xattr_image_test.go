package ext4_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/vfs"
)

// TestImageXattrsAndSpecialFiles: extended attributes in the inode and in
// the xattr block (spilling over, replaced, removed until the block goes,
// trusted. and security. beside user.), and special files of every type
// (device numbers in both of i_block's encodings) written on mke2fs
// images of 128- and 256-byte inodes and 1 and 4 KiB blocks pass e2fsck
// -fn, list in debugfs as written, and read back the same after a new
// mount; an xattr block shared with another inode (refcount 2, as the
// kernel's mbcache leaves it) is copied before it changes and keeps its
// other owner's attributes.
func TestImageXattrsAndSpecialFiles(t *testing.T) {
	needE2fs(t)
	for _, c := range []struct {
		bs    int
		isize string
	}{{4096, "256"}, {1024, "256"}, {4096, "128"}} {
		t.Run(fmt.Sprintf("%d-%s", c.bs, c.isize), func(t *testing.T) {
			img := mkfsImageBS(t, "", "32M", c.bs, "-I", c.isize)
			dev, err := vfs.OpenImage(img, true)
			if err != nil {
				t.Fatal(err)
			}
			e := mustBootImage(t, dev, "")
			e.Write("/small", "s")
			e.Write("/many", "m")
			e.Write("/gone", "g")
			e.Must(e.P.Mkdir(e.T, "/dir", 0o755))
			set := func(p, n, v string) {
				t.Helper()
				e.Must(e.P.Setxattr(e.T, p, n, []byte(v), 0, true))
			}
			set("/small", "user.foo", "bar")
			set("/small", "trusted.t", "tv")
			set("/dir", "user.d", "dv")
			for i := 1; i <= 12; i++ {
				set("/many", fmt.Sprintf("user.attr%02d", i), fmt.Sprintf("value number %02d is long enough to spill", i))
			}
			e.Must(e.P.Removexattr(e.T, "/many", "user.attr03", true))
			set("/many", "user.attr01", "short")
			set("/many", "security.s", strings.Repeat("x", 300))
			// A block that empties is freed.
			set("/gone", "user.big", strings.Repeat("b", 700))
			e.Must(e.P.Removexattr(e.T, "/gone", "user.big", true))
			if err := e.P.Setxattr(e.T, "/gone", "user.huge", make([]byte, c.bs), 0, true); err != errno.ENOSPC {
				t.Errorf("a value as large as a block: %v, want ENOSPC", err)
			}
			mk := func(p string, mode, major, minor uint32) {
				t.Helper()
				e.Must(e.P.Mknod(e.T, p, mode|0o640, vfs.NewEncodeDev(vfs.MKDEV(major, minor))))
			}
			mk("/fifo", vfs.S_IFIFO, 0, 0)
			mk("/sock", vfs.S_IFSOCK, 0, 0)
			mk("/null", vfs.S_IFCHR, 1, 3)
			mk("/vdb", vfs.S_IFBLK, 254, 16)
			mk("/big", vfs.S_IFCHR, 300, 70000)
			set("/fifo", "trusted.f", "fifo attr")
			out := saveImage(t, e)
			e2fsckClean(t, out)
			ea := func(p string) string { return runTool(t, "debugfs", "-R", "ea_list "+p, out) }
			if got := ea("/small"); !strings.Contains(got, `user.foo (3) = "bar"`) || !strings.Contains(got, `trusted.t (2) = "tv"`) {
				t.Errorf("debugfs ea_list /small:\n%s", got)
			}
			got := ea("/many")
			for i := 2; i <= 12; i++ {
				if i == 3 {
					if strings.Contains(got, "user.attr03") {
						t.Errorf("removed attribute listed:\n%s", got)
					}
					continue
				}
				if !strings.Contains(got, fmt.Sprintf(`user.attr%02d (39) = "value number %02d is long enough to spill"`, i, i)) {
					t.Errorf("debugfs ea_list /many lacks attr%02d:\n%s", i, got)
				}
			}
			if !strings.Contains(got, `user.attr01 (5) = "short"`) || !strings.Contains(got, "security.s (300)") {
				t.Errorf("debugfs ea_list /many:\n%s", got)
			}
			if st := runTool(t, "debugfs", "-R", "stat /gone", out); !regexp.MustCompile(`File ACL: 0\b`).MatchString(st) {
				t.Errorf("the emptied block is still the inode's:\n%s", st)
			}
			for _, d := range []struct{ path, typ, dev string }{
				{"/fifo", "FIFO", ""}, {"/sock", "socket", ""},
				{"/null", "character special", "Device major/minor number: 01:03"},
				{"/vdb", "block special", "Device major/minor number: 254:16"},
				{"/big", "character special", "Device major/minor number: 300:70000"},
			} {
				st := runTool(t, "debugfs", "-R", "stat "+d.path, out)
				if !strings.Contains(st, "Type: "+d.typ) || !strings.Contains(st, d.dev) {
					t.Errorf("debugfs stat %s:\n%s", d.path, st)
				}
			}
			// Read back in a new mount.
			dev2, err := vfs.OpenImage(out, true)
			if err != nil {
				t.Fatal(err)
			}
			e2 := mustBootImage(t, dev2, "")
			buf := make([]byte, 64)
			if n, err := e2.P.Getxattr(e2.T, "/many", "user.attr12", buf, true); err != nil || string(buf[:n]) != "value number 12 is long enough to spill" {
				t.Errorf("read back: %q %v", buf[:n], err)
			}
			n, err := e2.P.Listxattr(e2.T, "/many", nil, true)
			if err != nil || n == 0 {
				t.Fatalf("listxattr: %d %v", n, err)
			}
			for _, d := range []struct {
				path string
				mode uint32
				rdev uint32
			}{{"/fifo", vfs.S_IFIFO, 0}, {"/null", vfs.S_IFCHR, vfs.MKDEV(1, 3)}, {"/vdb", vfs.S_IFBLK, vfs.MKDEV(254, 16)}, {"/big", vfs.S_IFCHR, vfs.MKDEV(300, 70000)}} {
				st, err := e2.P.Lstat(e2.T, d.path)
				if err != nil || st.Mode != d.mode|0o640 || st.Rdev != d.rdev {
					t.Errorf("%s read back: %+v %v", d.path, st, err)
				}
			}
			if n, err := e2.P.Getxattr(e2.T, "/fifo", "trusted.f", buf, false); err != nil || string(buf[:n]) != "fifo attr" {
				t.Errorf("fifo's attribute: %q %v", buf[:n], err)
			}
		})
	}
}

// TestImageSharedXattrBlock: an image whose two files share one xattr
// block (h_refcount 2, as the kernel's mbcache shares identical blocks):
// changing one file's attributes gives it a block of its own and leaves
// the other's as they were; e2fsck -fn stays clean.
func TestImageSharedXattrBlock(t *testing.T) {
	needE2fs(t)
	// Without metadata_csum, so that debugfs's byte edits need no
	// checksum.
	img := mkfsImage(t, "", "16M", "-O", "^metadata_csum")
	big := strings.Repeat("v", 600)
	script := fmt.Sprintf("write /dev/null a\nwrite /dev/null b\nea_set a user.big %s\n", big)
	cmd := filepath.Join(t.TempDir(), "cmds")
	if err := os.WriteFile(cmd, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	runTool(t, "debugfs", "-w", "-f", cmd, img)
	// debugfs writes a's block; b is given the same i_file_acl (and the
	// block in its i_blocks).
	st := runTool(t, "debugfs", "-R", "stat a", img)
	m := regexp.MustCompile(`File ACL: (\d+)`).FindStringSubmatch(st)
	if m == nil || m[1] == "0" {
		t.Skipf("debugfs put the attribute in the inode:\n%s", st)
	}
	runTool(t, "debugfs", "-w", "-R", "sif b file_acl "+m[1], img)
	runTool(t, "debugfs", "-w", "-R", "sif b blocks 8", img)
	// The block's h_refcount (its byte 4) becomes 2.
	runTool(t, "debugfs", "-w", "-R", fmt.Sprintf("zap_block -o 4 -l 1 -p 2 %s", m[1]), img)
	e2fsckClean(t, img)
	dev, err := vfs.OpenImage(img, true)
	if err != nil {
		t.Fatal(err)
	}
	e := mustBootImage(t, dev, "")
	buf := make([]byte, 1024)
	for _, f := range []string{"/a", "/b"} {
		if n, err := e.P.Getxattr(e.T, f, "user.big", buf, true); err != nil || string(buf[:n]) != big {
			t.Fatalf("%s's shared attribute: %d %v", f, n, err)
		}
	}
	e.Must(e.P.Setxattr(e.T, "/a", "user.big", []byte("changed"), 0, true))
	res := saveImage(t, e)
	e2fsckClean(t, res)
	if got := runTool(t, "debugfs", "-R", "ea_list b", res); !strings.Contains(got, "user.big (600)") {
		t.Errorf("b after a's change:\n%s", got)
	}
	if got := runTool(t, "debugfs", "-R", "ea_list a", res); !strings.Contains(got, `user.big (7) = "changed"`) {
		t.Errorf("a after its change:\n%s", got)
	}
}
