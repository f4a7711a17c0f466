// Package teach builds the small machines the teaching tools (trace
// recordings, the quiz, the pictures) run on, and records one syscall's
// function_graph trace on them without the CLI.
//
// The machine is the one `vfslab trace` boots (cmd/vfslab/trace.go),
// made here through the public APIs: a filesystem found by name in the
// VFS's registry (get_fs_type; ext4 unless Config.FS names another),
// booted as the root (vfs.BootNew), with
//
//	/tmp/hello     a file ("hello world\n")
//	/tmp/dir/      a directory
//	/tmp/link      a symlink to hello
//	/secret/       an encrypted directory (v2 policy, AES-256-XTS and
//	               AES-256-CTS-CBC; its key added unless NoKey)
//	/secret/note   a file in it ("top secret\n")
//
// The encrypted directories (/secret, /v1secret, /cisecret) exist only on
// a filesystem with fscrypt (ext4, f2fs): memfs is tmpfs, which has none,
// so a memfs machine holds the /tmp files alone.
//
// The master key is deterministic (bare.PlaintextStream), so key
// identifiers and ciphertext names are the same on every run.
package teach

import (
	"fmt"
	"strings"
	"time"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/vfs"

	// The filesystems register themselves with the VFS.
	_ "github.com/vfslab/vfslab/ext4"
	_ "github.com/vfslab/vfslab/f2fs"
	_ "github.com/vfslab/vfslab/memfs"
)

// Config describes a machine.
type Config struct {
	// FS is the root filesystem's registered name: ext4 (default), f2fs
	// or memfs (tmpfs: no encrypted directories).
	FS string
	// Patches is the variant set the machine's kernel runs.
	Patches patch.Set
	// NoKey removes /secret's key after the files are made, so its names
	// are no-key names and its files cannot be opened.
	NoKey bool
	// Loop puts the root filesystem's device on loop device 0 (losetup
	// of a file in memory, as seed 003's experiment), so that its bios go
	// to the loop worker; only for a filesystem on a block device.
	Loop bool
	// Comm is the name of the task that makes the files and runs the
	// recorded syscalls (default "vfslab-teach").
	Comm string
	// Features are the mkfs features (Encrypt is always set). With
	// Casefold the machine also holds /cisecret, a casefolded encrypted
	// directory (chattr +F, then /secret's v2 policy) with
	// /cisecret/Note.txt: the directory where f2fs-lookup-prealloc
	// (seed 001) and the hash stored in ext4's dirents make their
	// difference.
	Features vfs.Features
}

// DefaultFS is the root filesystem of a Config without FS: ext4, the
// filesystem whose fscrypt the seed patches were measured on.
const DefaultFS = "ext4"

// MasterKeySeed is the seed of /secret's raw master key.
const MasterKeySeed = "vfslab teach master key"

// MasterKey returns /secret's raw 64-byte master key.
func MasterKey() []byte { return bare.PlaintextStream(MasterKeySeed, 64) }

// Machine is a booted machine with the trace machine's files.
type Machine struct {
	Cfg Config
	K   *kernel.Kernel
	// T is the task that made the files and runs the recorded syscalls.
	T   *kernel.Task
	Sys *vfs.System
	P   *vfs.Proc
	// KeyID is /secret's key identifier.
	KeyID [fscrypt.KeyIdentifierSize]byte
	// V1Spec is /v1secret's v1 key, by descriptor.
	V1Spec fscrypt.KeySpecifier
	// Clock is the recordings' clock: nil for the modelled clock (1 µs
	// per reading), time.Now for real durations.
	Clock func() time.Time
}

// NewMachine boots a machine as cfg says. Errors: ENODEV for an unknown
// filesystem, the setup's syscalls'.
func NewMachine(cfg Config) (*Machine, error) {
	if cfg.FS == "" {
		cfg.FS = DefaultFS
	}
	fst, err := vfs.GetFsType(cfg.FS)
	if err != nil {
		return nil, fmt.Errorf("filesystem %q: %w", cfg.FS, err)
	}
	k := kernel.NewWith(kernel.Config{Patches: cfg.Patches})
	comm := cfg.Comm
	if comm == "" {
		comm = "vfslab-teach"
	}
	t := k.NewTask(comm)
	f := cfg.Features
	f.Encrypt = true
	sys, p, err := boot(t, fst, f, cfg.Loop)
	if err != nil {
		t.Exit()
		return nil, err
	}
	m := &Machine{Cfg: cfg, K: k, T: t, Sys: sys, P: p}
	if err := m.populate(); err != nil {
		m.Close()
		return nil, err
	}
	// The process runs the syscalls as a program started from a shell
	// does: 0, 1 and 2 are its standard streams, so that a file it opens
	// gets 3.
	p.InheritStdio()
	k.Log = &kernel.Log{}
	return m, nil
}

