package shell

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// Users and groups: the machine's /etc/passwd and /etc/group, and the
// credentials a command runs with (uid, fsgid and supplementary groups,
// which the kernel's permission checks read through in_group_p).

// groups are /etc/group: each group's gid and its members besides the
// users whose primary group it is. Every user's primary group has the
// user's name and number, as useradd makes it.
var groups = map[string]struct {
	gid     uint32
	members []string
}{
	"root":         {0, nil},
	"disk":         {6, nil},
	"users":        {100, []string{"fsgqa", "fsgqa2"}},
	"fsgqa":        {1000, nil},
	"fsgqa2":       {1001, nil},
	"123456-fsgqa": {123456, nil},
}

// groupName names gid as /etc/group does (the number when none).
func groupName(gid uint32) string {
	for n, g := range groups {
		if g.gid == gid {
			return n
		}
	}
	return strconv.Itoa(int(gid))
}

// lookupGroup resolves a group name or number.
func lookupGroup(s string) (uint32, bool) {
	if g, ok := groups[s]; ok {
		return g.gid, true
	}
	n, err := strconv.ParseUint(s, 10, 32)
	return uint32(n), err == nil
}

// ident is the credentials a command runs with: uid (also its fsuid),
// gid (fsgid) and the supplementary groups, sorted, as a comma list so
// that an ident is a map key (one process per ident).
type ident struct {
	uid, gid uint32
	groups   string
	// noKeyring leaves the session keyring out of the credentials: the
	// process of the machine's checkers and debuggers, which, like
	// e2fsck and debugfs, read a filesystem without any key.
	noKeyring bool
}

// rootIdent is init's: uid 0, gid 0, groups 0.
var rootIdent = ident{groups: "0"}

// userIdent is what login (or su USER) gives uid: its primary group and
// the groups /etc/group lists it in (initgroups).
func userIdent(uid uint32) ident {
	name := userName(uid)
	gids := []uint32{uid}
	for _, g := range groups {
		for _, m := range g.members {
			if m == name {
				gids = append(gids, g.gid)
			}
		}
	}
	return ident{uid: uid, gid: uid, groups: gidList(gids)}
}

// gidList renders gids sorted and without duplicates.
func gidList(gids []uint32) string {
	sort.Slice(gids, func(i, j int) bool { return gids[i] < gids[j] })
	var b []string
	for i, g := range gids {
		if i > 0 && gids[i-1] == g {
			continue
		}
		b = append(b, strconv.FormatUint(uint64(g), 10))
	}
	return strings.Join(b, ",")
}

// groupIDs returns the supplementary groups.
func (id ident) groupIDs() []uint32 {
	var out []uint32
	for _, s := range strings.Split(id.groups, ",") {
		if n, err := strconv.ParseUint(s, 10, 32); err == nil {
			out = append(out, uint32(n))
		}
	}
	return out
}

// cred returns the kernel credentials of id for machine m's processes.
func (id ident) cred(m *Machine) *kernel.Cred {
	c := &kernel.Cred{UID: id.uid, GID: id.gid, Groups: id.groupIDs(), SessionKeyring: sessionKeyring{m}}
	if id.noKeyring {
		c.SessionKeyring = nil
	}
	if id.uid == 0 {
		c.CapSysAdmin, c.CapFowner = true, true
	}
	return c
}

// identKey carries the ident a command runs as (su, su -g/-G).
type identKey struct{}

// identOf returns the ident of ctx: su's, or root's.
func identOf(ctx context.Context) ident {
	if id, ok := ctx.Value(identKey{}).(ident); ok {
		return id
	}
	return rootIdent
}

// withIdent makes ctx run as id.
func withIdent(ctx context.Context, id ident) context.Context {
	return context.WithValue(ctx, identKey{}, id)
}

