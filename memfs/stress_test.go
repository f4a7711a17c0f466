package memfs_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/memfs"
	"github.com/vfslab/vfslab/vfs"
)

// TestConcurrentSyscalls lets several tasks, each a process, run random
// syscalls on one small namespace (half of it encrypted, its key removed
// and added back meanwhile), then checks that every error was a Linux
// errno, no BUG was raised, link counts match the tree, and every dentry
// and unlinked inode was released. Run it with -race.
func TestConcurrentSyscalls(t *testing.T) {
	workers, steps := 4, 3000
	if testing.Short() {
		steps = 600
	}
	k := kernel.New()
	setup := k.NewTask("setup")
	setup.EnableCounting()
	sys, p0, err := memfs.Boot(setup, vfs.Config{Dcache: dcache.Config[vfs.Inode]{HashShift: 6, MaxUnused: 32}}, &memfs.Options{TestFscrypt: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"/a", "/b", "/e"} {
		if err := p0.Mkdir(setup, d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	id, err := p0.EncryptDir(setup, "/e", key(9), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"/a/x", "/a/y", "/b/x", "/b/d", "/b/d/z", "/e/x", "/e/y", "/e/d", "/e/d/z", "/a/d/../x", "/l"}
	tasks := make([]*kernel.Task, workers)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	var okOps [14]int
	for w := 0; w < workers; w++ {
		tasks[w] = k.NewTask(fmt.Sprintf("worker%d", w))
		tasks[w].EnableCounting()
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			t := tasks[w]
			p := sys.NewProc(t, nil)
			defer p.Exit(t)
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			pick := func() string { return paths[rng.IntN(len(paths))] }
			var fds []int
			for i := 0; i < steps; i++ {
				var err error
				op := rng.IntN(14)
				switch op {
				case 0:
					var fd int
					if fd, err = p.Open(t, pick(), vfs.O_CREAT|vfs.O_RDWR, 0o644); err == nil {
						fds = append(fds, fd)
					}
				case 1:
					if len(fds) > 0 {
						err = p.Close(t, fds[0])
						fds = fds[1:]
					}
				case 2:
					if len(fds) > 0 {
						_, err = p.Write(t, fds[len(fds)-1], []byte("some data"))
					}
				case 3:
					if len(fds) > 0 {
						_, err = p.Pread(t, fds[len(fds)-1], make([]byte, 64), 0)
					}
				case 4:
					err = p.Mkdir(t, pick(), 0o755)
				case 5:
					err = p.Rmdir(t, pick())
				case 6:
					err = p.Unlink(t, pick())
				case 7:
					err = p.Rename(t, pick(), pick(), uint32(rng.IntN(3)))
				case 8:
					err = p.Link(t, pick(), pick())
				case 9:
					err = p.Symlink(t, pick(), pick())
				case 10:
					_, err = p.Stat(t, pick())
				case 11:
					var fd int
					if fd, err = p.Open(t, pickDir(rng), vfs.O_RDONLY|vfs.O_DIRECTORY, 0); err == nil {
						_, err = p.Getdents64(t, fd, make([]byte, 512))
						p.Close(t, fd)
					}
				case 12:
					if w == 0 {
						fd, _ := p.Open(t, "/", vfs.O_RDONLY, 0)
						if rng.IntN(2) == 0 {
							_, err = p.RemoveEncryptionKey(t, fd, id)
						} else {
							_, err = p.AddEncryptionKey(t, fd, key(9))
						}
						p.Close(t, fd)
					}
				case 13:
					err = p.Truncate(t, pick(), int64(rng.IntN(10000)))
				}
				if err == nil {
					mu.Lock()
					okOps[op]++
					mu.Unlock()
				} else {
					if _, ok := errno.Of(err); !ok {
						mu.Lock()
						bad = append(bad, err.Error())
						mu.Unlock()
					}
				}
			}
			for _, fd := range fds {
				p.Close(t, fd)
			}
		}(w)
	}
	wg.Wait()
	t.Logf("successful calls by kind: %v", okOps)
	if len(bad) != 0 {
		t.Fatalf("%d non-errno errors, first: %s", len(bad), bad[0])
	}
	if n := k.Bugs.Len(); n != 0 {
		t.Fatalf("BUGs: %v", k.Bugs.All())
	}
	// Link counts against the tree (with the key present).
	fd, _ := p0.Open(setup, "/", vfs.O_RDONLY, 0)
	p0.AddEncryptionKey(setup, fd, key(9))
	p0.Close(setup, fd)
	checkLinks(t, p0, setup)
	p0.Exit(setup)
	dcache.ShrinkDcacheSB(setup, sys.Dcache)
	if st := sys.Dcache.Stats(); st.Dentries != 1 {
		t.Fatalf("dentries left: %v\n%s", st, dcache.DumpTree(setup, sys.RootMount().Root))
	}
	total := new(kmem.Stats)
	total.Merge(setup.Stats)
	for _, tk := range tasks {
		total.Merge(tk.Stats)
	}
	if live, linked := total.Site(vfs.InodeKmemCache().Site()).Live(), countInodes(t, sys, setup); live != linked {
		t.Fatalf("%d inodes allocated, %d linked", live, linked)
	}
}

func pickDir(rng *rand.Rand) string {
	return []string{"/", "/a", "/b", "/e", "/b/d", "/e/d"}[rng.IntN(6)]
}

// checkLinks walks the tree and checks every directory's and file's link
// count against the names found.
func checkLinks(t *testing.T, p *vfs.Proc, task *kernel.Task) {
	names := map[uint64]int{}
	nlink := map[uint64]uint32{}
	var visited []string
	var rec func(path string)
	rec = func(path string) {
		st, err := p.Lstat(task, path)
		if err != nil {
			t.Fatalf("lstat(%q): %v", path, err)
		}
		nlink[st.Ino] = st.Nlink
		visited = append(visited, fmt.Sprintf("%s=%d", path, st.Ino))
		if st.Mode&vfs.S_IFMT != vfs.S_IFDIR {
			names[st.Ino]++
			return
		}
		names[st.Ino] += 2 // its name (or the root's) and "."
		fd, err := p.Open(task, path, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		if err != nil {
			t.Fatalf("open(%q): %v", path, err)
		}
		defer p.Close(task, fd)
		buf := make([]byte, 4096)
		for {
			n, err := p.Getdents64(task, fd, buf)
			if err != nil || n == 0 {
				break
			}
			ds, _ := vfs.ParseDirents(buf[:n])
			for _, d := range ds {
				switch d.Name {
				case ".":
				case "..":
					if path != "/" {
						names[d.Ino]++
					}
				default:
					rec(strings.TrimSuffix(path, "/") + "/" + d.Name)
				}
			}
		}
	}
	rec("/")
	for ino, n := range names {
		if nlink[ino] != uint32(n) {
			t.Errorf("inode %d: nlink %d, %d names", ino, nlink[ino], n)
		}
	}
	if t.Failed() {
		t.Logf("visited: %v", visited)
		for _, dir := range []string{"/", "/a", "/b", "/e"} {
			d, err := p.LookupDentry(task, dir, false)
			if err != nil {
				continue
			}
			t.Logf("%s: %v names %q", dir, d.Inode(), memfs.DiskNames(d.Inode()))
			dcache.Dput(task, d)
		}
	}
}

// countInodes is the number of distinct inodes in the tree.
func countInodes(t *testing.T, sys *vfs.System, task *kernel.Task) int64 {
	p := sys.NewProc(task, nil)
	defer p.Exit(task)
	seen := map[uint64]bool{}
	var rec func(path string)
	rec = func(path string) {
		st, err := p.Lstat(task, path)
		if err != nil {
			t.Fatalf("lstat(%q): %v", path, err)
		}
		seen[st.Ino] = true
		if st.Mode&vfs.S_IFMT != vfs.S_IFDIR {
			return
		}
		fd, _ := p.Open(task, path, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		defer p.Close(task, fd)
		buf := make([]byte, 4096)
		for {
			n, err := p.Getdents64(task, fd, buf)
			if err != nil || n == 0 {
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
	return int64(len(seen))
}
