package shell

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/vfslab/vfslab/kernel"
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
