package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestImageFlags: vfslab dump --image and vfslab trace --image attach the
// image and report one clear error line (the kernel's log after it) when
// it holds no filesystem that mounts; their usage errors are status 2.
func TestImageFlags(t *testing.T) {
	img := filepath.Join(t.TempDir(), "zero.img")
	if err := os.WriteFile(img, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(img)
	cases := []struct {
		args   []string
		status int
		first  string // the first line of stderr
		kernel string // a kernel log line that must follow the first, if any
	}{
		{[]string{"dump", "--image", img}, 1, "vfslab dump: " + img + ": blkid finds no ext4 or f2fs superblock on it; name the type with --fs", ""},
		{[]string{"dump", "--image", img, "--fs", "ext4"}, 1, "vfslab dump: " + img + ": cannot mount it as ext4: invalid argument (EINVAL)", "  kernel: EXT4-fs (vdb): VFS: Can't find ext4 filesystem"},
		{[]string{"dump", "--image", img, "--fs", "f2fs", "--dir", "/d"}, 1, "vfslab dump: " + img + ": cannot mount it as f2fs: invalid argument (EINVAL)", "  kernel: F2FS-fs (vdb): Can't find valid F2FS filesystem in 1th superblock"},
		{[]string{"dump", "--image", img + ".none"}, 1, "vfslab dump: --image: open " + img + ".none: no such file or directory (ENOENT)", ""},
		{[]string{"dump", "--image", img, "--fs", "memfs"}, 2, "vfslab dump: --fs \"memfs\": want one of ext4, f2fs; see vfslab dump --help", ""},
		{[]string{"dump", "--dir", "/d"}, 2, "vfslab dump: --fs and --dir need --image; see vfslab dump --help", ""},
		{[]string{"trace", "--image", img, "stat", "/"}, 1, "vfslab trace: " + img + ": blkid finds no ext4 or f2fs superblock on it; name the type with --fs", ""},
		{[]string{"trace", "--image", img, "--fs", "ext4", "stat", "/"}, 1, "vfslab trace: setting up the machine: " + img + ": cannot mount it as ext4: invalid argument (kernel: EXT4-fs (vdb): VFS: Can't find ext4 filesystem) (EINVAL)", ""},
		{[]string{"trace", "--image", img, "--fs", "memfs", "stat", "/"}, 2, "vfslab trace: --fs \"memfs\": not a filesystem on a device, which an --image needs; see vfslab trace --help", ""},
		{[]string{"trace", "--image", img, "--no-key", "stat", "/"}, 2, "vfslab trace: --no-key removes the key of the built machine's /secret; an --image has none; see vfslab trace --help", ""},
	}
	for _, tc := range cases {
		_, stderr, st := cli(t, "", tc.args...)
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		if st != tc.status || lines[0] != tc.first {
			t.Errorf("%q: status %d, stderr %q; want status %d, first line %q", tc.args, st, stderr, tc.status, tc.first)
			continue
		}
		if tc.kernel != "" && !slices.Contains(lines[1:], tc.kernel) {
			t.Errorf("%q: stderr %q; want the kernel line %q", tc.args, stderr, tc.kernel)
		}
	}
	if after, _ := os.ReadFile(img); string(after) != string(before) {
		t.Error("dump or trace wrote the image")
	}
}
