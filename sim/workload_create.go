package sim

import (
	"fmt"
	"strconv"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
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
		Patch: f2fs.LookupPreallocPatch,
		Params: []Param{
			{Name: "fs", Default: "f2fs", Help: "a registered filesystem on a block device (" + fsRange(true).String() + ")", Range: fsRange(true)},
			{Name: "n", Default: "2000", Help: "files created per operation", Range: IntRange(1, maxCreateFiles)},
			{Name: "mount", Default: "", Help: "the mount's option string, e.g. lookup_mode=auto (f2fs: perf, hash only, the kernel's default since 632f0b6c3e32; compat; or auto, the fallback of the seeds' 6.16 kernel)", Range: Text("mount options")},
			{Name: "hashonly", Default: "false", Help: "the superblock's no-compat-fallback encoding flag (mkfs.f2fs -C utf8:hashonly)", Range: Bool},
			{Name: "casefold", Default: "true", Help: "casefold the directory (FS_CASEFOLD_FL)", Range: Bool},
			{Name: "encrypt", Default: "true", Help: "encrypt the directory (v2 policy, AES-256-XTS/AES-256-CTS, key present)", Range: Bool},
		},
		// Each create also encrypts the name (fname.c) and opens the new
		// file (fscrypt_file_open).
		Exercises: []*patch.Patch{fscrypt.FnameOnstackPatch, hooks.FileOpenPatch},
		MaxOps:    createMaxOps,
		Setup:     setupCreate,
		Headlines: []*Headline{
			{
				Patch:      fscrypt.FnameOnstackPatch,
				Params:     seedCreateParams,
				Metric:     MetricOps,
				SeedRatios: map[string]float64{"v2": 15.05 / 7.99},
				Seed:       "2000 creates, casefolded+encrypted f2fs, Snapdragon 8s Gen4 6.6 userdebug: 15.05 s -> 7.99 s (mean of 3)",
				Unit:       createUnit,
				Size:       Size{Ops: 1, Count: 5},
				DebugSize:  Size{Params: map[string]string{"n": "100"}, Ops: 1, Count: 4},
			},
			{
				Patch:      f2fs.LookupPreallocPatch,
				Params:     seedCreateParams,
				Metric:     MetricOps,
				SeedRatios: map[string]float64{"v2": 15.05 / 8.16},
				Seed:       "2000 creates, casefolded+encrypted f2fs, Snapdragon 8s Gen4 6.16 userdebug: 15.05 s -> 8.16 s (mean of 3)",
				Unit:       createUnit,
				Size:       Size{Ops: 1, Count: 5},
				DebugSize:  Size{Params: map[string]string{"n": "100"}, Ops: 1, Count: 4},
			},
			{
				// The author's one figure from a production kernel, with
				// both patches (docs/patches/fscrypt-fname-onstack.md):
				// the two postings as posted, together.
				Patch:      fscrypt.FnameOnstackPatch,
				Together:   []Choice{{fscrypt.FnameOnstackPatch, "v2"}, {f2fs.LookupPreallocPatch, "v2"}},
				Params:     seedCreateParams,
				Metric:     MetricOps,
				SeedRatios: map[string]float64{"v2+v2": 10.9 / 5.3},
				Seed:       "10000 creates, casefolded+encrypted f2fs, production (non-debug) kernel, both patches: 10.9 s -> 5.3 s",
				Unit:       createUnit,
				Size:       Size{Ops: 1, Count: 5},
				DebugSize:  Size{Params: map[string]string{"n": "100"}, Ops: 1, Count: 4},
			},
		},
	})
	_ = Register(&Workload{
		Name: "lookup",
		Summary: "look one name up in a casefolded, encrypted directory of `entries` names " +
			"(__f2fs_find_entry / __ext4_find_entry): a hashed hit or a miss that falls back to the linear search",
		Patch: f2fs.LookupPreallocPatch,
		Params: []Param{
			{Name: "fs", Default: "f2fs", Help: "a registered filesystem on a block device (" + fsRange(true).String() + ")", Range: fsRange(true)},
			{Name: "entries", Default: "1000", Help: "names in the directory (1000, 10000, 100000...)", Range: IntRange(1, maxLookupEntries)},
			{Name: "mode", Default: "miss", Help: "hit: existing names in another case (hashed); miss: absent names (linear fallback unless lookup_mode=perf)", Range: OneOf("hit", "miss")},
			{Name: "mount", Default: "", Help: "the mount's option string for the lookups, e.g. lookup_mode=perf (f2fs)", Range: Text("mount options")},
			{Name: "casefold", Default: "true", Help: "casefold the directory", Range: Bool},
			{Name: "encrypt", Default: "true", Help: "encrypt the directory (key present)", Range: Bool},
		},
		// Each lookup encrypts the name it searches for (fname.c).
		Exercises: []*patch.Patch{fscrypt.FnameOnstackPatch},
		Setup:     setupLookup,
	})
)

