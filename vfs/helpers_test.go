package vfs

import (
	"testing"

	"github.com/vfslab/vfslab/errno"
)

// TestFsTypes: fs_umode_to_ftype then fs_ftype_to_dtype gives the d_type
// readdir computes from the mode, for every file type; unknown values are
// FT_UNKNOWN and DT_UNKNOWN.
func TestFsTypes(t *testing.T) {
	for _, mode := range []uint32{S_IFREG, S_IFDIR, S_IFCHR, S_IFBLK, S_IFIFO, S_IFSOCK, S_IFLNK} {
		ft := FsUmodeToFtype(mode | 0o644)
		if ft == FT_UNKNOWN || ft >= FT_MAX {
			t.Errorf("mode %o: ftype %d", mode, ft)
		}
		if dt := FsFtypeToDtype(ft); dt != DtType(mode) {
			t.Errorf("mode %o: dtype %d, want %d", mode, dt, DtType(mode))
		}
	}
	if ft := FsUmodeToFtype(0); ft != FT_UNKNOWN {
		t.Errorf("mode 0: ftype %d", ft)
	}
	if dt := FsFtypeToDtype(FT_MAX); dt != DT_UNKNOWN {
		t.Errorf("FT_MAX: dtype %d", dt)
	}
}

// TestSimpleXattrs: ENODATA when absent, ERANGE for a short buffer,
// EEXIST for XATTR_CREATE over an existing attribute and ENODATA for
// XATTR_REPLACE of a missing one, replacement and removal otherwise;
// values are copied in; the list is in name order and leaves trusted.
// names out for a caller without CAP_SYS_ADMIN (simple_xattr_list).
func TestSimpleXattrs(t *testing.T) {
	var x SimpleXattrs
	buf := make([]byte, 8)
	if _, err := x.Get("user.c", buf); err != errno.ENODATA {
		t.Fatalf("empty: %v", err)
	}
	v := []byte("abcd")
	if _, err := x.Set("user.c", v, XATTR_CREATE); err != nil {
		t.Fatal(err)
	}
	v[0] = 'X'
	if n, err := x.Get("user.c", buf); err != nil || string(buf[:n]) != "abcd" {
		t.Fatalf("get: %q %v", buf[:n], err)
	}
	if n, err := x.Get("user.c", nil); err != nil || n != 4 {
		t.Fatalf("size query: %d %v", n, err)
	}
	if _, err := x.Get("user.d", buf); err != errno.ENODATA {
		t.Fatalf("other name: %v", err)
	}
	if _, err := x.Get("user.c", buf[:3]); err != errno.ERANGE {
		t.Fatalf("short buffer: %v", err)
	}
	if _, err := x.Set("user.c", []byte("e"), XATTR_CREATE); err != errno.EEXIST {
		t.Fatalf("create over existing: %v", err)
	}
	if _, err := x.Set("user.zz", []byte("e"), XATTR_REPLACE); err != errno.ENODATA {
		t.Fatalf("replace missing: %v", err)
	}
	if old, err := x.Set("user.c", []byte("efgh1"), 0); err != nil || old != 4 {
		t.Fatalf("replace: %d %v", old, err)
	}
	if n, err := x.Get("user.c", buf); err != nil || string(buf[:n]) != "efgh1" {
		t.Fatalf("replaced: %q %v", buf[:n], err)
	}
	for _, n := range []string{"user.b", "trusted.t", "security.s"} {
		if _, err := x.Set(n, []byte{}, 0); err != nil {
			t.Fatal(err)
		}
	}
	list := make([]byte, 64)
	if n, err := x.List(list, true); err != nil || string(list[:n]) != "security.s\x00trusted.t\x00user.b\x00user.c\x00" {
		t.Fatalf("list: %q %v", list[:n], err)
	}
	if n, err := x.List(nil, false); err != nil || n != len("security.s\x00user.b\x00user.c\x00") {
		t.Fatalf("list size without CAP_SYS_ADMIN: %d %v", n, err)
	}
	if _, err := x.List(list[:5], true); err != errno.ERANGE {
		t.Fatalf("short list: %v", err)
	}
	if _, err := x.Set("user.c", nil, XATTR_REPLACE); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Get("user.c", buf); err != errno.ENODATA {
		t.Fatalf("removed: %v", err)
	}
}
