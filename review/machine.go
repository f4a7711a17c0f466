package review

import (
	"fmt"
	"strings"

	"github.com/vfslab/vfslab/crypto"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/internal/nsmodel"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/libfs"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/review/fault"
	"github.com/vfslab/vfslab/vfs"
)

// Env is the filesystem a sequence runs on: its type, whether the
// working directory /d is casefolded and encrypted, with a v1 or v2
// policy, and whether the machine has an asynchronous hardware crypto
// engine (crypto.EngineConfig) and with which reqsize.
type Env struct {
	FS       string // "ext4" or "f2fs"
	Casefold bool
	Encrypt  bool
	// V1 sets a v1 policy (a key by descriptor) instead of v2.
	V1 bool
	// EngineReqsize > 0 registers a hardware engine whose tfms have
	// this reqsize, above every software driver, before the key is set.
	EngineReqsize int
}

// String names the environment: "f2fs+casefold+encrypt", with
// "+v1" and "+engine(reqsize=N)".
func (e Env) String() string {
	s := e.FS
	if e.Casefold {
		s += "+casefold"
	}
	if e.Encrypt {
		s += "+encrypt"
		if e.V1 {
			s += "+v1"
		}
	}
	if e.EngineReqsize > 0 {
		s += fmt.Sprintf("+engine(reqsize=%d)", e.EngineReqsize)
	}
	return s
}

func (e Env) fault() fault.Env { return fault.Env{FS: e.FS, Casefold: e.Casefold, Encrypt: e.Encrypt} }

// workDir is the directory sequences work in (ext4 refuses to encrypt
// its root).
const workDir = "/d"

// rawKey is xfstests' TEST_RAW_KEY (common/encrypt), the bytes 0x01..0x40,
// which vfslab sh's prelude defines too: a reproducer's key identifier
// and descriptor are the ones the review's machines use.
var rawKey = func() []byte {
	k := make([]byte, 64)
	for i := range k {
		k[i] = byte(i + 1)
	}
	return k
}()

// keyDescriptor is TEST_KEY_DESCRIPTOR, the v1 key's descriptor.
var keyDescriptor = [fscrypt.KeyDescriptorSize]byte{0, 0, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33}

// machine is one booted kernel with the sequence's filesystem as its root
// and /d prepared as the environment says; every syscall runs on task t.
type machine struct {
	env Env
	k   *kernel.Kernel
	t   *kernel.Task
	sys *vfs.System
	p   *vfs.Proc
	eng *crypto.Engine
	id  [fscrypt.KeyIdentifierSize]byte
	// id2 is the second key's identifier, once OpCorruptContext added it.
	id2  [fscrypt.KeyIdentifierSize]byte
	key2 bool
	// seen are what the detectors have already looked at: log lines and
	// BUG records.
	logSeen, bugsSeen int
}

// boot makes a machine for env running the patch set set, with the
// kernel's random source seeded with seed.
func boot(env Env, set patch.Set, seed uint64) (m *machine, err error) {
	k := kernel.NewWith(kernel.Config{Patches: set, Track: true})
	k.Seed(seed)
	t := k.NewTask("review")
	t.EnableCounting()
	defer t.Recover(&err)
	var sys *vfs.System
	var p *vfs.Proc
	switch env.FS {
	case "ext4":
		sys, p, err = ext4.Boot(t, vfs.Config{}, &ext4.Options{Casefold: env.Casefold})
	case "f2fs":
		// lookup_mode=auto: the seed's 6.16 kernel has no such option
		// and falls back to the linear search as auto does (upstream's
		// default, perf, came later).
		sys, p, err = f2fs.Boot(t, vfs.Config{}, &f2fs.Options{Casefold: env.Casefold, LookupMode: f2fs.LookupAuto})
	default:
		err = fmt.Errorf("review: no filesystem %q", env.FS)
	}
	if err != nil {
		t.Exit()
		return nil, err
	}
	m = &machine{env: env, k: k, t: t, sys: sys, p: p}
	if err := m.setup(); err != nil {
		m.close()
		return nil, fmt.Errorf("review: setting up %s: %w", env, err)
	}
	m.logSeen = k.Log.Total()
	m.bugsSeen = k.Bugs.Len()
	k.Tracker.Check() // set-up's reports are the set-up's
	return m, nil
}

