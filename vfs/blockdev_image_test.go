package vfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
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
	defer ro.Close()
	rw, err := OpenImage(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
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

// TestImageLockedAgainstOtherProcess: a writable attach locks the image
// against another process's attach (EBUSY), read-only or writable; a
// read-only attach lets another read-only one in but not a writable one;
// closing releases the lock.
func TestImageLockedAgainstOtherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "img")
	if err := os.WriteFile(path, make([]byte, 2*PageSize), 0o644); err != nil {
		t.Fatal(err)
	}
	other := func(writable bool) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestImageLockHelper$")
		cmd.Env = append(os.Environ(), "VFSLAB_LOCK_IMAGE="+path, fmt.Sprintf("VFSLAB_LOCK_WRITABLE=%t", writable))
		out, _ := cmd.CombinedOutput()
		if i := bytes.Index(out, []byte("attach: ")); i >= 0 {
			return string(bytes.TrimSpace(bytes.SplitN(out[i+8:], []byte("\n"), 2)[0]))
		}
		return "no answer: " + string(out)
	}
	rw, err := OpenImage(path, true)
	if err != nil {
		t.Fatal(err)
	}
	// Within the process the image can be attached again.
	again, err := OpenImage(path, false)
	if err != nil {
		t.Fatalf("second attach in the same process: %v", err)
	}
	again.Close()
	for _, w := range []bool{false, true} {
		if got := other(w); got != "EBUSY" {
			t.Errorf("another process's attach (writable %t) of a writable image: %s, want EBUSY", w, got)
		}
	}
	rw.Close()
	ro, err := OpenImage(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := other(false); got != "ok" {
		t.Errorf("another process's read-only attach of a read-only image: %s", got)
	}
	if got := other(true); got != "EBUSY" {
		t.Errorf("another process's writable attach of a read-only image: %s, want EBUSY", got)
	}
	ro.Close()
	if got := other(true); got != "ok" {
		t.Errorf("another process's writable attach after Close: %s", got)
	}
}

// TestImageLockHelper is the other process of
// TestImageLockedAgainstOtherProcess.
func TestImageLockHelper(t *testing.T) {
	path := os.Getenv("VFSLAB_LOCK_IMAGE")
	if path == "" {
		t.Skip("run by TestImageLockedAgainstOtherProcess")
	}
	d, err := OpenImage(path, os.Getenv("VFSLAB_LOCK_WRITABLE") == "true")
	switch {
	case errors.Is(err, errno.EBUSY):
		fmt.Println("attach: EBUSY")
	case err != nil:
		fmt.Println("attach:", err)
	default:
		d.Close()
		fmt.Println("attach: ok")
	}
}
