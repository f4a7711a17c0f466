package shell

import (
	"slices"
	"strings"
	"testing"
)

// TestEveryCommandDocumented: help's table and the machine's command table
// hold the same names, each in one of help's groups.
func TestEveryCommandDocumented(t *testing.T) {
	for name := range commands {
		if strings.HasPrefix(name, "__") {
			continue
		}
		d, ok := commandDocs[name]
		if !ok {
			t.Errorf("command %s has no entry in commandDocs (help.go)", name)
			continue
		}
		if !slices.Contains(commandGroups, d.group) || d.usage == "" || d.summary == "" {
			t.Errorf("command %s: group %q, usage %q, summary %q", name, d.group, d.usage, d.summary)
		}
		if !strings.HasPrefix(d.usage, name) {
			t.Errorf("command %s: usage %q does not start with its name", name, d.usage)
		}
	}
	for name := range commandDocs {
		if _, ok := commands[name]; !ok {
			t.Errorf("commandDocs documents %s, which the machine does not have", name)
		}
	}
}

// TestHelp: help lists the machine's commands (not mvdan.cc/sh's bash
// builtins), help CMD says what one does, and vfslab's own commands take
// --help.
func TestHelp(t *testing.T) {
	out, st := runScript(t, "", "-c", "help")
	if st != 0 {
		t.Fatalf("help: status %d: %s", st, out)
	}
	for _, want := range []string{"\n coreutils\n", "\n  ls           list directory contents", "\n vfslab\n", "\n  dump ", "_scratch_mkfs_encrypted", "xfs_io"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"__vfslab", "help [-dms]", "/src/"} {
		if strings.Contains(out, bad) {
			t.Errorf("help holds %q:\n%s", bad, out)
		}
	}
	out, st = runScript(t, "", "-c", "help dump mkfs.f2fs")
	if st != 0 || !strings.Contains(out, "dump: dump DIR\n") || !strings.Contains(out, "mkfs.f2fs: mkfs.f2fs [OPTION]...") {
		t.Errorf("help dump mkfs.f2fs: status %d:\n%s", st, out)
	}
	out, st = runScript(t, "", "-c", "help nosuch")
	if st != 1 || !strings.Contains(out, "help: no help topics match `nosuch'.") {
		t.Errorf("help nosuch: status %d: %q", st, out)
	}
	for _, c := range []string{"dump", "trace", "events", "patches"} {
		out, st = runScript(t, "", "-c", c+" --help")
		if st != 0 || !strings.HasPrefix(out, "Usage: "+c) || strings.Contains(out, "No such file") {
			t.Errorf("%s --help: status %d: %q", c, st, out)
		}
	}
}
