package shell

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// hangGuard is how long a bounded run may take before the test calls it a
// hang: far more than any of them needs; never a timing assertion.
const hangGuard = 2 * time.Minute

// runBounded is runScript with a hang guard: a script that never ends
// fails the test instead of hanging it.
func runBounded(t *testing.T, args ...string) (string, int) {
	t.Helper()
	type result struct {
		out string
		st  int
	}
	done := make(chan result, 1)
	go func() {
		var out bytes.Buffer
		st := Main(args, strings.NewReader(""), &out, &out)
		done <- result{out.String(), st}
	}()
	select {
	case r := <-done:
		return r.out, r.st
	case <-time.After(hangGuard):
		t.Fatalf("vfslab sh %q did not end", args)
		return "", 0
	}
}

// TestPipeWriterGetsSIGPIPE checks that a pipeline's writer ends once its
// reader has: a command's write meets EPIPE and the command dies of
// SIGPIPE (status 141 under pipefail), a builtin's ends the subshell that
// runs it, and a command that is not writing to the pipe goes on.
func TestPipeWriterGetsSIGPIPE(t *testing.T) {
	cases := []struct{ name, script, want string }{
		{"seq | head", `set -o pipefail; seq 1 100000000 | head -1; echo "st=$?"`, "1\nst=141\n"},
		{"yes | head", `set -o pipefail; yes | head -2; echo "st=$?"`, "y\ny\nst=141\n"},
		{"echo loop | head -c", `set -o pipefail; y(){ while :; do echo y; done; }; y | head -c 4; echo " st=$?"`, "y\ny\n st=141\n"},
		{"printf loop | head", `while :; do printf 'ab\n'; done | head -n 1`, "ab\n"},
		{"cat /dev/zero | head -c", `cat /dev/zero | head -c 3 | od -An -tx1`, " 00 00 00\n"},
		{"the rest of the subshell runs", `{ seq 1 1000000; echo after; } | head -1 >/dev/null; { seq 1 1000000; echo "left=$?" >/tmp/st; } | head -1; cat /tmp/st`, "1\nleft=141\n"},
		{"tee into a closed pipe", `yes | tee /tmp/t | head -1; wc -c </tmp/t | grep -qv '^0$' && echo kept`, "y\nkept\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, st := runBounded(t, "-c", tc.script)
			if got != tc.want || st != 0 {
				t.Fatalf("got %q status %d, want %q status 0", got, st, tc.want)
			}
		})
	}
}

