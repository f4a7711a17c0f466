package shell

import (
	"context"
	"io"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/vfslab/vfslab/vfs"
)

// The shell's variables that mvdan's interpreter would take from the host
// come from the machine instead: `~user` from the machine's /etc/passwd
// (the expander asks the environment for "HOME user" before it tries
// os/user), $UID, $EUID and $GID from the process's credentials (the
// interpreter sets them from os.Getuid only when the environment has
// none), and $$ and $PPID, which the interpreter answers with os.Getpid
// and os.Getppid whatever the environment says, are renamed in the parsed
// script (rewritePids) to variables the environment answers with the
// machine task's pid.

// pidVar and ppidVar are what $$ and $PPID become.
const (
	pidVar  = "__VFSLAB_PID"
	ppidVar = "__VFSLAB_PPID"
)

// machineEnv is a runner's environment: the script's variables, with the
// machine's answers for the names above.
type machineEnv struct {
	expand.Environ
	m  *Machine
	id ident
}

func roVar(s string) expand.Variable {
	return expand.Variable{Set: true, Kind: expand.String, ReadOnly: true, Str: s}
}

func (e machineEnv) Get(name string) expand.Variable {
	if user, ok := strings.CutPrefix(name, "HOME "); ok {
		if home, ok := e.m.passwdHome(user); ok {
			return roVar(home)
		}
		// An unknown user's ~name stays as it is, as in bash.
		return roVar("~" + user)
	}
	switch name {
	case "UID", "EUID":
		return roVar(strconv.FormatUint(uint64(e.id.uid), 10))
	case "GID":
		return roVar(strconv.FormatUint(uint64(e.id.gid), 10))
	case pidVar:
		return roVar(strconv.Itoa(e.m.t.PID))
	case ppidVar:
		// The shell is the machine's first task, whose parent is the
		// kernel (0), as init's is.
		return roVar("0")
	}
	return e.Environ.Get(name)
}

