package shell

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// breToERE converts a POSIX basic regular expression to Go's syntax: in a
// BRE, \( \) \{ \} \| \+ \? are the operators and ( ) { } | + ? literals.
func breToERE(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch == '\\' && i+1 < len(s) {
			n := s[i+1]
			switch n {
			case '(', ')', '{', '}', '|', '+', '?':
				b.WriteByte(n)
			default:
				b.WriteByte('\\')
				b.WriteByte(n)
			}
			i++
			continue
		}
		switch ch {
		case '(', ')', '{', '}', '|', '+', '?':
			b.WriteByte('\\')
			b.WriteByte(ch)
		case '*':
			if i == 0 || (i == 1 && s[0] == '^') {
				b.WriteString(`\*`)
			} else {
				b.WriteByte('*')
			}
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

// compileRE compiles a grep/sed pattern: ERE with ere, else BRE.
func compileRE(p string, ere, icase bool) (*regexp.Regexp, error) {
	if !ere {
		p = breToERE(p)
	}
	p = strings.ReplaceAll(p, "[[:space:]]", `[\s]`)
	if icase {
		p = "(?i)" + p
	}
	return regexp.Compile(p)
}

func cmdEgrep(c *cmd) int {
	c.args = append([]string{"-E"}, c.args...)
	c.name = "grep"
	return cmdGrep(c)
}

// grepPatterns are the patterns of grep's -e options, in order:
// "-e PAT", "-ePAT" and -e at the end of a group of options ("-qe PAT").
func grepPatterns(args []string) []string {
	var pats []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' || strings.HasPrefix(a, "--") {
			continue
		}
		if j := strings.IndexByte(a, 'e'); j > 0 {
			if j+1 < len(a) {
				pats = append(pats, a[j+1:])
			} else if i+1 < len(args) {
				pats = append(pats, args[i+1])
				i++
			}
		}
	}
	return pats
}

func cmdGrep(c *cmd) int {
	opts, args, ok := c.flags("cEqvxiFlnowsH", "e", "[OPTION]... PATTERNS [FILE]...")
	if !ok {
		return 2
	}
	var pats []string
	if _, ok := opts['e']; ok {
		// Every -e PATTERN counts (the options parser keeps the last).
		pats = grepPatterns(c.args)
	} else {
		if len(args) == 0 {
			c.usage("[OPTION]... PATTERNS [FILE]...")
			return 2
		}
		pats = strings.Split(args[0], "\n")
		args = args[1:]
	}
	var res []*regexp.Regexp
	for _, p := range pats {
		if opts['F'] != "" {
			p = regexp.QuoteMeta(p)
			opts['E'] = "1"
		}
		if opts['w'] != "" {
			p = `\b(?:` + p + `)\b`
			if opts['E'] == "" {
				p = breToERE(pats[0])
				p = `\b(?:` + p + `)\b`
				opts['E'] = "1"
			}
		}
		if opts['x'] != "" {
			if opts['E'] == "" {
				p = breToERE(p)
			}
			p = "^(?:" + p + ")$"
			re, err := compileRE(p, true, opts['i'] != "")
			if err != nil {
				c.errf("Invalid regular expression")
				return 2
			}
			res = append(res, re)
			continue
		}
		re, err := compileRE(p, opts['E'] != "", opts['i'] != "")
		if err != nil {
			c.errf("Invalid regular expression")
			return 2
		}
		res = append(res, re)
	}
	multi := len(args) > 1 || opts['H'] != ""
	if len(args) == 0 {
		args = []string{"-"}
	}
	found, trouble := false, false
	for _, a := range args {
		r, err := c.openReader(a)
		if err != nil {
			if opts['s'] == "" {
				c.errf("%s: %s", a, strerror(err))
			}
			trouble = true
			continue
		}
		name := a
		if a == "-" {
			name = "(standard input)"
		}
		count := 0
		// The input is read a line at a time.
		br := bufio.NewReaderSize(r, streamChunk)
		for i := 0; ; i++ {
			l, rerr := br.ReadString('\n')
			if rerr != nil && l == "" {
				if rerr != io.EOF && opts['s'] == "" {
					c.errf("%s: %s", a, strerror(rerr))
					trouble = true
				}
				break
			}
			l = strings.TrimSuffix(l, "\n")
			match := false
			for _, re := range res {
				if re.MatchString(l) {
					match = true
					break
				}
			}
			if match == (opts['v'] != "") {
				continue
			}
			count++
			found = true
			if opts['q'] != "" {
				r.Close()
				return 0
			}
			if opts['c'] != "" || opts['l'] != "" {
				continue
			}
			prefix := ""
			if multi {
				prefix = name + ":"
			}
			if opts['n'] != "" {
				prefix += strconv.Itoa(i+1) + ":"
			}
			if opts['o'] != "" && opts['v'] == "" {
				for _, re := range res {
					for _, m := range re.FindAllString(l, -1) {
						fmt.Fprintln(c.out, prefix+m)
					}
				}
				continue
			}
			fmt.Fprintln(c.out, prefix+l)
		}
		r.Close()
		if opts['c'] != "" {
			if multi {
				fmt.Fprintf(c.out, "%s:%d\n", name, count)
			} else {
				fmt.Fprintln(c.out, count)
			}
		}
		if opts['l'] != "" && count > 0 {
			fmt.Fprintln(c.out, name)
		}
	}
	if trouble && !(found && opts['q'] != "") {
		return 2
	}
	if found {
		return 0
	}
	return 1
}

