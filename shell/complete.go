package shell

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/vfslab/vfslab/vfs"
)

// The prompt's completion and history. Tab completes the word under the
// cursor over the machine: the first word of a command from the machine's
// commands, any other from the machine's filesystem (never the host's).
// The history is the host's: lines typed at the prompt are kept in
// $XDG_STATE_HOME/vfslab/sh_history (~/.local/state/vfslab/sh_history),
// never in the machine, and `history` lists them.

// historyPath is where the prompt keeps its history: vfslab/sh_history
// under $XDG_STATE_HOME, else under ~/.local/state; "" when neither is
// known (the history then lives as long as the prompt).
func historyPath() string {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return ""
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "vfslab", "sh_history")
}

// openHistory makes the history file's directory and returns the path
// and the lines it holds ("" and none when it cannot be made).
func openHistory() (string, []string) {
	p := historyPath()
	if p == "" || os.MkdirAll(filepath.Dir(p), 0o700) != nil {
		return "", nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return p, nil
	}
	return p, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// machineCompleter is the prompt's readline.AutoCompleter.
type machineCompleter struct {
	s     *Shell
	dir   func() string // the prompt's working directory on the machine
	names []string      // the machine's commands, sorted
}

// Do returns the completions of the word that ends at pos, as the
// suffixes to add to it, and the length of the word.
func (mc *machineCompleter) Do(line []rune, pos int) ([][]rune, int) {
	head := string(line[:pos])
	start := strings.LastIndexAny(head, " \t;|&(<>") + 1
	word := head[start:]
	before := strings.TrimRight(head[:start], " \t")
	first := before == "" || strings.ContainsAny(before[len(before)-1:], ";|&(")
	var out [][]rune
	if first && !strings.Contains(word, "/") {
		for _, n := range mc.names {
			if strings.HasPrefix(n, word) {
				out = append(out, []rune(n[len(word):]+" "))
			}
		}
		return out, len([]rune(word))
	}
	for _, c := range mc.paths(word) {
		out = append(out, []rune(c))
	}
	return out, len([]rune(word))
}

// paths completes word as a path on the machine: the names of its
// directory that begin with its last component, each with "/" after a
// directory's and " " after another's.
func (mc *machineCompleter) paths(word string) []string {
	dirPart, base := "", word
	if i := strings.LastIndexByte(word, '/'); i >= 0 {
		dirPart, base = word[:i+1], word[i+1:]
	}
	dir := abs(mc.dir(), dirPart)
	if dirPart == "" {
		dir = mc.dir()
	}
	ents, err := mc.s.m.readDir(io.Discard, rootIdent, "sh", dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.Name == "." || e.Name == ".." || !strings.HasPrefix(e.Name, base) {
			continue
		}
		if strings.HasPrefix(e.Name, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		suffix := e.Name[len(base):] + " "
		isDir := e.Type == vfs.DT_DIR
		if e.Type == vfs.DT_LNK || e.Type == vfs.DT_UNKNOWN {
			if st, err := mc.s.m.stat(io.Discard, rootIdent, "sh", path.Join(dir, e.Name), true); err == nil {
				isDir = st.Mode&vfs.S_IFMT == vfs.S_IFDIR
			}
		}
		if isDir {
			suffix = e.Name[len(base):] + "/"
		}
		out = append(out, suffix)
	}
	sort.Strings(out)
	return out
}

// cmdHistory is the prompt's `history`: the lines typed at it, numbered
// as bash numbers them (nothing in a script).
func cmdHistory(c *cmd) int {
	if len(c.args) > 0 {
		fmt.Fprintln(c.errw, "Usage: history")
		return 2
	}
	for i, l := range c.s.history {
		fmt.Fprintf(c.out, "%5d  %s\n", i+1, l)
	}
	return 0
}

func init() {
	// mvdan.cc/sh takes "history" for a builtin it does not have: the
	// call handler runs this name instead.
	commands["history"] = cmdHistory
	commands["__vfslab_history"] = cmdHistory
}
