package memfs_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/memfs"
	"github.com/vfslab/vfslab/vfs"
)

var (
	long255 = strings.Repeat("x", 255)
	long256 = strings.Repeat("y", 256)
)

func genComp(t *rapid.T, label string) string {
	switch k := rapid.IntRange(0, 99).Draw(t, label+"k"); {
	case k < 88:
		return rapid.SampledFrom([]string{"a", "b", "c", "d"}).Draw(t, label)
	case k < 92:
		return "."
	case k < 97:
		return ".."
	case k < 98:
		return long255
	default:
		return long256
	}
}

// existing returns a path of the model's namespace, dirs only if dirs.
func (s *sysState) existing(t *rapid.T, label string, dirs bool) string {
	var paths []string
	for p, st := range s.m.tree() {
		if !dirs || st.Mode&vfs.S_IFMT == vfs.S_IFDIR {
			paths = append(paths, p)
		}
	}
	// Deepest first: rapid favours the first choices.
	sort.Slice(paths, func(i, j int) bool {
		di, dj := strings.Count(paths[i], "/"), strings.Count(paths[j], "/")
		if di != dj {
			return di > dj
		}
		return paths[i] < paths[j]
	})
	return rapid.SampledFrom(paths).Draw(t, label)
}

// genPath draws a path: mostly one that exists in the model (for ops on
// existing names) or a new name in an existing directory (for ops that
// create), sometimes relative or with a trailing slash, and otherwise a
// random one with the odd malformed path.
func (s *sysState) genPath(t *rapid.T, label string, create bool) string {
	k := rapid.IntRange(0, 9).Draw(t, label+"kind")
	if k >= 8 {
		return genPath(t, label)
	}
	if k >= 6 {
		create = !create
	}
	var p string
	if create {
		p = strings.TrimSuffix(s.existing(t, label+"dir", true), "/") + "/" + genComp(t, label+"new")
	} else {
		p = s.existing(t, label+"base", false)
	}
	if p != "/" && rapid.IntRange(0, 2).Draw(t, label+"rel") == 2 {
		p = strings.TrimPrefix(p, "/")
	}
	if rapid.IntRange(0, 9).Draw(t, label+"tslash") == 9 {
		p += "/"
	}
	return p
}

func genPath(t *rapid.T, label string) string {
	switch k := rapid.IntRange(0, 199).Draw(t, label+"kind"); {
	case k < 2:
		return ""
	case k < 4:
		return "/"
	case k < 5:
		return strings.Repeat("a/", 2048)
	}
	n := rapid.IntRange(1, 3).Draw(t, label+"n")
	var b strings.Builder
	if rapid.Bool().Draw(t, label+"abs") {
		b.WriteString("/")
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString("/")
			if rapid.IntRange(0, 9).Draw(t, label+"dbl") == 0 {
				b.WriteString("/")
			}
		}
		b.WriteString(genComp(t, fmt.Sprintf("%s%d", label, i)))
	}
	if rapid.IntRange(0, 9).Draw(t, label+"slash") == 0 {
		b.WriteString("/")
	}
	return b.String()
}

// errName renders an error for comparison; a BUG report fails the test.
func errName(t *rapid.T, err error) string {
	if err == nil {
		return ""
	}
	if b, ok := kernel.AsBug(err); ok {
		t.Fatalf("BUG: %v", b)
	}
	if e, ok := errno.Of(err); ok {
		return errno.Name(e)
	}
	t.Fatalf("not an errno: %v", err)
	return ""
}

type sysState struct {
	k    *kernel.Kernel
	task *kernel.Task
	sys  *vfs.System
	p    *vfs.Proc
	m    *model
}