// --- sed ---

// sedCmd is one command of a sed script.
type sedCmd struct {
	a1, a2   *sedAddr
	neg      bool
	op       byte
	re       *regexp.Regexp
	repl     string
	global   bool
	nth      int
	print    bool
	text     string
	inRange  bool
	ysrc     []byte
	ydst     []byte
	children []*sedCmd
}

type sedAddr struct {
	line int // 0: regexp; -1: $
	re   *regexp.Regexp
}

type sedParser struct {
	s   string
	i   int
	ere bool
}

func (p *sedParser) delimited(d byte) (string, error) { return p.delimitedRE(d, false) }

// delimitedRE reads up to the delimiter d; in a regexp (re) a bracket
// expression is copied whole, as POSIX reads the delimiter inside one as
// itself.
func (p *sedParser) delimitedRE(d byte, re bool) (string, error) {
	var b strings.Builder
	for p.i < len(p.s) {
		ch := p.s[p.i]
		if re && ch == '[' {
			j := p.i + 1
			if j < len(p.s) && p.s[j] == '^' {
				j++
			}
			if j < len(p.s) && p.s[j] == ']' {
				j++
			}
			for j < len(p.s) && p.s[j] != ']' {
				if p.s[j] == '[' && j+1 < len(p.s) && p.s[j+1] == ':' {
					if k := strings.Index(p.s[j:], ":]"); k > 0 {
						j += k + 2
						continue
					}
				}
				j++
			}
			if j < len(p.s) {
				b.WriteString(p.s[p.i : j+1])
				p.i = j + 1
				continue
			}
		}
		if ch == '\\' && p.i+1 < len(p.s) {
			if p.s[p.i+1] == d {
				b.WriteByte(d)
			} else if p.s[p.i+1] == 'n' {
				b.WriteByte('\n')
			} else {
				b.WriteByte('\\')
				b.WriteByte(p.s[p.i+1])
			}
			p.i += 2
			continue
		}
		if ch == d {
			p.i++
			return b.String(), nil
		}
		b.WriteByte(ch)
		p.i++
	}
	return "", fmt.Errorf("unterminated `s' command")
}