// boot formats a new filesystem of type fst with features f and mounts it
// as the root (vfs.BootNew), with loop first setting its device up as loop
// device 0. Errors: EINVAL for loop on a type without a device, the
// mkfs's and the mount's.
func boot(t *kernel.Task, fst *vfs.FileSystemType, f vfs.Features, loop bool) (*vfs.System, *vfs.Proc, error) {
	if !loop {
		return vfs.BootNew(t, vfs.Config{}, fst, f, "")
	}
	if !fst.RequiresDev {
		return nil, nil, fmt.Errorf("%s has no block device to put on a loop device: %w", fst.Name, errno.EINVAL)
	}
	opts, err := vfs.FormatFeatures(t, fst, f, "")
	if err != nil {
		return nil, nil, err
	}
	opts.Device.LoopSetup(t.K, 0)
	return vfs.Boot(t, vfs.Config{}, fst, opts)
}

// EncryptDirV1 makes the empty directory path an encrypted directory with
// a v1 policy (AES-256-XTS, AES-256-CTS-CBC, 32-byte name padding) whose
// master key raw is added by its descriptor (FS_IOC_ADD_ENCRYPTION_KEY
// with a descriptor key spec), and returns that key spec. Files in it get
// keys derived from the master key with AES-128-ECB under their nonces
// (seed 002's derive_key_aes).
func EncryptDirV1(t *kernel.Task, p *vfs.Proc, path string, raw []byte) (fscrypt.KeySpecifier, error) {
	desc := fscrypt.KeyDescriptor(raw)
	spec := fscrypt.DescriptorSpec(desc)
	fd, err := p.Open(t, path, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		return spec, err
	}
	defer p.Close(t, fd)
	arg := &fscrypt.AddKeyArg{KeySpec: spec, RawSize: uint32(len(raw)), Raw: raw}
	if _, err := p.Ioctl(t, fd, vfs.FS_IOC_ADD_ENCRYPTION_KEY, arg); err != nil {
		return spec, err
	}
	pol := fscrypt.Policy{Version: fscrypt.PolicyV1, ContentsMode: fscrypt.ModeAES256XTS, FilenamesMode: fscrypt.ModeAES256CTS,
		Flags: fscrypt.PolicyFlagsPad32, Descriptor: desc}
	return spec, p.SetEncryptionPolicy(t, fd, pol)
}

