package shell

import (
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/keys"
	"github.com/vfslab/vfslab/vfs"
)

// keyctl(1) (keyutils' keyctl.c) over the keys syscalls of package keys:
// each subcommand is one or a few add_key/request_key/keyctl calls as the
// command's process, a failure printed as perror prints it ("add_key:
// Disk quota exceeded", status 1) and a bad key id as keyctl's
// get_key_id does ("Unparsable key: 'x'", status 2).

const keyctlUsage = `Usage: keyctl add <type> <desc> <data> <keyring>
       keyctl padd <type> <desc> <keyring>
       keyctl newring <name> <keyring>
       keyctl request <type> <desc> [<dest_keyring>]
       keyctl search <keyring> <type> <desc> [<dest_keyring>]
       keyctl update <key> <data> | pupdate <key>
       keyctl link <key> <keyring> | unlink <key> [<keyring>]
       keyctl revoke <key> | invalidate <key> | clear <keyring>
       keyctl read <key> | pipe <key> | print <key>
       keyctl describe <key> | rdescribe <key> [sep]
       keyctl list <keyring> | rlist <keyring>
       keyctl show [-x] [<keyring>]
       keyctl timeout <key> <timeout> | setperm <key> <mask>
       keyctl new_session
`

// keyctlExit is a keyctl status other than 0: the message is printed.
type keyctlExit struct {
	status int
	msg    string
}

func (e *keyctlExit) Error() string { return e.msg }

// keyID is get_key_id: a special keyring (@t @p @s @u @us @g @a), a key
// found by type and description (%type:desc, %:name for a keyring), or a
// number (strtoul base 0).
func (c *cmd) keyID(arg string) (int32, error) {
	if strings.HasPrefix(arg, "@") {
		special := map[string]int32{"@t": keys.SpecThreadKeyring, "@p": keys.SpecProcessKeyring, "@s": keys.SpecSessionKeyring,
			"@u": keys.SpecUserKeyring, "@us": keys.SpecUserSessionKeyring, "@g": keys.SpecGroupKeyring, "@a": keys.SpecReqkeyAuthKey}
		if id, ok := special[arg]; ok {
			return id, nil
		}
		return 0, &keyctlExit{2, fmt.Sprintf("Unknown special key: '%s'", arg)}
	}
	if rest, ok := strings.CutPrefix(arg, "%"); ok {
		typ, desc, found := strings.Cut(rest, ":")
		if !found || desc == "" || (typ == "" && rest[0] != ':') {
			return 0, &keyctlExit{2, "Incorrect key-by-name spec"}
		}
		if typ == "" {
			typ = "keyring"
		}
		// find_key_by_type_and_desc: a search of the session keyring.
		var id int32
		_, err := c.keys("", func(t *kernel.Task, cred *kernel.Cred) (int64, error) {
			n, err := keys.KeyctlSearch(t, cred, keys.SpecSessionKeyring, typ, desc, 0)
			id = n
			return int64(n), err
		})
		if err != nil {
			return 0, &keyctlExit{1, fmt.Sprintf("Can't find '%s:%s'", typ, desc)}
		}
		return id, nil
	}
	n, err := strconv.ParseUint(arg, 0, 32)
	if err != nil {
		return 0, &keyctlExit{2, fmt.Sprintf("Unparsable key: '%s'", arg)}
	}
	return int32(n), nil
}

// keys runs one keys syscall as the command's process.
func (c *cmd) keys(desc string, fn func(t *kernel.Task, cred *kernel.Cred) (int64, error)) (int64, error) {
	return c.sys(desc, func(t *kernel.Task, p *vfs.Proc) (int64, error) { return fn(t, p.Cred) })
}

func cmdKeyctl(c *cmd) int {
	if len(c.args) == 0 {
		io.WriteString(c.errw, keyctlUsage)
		return 2
	}
	st, err := keyctl(c, c.args[0], c.args[1:])
	if e, ok := err.(*keyctlExit); ok {
		fmt.Fprintln(c.errw, e.msg)
		return e.status
	}
	return st
}

