package shell

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// runXfstest runs one test of a user's xfstests checkout (dir/tests/TEST)
// on the machine, with the prelude standing in for its common/* files, and
// diffs its output (with xfstests' QA output header) against TEST.out, as
// ./check does. The test's files are read from the host; everything the
// test does stays on the machine.
func (s *Shell) runXfstest(dir, test string, stdout, stderr io.Writer) int {
	src, err := os.ReadFile(filepath.Join(dir, "tests", test))
	if err != nil {
		fmt.Fprintf(stderr, "vfslab sh: %v\n", err)
		return 2
	}
	want, err := os.ReadFile(filepath.Join(dir, "tests", test+".out"))
	if err != nil {
		fmt.Fprintf(stderr, "vfslab sh: %v\n", err)
		return 2
	}
	var out bytes.Buffer
	seq := filepath.Base(test)
	script := "seq=" + seq + "\nseqnum=" + test + "\n" + string(src)
	st := s.run(strings.NewReader(script), test, strings.NewReader(""), &out, &out, nil)
	got := out.String()
	if !strings.HasPrefix(got, "QA output created by") {
		got = "QA output created by " + seq + "\n" + got
	}
	if got == string(want) && (st == 0) {
		fmt.Fprintf(stdout, "%s: passed\n", test)
		return 0
	}
	fmt.Fprintf(stdout, "%s: failed (status %d); output differs from %s.out:\n", test, st, test)
	x, y := splitLines(want), splitLines([]byte(got))
	fmt.Fprintf(stdout, "--- %s.out\n+++ %s.out.bad\n", test, test)
	unifiedDiff(stdout, x, y)
	return 1
}
