package shell

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/vfs"
)

// The kernel's fault-injection interface in the machine's /sys and /proc
// (Documentation/fault-injection/fault-injection.rst), over the kernel's
// failslab (kmem.FailslabAttr, kernel.Kernel.Failslab) and the task's
// fail_nth (kmem.Ctx.FailNth):
//
//   - /sys/kernel/debug/failslab/{probability,interval,times,space,
//     verbose,ignore-gfp-wait,cache-filter}: debugfs attributes as
//     lib/fault-inject.c and mm/failslab.c create them (unsigned longs,
//     the signed atomic_t times and space, and Y/N bools);
//   - /sys/kernel/slab/CACHE/failslab: SLAB_FAILSLAB of one cache, the
//     caches cache-filter lets fail;
//   - /proc/self/fail-nth and /proc/thread-self/fail-nth: write N and the
//     Nth fault-injection point of the task fails (proc_fail_nth_write,
//     kstrtouint base 0); a read is the points left, 0 once injected.
//
// The shell's commands all run on the machine's one task (the model does
// not fork), so a fail-nth that `echo N > /proc/self/fail-nth` wrote
// counts the fault-injection points of the commands that follow. In Linux
// a forked child starts with fail_nth 0 (copy_process), so a real shell
// script gets this only for commands run in the writing process itself
// (the documentation's example is a C program that writes its own
// fail-nth around each syscall). The verbose, ratelimit, task-filter,
// require/reject-start/end and stacktrace-depth files are not modelled.

// failslabDir is failslab's debugfs directory.
const failslabDir = "/sys/kernel/debug/failslab"

// failslabFiles are the files of failslabDir, in ls order.
var failslabFiles = []string{"cache-filter", "ignore-gfp-wait", "interval", "probability", "space", "times", "verbose"}

// procFile is one file of the machine's procfs, sysfs or debugfs: read
// renders its contents, write stores what one write(2) wrote. The caller
// holds the machine's lock for both.
type procFile struct {
	read  func() string
	write func(b []byte) error
	// access, when set, is the open's permission check (write: opened
	// for writing): EACCES for a file the process may not open so.
	access func(write bool) error
}

// faultFile returns the fault-injection file at p, if p is one.
func (m *Machine) faultFile(p string) (procFile, bool) {
	fs := m.k.Failslab
	ulong := func(get func() uint64, set func(uint64)) procFile {
		return procFile{
			read: func() string { return strconv.FormatUint(get(), 10) + "\n" },
			write: func(b []byte) error {
				v, err := strconv.ParseUint(strings.TrimSuffix(string(b), "\n"), 0, 64)
				if err != nil {
					return errno.EINVAL
				}
				set(v)
				return nil
			},
		}
	}
	signed := func(get func() int64, set func(int64)) procFile {
		return procFile{
			read: func() string { return strconv.FormatInt(get(), 10) + "\n" },
			write: func(b []byte) error {
				v, err := strconv.ParseInt(strings.TrimSuffix(string(b), "\n"), 0, 32)
				if err != nil {
					return errno.EINVAL
				}
				set(v)
				return nil
			},
		}
	}
	boolean := func(get func() bool, set func(bool)) procFile {
		return procFile{
			read: func() string {
				if get() {
					return "Y\n"
				}
				return "N\n"
			},
			write: func(b []byte) error {
				v, ok := kstrtobool(b)
				if !ok {
					return errno.EINVAL
				}
				set(v)
				return nil
			},
		}
	}
	if name, ok := strings.CutPrefix(p, failslabDir+"/"); ok {
		switch name {
		case "probability":
			return ulong(fs.Probability, fs.SetProbability), true
		case "interval":
			return ulong(fs.Interval, fs.SetInterval), true
		case "verbose":
			return ulong(fs.Verbose, fs.SetVerbose), true
		case "times":
			return signed(fs.Times, fs.SetTimes), true
		case "space":
			return signed(fs.Space, fs.SetSpace), true
		case "ignore-gfp-wait":
			return boolean(fs.IgnoreGFPWait, fs.SetIgnoreGFPWait), true
		case "cache-filter":
			return boolean(fs.CacheFilter, fs.SetCacheFilter), true
		}
		return procFile{}, false
	}
	if rest, ok := strings.CutPrefix(p, "/sys/kernel/slab/"); ok {
		cache, file, ok := strings.Cut(rest, "/")
		if !ok || file != "failslab" || !knownCache(cache) {
			return procFile{}, false
		}
		return procFile{
			read: func() string {
				if fs.CacheFailslab(cache) {
					return "1\n"
				}
				return "0\n"
			},
			write: func(b []byte) error {
				// slab_attr_store's failslab_store: "1" sets, anything
				// else starting with a digit clears.
				switch s := strings.TrimSuffix(string(b), "\n"); s {
				case "1":
					fs.SetCacheFailslab(cache, true)
				case "0":
					fs.SetCacheFailslab(cache, false)
				default:
					return errno.EINVAL
				}
				return nil
			},
		}, true
	}
	switch p {
	case "/proc/self/fail-nth", "/proc/thread-self/fail-nth":
		return procFile{
			read: func() string { return m.t.ProcFailNthRead() },
			write: func(b []byte) error {
				_, err := m.t.ProcFailNthWrite(b)
				return err
			},
		}, true
	}
	return procFile{}, false
}