// cmdGroups is groups(1): the groups of the calling process, or of the
// users named.
func cmdGroups(c *cmd) int {
	if len(c.args) == 0 {
		var names []string
		for _, g := range c.id.groupIDs() {
			names = append(names, groupName(g))
		}
		fmt.Fprintln(c.out, strings.Join(names, " "))
		return 0
	}
	st := 0
	for _, u := range c.args {
		uid, ok := users[u]
		if !ok {
			fmt.Fprintf(c.errw, "groups: '%s': no such user\n", u)
			st = 1
			continue
		}
		var names []string
		for _, g := range userIdent(uid).groupIDs() {
			names = append(names, groupName(g))
		}
		fmt.Fprintf(c.out, "%s : %s\n", u, strings.Join(names, " "))
	}
	return st
}

// cmdChmod is chmod(1): MODE is octal or symbolic ([ugoa]*[-+=][rwxXst]*
// or [ugo], comma-separated; without ugoa the umask, 022, is respected as
// coreutils does), applied with chmod(2) to each FILE (-R: and below each
// directory; symlinks found there are not followed, as chmod -R does).
func cmdChmod(c *cmd) int {
	var args []string
	recursive, verbose, quiet := false, false, false
	for i, a := range c.args {
		switch {
		case a == "--":
			args = append(args, c.args[i+1:]...)
		case a == "-R" || a == "--recursive":
			recursive = true
		case a == "-v" || a == "-c":
			verbose = a == "-v"
		case a == "-f" || a == "--silent" || a == "--quiet":
			quiet = true
		default:
			args = append(args, a)
			continue
		}
		if a == "--" {
			break
		}
	}
	if len(args) < 2 {
		if len(args) == 0 {
			c.errf("missing operand")
		} else {
			c.errf("missing operand after '%s'", args[0])
		}
		fmt.Fprintf(c.errw, "Try 'chmod --help' for more information.\n")
		return 1
	}
	spec := args[0]
	if _, ok := applyMode(spec, 0, false); !ok {
		c.errf("invalid mode: '%s'", spec)
		fmt.Fprintf(c.errw, "Try 'chmod --help' for more information.\n")
		return 1
	}
	st := 0
	var walk func(p string, top bool)
	walk = func(p string, top bool) {
		s, err := c.stat(p, top)
		if err != nil {
			if !quiet {
				c.errf("cannot access '%s': %s", p, strerror(err))
			}
			st = 1
			return
		}
		if s.Mode&vfs.S_IFMT == vfs.S_IFLNK {
			return
		}
		mode, _ := applyMode(spec, s.Mode, s.Mode&vfs.S_IFMT == vfs.S_IFDIR)
		ap := c.abs(p)
		_, err = c.sys(fmt.Sprintf("fchmodat(AT_FDCWD, %q, %#o)", ap, mode), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
			return 0, pr.Chmod(t, ap, mode)
		})
		if err != nil {
			if !quiet {
				c.errf("changing permissions of '%s': %s", p, strerror(err))
			}
			st = 1
		} else if verbose {
			fmt.Fprintf(c.out, "mode of '%s' changed from %04o (%s) to %04o (%s)\n", p, s.Mode&0o7777, modeString(s.Mode)[1:], mode, modeString(s.Mode&vfs.S_IFMT | mode)[1:])
		}
		if recursive && s.Mode&vfs.S_IFMT == vfs.S_IFDIR {
			ents, err := c.m.readDir(c.errw, c.id, c.name, ap)
			if err != nil {
				if !quiet {
					c.errf("cannot read directory '%s': %s", p, strerror(err))
				}
				st = 1
				return
			}
			for _, e := range ents {
				if e.Name != "." && e.Name != ".." {
					walk(strings.TrimSuffix(p, "/")+"/"+e.Name, false)
				}
			}
		}
	}
	for _, a := range args[1:] {
		walk(a, true)
	}
	return st
}

