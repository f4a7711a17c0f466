package shell

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the examples' golden .out files")

// runScript runs Main on args and returns the merged standard output and
// error, and the status.
func runScript(t *testing.T, stdin string, args ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	st := Main(args, strings.NewReader(stdin), &out, &out)
	return out.String(), st
}

// TestExamples runs every examples/*.sh and compares its output with the
// golden NAME.out beside it (go test -run TestExamples -update rewrites
// them).
func TestExamples(t *testing.T) {
	scripts, err := filepath.Glob("../examples/*.sh")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, s := range scripts {
		name := strings.TrimSuffix(filepath.Base(s), ".sh")
		t.Run(name, func(t *testing.T) {
			got, st := runScript(t, "", s)
			if st != 0 {
				got += "exit status " + strconv.Itoa(st) + "\n"
			}
			golden := strings.TrimSuffix(s, ".sh") + ".out"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("output differs from %s:\n--- want\n%s\n--- got\n%s", golden, want, got)
			}
		})
	}
}

// TestDeterministic runs one script twice: the same seed gives the same
// bytes.
func TestDeterministic(t *testing.T) {
	a, _ := runScript(t, "", "--seed", "7", "../examples/mv-exdev.sh")
	b, _ := runScript(t, "", "--seed", "7", "../examples/mv-exdev.sh")
	if a != b {
		t.Fatalf("two runs differ:\n%s\n---\n%s", a, b)
	}
}

// TestSeededNoKeyNames: --seed fixes the kernel's random source, so a
// locked directory lists the same no-key names on every run with one seed,
// and other names with another.
func TestSeededNoKeyNames(t *testing.T) {
	const script = `_scratch_mkfs_encrypted >/dev/null; _scratch_mount; mkdir $SCRATCH_MNT/d
_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null; _set_encpolicy $SCRATCH_MNT/d $TEST_KEY_IDENTIFIER
touch $SCRATCH_MNT/d/a $SCRATCH_MNT/d/b; _rm_enckey $SCRATCH_MNT $TEST_KEY_IDENTIFIER >/dev/null; ls $SCRATCH_MNT/d`
	a, _ := runScript(t, "", "--seed", "1", "-c", script)
	b, _ := runScript(t, "", "--seed", "1", "-c", script)
	c, _ := runScript(t, "", "--seed", "2", "-c", script)
	if a != b || a == c || strings.Count(a, "\n") != 2 || strings.Contains(a, "a\n") {
		t.Fatalf("seed 1: %q, again: %q, seed 2: %q", a, b, c)
	}
}
