// Package tests holds cross-layer tests: syscalls run end to end on the
// simulated filesystems (memfs, f2fs, ext4) through the VFS, the fscrypt
// hooks and the directory code, checked against a model of the namespace,
// against each other, and with fsck-style checkers on every directory.
package tests

import (
	"fmt"
	"sort"
	"testing"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/memfs"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/vfs"
)

// fsKind names a filesystem under test.
type fsKind string

const (
	kMemfs fsKind = "memfs"
	kF2fs  fsKind = "f2fs"
	kExt4  fsKind = "ext4"
)

// config is one system under test: a filesystem and the directory /d the
// tests work in, casefolded and encrypted as asked.
type config struct {
	fs       fsKind
	casefold bool
	encrypt  bool
	// Filesystem options beyond casefold (nil: defaults).
	f2fs    *f2fs.Options
	ext4    *ext4.Options
	patches patch.Set
}

func (c config) String() string {
	s := string(c.fs)
	if c.casefold {
		s += "+casefold"
	}
	if c.encrypt {
		s += "+encrypt"
	}
	return s
}

// testDir is the directory every test works in: not the root, because ext4
// refuses to encrypt its root (ext4_set_context).
const testDir = "/d"

// masterKey is the master key of the encrypted test directories. It must
// not repeat itself: a v1 key is derived block by block with AES-ECB, and
// XTS refuses a key whose two halves are equal (fscrypt asks for
// CRYPTO_TFM_REQ_FORBID_WEAK_KEYS).
var masterKey = func() []byte {
	k := make([]byte, 64)
	for i := range k {
		k[i] = byte(i*7 + 1)
	}
	return k
}()

// system is a booted machine with one process.
type system struct {
	cfg   config
	k     *kernel.Kernel
	t     *kernel.Task
	sys   *vfs.System
	p     *vfs.Proc
	keyID [16]byte
}

// errBoot reports a system that could not be set up.
type errBoot struct {
	cfg config
	err error
}

func (e errBoot) Error() string { return fmt.Sprintf("%s: %v", e.cfg, e.err) }

// boot makes a system for cfg with /d ready.
func boot(cfg config) (*system, error) {
	k := kernel.NewWith(kernel.Config{Patches: cfg.patches})
	t := k.NewTask("tests")
	t.EnableCounting()
	vc := vfs.Config{}
	var sys *vfs.System
	var p *vfs.Proc
	var err error
	switch cfg.fs {
	case kMemfs:
		if cfg.casefold {
			return nil, errBoot{cfg, fmt.Errorf("memfs has no casefolding")}
		}
		// tmpfs has no fscrypt; memfs's test double of ext4's
		// fscrypt support stands in for it here.
		sys, p, err = memfs.Boot(t, vc, &memfs.Options{TestFscrypt: true})
	case kF2fs:
		o := f2fs.Options{}
		if cfg.f2fs != nil {
			o = *cfg.f2fs
		}
		o.Casefold = o.Casefold || cfg.casefold
		sys, p, err = f2fs.Boot(t, vc, &o)
	case kExt4:
		o := ext4.Options{}
		if cfg.ext4 != nil {
			o = *cfg.ext4
		}
		o.Casefold = o.Casefold || cfg.casefold
		sys, p, err = ext4.Boot(t, vc, &o)
	}
	if err != nil {
		t.Exit()
		return nil, errBoot{cfg, err}
	}
	s := &system{cfg: cfg, k: k, t: t, sys: sys, p: p}
	if err := p.Mkdir(t, testDir, 0o755); err != nil {
		return nil, errBoot{cfg, err}
	}
	if cfg.casefold {
		if err := s.setCasefold(testDir); err != nil {
			return nil, errBoot{cfg, err}
		}
	}
	if cfg.encrypt {
		if s.keyID, err = p.EncryptDir(t, testDir, masterKey, 0, 0); err != nil {
			return nil, errBoot{cfg, err}
		}
	}
	return s, nil
}

// mustBoot is boot for a test.
func mustBoot(tb testing.TB, cfg config) *system {
	tb.Helper()
	s, err := boot(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.close)
	return s
}

func (s *system) close() {
	s.p.Exit(s.t)
	s.t.Exit()
}

// setflagsCmd returns the filesystem's FS_IOC_SETFLAGS and FS_CASEFOLD_FL.
func (s *system) setflagsCmd() (uint32, uint32) {
	if s.cfg.fs == kExt4 {
		return vfs.FS_IOC_SETFLAGS, vfs.FS_CASEFOLD_FL
	}
	return vfs.FS_IOC_SETFLAGS, vfs.FS_CASEFOLD_FL
}