// keyctl runs one subcommand.
func keyctl(c *cmd, sub string, args []string) (int, error) {
	usage := func() (int, error) {
		io.WriteString(c.errw, keyctlUsage)
		return 2, nil
	}
	// perror of the call named op, status 1.
	fail := func(op string, err error) (int, error) {
		return 1, &keyctlExit{1, op + ": " + strerror(err)}
	}
	ids := func(n int) ([]int32, error) {
		out := make([]int32, n)
		for i := range out {
			id, err := c.keyID(args[i])
			if err != nil {
				return nil, err
			}
			out[i] = id
		}
		return out, nil
	}
	// call runs fn as the process and prints its result on success.
	call := func(op string, print bool, fn func(t *kernel.Task, cred *kernel.Cred) (int64, error)) (int, error) {
		n, err := c.keys(op, fn)
		if err != nil {
			return fail(op, err)
		}
		if print {
			fmt.Fprintln(c.out, n)
		}
		return 0, nil
	}
	switch sub {
	case "add", "padd", "newring":
		var typ, desc string
		var data []byte
		var ring string
		switch {
		case sub == "add" && len(args) == 4:
			typ, desc, data, ring = args[0], args[1], []byte(args[2]), args[3]
		case sub == "padd" && len(args) == 3:
			typ, desc, ring = args[0], args[1], args[2]
		case sub == "newring" && len(args) == 2:
			typ, desc, ring = "keyring", args[0], args[1]
		default:
			return usage()
		}
		dest, err := c.keyID(ring)
		if err != nil {
			return 0, err
		}
		if sub == "padd" {
			if data, err = io.ReadAll(c.in); err != nil {
				return fail("stdin", err)
			}
		}
		return call("add_key", true, func(t *kernel.Task, cred *kernel.Cred) (int64, error) {
			n, err := keys.AddKey(t, cred, typ, desc, data, dest)
			return int64(n), err
		})
	case "request":
		if len(args) != 2 && len(args) != 3 {
			return usage()
		}
		var dest int32
		if len(args) == 3 {
			var err error
			if dest, err = c.keyID(args[2]); err != nil {
				return 0, err
			}
		}
		return call("request_key", true, func(t *kernel.Task, cred *kernel.Cred) (int64, error) {
			n, err := keys.RequestKey(t, cred, args[0], args[1], dest)
			return int64(n), err
		})
	case "search":
		if len(args) != 3 && len(args) != 4 {
			return usage()
		}
		ring, err := c.keyID(args[0])
		if err != nil {
			return 0, err
		}
		var dest int32
		if len(args) == 4 {
			if dest, err = c.keyID(args[3]); err != nil {
				return 0, err
			}
		}
		return call("keyctl_search", true, func(t *kernel.Task, cred *kernel.Cred) (int64, error) {
			n, err := keys.KeyctlSearch(t, cred, ring, args[1], args[2], dest)
			return int64(n), err
		})
	case "update", "pupdate":
		if sub == "update" && len(args) != 2 || sub == "pupdate" && len(args) != 1 {
			return usage()
		}
		id, err := c.keyID(args[0])
		if err != nil {
			return 0, err
		}
		var data []byte
		if sub == "update" {
			data = []byte(args[1])
		} else if data, err = io.ReadAll(c.in); err != nil {
			return fail("stdin", err)
		}
		return call("keyctl_update", false, func(t *kernel.Task, cred *kernel.Cred) (int64, error) {
			return 0, keys.KeyctlUpdate(t, cred, id, data)
		})
	case "link":
		if len(args) != 2 {
			return usage()
		}
		v, err := ids(2)
		if err != nil {
			return 0, err
		}
		return call("keyctl_link", false, func(t *kernel.Task, cred *kernel.Cred) (int64, error) {
			return 0, keys.KeyctlLink(t, cred, v[0], v[1])
		})
	case "unlink":
		if len(args) != 1 && len(args) != 2 {
			return usage()
		}
		v, err := ids(len(args))
		if err != nil {
			return 0, err
		}
		if len(args) == 2 {
			return call("keyctl_unlink", false, func(t *kernel.Task, cred *kernel.Cred) (int64, error) {
				return 0, keys.KeyctlUnlink(t, cred, v[0], v[1])
			})
		}
		// recursive_session_key_scan: unlink it from every keyring of the
		// session tree that links it.
		n := 0
		for _, ring := range c.sessionTree() {
			if _, err := c.keys("keyctl_unlink", func(t *kernel.Task, cred *kernel.Cred) (int64, error) {
				return 0, keys.KeyctlUnlink(t, cred, v[0], ring)
			}); err == nil {
				n++
			}
		}
		fmt.Fprintf(c.out, "%d links removed\n", n)
		return 0, nil
	case "revoke", "invalidate", "clear":
		if len(args) != 1 {
			return usage()
		}
		id, err := c.keyID(args[0])
		if err != nil {
			return 0, err
		}
		op := map[string]func(*kernel.Task, *kernel.Cred, int32) error{
			"revoke": keys.KeyctlRevoke, "invalidate": keys.KeyctlInvalidate, "clear": keys.KeyctlClear}[sub]
		return call("keyctl_"+sub, false, func(t *kernel.Task, cred *kernel.Cred) (int64, error) {
			return 0, op(t, cred, id)
		})
	case "read", "pipe", "print", "rlist", "list":
		if len(args) != 1 {
			return usage()
		}
		id, err := c.keyID(args[0])
		if err != nil {
			return 0, err
		}
		data, err := c.readKey(id)
		if err != nil {
			return fail("keyctl_read_alloc", err)
		}
		switch sub {
		case "read":
			keyctlHexdump(c.out, data)
		case "pipe":
			c.out.Write(data)
		case "print":
			printable := true
			for _, b := range data {
				if b < 0x20 || b > 0x7e {
					printable = false
				}
			}
			if printable {
				fmt.Fprintf(c.out, "%s\n", data)
			} else {
				fmt.Fprintf(c.out, ":hex:%x\n", data)
			}
		case "rlist":
			var parts []string
			for i := 0; i+4 <= len(data); i += 4 {
				parts = append(parts, fmt.Sprint(int32(binary.LittleEndian.Uint32(data[i:]))))
			}
			fmt.Fprintln(c.out, strings.Join(parts, " "))
		case "list":
			c.keyctlList(data)
		}
		return 0, nil
	case "describe", "rdescribe":
		if sub == "describe" && len(args) != 1 || sub == "rdescribe" && len(args) != 1 && len(args) != 2 {
			return usage()
		}
		id, err := c.keyID(args[0])
		if err != nil {
			return 0, err
		}
		d, err := c.describeKey(id)
		if err != nil {
			return fail("keyctl_describe", err)
		}
		if sub == "rdescribe" {
			if len(args) == 2 && args[1] != "" {
				d = strings.ReplaceAll(d, ";", args[1][:1])
			}
			fmt.Fprintln(c.out, d)
			return 0, nil
		}
		f := strings.SplitN(d, ";", 5)
		perm, _ := strconv.ParseUint(f[3], 16, 32)
		fmt.Fprintf(c.out, "%9d: %s %5s %5s %s: %s\n", id, permString(uint32(perm)), f[1], f[2], f[0], f[4])
		return 0, nil
	case "show":
		hex := false
		if len(args) > 0 && args[0] == "-x" {
			hex, args = true, args[1:]
		}
		if len(args) > 1 {
			return usage()
		}
		ring, name := int32(keys.SpecSessionKeyring), "Session Keyring"
		if len(args) == 1 {
			var err error
			if ring, err = c.keyID(args[0]); err != nil {
				return 0, err
			}
			name = "Keyring"
		}
		return keyctlShow(c, ring, name, hex)
	case "timeout":
		if len(args) != 2 {
			return usage()
		}
		id, err := c.keyID(args[0])
		if err != nil {
			return 0, err
		}
		timeout, err := strconv.ParseUint(args[1], 10, 32)
		if err != nil {
			return 2, &keyctlExit{2, fmt.Sprintf("Unparsable timeout: '%s'", args[1])}
		}
		return call("keyctl_set_timeout", false, func(t *kernel.Task, cred *kernel.Cred) (int64, error) {
			return 0, keys.KeyctlSetTimeout(t, cred, id, uint32(timeout))
		})
	case "setperm":
		if len(args) != 2 {
			return usage()
		}
		id, err := c.keyID(args[0])
		if err != nil {
			return 0, err
		}
		perm, err := strconv.ParseUint(args[1], 0, 32)
		if err != nil {
			return 2, &keyctlExit{2, fmt.Sprintf("Unparsable permissions: '%s'", args[1])}
		}
		return call("keyctl_setperm", false, func(t *kernel.Task, cred *kernel.Cred) (int64, error) {
			return 0, keys.KeyctlSetperm(t, cred, id, uint32(perm))
		})
	case "new_session":
		if len(args) != 0 {
			return usage()
		}
		// join_session_keyring(NULL) and session_to_parent: the
		// machine's processes share the new keyring.
		var ses *keys.Key
		if _, err := c.keys("keyctl_join_session_keyring", func(t *kernel.Task, cred *kernel.Cred) (int64, error) {
			var err error
			ses, err = keys.JoinSessionKeyring(t, cred)
			return 0, err
		}); err != nil {
			return fail("keyctl_join_session_keyring", err)
		}
		c.m.mu.Lock()
		old := c.m.session
		c.m.session = ses
		c.m.mu.Unlock()
		c.m.call(c.errw, nil, c.name, "", func(t *kernel.Task) (int64, error) {
			keys.KeyPut(t, old)
			return 0, nil
		})
		fmt.Fprintln(c.out, ses.Serial())
		return 0, nil
	}
	fmt.Fprintf(c.errw, "Unknown command\n")
	return 2, nil
}