// WriteFile creates or truncates path and writes data to it.
func (m *Machine) WriteFile(path, data string) error {
	t, p := m.T, m.P
	fd, err := p.Open(t, path, vfs.O_CREAT|vfs.O_WRONLY|vfs.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer p.Close(t, fd)
	_, err = p.Write(t, fd, []byte(data))
	return err
}

// HasFscrypt reports whether the root filesystem has fscrypt (its
// superblock has fscrypt_operations, s_cop), so that the machine holds
// the encrypted directories.
func (m *Machine) HasFscrypt() bool { return m.Sys.RootMount().SB.Cop() != nil }

func (m *Machine) populate() error {
	t, p := m.T, m.P
	steps := []func() error{
		func() error { return p.Mkdir(t, "/tmp", 0o1777) },
		func() error { return m.WriteFile("/tmp/hello", "hello world\n") },
		func() error { return p.Mkdir(t, "/tmp/dir", 0o755) },
		func() error { return p.Symlink(t, "hello", "/tmp/link") },
	}
	if !m.HasFscrypt() {
		// tmpfs (memfs): no fscrypt, so no encrypted directories.
		for _, s := range steps {
			if err := s(); err != nil {
				return err
			}
		}
		return nil
	}
	steps = append(steps,
		func() error { return p.Mkdir(t, "/secret", 0o700) },
		func() (err error) { m.KeyID, err = p.EncryptDir(t, "/secret", MasterKey(), 0, 0); return err },
		func() error { return m.WriteFile("/secret/note", "top secret\n") },
		func() error { return p.Mkdir(t, "/v1secret", 0o700) },
		func() (err error) { m.V1Spec, err = EncryptDirV1(t, p, "/v1secret", MasterKey()); return err },
		func() error { return m.WriteFile("/v1secret/note", "v1 secret\n") })
	if m.Cfg.Features.Casefold {
		steps = append(steps,
			func() error { return p.Mkdir(t, "/cisecret", 0o700) },
			func() error { return setCasefold(t, p, "/cisecret") },
			func() (err error) { _, err = p.EncryptDir(t, "/cisecret", MasterKey(), 0, 0); return err },
			func() error { return m.WriteFile("/cisecret/Note.txt", "casefolded secret\n") })
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	if m.Cfg.NoKey {
		return m.RemoveKey()
	}
	return nil
}

// setCasefold is chattr +F on the empty directory path (FS_IOC_SETFLAGS
// with FS_CASEFOLD_FL).
func setCasefold(t *kernel.Task, p *vfs.Proc, path string) error {
	fd, err := p.Open(t, path, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer p.Close(t, fd)
	fl := uint32(vfs.FS_CASEFOLD_FL)
	_, err = p.Ioctl(t, fd, uint32(vfs.FS_IOC_SETFLAGS), &fl)
	return err
}

// RemoveKey removes /secret's key and /v1secret's
// (FS_IOC_REMOVE_ENCRYPTION_KEY on the root), as `fscryptctl remove_key`
// does.
func (m *Machine) RemoveKey() error {
	t, p := m.T, m.P
	fd, err := p.Open(t, "/", vfs.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer p.Close(t, fd)
	if _, err = p.RemoveEncryptionKey(t, fd, m.KeyID); err != nil {
		return err
	}
	_, err = p.Ioctl(t, fd, vfs.FS_IOC_REMOVE_ENCRYPTION_KEY, &fscrypt.RemoveKeyArg{KeySpec: m.V1Spec})
	return err
}

// DropCaches drops the unused dentries (and with them their inodes'
// last references), as `echo 2 > /proc/sys/vm/drop_caches` does, so the
// next walk asks the filesystem. The quiz's kmalloc counts are taken
// after it, so it keeps the keys of inodes still in the inode cache.
func (m *Machine) DropCaches() { dcache.ShrinkDcacheSB(m.T, m.Sys.Dcache) }

// DropCachesAll is `echo 3 > /proc/sys/vm/drop_caches` (vfs
// System.DropCaches): the unused dentries and the inodes nothing holds
// any more, with their fscrypt keys, so that the next open of an
// encrypted file sets its key up again, as `vfslab trace --cold` shows.
func (m *Machine) DropCachesAll() { m.Sys.DropCachesAfterWriteback(m.T, 3) }

// Close ends the machine's process and task.
func (m *Machine) Close() {
	m.P.Exit(m.T)
	m.T.Exit()
}

// Recording is one traced syscall.
type Recording struct {
	// Desc is the call as strace writes it: open("/secret/note", O_RDONLY).
	Desc string
	// Ret is its return value (-errno on failure) and Err its error.
	Ret int64
	Err error
	// Events are what the call counted on the calling task.
	Events *events.Counters
	// Tracer holds the trace, taken with the modelled clock (1 µs per
	// clock reading) unless Record was given another.
	Tracer *kernel.Tracer
	// Log is what the kernel logged during the call.
	Log []string
}

// Result is the strace line: "open(...) = 3" or "... = -1 ENOKEY".
func (r *Recording) Result() string {
	if r.Err != nil {
		if e, ok := errno.Of(r.Err); ok {
			return fmt.Sprintf("%s = -1 %s", r.Desc, errno.Name(e))
		}
		return fmt.Sprintf("%s = -1 (%v)", r.Desc, r.Err)
	}
	return fmt.Sprintf("%s = %d", r.Desc, r.Ret)
}

// Record runs call on the machine's task with a tracer (on m.Clock, or
// the modelled clock when nil) and counting attached and returns what it
// recorded. When the call traced one function at the top level (the
// syscall), its exit gets the call's return value, as funcgraph-retval
// shows a syscall's.
func (m *Machine) Record(desc string, call func(t *kernel.Task, p *vfs.Proc) (int64, error)) *Recording {
	clock := m.Clock
	if clock == nil {
		clock = kernel.ModelClock(time.Microsecond)
	}
	t := m.T
	t.EnableCounting()
	before := t.Ev.Clone()
	m.K.Log = &kernel.Log{}
	tr := &kernel.Tracer{Clock: clock}
	t.Tracer = tr
	ret, err := call(t, m.P)
	t.Tracer = nil
	r := &Recording{Desc: desc, Ret: ret, Err: err, Events: t.Ev.Sub(before), Tracer: tr, Log: m.K.Log.Lines()}
	if err != nil {
		r.Ret = kernel.ErrReturn(err)
	}
	// One syscall at the top: its exit shows the call's return value.
	top := -1
	for i, e := range tr.Entries {
		if e.Kind == kernel.TraceExit && e.Depth == 0 {
			if top >= 0 {
				top = -1
				break
			}
			top = i
		}
	}
	if top >= 0 {
		tr.SetReturn(top, r.Ret)
	}
	return r
}

// Export is the recording as a kernel.TraceExport with a header naming
// the machine: filesystem, variants, key present or not.
func (m *Machine) Export(r *Recording) *kernel.TraceExport {
	key := "present"
	if m.Cfg.NoKey {
		key = "removed"
	}
	x := &kernel.TraceExport{
		Header: []string{
			"fs: " + m.Cfg.FS,
			"patches: " + m.Cfg.Patches.String(),
			"key: " + key,
		},
		Tasks:        []kernel.TraceTask{{Comm: m.T.Comm, PID: m.T.PID, Tracer: r.Tracer}},
		Result:       r.Result(),
		ShowCounters: true,
		Times:        true,
		Log:          r.Log,
		Process:      "vfslab " + m.Cfg.FS,
	}
	if m.Clock == nil {
		x.Header = append(x.Header, "clock: modelled (1 us per clock reading)")
	}
	x.Counters = kernel.CountersOf(r.Events)
	return x
}

// Open is a recordable open(2) of path with flags, followed by an
// untraced close(2).
func Open(path string, flags int) (string, func(t *kernel.Task, p *vfs.Proc) (int64, error)) {
	return fmt.Sprintf("open(%q, %s)", path, OpenFlags(flags)), func(t *kernel.Task, p *vfs.Proc) (int64, error) {
		fd, err := p.Open(t, path, flags, 0o644)
		if err == nil {
			// close(2) must not leak the file; it is counted but not
			// traced, so the trace is the open's alone.
			tr := t.Tracer
			t.Tracer = nil
			p.Close(t, fd)
			t.Tracer = tr
		}
		return int64(fd), err
	}
}

// Rename is a recordable renameat2(2).
func Rename(old, new string, flags uint32) (string, func(t *kernel.Task, p *vfs.Proc) (int64, error)) {
	return fmt.Sprintf("renameat2(%q, %q, %d)", old, new, flags), func(t *kernel.Task, p *vfs.Proc) (int64, error) {
		return 0, p.Rename(t, old, new, flags)
	}
}

// Stat is a recordable stat(2).
func Stat(path string) (string, func(t *kernel.Task, p *vfs.Proc) (int64, error)) {
	return fmt.Sprintf("stat(%q)", path), func(t *kernel.Task, p *vfs.Proc) (int64, error) {
		_, err := p.Stat(t, path)
		return 0, err
	}
}

// Getdents is a recordable listing of the directory path: open,
// getdents64 until the end and close, all traced; *names receives the
// names read (without "." and "..").
func Getdents(path string, names *[]string) (string, func(t *kernel.Task, p *vfs.Proc) (int64, error)) {
	return fmt.Sprintf("getdents64(%q)", path), func(t *kernel.Task, p *vfs.Proc) (int64, error) {
		var err error
		*names, err = ReadDir(t, p, path)
		return int64(len(*names)), err
	}
}

// ReadDir lists the directory path with getdents64, skipping "." and
// "..".
func ReadDir(t *kernel.Task, p *vfs.Proc, path string) ([]string, error) {
	fd, err := p.Open(t, path, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer p.Close(t, fd)
	var names []string
	buf := make([]byte, 4096)
	for {
		n, err := p.Getdents64(t, fd, buf)
		if err != nil {
			return names, err
		}
		if n == 0 {
			return names, nil
		}
		ds, err := vfs.ParseDirents(buf[:n])
		if err != nil {
			return names, err
		}
		for _, d := range ds {
			if d.Name != "." && d.Name != ".." {
				names = append(names, d.Name)
			}
		}
	}
}

// openFlagNames are the open(2) flags OpenFlags names, in strace's order.
var openFlagNames = []struct {
	bit  int
	name string
}{
	{vfs.O_CREAT, "O_CREAT"}, {vfs.O_EXCL, "O_EXCL"}, {vfs.O_NOFOLLOW, "O_NOFOLLOW"},
	{vfs.O_TRUNC, "O_TRUNC"}, {vfs.O_APPEND, "O_APPEND"}, {vfs.O_DIRECTORY, "O_DIRECTORY"},
}

// OpenFlags renders open(2) flags as strace does: O_RDONLY|O_CREAT...
func OpenFlags(flags int) string {
	var parts []string
	switch flags & 3 {
	case vfs.O_WRONLY:
		parts = append(parts, "O_WRONLY")
	case vfs.O_RDWR:
		parts = append(parts, "O_RDWR")
	default:
		parts = append(parts, "O_RDONLY")
	}
	rest := flags &^ 3
	for _, f := range openFlagNames {
		if rest&f.bit != 0 {
			parts = append(parts, f.name)
			rest &^= f.bit
		}
	}
	if rest != 0 {
		parts = append(parts, fmt.Sprintf("%#o", rest))
	}
	return strings.Join(parts, "|")
}
