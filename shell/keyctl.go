package shell

import (
	"fmt"

	"github.com/vfslab/vfslab/errno"
	"io"
	"sort"
	"strconv"
	"strings"
)

// keyring is the session keyring keyctl(1) manages (security/keys): keys
// with a type, a description and a payload, named by serial numbers.
// Every process of the machine is subscribed to it (su keeps the session
// keyring, as it does without pam_keyinit), and fscrypt searches it for
// the "logon" keys "fscrypt:DESCRIPTOR" or "ext4:"/"f2fs:DESCRIPTOR" of v1
// policies (fs/crypto/keysetup_v1.c find_and_lock_process_key).
type keyring struct {
	next int32
	keys map[int32]*key
}

type key struct {
	typ, desc string
	payload   []byte
	// revoked is keyctl revoke: the key stays linked, but its payload
	// is gone and a search for it fails with EKEYREVOKED.
	revoked bool
}

// sessionKeyring is the machine's session keyring as a process's cred
// names it (kernel.KeyringLookup): the keyring installed now, so that
// keyctl new_session (join_session_keyring) reaches every process.
type sessionKeyring struct{ m *Machine }

// RequestKey implements kernel.KeyringLookup: request_key() of a key
// already in the session keyring. The caller holds the machine lock (a
// syscall runs under it), so the keyring cannot change meanwhile.
func (s sessionKeyring) RequestKey(typ, desc string) ([]byte, error) {
	if k := s.m.session.find(typ, desc); k != nil {
		if k.revoked {
			return nil, errno.EKEYREVOKED
		}
		return k.payload, nil
	}
	return nil, errno.ENOKEY
}

// find is the key of type typ and description desc, or nil (the lowest
// serial first, so that the answer does not depend on map order).
func (kr *keyring) find(typ, desc string) *key {
	var best int32
	for id, k := range kr.keys {
		if k.typ == typ && k.desc == desc && (best == 0 || id < best) {
			best = id
		}
	}
	return kr.keys[best]
}

func newKeyring() *keyring { return &keyring{next: 100000000, keys: map[int32]*key{}} }

const keyctlUsage = `Usage: keyctl add <type> <desc> <data> <keyring>
       keyctl padd <type> <desc> <keyring>
       keyctl unlink <key> [<keyring>]
       keyctl search <keyring> <type> <desc>
       keyctl show [<keyring>]
       keyctl clear <keyring>
       keyctl new_session
`

func cmdKeyctl(c *cmd) int {
	if len(c.args) == 0 {
		io.WriteString(c.errw, keyctlUsage)
		return 2
	}
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	kr := c.m.session
	args := c.args[1:]
	add := func(typ, desc string, data []byte) int {
		for id, k := range kr.keys {
			if k.typ == typ && k.desc == desc {
				k.payload = data
				fmt.Fprintln(c.out, id)
				return 0
			}
		}
		kr.next++
		kr.keys[kr.next] = &key{typ: typ, desc: desc, payload: data}
		fmt.Fprintln(c.out, kr.next)
		return 0
	}
	switch c.args[0] {
	case "add":
		if len(args) != 4 {
			io.WriteString(c.errw, keyctlUsage)
			return 2
		}
		return add(args[0], args[1], []byte(args[2]))
	case "padd":
		if len(args) != 3 {
			io.WriteString(c.errw, keyctlUsage)
			return 2
		}
		c.m.mu.Unlock()
		data, _ := io.ReadAll(c.in)
		c.m.mu.Lock()
		return add(args[0], args[1], data)
	case "unlink", "revoke", "invalidate":
		if len(args) < 1 {
			io.WriteString(c.errw, keyctlUsage)
			return 2
		}
		id, err := strconv.ParseInt(strings.TrimPrefix(args[0], "%"), 10, 32)
		if _, ok := kr.keys[int32(id)]; err != nil || !ok {
			fmt.Fprintln(c.errw, "keyctl_unlink: Required key not available")
			return 1
		}
		switch c.args[0] {
		case "revoke":
			kr.keys[int32(id)].revoked = true
			kr.keys[int32(id)].payload = nil
		case "unlink":
			delete(kr.keys, int32(id))
			fmt.Fprintln(c.out, "1 links removed")
		default:
			delete(kr.keys, int32(id))
		}
		return 0
	case "search", "request":
		if len(args) < 3 {
			io.WriteString(c.errw, keyctlUsage)
			return 2
		}
		for id, k := range kr.keys {
			if k.typ == args[1] && k.desc == args[2] {
				if k.revoked {
					fmt.Fprintln(c.errw, "keyctl_search: Key has been revoked")
					return 1
				}
				fmt.Fprintln(c.out, id)
				return 0
			}
		}
		fmt.Fprintln(c.errw, "keyctl_search: Required key not available")
		return 1
	case "show":
		fmt.Fprintln(c.out, "Session Keyring")
		var ids []int32
		for id := range kr.keys {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		fmt.Fprintf(c.out, "%10d --alswrv %5d %5d  keyring: _ses\n", 100000000, c.uid, c.uid)
		for _, id := range ids {
			k := kr.keys[id]
			fmt.Fprintf(c.out, "%10d --alswrv %5d %5d   \\_ %s: %s\n", id, c.uid, c.uid, k.typ, k.desc)
		}
		return 0
	case "clear":
		kr.keys = map[int32]*key{}
		return 0
	case "new_session":
		c.m.session = newKeyring()
		fmt.Fprintln(c.out, c.m.session.next)
		return 0
	case "link", "setperm":
		return 0
	}
	fmt.Fprintf(c.errw, "keyctl: Unknown command\n")
	io.WriteString(c.errw, keyctlUsage)
	return 2
}
