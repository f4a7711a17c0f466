package keys_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/keys"
)

// machine is a kernel with a session keyring "_ses" owned by root, which
// root and the user 1000 share (as su does without pam_keyinit).
type machine struct {
	t          *kernel.Task
	svc        *keys.Service
	ses        *keys.Key
	root, user *kernel.Cred
	clock      int64
}

func newMachine(tb testing.TB) *machine {
	tb.Helper()
	k := kernel.New()
	m := &machine{t: k.NewTask("keyctl"), svc: keys.Of(k)}
	tb.Cleanup(m.t.Exit)
	m.svc.SetClock(func() int64 { return m.clock })
	ses, err := keys.JoinSessionKeyring(m.t, kernel.RootCred)
	if err != nil {
		tb.Fatal(err)
	}
	m.ses = ses
	m.root = &kernel.Cred{UID: 0, CapSysAdmin: true, CapFowner: true, SessionKeyring: ses}
	m.user = &kernel.Cred{UID: 1000, GID: 1000, SessionKeyring: ses}
	return m
}

func (m *machine) line(tb testing.TB, cred *kernel.Cred, serial int32) string {
	tb.Helper()
	for _, l := range strings.Split(keys.ProcKeys(m.t, cred), "\n") {
		if strings.HasPrefix(l, fmt.Sprintf("%08x ", uint32(serial))) {
			return l
		}
	}
	return ""
}

func (m *machine) users(uid int) string {
	for _, l := range strings.Split(keys.ProcKeyUsers(m.t), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), fmt.Sprintf("%d:", uid)) {
			return l
		}
	}
	return ""
}

// TestQuota: a key charges its owner one key and the length of its
// description plus one plus its payload (key_alloc, user_preparse); with
// maxkeys set to what the user has plus two, the third add_key is EDQUOT
// and nothing is charged for it; unlinking a key gives its quota back
// (key_put). Root's quota is root_maxkeys and root_maxbytes.
func TestQuota(t *testing.T) {
	m := newMachine(t)
	id, err := keys.AddKey(m.t, m.user, "user", "desc", []byte("12345"), keys.SpecSessionKeyring)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.users(1000); got != " 1000:     1 1/1 1/200 10/20000" {
		t.Errorf("/proc/key-users after one key: %q", got)
	}
	if err := m.svc.WriteSysctl("maxkeys", []byte("3\n")); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := keys.AddKey(m.t, m.user, "user", fmt.Sprint("k", i), []byte("x"), keys.SpecSessionKeyring); err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
	}
	if _, err := keys.AddKey(m.t, m.user, "user", "one-too-many", []byte("x"), keys.SpecSessionKeyring); err != errno.EDQUOT {
		t.Fatalf("past maxkeys: %v, want EDQUOT", err)
	}
	if got := m.users(1000); got != " 1000:     3 3/3 3/3 18/20000" {
		t.Errorf("/proc/key-users at the quota: %q", got)
	}
	if err := keys.KeyctlUnlink(m.t, m.user, id, keys.SpecSessionKeyring); err != nil {
		t.Fatal(err)
	}
	if got := m.users(1000); got != " 1000:     2 2/2 2/3 8/20000" {
		t.Errorf("/proc/key-users after the unlink: %q", got)
	}
	if _, err := keys.AddKey(m.t, m.user, "user", "fits-again", []byte("x"), keys.SpecSessionKeyring); err != nil {
		t.Errorf("after the unlink: %v", err)
	}
	// maxbytes: 20 bytes, all of them taken (8 + 12).
	m.svc.WriteSysctl("maxkeys", []byte("200"))
	m.svc.WriteSysctl("maxbytes", []byte("20"))
	if _, err := keys.AddKey(m.t, m.user, "user", "b", []byte("x"), keys.SpecSessionKeyring); err != errno.EDQUOT {
		t.Errorf("past maxbytes: %v, want EDQUOT", err)
	}
	if _, err := keys.AddKey(m.t, m.root, "user", "root-key", []byte("x"), keys.SpecSessionKeyring); err != nil {
		t.Errorf("root under root_maxbytes: %v", err)
	}
	if got := m.users(0); !strings.HasSuffix(got, "/1000000 ") && !strings.Contains(got, "/1000000 ") {
		t.Errorf("root's line %q lacks root_maxkeys", got)
	}
}