// TestStreamingCommands checks the commands that read in chunks: each
// reads an input far larger than its chunk (a sparse file, an endless
// device) to the same result a whole read gives.
func TestStreamingCommands(t *testing.T) {
	cases := []struct{ name, script, want string }{
		// 64 MiB of zeros: md5sum's digest of it, as coreutils prints it.
		{"md5sum sparse", `truncate -s 64M /tmp/z; md5sum /tmp/z`, "7f614da9329cd3aebf59b91aadc30bf0  /tmp/z\n"},
		{"sha256sum stdin", `printf abc | sha256sum`, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  -\n"},
		{"wc across chunks", `head -c 300000 /dev/zero | tr '\0' 'a' > /tmp/a; echo ' b c' >> /tmp/a; wc /tmp/a`, "     1      3 300005 /tmp/a\n"},
		{"wc total with a missing file", `echo x > /tmp/x; wc -l /tmp/x /tmp/none`, "1 /tmp/x\nwc: /tmp/none: No such file or directory\n1 total\n"},
		{"cat a sparse file", `truncate -s 3M /tmp/s; cat /tmp/s | wc -c`, "3145728\n"},
		{"tail -c of a big input", `seq 1 200000 | tail -c 7`, "200000\n"},
		{"tail -n", `seq 1 200000 | tail -n 2`, "199999\n200000\n"},
		{"tail -n +N", `seq 1 5 | tail -n +4`, "4\n5\n"},
		{"tail -c +N", `printf abcdef | tail -c +5`, "ef"},
		{"grep streams", `seq 1 300000 | grep -c 7`, "122853\n"},
		{"grep -q ends an endless input", `yes | grep -q y && echo found`, "found\n"},
		{"cmp of equal big files", `truncate -s 1M /tmp/c1 /tmp/c2; cmp /tmp/c1 /tmp/c2 && echo same`, "same\n"},
		{"cmp EOF", `printf ab > /tmp/p1; printf abc > /tmp/p2; cmp /tmp/p1 /tmp/p2`, "cmp: EOF on /tmp/p1 after byte 2\n"},
		{"tee streams", `seq 1 100000 | tee /tmp/t1 | tail -1; tail -1 /tmp/t1`, "100000\n100000\n"},
		{"tr from /dev/zero", `tr '\0' x < /dev/zero | head -c 5`, "xxxxx"},
		{"uniq streams", `yes | head -100000 | uniq -c`, " 100000 y\n"},
		{"cut streams", `yes a:b | cut -d: -f2 | head -2`, "b\nb\n"},
		{"sort's input past the memory is ENOMEM", `truncate -s 100M /tmp/big; sort /tmp/big`, "sort: /tmp/big: Cannot allocate memory\n"},
		{"head of two files", `seq 3 > /tmp/a; seq 5 > /tmp/b; head -n 1 /tmp/a /tmp/b`, "==> /tmp/a <==\n1\n\n==> /tmp/b <==\n1\n"},
		{"head -n -N", `seq 300000 | head -n -299998`, "1\n2\n"},
		{"head -c -N", `printf abcdef | head -c -2`, "abcd"},
		{"od of an endless device", `od -An -tx1 -N 20 /dev/zero`, " 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n 00 00 00 00\n"},
		{"od of a big sparse file", `truncate -s 100M /tmp/o; od /tmp/o`, "0000000 000000 000000 000000 000000 000000 000000 000000 000000\n*\n620000000\n"},
		{"dd's buffer past the memory", `dd if=/dev/zero of=/tmp/x bs=100G count=1`, "dd: memory exhausted by input buffer of size 107374182400 bytes (100 GiB)\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// --memory 256M: a whole-input command may read 64 MiB.
			got, _ := runBounded(t, "--memory", "256M", "-c", tc.script)
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestTimeout checks --timeout: an endless loop, an endless command and a
// FIFO nobody opens all end with timeout(1)'s status 124 and a message.
func TestTimeout(t *testing.T) {
	for _, script := range []string{
		`while :; do :; done`,
		`cat /dev/zero > /dev/null`,
		`mkfifo /tmp/p; cat /tmp/p`,
	} {
		got, st := runBounded(t, "--timeout", "300ms", "-c", "echo before; "+script+"; echo never")
		if st != 124 || got != "before\nvfslab sh: the run timed out after 300ms (--timeout)\n" {
			t.Errorf("%s: got %q status %d, want the message and 124", script, got, st)
		}
	}
	if _, st := runBounded(t, "--timeout", "x", "-c", "true"); st != 2 {
		t.Errorf("--timeout x: status %d, want 2", st)
	}
}

// TestMemoryBackstop checks --memory: a script whose variable doubles
// ends with status 137 and the message, not Go's fatal out-of-memory.
func TestMemoryBackstop(t *testing.T) {
	got, st := runBounded(t, "--memory", "128M", "-c", `x=a; while :; do x="$x$x"; done`)
	if st != 137 || !strings.Contains(got, "vfslab sh: killed: the run's memory passed its limit of 128M (--memory)\n") {
		t.Fatalf("got %q status %d, want the message and 137", got, st)
	}
	if _, st := runBounded(t, "--memory", "1k", "-c", "true"); st != 2 {
		t.Errorf("--memory 1k: status %d, want 2", st)
	}
}

// TestForkLimit checks the task limit: a fork bomb's forks fail with
// bash's message once the limit is reached, and the bomb ends.
func TestForkLimit(t *testing.T) {
	// A smaller limit: the same checks, a smaller tree to drain.
	old := maxTasks.Load()
	maxTasks.Store(256)
	defer maxTasks.Store(old)
	got, st := runBounded(t, "-c", `f(){ f & f & wait; }; f; echo ended`)
	// "ended" need not be last: a refused fork's message from a
	// subshell can reach the shared output after it on a loaded host.
	if st != 0 || !strings.Contains(got, "ended\n") || !strings.Contains(got, "sh: fork: Resource temporarily unavailable\n") {
		t.Fatalf("status %d, output's end %q", st, got[max(0, len(got)-200):])
	}
}

// TestSandboxAnswersFromTheMachine checks the shell's answers that
// mvdan's interpreter would take from the host: ~user from the machine's
// /etc/passwd (an edit of it shows), $UID, $EUID, $GID of the process (su
// changes them), $$ and $PPID of the machine's task, type and command
// -v/-V from the machine's commands (builtin type too), and [ -O ], [ -G ],
// [[ -O ]] and -ef from the machine's stat and credentials.
func TestSandboxAnswersFromTheMachine(t *testing.T) {
	cases := []struct{ name, script, want string }{
		{"~user", `echo ~root ~fsgqa ~nosuchuser ~nosuchuser/x`, "/root /home/fsgqa ~nosuchuser ~nosuchuser/x\n"},
		{"~user after an edit of /etc/passwd", `echo 'postgres:x:70:70::/var/lib/pg:/bin/sh' >> /etc/passwd; echo ~postgres`, "/var/lib/pg\n"},
		{"uids", `echo $UID $EUID $GID; su fsgqa -c 'echo $UID $EUID $GID'`, "0 0 0\n1000 1000 1000\n"},
		{"pids", `echo $$ ${$} $PPID; (echo $$)`, "1 1 0\n1\n"},
		{"type of a host program", `builtin type perl; echo "st=$?"; command -V perl; echo "st=$?"; command -v perl || echo none`, "type: perl: not found\nst=1\ncommand: perl: not found\nst=1\nnone\n"},
		{"type of the machine's", `type xfs_io; type -t cd; type -t ls; command -v cd`, "xfs_io is /usr/bin/xfs_io\nbuiltin\nfile\ncd\n"},
		{"-O and -G", `touch /tmp/r; chown fsgqa:users /tmp/r; [ -O /tmp/r ] || echo "not root's"; [ ! -G /tmp/r ] && echo "not group 0"; su fsgqa -c '[ -O /tmp/r ] && echo "fsgqa owns"'`, "not root's\nnot group 0\nfsgqa owns\n"},
		{"[[ -O ]]", `touch /tmp/r; [[ -O /tmp/r && -G /tmp/r ]] && echo both; su fsgqa -c '[[ -O /tmp/r ]] || echo no'`, "both\nno\n"},
		{"-ef", `touch /tmp/r; ln /tmp/r /tmp/h; [ /tmp/r -ef /tmp/h ] && echo same; [[ /tmp/r -ef /tmp ]] || echo differ`, "same\ndiffer\n"},
		{"lone -O is a string", `[ -O ] && echo nonempty`, "nonempty\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := runBounded(t, "-c", tc.script)
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSmallerFixes: ls exits 1 when an entry cannot be stat'ed (GNU ls's
// minor problem) and shows it with "?"s; /proc and /sys take no new files.
func TestSmallerFixes(t *testing.T) {
	cases := []struct {
		name, script, want string
		status             int
	}{
		{"ls -l of an entry without search permission", `mkdir /tmp/d; touch /tmp/d/a; chmod 644 /tmp/d; su fsgqa -c 'ls -l /tmp/d'`,
			"ls: cannot access '/tmp/d/a': Permission denied\ntotal 0\n-????????? ? ? ? ?            ? a\n", 1},
		{"no new file in /proc", `echo b > /proc/sysrq-trigger; touch /sys/x; ls /proc | grep -c sysrq`,
			"sh: /proc/sysrq-trigger: Permission denied\ntouch: cannot touch '/sys/x': Permission denied\n0\n", 1},
		{"an existing knob is still written", `echo 1 > /proc/sys/vm/drop_caches && echo ok`, "ok\n", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, st := runBounded(t, "-c", tc.script)
			if got != tc.want || st != tc.status {
				t.Fatalf("got %q status %d, want %q status %d", got, st, tc.want, tc.status)
			}
		})
	}
}