// readKey is keyctl_read_alloc.
func (c *cmd) readKey(id int32) ([]byte, error) {
	var data []byte
	_, err := c.keys("keyctl_read", func(t *kernel.Task, cred *kernel.Cred) (int64, error) {
		var err error
		data, err = keys.KeyctlRead(t, cred, id)
		return int64(len(data)), err
	})
	return data, err
}

// describeKey is keyctl_describe_alloc: "type;uid;gid;perm;description".
func (c *cmd) describeKey(id int32) (string, error) {
	var d string
	_, err := c.keys("keyctl_describe", func(t *kernel.Task, cred *kernel.Cred) (int64, error) {
		var err error
		d, err = keys.KeyctlDescribe(t, cred, id)
		return 0, err
	})
	return d, err
}

// keyringSerials parses a keyring's payload: its keys' serials.
func keyringSerials(data []byte) []int32 {
	var out []int32
	for i := 0; i+4 <= len(data); i += 4 {
		out = append(out, int32(binary.LittleEndian.Uint32(data[i:])))
	}
	return out
}

// sessionTree is the keyrings recursive_session_key_scan visits: the
// session keyring and the keyrings it reaches, depth first.
func (c *cmd) sessionTree() []int32 {
	ses, err := c.keys("keyctl_get_keyring_ID", func(t *kernel.Task, cred *kernel.Cred) (int64, error) {
		n, err := keys.KeyctlGetKeyringID(t, cred, keys.SpecSessionKeyring, false)
		return int64(n), err
	})
	if err != nil {
		return nil
	}
	var out []int32
	var walk func(id int32, depth int)
	walk = func(id int32, depth int) {
		out = append(out, id)
		data, err := c.readKey(id)
		if err != nil || depth > 8 {
			return
		}
		for _, k := range keyringSerials(data) {
			if d, err := c.describeKey(k); err == nil && strings.HasPrefix(d, "keyring;") {
				walk(k, depth+1)
			}
		}
	}
	walk(int32(ses), 0)
	return out
}