// setCasefold sets FS_CASEFOLD_FL on the empty directory path.
func (s *system) setCasefold(path string) error {
	fd, err := s.p.Open(s.t, path, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer s.p.Close(s.t, fd)
	cmd, fl := s.setflagsCmd()
	_, err = s.p.Ioctl(s.t, fd, cmd, &fl)
	return err
}

// creat is the seed program's step: open(O_RDWR|O_CREAT|O_TRUNC, 0600),
// write data, close.
func (s *system) creat(path string, data []byte) error {
	fd, err := s.p.Open(s.t, path, vfs.O_RDWR|vfs.O_CREAT|vfs.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if n, err := s.p.Write(s.t, fd, data); err != nil || n != len(data) {
		s.p.Close(s.t, fd)
		if err == nil {
			err = fmt.Errorf("short write %d of %d", n, len(data))
		}
		return err
	}
	return s.p.Close(s.t, fd)
}

// readFile reads a whole file.
func (s *system) readFile(path string) ([]byte, error) {
	fd, err := s.p.Open(s.t, path, vfs.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer s.p.Close(s.t, fd)
	var out []byte
	buf := make([]byte, 5000)
	for {
		n, err := s.p.Read(s.t, fd, buf)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return out, nil
		}
		out = append(out, buf[:n]...)
	}
}

// listDir returns the entries of a directory (getdents64 to the end, "."
// and ".." left out), sorted by name.
func (s *system) listDir(path string) ([]vfs.Dirent, error) {
	ds, _, _, err := s.listDirDots(path)
	return ds, err
}

// listDirDots is listDir that also returns the inode numbers "." and ".."
// were listed with (0 when missing).
func (s *system) listDirDots(path string) (ds []vfs.Dirent, dot, dotdot uint64, err error) {
	ds, err = s.getdents(path)
	if err != nil {
		return nil, 0, 0, err
	}
	out := ds[:0]
	for _, d := range ds {
		switch d.Name {
		case ".":
			dot = d.Ino
		case "..":
			dotdot = d.Ino
		default:
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, dot, dotdot, nil
}

// getdentsMax bounds a listing: a corrupted directory can make a listing
// that never ends, in the kernel too (see errNoEnd), and a test must not
// hold it all in memory.
const getdentsMax = 1 << 17

// getdents lists a directory in the filesystem's order, "." and ".."
// included; errNoEnd after getdentsMax entries.
func (s *system) getdents(path string) ([]vfs.Dirent, error) {
	fd, err := s.p.Open(s.t, path, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer s.p.Close(s.t, fd)
	var out []vfs.Dirent
	buf := make([]byte, 1<<16)
	for {
		n, err := s.p.Getdents64(s.t, fd, buf)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		ds, err := vfs.ParseDirents(buf[:n])
		if err != nil {
			return nil, err
		}
		if out = append(out, ds...); len(out) > getdentsMax {
			return nil, errNoEnd
		}
	}
	return out, nil
}

// inode returns the inode at path (not following a trailing symlink)
// without keeping a reference: the filesystems keep linked inodes in
// memory.
func (s *system) inode(path string) (*vfs.Inode, error) {
	d, err := s.p.LookupDentry(s.t, path, false)
	if err != nil {
		return nil, err
	}
	defer dcache.Dput(s.t, d)
	return d.Inode(), nil
}

// dropCaches forgets the unused dentries below the directory at path (as
// echo 2 > /proc/sys/vm/drop_caches would), so that lookups reach the
// filesystem again.
func (s *system) dropCaches(path string) error {
	inode, err := s.inode(path)
	if err != nil {
		return err
	}
	vfs.ShrinkDcacheInode(s.t, inode)
	return nil
}

// checkDir runs the filesystem's directory checker on the directory at
// path (nothing for memfs).
func (s *system) checkDir(path string) error {
	inode, err := s.inode(path)
	if err != nil {
		return err
	}
	return checkInode(s.t, inode)
}

// checkInode runs CheckDir of the inode's filesystem.
func checkInode(t *kernel.Task, inode *vfs.Inode) error {
	switch inode.SB().Type {
	case f2fs.Type:
		if err := f2fs.CheckDir(t, f2fs.F2FS_I(inode)); err != nil {
			return fmt.Errorf("%w\n%s", err, f2fs.DumpDir(t, f2fs.F2FS_I(inode)))
		}
	case ext4.Type:
		if err := ext4.CheckDir(t, ext4.EXT4_I(inode)); err != nil {
			return fmt.Errorf("%w\n%s", err, ext4.DumpDir(t, ext4.EXT4_I(inode)))
		}
	}
	return nil
}

// noBugs fails when the machine recorded a BUG or KASAN report.
func (s *system) noBugs(tb testing.TB) {
	tb.Helper()
	if n := s.k.Bugs.Len(); n != 0 {
		tb.Fatalf("%s: %d BUG reports: %v", s.cfg, n, s.k.Bugs.All())
	}
}