// applyMode applies chmod's MODE to old (the file's i_mode; isDir for X
// and for keeping a directory's set-id bits under an octal mode, as
// coreutils does) and returns the new permission bits.
func applyMode(spec string, old uint32, isDir bool) (uint32, bool) {
	const umask = 0o022
	cur := old & 0o7777
	if spec != "" && strings.Trim(spec, "01234567") == "" {
		if len(spec) > 5 {
			return 0, false
		}
		n, err := strconv.ParseUint(spec, 8, 32)
		if err != nil || n > 0o7777 {
			return 0, false
		}
		m := uint32(n)
		if isDir && len(spec) < 5 {
			// Fewer than five digits keep a directory's set-id bits.
			m |= cur & (vfs.S_ISUID | vfs.S_ISGID)
		}
		return m, true
	}
	for _, clause := range strings.Split(spec, ",") {
		i := 0
		var who uint32
		for i < len(clause) && strings.IndexByte("ugoa", clause[i]) >= 0 {
			who |= map[byte]uint32{'u': 0o4700, 'g': 0o2070, 'o': 0o1007, 'a': 0o7777}[clause[i]]
			i++
		}
		if i == len(clause) {
			return 0, false
		}
		masked := who == 0
		if masked {
			who = 0o7777
		}
		for i < len(clause) {
			op := clause[i]
			if op != '+' && op != '-' && op != '=' {
				return 0, false
			}
			i++
			var perm uint32
			switch {
			case i < len(clause) && strings.IndexByte("ugo", clause[i]) >= 0:
				shift := map[byte]uint{'u': 6, 'g': 3, 'o': 0}[clause[i]]
				b := (cur >> shift) & 7
				perm = b<<6 | b<<3 | b
				i++
			default:
				for i < len(clause) && strings.IndexByte("rwxXst", clause[i]) >= 0 {
					switch clause[i] {
					case 'r':
						perm |= 0o444
					case 'w':
						perm |= 0o222
					case 'x':
						perm |= 0o111
					case 'X':
						if isDir || cur&0o111 != 0 {
							perm |= 0o111
						}
					case 's':
						perm |= vfs.S_ISUID | vfs.S_ISGID
					case 't':
						perm |= vfs.S_ISVTX
					}
					i++
				}
			}
			bits := perm & who
			if masked {
				bits &^= umask
			}
			switch op {
			case '+':
				cur |= bits
			case '-':
				cur &^= bits
			case '=':
				keep := ^who & 0o7777
				if masked {
					keep = 0
				}
				if isDir {
					keep |= cur & (vfs.S_ISUID | vfs.S_ISGID) &^ (perm & who)
				}
				cur = cur&keep | bits
			}
		}
	}
	return cur, true
}

// cmdChown is chown(1) for the owner (OWNER[:GROUP]; groups are not
// modelled): chown(2), or lchown(2) with -h.
func cmdChown(c *cmd) int {
	opts, args, ok := c.flags("hRfv", "", "[OPTION]... [OWNER][:[GROUP]] FILE...")
	if !ok {
		return 1
	}
	if len(args) < 2 {
		c.errf("missing operand")
		fmt.Fprintf(c.errw, "Try 'chown --help' for more information.\n")
		return 1
	}
	owner, group, hasGroup := strings.Cut(args[0], ":")
	if !hasGroup {
		owner, group, hasGroup = strings.Cut(args[0], ".")
	}
	var uid uint32
	if owner != "" {
		var known bool
		uid, known = users[owner]
		if !known {
			n, err := strconv.ParseUint(owner, 10, 32)
			if err != nil {
				c.errf("invalid user: '%s'", args[0])
				return 1
			}
			uid = uint32(n)
		}
	}
	var gid uint32
	if hasGroup && group == "" && owner != "" {
		// OWNER: is OWNER and OWNER's login group.
		gid, group = userIdent(uid).gid, "login"
	} else if group != "" {
		var ok bool
		if gid, ok = lookupGroup(group); !ok {
			c.errf("invalid group: '%s'", args[0])
			return 1
		}
	}
	return c.chownFiles(args[1:], owner != "", uid, group != "", gid, opts['h'] == "", "ownership")
}

// chownFiles is chown(2) (lchown(2) unless follow) of each file: the
// owner when setUID, the group when setGID.
func (c *cmd) chownFiles(files []string, setUID bool, uid uint32, setGID bool, gid uint32, follow bool, what string) int {
	st := 0
	for _, a := range files {
		p := c.abs(a)
		uidArg, gidArg := int64(-1), int64(-1)
		if setUID {
			uidArg = int64(uid)
		}
		if setGID {
			gidArg = int64(gid)
		}
		_, err := c.sys(fmt.Sprintf("fchownat(%q, %d, %d)", p, uidArg, gidArg), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
			if setUID {
				if err := pr.Chown(t, p, uid, follow); err != nil {
					return 0, err
				}
			}
			if setGID {
				return 0, pr.Chgrp(t, p, gid, follow)
			}
			return 0, nil
		})
		if err != nil {
			c.errf("changing %s of '%s': %s", what, a, strerror(err))
			st = 1
		}
	}
	return st
}