// keyctlHexdump is keyctl read's output: the length, then the payload in
// hex, 4 bytes a group and 32 a line.
func keyctlHexdump(w io.Writer, data []byte) {
	if len(data) == 0 {
		fmt.Fprintln(w, "No data in key")
		return
	}
	fmt.Fprintf(w, "%d bytes of data in key:\n", len(data))
	var b strings.Builder
	for i, x := range data {
		if i > 0 {
			switch {
			case i%32 == 0:
				b.WriteByte('\n')
			case i%4 == 0:
				b.WriteByte(' ')
			}
		}
		fmt.Fprintf(&b, "%02x", x)
	}
	fmt.Fprintln(w, b.String())
}

// permString is keyctl describe's 24 permission letters (possessor, user,
// group, other: setattr, link, search, write, read, view).
func permString(perm uint32) string {
	var b strings.Builder
	for shift := 24; shift >= 0; shift -= 8 {
		b.WriteString(permLetters(perm >> uint(shift)))
	}
	return b.String()
}

// permLetters is one group's "alswrv".
func permLetters(p uint32) string {
	out := []byte("------")
	for i, c := range "alswrv" {
		if p&(0x20>>uint(i)) != 0 {
			out[i] = byte(c)
		}
	}
	return string(out)
}

// calcPerms is keyctl's calc_perms: the permissions the caller holds,
// possessor's added to the owner's, group's or other's, as "--alswrv".
func (c *cmd) calcPerms(perm uint32, uid, gid int64) string {
	p := perm >> 24
	switch {
	case uid == int64(c.id.uid):
		p |= perm >> 16
	case gid == int64(c.id.gid) || c.inGroup(gid):
		p |= perm >> 8
	default:
		p |= perm
	}
	return "--" + permLetters(p&0x3f)
}