// knownCache reports whether a cache of that name exists: one of the
// model's kmem caches (their names are accounting sites, which
// kmem.LookupSite finds, kmalloc call sites among them), or a kmalloc-N
// cache.
func knownCache(name string) bool {
	if _, ok := kmem.LookupSite(name); ok {
		return true
	}
	for n := 8; n <= kmem.KmallocMaxCacheSize; n <<= 1 {
		if kmem.KmallocCacheName(n) == name {
			return true
		}
	}
	return name == "kmalloc-96" || name == "kmalloc-192"
}

// kstrtobool is lib/kstrtox.c kstrtobool: y/Y/1/on true, n/N/0/off false.
func kstrtobool(b []byte) (bool, bool) {
	s := strings.TrimSuffix(string(b), "\n")
	switch {
	case s == "":
		return false, false
	case s[0] == 'y' || s[0] == 'Y' || s[0] == '1':
		return true, true
	case s[0] == 'n' || s[0] == 'N' || s[0] == '0':
		return false, true
	case strings.EqualFold(s, "on"):
		return true, true
	case strings.EqualFold(s, "off"):
		return false, true
	}
	return false, false
}

// faultDirents lists failslabDir and the directories above it, or
// reports that p is none of them.
func faultDirents(p string) ([]vfs.Dirent, bool) {
	out := []vfs.Dirent{{Name: ".", Type: vfs.DT_DIR, Ino: 1}, {Name: "..", Type: vfs.DT_DIR, Ino: 1}}
	var names []string
	typ := uint8(vfs.DT_DIR)
	switch p {
	case "/sys/kernel":
		names = []string{"debug", "slab"}
	case "/sys/kernel/debug":
		names = []string{"failslab"}
	case failslabDir:
		names, typ = append([]string(nil), failslabFiles...), vfs.DT_REG
	default:
		return nil, false
	}
	sort.Strings(names)
	for i, n := range names {
		out = append(out, vfs.Dirent{Name: n, Type: typ, Ino: uint64(10 + i)})
	}
	return out, true
}

// faultParentDirent is the entry a real directory of the machine lists
// for the fault-injection tree below it: /sys lists kernel.
func faultParentDirent(p string) (vfs.Dirent, bool) {
	if p == "/sys" {
		return vfs.Dirent{Name: "kernel", Type: vfs.DT_DIR, Ino: 9}, true
	}
	return vfs.Dirent{}, false
}

// faultStat is stat(2) of the fault-injection files and their
// directories.
func (m *Machine) faultStat(p string) (vfs.Stat, bool) {
	switch p {
	case "/sys/kernel", "/sys/kernel/debug", failslabDir, "/sys/kernel/slab", "/proc/self", "/proc/thread-self":
		return vfs.Stat{Mode: vfs.S_IFDIR | 0o755, Nlink: 2, Ino: 4}, true
	}
	if rest, ok := strings.CutPrefix(p, "/sys/kernel/slab/"); ok && !strings.Contains(rest, "/") && knownCache(rest) {
		return vfs.Stat{Mode: vfs.S_IFDIR | 0o755, Nlink: 2, Ino: 5}, true
	}
	if _, ok := m.faultFile(p); ok {
		mode := uint32(0o600)
		if strings.HasPrefix(p, "/proc/") {
			mode = 0o644
		}
		return vfs.Stat{Mode: vfs.S_IFREG | mode, Nlink: 1, Ino: 6}, true
	}
	return vfs.Stat{}, false
}

// procOpenFile is a procFile opened by a redirection or a command: its
// contents are rendered at open; writes are line-buffered so that `echo N`
// is one write(2) of "N\n" (mvdan's echo writes the newline apart), and
// each line is one store.
type procOpenFile struct {
	m       *Machine
	f       procFile
	r       *strings.Reader
	pending []byte
	// errw, when set, is where a failed store is reported: the shell's
	// builtins (echo, printf) ignore their write errors, which a real
	// shell prints as "write error".
	errw io.Writer
}

func (m *Machine) openProcFile(f procFile) *procOpenFile {
	m.mu.Lock()
	text := f.read()
	m.mu.Unlock()
	return &procOpenFile{m: m, f: f, r: strings.NewReader(text)}
}

func (f *procOpenFile) Read(b []byte) (int, error) { return f.r.Read(b) }

func (f *procOpenFile) Write(b []byte) (int, error) {
	f.pending = append(f.pending, b...)
	for {
		i := bytes.IndexByte(f.pending, '\n')
		if i < 0 {
			return len(b), nil
		}
		err := f.store(f.pending[:i+1])
		f.pending = f.pending[i+1:]
		if err != nil {
			f.pending = nil
			if f.errw != nil {
				fmt.Fprintf(f.errw, "sh: write error: %s\n", strerror(err))
			}
			return 0, err
		}
	}
}

func (f *procOpenFile) store(b []byte) error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	return f.f.write(b)
}

// Close stores what is left without a newline (printf N > fail-nth).
func (f *procOpenFile) Close() error {
	if len(f.pending) == 0 {
		return nil
	}
	err := f.store(f.pending)
	f.pending = nil
	if err != nil {
		if f.errw != nil {
			fmt.Fprintf(f.errw, "sh: write error: %s\n", strerror(err))
		}
		return fmt.Errorf("write error: %w", errMsg{err})
	}
	return nil
}
