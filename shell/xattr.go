package shell

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// setfattr(1) and getfattr(1) as the attr package (2.5) has them: the
// xattr syscalls, attr's value encodings (text with \ooo escapes, 0x
// hex, 0s base64), its quoting of names and paths (\ooo for a backslash
// and the characters the output format reserves), its messages
// ("No such attribute" for ENODATA) and exit statuses (1 for an error on
// a file, 2 for a usage error).

// xattrCommands are the attr package's commands.
var xattrCommands = map[string]func(c *cmd) int{
	"setfattr": cmdSetfattr,
	"getfattr": cmdGetfattr,
	"attr":     cmdAttr,
}

// longOpt is one option of getoptLong: its short letter (0 for none), its
// long name ("" for none), whether it takes an argument, and the key it
// is reported under.
type longOpt struct {
	short  byte
	long   string
	hasArg bool
	key    string
}

// getoptLong parses args as glibc's getopt_long does with a permuting
// option string: options anywhere before "--", short ones grouped, a
// long one abbreviated to any unambiguous prefix, its argument after "="
// or in the next word. It returns the options in order (key, argument)
// and the operands; on an error it prints getopt's message and returns
// false. With no long option in opts it is getopt(3), for which "--foo"
// is the short options '-', 'f', 'o', 'o' (glibc's _getopt_internal
// without longopts).
func (c *cmd) getoptLong(opts []longOpt) ([][2]string, []string, bool) {
	var got [][2]string
	var rest []string
	args := c.args
	hasLong := false
	for _, o := range opts {
		hasLong = hasLong || o.long != ""
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return got, append(rest, args[i+1:]...), true
		case hasLong && strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			var match *longOpt
			for k := range opts {
				o := &opts[k]
				if o.long == name {
					match = o
					break
				}
				if o.long != "" && strings.HasPrefix(o.long, name) {
					if match != nil {
						c.errf("option '%s' is ambiguous", a)
						return nil, nil, false
					}
					match = o
				}
			}
			if match == nil {
				c.errf("unrecognized option '%s'", a)
				return nil, nil, false
			}
			switch {
			case !match.hasArg && hasVal:
				c.errf("option '--%s' doesn't allow an argument", match.long)
				return nil, nil, false
			case match.hasArg && !hasVal:
				if i+1 >= len(args) {
					c.errf("option '--%s' requires an argument", match.long)
					return nil, nil, false
				}
				i++
				val = args[i]
			}
			got = append(got, [2]string{match.key, val})
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				var match *longOpt
				for k := range opts {
					if opts[k].short == a[j] {
						match = &opts[k]
					}
				}
				if match == nil {
					c.errf("invalid option -- '%c'", a[j])
					return nil, nil, false
				}
				if !match.hasArg {
					got = append(got, [2]string{match.key, ""})
					continue
				}
				val := a[j+1:]
				if val == "" {
					if i+1 >= len(args) {
						c.errf("option requires an argument -- '%c'", a[j])
						return nil, nil, false
					}
					i++
					val = args[i]
				}
				got = append(got, [2]string{match.key, val})
				break
			}
		default:
			rest = append(rest, a)
		}
	}
	return got, rest, true
}

// attrQuote is attr's quote(): a backslash and each of chars become \ooo.
func attrQuote(s, chars string) string {
	if !strings.ContainsAny(s, "\\"+chars) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch == '\\' || strings.IndexByte(chars, ch) >= 0 {
			fmt.Fprintf(&b, "\\%03o", ch)
		} else {
			b.WriteByte(ch)
		}
	}
	return b.String()
}

