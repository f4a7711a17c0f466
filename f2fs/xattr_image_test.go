package f2fs_test

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/vfs"
)

// TestImageXattrsAndSpecialFiles: extended attributes in the inline area
// and, past it, in an xattr node (removed, replaced, the node dropped once
// they fit inline again), E2BIG when there is no room, system.advise, and
// special files (device numbers at i_addr's first words) written on
// mkfs.f2fs images, with and without extra attributes, pass fsck.f2fs,
// list in dump.f2fs as written, and read back the same in a new mount.
func TestImageXattrsAndSpecialFiles(t *testing.T) {
	needF2fsTools(t, "fsck.f2fs", "dump.f2fs")
	for _, args := range [][]string{nil, {"-O", "extra_attr,inode_checksum,flexible_inline_xattr"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			img := makeImage(t, 64, "", args...)
			e, dev := bootImage(t, img, true)
			e.Write("/small", "s")
			e.Write("/many", "m")
			e.Write("/shrink", "x")
			set := func(p, n, v string) {
				t.Helper()
				e.Must(e.P.Setxattr(e.T, p, n, []byte(v), 0, true))
			}
			set("/small", "user.foo", "bar")
			set("/small", "trusted.t", "tv")
			for i := 1; i <= 12; i++ {
				set("/many", fmt.Sprintf("user.attr%02d", i), fmt.Sprintf("value number %02d is long enough to spill", i))
			}
			e.Must(e.P.Removexattr(e.T, "/many", "user.attr03", true))
			set("/many", "user.attr01", "short")
			set("/shrink", "user.big", strings.Repeat("b", 700))
			e.Must(e.P.Removexattr(e.T, "/shrink", "user.big", true))
			set("/shrink", "user.s", "small again")
			if err := e.P.Setxattr(e.T, "/small", "user.huge", make([]byte, 4300), 0, true); err != errno.E2BIG {
				t.Errorf("a value over MAX_VALUE_LEN: %v, want E2BIG", err)
			}
			e.Must(e.P.Setxattr(e.T, "/small", "system.advise", []byte{f2fs.FadviseColdBit}, 0, true))
			if err := e.P.Setxattr(e.T, "/small", "system.advise", []byte{0x04}, 0, true); err != errno.EINVAL {
				t.Errorf("system.advise with the encryption bit: %v, want EINVAL", err)
			}
			mk := func(p string, mode, major, minor uint32) {
				t.Helper()
				e.Must(e.P.Mknod(e.T, p, mode|0o640, vfs.NewEncodeDev(vfs.MKDEV(major, minor))))
			}
			mk("/fifo", vfs.S_IFIFO, 0, 0)
			mk("/null", vfs.S_IFCHR, 1, 3)
			mk("/big", vfs.S_IFCHR, 300, 70000)
			set("/fifo", "trusted.f", "fifo attr")
			sbi := e.dir("/").SB
			e.Must(sbi.SyncFs(e.T))
			e.Must(dev.Sync())
			if ok, out := fsckAccepts(t, img); !ok {
				t.Fatalf("fsck.f2fs:\n%s", out)
			}
			ino := func(p string) uint64 {
				st, err := e.P.Lstat(e.T, p)
				e.Must(err)
				return st.Ino
			}
			// dump.f2fs -i asks whether to dump the file and, with no
			// answer, ends with an assertion: its output is what counts.
			dump := func(p string) string {
				out, _ := exec.Command("dump.f2fs", "-i", fmt.Sprint(ino(p)), img).CombinedOutput()
				return string(out)
			}
			many := dump("/many")
			for i := 1; i <= 12; i++ {
				if has := strings.Contains(many, fmt.Sprintf("e_name:attr%02d ", i)); has != (i != 3) {
					t.Errorf("dump.f2fs of /many, attr%02d listed %v:\n%s", i, has, many)
				}
			}
			if m := regexp.MustCompile(`i_xattr_nid\s+\[0x\s*([0-9a-f]+)`).FindStringSubmatch(many); m == nil || m[1] == "0" {
				t.Errorf("/many has no xattr node:\n%s", many)
			}
			if m := regexp.MustCompile(`i_xattr_nid\s+\[0x\s*([0-9a-f]+)`).FindStringSubmatch(dump("/shrink")); m == nil || m[1] != "0" {
				t.Errorf("/shrink kept its xattr node: %v", m)
			}
			if got := dump("/small"); !strings.Contains(got, "e_name:foo e_name_len:3 e_value_size:3") {
				t.Errorf("dump.f2fs of /small:\n%s", got)
			}
			// i_addr[0] of a device holds old_encode_dev, i_addr[1] the new
			// encoding when the old does not fit.
			if got := dump("/null"); !regexp.MustCompile(`i_addr\[0x[0-9a-f]+\]\s+\[0x\s*103 : 259\]`).MatchString(got) {
				t.Errorf("dump.f2fs of /null:\n%s", got)
			}
			if got := dump("/big"); !regexp.MustCompile(`\[0x\s*11112c70 : 286338160\]`).MatchString(got) {
				t.Errorf("dump.f2fs of /big:\n%s", got)
			}
			e2, _ := bootImage(t, img, false)
			buf := make([]byte, 64)
			if n, err := e2.P.Getxattr(e2.T, "/many", "user.attr12", buf, true); err != nil || string(buf[:n]) != "value number 12 is long enough to spill" {
				t.Errorf("read back: %q %v", buf[:n], err)
			}
			if n, err := e2.P.Getxattr(e2.T, "/small", "system.advise", buf, true); err != nil || n != 1 || buf[0] != f2fs.FadviseColdBit {
				t.Errorf("system.advise read back: %x %v", buf[:n], err)
			}
			for _, d := range []struct {
				path string
				mode uint32
				rdev uint32
			}{{"/fifo", vfs.S_IFIFO, 0}, {"/null", vfs.S_IFCHR, vfs.MKDEV(1, 3)}, {"/big", vfs.S_IFCHR, vfs.MKDEV(300, 70000)}} {
				st, err := e2.P.Lstat(e2.T, d.path)
				if err != nil || st.Mode != d.mode|0o640 || st.Rdev != d.rdev {
					t.Errorf("%s read back: %+v %v", d.path, st, err)
				}
			}
			if n, err := e2.P.Getxattr(e2.T, "/fifo", "trusted.f", buf, false); err != nil || string(buf[:n]) != "fifo attr" {
				t.Errorf("the FIFO's attribute: %q %v", buf[:n], err)
			}
		})
	}
}