func newSysState(t *rapid.T) *sysState {
	k := kernel.New()
	task := k.NewTask("prop")
	task.EnableCounting()
	sys, p, err := memfs.Boot(task, vfs.Config{Dcache: dcache.Config[vfs.Inode]{HashShift: 8, MaxUnused: rapid.SampledFrom([]int{-1, 4, 64}).Draw(t, "maxUnused")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &sysState{k: k, task: task, sys: sys, p: p, m: newModel()}
}

// outcomes, when not nil, counts each operation's outcomes (a coverage
// aid for whoever changes the generators).
var outcomes map[string]int

func (s *sysState) check(t *rapid.T, what string, want, got any) {
	if outcomes != nil {
		op, _, _ := strings.Cut(what, "(")
		switch w := want.(type) {
		case string:
			outcomes[op+" "+w]++
		case res:
			outcomes[op+" "+w.Err]++
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("%s: model vs vfs (-want +got):\n%s", what, d)
	}
}

type res struct {
	N    int64
	Err  string
	Data string
}

func (s *sysState) pickFd(t *rapid.T) int {
	var open []int
	for i := len(s.m.fds) - 1; i >= 0; i-- {
		if s.m.fds[i] != nil {
			open = append(open, i)
		}
	}
	if len(open) == 0 || rapid.IntRange(0, 9).Draw(t, "badfd") == 0 {
		return rapid.SampledFrom([]int{-1, 7, 100}).Draw(t, "fd")
	}
	return rapid.SampledFrom(open).Draw(t, "fd")
}

func genData(t *rapid.T) []byte {
	n := rapid.SampledFrom([]int{0, 1, 5, 100, 5000}).Draw(t, "len")
	b := make([]byte, n)
	c := byte(rapid.IntRange('A', 'Z').Draw(t, "byte"))
	for i := range b {
		b[i] = c + byte(i%7)
	}
	return b
}

func (s *sysState) actions() map[string]func(*rapid.T) {
	task, p, m := s.task, s.p, s.m
	return map[string]func(*rapid.T){
		"open": func(t *rapid.T) {
			path := s.genPath(t, "path", rapid.IntRange(0, 2).Draw(t, "new") != 2)
			flags := rapid.SampledFrom([]int{vfs.O_RDWR, vfs.O_RDONLY, vfs.O_WRONLY, 3}).Draw(t, "acc")
			if rapid.IntRange(0, 2).Draw(t, "creat") != 2 {
				flags |= vfs.O_CREAT
			}
			for _, f := range []int{vfs.O_EXCL, vfs.O_TRUNC, vfs.O_DIRECTORY, vfs.O_NOFOLLOW, vfs.O_APPEND} {
				if rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("f%o", f)) == 0 {
					flags |= f
				}
			}
			mode := uint32(rapid.SampledFrom([]int{0o644, 0o600, 0o4755}).Draw(t, "mode"))
			wfd, werr := m.open(path, flags, mode)
			gfd, gerr := p.Open(task, path, flags, mode)
			s.check(t, fmt.Sprintf("open(%q, %#o)", path, flags), res{N: int64(wfd), Err: errName(t, werr)}, res{N: int64(gfd), Err: errName(t, gerr)})
		},
		"close": func(t *rapid.T) {
			fd := s.pickFd(t)
			s.check(t, fmt.Sprintf("close(%d)", fd), errName(t, m.close(fd)), errName(t, p.Close(task, fd)))
		},
		"read": func(t *rapid.T) {
			fd := s.pickFd(t)
			n := rapid.SampledFrom([]int{0, 3, 100, 9000}).Draw(t, "n")
			want, werr := m.read(fd, n)
			buf := make([]byte, n)
			k, gerr := p.Read(task, fd, buf)
			s.check(t, fmt.Sprintf("read(%d, %d)", fd, n), res{N: int64(len(want)), Err: errName(t, werr), Data: string(want)}, res{N: int64(k), Err: errName(t, gerr), Data: string(buf[:max(k, 0)])})
		},
		"pread": func(t *rapid.T) {
			fd := s.pickFd(t)
			n := rapid.SampledFrom([]int{0, 3, 100, 9000}).Draw(t, "n")
			off := int64(rapid.SampledFrom([]int{-1, 0, 2, 4095, 4097, 20000}).Draw(t, "off"))
			want, werr := m.pread(fd, n, off)
			buf := make([]byte, n)
			k, gerr := p.Pread(task, fd, buf, off)
			s.check(t, fmt.Sprintf("pread(%d, %d, %d)", fd, n, off), res{N: int64(len(want)), Err: errName(t, werr), Data: string(want)}, res{N: int64(k), Err: errName(t, gerr), Data: string(buf[:max(k, 0)])})
		},
		"write": func(t *rapid.T) {
			fd := s.pickFd(t)
			b := genData(t)
			wn, werr := m.write(fd, b)
			gn, gerr := p.Write(task, fd, b)
			s.check(t, fmt.Sprintf("write(%d, %d bytes)", fd, len(b)), res{N: int64(wn), Err: errName(t, werr)}, res{N: int64(gn), Err: errName(t, gerr)})
		},
		"pwrite": func(t *rapid.T) {
			fd := s.pickFd(t)
			b := genData(t)
			off := int64(rapid.SampledFrom([]int{-1, 0, 2, 4095, 4097, 20000}).Draw(t, "off"))
			wn, werr := m.pwrite(fd, b, off)
			gn, gerr := p.Pwrite(task, fd, b, off)
			s.check(t, fmt.Sprintf("pwrite(%d, %d bytes, %d)", fd, len(b), off), res{N: int64(wn), Err: errName(t, werr)}, res{N: int64(gn), Err: errName(t, gerr)})
		},
		"lseek": func(t *rapid.T) {
			fd := s.pickFd(t)
			off := int64(rapid.SampledFrom([]int{-5, 0, 1, 3, 100, 5000}).Draw(t, "off"))
			whence := rapid.IntRange(0, 5).Draw(t, "whence")
			wp, werr := m.lseek(fd, off, whence)
			gp, gerr := p.Lseek(task, fd, off, whence)
			if werr != nil {
				wp = 0
			}
			if gerr != nil {
				gp = 0
			}
			s.check(t, fmt.Sprintf("lseek(%d, %d, %d)", fd, off, whence), res{N: wp, Err: errName(t, werr)}, res{N: gp, Err: errName(t, gerr)})
		},
		"getdents": func(t *rapid.T) {
			fd := s.pickFd(t)
			size := rapid.SampledFrom([]int{0, 16, 24, 40, 64, 100, 4096}).Draw(t, "size")
			want, wn, werr := m.getdents(fd, size)
			buf := make([]byte, size)
			gn, gerr := p.Getdents64(task, fd, buf)
			var got []mDirent
			if gerr == nil {
				ds, err := vfs.ParseDirents(buf[:gn])
				if err != nil {
					t.Fatalf("bad dirents: %v", err)
				}
				for _, d := range ds {
					got = append(got, mDirent{Name: d.Name, Ino: d.Ino, Off: d.Off, Type: d.Type})
				}
			}
			s.check(t, fmt.Sprintf("getdents(%d, %d)", fd, size), res{N: int64(wn), Err: errName(t, werr)}, res{N: int64(gn), Err: errName(t, gerr)})
			s.check(t, fmt.Sprintf("getdents(%d, %d) records", fd, size), want, got)
		},
		"fstat": func(t *rapid.T) {
			fd := s.pickFd(t)
			var want mStat
			f, werr := m.fd(fd)
			if werr == nil {
				want = statOf(f.node)
			}
			st, gerr := p.Fstat(task, fd)
			got := mStat{Ino: st.Ino, Mode: st.Mode, Nlink: st.Nlink, Size: st.Size}
			s.check(t, fmt.Sprintf("fstat(%d)", fd), res{Err: errName(t, werr)}, res{Err: errName(t, gerr)})
			if werr == nil {
				s.check(t, fmt.Sprintf("fstat(%d)", fd), want, got)
			}
		},
		"mkdir": func(t *rapid.T) {
			path := s.genPath(t, "path", true)
			s.check(t, fmt.Sprintf("mkdir(%q)", path), errName(t, m.mkdir(path, 0o755)), errName(t, p.Mkdir(task, path, 0o755)))
		},
		"rmdir": func(t *rapid.T) {
			path := s.genPath(t, "path", false)
			s.check(t, fmt.Sprintf("rmdir(%q)", path), errName(t, m.rmdir(path)), errName(t, p.Rmdir(task, path)))
		},
		"unlink": func(t *rapid.T) {
			path := s.genPath(t, "path", false)
			s.check(t, fmt.Sprintf("unlink(%q)", path), errName(t, m.unlink(path)), errName(t, p.Unlink(task, path)))
		},
		"rename": func(t *rapid.T) {
			from, to := s.genPath(t, "from", false), s.genPath(t, "to", rapid.Bool().Draw(t, "tonew"))
			flags := uint32(rapid.SampledFrom([]int{0, vfs.RENAME_EXCHANGE, vfs.RENAME_NOREPLACE, 0, vfs.RENAME_WHITEOUT, 3, 5, 6, 7}).Draw(t, "flags"))
			if rapid.IntRange(0, 19).Draw(t, "badflags") == 0 {
				flags |= 8
			}
			s.check(t, fmt.Sprintf("rename(%q, %q, %d)", from, to, flags), errName(t, m.rename(from, to, flags)), errName(t, p.Rename(task, from, to, flags)))
		},
		"link": func(t *rapid.T) {
			from, to := s.genPath(t, "from", false), s.genPath(t, "to", true)
			s.check(t, fmt.Sprintf("link(%q, %q)", from, to), errName(t, m.link(from, to)), errName(t, p.Link(task, from, to)))
		},
		"symlink": func(t *rapid.T) {
			target, path := s.genPath(t, "target", false), s.genPath(t, "path", true)
			s.check(t, fmt.Sprintf("symlink(%q, %q)", target, path), errName(t, m.symlink(target, path)), errName(t, p.Symlink(task, target, path)))
		},
		"readlink": func(t *rapid.T) {
			path := s.genPath(t, "path", false)
			n := rapid.SampledFrom([]int{0, 1, 4, 100, 5000}).Draw(t, "n")
			want, werr := m.readlink(path, n)
			buf := make([]byte, n)
			k, gerr := p.Readlink(task, path, buf)
			s.check(t, fmt.Sprintf("readlink(%q, %d)", path, n), res{N: int64(len(want)), Err: errName(t, werr), Data: want}, res{N: int64(k), Err: errName(t, gerr), Data: string(buf[:max(k, 0)])})
		},
		"stat": func(t *rapid.T) {
			path := s.genPath(t, "path", false)
			follow := rapid.Bool().Draw(t, "follow")
			want, werr := m.stat(path, follow)
			var st vfs.Stat
			var gerr error
			if follow {
				st, gerr = p.Stat(task, path)
			} else {
				st, gerr = p.Lstat(task, path)
			}
			got := mStat{Ino: st.Ino, Mode: st.Mode, Nlink: st.Nlink, Size: st.Size}
			s.check(t, fmt.Sprintf("stat(%q, follow=%v)", path, follow), res{Err: errName(t, werr)}, res{Err: errName(t, gerr)})
			if werr == nil {
				s.check(t, fmt.Sprintf("stat(%q, follow=%v)", path, follow), want, got)
			}
		},
	}
}

// realTree lists the real namespace with getdents and lstat.
func (s *sysState) realTree(t *rapid.T) map[string]mStat {
	out := map[string]mStat{}
	var rec func(path string)
	rec = func(path string) {
		st, err := s.p.Lstat(s.task, path)
		if err != nil {
			t.Fatalf("lstat(%q): %v", path, err)
		}
		out[path] = mStat{Ino: st.Ino, Mode: st.Mode, Nlink: st.Nlink, Size: st.Size}
		if st.Mode&vfs.S_IFMT != vfs.S_IFDIR {
			return
		}
		fd, err := s.p.Open(s.task, path, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		if err != nil {
			t.Fatalf("open(%q): %v", path, err)
		}
		defer s.p.Close(s.task, fd)
		buf := make([]byte, 1024)
		for {
			n, err := s.p.Getdents64(s.task, fd, buf)
			if err != nil {
				t.Fatalf("getdents(%q): %v", path, err)
			}
			if n == 0 {
				break
			}
			ds, _ := vfs.ParseDirents(buf[:n])
			for _, d := range ds {
				if d.Name != "." && d.Name != ".." {
					rec(strings.TrimSuffix(path, "/") + "/" + d.Name)
				}
			}
		}
	}
	rec("/")
	return out
}

func (s *sysState) compareTrees(t *rapid.T) {
	s.check(t, "namespace", s.m.tree(), s.realTree(t))
}

// finish closes everything and checks that nothing leaked: no BUG, every
// dentry but the root can be shrunk, every inode still allocated is
// linked.
func (s *sysState) finish(t *rapid.T) {
	s.compareTrees(t)
	for fd, f := range s.m.fds {
		if f != nil {
			if err := s.p.Close(s.task, fd); err != nil {
				t.Fatalf("close(%d): %v", fd, err)
			}
		}
	}
	s.p.Exit(s.task)
	dcache.ShrinkDcacheSB(s.task, s.sys.Dcache)
	if st := s.sys.Dcache.Stats(); st.Dentries != 1 {
		t.Fatalf("dentries left after shrinking: %v\n%s", st, dcache.DumpTree(s.task, s.sys.RootMount().Root))
	}
	linked := len(s.m.tree())
	seen := map[uint64]bool{}
	for _, st := range s.m.tree() {
		if seen[st.Ino] {
			linked--
		}
		seen[st.Ino] = true
	}
	if live := s.task.Stats.Site(vfs.InodeKmemCache().Site()).Live(); live != int64(linked) {
		t.Fatalf("%d inodes allocated, %d linked", live, linked)
	}
	if n := s.k.Bugs.Len(); n != 0 {
		t.Fatalf("BUGs: %v", s.k.Bugs.All())
	}
}

// run draws a sequence of syscalls (longer than rapid's state machine
// steps, so that trees grow) and checks each against the model, and the
// whole namespace every ten steps.
func (s *sysState) run(t *rapid.T, maxSteps int, acts map[string]func(*rapid.T)) {
	// Weighted, the ones that grow the tree first (rapid favours the
	// first choices).
	weights := []struct {
		op string
		w  int
	}{{"open", 5}, {"mkdir", 4}, {"write", 4}, {"symlink", 2}, {"rename", 3}, {"link", 2},
		{"read", 2}, {"pread", 1}, {"pwrite", 2}, {"lseek", 1}, {"getdents", 2}, {"fstat", 1},
		{"stat", 1}, {"readlink", 1}, {"unlink", 2}, {"rmdir", 2}, {"close", 2}}
	var names []string
	for _, w := range weights {
		if acts[w.op] == nil {
			panic("no action " + w.op)
		}
		for range w.w {
			names = append(names, w.op)
		}
	}
	if len(weights) != len(acts) {
		panic("weights do not cover every action")
	}
	steps := rapid.IntRange(maxSteps/4, maxSteps).Draw(t, "steps")
	for i := 0; i < steps; i++ {
		acts[rapid.SampledFrom(names).Draw(t, "op")](t)
		if i%10 == 9 {
			s.compareTrees(t)
		}
	}
}

func TestSyscallsAgainstModel(t *testing.T) {
	maxSteps := 400
	if testing.Short() {
		maxSteps = 80
	}
	outcomes = map[string]int{}
	defer func() { outcomes = nil }()
	rapid.Check(t, func(t *rapid.T) {
		s := newSysState(t)
		s.run(t, maxSteps, s.actions())
		s.finish(t)
	})
	if t.Failed() || testing.Short() {
		return
	}
	// The generators must reach the interesting answers, or the test
	// proves little: each of these came up dozens of times per run when
	// the generators were tuned.
	for _, want := range []string{
		"open ", "open EEXIST", "open EISDIR", "open ENOENT", "open ENOTDIR", "open ELOOP",
		"open ENAMETOOLONG", "open EINVAL", "mkdir ", "mkdir EEXIST", "mkdir ENOENT",
		"rename ", "rename EINVAL", "rename EBUSY", "rename EEXIST", "rename ENOENT",
		"rmdir ", "rmdir ENOTEMPTY", "rmdir ENOTDIR", "rmdir EBUSY", "unlink ", "unlink EISDIR",
		"unlink ENOENT", "link ", "link EPERM", "link EEXIST", "symlink ", "readlink ",
		"readlink EINVAL", "getdents ", "getdents ENOTDIR", "read ", "write ", "pwrite ",
		"lseek ", "stat ", "close ", "close EBADF", "fstat ",
	} {
		if outcomes[want] == 0 {
			t.Errorf("no %q outcome in %d checks: the generators missed it", want, 100)
		}
	}
	t.Logf("outcomes: %v", outcomes)
}
