package shell

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/keys"
	"github.com/vfslab/vfslab/memfs"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/vfs"

	// The disk filesystems register themselves with vfs (register_filesystem).
	_ "github.com/vfslab/vfslab/ext4"
	_ "github.com/vfslab/vfslab/f2fs"
)

// The scratch devices of the machine, as xfstests' local.config names them
// on a VM with virtio disks.
var scratchDevs = []string{"/dev/vdb", "/dev/vdc", "/dev/vdd", "/dev/vde"}

// DefaultDeviceSize is a scratch device's size unless --device gives one:
// 8 GiB, sparse, as the Linux oracle's disks are, so that mke2fs's
// defaults give 4 KiB blocks as on xfstests' usual scratch devices.
const DefaultDeviceSize = 8 << 30

// users are the accounts of /etc/passwd: root and xfstests' qa users.
var users = map[string]uint32{"root": 0, "fsgqa": 1000, "fsgqa2": 1001, "123456-fsgqa": 123456}

// device is one scratch block device and what its filesystem left on it.
type device struct {
	name string
	bdev *vfs.BlockDevice
	// sb is the superblock a umount detached: the filesystem's contents,
	// attached again by the next mount (nil: never mounted since mkfs).
	sb *vfs.SuperBlock
	// image is the host file attached as the device ("" for none).
	image string
}

// mountRec is one line of /proc/mounts.
type mountRec struct {
	source, dir, fstype, opts string
	dev                       *device
	m                         *vfs.Mount
	// bind marks a bind mount (bind.go).
	bind bool
}

// Machine is the one simulated machine a shell session runs on: a kernel
// with its patch set, a memfs root holding /mnt, /tmp, /proc, /sys and /dev,
// four scratch block devices, and the shell's processes. Every syscall the
// shell's commands make takes mu, so that the machine runs one syscall at
// a time on one task and a script gives the same output every run.
type Machine struct {
	mu      sync.Mutex
	k       *kernel.Kernel
	t       *kernel.Task
	sys     *vfs.System
	root    *vfs.Proc
	patches patch.Set
	seed    uint64
	devs    map[string]*device
	mounts  []*mountRec
	procs   map[ident]*vfs.Proc
	// fds are the shell's descriptors above 2 (exec 3<file): the shell's
	// number -> the root process's descriptor.
	fds map[int]int
	// tracing is `trace on`; evBase is the counters at `events reset`.
	tracing bool
	evSnap  any
	// rnd is /dev/urandom's stream.
	rnd *detRandom
	// session is the session keyring every process has (keys.go).
	session *keys.Key
	// used records that a filesystem was made or mounted: `patches` can
	// no longer change the kernel.
	used bool
	// images are the host images attached to devices, attached again
	// when `patches` boots a new machine; saves are the --save-image
	// devices Close writes out (image.go).
	images []Image
	saves  []Image
	// sizes are the scratch devices' sizes set by --device (SetDeviceSize),
	// kept across `patches`; a device not named is DefaultDeviceSize.
	sizes map[string]int64
	// intr is closed when the machine closes: it ends every syscall
	// asleep in a wait (dev.go's sleep).
	intr chan struct{}
	// lim stops the run: --timeout, the memory limit, ^C (bounds.go).
	lim runLimits
	// here is xfstests' $here (the checkout's path under --xfstests,
	// "" for /), whose src/ holds the xfstests programs.
	here string
}

// NewMachine boots a machine whose kernel runs the patch set set, with its
// random source seeded with seed.
func NewMachine(set patch.Set, seed uint64) (*Machine, error) {
	m := &Machine{patches: set, seed: seed}
	if err := m.boot(); err != nil {
		return nil, err
	}
	return m, nil
}

// blankDevice is a new blank sparse disk of device name's size.
func (m *Machine) blankDevice(name string) *vfs.BlockDevice {
	size := int64(DefaultDeviceSize)
	if s, ok := m.sizes[name]; ok {
		size = s
	}
	return vfs.NewBlockDeviceSize(uint32(size / vfs.PageSize))
}

// closeDevices releases the host images the devices hold (their files and
// locks), before a new boot attaches them again or when the machine ends.
func (m *Machine) closeDevices() {
	for _, d := range m.devs {
		d.bdev.Close()
	}
}

