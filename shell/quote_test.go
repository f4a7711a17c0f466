package shell

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// quoteCases are names with what Debian's coreutils 9.1 print for them in
// the C locale: `LC_ALL=C ls --quoting-style=shell-escape` (quotef) and
// shell-escape-always (quoteaf).
var quoteCases = []struct{ name, quotef, quoteaf string }{
	{"alpha", "alpha", "'alpha'"},
	{"a@b", "a@b", "'a@b'"},
	{"a#", "a#", "'a#'"},
	{"a]b", "a]b", "'a]b'"},
	{"{a}", "{a}", "'{a}'"},
	{"{", "'{'", "'{'"},
	{"#a", "'#a'", "'#a'"},
	{"~x", "'~x'", "'~x'"},
	{"a b", "'a b'", "'a b'"},
	{"x$y", "'x$y'", "'x$y'"},
	{"a=b", "'a=b'", "'a=b'"},
	{"a?b", "'a?b'", "'a?b'"},
	{"a^b", "'a^b'", "'a^b'"},
	{`a\b`, `'a\b'`, `'a\b'`},
	{"it's", `"it's"`, `"it's"`},
	{"a'", `"a'"`, `"a'"`},
	{"'", `"'"`, `"'"`},
	{"a'b@", `"a'b@"`, `"a'b@"`},
	{"a'$", `'a'\''$'`, `'a'\''$'`},
	{"a'#", `'a'\''#'`, `'a'\''#'`},
	{"a'{", `'a'\''{'`, `'a'\''{'`},
	{"a\tb", `'a'$'\t''b'`, `'a'$'\t''b'`},
	{"a\nb", `'a'$'\n''b'`, `'a'$'\n''b'`},
	{"a'\tb", `'a'\'''$'\t''b'`, `'a'\'''$'\t''b'`},
	{"ma\u00f1ana", `'ma'$'\303\261''ana'`, `'ma'$'\303\261''ana'`},
	{"man\u0303ana", `'man'$'\314\203''ana'`, `'man'$'\314\203''ana'`},
	{"\xff", `''$'\377'`, `''$'\377'`},
	{"a\xffb\xfe", `'a'$'\377''b'$'\376'`, `'a'$'\377''b'$'\376'`},
	{"a'\xc3", `'''a'\'''$'\303'`, `'''a'\'''$'\303'`},
	{"", "''", "''"},
	{"a'b\303", `'''a'\''b'$'\303'`, `'''a'\''b'$'\303'`},
	{"'\303", `''\'''$'\303'`, `''\'''$'\303'`},
	{"a\303'", `'a'$'\303'\'''`, `'a'$'\303'\'''`},
	{"\303'a", `''$'\303'\''a'`, `''$'\303'\''a'`},
}

func TestQuoteKnownAnswers(t *testing.T) {
	for _, c := range quoteCases {
		if got := quotef(c.name); got != c.quotef {
			t.Errorf("quotef(%q) = %s, want %s", c.name, got, c.quotef)
		}
		if got := quoteaf(c.name); got != c.quoteaf {
			t.Errorf("quoteaf(%q) = %s, want %s", c.name, got, c.quoteaf)
		}
	}
}

// TestQuoteAgainstHostLs compares the quoting with the host's GNU ls,
// when it has one, on every name of quoteCases and on every single byte.
func TestQuoteAgainstHostLs(t *testing.T) {
	ls, err := exec.LookPath("ls")
	if err != nil {
		t.Skip("no ls on the host")
	}
	if v, err := exec.Command(ls, "--version").Output(); err != nil || !strings.Contains(string(v), "GNU coreutils") {
		t.Skip("the host's ls is not GNU coreutils'")
	}
	dir := t.TempDir()
	var names []string
	for _, c := range quoteCases {
		if c.name != "" {
			names = append(names, c.name)
		}
	}
	for b := 1; b < 256; b++ {
		if b != '/' && b != '.' {
			names = append(names, "x"+string([]byte{byte(b)})+"y")
		}
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, style := range []string{"shell-escape", "shell-escape-always"} {
		for _, n := range names {
			cmd := exec.Command(ls, "-d", "--quoting-style="+style, "--", n)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "LC_ALL=C")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("ls %q: %v", n, err)
			}
			want := strings.TrimSuffix(string(out), "\n")
			got := quotef(n)
			if style == "shell-escape-always" {
				got = quoteaf(n)
			}
			if got != want {
				t.Errorf("%s of %q: %s, GNU ls %s", style, n, got, want)
			}
		}
	}
}

func TestGnuQuoteArgs(t *testing.T) {
	for _, c := range []struct {
		format string
		args   []any
		want   string
	}{
		{"cannot statx '%s': %s", []any{"/d/ma\u00f1ana", "No such file or directory"}, `cannot statx '/d/ma'$'\303\261''ana': No such file or directory`},
		{"%s: %s", []any{"/d/x y", "No such file or directory"}, `'/d/x y': No such file or directory`},
		{"%s: %s", []any{"/d/plain", "Is a directory"}, `/d/plain: Is a directory`},
		{"cannot move '%s' to '%s': %s", []any{"a b", "c", "e"}, `cannot move 'a b' to 'c': e`},
		{"%d%% of '%s'", []any{5, "it's"}, `5% of "it's"`},
	} {
		f, a := gnuQuoteArgs(c.format, c.args)
		if got := fmtSprintf(f, a...); got != c.want {
			t.Errorf("%q %v: %s, want %s", c.format, c.args, got, c.want)
		}
	}
}

var fmtSprintf = fmt.Sprintf