// passwdHome is user's home directory in the machine's /etc/passwd.
func (m *Machine) passwdHome(user string) (string, bool) {
	if user == "" || strings.ContainsAny(user, ":\n") {
		return "", false
	}
	f, err := m.openFile(nil, rootIdent, "sh", "/etc/passwd", vfs.O_RDONLY, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for b.Len() < 1<<20 {
		n, err := f.Read(buf)
		b.Write(buf[:n])
		if err != nil || n == 0 {
			break
		}
	}
	for _, line := range strings.Split(b.String(), "\n") {
		f := strings.Split(line, ":")
		if len(f) >= 6 && f[0] == user {
			return f[5], true
		}
	}
	return "", false
}

// rewritePids renames $$ and $PPID (and ${$}, ${PPID}) to pidVar and
// ppidVar.
func rewritePids(n syntax.Node) {
	pe, ok := n.(*syntax.ParamExp)
	if !ok || pe.Param == nil {
		return
	}
	switch pe.Param.Value {
	case "$":
		pe.Param = &syntax.Lit{ValuePos: pe.Param.ValuePos, ValueEnd: pe.Param.ValueEnd, Value: pidVar}
		pe.Short = false
	case "PPID":
		pe.Param = &syntax.Lit{ValuePos: pe.Param.ValuePos, ValueEnd: pe.Param.ValueEnd, Value: ppidVar}
		pe.Short = false
	}
}

// peelBuiltin drops `builtin` and `command` (without -v or -V) before
// type, which, command -v/-V and test: the interpreter's own versions
// would look at the host's PATH, files and credentials.
func peelBuiltin(args []string) []string {
	for len(args) > 1 && (args[0] == "builtin" || (args[0] == "command" && !strings.HasPrefix(args[1], "-"))) {
		switch args[1] {
		case "type", "which", "command", "test", "[", "echo":
			args = args[1:]
			continue
		}
		break
	}
	// command -p -v NAME: -p (the default PATH) changes nothing here.
	if len(args) > 2 && args[0] == "command" && args[1] == "-p" {
		args = append([]string{"command"}, args[2:]...)
	}
	return args
}

// classicTest answers the tests of `[` and `test` that mvdan's
// interpreter would answer from the host (-O and -G compare with
// os/user.Current, and panic on the machine's stat; -N and -ef read the
// host's syscall.Stat_t): each is evaluated on the machine with the
// process's credentials and replaced by a test of the same truth (-n 1,
// -n ""). The arguments are parsed as the interpreter parses them, so
// that only operators in operator position are replaced.
func (s *Shell) classicTest(ctx context.Context, args []string) []string {
	hc := interp.HandlerCtx(ctx)
	return s.classicTestAs(identOf(ctx), hc.Dir, hc.Stderr, args)
}

// classicTestAs is classicTest for a process id in directory dir.
func (s *Shell) classicTestAs(id ident, dir string, errw io.Writer, args []string) []string {
	toks := args[1:]
	if args[0] == "[" {
		if len(toks) == 0 || toks[len(toks)-1] != "]" {
			return args
		}
		toks = toks[:len(toks)-1]
	}
	p := &testScan{toks: toks}
	p.classic(false)
	if p.bad || len(p.unary)+len(p.ef) == 0 {
		return args
	}
	stat := func(name string) (vfs.Stat, bool) {
		st, err := s.m.stat(errw, id, "sh", abs(dir, name), true)
		return st, err == nil
	}
	out := append([]string(nil), toks...)
	truth := func(b bool) string {
		if b {
			return "1"
		}
		return ""
	}
	for _, i := range p.unary {
		st, ok := stat(toks[i+1])
		var r bool
		switch toks[i] {
		case "-O":
			r = ok && st.UID == id.uid
		case "-G":
			r = ok && st.GID == id.gid
		case "-N":
			r = ok && st.Mtime > st.Atime
		}
		out[i], out[i+1] = "-n", truth(r)
	}
	for _, i := range p.ef {
		a, okA := stat(toks[i-1])
		b, okB := stat(toks[i+1])
		out[i-1], out[i], out[i+1] = truth(okA && okB && a.Dev == b.Dev && a.Ino == b.Ino), "=", "1"
	}
	res := append([]string{args[0]}, out...)
	if args[0] == "[" {
		res = append(res, "]")
	}
	return res
}

// testScan is the interpreter's grammar of a classic test (test_classic.go:
// classicTest and testExprBase), recording where the operators answered
// on the machine are: unary holds the index of each -O, -G, -N with its
// operand, ef the index of each binary -ef.
type testScan struct {
	toks      []string
	i         int
	unary, ef []int
	bad       bool
}

func (p *testScan) eof() bool   { return p.i >= len(p.toks) }
func (p *testScan) val() string { return p.toks[p.i] }

// classic returns whether an expression was parsed, and whether it was
// a single word (for -ef's left operand).
func (p *testScan) classic(pastAndOr bool) (bool, bool) {
	var ok, word bool
	if pastAndOr {
		ok, word = p.base()
	} else {
		ok, word = p.classic(true)
	}
	if !ok || p.eof() || p.val() == ")" {
		return ok, word
	}
	op := p.val()
	at := p.i
	if !testBinary(op) {
		p.bad = true
		return ok, false
	}
	p.i++
	if op == "-a" || op == "-o" {
		if r, _ := p.classic(false); !r {
			p.bad = true
		}
		return ok, false
	}
	if p.eof() {
		p.bad = true
		return ok, false
	}
	if op == "-ef" && word {
		p.ef = append(p.ef, at)
	}
	p.i++
	return ok, false
}

func (p *testScan) base() (bool, bool) {
	if p.eof() || p.val() == ")" {
		return false, false
	}
	v := p.val()
	switch {
	case v == "!":
		p.i++
		ok, _ := p.classic(false)
		return ok, false
	case v == "(":
		p.i++
		ok, _ := p.classic(false)
		if p.eof() || p.val() != ")" {
			p.bad = true
			return ok, false
		}
		p.i++
		return ok, false
	case testUnary(v):
		at := p.i
		p.i++
		if p.eof() {
			// [ -O ] is [ -n -O ].
			return true, true
		}
		if v == "-O" || v == "-G" || v == "-N" {
			p.unary = append(p.unary, at)
		}
		p.i++
		return true, false
	}
	p.i++
	return true, true
}

// testUnary and testBinary are the classic test's operators.
func testUnary(v string) bool {
	switch v {
	case "-e", "-a", "-f", "-d", "-c", "-b", "-p", "-S", "-L", "-h", "-k", "-g", "-u", "-G", "-O", "-N",
		"-r", "-w", "-x", "-s", "-t", "-z", "-n", "-o", "-v", "-R":
		return true
	}
	return false
}

func testBinary(v string) bool {
	switch v {
	case "-a", "-o", "==", "=", "!=", "-nt", "-ot", "-ef", "-eq", "-ne", "-le", "-ge", "-lt", "-gt":
		return true
	}
	return false
}

// rewriteTests makes the [[ ]] tests -O, -G, -N and -ef ask the machine:
// `[[ -O X ]]` becomes `[[ -n $(__vfslab_test=X __vfslab_test -O) ]]`,
// whose command answers "1" or nothing (cmdTest). X is expanded as an
// assignment is, without field splitting or globbing, as in [[ ]].
func rewriteTests(n syntax.Node) {
	tc, ok := n.(*syntax.TestClause)
	if !ok {
		return
	}
	var fix func(e syntax.TestExpr) syntax.TestExpr
	ask := func(op string, words ...*syntax.Word) syntax.TestExpr {
		call := &syntax.CallExpr{Args: []*syntax.Word{litWord("__vfslab_test"), litWord(op)}}
		for i, w := range words {
			call.Assigns = append(call.Assigns, &syntax.Assign{Name: &syntax.Lit{Value: "__vfslab_test" + strconv.Itoa(i)}, Value: w})
		}
		return &syntax.UnaryTest{Op: syntax.TsNempStr, X: &syntax.Word{Parts: []syntax.WordPart{
			&syntax.CmdSubst{Stmts: []*syntax.Stmt{{Cmd: call}}},
		}}}
	}
	fix = func(e syntax.TestExpr) syntax.TestExpr {
		switch e := e.(type) {
		case *syntax.UnaryTest:
			if w, ok := e.X.(*syntax.Word); ok {
				switch e.Op {
				case syntax.TsUsrOwn:
					return ask("-O", w)
				case syntax.TsGrpOwn:
					return ask("-G", w)
				case syntax.TsModif:
					return ask("-N", w)
				}
			}
			e.X = fix(e.X)
		case *syntax.BinaryTest:
			x, okX := e.X.(*syntax.Word)
			y, okY := e.Y.(*syntax.Word)
			if e.Op == syntax.TsDevIno && okX && okY {
				return ask("-ef", x, y)
			}
			e.X, e.Y = fix(e.X), fix(e.Y)
		case *syntax.ParenTest:
			e.X = fix(e.X)
		}
		return e
	}
	tc.X = fix(tc.X)
}

// cmdTest is __vfslab_test OP: the [[ ]] test OP on the files named by
// $__vfslab_test0 (and $__vfslab_test1 for -ef), as classicTest answers
// it: "1" when true.
func cmdTest(c *cmd) int {
	if len(c.args) != 1 || c.env == nil {
		return 2
	}
	a := c.env.Get("__vfslab_test0").String()
	args := []string{"test", c.args[0], a}
	if c.args[0] == "-ef" {
		args = []string{"test", a, "-ef", c.env.Get("__vfslab_test1").String()}
	}
	// The answer is where classicTestAs puts it: [test -n T] for a
	// unary test, [test T = 1] for -ef.
	out := c.s.classicTestAs(c.id, c.dir, c.errw, args)
	i := 2
	if c.args[0] == "-ef" {
		i = 1
	}
	if len(out) > i && out[i] == "1" {
		c.out.Write([]byte("1"))
	}
	return 0
}

// sourcePath is the file `. NAME` reads: NAME with a slash as it is,
// else the first regular file NAME in the machine's $PATH, else NAME in
// the shell's directory, as bash searches. The interpreter would search
// the host's PATH; given a path with a slash it only joins it.
func (s *Shell) sourcePath(ctx context.Context, name string) string {
	if strings.Contains(name, "/") || name == "" {
		return name
	}
	hc := interp.HandlerCtx(ctx)
	id := identOf(ctx)
	for _, dir := range strings.Split(hc.Env.Get("PATH").String(), ":") {
		if dir == "" {
			dir = "."
		}
		p := abs(hc.Dir, dir+"/"+name)
		if st, err := s.m.stat(hc.Stderr, id, "sh", p, true); err == nil && st.Mode&vfs.S_IFMT == vfs.S_IFREG {
			return p
		}
	}
	return abs(hc.Dir, name)
}
