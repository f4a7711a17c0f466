package vfs

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// sparseImage makes a 1 MiB sparse image file holding "old" in block 3
// and block 200.
func sparseImage(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "img")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(256 * PageSize); err != nil {
		t.Fatal(err)
	}
	for _, b := range []int64{3, 200} {
		if _, err := f.WriteAt([]byte("old"), b*PageSize); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func fileBlock(t *testing.T, path string, blk int64) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b[blk*PageSize : blk*PageSize+3]
}

// TestWriteBackChangedBlocksKeepsHoles: Sync writes the blocks that
// changed, in place; a block that became zeroes is a hole again, and the
// file's other holes stay; no record is left behind.
func TestWriteBackChangedBlocksKeepsHoles(t *testing.T) {
	path := sparseImage(t)
	d, err := OpenImage(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Resident() != 0 {
		t.Errorf("attaching read %d bytes into memory", d.Resident())
	}
	d.WriteAt([]byte("new"), 5*PageSize)
	d.Discard(3*PageSize, PageSize)
	// Read through Block (materialised, dirty) but unchanged.
	_ = d.Block(200)
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := fileBlock(t, path, 5); string(got) != "new" {
		t.Errorf("block 5: %q", got)
	}
	if got := fileBlock(t, path, 3); !bytes.Equal(got, []byte{0, 0, 0}) {
		t.Errorf("block 3 after the discard: %q", got)
	}
	if got := fileBlock(t, path, 200); string(got) != "old" {
		t.Errorf("block 200: %q", got)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	if st.Blocks*512 > 8*PageSize {
		t.Errorf("the image holds %d bytes on the host: its holes were filled", st.Blocks*512)
	}
	if _, err := os.Stat(path + WALSuffix); !os.IsNotExist(err) {
		t.Errorf("the write-ahead record is left: %v", err)
	}
}

// TestWriteBackRecordReplayed: a complete record left by a write-back
// that stopped before the blocks went in place is read over the file by a
// read-only attach and completed by a writable one; a torn record is
// discarded, the image unchanged.
func TestWriteBackRecordReplayed(t *testing.T) {
	path := sparseImage(t)
	d, err := OpenImage(path, true)
	if err != nil {
		t.Fatal(err)
	}
	d.WriteAt([]byte("new"), 7*PageSize)
	d.Discard(200*PageSize, PageSize)
	// The first step of the write-back only: the record, flushed.
	if err := d.writeRecord(path+WALSuffix, []walEntry{{7, false}, {200, true}}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if got := fileBlock(t, path, 7); !bytes.Equal(got, []byte{0, 0, 0}) {
		t.Fatalf("block 7 written before the record was replayed: %q", got)
	}
	ro, err := OpenImage(path, false)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 3)
	ro.ReadAt(got, 7*PageSize)
	if string(got) != "new" {
		t.Errorf("read-only attach: block 7 %q, want the record's", got)
	}
	ro.ReadAt(got, 200*PageSize)
	if !bytes.Equal(got, []byte{0, 0, 0}) {
		t.Errorf("read-only attach: block 200 %q, want the record's zeroes", got)
	}
	ro.Close()
	if _, err := os.Stat(path + WALSuffix); err != nil {
		t.Fatalf("a read-only attach removed the record: %v", err)
	}
	rw, err := OpenImage(path, true)
	if err != nil {
		t.Fatal(err)
	}
	rw.Close()
	if got := fileBlock(t, path, 7); string(got) != "new" {
		t.Errorf("replayed: block 7 %q", got)
	}
	if got := fileBlock(t, path, 200); !bytes.Equal(got, []byte{0, 0, 0}) {
		t.Errorf("replayed: block 200 %q", got)
	}
	if _, err := os.Stat(path + WALSuffix); !os.IsNotExist(err) {
		t.Errorf("the record is left after the replay: %v", err)
	}

	// A torn record: its last bytes never reached the disk.
	d, err = OpenImage(path, true)
	if err != nil {
		t.Fatal(err)
	}
	d.WriteAt([]byte("tor"), 9*PageSize)
	if err := d.writeRecord(path+WALSuffix, []walEntry{{9, false}}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	fi, _ := os.Stat(path + WALSuffix)
	os.Truncate(path+WALSuffix, fi.Size()-5)
	rw, err = OpenImage(path, true)
	if err != nil {
		t.Fatal(err)
	}
	rw.Close()
	if got := fileBlock(t, path, 9); !bytes.Equal(got, []byte{0, 0, 0}) {
		t.Errorf("a torn record was replayed: block 9 %q", got)
	}
	if _, err := os.Stat(path + WALSuffix); !os.IsNotExist(err) {
		t.Errorf("the torn record is left: %v", err)
	}
}
