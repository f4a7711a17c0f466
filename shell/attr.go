package shell

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// attr(1), the attr package's (2.5.1) command in the IRIX style, which
// xfstests' _require_attrs asks for: -s NAME [-V VALUE] sets (the value
// from standard input without -V), -g NAME prints, -r NAME removes, -l
// lists; names are in the user namespace, trusted with -R, security
// with -S (-l without either lists all three); the symlink itself unless
// -L; -q prints bare values and names. Errors are the libattr call's
// perror ("attr_get: No data available") and a "Could not ..." line,
// status 1; usage errors print the usage, status 1.

// attrValueMax is attr.c's ATTR_MAX_VALUELEN: the largest value -s reads
// from standard input and -g asks for.
const attrValueMax = 64 * 1024

const attrUsage = `Usage: attr [-LRSq] -s attrname [-V attrvalue] pathname  # set value
       attr [-LRSq] -g attrname pathname                 # get value
       attr [-LRSq] -r attrname pathname                 # remove attr
       attr [-LRq]  -l pathname                          # list attrs 
      -s reads a value from stdin and -g writes a value to stdout
`

func cmdAttr(c *cmd) int {
	usage := func(msg string) int {
		if msg != "" {
			fmt.Fprintln(c.errw, msg)
		}
		fmt.Fprint(c.errw, attrUsage)
		return 1
	}
	// attr.c's getopt string "LRSs:V:g:r:lq", with glibc's permutation.
	var spec []longOpt
	for _, o := range "LRSlq" {
		spec = append(spec, longOpt{byte(o), "", false, string(o)})
	}
	for _, o := range "sVgr" {
		spec = append(spec, longOpt{byte(o), "", true, string(o)})
	}
	parsed, files, ok := c.getoptLong(spec)
	if !ok {
		return usage("Unrecognized option: ?")
	}
	var op byte
	var name, value string
	haveValue, follow, quiet := false, false, false
	ns := "user."
	nsSet := false
	for _, kv := range parsed {
		switch o, arg := kv[0][0], kv[1]; o {
		case 'L':
			follow = true
		case 'R':
			ns, nsSet = "trusted.", true
		case 'S':
			ns, nsSet = "security.", true
		case 'q':
			quiet = true
		case 'V':
			// attr.c: -V is the set operation's, so it and -s may come
			// in either order; any other pair is refused.
			if op != 0 && op != 's' {
				return usage("-V only allowed with -s")
			}
			op, value, haveValue = 's', arg, true
		default: // s, g, r, l
			if op != 0 && (o != 's' || op != 's' || name != "") {
				return usage("Only one of -s, -g, -r, or -l allowed")
			}
			op, name = o, arg
		}
	}
	// attr.c checks the operand count before the operation.
	if len(files) != 1 {
		return usage("A filename to operate on is required")
	}
	if op == 0 {
		return usage("At least one of -s, -g, -r, or -l is required")
	}
	if op == 's' && name == "" {
		return usage("-V only allowed with -s")
	}
	file := files[0]
	switch op {
	case 's':
		v := []byte(value)
		if !haveValue {
			var err error
			if v, err = io.ReadAll(io.LimitReader(c.in, attrValueMax)); err != nil {
				fmt.Fprintf(c.errw, "attr: %s\n", strerror(err))
				return 1
			}
		}
		if err := c.setxattr(file, ns+name, v, follow); err != nil {
			fmt.Fprintf(c.errw, "attr_set: %s\nCould not set \"%s\" for %s\n", strerror(err), name, file)
			return 1
		}
		if !quiet {
			fmt.Fprintf(c.out, "Attribute \"%s\" set to a %d byte value for %s:\n%s\n", name, len(v), file, v)
		}
	case 'g':
		buf := make([]byte, attrValueMax)
		n, err := c.getxattr(file, ns+name, buf, follow)
		if err != nil {
			fmt.Fprintf(c.errw, "attr_get: %s\nCould not get \"%s\" for %s\n", strerror(err), name, file)
			return 1
		}
		if quiet {
			c.out.Write(buf[:n])
			return 0
		}
		fmt.Fprintf(c.out, "Attribute \"%s\" had a %d byte value for %s:\n%s\n", name, n, file, buf[:n])
	case 'r':
		if err := c.removexattr(file, ns+name, follow); err != nil {
			fmt.Fprintf(c.errw, "attr_remove: %s\nCould not remove \"%s\" for %s\n", strerror(err), name, file)
			return 1
		}
	case 'l':
		return c.attrList(file, ns, nsSet, quiet, follow)
	}
	return 0
}

// attrList is attr -l: the names listxattr gives in the namespaces asked
// for (user, trusted and security when none is), their prefix stripped,
// in the filesystem's order, each with its value's length.
func (c *cmd) attrList(file, ns string, nsSet, quiet, follow bool) int {
	fail := func(err error) int {
		fmt.Fprintf(c.errw, "attr_list: %s\nCould not list %s\n", strerror(err), file)
		return 1
	}
	n, err := c.listxattr(file, nil, follow)
	if err != nil {
		return fail(err)
	}
	buf := make([]byte, n)
	if n, err = c.listxattr(file, buf, follow); err != nil {
		return fail(err)
	}
	spaces := []string{"user.", "trusted.", "security."}
	if nsSet {
		spaces = []string{ns}
	}
	for _, full := range bytes.Split(bytes.TrimSuffix(buf[:n], []byte{0}), []byte{0}) {
		for _, p := range spaces {
			short, ok := strings.CutPrefix(string(full), p)
			if !ok {
				continue
			}
			if quiet {
				fmt.Fprintf(c.out, "%s\n", short)
				break
			}
			vn, err := c.getxattr(file, string(full), nil, follow)
			if err != nil {
				return fail(err)
			}
			fmt.Fprintf(c.out, "Attribute \"%s\" has a %d byte value for %s\n", short, vn, file)
			break
		}
	}
	return 0
}
