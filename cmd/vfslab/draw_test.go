package main

import (
	"strings"
	"testing"
)

// TestDrawAndQuizConvention: draw and quiz follow the CLI's convention:
// help on stdout with status 0, a usage error one line on stderr ending
// in the "see --help" hint with status 2, the simulator refusing status 1.
func TestDrawAndQuizConvention(t *testing.T) {
	usage := []struct {
		args []string
		want string
	}{
		{[]string{"draw"}, "a picture is required: one of dentries"},
		{[]string{"draw", "nosuch"}, `unknown picture "nosuch"`},
		{[]string{"draw", "dentries", "--fs", "xfs"}, "want one of ext4, f2fs, memfs"},
		{[]string{"draw", "dentries", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"draw", "keys", "extra"}, `unexpected argument "extra"`},
		{[]string{"draw", "readpath", "--variant", "x"}, "workqueue, inline, chain, bio, all"},
		{[]string{"draw", "readpath", "--pages", "65"}, "1..64"},
		{[]string{"draw", "f2fs", "--depth", "99"}, "1..12"},
		{[]string{"draw", "f2fs", "--name", ""}, "F2FS_NAME_LEN"},
		{[]string{"draw", "htree", "--per-leaf", "0"}, "1..50"},
		{[]string{"quiz", "-n", "0"}, "1..20"},
		{[]string{"quiz", "-n", "99"}, "1..20"},
		{[]string{"quiz", "--topic", "btrfs"}, "want one of errno, walk"},
		{[]string{"quiz", "extra"}, `unexpected argument "extra"`},
		{[]string{"quiz", "--seed", "x"}, `"--seed"`},
		{[]string{"quiz", "--bogus"}, "unknown flag: --bogus"},
	}
	for _, c := range usage {
		out, errs, status := cli(t, "", c.args...)
		m := usageLine.FindStringSubmatch(errs)
		if status != 2 || out != "" || m == nil || m[1] != m[2] || !strings.Contains(errs, c.want) {
			t.Errorf("vfslab %q: status %d, stdout %.60q, stderr %q; want status 2 and one line holding %q", c.args, status, out, errs, c.want)
		}
	}
	for _, args := range [][]string{{"draw", "--help"}, {"draw", "dentries", "--help"}, {"help", "draw", "htree"}, {"quiz", "--help"}, {"quiz", "-h"}} {
		out, errs, status := cli(t, "", args...)
		if status != 0 || errs != "" || !strings.Contains(out, "Usage:") || !strings.Contains(out, "Flags:\n  ") {
			t.Errorf("vfslab %q: status %d, stderr %q, stdout %.80q", args, status, errs, out)
		}
	}
	if out, _, _ := cli(t, "", "quiz", "--help"); !strings.Contains(out, "kmalloc ") || !strings.Contains(out, "--questions") {
		t.Errorf("quiz --help lacks the topics or the flags:\n%s", out)
	}
	if _, errs, status := cli(t, "", "draw", "keys", "--fs", "memfs"); status != 1 || !strings.Contains(errs, "no fscrypt") {
		t.Errorf("draw keys --fs memfs: status %d, stderr %q", status, errs)
	}
}

// TestDrawAndQuizRun: the pictures and the quiz are printed, --no-key and
// its old spelling --nokey both work, and -n counts questions.
func TestDrawAndQuizRun(t *testing.T) {
	for _, flag := range []string{"--no-key", "--nokey"} {
		out, errs, status := cli(t, "", "draw", "dentries", flag)
		if status != 0 || !strings.Contains(out, "<svg ") || !strings.Contains(out, "key removed") {
			t.Errorf("draw dentries %s: status %d, stderr %q, stdout %.80q", flag, status, errs, out)
		}
	}
	out, errs, status := cli(t, "", "draw", "htree", "--names", "11", "--per-leaf", "4")
	if status != 0 || !strings.Contains(out, "leaf 2") {
		t.Errorf("draw htree: status %d, stderr %q", status, errs)
	}
	out, errs, status = cli(t, "", "quiz", "--seed", "3", "--topic", "hash", "-n", "2", "-c")
	if status != 0 || !strings.Contains(out, "Q2.") || strings.Contains(out, "Q3.") || !strings.Contains(out, "A2.") {
		t.Errorf("quiz --topic hash -n 2 -c: status %d, stderr %q, stdout:\n%s", status, errs, out)
	}
	out, _, status = cli(t, "", "quiz", "--seed", "3")
	if status != 0 || !strings.Contains(out, "== topic kmalloc ==") || strings.Contains(out, "Q7.") {
		t.Errorf("quiz (all topics, one question each): status %d, stdout:\n%s", status, out)
	}
}