func (m *Machine) boot() error {
	m.closeDevices()
	k := kernel.NewWith(kernel.Config{Patches: m.patches})
	// Every random choice of the kernel (file nonces, failslab's
	// draws) comes from the seed (get_random_bytes, kernel/random.go).
	k.Seed(m.seed)
	t := k.NewTask("init")
	t.EnableCounting()
	m.intr = make(chan struct{})
	t.Sleep = m.sleep
	sys, p, err := memfs.Boot(t, vfs.Config{}, nil)
	if err != nil {
		return err
	}
	// init joins the session keyring (commit_creds of a cred that names
	// it), as every process made later does.
	c := *p.Cred
	c.SessionKeyring = sessionKeyring{m}
	p.Cred = &c
	m.k, m.t, m.sys, m.root = k, t, sys, p
	m.devs = map[string]*device{}
	m.mounts = []*mountRec{{source: "rootfs", dir: "/", fstype: "memfs", opts: "rw"}}
	m.procs = map[ident]*vfs.Proc{rootIdent: p}
	m.fds = map[int]int{}
	if err := m.bootKeys(); err != nil {
		return err
	}
	m.rnd = nil
	m.evSnap = t.Ev.Clone()
	for _, d := range []string{"/mnt", "/mnt/scratch", "/mnt/test", "/tmp", "/proc", "/proc/sys", "/proc/sys/vm", "/sys", "/dev", "/etc", "/root", "/home"} {
		// /tmp is world-writable and sticky, as on any distribution.
		mode := uint32(0o755)
		if d == "/tmp" {
			mode = 0o1777
		}
		if err := p.Mkdir(t, d, mode); err != nil {
			return fmt.Errorf("mkdir %s: %w", d, err)
		}
	}
	for name, text := range etcFiles() {
		fd, err := p.Open(t, name, vfs.O_WRONLY|vfs.O_CREAT|vfs.O_TRUNC, 0o644)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		_, err = p.Write(t, fd, []byte(text))
		p.Close(t, fd)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	for _, name := range scratchDevs {
		m.devs[name] = &device{name: name, bdev: m.blankDevice(name)}
	}
	if err := m.populateDev(t, p); err != nil {
		return err
	}
	for _, img := range m.images {
		if err := m.attach(img, false); err != nil {
			return err
		}
	}
	k.Log = &kernel.Log{}
	// fail_dump's lines go to the log the machine has when they are
	// printed (dmesg -c replaces it).
	k.Failslab.Printk = func(line string) { t.Printk("%s", line) }
	return nil
}

// close ends the machine's processes.
func (m *Machine) close() {
	if m.intr != nil {
		close(m.intr)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.procs {
		p.Exit(m.t)
	}
	m.t.Exit()
}

// procFor returns the process that runs the commands of ident id (su
// USER, su -g/-G), made on first use with id's credentials; root's is
// init.
func (m *Machine) procFor(id ident) *vfs.Proc {
	if p, ok := m.procs[id]; ok {
		return p
	}
	p := m.sys.NewProc(m.t, id.cred(m))
	m.procs[id] = p
	return p
}

// call runs one syscall of command comm on the machine for process p (nil:
// init, as root): under the machine lock, with the task named after the
// command (as printk shows it) and running with p's credentials
// (current_cred(), which fscrypt's search of the session keyring reads),
// and with the trace printed to w when `trace on` is in force.
func (m *Machine) call(w io.Writer, p *vfs.Proc, comm, desc string, fn func(t *kernel.Task) (int64, error)) (int64, error) {
	if m.lim.reason() != nil {
		// The run was stopped: no syscall starts.
		return 0, errno.EINTR
	}
	m.mu.Lock()
	t := m.t
	t.Comm = comm
	t.Cred = nil
	if p != nil {
		t.Cred = p.Cred
	}
	var tr *kernel.Tracer
	if m.tracing && desc != "" {
		tr = &kernel.Tracer{}
		t.Tracer = tr
	}
	n, err := fn(t)
	t.Tracer = nil
	t.Cred = nil
	m.mu.Unlock()
	// The trace is written after the lock is dropped: w may be a pipe
	// whose reader needs the machine.
	if tr != nil && w != nil {
		var b bytes.Buffer
		tr.Print(&b, false)
		fmt.Fprintf(&b, "%s = %s\n", desc, traceResult(n, err))
		w.Write(b.Bytes())
	}
	return n, err
}

// traceResult is a syscall's return as vfslab trace prints it.
func traceResult(n int64, err error) string {
	if err != nil {
		if e, ok := errno.Of(err); ok {
			return "-1 " + errno.Name(e)
		}
		return "-1 (" + err.Error() + ")"
	}
	return fmt.Sprint(n)
}

// strerror is glibc's message for err ("Required key not available").
func strerror(err error) string {
	if e, ok := errno.Of(err); ok {
		s := syscall.Errno(e).Error()
		if s == "" {
			return err.Error()
		}
		return strings.ToUpper(s[:1]) + s[1:]
	}
	return err.Error()
}

// procMounts renders /proc/mounts.
func (m *Machine) procMounts() string {
	var b strings.Builder
	for _, r := range m.mounts {
		fmt.Fprintf(&b, "%s %s %s %s 0 0\n", r.source, r.dir, r.fstype, r.optsNow())
	}
	return b.String()
}

// mountAt returns the mount record on dir, or nil.
func (m *Machine) mountAt(dir string) *mountRec {
	// The last one: mounts stacked on one directory hide the earlier.
	for i := len(m.mounts) - 1; i >= 0; i-- {
		if r := m.mounts[i]; r.dir == dir {
			return r
		}
	}
	return nil
}

// mountOf returns the mount record whose source is dev, or nil.
func (m *Machine) mountOf(dev string) *mountRec {
	for _, r := range m.mounts {
		if r.source == dev {
			return r
		}
	}
	return nil
}

// deviceNames lists the scratch devices.
func (m *Machine) deviceNames() []string {
	var out []string
	for n := range m.devs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