// setup makes /d as the environment asks, as the reproducer's prelude
// does: mkdir, chattr +F, the key and the policy.
func (m *machine) setup() error {
	t, p := m.t, m.p
	if m.env.EngineReqsize > 0 {
		e, err := m.sys.Crypto.RegisterEngine(t, crypto.EngineConfig{Name: "qce", ReqSize: m.env.EngineReqsize})
		if err != nil {
			return err
		}
		m.eng = e
	}
	if err := p.Mkdir(t, workDir, 0o755); err != nil {
		return err
	}
	fd, err := p.Open(t, workDir, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer p.Close(t, fd)
	if m.env.Casefold {
		fl := uint32(vfs.FS_CASEFOLD_FL)
		if _, err := p.Ioctl(t, fd, vfs.FS_IOC_SETFLAGS, &fl); err != nil {
			return err
		}
	}
	if !m.env.Encrypt {
		return nil
	}
	if err := m.addKey(); err != nil {
		return err
	}
	pol := fscrypt.Policy{Version: fscrypt.PolicyV2, ContentsMode: fscrypt.ModeAES256XTS,
		FilenamesMode: fscrypt.ModeAES256CTS, Flags: fscrypt.PolicyFlagsPad16, Identifier: m.id}
	if m.env.V1 {
		pol = fscrypt.Policy{Version: fscrypt.PolicyV1, ContentsMode: fscrypt.ModeAES256XTS,
			FilenamesMode: fscrypt.ModeAES256CTS, Flags: fscrypt.PolicyFlagsPad16, Descriptor: keyDescriptor}
	}
	return p.SetEncryptionPolicy(t, fd, pol)
}

// onRoot runs fn with a descriptor of the root directory, where the key
// ioctls go.
func (m *machine) onRoot(fn func(fd int) error) error {
	fd, err := m.p.Open(m.t, "/", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer m.p.Close(m.t, fd)
	return fn(fd)
}

// addKey is FS_IOC_ADD_ENCRYPTION_KEY of rawKey on the root, as a v2 key
// (by identifier) or, for a v1 policy, by descriptor.
func (m *machine) addKey() error {
	return m.onRoot(func(fd int) (err error) {
		if m.env.V1 {
			arg := &fscrypt.AddKeyArg{KeySpec: fscrypt.DescriptorSpec(keyDescriptor), RawSize: uint32(len(rawKey)), Raw: rawKey}
			_, err = m.p.Ioctl(m.t, fd, vfs.FS_IOC_ADD_ENCRYPTION_KEY, arg)
			return err
		}
		m.id, err = m.p.AddEncryptionKey(m.t, fd, rawKey)
		return err
	})
}

// removeKey is FS_IOC_REMOVE_ENCRYPTION_KEY of the key on the root.
func (m *machine) removeKey() error {
	return m.onRoot(func(fd int) error {
		spec := fscrypt.IdentifierSpec(m.id)
		if m.env.V1 {
			spec = fscrypt.DescriptorSpec(keyDescriptor)
		}
		arg := fscrypt.RemoveKeyArg{KeySpec: spec}
		_, err := m.p.Ioctl(m.t, fd, vfs.FS_IOC_REMOVE_ENCRYPTION_KEY, &arg)
		return err
	})
}

// rawKey2 is the second key OpCorruptContext points a file at.
var rawKey2 = func() []byte {
	k := make([]byte, 64)
	for i := range k {
		k[i] = byte(0x80 + i)
	}
	return k
}()

// corruptContext is OpCorruptContext: the second key added (once), the
// v2 context of the regular file at path rewritten in the filesystem's
// xattr store (the "c" xattr of index 9, which no syscall reaches) to
// name it, as an offline edit of the
// image would, and the caches dropped so that the next open reads the
// inode, and its context, again.
func (m *machine) corruptContext(path string) error {
	if !m.env.Encrypt || m.env.V1 {
		return errno.EOPNOTSUPP
	}
	if !m.key2 {
		if err := m.onRoot(func(fd int) (err error) {
			m.id2, err = m.p.AddEncryptionKey(m.t, fd, rawKey2)
			return err
		}); err != nil {
			return err
		}
		m.key2 = true
	}
	err := func() (err error) {
		defer m.t.Recover(&err)
		d, err := m.p.LookupDentry(m.t, path, false)
		if err != nil {
			return err
		}
		defer dput(m.t, d)
		inode := d.Inode()
		if inode == nil {
			return errno.ENOENT
		}
		if !inode.IsReg() || !inode.IsEncrypted() {
			return errno.EINVAL
		}
		var xc *libfs.XattrCrypt
		switch c := inode.SB().Cop().(type) {
		case *ext4.SuperBlock:
			xc = &c.XattrCrypt
		case *f2fs.SuperBlock:
			xc = &c.XattrCrypt
		default:
			return errno.EOPNOTSUPP
		}
		buf := make([]byte, 64)
		n, err := xc.GetContext(m.t, inode, buf)
		if err != nil {
			return err
		}
		ctx := buf[:n]
		// struct fscrypt_context_v2: version, the modes, flags,
		// log2_data_unit_size, 3 reserved bytes, then the key's
		// identifier.
		if n < 24 || ctx[0] != 2 {
			return errno.EINVAL
		}
		copy(ctx[8:24], m.id2[:])
		inode.Rwsem.Lock()
		defer inode.Rwsem.Unlock()
		return xc.Xattrs(inode).Set(m.t, libfs.XattrIndexEncryption, libfs.XattrNameEncryption, ctx, vfs.XATTR_REPLACE)
	}()
	m.sys.DropCachesAfterWriteback(m.t, 2)
	return err
}

// close ends the machine's process and tasks.
func (m *machine) close() {
	if m.eng != nil {
		m.eng.Stop()
	}
	m.p.Exit(m.t)
	m.t.Exit()
}

// newLog returns the log lines printed since the last call.
func (m *machine) newLog() []string {
	total := m.k.Log.Total()
	n := total - m.logSeen
	m.logSeen = total
	if n <= 0 {
		return nil
	}
	lines := m.k.Log.Lines()
	if n > len(lines) {
		n = len(lines)
	}
	return lines[len(lines)-n:]
}

// newBugs returns the BUG and KASAN records made since the last call.
func (m *machine) newBugs() []*kernel.Bug {
	all := m.k.Bugs.All()
	out := all[m.bugsSeen:]
	m.bugsSeen = len(all)
	return out
}

// dumps renders every directory under /d with its filesystem's dump (the
// on-disk blocks, byte for byte) and checker, sorted by path.
func (m *machine) dumps() string {
	var b strings.Builder
	var walk func(path string)
	walk = func(path string) {
		var err error
		func() {
			defer m.t.Recover(&err)
			d, lerr := m.p.LookupDentry(m.t, path, false)
			if lerr != nil {
				err = lerr
				return
			}
			defer dput(m.t, d)
			inode := d.Inode()
			if inode == nil || !inode.IsDir() {
				return
			}
			inode.Rwsem.Lock()
			defer inode.Rwsem.Unlock()
			fmt.Fprintf(&b, "== %s\n", path)
			switch inode.SB().Type {
			case ext4.Type:
				b.WriteString(ext4.DumpDir(m.t, ext4.EXT4_I(inode)))
				if cerr := ext4.CheckDir(m.t, ext4.EXT4_I(inode)); cerr != nil {
					fmt.Fprintf(&b, "check: FAIL: %v\n", cerr)
				}
			case f2fs.Type:
				b.WriteString(f2fs.DumpDir(m.t, f2fs.F2FS_I(inode)))
				if cerr := f2fs.CheckDir(m.t, f2fs.F2FS_I(inode)); cerr != nil {
					fmt.Fprintf(&b, "check: FAIL: %v\n", cerr)
				}
			}
			b.WriteByte('\n')
		}()
		if err != nil {
			fmt.Fprintf(&b, "== %s: %s\n", path, fault.ErrName(err))
			return
		}
		ds, err := m.getdents(path)
		if err != nil {
			return
		}
		for _, d := range ds {
			if d.Name == "." || d.Name == ".." || d.Type != vfs.DT_DIR {
				continue
			}
			walk(path + "/" + d.Name)
		}
	}
	walk(workDir)
	return b.String()
}

// observation is what the look after a step saw: the namespace's
// snapshot and walk, the dcache's violations (before drop_caches, while
// the tree is populated) and the live inode objects after it.
type observation struct {
	snap   string
	es     []nsmodel.Entry
	tree   []string
	inodes int64
}

// observe is what follows every step: the namespace's snapshot, the
// dcache check, then drop_caches, so that the next step's lookups reach
// the filesystem whatever the snapshot looked up (the reproducer's
// observe does the same).
func (m *machine) observe() observation {
	var o observation
	o.snap, o.es = m.snapshot()
	o.tree = m.checkTree()
	m.sys.DropCachesAfterWriteback(m.t, 2)
	o.inodes = m.liveInodes()
	return o
}

// snapshot renders the namespace under /d: every path with its type,
// link count and size, in getdents order, one "PATH ..." line each (the
// form fault.KnownFinding reads; inode numbers are left out), and the
// same walk as the namespace model's entries ("." is /d).
func (m *machine) snapshot() (string, []nsmodel.Entry) {
	var b strings.Builder
	var es []nsmodel.Entry
	if st, err := m.p.Lstat(m.t, workDir); err == nil {
		es = append(es, entry(".", st))
	}
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		ds, err := m.getdents(dir)
		if err != nil {
			fmt.Fprintf(&b, "%s %s\n", dir, fault.ErrName(err))
			return
		}
		for _, d := range ds {
			if d.Name == "." || d.Name == ".." {
				continue
			}
			p := dir + "/" + d.Name
			st, err := m.p.Lstat(m.t, p)
			if err != nil {
				fmt.Fprintf(&b, "%s %s\n", p, fault.ErrName(err))
				continue
			}
			es = append(es, entry(strings.TrimPrefix(p, workDir+"/"), st))
			fmt.Fprintf(&b, "%s mode=%o nlink=%d size=%d\n", p, st.Mode, st.Nlink, st.Size)
			if st.Mode&vfs.S_IFMT == vfs.S_IFDIR && depth < walkDepth-1 {
				walk(p, depth+1)
			}
		}
	}
	walk(workDir, 0)
	return b.String(), es
}