// TestProcKeysFormat: /proc/keys's columns as proc_keys_show prints
// them, the default permissions of add_key (a user key readable and
// writable by its possessor, a logon key not readable), the view rule
// (another user sees a key only through possession or the other bits),
// revocation (R, and EKEYREVOKED from a search) and invalidation (gone at
// once, with its quota).
func TestProcKeysFormat(t *testing.T) {
	m := newMachine(t)
	uk, err := keys.AddKey(m.t, m.user, "user", "fscrypt:0011223344556677", []byte("secret payload"), keys.SpecSessionKeyring)
	if err != nil {
		t.Fatal(err)
	}
	lk, err := keys.AddKey(m.t, m.user, "logon", "ext4:0011223344556677", []byte("x"), keys.SpecSessionKeyring)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^[0-9a-f]{8} I--Q---     1 perm 3f010000  1000  1000 user      fscrypt:0011223344556677: 14$`)
	if l := m.line(t, m.user, uk); !re.MatchString(l) {
		t.Errorf("user key line %q", l)
	}
	if l := m.line(t, m.user, lk); !strings.Contains(l, " perm 3d010000  1000  1000 logon     ext4:0011223344556677: 1") {
		t.Errorf("logon key line %q", l)
	}
	if l := m.line(t, m.root, m.ses.Serial()); !strings.Contains(l, " I--Q--- ") || !strings.Contains(l, "perm 3f030000     0     0 keyring   _ses: 2") {
		t.Errorf("session keyring line %q", l)
	}
	// Without possession another uid sees neither key (no other bits).
	other := &kernel.Cred{UID: 2000, GID: 2000}
	if l := m.line(t, other, uk); l != "" {
		t.Errorf("uid 2000 sees %q", l)
	}
	if _, err := keys.KeyctlRead(m.t, m.user, lk); err != errno.EOPNOTSUPP {
		t.Errorf("reading a logon key: %v, want EOPNOTSUPP", err)
	}
	if got, err := keys.KeyctlRead(m.t, m.user, uk); err != nil || string(got) != "secret payload" {
		t.Errorf("reading a user key: %q, %v", got, err)
	}
	d, err := keys.KeyctlDescribe(m.t, m.user, uk)
	if err != nil || d != "user;1000;1000;3f010000;fscrypt:0011223344556677" {
		t.Errorf("describe: %q, %v", d, err)
	}

	if err := keys.KeyctlRevoke(m.t, m.user, uk); err != nil {
		t.Fatal(err)
	}
	if l := m.line(t, m.user, uk); !strings.Contains(l, " IR-Q--- ") || !strings.HasSuffix(l, "fscrypt:0011223344556677: 0") {
		t.Errorf("revoked key line %q", l)
	}
	if _, err := keys.KeyctlSearch(m.t, m.user, keys.SpecSessionKeyring, "user", "fscrypt:0011223344556677", 0); err != errno.EKEYREVOKED {
		t.Errorf("search for a revoked key: %v", err)
	}
	if err := keys.KeyctlRevoke(m.t, m.user, uk); err != errno.EKEYREVOKED {
		t.Errorf("revoking twice: %v", err)
	}
	// keyctl read finds the key (KEY_DEFER_PERM_CHECK) and then refuses
	// it (__keyctl_read_key's key_validate); describe's lookup does.
	if _, err := keys.KeyctlRead(m.t, m.user, uk); err != errno.EKEYREVOKED {
		t.Errorf("reading a revoked key: %v", err)
	}
	if _, err := keys.KeyctlDescribe(m.t, m.user, uk); err != errno.EKEYREVOKED {
		t.Errorf("describing a revoked key: %v", err)
	}
	if _, err := keys.KeyctlRead(m.t, m.user, 12345); err != errno.ENOKEY {
		t.Errorf("reading no key: %v", err)
	}
	if err := keys.KeyctlInvalidate(m.t, m.user, lk); err != nil {
		t.Fatal(err)
	}
	if l := m.line(t, m.user, lk); l != "" {
		t.Errorf("invalidated key still listed: %q", l)
	}
	if got := m.users(1000); got != " 1000:     1 1/1 1/200 25/20000" {
		t.Errorf("after invalidation: %q", got)
	}
}

// TestKeyringSemantics: a keyring links one key per type and description
// (add_key of a user key's description updates it in place; a new
// keyring of the same name replaces the link), newring's name may not
// start with '.', links that would make a cycle are EDEADLK, and a
// nested keyring is searched.
func TestKeyringSemantics(t *testing.T) {
	m := newMachine(t)
	a, _ := keys.AddKey(m.t, m.root, "user", "same", []byte("one"), keys.SpecSessionKeyring)
	b, err := keys.AddKey(m.t, m.root, "user", "same", []byte("two"), keys.SpecSessionKeyring)
	if err != nil || a != b {
		t.Fatalf("update in place: %d %d %v", a, b, err)
	}
	if got, _ := keys.KeyctlRead(m.t, m.root, a); string(got) != "two" {
		t.Errorf("updated payload %q", got)
	}
	if _, err := keys.AddKey(m.t, m.root, "keyring", ".dot", nil, keys.SpecSessionKeyring); err != errno.EPERM {
		t.Errorf("keyring named .dot: %v", err)
	}
	r1, err := keys.AddKey(m.t, m.root, "keyring", "xfstests", nil, keys.SpecSessionKeyring)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := keys.AddKey(m.t, m.root, "logon", "fscrypt:aa", []byte("k"), r1)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := keys.KeyctlSearch(m.t, m.root, keys.SpecSessionKeyring, "logon", "fscrypt:aa", 0); err != nil || got != inner {
		t.Errorf("nested search: %d %v", got, err)
	}
	if err := keys.KeyctlLink(m.t, m.root, m.ses.Serial(), r1); err != errno.EDEADLK {
		t.Errorf("cycle: %v", err)
	}
	r2, err := keys.AddKey(m.t, m.root, "keyring", "xfstests", nil, keys.SpecSessionKeyring)
	if err != nil || r2 == r1 {
		t.Fatalf("second newring: %d %v", r2, err)
	}
	// The first keyring lost its only link and went, and its key with it.
	if _, err := keys.KeyctlDescribe(m.t, m.root, inner); err != errno.ENOKEY {
		t.Errorf("key of a replaced keyring: %v", err)
	}
	if _, err := keys.AddKey(m.t, m.root, "nosuchtype", "d", []byte("x"), keys.SpecSessionKeyring); err != errno.ENODEV {
		t.Errorf("unknown type: %v", err)
	}
	if _, err := keys.AddKey(m.t, m.root, "logon", "nocolon", []byte("x"), keys.SpecSessionKeyring); err != errno.EINVAL {
		t.Errorf("logon without a service prefix: %v", err)
	}
	if _, err := keys.KeyctlSearch(m.t, m.root, keys.SpecSessionKeyring, "user", "absent", 0); err != errno.ENOKEY {
		t.Errorf("absent: %v", err)
	}
}

// TestTimeoutAndGC: a key with a timeout shows the time left, then
// "expd" and EKEYEXPIRED; gc_delay seconds after its expiry the garbage
// collector unlinks it and its quota is released.
func TestTimeoutAndGC(t *testing.T) {
	m := newMachine(t)
	id, _ := keys.AddKey(m.t, m.user, "user", "soon", []byte("x"), keys.SpecSessionKeyring)
	if err := keys.KeyctlSetTimeout(m.t, m.user, id, 90); err != nil {
		t.Fatal(err)
	}
	if l := m.line(t, m.user, id); !strings.Contains(l, "    1   1m 3f010000") {
		t.Errorf("with 90 s left: %q", l)
	}
	m.clock += 100
	if l := m.line(t, m.user, id); !strings.Contains(l, " expd ") {
		t.Errorf("expired: %q", l)
	}
	if _, err := keys.KeyctlSearch(m.t, m.user, keys.SpecSessionKeyring, "user", "soon", 0); err != errno.EKEYEXPIRED {
		t.Errorf("search: %v", err)
	}
	m.clock += keys.DefaultGCDelay
	if l := m.line(t, m.user, id); l != "" {
		t.Errorf("collected key still listed: %q", l)
	}
	if got := m.users(1000); got != "" {
		t.Errorf("user record after the collection: %q", got)
	}
}

// TestSysctls: proc_dointvec_minmax: a decimal integer in [1, INT_MAX]
// (gc_delay from 0), white space around it allowed.
func TestSysctls(t *testing.T) {
	m := newMachine(t)
	for _, c := range []struct {
		name, in string
		err      error
		out      string
	}{
		{"maxkeys", "5\n", nil, "5\n"},
		{"maxkeys", "  7  ", nil, "7\n"},
		{"maxkeys", "0", errno.EINVAL, "7\n"},
		{"maxkeys", "-1", errno.EINVAL, "7\n"},
		{"maxkeys", "x", errno.EINVAL, "7\n"},
		{"maxkeys", "2147483648", errno.EINVAL, "7\n"},
		{"maxbytes", "2147483647", nil, "2147483647\n"},
		{"gc_delay", "0", nil, "0\n"},
		{"root_maxbytes", "", errno.EINVAL, "25000000\n"},
	} {
		if err := m.svc.WriteSysctl(c.name, []byte(c.in)); err != c.err {
			t.Errorf("%s <- %q: %v, want %v", c.name, c.in, err, c.err)
		}
		if got, _ := m.svc.ReadSysctl(c.name); got != c.out {
			t.Errorf("%s after %q: %q, want %q", c.name, c.in, got, c.out)
		}
	}
	if got, _ := m.svc.ReadSysctl("persistent_keyring_expiry"); got != "259200\n" {
		t.Errorf("persistent_keyring_expiry %q", got)
	}
}

// TestUserKeyrings: @u and @us are "_uid.UID" and "_uid_ses.UID", made
// on first use and charged to the uid; the user session keyring links
// the user keyring.
func TestUserKeyrings(t *testing.T) {
	m := newMachine(t)
	u, err := keys.KeyctlGetKeyringID(m.t, m.user, keys.SpecUserKeyring, true)
	if err != nil {
		t.Fatal(err)
	}
	us, err := keys.KeyctlGetKeyringID(m.t, m.user, keys.SpecUserSessionKeyring, true)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := keys.KeyctlDescribe(m.t, m.user, u); d != "keyring;1000;65534;1f3f0000;_uid.1000" {
		t.Errorf("@u: %q", d)
	}
	if d, _ := keys.KeyctlDescribe(m.t, m.user, us); d != "keyring;1000;65534;1f3f0000;_uid_ses.1000" {
		t.Errorf("@us: %q", d)
	}
	if got := m.users(1000); !strings.Contains(got, " 2/2 2/200 ") {
		t.Errorf("user keyrings charged: %q", got)
	}
	if l := m.line(t, m.user, us); !strings.HasSuffix(l, "_uid_ses.1000: 1") {
		t.Errorf("@us line %q", l)
	}
}