// attrUnquote is attr's unquote(): each \ooo becomes its byte.
func attrUnquote(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	isOct := func(c byte) bool { return c >= '0' && c <= '7' }
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOct(s[i+1]) && isOct(s[i+2]) && isOct(s[i+3]) {
			b = append(b, (s[i+1]-'0')<<6+(s[i+2]-'0')<<3+(s[i+3]-'0'))
			i += 3
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

// strerrorEA is attr's strerror_ea: ENODATA is "No such attribute".
func strerrorEA(err error) string {
	if e, ok := errno.Of(err); ok && e == errno.ENODATA {
		return "No such attribute"
	}
	return strerror(err)
}

// attrDecode is setfattr's decode(): 0x hex and 0s base64 (whitespace
// allowed between digits), else text, unquoted when in double quotes,
// with \\, \" and \ooo escapes. ok is false for a bad encoding.
func attrDecode(v string) ([]byte, bool) {
	if v == "" {
		return []byte{}, true
	}
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' }
	if len(v) >= 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X') {
		hex := func(c byte) int {
			switch {
			case c >= '0' && c <= '9':
				return int(c - '0')
			case c >= 'a' && c <= 'f':
				return int(c-'a') + 10
			case c >= 'A' && c <= 'F':
				return int(c-'A') + 10
			}
			return -1
		}
		var out []byte
		for i := 2; i < len(v); {
			for i < len(v) && isSpace(v[i]) {
				i++
			}
			if i == len(v) {
				break
			}
			d1 := hex(v[i])
			i++
			for i < len(v) && isSpace(v[i]) {
				i++
			}
			if i == len(v) {
				return nil, false
			}
			d0 := hex(v[i])
			i++
			if d1 < 0 || d0 < 0 {
				return nil, false
			}
			out = append(out, byte(d1<<4|d0))
		}
		return append([]byte{}, out...), true
	}
	if len(v) >= 2 && v[0] == '0' && (v[1] == 's' || v[1] == 'S') {
		return attrBase64Decode(v[2:])
	}
	if len(v) > 1 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	out := []byte{}
	for i := 0; i < len(v); {
		if v[i] != '\\' {
			out = append(out, v[i])
			i++
			continue
		}
		switch {
		case i+1 < len(v) && (v[i+1] == '\\' || v[i+1] == '"'):
			out = append(out, v[i+1])
			i += 2
		case i+1 < len(v) && v[i+1] >= '0' && v[i+1] <= '7':
			i++
			c := int(v[i] - '0')
			i++
			for k := 0; k < 2 && i < len(v) && v[i] >= '0' && v[i] <= '7'; k++ {
				c = c<<3 + int(v[i]-'0')
				i++
			}
			out = append(out, byte(c))
		default:
			out = append(out, v[i])
			i++
		}
	}
	return out, true
}

// attrBase64Decode is the 0s branch of decode().
func attrBase64Decode(v string) ([]byte, bool) {
	digit := func(c byte) int {
		switch {
		case c >= 'A' && c <= 'Z':
			return int(c - 'A')
		case c >= 'a' && c <= 'z':
			return 26 + int(c-'a')
		case c >= '0' && c <= '9':
			return 52 + int(c-'0')
		case c == '+':
			return 62
		case c == '/':
			return 63
		case c == '=':
			return -2
		}
		return -1
	}
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' }
	out := []byte{}
	i := 0
	var d0, d1, d2, d3 int
	for {
		for i < len(v) && isSpace(v[i]) {
			i++
		}
		if i == len(v) {
			d0, d1, d2, d3 = -2, -2, -2, -2
			break
		}
		if i+4 > len(v) {
			return nil, false
		}
		d0, d1, d2, d3 = digit(v[i]), digit(v[i+1]), digit(v[i+2]), digit(v[i+3])
		i += 4
		if d0 < 0 || d1 < 0 || d2 < 0 || d3 < 0 {
			break
		}
		out = append(out, byte(d0<<2|d1>>4), byte(d1<<4|d2>>2), byte(d2<<6|d3))
	}
	if d0 != -2 {
		if d0 == -1 || d1 < 0 || d2 == -1 || d3 == -1 {
			return nil, false
		}
		out = append(out, byte(d0<<2|d1>>4))
		if d2 == -2 {
			if d1&0x0f != 0 || d3 != -2 {
				return nil, false
			}
		} else {
			out = append(out, byte(d1<<4|d2>>2))
			if d3 != -2 {
				out = append(out, byte(d2<<6|d3))
			} else if d2&0x03 != 0 {
				return nil, false
			}
		}
	} else if d1 != -2 || d2 != -2 || d3 != -2 {
		return nil, false
	}
	for i < len(v) && isSpace(v[i]) {
		i++
	}
	if i+4 <= len(v) && v[i] == '=' {
		if v[i+1] != '=' || v[i+2] != '=' || v[i+3] != '=' {
			return nil, false
		}
		i += 4
	}
	for i < len(v) && isSpace(v[i]) {
		i++
	}
	if i < len(v) {
		return nil, false
	}
	return out, true
}

// attrEncode is getfattr's encode(): text (in double quotes, NUL, \n and
// \r as \ooo, \ and " escaped, a trailing NUL dropped) when no more than
// an eighth of the bytes are unprintable and no encoding is asked for,
// else base64; hex on request.
func attrEncode(v []byte, enc string) string {
	if enc == "" {
		nonpr := 0
		for _, ch := range v {
			if ch < 0x20 || ch > 0x7e {
				nonpr++
			}
		}
		enc = "base64"
		if len(v) >= nonpr*8 {
			enc = "text"
		}
	}
	var b strings.Builder
	switch enc {
	case "text":
		b.WriteByte('"')
		for i, ch := range v {
			if ch == 0 && i+1 == len(v) {
				break
			}
			switch ch {
			case 0, '\n', '\r':
				fmt.Fprintf(&b, "\\%03o", ch)
			case '\\', '"':
				b.WriteByte('\\')
				b.WriteByte(ch)
			default:
				b.WriteByte(ch)
			}
		}
		b.WriteByte('"')
	case "hex":
		fmt.Fprintf(&b, "0x%x", v)
	case "base64":
		const digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
		b.WriteString("0s")
		n := 0
		for ; n+2 < len(v); n += 3 {
			b.WriteByte(digits[v[n]>>2])
			b.WriteByte(digits[(v[n]&3)<<4|v[n+1]>>4])
			b.WriteByte(digits[(v[n+1]&0xf)<<2|v[n+2]>>6])
			b.WriteByte(digits[v[n+2]&0x3f])
		}
		switch len(v) - n {
		case 2:
			b.WriteByte(digits[v[n]>>2])
			b.WriteByte(digits[(v[n]&3)<<4|v[n+1]>>4])
			b.WriteByte(digits[(v[n+1]&0xf)<<2])
			b.WriteByte('=')
		case 1:
			b.WriteByte(digits[v[n]>>2])
			b.WriteByte(digits[(v[n]&3)<<4])
			b.WriteString("==")
		}
	}
	return b.String()
}

// The xattr syscalls as the command's process.

func (c *cmd) setxattr(p, name string, value []byte, follow bool) error {
	call := "setxattr"
	if !follow {
		call = "lsetxattr"
	}
	ap := c.abs(p)
	_, err := c.sys(fmt.Sprintf("%s(%q, %q, %d)", call, ap, name, len(value)), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
		return 0, pr.Setxattr(t, ap, name, value, 0, follow)
	})
	return err
}

