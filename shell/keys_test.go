package shell

import (
	"regexp"
	"strings"
	"testing"
)

// TestKeysProcfs: /proc/keys, /proc/key-users and the keys sysctls as the
// machine's processes see them: the sysctls' defaults and
// proc_dointvec_minmax's range (0 for maxkeys is EINVAL, and the value
// stays), root's to write (fsgqa's open is EACCES), /proc/keys and
// /proc/key-users read-only (mode 0444), and ls of /proc/sys/kernel/keys.
func TestKeysProcfs(t *testing.T) {
	for _, tc := range []struct {
		name, script, want string
		status             int
	}{
		{"defaults", `for f in maxkeys maxbytes root_maxkeys root_maxbytes gc_delay persistent_keyring_expiry; do cat /proc/sys/kernel/keys/$f; done`,
			"200\n20000\n1000000\n25000000\n300\n259200\n", 0},
		{"range", `echo 0 > /proc/sys/kernel/keys/maxkeys; cat /proc/sys/kernel/keys/maxkeys; echo 7 > /proc/sys/kernel/keys/maxkeys; cat /proc/sys/kernel/keys/maxkeys`,
			"sh: write error: Invalid argument\n200\n7\n", 0},
		{"root's to write", `su fsgqa -c "echo 7 > /proc/sys/kernel/keys/maxkeys"; cat /proc/sys/kernel/keys/maxkeys`,
			"sh: /proc/sys/kernel/keys/maxkeys: Permission denied\n200\n", 0},
		{"read-only files", `stat -c '%a %n' /proc/keys /proc/key-users /proc/sys/kernel/keys /proc/sys/kernel/keys/gc_delay; su fsgqa -c "echo x > /proc/keys"`,
			"444 /proc/keys\n444 /proc/key-users\n555 /proc/sys/kernel/keys\n644 /proc/sys/kernel/keys/gc_delay\nsh: /proc/keys: Permission denied\n", 1},
		{"listing", `ls /proc/sys/kernel/keys; ls /proc | grep key`,
			"gc_delay\nmaxbytes\nmaxkeys\npersistent_keyring_expiry\nroot_maxbytes\nroot_maxkeys\nkey-users\nkeys\n", 0},
		{"root's record and the session keyring", `cat /proc/key-users; grep -c ' keyring   _ses: empty$' /proc/keys`,
			"    0:     4 3/3 1/1000000 5/25000000\n1\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, st := runScript(t, "", "-c", tc.script)
			if got != tc.want || st != tc.status {
				t.Errorf("output %q status %d; want %q, status %d", got, st, tc.want, tc.status)
			}
		})
	}
}

// TestKeyQuotaFscrypt is generic/581's quota part: with maxkeys set to
// fsgqa's keys plus 5, its sixth FS_IOC_ADD_ENCRYPTION_KEY is EDQUOT
// ("Disk quota exceeded"); each key added is one ".fscrypt" key of 106
// bytes (41 of description, a NUL, 64 reserved), and an unmount gives
// them back.
func TestKeyQuotaFscrypt(t *testing.T) {
	const script = `_scratch_mkfs_encrypted >/dev/null; _scratch_mount; chmod 777 $SCRATCH_MNT
orig_keys=$(_user_do "awk '/^[[:space:]]*$(id -u fsgqa):/{print \$4}' /proc/key-users | cut -d/ -f1")
: ${orig_keys:=0}
echo $((orig_keys + 5)) > /proc/sys/kernel/keys/maxkeys
for i in $(seq 6); do _user_do_add_enckey $SCRATCH_MNT "$(_generate_raw_encryption_key)" | sed 's/ with identifier .*$//'; done
grep ' 1000:' /proc/key-users
_user_do "cat /proc/keys" | grep -c ' .fscrypt  [0-9a-f]*\.uid\.1000$'
echo 200 > /proc/sys/kernel/keys/maxkeys
_scratch_cycle_mount
grep -c ' 1000:' /proc/key-users`
	got, st := runScript(t, "", "-c", script)
	want := strings.Repeat("Added encryption key\n", 5) + "Error adding encryption key: Disk quota exceeded\n" +
		" 1000:     5 5/5 5/5 530/20000\n5\n0\n"
	if got != want || st != 1 {
		t.Errorf("output %q status %d; want %q, status 1", got, st, want)
	}
}