func (p *sedParser) addr() (*sedAddr, error) {
	if p.i >= len(p.s) {
		return nil, nil
	}
	ch := p.s[p.i]
	switch {
	case ch == '$':
		p.i++
		return &sedAddr{line: -1}, nil
	case ch >= '0' && ch <= '9':
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		n, _ := strconv.Atoi(p.s[p.i:j])
		p.i = j
		return &sedAddr{line: n}, nil
	case ch == '/' || ch == '\\':
		d := byte('/')
		if ch == '\\' {
			p.i++
			d = p.s[p.i]
		}
		p.i++
		pat, err := p.delimitedRE(d, true)
		if err != nil {
			return nil, fmt.Errorf("unterminated address regex")
		}
		re, err := compileRE(pat, p.ere, false)
		if err != nil {
			return nil, err
		}
		return &sedAddr{re: re}, nil
	}
	return nil, nil
}

func (p *sedParser) skipSpace() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *sedParser) parse(end byte) ([]*sedCmd, error) {
	var out []*sedCmd
	for {
		for p.i < len(p.s) && strings.IndexByte(" \t\n;", p.s[p.i]) >= 0 {
			p.i++
		}
		if p.i >= len(p.s) {
			if end != 0 {
				return nil, fmt.Errorf("unmatched `{'")
			}
			return out, nil
		}
		if p.s[p.i] == end {
			p.i++
			return out, nil
		}
		c := &sedCmd{}
		var err error
		if c.a1, err = p.addr(); err != nil {
			return nil, err
		}
		if c.a1 != nil && p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			if c.a2, err = p.addr(); err != nil {
				return nil, err
			}
		}
		p.skipSpace()
		if p.i < len(p.s) && p.s[p.i] == '!' {
			c.neg = true
			p.i++
			p.skipSpace()
		}
		if p.i >= len(p.s) {
			return nil, fmt.Errorf("missing command")
		}
		c.op = p.s[p.i]
		p.i++
		switch c.op {
		case 's':
			if p.i >= len(p.s) {
				return nil, fmt.Errorf("unterminated `s' command")
			}
			d := p.s[p.i]
			p.i++
			pat, err := p.delimitedRE(d, true)
			if err != nil {
				return nil, err
			}
			repl, err := p.delimited(d)
			if err != nil {
				return nil, err
			}
			c.repl = repl
			icase := false
			for p.i < len(p.s) && strings.IndexByte("gpI0123456789", p.s[p.i]) >= 0 {
				switch ch := p.s[p.i]; {
				case ch == 'g':
					c.global = true
				case ch == 'p':
					c.print = true
				case ch == 'I':
					icase = true
				default:
					c.nth = c.nth*10 + int(ch-'0')
				}
				p.i++
			}
			if c.re, err = compileRE(pat, p.ere, icase); err != nil {
				return nil, err
			}
		case 'y':
			d := p.s[p.i]
			p.i++
			a, err := p.delimited(d)
			if err != nil {
				return nil, err
			}
			b, err := p.delimited(d)
			if err != nil {
				return nil, err
			}
			if len(a) != len(b) {
				return nil, fmt.Errorf("strings for `y' command are different lengths")
			}
			c.ysrc, c.ydst = []byte(a), []byte(b)
		case 'd', 'p', 'q', '=', 'n', 'N', 'D', 'P', 'h', 'H', 'g', 'G', 'x':
		case 'a', 'i', 'c':
			p.skipSpace()
			if p.i < len(p.s) && p.s[p.i] == '\\' {
				p.i++
				if p.i < len(p.s) && p.s[p.i] == '\n' {
					p.i++
				}
			}
			j := strings.IndexByte(p.s[p.i:], '\n')
			if j < 0 {
				j = len(p.s) - p.i
			}
			c.text = p.s[p.i : p.i+j]
			p.i += j
		case '{':
			if c.children, err = p.parse('}'); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unknown command: `%c'", c.op)
		}
		out = append(out, c)
	}
}

// sedRepl expands a replacement: & and \1..\9.
func sedRepl(re *regexp.Regexp, line string, m []int, repl string) string {
	var b strings.Builder
	for i := 0; i < len(repl); i++ {
		ch := repl[i]
		switch {
		case ch == '&':
			b.WriteString(line[m[0]:m[1]])
		case ch == '\\' && i+1 < len(repl):
			i++
			n := repl[i]
			if n >= '0' && n <= '9' {
				k := int(n - '0')
				if 2*k+1 < len(m) && m[2*k] >= 0 {
					b.WriteString(line[m[2*k]:m[2*k+1]])
				}
			} else if n == 'n' {
				b.WriteByte('\n')
			} else {
				b.WriteByte(n)
			}
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

type sedState struct {
	out     io.Writer
	quiet   bool
	lineNo  int
	last    bool
	hold    string
	quit    bool
	deleted bool
	appends []string
}

func (st *sedState) matches(c *sedCmd, line string) bool {
	m := func(a *sedAddr) bool {
		switch {
		case a.re != nil:
			return a.re.MatchString(line)
		case a.line == -1:
			return st.last
		default:
			return a.line == st.lineNo
		}
	}
	var r bool
	switch {
	case c.a1 == nil:
		r = true
	case c.a2 == nil:
		r = m(c.a1)
	case c.inRange:
		if m(c.a2) || (c.a2.re == nil && c.a2.line > 0 && st.lineNo >= c.a2.line) {
			c.inRange = false
		}
		r = true
	default:
		if m(c.a1) {
			r = true
			if !(c.a2.re == nil && c.a2.line > 0 && c.a2.line <= st.lineNo) {
				c.inRange = true
			}
		}
	}
	return r != c.neg
}

func (st *sedState) run(cmds []*sedCmd, line *string) {
	for _, c := range cmds {
		if st.deleted || st.quit {
			return
		}
		if !st.matches(c, *line) {
			continue
		}
		switch c.op {
		case '{':
			st.run(c.children, line)
		case 's':
			n := 0
			done := false
			var b strings.Builder
			last := 0
			for _, m := range c.re.FindAllStringSubmatchIndex(*line, -1) {
				n++
				if (c.nth > 0 && n != c.nth) || (c.nth == 0 && !c.global && n > 1) || (c.nth > 0 && done) {
					continue
				}
				b.WriteString((*line)[last:m[0]])
				b.WriteString(sedRepl(c.re, *line, m, c.repl))
				last = m[1]
				done = true
				if !c.global {
					break
				}
			}
			if done {
				b.WriteString((*line)[last:])
				*line = b.String()
				if c.print {
					fmt.Fprintln(st.out, *line)
				}
			}
		case 'y':
			bs := []byte(*line)
			for i, ch := range bs {
				if k := strings.IndexByte(string(c.ysrc), ch); k >= 0 {
					bs[i] = c.ydst[k]
				}
			}
			*line = string(bs)
		case 'd':
			st.deleted = true
		case 'p':
			fmt.Fprintln(st.out, *line)
		case 'q':
			st.quit = true
		case '=':
			fmt.Fprintln(st.out, st.lineNo)
		case 'a':
			st.appends = append(st.appends, c.text)
		case 'i':
			fmt.Fprintln(st.out, c.text)
		case 'c':
			fmt.Fprintln(st.out, c.text)
			st.deleted = true
		case 'h':
			st.hold = *line
		case 'H':
			st.hold += "\n" + *line
		case 'g':
			*line = st.hold
		case 'G':
			*line += "\n" + st.hold
		case 'x':
			*line, st.hold = st.hold, *line
		}
	}
}

func cmdSed(c *cmd) int {
	opts, args, ok := c.flags("nErsu", "ef", "[OPTION]... {script-only-if-no-other-script} [input-file]...")
	if !ok {
		return 1
	}
	var scripts []string
	// -e may repeat: collect them in order.
	for i := 0; i < len(c.args); i++ {
		if c.args[i] == "-e" && i+1 < len(c.args) {
			scripts = append(scripts, c.args[i+1])
			i++
		} else if strings.HasPrefix(c.args[i], "-e") && len(c.args[i]) > 2 {
			scripts = append(scripts, c.args[i][2:])
		}
	}
	if len(scripts) == 0 {
		if _, ok := opts['e']; !ok {
			if len(args) == 0 {
				c.usage("[OPTION]... {script-only-if-no-other-script} [input-file]...")
				return 1
			}
			scripts = []string{args[0]}
			args = args[1:]
		}
	}
	p := &sedParser{s: strings.Join(scripts, "\n"), ere: opts['E'] != "" || opts['r'] != ""}
	cmds, err := p.parse(0)
	if err != nil {
		c.errf("-e expression #1, char %d: %v", p.i, err)
		return 1
	}
	datas, _, st := c.inputs(args)
	var lines []string
	for _, d := range datas {
		lines = append(lines, splitLines(d)...)
	}
	state := &sedState{out: c.out, quiet: opts['n'] != ""}
	for i, l := range lines {
		state.lineNo = i + 1
		state.last = i == len(lines)-1
		state.deleted = false
		state.appends = nil
		line := l
		state.run(cmds, &line)
		if !state.deleted && !state.quiet {
			fmt.Fprintln(c.out, line)
		}
		for _, a := range state.appends {
			fmt.Fprintln(c.out, a)
		}
		if state.quit {
			break
		}
	}
	if st != 0 {
		return 2
	}
	return 0
}

// --- od, xxd ---

func cmdOd(c *cmd) int {
	opts, args, ok := c.flags("vcbdx", "AtNjw", "[OPTION]... [FILE]...")
	if !ok {
		return 1
	}
	// The inputs are one stream, read a row at a time.
	if len(args) == 0 {
		args = []string{"-"}
	}
	st := 0
	var readers []io.Reader
	for _, a := range args {
		r, err := c.openReader(a)
		if err != nil {
			c.errf("%s: %s", a, strerror(err))
			st = 1
			continue
		}
		defer r.Close()
		readers = append(readers, r)
	}
	var in io.Reader = bufio.NewReaderSize(io.MultiReader(readers...), streamChunk)
	if j, ok := opts['j']; ok {
		n, _ := parseSize(j)
		io.CopyN(io.Discard, in, n)
	}
	if n, ok := opts['N']; ok {
		k, _ := parseSize(n)
		in = io.LimitReader(in, k)
	}
	radix := "o"
	if a, ok := opts['A']; ok {
		radix = a
	}
	typ := "o2"
	switch {
	case opts['t'] != "":
		typ = opts['t']
	case opts['c'] != "":
		typ = "c"
	case opts['x'] != "":
		typ = "x2"
	case opts['b'] != "":
		typ = "o1"
	case opts['d'] != "":
		typ = "u2"
	}
	showZ := strings.HasSuffix(typ, "z")
	typ = strings.TrimSuffix(typ, "z")
	kind := typ[0]
	size := 1
	if len(typ) > 1 {
		size, _ = strconv.Atoi(typ[1:])
		if size == 0 {
			size = 1
		}
	} else if kind != 'c' && kind != 'a' {
		size = 4
	}
	if kind == 'c' || kind == 'a' {
		size = 1
	}
	addr := func(off int) string {
		switch radix {
		case "d":
			return fmt.Sprintf("%07d", off)
		case "x":
			return fmt.Sprintf("%06x", off)
		case "n":
			return ""
		}
		return fmt.Sprintf("%07o", off)
	}
	width := 16
	var prev []byte
	starred := false
	buf := make([]byte, width)
	off := 0
	for ; ; off += width {
		n, _ := io.ReadFull(in, buf)
		if n == 0 {
			break
		}
		row := buf[:n]
		if opts['v'] == "" && prev != nil && string(prev) == string(row) && len(row) == width {
			if !starred {
				fmt.Fprintln(c.out, "*")
				starred = true
			}
			continue
		}
		starred = false
		prev = append(prev[:0], row...)
		var b strings.Builder
		b.WriteString(addr(off))
		for i := 0; i < len(row); i += size {
			var v uint64
			for k := size - 1; k >= 0; k-- {
				v <<= 8
				if i+k < len(row) {
					v |= uint64(row[i+k])
				}
			}
			switch kind {
			case 'x':
				fmt.Fprintf(&b, " %0*x", 2*size, v)
			case 'o':
				fmt.Fprintf(&b, " %0*o", (size*8+2)/3, v)
			case 'u':
				fmt.Fprintf(&b, " %*d", []int{0, 3, 5, 0, 10, 0, 0, 0, 20}[size], v)
			case 'd':
				sv := int64(v << (64 - 8*size) >> (64 - 8*size))
				fmt.Fprintf(&b, " %*d", []int{0, 4, 6, 0, 11, 0, 0, 0, 20}[size], sv)
			case 'c', 'a':
				b.WriteString(odChar(row[i]))
			}
		}
		if showZ {
			pad := (width - len(row)) / size * (2*size + 1)
			b.WriteString(strings.Repeat(" ", pad))
			b.WriteString("  >")
			writePrintable(&b, row)
			b.WriteString("<")
		}
		fmt.Fprintln(c.out, b.String())
		if n < width {
			off += n
			break
		}
	}
	if radix != "n" {
		fmt.Fprintln(c.out, addr(off))
	}
	return st
}

func odChar(ch byte) string {
	switch ch {
	case 0:
		return `  \0`
	case '\a':
		return `  \a`
	case '\b':
		return `  \b`
	case '\f':
		return `  \f`
	case '\n':
		return `  \n`
	case '\r':
		return `  \r`
	case '\t':
		return `  \t`
	case '\v':
		return `  \v`
	}
	if ch >= 0x20 && ch < 0x7f {
		return fmt.Sprintf("   %c", ch)
	}
	return fmt.Sprintf(" %03o", ch)
}

// writePrintable writes row as the dumps' text column: printable ASCII
// as it is, every other byte as '.' (xxd, od -z, hexdump -C).
func writePrintable(b *strings.Builder, row []byte) {
	for _, ch := range row {
		if ch >= 0x20 && ch < 0x7f {
			b.WriteByte(ch)
		} else {
			b.WriteByte('.')
		}
	}
}

func cmdXxd(c *cmd) int {
	opts, args, ok := c.flags("pr", "lcs", "[options] [infile [outfile]]")
	if !ok {
		return 1
	}
	datas, _, st := c.inputs(args)
	var data []byte
	for _, d := range datas {
		data = append(data, d...)
	}
	// -s OFFSET starts there (the offsets shown stay the file's), -l LEN
	// stops after LEN bytes.
	start := 0
	if v := opts['s']; v != "" {
		n, err := strconv.ParseInt(v, 0, 64)
		if err != nil || n < 0 {
			c.errf("invalid seek offset: %s", v)
			return 1
		}
		start = int(min(n, int64(len(data))))
	}
	data = data[start:]
	if v := opts['l']; v != "" {
		n, err := strconv.ParseInt(v, 0, 64)
		if err != nil || n < 0 {
			c.errf("invalid length: %s", v)
			return 1
		}
		data = data[:min(n, int64(len(data)))]
	}
	if opts['p'] != "" {
		h := fmt.Sprintf("%x", data)
		for i := 0; i < len(h); i += 60 {
			fmt.Fprintln(c.out, h[i:min(i+60, len(h))])
		}
		return min(st, 1)
	}
	for off := 0; off < len(data); off += 16 {
		row := data[off:min(off+16, len(data))]
		var b strings.Builder
		fmt.Fprintf(&b, "%08x:", start+off)
		for i := 0; i < 16; i += 2 {
			b.WriteByte(' ')
			for k := i; k < i+2; k++ {
				if k < len(row) {
					fmt.Fprintf(&b, "%02x", row[k])
				} else {
					b.WriteString("  ")
				}
			}
		}
		b.WriteString("  ")
		writePrintable(&b, row)
		fmt.Fprintln(c.out, b.String())
	}
	return min(st, 1)
}

// --- awk ---

// cmdAwk is the part of awk that xfstests' filters use: an optional
// pattern (/regexp/, NR==n, $n=="s", $n~/re/) and an action of print
// statements over fields, NR, NF and string literals, plus BEGIN/END
// blocks; -F sets the field separator. Programs beyond that are refused
// with status 2. (A full AWK in Go, benhoyt/goawk, is not served by the
// module proxy here.)
func cmdAwk(c *cmd) int {
	var fs string
	args := c.args
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		switch {
		case strings.HasPrefix(args[0], "-F"):
			fs = strings.TrimPrefix(args[0], "-F")
			if fs == "" && len(args) > 1 {
				fs = args[1]
				args = args[1:]
			}
		case args[0] == "-v" && len(args) > 1:
			args = args[1:]
		}
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(c.errw, "usage: awk [-F fs][-v var=value][prog | -f progfile][file ...]")
		return 2
	}
	prog, err := parseAwk(args[0])
	if err != nil {
		fmt.Fprintf(c.errw, "awk: %v\n", err)
		return 2
	}
	datas, _, st := c.inputs(args[1:])
	nr := 0
	var fields []string
	line := ""
	eval := func(e string) string {
		e = strings.TrimSpace(e)
		switch {
		case strings.HasPrefix(e, `"`) && strings.HasSuffix(e, `"`) && len(e) >= 2:
			return strings.ReplaceAll(e[1:len(e)-1], `\n`, "\n")
		case e == "length" || e == "length()":
			return strconv.Itoa(len(line))
		case strings.HasPrefix(e, "length(") && strings.HasSuffix(e, ")"):
			// length(s): the bytes of s (the C locale's characters).
			return strconv.Itoa(len(evalAwkTerm(e[len("length("):len(e)-1], line, fields, nr)))
		}
		return evalAwkTerm(e, line, fields, nr)
	}
	runAction := func(stmts [][]string) {
		for _, s := range stmts {
			if len(s) == 0 {
				fmt.Fprintln(c.out, line)
				continue
			}
			var parts []string
			for _, e := range s {
				// Juxtaposed expressions concatenate.
				var b strings.Builder
				for _, t := range splitAwkConcat(e) {
					b.WriteString(eval(t))
				}
				parts = append(parts, b.String())
			}
			fmt.Fprintln(c.out, strings.Join(parts, " "))
		}
	}
	for _, r := range prog {
		if r.begin {
			runAction(r.action)
		}
	}
	for _, d := range datas {
		for _, l := range splitLines(d) {
			nr++
			line = l
			if fs == "" {
				fields = strings.Fields(l)
			} else {
				fields = strings.Split(l, fs)
			}
			for _, r := range prog {
				if r.begin || r.end {
					continue
				}
				if r.match(line, fields, nr, eval) {
					runAction(r.action)
				}
			}
		}
	}
	for _, r := range prog {
		if r.end {
			runAction(r.action)
		}
	}
	return min(st, 2)
}

type awkRule struct {
	begin, end bool
	re         *regexp.Regexp
	lhs, op    string
	rhs        string
	action     [][]string
}

func (r awkRule) match(line string, fields []string, nr int, eval func(string) string) bool {
	switch {
	case r.re != nil && r.lhs == "":
		return r.re.MatchString(line)
	case r.op == "~":
		return r.re.MatchString(eval(r.lhs))
	case r.op == "!~":
		return !r.re.MatchString(eval(r.lhs))
	case r.op == "==":
		return eval(r.lhs) == eval(r.rhs)
	case r.op == "!=":
		return eval(r.lhs) != eval(r.rhs)
	}
	return true
}

// evalAwkTerm is the value of one term: $0, $N, $NF, NR, NF, a string
// literal; anything else stands for itself.
func evalAwkTerm(e, line string, fields []string, nr int) string {
	e = strings.TrimSpace(e)
	switch {
	case strings.HasPrefix(e, `"`) && strings.HasSuffix(e, `"`) && len(e) >= 2:
		return e[1 : len(e)-1]
	case e == "$0":
		return line
	case e == "NR":
		return strconv.Itoa(nr)
	case e == "NF":
		return strconv.Itoa(len(fields))
	case e == "$NF":
		if len(fields) > 0 {
			return fields[len(fields)-1]
		}
		return ""
	case strings.HasPrefix(e, "$"):
		if n, err := strconv.Atoi(e[1:]); err == nil && n >= 1 && n <= len(fields) {
			return fields[n-1]
		}
		return ""
	}
	return e
}

func splitAwkConcat(e string) []string {
	var out []string
	e = strings.TrimSpace(e)
	for len(e) > 0 {
		if e[0] == '"' {
			j := strings.IndexByte(e[1:], '"')
			if j < 0 {
				out = append(out, e)
				break
			}
			out = append(out, e[:j+2])
			e = strings.TrimSpace(e[j+2:])
			continue
		}
		j := strings.IndexAny(e, " \"")
		if j < 0 {
			out = append(out, e)
			break
		}
		out = append(out, e[:j])
		e = strings.TrimSpace(e[j:])
	}
	return out
}

func parseAwk(src string) ([]awkRule, error) {
	var rules []awkRule
	s := strings.TrimSpace(src)
	for len(s) > 0 {
		var r awkRule
		brace := strings.IndexByte(s, '{')
		pat := s
		if brace >= 0 {
			pat = s[:brace]
		}
		pat = strings.TrimSpace(pat)
		switch {
		case pat == "BEGIN":
			r.begin = true
		case pat == "END":
			r.end = true
		case strings.HasPrefix(pat, "/") && strings.HasSuffix(pat, "/") && len(pat) >= 2:
			re, err := regexp.Compile(pat[1 : len(pat)-1])
			if err != nil {
				return nil, err
			}
			r.re = re
		case pat == "":
		default:
			ok := false
			for _, op := range []string{"==", "!=", "!~", "~"} {
				if l, rr, found := strings.Cut(pat, op); found {
					r.lhs, r.op, r.rhs = strings.TrimSpace(l), op, strings.TrimSpace(rr)
					if op == "~" || op == "!~" {
						rs := strings.Trim(r.rhs, "/")
						re, err := regexp.Compile(rs)
						if err != nil {
							return nil, err
						}
						r.re = re
					}
					ok = true
					break
				}
			}
			if !ok {
				return nil, fmt.Errorf("unsupported pattern %q (the model's awk knows /re/, ==, !=, ~)", pat)
			}
		}
		if brace < 0 {
			r.action = [][]string{nil}
			rules = append(rules, r)
			break
		}
		end := strings.IndexByte(s[brace:], '}')
		if end < 0 {
			return nil, fmt.Errorf("syntax error: missing }")
		}
		body := s[brace+1 : brace+end]
		for _, stmt := range strings.Split(body, ";") {
			stmt = strings.TrimSpace(stmt)
			if stmt == "" {
				continue
			}
			if stmt == "print" {
				r.action = append(r.action, nil)
				continue
			}
			if !strings.HasPrefix(stmt, "print ") {
				return nil, fmt.Errorf("unsupported statement %q (the model's awk knows print)", stmt)
			}
			var exprs []string
			for _, e := range splitTopCommas(strings.TrimPrefix(stmt, "print ")) {
				exprs = append(exprs, strings.TrimSpace(e))
			}
			r.action = append(r.action, exprs)
		}
		rules = append(rules, r)
		s = strings.TrimSpace(s[brace+end+1:])
	}
	return rules, nil
}

func splitTopCommas(s string) []string {
	var out []string
	inq := false
	last := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			inq = !inq
		case ',':
			if !inq {
				out = append(out, s[last:i])
				last = i + 1
			}
		}
	}
	return append(out, s[last:])
}