// inGroup reports whether gid is one of the caller's supplementary groups.
func (c *cmd) inGroup(gid int64) bool {
	for _, g := range c.id.groupIDs() {
		if int64(g) == gid {
			return true
		}
	}
	return false
}

// keyctlList is keyctl list: the keys of a keyring, one line each.
func (c *cmd) keyctlList(data []byte) {
	serials := keyringSerials(data)
	switch len(serials) {
	case 0:
		fmt.Fprintln(c.out, "keyring is empty")
		return
	case 1:
		fmt.Fprintln(c.out, "1 key in keyring:")
	default:
		fmt.Fprintf(c.out, "%d keys in keyring:\n", len(serials))
	}
	for _, k := range serials {
		d, err := c.describeKey(k)
		if err != nil {
			fmt.Fprintf(c.out, "%9d: key inaccessible (%s)\n", k, strerror(err))
			continue
		}
		f := strings.SplitN(d, ";", 5)
		uid, _ := strconv.ParseInt(f[1], 10, 64)
		gid, _ := strconv.ParseInt(f[2], 10, 64)
		perm, _ := strconv.ParseUint(f[3], 16, 32)
		fmt.Fprintf(c.out, "%9d: %s %5d %5d %s: %s\n", k, c.calcPerms(uint32(perm), uid, gid), uid, gid, f[0], f[4])
	}
}

// keyctlShow is keyctl show: the keyring tree from ring, as
// dump_key_tree prints it (serial, the caller's permissions, uid, gid,
// then the type and description indented under their keyring).
func keyctlShow(c *cmd, ring int32, name string, hex bool) (int, error) {
	fmt.Fprintln(c.out, name)
	id, err := c.keys("keyctl_get_keyring_ID", func(t *kernel.Task, cred *kernel.Cred) (int64, error) {
		n, err := keys.KeyctlGetKeyringID(t, cred, ring, false)
		return int64(n), err
	})
	if err != nil {
		return 1, &keyctlExit{1, "Unable to dump key: " + strerror(err)}
	}
	var indent []byte
	var dump func(key int32, depth int, more bool)
	dump = func(key int32, depth int, more bool) {
		if depth > 8*4 {
			return
		}
		d, err := c.describeKey(key)
		if err != nil {
			fmt.Fprintf(c.out, "%d: key inaccessible (%s)\n", key, strerror(err))
			return
		}
		f := strings.SplitN(d, ";", 5)
		uid, _ := strconv.ParseInt(f[1], 10, 64)
		gid, _ := strconv.ParseInt(f[2], 10, 64)
		perm, _ := strconv.ParseUint(f[3], 16, 32)
		branch := ""
		if depth > 0 {
			branch = "\\_ "
		}
		idText := fmt.Sprintf("%10d", key)
		if hex {
			idText = fmt.Sprintf("0x%08x", uint32(key))
		}
		fmt.Fprintf(c.out, "%s %s  %5d %5d  %s%s%s: %s\n", idText, c.calcPerms(uint32(perm), uid, gid), uid, gid,
			string(indent[:min(depth, len(indent))]), branch, f[0], f[4])
		if f[0] != "keyring" {
			return
		}
		data, err := c.readKey(key)
		if err != nil {
			return
		}
		children := keyringSerials(data)
		for i, k := range children {
			rdepth := depth
			grow := func(n int) {
				for len(indent) < rdepth+n {
					indent = append(indent, ' ')
				}
			}
			if depth == 0 {
				grow(1)
				indent[rdepth] = ' '
				rdepth++
			} else {
				grow(4)
				copy(indent[rdepth:], "    ")
				rdepth += 4
			}
			if more {
				indent[depth] = '|'
			}
			dump(k, rdepth, i < len(children)-1)
		}
	}
	dump(int32(id), 0, false)
	return 0, nil
}
