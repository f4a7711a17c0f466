package ext4_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// TestMaxFileSizeByBlockSize: s_maxbytes is ext4_max_size for the
// filesystem's block size, so a 1 KiB-block ext4 takes a file of
// (2^32 - 1) KiB and no more: truncate past it is EFBIG
// (setattr_prepare's inode_newsize_ok), and so is a write at it; a 4 KiB
// one stops at 2^44 - 4 KiB.
func TestMaxFileSizeByBlockSize(t *testing.T) {
	const max1k = int64(1)<<42 - 1024
	dev := vfs.NewBlockDeviceSize(16 << 20 / vfs.PageSize) // mke2fs's "small": 1 KiB blocks
	tk := kernel.New().NewTask("mkfs")
	if err := ext4.Type.Mkfs(tk, dev, []string{"-O", "encrypt"}); err != nil {
		t.Fatal(err)
	}
	tk.Exit()
	e := mustBootImage(t, dev, "")
	if got := e.sys.RootMount().SB.MaxBytes(); got != max1k {
		t.Fatalf("1 KiB blocks: s_maxbytes %d, want %d", got, max1k)
	}
	e.Write("/f", "x")
	for _, c := range []struct {
		size int64
		err  error
	}{{5 << 40, errno.EFBIG}, {max1k + 1, errno.EFBIG}, {max1k, nil}, {1 << 30, nil}} {
		if err := e.P.Truncate(e.T, "/f", c.size); err != c.err {
			t.Errorf("truncate to %d: %v, want %v", c.size, err, c.err)
		}
	}
	fd, err := e.P.Open(e.T, "/f", vfs.O_WRONLY, 0)
	e.Must(err)
	if _, err := e.P.Pwrite(e.T, fd, []byte("y"), max1k); err != errno.EFBIG {
		t.Errorf("write at s_maxbytes: %v, want EFBIG", err)
	}
	e.P.Close(e.T, fd)
	t.Run("e2fsck", func(t *testing.T) {
		// The largest file ext4 takes is one e2fsck accepts.
		needE2fs(t)
		e.Must(e.P.Truncate(e.T, "/f", max1k))
		e2fsckClean(t, saveImage(t, e))
	})

	g := boot(t, nil)
	g.Write("/f", "x")
	if err := g.P.Truncate(g.T, "/f", 1<<44); err != errno.EFBIG {
		t.Errorf("4 KiB blocks, truncate to 16 TiB: %v, want EFBIG", err)
	}
	if err := g.P.Truncate(g.T, "/f", 1<<44-4096); err != nil {
		t.Errorf("4 KiB blocks, truncate to s_maxbytes: %v", err)
	}
}

// TestBitmapMaxBytes: a block-mapped file (made without the extent
// feature, turned on later with tune2fs; no EXT4_EXTENTS_FL) is limited to s_bitmap_maxbytes (ext4_setattr,
// ext4_generic_write_checks): with 1 KiB blocks 17247252480 bytes, where
// an extent-mapped file may grow to about 4 TiB.
func TestBitmapMaxBytes(t *testing.T) {
	needE2fs(t)
	const bitmap1k = 17247252480
	src := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "old"), []byte("block-mapped\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// An ext3-style image whose file stays block-mapped when the extent
	// feature is turned on, as after an ext3 -> ext4 conversion.
	img := mkfsImageBS(t, src, "8M", 1024, "-O", "^extent,^64bit")
	runTool(t, "tune2fs", "-O", "extent", img)
	dev, err := vfs.OpenImage(img, true)
	if err != nil {
		t.Fatal(err)
	}
	e := mustBootImage(t, dev, "")
	if err := e.P.Truncate(e.T, "/old", bitmap1k+1); err != errno.EFBIG {
		t.Errorf("block-mapped file past s_bitmap_maxbytes: %v, want EFBIG", err)
	}
	if err := e.P.Truncate(e.T, "/old", bitmap1k); err != nil {
		t.Errorf("block-mapped file to s_bitmap_maxbytes: %v", err)
	}
	fd, err := e.P.Open(e.T, "/old", vfs.O_WRONLY, 0)
	e.Must(err)
	if n, err := e.P.Pwrite(e.T, fd, []byte("abc"), bitmap1k-1); n != 1 || err != nil {
		t.Errorf("write crossing s_bitmap_maxbytes: %d, %v; want 1 byte", n, err)
	}
	if _, err := e.P.Pwrite(e.T, fd, []byte("abc"), bitmap1k); err != errno.EFBIG {
		t.Errorf("write at s_bitmap_maxbytes: %v, want EFBIG", err)
	}
	e.P.Close(e.T, fd)
	e2fsckClean(t, saveImage(t, e))
}
