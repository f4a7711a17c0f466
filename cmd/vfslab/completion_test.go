package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/quiz"
	"github.com/vfslab/vfslab/sim"
	"github.com/vfslab/vfslab/vfs"
)

// complete runs the shell completion of args (the last one the word being
// completed) and returns the candidates without their descriptions.
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	out, errs, status := cli(t, "", append([]string{cobra.ShellCompRequestCmd}, args...)...)
	if status != 0 {
		t.Fatalf("__complete %q: status %d, stderr %q", args, status, errs)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" || strings.HasPrefix(l, ":") {
			continue
		}
		name, _, _ := strings.Cut(l, "\t")
		got = append(got, name)
	}
	return got
}

// TestEveryChoiceFlagCompletes: every flag with a fixed set of values, on
// every command, completes them.
func TestEveryChoiceFlagCompletes(t *testing.T) {
	root := newRoot(&bytes.Buffer{}, &bytes.Buffer{})
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			_, isChoice := f.Value.(*choiceValue)
			if _, named := flagCompletions[f.Name]; !isChoice && !named {
				return
			}
			n++
			if _, ok := c.GetFlagCompletionFunc(f.Name); !ok {
				t.Errorf("%s --%s has a fixed set of values but no completion", c.CommandPath(), f.Name)
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	if n < 20 {
		t.Errorf("only %d flags with a fixed set of values found", n)
	}
}

// TestCompletionValues: the values come from the registries.
func TestCompletionValues(t *testing.T) {
	var ids []string
	for _, p := range patch.All() {
		ids = append(ids, p.ID)
	}
	syscalls := make([]string, 0, len(traceArity))
	for s := range traceArity {
		syscalls = append(syscalls, s)
	}
	slices.Sort(syscalls)
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"trace", "--fs", ""}, vfs.FilesystemNames()},
		{[]string{"draw", "dentries", "--fs", ""}, vfs.FilesystemNames()},
		{[]string{"trace", ""}, syscalls},
		{[]string{"trace", "--format", ""}, []string{"text", "ftrace", "perfetto"}},
		{[]string{"ab", "--workload", ""}, sim.Names()},
		{[]string{"report", "--patch", ""}, ids},
		{[]string{"ab", "--format", ""}, formats},
		{[]string{"quiz", "--topic", ""}, append(quiz.TopicNames(), "all")},
		{[]string{"draw", "readpath", "--variant", ""}, []string{"workqueue", "inline", "chain", "bio", "all"}},
		{[]string{"hash", "ext4", "--version", ""}, hashVersionNames()},
		{[]string{"trace", "--patches", "crypto-bio="}, []string{"crypto-bio=workqueue", "crypto-bio=inline", "crypto-bio=chain", "crypto-bio=bio"}},
		{[]string{"ab", "open1", "--variants", "base,"}, []string{"base,base", "base,v1", "base,v2"}},
		{[]string{"ab", "create", "--param", "fs="}, []string{"fs=ext4", "fs=f2fs"}},
	}
	for _, c := range cases {
		if got := complete(t, c.args...); !slices.Equal(got, c.want) {
			t.Errorf("completion of %q: %q, want %q", c.args, got, c.want)
		}
	}
	// ab's argument is a workload (or its compare subcommand).
	if got := complete(t, "ab", ""); !slices.Contains(got, "open1") || !slices.Contains(got, "compare") {
		t.Errorf("ab's argument completes to %q", got)
	}
	// draw's kinds are its subcommands.
	if got := complete(t, "draw", ""); !slices.Equal(got, []string{"dentries", "f2fs", "htree", "keys", "readpath"}) {
		t.Errorf("draw's kinds complete to %q", got)
	}
	// A patch set's next element leaves out the patches already given.
	got := complete(t, "trace", "--patches", "crypto-bio=bio,")
	if len(got) != len(ids)-1 || slices.Contains(got, "crypto-bio=bio,crypto-bio=") {
		t.Errorf("--patches crypto-bio=bio, completes to %q", got)
	}
	// After --diff A the next argument is the variant set B.
	if got := complete(t, "trace", "--diff", "base", ""); !slices.Contains(got, "base") || !slices.Contains(got, "fscrypt-file-open=") {
		t.Errorf("trace --diff base completes to %q", got)
	}
}