// TestProvisioningKeyctl is generic/593's kernel side through keyctl and
// xfs_io: an "fscrypt-provisioning" key adds the filesystem key by
// key_id (add_enckey -k), a key_id that names nothing is ENOKEY (not
// EINVAL: _require_add_enckey_by_key_id passes), bad payloads are EINVAL,
// the key cannot be read back, and the wrong payload type or another key
// type is EKEYREJECTED.
func TestProvisioningKeyctl(t *testing.T) {
	const script = `prov() { local t=$(printf '\\x%02x\\x00\\x00\\x00' $2); echo -n -e "${t}\x00\x00\x00\x00$3" | keyctl padd fscrypt-provisioning "$1" $ring; }
ring=$(keyctl newring xfstests @s)
_scratch_mkfs_encrypted >/dev/null; _scratch_mount
xfs_io -c "add_enckey -k 12345" $SCRATCH_MNT
mkdir $SCRATCH_MNT/d; _add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null; _set_encpolicy $SCRATCH_MNT/d $TEST_KEY_IDENTIFIER
echo contents > $SCRATCH_MNT/d/f; _scratch_cycle_mount
key=$(prov id 2 "$TEST_RAW_KEY"); xfs_io -c "add_enckey -k $key" $SCRATCH_MNT; cat $SCRATCH_MNT/d/f
grep -c ' fscrypt-p id: 72 \[2\]$' /proc/keys
prov bad 0 "$TEST_RAW_KEY"; prov bad 1 "\x01"; prov bad 1 "$TEST_RAW_KEY$TEST_RAW_KEY"
keyctl read $key
xfs_io -c "add_enckey -k $key -d $TEST_KEY_DESCRIPTOR" $SCRATCH_MNT
key=$(prov v1 1 "$TEST_RAW_KEY"); xfs_io -c "add_enckey -k $key" $SCRATCH_MNT
key=$(echo -n 0123456789abcdef | keyctl padd logon foo:desc $ring); xfs_io -c "add_enckey -k $key" $SCRATCH_MNT`
	got, _ := runScript(t, "", "-c", script)
	want := "Error adding encryption key: Required key not available\n" +
		"Added encryption key with identifier 69b2f6edeee720cce0577937eb8a6751\ncontents\n1\n" +
		"add_key: Invalid argument\nadd_key: Invalid argument\nadd_key: Invalid argument\n" +
		"keyctl_read_alloc: Operation not supported\n" +
		"Error adding encryption key: Key was rejected by service\n" +
		"Error adding encryption key: Key was rejected by service\n" +
		"Error adding encryption key: Key was rejected by service\n"
	if got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
}

// TestKeyctlFormats: keyctl describe, list, show and /proc/keys lines as
// keyutils and proc_keys_show print them, with add_key's default
// permissions; keyctl unlink without a keyring unlinks from the session
// tree ("1 links removed").
func TestKeyctlFormats(t *testing.T) {
	got, _ := runScript(t, "", "-c", `r=$(keyctl newring ring @s); u=$(keyctl add user k v $r); keyctl describe $u; keyctl list $r; keyctl show; grep ' user ' /proc/keys; keyctl unlink $u; keyctl list $r`)
	for _, re := range []string{
		`(?m)^ *\d+: alswrv-----v------------     0     0 user: k$`,
		`(?m)^1 key in keyring:\n *\d+: --alswrv     0     0 user: k$`,
		`(?m)^Session Keyring\n *\d+ --alswrv      0     0  keyring: _ses\n *\d+ --alswrv      0     0   \\_ keyring: ring\n *\d+ --alswrv      0     0       \\_ user: k$`,
		`(?m)^[0-9a-f]{8} I--Q---     1 perm 3f010000     0     0 user      k: 1$`,
		`(?m)^1 links removed\nkeyring is empty$`,
	} {
		if !regexp.MustCompile(re).MatchString(got) {
			t.Errorf("output lacks %s:\n%s", re, got)
		}
	}
}
