package fstestutil

import (
	"fmt"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/vfs"
)

// NamespaceSmoke runs the namespace half of a filesystem's VFS smoke test
// on a root that holds /a/f (contents big) and the 300 names
// /a/name-number-000..299: half of them unlinked, renames of a file and a
// directory across directories, a symlink, a hard link, RENAME_EXCHANGE of
// two names of one inode (which does nothing) and of a directory and a
// symlink, the walk that then meets a file where a directory was, and with
// casefold a casefolded directory found in another case. check runs the
// filesystem's directory checker on a path.
func (e *Env) NamespaceSmoke(big string, casefold bool, check func(path string)) {
	e.TB.Helper()
	if got := len(e.List("/a")); got != 303 {
		e.TB.Fatalf("%d entries listed", got)
	}
	for i := 0; i < 300; i += 2 {
		e.Must(e.P.Unlink(e.T, fmt.Sprintf("/a/name-number-%03d", i)))
	}
	e.Must(e.P.Rename(e.T, "/a/f", "/g", 0))
	e.Must(e.P.Mkdir(e.T, "/a/sub", 0o755))
	e.Must(e.P.Rename(e.T, "/a/sub", "/sub2", 0))
	check("/a")
	check("/")
	check("/sub2")
	if st, err := e.P.Stat(e.T, "/"); err != nil || st.Nlink != 4 {
		e.TB.Fatalf("root: %v %v", st, err)
	}
	if err := e.P.Rmdir(e.T, "/a"); err != errno.ENOTEMPTY {
		e.TB.Fatalf("rmdir of a full directory: %v, want ENOTEMPTY", err)
	}
	e.Must(e.P.Symlink(e.T, "g", "/l"))
	if got, err := e.Read("/l"); err != nil || got != big {
		e.TB.Fatal(err)
	}
	e.Must(e.P.Link(e.T, "/g", "/a/hard"))
	if st, _ := e.P.Stat(e.T, "/g"); st.Nlink != 2 {
		e.TB.Fatal(st)
	}
	e.Must(e.P.Rename(e.T, "/g", "/a/hard", vfs.RENAME_EXCHANGE))
	e.Must(e.P.Rename(e.T, "/sub2", "/l", vfs.RENAME_EXCHANGE))
	check("/")
	check("/a")
	// /sub2 is now the symlink to g, a regular file: its ".." is not
	// a directory's.
	if _, err := e.P.Stat(e.T, "/sub2/../a/hard"); err != errno.ENOTDIR {
		e.TB.Errorf("stat /sub2/../a/hard: %v, want ENOTDIR", err)
	}
	if !casefold {
		return
	}
	var fl uint32 = vfs.FS_CASEFOLD_FL
	e.Must(e.P.Mkdir(e.T, "/ci", 0o755))
	fd, err := e.P.Open(e.T, "/ci", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	e.Must(err)
	_, err = e.P.Ioctl(e.T, fd, vfs.FS_IOC_SETFLAGS, &fl)
	e.Must(err)
	e.Must(e.P.Close(e.T, fd))
	e.Write("/ci/Straße", "s")
	if got, err := e.Read("/ci/STRASSE"); err != nil || got != "s" {
		e.TB.Fatalf("casefolded lookup: %q %v", got, err)
	}
	if got := e.List("/ci"); fmt.Sprint(got) != "[. .. Straße]" {
		e.TB.Fatal(got)
	}
	check("/ci")
}
