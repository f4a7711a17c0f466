package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The documents whose command blocks TestDocCommands runs, relative to the
// repository root.
var docFiles = []string{"README.md", "docs/lab.md", "docs/CLI.md", "docs/patches/*.md"}

// docSlowCommands are the commands TestDocCommands does not run: they
// measure for minutes (their own tests run them small) or need QEMU.
var docSlowCommands = map[string]bool{"ab": true, "report": true, "review": true, "linux": true, "stability": true}

// docCommand is one vfslab command line of a document's code block.
type docCommand struct {
	where  string // FILE:LINE
	line   string
	args   []string
	status int // the status the document says it ends with
}

// docPlaceholder is a synopsis word rather than a value: NAME_HEX,
// [--seed N], a|b.
var docPlaceholder = regexp.MustCompile(`^[A-Z][A-Z0-9_.]*$|[\[\]|{}]|\.\.\.`)

// docCommands extracts the vfslab command lines of the code blocks of the
// file at path (lines starting "go run ./cmd/vfslab", "go -C DIR run
// ./cmd/vfslab" or "./vfslab"), with the block's VAR=value assignments
// substituted; skipped lists those it cannot run as they stand (pipes,
// synopses with placeholders) with the reason.
func docCommands(t *testing.T, root, path string) (cmds []docCommand, skipped []string) {
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	in := false
	vars := map[string]string{}
	assign := regexp.MustCompile(`^([A-Z]+)=([0-9a-f]+)(\s|$)`)
	prefix := regexp.MustCompile(`^(go run \./cmd/vfslab|go -C \$R run \./cmd/vfslab|\./vfslab)(\s|$)`)
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		line, where := lines[i], path+":"+strconv.Itoa(i+1)
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + " " + strings.TrimSpace(lines[i])
		}
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
			if in {
				vars = map[string]string{"PWD": t.TempDir(), "T": t.TempDir()}
			}
			continue
		}
		if !in {
			continue
		}
		line = strings.TrimSpace(line)
		if m := assign.FindStringSubmatch(line); m != nil {
			vars[m[1]] = m[2]
			continue
		}
		m := prefix.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		text := line
		status := 0
		if k := strings.Index(text, "; echo \"status $?\""); k >= 0 {
			text, status = text[:k], 1
		}
		if k := strings.Index(text, " #"); k >= 0 {
			text = text[:k]
		}
		if strings.Contains(text, "|") && !strings.Contains(text, "'") {
			skipped = append(skipped, where+": "+line+" (a pipeline or a synopsis)")
			continue
		}
		if k := strings.Index(text, " > "); k >= 0 {
			text = text[:k] // the output is discarded
		}
		args, ok := splitWords(strings.TrimSpace(strings.TrimPrefix(text, m[1])), vars)
		if !ok {
			skipped = append(skipped, where+": "+line+" (quoting)")
			continue
		}
		placeholder := false
		for _, a := range args {
			if docPlaceholder.MatchString(a) {
				placeholder = true
			}
		}
		if placeholder {
			skipped = append(skipped, where+": "+line+" (a synopsis)")
			continue
		}
		cmds = append(cmds, docCommand{where: where, line: line, args: args, status: status})
	}
	return cmds, skipped
}

// splitWords splits a command line into words as sh does for the forms
// the documents use: blanks, single and double quotes, $VAR from vars.
func splitWords(s string, vars map[string]string) ([]string, bool) {
	var words []string
	var cur strings.Builder
	inWord, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '\'' || c == '"'):
			quote, inWord = c, true
		case quote != '\'' && c == '$':
			j := i + 1
			for j < len(s) && s[j] >= 'A' && s[j] <= 'Z' {
				j++
			}
			v, ok := vars[s[i+1:j]]
			if !ok {
				return nil, false
			}
			cur.WriteString(v)
			inWord, i = true, j-1
		case quote == 0 && (c == ' ' || c == '\t'):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, false
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, true
}

// TestDocCommands runs every vfslab command line of the README's, the
// lab's, CLI.md's and the patch pages' code blocks (but the measuring
// commands of docSlowCommands) and fails when one no longer parses or
// ends with another status than the document says; the lines it cannot
// run as they stand, and the slow ones, are logged (go test -v lists
// them).
func TestDocCommands(t *testing.T) {
	root := filepath.Join("..", "..")
	var all []docCommand
	for _, pattern := range docFiles {
		paths, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil || len(paths) == 0 {
			t.Fatalf("%s: %v", pattern, err)
		}
		for _, p := range paths {
			rel, _ := filepath.Rel(root, p)
			cmds, skipped := docCommands(t, root, rel)
			for _, s := range skipped {
				t.Logf("not run: %s", s)
			}
			all = append(all, cmds...)
		}
	}
	ran := 0
	for _, c := range all {
		args := c.args
		if len(args) == 0 || (docSlowCommands[args[0]] && !(len(args) == 2 && args[1] == "--list")) {
			t.Logf("not run (measures for minutes; its own tests run it small): %s: %s", c.where, c.line)
			continue
		}
		for i, a := range args {
			switch {
			case a == "/tmp/man":
				args[i] = t.TempDir()
			case strings.HasPrefix(a, "examples/"):
				args[i] = filepath.Join(root, a)
			}
		}
		ran++
		out, errs, status := cli(t, "", args...)
		noStackTrace(t, args, out+errs)
		if status != c.status {
			t.Errorf("%s: %s\nended with status %d, the document says %d; stderr:\n%s", c.where, c.line, status, c.status, errs)
		}
	}
	if ran < 40 {
		t.Errorf("only %d command lines run; the documents hold more", ran)
	}
	t.Logf("%d command lines run", ran)
}
