package vfs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/vfslab/vfslab/errno"
)

type bitmapAlloc struct{ used []bool }

func (b *bitmapAlloc) Alloc() (uint32, bool) {
	for i, u := range b.used {
		if !u {
			b.used[i] = true
			return uint32(i), true
		}
	}
	return 0, false
}
func (b *bitmapAlloc) Free(a uint32) { b.used[a] = false }

func TestImageRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "img")
	img := make([]byte, 3*PageSize+512)
	for i := range img {
		img[i] = byte(i * 7)
	}
	if err := os.WriteFile(path, img, 0o644); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenImage(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if !ro.ReadOnly() || ro.Size() != int64(len(img)) || ro.Blocks() != 4 {
		t.Fatalf("ro=%v size=%d blocks=%d", ro.ReadOnly(), ro.Size(), ro.Blocks())
	}
	if _, err := ro.WriteAt([]byte{1}, 0); err != errno.EROFS {
		t.Fatalf("WriteAt on a read-only image: %v, want EROFS", err)
	}
	got := make([]byte, 100)
	if _, err := ro.ReadAt(got, PageSize-50); err != nil || !bytes.Equal(got, img[PageSize-50:PageSize+50]) {
		t.Fatalf("ReadAt across pages: %v", err)
	}
	rw, err := OpenImage(path, true)
	if err != nil {
		t.Fatal(err)
	}
	rw.SetAllocator(&bitmapAlloc{used: []bool{true, true, false, true}})
	a, b := rw.Alloc()
	if a != 2 || len(b) != PageSize || b[0] != 0 {
		t.Fatalf("Alloc = %d (zeroed %v), want 2", a, len(b) == PageSize && b[0] == 0)
	}
	if a, b := rw.Alloc(); a != 0 || b != nil {
		t.Fatalf("Alloc on a full device = %d, want 0 (ENOSPC)", a)
	}
	copy(b, "hello")
	if err := rw.Sync(); err != nil {
		t.Fatal(err)
	}
	back, _ := os.ReadFile(path)
	if len(back) != len(img) || !bytes.Equal(back[2*PageSize:2*PageSize+5], []byte("hello")) ||
		!bytes.Equal(back[:2*PageSize], img[:2*PageSize]) {
		t.Fatalf("synced image differs")
	}
	if _, err := rw.WriteAt(make([]byte, 2), int64(4*PageSize-1)); err != errno.ENOSPC {
		t.Fatalf("WriteAt past the end: %v, want ENOSPC", err)
	}
}

func TestOpenImageRejectsOddSizes(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1000} {
		p := filepath.Join(dir, "x")
		os.WriteFile(p, make([]byte, n), 0o644)
		if _, err := OpenImage(p, false); err == nil {
			t.Errorf("OpenImage of %d bytes: no error", n)
		}
	}
	if _, err := OpenImage(filepath.Join(dir, "missing"), false); err == nil {
		t.Error("OpenImage of a missing file: no error")
	}
}