func (c *cmd) removexattr(p, name string, follow bool) error {
	call := "removexattr"
	if !follow {
		call = "lremovexattr"
	}
	ap := c.abs(p)
	_, err := c.sys(fmt.Sprintf("%s(%q, %q)", call, ap, name), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
		return 0, pr.Removexattr(t, ap, name, follow)
	})
	return err
}

func (c *cmd) getxattr(p, name string, buf []byte, follow bool) (int, error) {
	call := "getxattr"
	if !follow {
		call = "lgetxattr"
	}
	ap := c.abs(p)
	n, err := c.sys(fmt.Sprintf("%s(%q, %q, %d)", call, ap, name, len(buf)), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
		n, err := pr.Getxattr(t, ap, name, buf, follow)
		return int64(n), err
	})
	return int(n), err
}

func (c *cmd) listxattr(p string, buf []byte, follow bool) (int, error) {
	call := "listxattr"
	if !follow {
		call = "llistxattr"
	}
	ap := c.abs(p)
	n, err := c.sys(fmt.Sprintf("%s(%q, %d)", call, ap, len(buf)), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
		n, err := pr.Listxattr(t, ap, buf, follow)
		return int64(n), err
	})
	return int(n), err
}

const (
	setfattrSpec1 = "{-n name} [-v value] [-h] file..."
	setfattrSpec2 = "{-x name} [-h] file..."
	getfattrSpec  = "[-hRLP] [-n name|-d] [-e en] [-m pattern] path..."
	attrVersion   = "2.5.1"
)

