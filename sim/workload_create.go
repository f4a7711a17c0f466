package sim

import (
	"fmt"
	"strconv"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/fstest"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/vfs"
)

// The directory workloads of seeds 000 and 001 run on f2fs or ext4 mounted
// through the VFS: "create" is the seeds' file_creater program, "lookup"
// the lookups it is made of.

var (
	_ = Register(&Workload{
		Name: "create",
		Summary: "the seeds' program: create n files of 4 KiB (open O_RDWR|O_CREAT 0600, write, close) " +
			"in one fresh casefolded, encrypted directory; one operation is the whole run",
		Patch: f2fs.LookupPrealloc,
		Params: []Param{
			{Name: "fs", Default: "f2fs", Help: "f2fs or ext4", Range: OneOf("f2fs", "ext4")},
			{Name: "n", Default: "2000", Help: "files created per operation", Range: IntRange(1, maxCreateFiles)},
			{Name: "lookup_mode", Default: "auto", Help: "f2fs lookup_mode= mount option: auto, perf (hash only) or compat", Range: OneOf("auto", "perf", "compat")},
			{Name: "hashonly", Default: "false", Help: "the superblock's no-compat-fallback encoding flag (mkfs.f2fs -C utf8:hashonly)", Range: Bool},
			{Name: "casefold", Default: "true", Help: "casefold the directory (FS_CASEFOLD_FL)", Range: Bool},
			{Name: "encrypt", Default: "true", Help: "encrypt the directory (v2 policy, AES-256-XTS/AES-256-CTS, key present)", Range: Bool},
		},
		// Each create also encrypts the name (fname.c) and opens the new
		// file (fscrypt_file_open).
		Exercises: []*patch.Patch{fscrypt.FnameOnstackPatch, hooks.FileOpenPatch},
		MaxOps:    createMaxOps,
		Setup:     setupCreate,
	})
	_ = Register(&Workload{
		Name: "lookup",
		Summary: "look one name up in a casefolded, encrypted directory of `entries` names " +
			"(__f2fs_find_entry / __ext4_find_entry): a hashed hit or a miss that falls back to the linear search",
		Patch: f2fs.LookupPrealloc,
		Params: []Param{
			{Name: "fs", Default: "f2fs", Help: "f2fs or ext4", Range: OneOf("f2fs", "ext4")},
			{Name: "entries", Default: "1000", Help: "names in the directory (1000, 10000, 100000...)", Range: IntRange(1, maxLookupEntries)},
			{Name: "mode", Default: "miss", Help: "hit: existing names in another case (hashed); miss: absent names (linear fallback unless lookup_mode=perf)", Range: OneOf("hit", "miss")},
			{Name: "lookup_mode", Default: "auto", Help: "f2fs lookup_mode= for the lookups: auto, perf or compat", Range: OneOf("auto", "perf", "compat")},
			{Name: "casefold", Default: "true", Help: "casefold the directory", Range: Bool},
			{Name: "encrypt", Default: "true", Help: "encrypt the directory (key present)", Range: Bool},
		},
		// Each lookup encrypts the name it searches for (fname.c).
		Exercises: []*patch.Patch{fscrypt.FnameOnstackPatch},
		Setup:     setupLookup,
	})
)

// Sizes the directory workloads accept: every file a timed run creates
// stays until the next Reset (about 12 KiB of Go heap each, with its 4 KiB
// of data), and a lookup directory of 10^6 names takes about 350 MB.
const (
	maxCreateFiles   = 100000
	maxFilesPerRun   = 1 << 18
	maxLookupEntries = 1000000
)

// createMaxOps is how many operations (of n files each) one worker's timed
// run may hold so that a run holds at most maxFilesPerRun files.
func createMaxOps(params map[string]string, threads int) int {
	n, err := strconv.Atoi(params["n"])
	if err != nil || n < 1 {
		return 0
	}
	return maxFilesPerRun / (n * threads)
}

// dirParams are the parameters the directory workloads share.
type dirParams struct {
	fs                string
	lookupMode        f2fs.LookupMode
	hashonly          bool
	casefold, encrypt bool
}

func parseBool(env *Env, name string) (bool, error) {
	b, err := strconv.ParseBool(env.Param(name))
	if err != nil {
		return false, fmt.Errorf("bad %s %q: want true or false", name, env.Param(name))
	}
	return b, nil
}

func parseDirParams(env *Env, withHashonly bool) (dirParams, error) {
	var p dirParams
	var err error
	switch p.fs = env.Param("fs"); p.fs {
	case "f2fs", "ext4":
	default:
		return p, fmt.Errorf("bad fs %q: want f2fs or ext4", p.fs)
	}
	if p.lookupMode, err = f2fs.ParseLookupMode(env.Param("lookup_mode")); err != nil {
		return p, fmt.Errorf("bad lookup_mode %q: want auto, perf or compat", env.Param("lookup_mode"))
	}
	if withHashonly {
		if p.hashonly, err = parseBool(env, "hashonly"); err != nil {
			return p, err
		}
	}
	if p.casefold, err = parseBool(env, "casefold"); err != nil {
		return p, err
	}
	if p.encrypt, err = parseBool(env, "encrypt"); err != nil {
		return p, err
	}
	return p, nil
}

