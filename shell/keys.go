package shell

import (
	"sort"
	"strings"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/keys"
	"github.com/vfslab/vfslab/vfs"
)

// The machine's keys (package keys, security/keys): one session keyring
// "_ses", made by init at boot (join_session_keyring) and shared by every
// process (su keeps the session keyring, as it does without
// pam_keyinit; keyctl new_session replaces it for all of them), and the
// keys files of procfs:
//
//   - /proc/keys: the keys the reading process may view (proc_keys_show);
//   - /proc/key-users: each uid's key counts and quota (proc_key_users_show);
//   - /proc/sys/kernel/keys/{maxkeys,maxbytes,root_maxkeys,root_maxbytes,
//     gc_delay,persistent_keyring_expiry}: the quotas and delays, read and
//     written as sysctls (proc_dointvec_minmax).

// sessionKeyring is the machine's session keyring as a process's cred
// names it (kernel.Cred.SessionKeyring): the keyring installed now, so
// that keyctl new_session reaches every process.
type sessionKeyring struct{ m *Machine }

// SessionKeyring implements keys.SessionHolder.
func (s sessionKeyring) SessionKeyring() *keys.Key { return s.m.session }

// RequestKey implements kernel.KeyringLookup: request_key() of a key
// reachable from the session keyring (fscrypt's v1 keys).
func (s sessionKeyring) RequestKey(typ, desc string) ([]byte, error) {
	return s.m.session.RequestKey(typ, desc)
}

// bootKeys gives the machine's keys subsystem its clock and init its
// session keyring.
func (m *Machine) bootKeys() error {
	keys.Of(m.k).SetClock(func() int64 { return m.sys.Now() / 1e9 })
	ses, err := keys.JoinSessionKeyring(m.t, kernel.RootCred)
	if err != nil {
		return err
	}
	m.session = ses
	return nil
}

// keysSysctlDir is the directory of the keys sysctls.
const keysSysctlDir = "/proc/sys/kernel/keys"

// keysFile returns the keys file of procfs at p, if p is one, rendered
// for process id.
func (m *Machine) keysFile(p string, id ident) (procFile, bool) {
	switch p {
	case "/proc/keys":
		return procFile{
			read:   func() string { return keys.ProcKeys(m.t, m.procFor(id).Cred) },
			write:  func([]byte) error { return errno.EIO },
			access: m.readOnlyAccess(id),
		}, true
	case "/proc/key-users":
		return procFile{
			read:   func() string { return keys.ProcKeyUsers(m.t) },
			write:  func([]byte) error { return errno.EIO },
			access: m.readOnlyAccess(id),
		}, true
	}
	name, ok := strings.CutPrefix(p, keysSysctlDir+"/")
	if !ok {
		return procFile{}, false
	}
	svc := keys.Of(m.k)
	if _, ok := svc.ReadSysctl(name); !ok {
		return procFile{}, false
	}
	return procFile{
		read: func() string {
			s, _ := svc.ReadSysctl(name)
			return s
		},
		write: func(b []byte) error { return svc.WriteSysctl(name, b) },
		// The sysctls are root's to write (mode 0644).
		access: func(write bool) error {
			if write && m.procFor(id).Cred.UID != 0 {
				return errno.EACCES
			}
			return nil
		},
	}, true
}

// readOnlyAccess is the open check of a 0444 procfs file: EACCES for
// writing but for root (CAP_DAC_OVERRIDE), whose writes are then EIO
// (proc_reg_write without ->proc_write).
func (m *Machine) readOnlyAccess(id ident) func(bool) error {
	return func(write bool) error {
		if write && m.procFor(id).Cred.UID != 0 {
			return errno.EACCES
		}
		return nil
	}
}

// procFileFor is the procfs or sysfs file at p for process id: a keys
// file or a fault-injection one.
func (m *Machine) procFileFor(p string, id ident) (procFile, bool) {
	if pf, ok := m.keysFile(p, id); ok {
		return pf, true
	}
	return m.faultFile(p)
}

// keysStat is stat(2) of the keys files and their directories.
func (m *Machine) keysStat(p string) (vfs.Stat, bool) {
	switch p {
	case "/proc/sys/kernel", keysSysctlDir:
		return vfs.Stat{Mode: vfs.S_IFDIR | 0o555, Nlink: 2, Ino: 7}, true
	case "/proc/keys", "/proc/key-users":
		return vfs.Stat{Mode: vfs.S_IFREG | 0o444, Nlink: 1, Ino: 8}, true
	}
	if _, ok := m.keysFile(p, rootIdent); ok {
		return vfs.Stat{Mode: vfs.S_IFREG | 0o644, Nlink: 1, Ino: 8}, true
	}
	return vfs.Stat{}, false
}

// keysDirents lists the keys sysctls' directories, or reports that p is
// neither.
func keysDirents(p string) ([]vfs.Dirent, bool) {
	var names []string
	typ := uint8(vfs.DT_DIR)
	switch p {
	case "/proc/sys/kernel":
		names = []string{"keys"}
	case keysSysctlDir:
		names, typ = append([]string(nil), keys.Sysctls...), vfs.DT_REG
	default:
		return nil, false
	}
	sort.Strings(names)
	out := []vfs.Dirent{{Name: ".", Type: vfs.DT_DIR, Ino: 1}, {Name: "..", Type: vfs.DT_DIR, Ino: 1}}
	for i, n := range names {
		out = append(out, vfs.Dirent{Name: n, Type: typ, Ino: uint64(20 + i)})
	}
	return out, true
}

// keysParentDirents are the entries a real directory of the machine lists
// for the keys files below it: /proc lists keys and key-users, /proc/sys
// lists kernel.
func keysParentDirents(p string) []vfs.Dirent {
	switch p {
	case "/proc":
		return []vfs.Dirent{{Name: "key-users", Type: vfs.DT_REG, Ino: 18}, {Name: "keys", Type: vfs.DT_REG, Ino: 19}}
	case "/proc/sys":
		return []vfs.Dirent{{Name: "kernel", Type: vfs.DT_DIR, Ino: 17}}
	}
	return nil
}