// cmdChgrp is chgrp(1): GROUP for each FILE (chown(2) with uid -1).
func cmdChgrp(c *cmd) int {
	opts, args, ok := c.flags("hRfv", "", "[OPTION]... GROUP FILE...")
	if !ok {
		return 1
	}
	if len(args) < 2 {
		c.errf("missing operand")
		fmt.Fprintf(c.errw, "Try 'chgrp --help' for more information.\n")
		return 1
	}
	gid, ok := lookupGroup(args[0])
	if !ok {
		c.errf("invalid group: '%s'", args[0])
		return 1
	}
	return c.chownFiles(args[1:], false, 0, true, gid, opts['h'] == "", "group")
}

func userName(uid uint32) string {
	for n, u := range users {
		if u == uid {
			return n
		}
	}
	return strconv.Itoa(int(uid))
}

// etcFiles are /etc/passwd and /etc/group as the machine's accounts
// make them (useradd's layout: the user's own group, /home/NAME).
func etcFiles() map[string]string {
	var names []string
	for n := range users {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return users[names[i]] < users[names[j]] })
	var pw strings.Builder
	for _, n := range names {
		home, shell := "/home/"+n, "/bin/sh"
		if users[n] == 0 {
			home, shell = "/root", "/bin/bash"
		}
		fmt.Fprintf(&pw, "%s:x:%d:%d::%s:%s\n", n, users[n], users[n], home, shell)
	}
	var gnames []string
	for n := range groups {
		gnames = append(gnames, n)
	}
	sort.Slice(gnames, func(i, j int) bool { return groups[gnames[i]].gid < groups[gnames[j]].gid })
	var gr strings.Builder
	for _, n := range gnames {
		fmt.Fprintf(&gr, "%s:x:%d:%s\n", n, groups[n].gid, strings.Join(groups[n].members, ","))
	}
	return map[string]string{"/etc/passwd": pw.String(), "/etc/group": gr.String()}
}

// cmdID is id(1) of the caller or of USER (that user's login
// credentials): -u, -g, -n, or uid=... gid=... groups=....
func cmdID(c *cmd) int {
	opts, rest, ok := c.flags("ugnr", "", "[OPTION]... [USER]")
	if !ok {
		return 1
	}
	// id USER: that user's ids, as login would give them.
	id := c.id
	if len(rest) > 1 {
		c.errf("extra operand '%s'", rest[1])
		c.usage("[OPTION]... [USER]")
		return 1
	}
	if len(rest) == 1 {
		uid, ok := users[rest[0]]
		if !ok {
			// A number that names no user is taken as a uid, as id(1) does.
			n, err := strconv.ParseUint(rest[0], 10, 32)
			if err != nil || userName(uint32(n)) == rest[0] {
				c.errf("'%s': no such user", rest[0])
				return 1
			}
			uid = uint32(n)
		}
		id = userIdent(uid)
	}
	switch {
	case opts['u'] != "" && opts['n'] != "":
		fmt.Fprintln(c.out, userName(id.uid))
	case opts['u'] != "":
		fmt.Fprintln(c.out, id.uid)
	case opts['g'] != "" && opts['n'] != "":
		fmt.Fprintln(c.out, groupName(id.gid))
	case opts['g'] != "":
		fmt.Fprintln(c.out, id.gid)
	default:
		var gs []string
		for _, g := range id.groupIDs() {
			gs = append(gs, fmt.Sprintf("%d(%s)", g, groupName(g)))
		}
		fmt.Fprintf(c.out, "uid=%d(%s) gid=%d(%s) groups=%s\n", id.uid, userName(id.uid), id.gid, groupName(id.gid), strings.Join(gs, ","))
	}
	return 0
}

func cmdWhoami(c *cmd) int { fmt.Fprintln(c.out, userName(c.uid)); return 0 }
