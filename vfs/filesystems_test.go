package vfs_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/memfs"
	"github.com/vfslab/vfslab/vfs"
)

// TestRegistry: the filesystems register themselves under their names;
// a second type of the same name is EBUSY, an unknown name ENODEV.
func TestRegistry(t *testing.T) {
	for _, want := range []*vfs.FileSystemType{ext4.Type, f2fs.Type, memfs.Type} {
		got, err := vfs.GetFsType(want.Name)
		if err != nil || got != want {
			t.Errorf("GetFsType(%q) = %v, %v", want.Name, got, err)
		}
		if !slices.Contains(vfs.FilesystemNames(), want.Name) {
			t.Errorf("%s not in %v", want.Name, vfs.FilesystemNames())
		}
	}
	if _, err := vfs.GetFsType("btrfs"); err != errno.ENODEV {
		t.Errorf("GetFsType(btrfs): %v, want ENODEV", err)
	}
	if err := vfs.RegisterFilesystem(&vfs.FileSystemType{Name: "ext4"}); err != errno.EBUSY {
		t.Errorf("second ext4: %v, want EBUSY", err)
	}
	toy := &vfs.FileSystemType{Name: "toyfs"}
	if err := vfs.RegisterFilesystem(toy); err != nil {
		t.Fatal(err)
	}
	if got, _ := vfs.GetFsType("toyfs"); got != toy {
		t.Errorf("toyfs not found")
	}
	if err := vfs.UnregisterFilesystem(toy); err != nil {
		t.Fatal(err)
	}
	if _, err := vfs.GetFsType("toyfs"); err != errno.ENODEV {
		t.Errorf("toyfs after unregister: %v", err)
	}
}

func TestParseMountData(t *testing.T) {
	got := vfs.ParseMountData("lookup_mode=perf,,noinline_dentry,dir_level=")
	want := []vfs.MountOption{{Key: "lookup_mode", Value: "perf", HasValue: true}, {Key: "noinline_dentry"}, {Key: "dir_level", HasValue: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
}

// TestMountChecks: fill_super finds its superblock on the device or
// refuses the mount with the kernel's log line; the filesystems parse
// their own options.
func TestMountChecks(t *testing.T) {
	k := kernel.New()
	tk := k.NewTask("mount")
	sys, p, err := memfs.Boot(tk, vfs.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Mkdir(tk, "/mnt", 0o755); err != nil {
		t.Fatal(err)
	}
	blank := vfs.NewGrowingBlockDevice()
	if _, err := sys.Mount(tk, p, ext4.Type, "/mnt", vfs.MountOptions{Source: "vdb", Device: blank}); err != errno.EINVAL {
		t.Errorf("ext4 on a blank device: %v, want EINVAL", err)
	}
	if !k.Log.Contains("EXT4-fs (vdb): VFS: Can't find ext4 filesystem") {
		t.Errorf("log: %q", k.Log.Lines())
	}
	if _, err := sys.Mount(tk, p, ext4.Type, "/mnt", vfs.MountOptions{Source: "vdb"}); err != errno.ENOTBLK {
		t.Errorf("ext4 without a device: %v, want ENOTBLK", err)
	}
	f2dev := vfs.NewGrowingBlockDevice()
	if err := f2fs.Type.Mkfs(tk, f2dev, []string{"-O", "encrypt,casefold"}); err != nil {
		t.Fatal(err)
	}
	if _, err := sys.Mount(tk, p, ext4.Type, "/mnt", vfs.MountOptions{Source: "vdc", Device: f2dev}); err != errno.EINVAL {
		t.Errorf("ext4 on an f2fs device: %v, want EINVAL", err)
	}
	for data, line := range map[string]string{
		"lookup_mode=fast": "f2fs: Bad value for 'lookup_mode'",
		"dir_level=64":     "f2fs: Bad value for 'dir_level'",
		"discard_unknown":  "f2fs: Unknown parameter 'discard_unknown'",
	} {
		if _, err := sys.Mount(tk, p, f2fs.Type, "/mnt", vfs.MountOptions{Source: "vdc", Device: f2dev, Data: data}); err != errno.EINVAL {
			t.Errorf("f2fs -o %s: %v, want EINVAL", data, err)
		}
		if !k.Log.Contains(line) {
			t.Errorf("f2fs -o %s: no %q in the log", data, line)
		}
	}
	m, err := sys.Mount(tk, p, f2fs.Type, "/mnt", vfs.MountOptions{Source: "vdc", Device: f2dev, Data: "lookup_mode=compat"})
	if err != nil {
		t.Fatal(err)
	}
	fs := f2fs.F2FS_SB(m.SB)
	if fs.LookupMode != f2fs.LookupCompat || !fs.Options().Casefold || fs.Options().NoEncrypt {
		t.Errorf("mounted with %s", fs.Options())
	}
	if _, err := sys.Mount(tk, p, f2fs.Type, "/mnt", vfs.MountOptions{Source: "vdc", Device: f2dev}); err != errno.EBUSY {
		t.Errorf("second mount of the device: %v, want EBUSY", err)
	}
	if err := sys.Remount(tk, p, "/mnt", "lookup_mode=perf"); err != nil {
		t.Fatal(err)
	}
	if fs.LookupMode != f2fs.LookupPerf {
		t.Errorf("after remount: %s", fs.LookupMode)
	}
	if err := sys.Remount(tk, p, "/mnt", "lookup_mode=x"); err != errno.EINVAL || fs.LookupMode != f2fs.LookupPerf {
		t.Errorf("bad remount: %v, mode %s", err, fs.LookupMode)
	}
	if err := sys.Remount(tk, p, "/", "lookup_mode=perf"); err != errno.EINVAL {
		t.Errorf("remount of memfs with an f2fs option: %v, want EINVAL", err)
	}
	if err := p.Mkdir(tk, "/mnt/d", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := sys.Remount(tk, p, "/mnt/d", "lookup_mode=perf"); err != errno.EINVAL {
		t.Errorf("remount of a directory that is no mount root: %v, want EINVAL", err)
	}
}

// TestMkfsArgs: the typed options and the mkfs arguments round-trip, and
// bad arguments are refused.
func TestMkfsArgs(t *testing.T) {
	e := ext4.Options{NoMetadataCsum: true, LargeDir: true, Hash: "tea", UnsignedHash: true, HashSeed: [16]byte{1, 2}, InodesCount: 4096, Casefold: true, Strict: true, NoCompatFallback: true}
	if got, err := ext4.ParseMkfsArgs(e.MkfsArgs()); err != nil || got != e {
		t.Errorf("ext4 %v -> %+v, %v", e.MkfsArgs(), got, err)
	}
	f := f2fs.Options{Casefold: true, Strict: true, NoCompatFallback: true, NoEncrypt: true}
	if got, err := f2fs.ParseMkfsArgs(f.MkfsArgs()); err != nil || got != f {
		t.Errorf("f2fs %v -> %+v, %v", f.MkfsArgs(), got, err)
	}
	for _, bad := range [][]string{{"-O", "bogus"}, {"-O"}, {"-E", "encoding=latin1"}, {"-N", "3"}, {"-x"}} {
		if _, err := ext4.ParseMkfsArgs(bad); err == nil {
			t.Errorf("mkfs.ext4 %v accepted", bad)
		}
	}
	for _, bad := range [][]string{{"-O", "bogus"}, {"-C", "latin1"}, {"-C", "utf8:loud"}} {
		if _, err := f2fs.ParseMkfsArgs(bad); err == nil {
			t.Errorf("mkfs.f2fs %v accepted", bad)
		}
	}
}