// dirSystem is a machine whose root is a fresh f2fs or ext4 (with the
// casefold feature when asked), with /w casefolded and encrypted as asked:
// the parent of the workloads' directories, which inherit both.
type dirSystem struct {
	sys   *vfs.System
	setup *kernel.Task
	p     *vfs.Proc
}

// workDir is where the directory workloads work.
const workDir = "/w"

func bootDirSystem(env *Env, p dirParams) (*dirSystem, error) {
	t := env.K.NewTask("setup")
	cfg := vfs.Config{Patches: env.Patches}
	var sys *vfs.System
	var proc *vfs.Proc
	var err error
	var setflags, casefoldFL uint32
	if p.fs == "f2fs" {
		setflags, casefoldFL = f2fs.FS_IOC_SETFLAGS, f2fs.FS_CASEFOLD_FL
		sys, proc, err = f2fs.Boot(t, cfg, &f2fs.Options{Casefold: p.casefold, LookupMode: p.lookupMode, NoCompatFallback: p.hashonly})
	} else {
		setflags, casefoldFL = ext4.FS_IOC_SETFLAGS, ext4.FS_CASEFOLD_FL
		// Enough inodes for every run's files.
		sys, proc, err = ext4.Boot(t, cfg, &ext4.Options{Casefold: p.casefold, NoCompatFallback: p.hashonly, InodesCount: 1 << 30})
	}
	if err != nil {
		t.Exit()
		return nil, err
	}
	ds := &dirSystem{sys: sys, setup: t, p: proc}
	if err := proc.Mkdir(t, workDir, 0o755); err != nil {
		ds.close()
		return nil, err
	}
	if p.casefold {
		fd, err := proc.Open(t, workDir, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		if err == nil {
			_, err = proc.Ioctl(t, fd, setflags, &casefoldFL)
			proc.Close(t, fd)
		}
		if err != nil {
			ds.close()
			return nil, fmt.Errorf("casefold %s: %w", workDir, err)
		}
	}
	if p.encrypt {
		if _, err := proc.EncryptDir(t, workDir, fstest.PlaintextStream("vfslab sim master key", 64), 0, 0); err != nil {
			ds.close()
			return nil, fmt.Errorf("encrypt %s: %w", workDir, err)
		}
	}
	return ds, nil
}

func (ds *dirSystem) close() {
	ds.p.Exit(ds.setup)
	ds.setup.Exit()
}

// createInst is the "create" workload's system.
type createInst struct {
	ds    *dirSystem
	n     int
	procs []*vfs.Proc
	tasks []*kernel.Task
	// made holds, per worker, the directories its operations made since
	// the last Reset (each worker appends to its own).
	made [][]string
}

func setupCreate(env *Env) (Instance, error) {
	p, err := parseDirParams(env, true)
	if err != nil {
		return nil, fmt.Errorf("create: %w", err)
	}
	n, err := strconv.Atoi(env.Param("n"))
	if err != nil || n < 1 {
		return nil, fmt.Errorf("create: bad n %q", env.Param("n"))
	}
	ds, err := bootDirSystem(env, p)
	if err != nil {
		return nil, fmt.Errorf("create: %w", err)
	}
	return &createInst{ds: ds, n: n}, nil
}

// Worker gives worker w a process of its own. Each operation makes a
// fresh directory /w/run-<w>-<k> (casefolded and encrypted by inheritance),
// changes into it and runs the seeds' loop: for each j < n,
// open("./j", O_RDWR|O_CREAT, 0600), write 4 KiB of zeros, close.
func (in *createInst) Worker(w int, t *kernel.Task) (func(int) error, error) {
	p := in.ds.sys.NewProc(t, nil)
	in.procs = append(in.procs, p)
	in.tasks = append(in.tasks, t)
	for len(in.made) <= w {
		in.made = append(in.made, nil)
	}
	buf := make([]byte, 4096)
	paths := make([]string, in.n)
	for j := range paths {
		paths[j] = "./" + strconv.Itoa(j)
	}
	runs := 0
	return func(i int) (err error) {
		defer t.Recover(&err)
		// A fresh directory per call: the runner may repeat i (its
		// calibration runs come first).
		runs++
		dir := fmt.Sprintf("%s/run-%d-%d", workDir, w, runs)
		if err := p.Mkdir(t, dir, 0o755); err != nil {
			return err
		}
		in.made[w] = append(in.made[w], dir)
		if err := p.Chdir(t, dir); err != nil {
			return err
		}
		for _, path := range paths {
			fd, err := p.Open(t, path, vfs.O_RDWR|vfs.O_CREAT, 0o600)
			if err != nil {
				return fmt.Errorf("open %s/%s: %w", dir, path, err)
			}
			if _, err := p.Write(t, fd, buf); err != nil {
				p.Close(t, fd)
				return err
			}
			if err := p.Close(t, fd); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// Reset implements Resetter: the setup process empties and removes the
// directories the operations made since the last Reset (a worker's
// process may still be in its last one, which rmdir allows), so that the
// files of one timed run at a time are kept, not those of every run.
func (in *createInst) Reset() error {
	t, p := in.ds.setup, in.ds.p
	for w, dirs := range in.made {
		for _, dir := range dirs {
			for j := 0; j < in.n; j++ {
				if err := p.Unlink(t, dir+"/"+strconv.Itoa(j)); err != nil && err != errno.ENOENT {
					return fmt.Errorf("unlink %s/%d: %w", dir, j, err)
				}
			}
			if err := p.Rmdir(t, dir); err != nil {
				return fmt.Errorf("rmdir %s: %w", dir, err)
			}
		}
		in.made[w] = dirs[:0]
	}
	return nil
}

// BytesPerOp is the data one run writes.
func (in *createInst) BytesPerOp() int64 { return int64(in.n) * 4096 }

func (in *createInst) Close() error {
	for i, p := range in.procs {
		p.Exit(in.tasks[i])
	}
	in.ds.close()
	return nil
}

// lookupInst is the "lookup" workload's system: one directory of entries
// names, searched with the filesystem's own lookup function.
type lookupInst struct {
	ds    *dirSystem
	dir   *vfs.Inode
	fs    string
	hit   bool
	n     int
	names [][]byte
}

func setupLookup(env *Env) (Instance, error) {
	p, err := parseDirParams(env, false)
	if err != nil {
		return nil, fmt.Errorf("lookup: %w", err)
	}
	n, err := strconv.Atoi(env.Param("entries"))
	if err != nil || n < 1 {
		return nil, fmt.Errorf("lookup: bad entries %q", env.Param("entries"))
	}
	in := &lookupInst{fs: p.fs, n: n}
	switch env.Param("mode") {
	case "hit":
		in.hit = true
	case "miss":
	default:
		return nil, fmt.Errorf("lookup: bad mode %q: want hit or miss", env.Param("mode"))
	}
	// Fill the directory with hashed lookups only (lookup_mode=perf), as
	// a remount would, then set the mode asked for.
	mode := p.lookupMode
	p.lookupMode = f2fs.LookupPerf
	ds, err := bootDirSystem(env, p)
	if err != nil {
		return nil, fmt.Errorf("lookup: %w", err)
	}
	in.ds = ds
	t, proc := ds.setup, ds.p
	dir := workDir + "/big"
	if err := proc.Mkdir(t, dir, 0o755); err != nil {
		ds.close()
		return nil, err
	}
	// One file and n-1 hard links to it: the names are what matters, and
	// links need no per-file key.
	first := dir + "/file-000000"
	fd, err := proc.Open(t, first, vfs.O_RDWR|vfs.O_CREAT, 0o600)
	if err == nil {
		err = proc.Close(t, fd)
	}
	for i := 1; err == nil && i < n; i++ {
		err = proc.Link(t, first, fmt.Sprintf("%s/file-%06d", dir, i))
	}
	if err == nil {
		var d *dcache.Dentry[vfs.Inode]
		if d, err = proc.LookupDentry(t, dir, true); err == nil {
			in.dir = d.Inode()
			dcache.Dput(t, d)
		}
	}
	if err != nil {
		ds.close()
		return nil, fmt.Errorf("lookup: building %s: %w", dir, err)
	}
	if p.fs == "f2fs" {
		f2fs.Of(in.dir.SB()).SB().LookupMode = mode
	}
	for i := 0; i < 512; i++ {
		if in.hit {
			in.names = append(in.names, []byte(fmt.Sprintf("FILE-%06d", (i*7919)%n)))
		} else {
			in.names = append(in.names, []byte(fmt.Sprintf("absent-%06d", i)))
		}
	}
	return in, nil
}

// Worker returns the lookup: one name searched in the directory under its
// i_rwsem, as lookup_slow does, with f2fs.FindEntry (f2fs_find_entry:
// f2fs_setup_filename, then __f2fs_find_entry) or ext4.FindEntry. A hit
// must find the name, a miss must not.
func (in *lookupInst) Worker(w int, t *kernel.Task) (func(int) error, error) {
	return func(i int) (err error) {
		defer t.Recover(&err)
		name := in.names[(i+w*131)%len(in.names)]
		in.dir.Rwsem.Lock()
		defer in.dir.Rwsem.Unlock()
		var found bool
		if in.fs == "f2fs" {
			r, err := f2fs.FindEntry(t, f2fs.DirOf(in.dir), name)
			if err != nil {
				return err
			}
			found = r != nil
		} else {
			r, err := ext4.FindEntry(t, ext4.DirOf(in.dir), name)
			if err != nil {
				return err
			}
			found = r != nil
		}
		if found != in.hit {
			return fmt.Errorf("lookup %q: found=%v", name, found)
		}
		return nil
	}, nil
}

func (in *lookupInst) Close() error {
	in.ds.close()
	return nil
}