// cmdSetfattr is setfattr(1): -n NAME [-v VALUE] sets, -x NAME removes,
// -h acts on a symlink itself, --restore=FILE replays getfattr -d output.
func cmdSetfattr(c *cmd) int {
	opts, files, ok := c.getoptLong([]longOpt{
		{'n', "name", true, "n"}, {'x', "remove", true, "x"}, {'v', "value", true, "v"},
		{'h', "no-dereference", false, "h"}, {0, "restore", true, "restore"},
		{0, "version", false, "V"}, {0, "help", false, "help"}, {0, "raw", false, "raw"},
	})
	synopsis := func() int {
		fmt.Fprintf(c.errw, "Usage: setfattr %s\n       setfattr %s\nTry `setfattr --help' for more information.\n", setfattrSpec1, setfattrSpec2)
		return 2
	}
	if !ok {
		return synopsis()
	}
	var name, value string
	set, remove, haveValue, follow := false, false, false, true
	var restores []string
	for _, o := range opts {
		switch o[0] {
		case "n":
			if name != "" || remove {
				return synopsis()
			}
			name, set = o[1], true
		case "x":
			if name != "" || set {
				return synopsis()
			}
			name, remove = o[1], true
		case "v":
			if haveValue || remove {
				return synopsis()
			}
			value, haveValue = o[1], true
		case "h":
			follow = false
		case "restore":
			restores = append(restores, o[1])
		case "V":
			fmt.Fprintf(c.out, "setfattr %s\n", attrVersion)
			return 0
		case "help":
			fmt.Fprintf(c.out, "setfattr %s -- set extended attributes\nUsage: setfattr %s\n       setfattr %s\n", attrVersion, setfattrSpec1, setfattrSpec2)
			fmt.Fprint(c.out, "  -n, --name=name         set the value of the named extended attribute\n"+
				"  -x, --remove=name       remove the named extended attribute\n"+
				"  -v, --value=value       use value as the attribute value\n"+
				"  -h, --no-dereference    do not dereference symbolic links\n"+
				"      --restore=file      restore extended attributes\n"+
				"      --raw               do not decode the attribute value\n"+
				"      --version           print version and exit\n"+
				"      --help              this help text\n")
			return 0
		}
	}
	errs := 0
	for _, r := range restores {
		errs += c.setfattrRestore(r, follow)
	}
	if !((remove || set) && len(files) > 0 || len(restores) > 0) {
		return synopsis()
	}
	if set || remove {
		for _, f := range files {
			if c.setfattrOne(f, attrUnquote(name), value, haveValue, remove, follow) != 0 {
				errs++
			}
		}
	}
	if errs > 0 {
		return 1
	}
	return 0
}

// setfattrOne is do_set: the value decoded, then setxattr or removexattr.
func (c *cmd) setfattrOne(path, name, value string, haveValue, remove, follow bool) int {
	var v []byte
	if haveValue {
		var ok bool
		if v, ok = attrDecode(value); !ok {
			fmt.Fprintf(c.errw, "bad input encoding\n")
			return 1
		}
	}
	var err error
	if remove {
		err = c.removexattr(path, name, follow)
	} else {
		err = c.setxattr(path, name, v, follow)
	}
	if err != nil {
		fmt.Fprintf(c.errw, "setfattr: %s: %s\n", attrQuote(path, "\n\r"), strerrorEA(err))
		return 1
	}
	return 0
}