// seedCreateParams are the parameters of the seeds' create runs. The seeds'
// kernels (6.6 and 6.16) had no lookup_mode= option: after a hashed miss
// in a casefolded directory they always fell back to the linear search
// (6.16 unless the superblock carries the no-compat-fallback flag, which
// mkfs.f2fs of the time never set), and every create begins with such a
// miss. That is lookup_mode=auto on a filesystem made without hashonly,
// so the seeds' runs mount with it; upstream's default since commit
// 632f0b6c3e32 ("f2fs: add lookup_mode mount option") is perf, under which
// a create's miss never reaches the fallback whose cost seed 001 cut.
// Each operation creates 1000 files, half the seeds' 2000 (whose cost
// grows with the square of n: see the report's budget in docs/CLI.md).
var seedCreateParams = map[string]string{"n": "1000", "mount": "lookup_mode=auto"}

// createUnit is the create headlines' Unit: n creates per operation.
var createUnit = ParamUnit("n", "creates")

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
	fs                *vfs.FileSystemType
	mount             string
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
	if p.fs, err = fsType(env.Param("fs"), true); err != nil {
		return p, err
	}
	p.mount = env.Param("mount")
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

// bootDirSystem formats a device for p.fs (encrypt, casefold as asked,
// the hashonly flag, and enough inodes for every run's files where the
// type has an inode table), boots a machine with it as the root mounted
// with p.mount's options, and makes the work directory.
func bootDirSystem(env *Env, p dirParams) (*dirSystem, error) {
	t := env.K.NewTask("setup")
	cfg := vfs.Config{}
	sys, proc, err := vfs.BootNew(t, cfg, p.fs, vfs.Features{Encrypt: true, Casefold: p.casefold, NoCompatFallback: p.hashonly, Inodes: 1 << 30}, p.mount)
	if err != nil {
		t.Exit()
		return nil, err
	}
	setflags, casefoldFL := uint32(vfs.FS_IOC_SETFLAGS), uint32(vfs.FS_CASEFOLD_FL)
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
		if _, err := proc.EncryptDir(t, workDir, bare.PlaintextStream("vfslab sim master key", 64), 0, 0); err != nil {
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
	dir   *vfs.Dentry
	hit   bool
	n     int
	names []string
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
	in := &lookupInst{n: n}
	switch env.Param("mode") {
	case "hit":
		in.hit = true
	case "miss":
	default:
		return nil, fmt.Errorf("lookup: bad mode %q: want hit or miss", env.Param("mode"))
	}
	// Fill the directory with hashed lookups only where the filesystem
	// has the option (f2fs's lookup_mode=perf; a type that refuses it
	// fills with its own lookups), then remount with the options asked
	// for.
	mount := p.mount
	p.mount = ""
	ds, err := bootDirSystem(env, p)
	if err != nil {
		return nil, fmt.Errorf("lookup: %w", err)
	}
	in.ds = ds
	t, proc := ds.setup, ds.p
	if err := ds.sys.Remount(t, proc, "/", "lookup_mode=perf"); err != nil && err != errno.EINVAL {
		ds.close()
		return nil, fmt.Errorf("lookup: remount: %w", err)
	}
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
		in.dir, err = proc.LookupDentry(t, dir, true)
	}
	if err == nil {
		// Forget the names' dentries (drop_caches 2 on the unused ones)
		// so that every lookup goes to the filesystem.
		dcache.ShrinkDcacheParent(t, in.dir)
		err = ds.sys.Remount(t, proc, "/", "lookup_mode=auto,"+mount)
		if err == errno.EINVAL && mount == "" {
			err = nil // the type has no lookup_mode= either way
		}
	}
	if err != nil {
		in.close()
		return nil, fmt.Errorf("lookup: building %s: %w", dir, err)
	}
	for i := 0; i < 512; i++ {
		if in.hit {
			in.names = append(in.names, fmt.Sprintf("FILE-%06d", (i*7919)%n))
		} else {
			in.names = append(in.names, fmt.Sprintf("absent-%06d", i))
		}
	}
	return in, nil
}

// Worker returns the lookup: one name looked up in the directory through
// the VFS with vfs.LookupOneUncached (the dcache, then the filesystem's
// ->lookup under the directory's i_rwsem: f2fs_lookup's __f2fs_find_entry,
// ext4_lookup's __ext4_find_entry), with the dentry invalidated after it
// so that every lookup reaches the filesystem. A hit must find the name, a
// miss must not.
func (in *lookupInst) Worker(w int, t *kernel.Task) (func(int) error, error) {
	return func(i int) error {
		name := in.names[(i+w*131)%len(in.names)]
		found, err := vfs.LookupOneUncached(t, in.dir, name)
		if err != nil {
			return err
		}
		if found != in.hit {
			return fmt.Errorf("lookup %q: found=%v", name, found)
		}
		return nil
	}, nil
}

func (in *lookupInst) close() {
	if in.dir != nil {
		dcache.Dput(in.ds.setup, in.dir)
	}
	in.ds.close()
}

func (in *lookupInst) Close() error {
	in.close()
	return nil
}
