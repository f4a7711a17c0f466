package shell

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestF2fsImageWrittenInShell: an image made by mkfs.f2fs, attached
// writable to vfslab sh, gets files and directories (a casefolded one
// among them), is unmounted (sync_filesystem: f2fs's checkpoint, then the
// device written back) and then passes fsck.f2fs, whose listing shows the
// names; mounted again it shows the same contents. Skipped without
// f2fs-tools.
func TestF2fsImageWrittenInShell(t *testing.T) {
	for _, tool := range []string{"mkfs.f2fs", "fsck.f2fs"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (apt-get install f2fs-tools)", tool)
		}
	}
	img := filepath.Join(t.TempDir(), "f2fs.img")
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 64<<20); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkfs.f2fs", "-q", "-f", "-O", "extra_attr,inode_checksum,sb_checksum,casefold", "-C", "utf8", img).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.f2fs: %v\n%s", err, out)
	}
	got, st := runScript(t, "", "--image", img+":/dev/vdb", "--writable", "-c", `
mount /dev/vdb /mnt/scratch
mkdir /mnt/scratch/dir /mnt/scratch/ci
chattr +F /mnt/scratch/ci
echo hello > /mnt/scratch/dir/file
echo world > /mnt/scratch/ci/Name.TXT
ln /mnt/scratch/dir/file /mnt/scratch/link
umount /mnt/scratch
mount /dev/vdb /mnt/scratch
cat /mnt/scratch/dir/file /mnt/scratch/ci/NAME.txt /mnt/scratch/link
ls /mnt/scratch
umount /mnt/scratch`)
	if st != 0 || got != "hello\nworld\nhello\nci\ndir\nlink\n" {
		t.Fatalf("status %d, output %q", st, got)
	}
	out, err := exec.Command("fsck.f2fs", "--dry-run", "-f", img).CombinedOutput()
	if s := string(out); err != nil || strings.Contains(s, "[Fail]") || strings.Contains(s, "[FIX]") || strings.Contains(s, "ASSERT") {
		t.Fatalf("fsck.f2fs --dry-run -f: %v\n%s", err, out)
	}
	out, err = exec.Command("fsck.f2fs", "-f", "-t", img).CombinedOutput()
	if err != nil {
		t.Fatalf("fsck.f2fs -t: %v\n%s", err, out)
	}
	for _, name := range []string{"Name.TXT", "file", "link"} {
		if !strings.Contains(string(out), name) {
			t.Errorf("fsck.f2fs -t does not list %q:\n%s", name, out)
		}
	}
}

// TestExt4ImageWrittenInShell: an image made by mke2fs (casefold and
// encrypt), attached writable to vfslab sh, gets a casefolded directory,
// an encrypted one whose key is then removed, files and a hard link; after
// umount (sync_filesystem) e2fsck -fn accepts it and debugfs lists the
// names. Skipped without e2fsprogs.
func TestExt4ImageWrittenInShell(t *testing.T) {
	for _, tool := range []string{"mke2fs", "e2fsck", "debugfs"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (apt-get install e2fsprogs)", tool)
		}
	}
	img := filepath.Join(t.TempDir(), "ext4.img")
	if out, err := exec.Command("mke2fs", "-q", "-F", "-t", "ext4", "-O", "casefold,encrypt", "-E", "encoding=utf8", img, "16M").CombinedOutput(); err != nil {
		t.Fatalf("mke2fs: %v\n%s", err, out)
	}
	got, st := runScript(t, "", "--image", img+":/dev/vdb", "--writable", "-c", `
mount /dev/vdb /mnt/scratch
mkdir /mnt/scratch/dir /mnt/scratch/ci /mnt/scratch/enc
chattr +F /mnt/scratch/ci
echo hello > /mnt/scratch/dir/file
echo world > /mnt/scratch/ci/Name.TXT
ln /mnt/scratch/dir/file /mnt/scratch/link
_add_enckey /mnt/scratch "$TEST_RAW_KEY" >/dev/null
_set_encpolicy /mnt/scratch/enc $TEST_KEY_IDENTIFIER
echo secret > /mnt/scratch/enc/plain-name
umount /mnt/scratch
mount /dev/vdb /mnt/scratch
cat /mnt/scratch/dir/file /mnt/scratch/ci/NAME.txt /mnt/scratch/link
ls /mnt/scratch/enc | wc -l
umount /mnt/scratch`)
	if st != 0 || got != "hello\nworld\nhello\n1\n" {
		t.Fatalf("status %d, output %q", st, got)
	}
	if out, err := exec.Command("e2fsck", "-fn", img).CombinedOutput(); err != nil {
		t.Fatalf("e2fsck -fn: %v\n%s", err, out)
	}
	out, err := exec.Command("debugfs", "-R", "ls -l /ci", img).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Name.TXT") {
		t.Errorf("debugfs ls /ci: %v\n%s", err, out)
	}
}
