package vfs_test

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/vfs"
)

// dirent encodes one linux_dirent64 as getdents64 writes it.
func dirent(ino uint64, off int64, typ uint8, name string) []byte {
	r := make([]byte, vfs.DirentReclen(len(name)))
	binary.LittleEndian.PutUint64(r, ino)
	binary.LittleEndian.PutUint64(r[8:], uint64(off))
	binary.LittleEndian.PutUint16(r[16:], uint16(len(r)))
	r[18] = typ
	copy(r[19:], name)
	return r
}

// FuzzParseDirents: ParseDirents never panics on any buffer; what it
// accepts covers the buffer exactly with records whose names fit them and
// hold no NUL, and a well-formed record re-encodes to its bytes.
func FuzzParseDirents(f *testing.F) {
	f.Add(append(dirent(2, 1, 4, "."), dirent(2, 2, 4, "..")...))
	f.Add(dirent(12, 99, 8, strings.Repeat("n", 255)))
	f.Add([]byte{1, 2, 3})
	f.Add(make([]byte, 24))
	f.Fuzz(func(t *testing.T, buf []byte) {
		ds, err := vfs.ParseDirents(buf)
		if err != nil && err != errno.EINVAL {
			t.Fatalf("error %v", err)
		}
		total := 0
		for _, d := range ds {
			if int(d.Reclen) < 20 || len(d.Name) > int(d.Reclen)-19 || strings.IndexByte(d.Name, 0) >= 0 {
				t.Fatalf("record %s does not fit", d)
			}
			rec := buf[total : total+int(d.Reclen)]
			if int(d.Reclen) == vfs.DirentReclen(len(d.Name)) && isZero(rec[19+len(d.Name):]) {
				if got := dirent(d.Ino, d.Off, d.Type, d.Name); string(got) != string(rec) {
					t.Fatalf("%s re-encodes to %x, not %x", d, got, rec)
				}
			}
			total += int(d.Reclen)
		}
		if err == nil && total != len(buf) {
			t.Fatalf("accepted %d bytes of %d", total, len(buf))
		}
	})
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
