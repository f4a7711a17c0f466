package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/linuxdiff"
)

func TestLinuxHelpAndUsage(t *testing.T) {
	for _, args := range [][]string{{"linux", "--help"}, {"linux", "run", "--help"}, {"linux", "diff", "-h"}, {"linux", "events", "--help"}, {"help", "linux", "diff"}} {
		out, errs, status := cli(t, "", args...)
		if status != 0 || errs != "" || !strings.Contains(out, "Usage:") {
			t.Errorf("vfslab %q: status %d, stderr %q", args, status, errs)
		}
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.sh")
	os.WriteFile(bad, []byte("# vfslab sh --writable\necho\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"linux"}, "a subcommand is required"},
		{[]string{"linux", "diff"}, "want one or more SCRIPT files"},
		{[]string{"linux", "run", filepath.Join(dir, "missing.sh")}, "no such file"},
		{[]string{"linux", "diff", bad}, "not one the Linux side can follow"},
		{[]string{"linux", "diff", "--timeout", "0s", bad}, "--timeout 0s: want 1s..1h"},
		{[]string{"linux", "diff", "--record", dir, "--recorded", dir, bad}, "do not go together"},
	} {
		_, errs, status := cli(t, "", c.args...)
		if status != 2 || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "--help") {
			t.Errorf("vfslab %q: status %d, stderr %q; want 2 and one line with %q", c.args, status, errs, c.want)
		}
	}
}

// TestLinuxDiffRecorded compares a script with a recorded Linux run (no
// boot): identical when Linux printed what vfslab prints, normalised;
// unexplained with its hunk and status 1 when not.
func TestLinuxDiffRecorded(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "s.sh")
	src := []byte("# vfslab sh --fs ext4\necho hello; nosuchcmd; events\n")
	os.WriteFile(script, src, 0o644)
	rec := linuxdiff.Recorded{Script: script, SHA256: linuxdiff.ScriptHash(src), Release: "6.12.95+deb12-amd64",
		ConfigHash: "0123456789ab", Stdout: "hello\n",
		Stderr: "/batch/000/script.sh: line 2: nosuchcmd: command not found\nevents: vfslab's own command, skipped on Linux\n", Status: 0}
	recDir := filepath.Join(dir, "rec")
	if err := linuxdiff.Save(recDir, rec); err != nil {
		t.Fatal(err)
	}
	out, errs, status := cli(t, "", "linux", "diff", "-q", "--recorded", recDir, script)
	if status != 0 || !strings.Contains(out, "linux: 1 scripts, 1 identical, 0 known differences, 0 unexplained") ||
		!strings.Contains(out, "linux 6.12.95+deb12-amd64, config 0123456789ab") {
		t.Errorf("identical: status %d\n%s%s", status, out, errs)
	}
	rec.Stdout = "hullo\n"
	linuxdiff.Save(recDir, rec)
	out, _, status = cli(t, "", "linux", "diff", "-q", "--recorded", recDir, script)
	if status != 1 || !strings.Contains(out, "-hello\n+hullo\n") || !strings.Contains(out, "1 unexplained") {
		t.Errorf("different: status %d\n%s", status, out)
	}
	os.WriteFile(script, append(src, "echo more\n"...), 0o644)
	out, _, status = cli(t, "", "linux", "diff", "-q", "--recorded", recDir, script)
	if status != 1 || !strings.Contains(out, "another version of") {
		t.Errorf("stale recording: status %d\n%s", status, out)
	}
}
