package crypto

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestEscapeAnalysis runs `go build -gcflags=-m` on the package and checks
// the compiler's verdict on the on-stack paths: no on-stack request, IV,
// scatterlist array or wait object parameter escapes (only the tfm, the bio
// and the data buffers the scatterlist entries point to, which live on the
// heap anyway). TestOnStackZeroAllocs checks the same from the caller's
// side with testing.AllocsPerRun.
func TestEscapeAnalysis(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the compiler")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(goTool, "build", "-gcflags=-m", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m: %v\n%s", err, out)
	}
	bad := regexp.MustCompile(`^\S*(onstack|wait|scatterlist|dispatch)\.go:\d+:\d+: (leaking param: (r|s|h|iv|w|wait|sg|src|dst)$|moved to heap: )`)
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if bad.MatchString(l) {
			lines = append(lines, l)
		}
	}
	if len(lines) != 0 {
		t.Errorf("on-stack paths escape:\n%s", strings.Join(lines, "\n"))
	}
	if !strings.Contains(string(out), "onstack.go") {
		t.Errorf("no escape analysis output for onstack.go:\n%s", out)
	}
}