// setfattrRestore is restore(): "# file: PATH" blocks of NAME=VALUE lines
// (getfattr -d's output). It returns the number of errors.
func (c *cmd) setfattrRestore(file string, follow bool) int {
	data, err := c.readAll(file)
	if err != nil {
		fmt.Fprintf(c.errw, "setfattr: %s: %s\n", file, strerrorEA(err))
		return 1
	}
	lines := strings.Split(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	errs := 0
	line := 0
	for i := 0; i < len(lines); {
		backup := line
		for i < len(lines) && lines[i] == "" {
			i++
			line++
		}
		if i == len(lines) {
			break
		}
		l := lines[i]
		i++
		line++
		p, ok := strings.CutPrefix(l, "# file: ")
		if !ok {
			if file == "-" {
				fmt.Fprintf(c.errw, "setfattr: No filename found in line %d of standard input, aborting\n", backup)
			} else {
				fmt.Fprintf(c.errw, "setfattr: %s: No filename found in line %d, aborting\n", file, backup)
			}
			return errs + 1
		}
		p = attrUnquote(p)
		for i < len(lines) && lines[i] != "" {
			name, value, hasValue := strings.Cut(lines[i], "=")
			i++
			line++
			if c.setfattrOne(p, attrUnquote(name), value, hasValue, false, follow) != 0 {
				errs++
			}
		}
		line++
		i++
	}
	return errs
}

// getfattrOpts are getfattr's options.
type getfattrOpts struct {
	dump, valuesOnly, absolute, recursive, follow bool
	name, encoding                                string
	match                                         *regexp.Regexp
	warned                                        bool
}

// cmdGetfattr is getfattr(1): the names matching -m (default ^user\.) of
// each path's attributes, or with -d their values, or -n NAME's value;
// --only-values prints the bare value, -R recurses, -h does not follow
// symlinks, --absolute-names keeps a leading '/'.
func cmdGetfattr(c *cmd) int {
	opts, paths, ok := c.getoptLong([]longOpt{
		{'n', "name", true, "n"}, {'d', "dump", false, "d"}, {'e', "encoding", true, "e"},
		{'m', "match", true, "m"}, {0, "only-values", false, "v"}, {'h', "no-dereference", false, "h"},
		{0, "absolute-names", false, "a"}, {'R', "recursive", false, "R"}, {'L', "logical", false, "L"},
		{'P', "physical", false, "P"}, {0, "version", false, "V"}, {0, "help", false, "help"},
	})
	synopsis := func() int {
		fmt.Fprintf(c.errw, "Usage: getfattr %s\nTry `getfattr --help' for more information.\n", getfattrSpec)
		return 2
	}
	if !ok {
		return synopsis()
	}
	g := &getfattrOpts{follow: true}
	pattern := `^user\.`
	for _, o := range opts {
		switch o[0] {
		case "a":
			g.absolute = true
		case "d":
			g.dump = true
		case "e":
			if o[1] != "text" && o[1] != "hex" && o[1] != "base64" {
				return synopsis()
			}
			g.encoding = o[1]
		case "help":
			fmt.Fprintf(c.out, "getfattr %s -- get extended attributes\nUsage: getfattr %s\n", attrVersion, getfattrSpec)
			fmt.Fprint(c.out, "  -n, --name=name         get the named extended attribute value\n"+
				"  -d, --dump              get all extended attribute values\n"+
				"  -e, --encoding=...      encode values (as 'text', 'hex' or 'base64')\n"+
				"      --match=pattern     only get attributes with names matching pattern\n"+
				"      --only-values       print the bare values only\n"+
				"  -h, --no-dereference    do not dereference symbolic links\n"+
				"      --absolute-names    don't strip leading '/' in pathnames\n"+
				"  -R, --recursive         recurse into subdirectories\n"+
				"  -L, --logical           logical walk, follow symbolic links\n"+
				"  -P  --physical          physical walk, do not follow symbolic links\n"+
				"      --version           print version and exit\n"+
				"      --help              this help text\n")
			return 0
		case "h":
			g.follow = false
		case "n":
			g.dump, g.name = true, o[1]
		case "m":
			pattern = o[1]
			if pattern == "-" {
				pattern = ""
			}
		case "v":
			g.valuesOnly = true
		case "R":
			g.recursive = true
		case "V":
			fmt.Fprintf(c.out, "getfattr %s\n", attrVersion)
			return 0
		}
	}
	if len(paths) == 0 {
		return synopsis()
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		fmt.Fprintf(c.errw, "getfattr: invalid regular expression \"%s\"\n", pattern)
		return 1
	}
	g.match = re
	errs := 0
	for _, p := range paths {
		errs += c.getfattrWalk(g, p)
	}
	if errs > 0 {
		return 1
	}
	return 0
}

// getfattrWalk is walk_tree over path: the path itself (stat or lstat
// failing is reported and counted), then with -R its directory's entries.
func (c *cmd) getfattrWalk(g *getfattrOpts, path string) int {
	st, err := c.stat(path, g.follow)
	if err != nil {
		fmt.Fprintf(c.errw, "getfattr: %s: %s\n", attrQuote(path, "\n\r"), strerror(err))
		return 1
	}
	errs := c.getfattrPrint(g, path)
	if g.recursive && st.Mode&vfs.S_IFMT == vfs.S_IFDIR {
		names, err := c.readdirNames(path)
		if err != nil {
			fmt.Fprintf(c.errw, "getfattr: %s: %s\n", attrQuote(path, "\n\r"), strerror(err))
			return errs + 1
		}
		for _, n := range names {
			child := strings.TrimSuffix(path, "/") + "/" + n
			errs += c.getfattrWalk(g, child)
		}
	}
	return errs
}

// readdirNames lists a directory's entries but "." and "..", in the
// order getdents gives them.
func (c *cmd) readdirNames(path string) ([]string, error) {
	ents, err := c.m.readDir(c.errw, c.id, c.name, c.abs(path))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.Name != "." && e.Name != ".." {
			out = append(out, e.Name)
		}
	}
	return out, nil
}

