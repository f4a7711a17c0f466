package shell

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// keyring is the session keyring keyctl(1) manages (security/keys): keys
// with a type, a description and a payload, named by serial numbers.
//
// The model's fscrypt does not search process keyrings for v1 policies
// (fs/crypto/keysetup_v1.c find_and_lock_process_key is not modelled), so
// a "logon" key "fscrypt:DESCRIPTOR" added here does not unlock anything:
// v1 keys must be added with xfs_io add_enckey -d.
type keyring struct {
	next int32
	keys map[int32]*key
}

type key struct {
	typ, desc string
	payload   []byte
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
		delete(kr.keys, int32(id))
		if c.args[0] == "unlink" {
			fmt.Fprintln(c.out, "1 links removed")
		}
		return 0
	case "search", "request":
		if len(args) < 3 {
			io.WriteString(c.errw, keyctlUsage)
			return 2
		}
		for id, k := range kr.keys {
			if k.typ == args[1] && k.desc == args[2] {
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
