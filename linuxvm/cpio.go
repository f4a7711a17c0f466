package linuxvm

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// The guest's file tree and its newc cpio archive (the "new ASCII"
// format the kernel's initramfs unpacker reads, init/initramfs.c).

// File modes of the archive's entries (S_IFMT bits).
const (
	modeDir     = 0o040000
	modeRegular = 0o100000
	modeSymlink = 0o120000
	modeChar    = 0o020000
)

// entry is one file of the tree.
type entry struct {
	mode         uint32 // type and permission bits
	data         []byte // contents; a symlink's target
	rmaj, rmin   uint32 // a device's number
	uid, gid     uint32
	hostPath     string // contents read from this host file at write time
	unxz         bool   // hostPath is xz-compressed: the entry is its decompressed bytes
	hostSize     int64
	hostModified int64
}

// tree is a file tree keyed by path without the leading slash.
type tree map[string]*entry

// dir adds p and its parents as directories.
func (t tree) dir(p string, perm uint32) {
	p = strings.Trim(p, "/")
	if p == "" {
		return
	}
	if i := strings.LastIndex(p, "/"); i >= 0 {
		t.dir(p[:i], 0o755)
	}
	if _, ok := t[p]; !ok {
		t[p] = &entry{mode: modeDir | perm}
	}
}

// file adds a regular file with the given contents.
func (t tree) file(p string, perm uint32, data []byte) {
	p = strings.Trim(p, "/")
	t.parent(p)
	t[p] = &entry{mode: modeRegular | perm, data: data}
}

// symlink adds a symbolic link.
func (t tree) symlink(p, target string) {
	p = strings.Trim(p, "/")
	t.parent(p)
	t[p] = &entry{mode: modeSymlink | 0o777, data: []byte(target)}
}

// char adds a character device node.
func (t tree) char(p string, perm, maj, min uint32) {
	p = strings.Trim(p, "/")
	t.parent(p)
	t[p] = &entry{mode: modeChar | perm, rmaj: maj, rmin: min}
}

func (t tree) parent(p string) {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		t.dir(p[:i], 0o755)
	}
}

// newcHeader writes one entry's header and name, padded to 4 bytes.
func newcHeader(w io.Writer, ino int, name string, e *entry, size int) error {
	nlink := 1
	if e.mode&0o170000 == modeDir {
		nlink = 2
	}
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		ino, e.mode, e.uid, e.gid, nlink, 0, size, 0, 0, e.rmaj, e.rmin, len(name)+1, 0)
	buf := append([]byte(hdr), name...)
	buf = append(buf, 0)
	buf = append(buf, make([]byte, pad4(len(buf)))...)
	_, err := w.Write(buf)
	return err
}

func pad4(n int) int { return (4 - n%4) % 4 }

// writeCpio writes the tree as a newc archive, parents before children
// (sorted paths), every timestamp 0, ending with the TRAILER!!! entry.
// read gives a host-backed entry's contents.
func (t tree) writeCpio(w io.Writer, read func(*entry) ([]byte, error)) error {
	names := make([]string, 0, len(t))
	for n := range t {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		e := t[n]
		data := e.data
		if e.hostPath != "" {
			b, err := read(e)
			if err != nil {
				return err
			}
			data = b
		}
		if err := newcHeader(w, i+1, n, e, len(data)); err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
		if _, err := w.Write(make([]byte, pad4(len(data)))); err != nil {
			return err
		}
	}
	return newcHeader(w, 0, "TRAILER!!!", &entry{}, 0)
}
