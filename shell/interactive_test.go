package shell

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for `vfslab sh` when tmux starts
// it (VFSLAB_SH_MAIN=1), so that the interactive test drives the real
// prompt on a terminal.
func TestMain(m *testing.M) {
	if os.Getenv("VFSLAB_SH_MAIN") == "1" {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestInteractiveTmux drives the prompt through tmux: a command and its
// output, completion of a command name and of a machine path with Tab,
// history with Up and `history`, a statement over two lines, ^C of a
// running loop, exit, and the history file left in $XDG_STATE_HOME.
func TestInteractiveTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("no tmux")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	run := func(args ...string) string {
		out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v: %s", args, err, out)
		}
		return string(out)
	}
	state := t.TempDir()
	run("new-session", "-d", "-x", "120", "-y", "40", "env VFSLAB_SH_MAIN=1 TERM=xterm XDG_STATE_HOME="+state+" "+exe+" --seed 1")
	defer exec.Command(tmux, "-S", sock, "kill-server").Run()
	pane := func() string { return run("capture-pane", "-p", "-S", "-100") }
	waitFor := func(what string, n int) string {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			p := pane()
			if strings.Count(p, what) >= n {
				return p
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %q (x%d) on the screen:\n%s", what, n, p)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("vfslab#", 1)
	// readline sets the terminal up after printing the prompt; keys typed
	// before that are read as the terminal's answers and lost. So the
	// first line is typed again (after ^U empties what was read of it)
	// until its output shows, instead of waiting a fixed time.
	deadline := time.Now().Add(10 * time.Second)
	for first := true; ; first = false {
		if !first {
			run("send-keys", "C-u")
		}
		run("send-keys", "-l", "echo hello-$((1+2))")
		run("send-keys", "Enter")
		shown := time.Now().Add(time.Second)
		for !strings.Contains(pane(), "hello-3") && time.Now().Before(shown) {
			time.Sleep(20 * time.Millisecond)
		}
		if strings.Contains(pane(), "hello-3") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first line never ran:\n%s", pane())
		}
	}
	run("send-keys", "-l", "fscryptc")
	run("send-keys", "Tab")
	waitFor("fscryptctl", 1)
	run("send-keys", "-l", " --help")
	run("send-keys", "Enter")
	waitFor("Usage: fscryptctl", 1)
	run("send-keys", "Up")
	run("send-keys", "Enter")
	waitFor("Usage: fscryptctl", 2)
	run("send-keys", "-l", "for i in 1 2; do")
	run("send-keys", "Enter")
	waitFor("\n>", 1)
	run("send-keys", "-l", "echo loop-$i; done")
	run("send-keys", "Enter")
	waitFor("loop-2", 1)
	// Tab completes the machine's paths: /tmp and /mnt/scratch are the
	// machine's, whatever the host has.
	run("send-keys", "-l", "ls -d /mnt/scr")
	run("send-keys", "Tab")
	waitFor("ls -d /mnt/scratch/", 1)
	run("send-keys", "Enter")
	waitFor("\n/mnt/scratch/\n", 1)
	run("send-keys", "-l", "history")
	run("send-keys", "Enter")
	waitFor("    1  echo hello-$((1+2))", 1)
	// ^C interrupts the foreground command, not the shell: the loop
	// ends with status 130 and the prompt takes the next line.
	run("send-keys", "-l", "echo started; while :; do :; done")
	run("send-keys", "Enter")
	waitFor("started", 2) // the typed line and the output
	time.Sleep(200 * time.Millisecond)
	run("send-keys", "C-c")
	run("send-keys", "-l", "echo after-$?")
	run("send-keys", "Enter")
	waitFor("after-130", 1)
	t.Logf("screen:\n%s", strings.TrimRight(pane(), "\n"))
	run("send-keys", "-l", "exit 0")
	run("send-keys", "Enter")
	deadline = time.Now().Add(10 * time.Second)
	for exec.Command(tmux, "-S", sock, "has-session").Run() == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the shell did not exit:\n%s", pane())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The history is the host's, in the state directory.
	b, err := os.ReadFile(filepath.Join(state, "vfslab", "sh_history"))
	if err != nil || !strings.Contains(string(b), "echo hello-$((1+2))\n") || !strings.Contains(string(b), "history\n") {
		t.Errorf("history file: %v\n%s", err, b)
	}
}
