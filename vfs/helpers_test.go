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
// EEXIST for XATTR_CREATE over an existing attribute, replacement and
// removal otherwise; values are copied in.
func TestSimpleXattrs(t *testing.T) {
	var x SimpleXattrs
	buf := make([]byte, 8)
	if _, err := x.Get(9, "c", buf); err != errno.ENODATA {
		t.Fatalf("empty: %v", err)
	}
	v := []byte("abcd")
	if err := x.Set(9, "c", v, true); err != nil {
		t.Fatal(err)
	}
	v[0] = 'X'
	if n, err := x.Get(9, "c", buf); err != nil || string(buf[:n]) != "abcd" {
		t.Fatalf("get: %q %v", buf[:n], err)
	}
	if _, err := x.Get(9, "d", buf); err != errno.ENODATA {
		t.Fatalf("other name: %v", err)
	}
	if _, err := x.Get(1, "c", buf); err != errno.ENODATA {
		t.Fatalf("other index: %v", err)
	}
	if _, err := x.Get(9, "c", buf[:3]); err != errno.ERANGE {
		t.Fatalf("short buffer: %v", err)
	}
	if err := x.Set(9, "c", []byte("e"), true); err != errno.EEXIST {
		t.Fatalf("create over existing: %v", err)
	}
	if err := x.Set(9, "c", []byte("efgh1"), false); err != nil {
		t.Fatal(err)
	}
	if n, err := x.Get(9, "c", buf); err != nil || string(buf[:n]) != "efgh1" {
		t.Fatalf("replaced: %q %v", buf[:n], err)
	}
	if err := x.Set(9, "c", nil, false); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Get(9, "c", buf); err != errno.ENODATA {
		t.Fatalf("removed: %v", err)
	}
	x.Set(9, "c", v, false)
	x.Free()
	if _, err := x.Get(9, "c", buf); err != errno.ENODATA {
		t.Fatalf("freed: %v", err)
	}
}