// getfattrPrint is do_print: -n's attribute, or the listed ones matching
// the pattern in name order; a blank line after a file's block.
func (c *cmd) getfattrPrint(g *getfattrOpts, path string) int {
	header := false
	errs := 0
	if g.name != "" {
		errs = c.getfattrAttr(g, path, g.name, &header)
	} else {
		n, err := c.listxattr(path, nil, g.follow)
		if err != nil {
			fmt.Fprintf(c.errw, "getfattr: %s: %s\n", attrQuote(path, "\n\r"), strerrorEA(err))
			return 1
		}
		if n > 0 {
			buf := make([]byte, n)
			n, err = c.listxattr(path, buf, g.follow)
			if err != nil {
				fmt.Fprintf(c.errw, "%s: %s\n", attrQuote(path, "\n\r"), strerrorEA(err))
				return 1
			}
			var names []string
			for _, nm := range strings.Split(string(buf[:n]), "\x00") {
				if nm != "" && g.match.MatchString(nm) {
					names = append(names, nm)
				}
			}
			sort.Strings(names)
			for _, nm := range names {
				c.getfattrAttr(g, path, nm, &header)
			}
		}
	}
	if header {
		fmt.Fprintln(c.out)
	}
	return errs
}

// getfattrAttr is print_attribute.
func (c *cmd) getfattrAttr(g *getfattrOpts, path, name string, header *bool) int {
	var value []byte
	if g.dump || g.valuesOnly {
		n, err := c.getxattr(path, name, nil, g.follow)
		if err == nil {
			value = make([]byte, n)
			if n > 0 {
				n, err = c.getxattr(path, name, value, g.follow)
				value = value[:max(n, 0)]
			}
		}
		if err != nil {
			fmt.Fprintf(c.errw, "%s: %s: %s\n", attrQuote(path, "\n\r"), attrQuote(name, "\n\r"), strerrorEA(err))
			return 1
		}
	}
	shown := path
	if !g.absolute {
		if strings.HasPrefix(shown, "/") {
			if !g.warned {
				fmt.Fprintf(c.errw, "getfattr: Removing leading '/' from absolute path names\n")
				g.warned = true
			}
			shown = strings.TrimLeft(shown, "/")
		} else if strings.HasPrefix(shown, "./") {
			shown = strings.TrimLeft(shown[1:], "/")
		}
		if shown == "" {
			shown = "."
		}
	}
	if !*header && !g.valuesOnly {
		fmt.Fprintf(c.out, "# file: %s\n", attrQuote(shown, "\n\r"))
		*header = true
	}
	switch {
	case g.valuesOnly:
		c.out.Write(value)
	case g.dump:
		fmt.Fprintf(c.out, "%s=%s\n", attrQuote(name, "=\n\r"), attrEncode(value, g.encoding))
	default:
		fmt.Fprintln(c.out, attrQuote(name, "=\n\r"))
	}
	return 0
}
