package keys

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// ProcKeys renders /proc/keys as cred's process reads it
// (security/keys/proc.c proc_keys_show): one line per key it may view,
// in serial order:
//
//	SERIAL FLAGS USAGE TIMEOUT PERM UID GID TYPE DESCRIPTION
//
// with the serial and permissions in hex, the flags I (instantiated), R
// (revoked), D (dead), Q (in the quota), U (under construction), N
// (negative) and i (invalidated), and the timeout "perm", "expd" or the
// time left (s, m, h, d, w). A key is viewable with view permission,
// counting the possessor's when the reader's keyrings reach it.
func ProcKeys(t *kernel.Task, cred *kernel.Cred) string {
	s := Of(t.K)
	s.mu.Lock()
	defer s.mu.Unlock()
	if cred == nil {
		cred = kernel.RootCred
	}
	s.reap(t)
	now := s.now()
	var b strings.Builder
	for _, k := range s.sortedKeys() {
		ref := KeyRef{Key: k}
		if k.perm&PosView != 0 {
			ref.Possessed = s.possessed(t, cred, k)
		}
		if s.permission(ref, cred, NeedView) != nil {
			continue
		}
		fl := []byte("-------")
		for i, f := range []struct {
			on bool
			c  byte
		}{
			{k.state != stateUninstantiated, 'I'}, {k.flag(FlagRevoked), 'R'}, {k.flag(FlagDead), 'D'},
			{k.flag(FlagInQuota), 'Q'}, {false, 'U'}, {k.state < 0, 'N'}, {k.flag(FlagInvalidated), 'i'},
		} {
			if f.on {
				fl[i] = f.c
			}
		}
		fmt.Fprintf(&b, "%08x %s %5d %4s %08x %5d %5d %-9.9s ", uint32(k.serial), fl, k.usage, timeout(k.expiry, now),
			k.perm, k.uid, mungedGID(k.gid), k.typ.Name)
		if k.typ.Describe != nil {
			k.typ.Describe(k, &b)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// timeout is proc_keys_show's timeout column.
func timeout(expiry, now int64) string {
	switch {
	case expiry == timeMax:
		return "perm"
	case now >= expiry:
		return "expd"
	}
	timo := expiry - now
	switch {
	case timo < 60:
		return fmt.Sprintf("%ds", timo)
	case timo < 60*60:
		return fmt.Sprintf("%dm", timo/60)
	case timo < 60*60*24:
		return fmt.Sprintf("%dh", timo/(60*60))
	case timo < 60*60*24*7:
		return fmt.Sprintf("%dd", timo/(60*60*24))
	}
	return fmt.Sprintf("%dw", timo/(60*60*24*7))
}

// ProcKeyUsers renders /proc/key-users (proc_key_users_show): one line
// per uid with keys, in uid order:
//
//	UID: USAGE NKEYS/NIKEYS QNKEYS/MAXKEYS QNBYTES/MAXBYTES
func ProcKeyUsers(t *kernel.Task) string {
	s := Of(t.K)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reap(t)
	uids := make([]uint32, 0, len(s.users))
	for uid := range s.users {
		uids = append(uids, uid)
	}
	sort.Slice(uids, func(i, j int) bool { return uids[i] < uids[j] })
	var b strings.Builder
	for _, uid := range uids {
		u := s.users[uid]
		maxKeys, maxBytes := s.quotaOf(uid)
		fmt.Fprintf(&b, "%5d: %5d %d/%d %d/%d %d/%d\n", uid, u.Usage, u.NKeys, u.NIKeys, u.QNKeys, maxKeys, u.QNBytes, maxBytes)
	}
	return b.String()
}

// reap is the garbage collector's pass over the expired keys: links to a
// key gc_delay past its expiry go (key_gc_keyring).
func (s *Service) reap(t *kernel.Task) {
	now := s.now()
	for _, k := range s.serials {
		if k.expiry != timeMax && k.expiry+int64(s.gcDelay) <= now {
			s.gcLinks(t)
			return
		}
	}
}

// Sysctls are the files of /proc/sys/kernel/keys (security/keys/
// sysctl.c), in its table's order.
var Sysctls = []string{"maxkeys", "maxbytes", "root_maxkeys", "root_maxbytes", "gc_delay", "persistent_keyring_expiry"}

// sysctl is the variable behind name, and its minimum (extra1).
func (s *Service) sysctl(name string) (*uint32, uint32, bool) {
	switch name {
	case "maxkeys":
		return &s.maxKeys, 1, true
	case "maxbytes":
		return &s.maxBytes, 1, true
	case "root_maxkeys":
		return &s.rootMaxKeys, 1, true
	case "root_maxbytes":
		return &s.rootMaxBytes, 1, true
	case "gc_delay":
		return &s.gcDelay, 0, true
	case "persistent_keyring_expiry":
		return &s.persistentExpiry, 0, true
	}
	return nil, 0, false
}

// ReadSysctl renders /proc/sys/kernel/keys/NAME ("200\n"); ok is false
// for another name.
func (s *Service) ReadSysctl(name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, _, ok := s.sysctl(name)
	if !ok {
		return "", false
	}
	return strconv.FormatUint(uint64(*v), 10) + "\n", true
}

// WriteSysctl is a write(2) of b to /proc/sys/kernel/keys/NAME:
// proc_dointvec_minmax, one decimal integer between the entry's minimum
// (1, or 0 for gc_delay and persistent_keyring_expiry) and INT_MAX,
// leading and trailing white space allowed. Errors: EINVAL, ENOENT (no
// such entry).
func (s *Service) WriteSysctl(name string, b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, min, ok := s.sysctl(name)
	if !ok {
		return errno.ENOENT
	}
	n, err := parseProcInt(b)
	if err != nil || n < int64(min) || n > math.MaxInt32 {
		return errno.EINVAL
	}
	*v = uint32(n)
	return nil
}

// parseProcInt is proc_get_long for one value: spaces, an optional
// sign, decimal digits, then white space or the end.
func parseProcInt(b []byte) (int64, error) {
	s := strings.TrimLeft(string(b), " \t\n")
	end := 0
	if end < len(s) && (s[end] == '-' || s[end] == '+') {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if strings.TrimRight(s[end:], " \t\n") != "" {
		return 0, errno.EINVAL
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(s[:end], "+"), 10, 64)
	if err != nil {
		return 0, errno.EINVAL
	}
	return n, nil
}

// String is the canonical one-line dump of a key: its /proc/keys line's
// fields, "SERIAL TYPE DESCRIPTION uid=U perm=P usage=N flags".
func (k *Key) String() string {
	k.svc.mu.Lock()
	defer k.svc.mu.Unlock()
	var d strings.Builder
	if k.typ.Describe != nil {
		k.typ.Describe(k, &d)
	}
	return fmt.Sprintf("%08x %s %q uid=%d perm=%08x usage=%d flags=%#x", uint32(k.serial), k.typ.Name, d.String(), k.uid, k.perm, k.usage, k.flags)
}

// String is the canonical one-line dump of the service: its users'
// /proc/key-users lines, joined by "; ".
func (s *Service) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	uids := make([]uint32, 0, len(s.users))
	for uid := range s.users {
		uids = append(uids, uid)
	}
	sort.Slice(uids, func(i, j int) bool { return uids[i] < uids[j] })
	var parts []string
	for _, uid := range uids {
		u := s.users[uid]
		parts = append(parts, fmt.Sprintf("%d: %d keys (%d instantiated), quota %d keys %d bytes", uid, u.NKeys, u.NIKeys, u.QNKeys, u.QNBytes))
	}
	return fmt.Sprintf("keys: %d; users %s", len(s.serials), strings.Join(parts, "; "))
}
