package shell

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/patch"
)

// TestCompleter: the prompt completes a command's name as the first word
// and the machine's paths after it (directories with "/", relative to the
// prompt's directory), never the host's.
func TestCompleter(t *testing.T) {
	m, err := NewMachine(patch.Set{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := &Shell{m: m, fstyp: "ext4"}
	if st := s.run(strings.NewReader("mkdir /tmp/dir1 /tmp/dir2 && echo x > /tmp/file && ln -s dir1 /tmp/link"), "test", strings.NewReader(""), io.Discard, io.Discard, nil); st != 0 {
		t.Fatalf("setup: status %d", st)
	}
	dir := "/tmp"
	mc := &machineCompleter{s: s, names: []string{"fscryptctl", "fsck", "ls"}, dir: func() string { return dir }}
	do := func(line string) string {
		cands, n := mc.Do([]rune(line), len([]rune(line)))
		var out []string
		for _, c := range cands {
			out = append(out, string(c))
		}
		return fmt.Sprintf("%d %q", n, out)
	}
	cases := []struct{ line, want string }{
		{"fs", `2 ["cryptctl " "ck "]`},
		{"ls /t", `2 ["mp/"]`},
		{"ls /tmp/d", `6 ["ir1/" "ir2/"]`},
		{"cat fi", `2 ["le "]`},
		{"ls li", `2 ["nk/"]`},
		{"echo a; ls /mnt/scr", `8 ["atch/"]`},
		{"echo a; fsc", `3 ["ryptctl " "k "]`},
		{"ls " + filepath.Join("/", "nonexistent") + "/", `13 []`},
	}
	for _, c := range cases {
		if got := do(c.line); got != c.want {
			t.Errorf("Do(%q) = %s, want %s", c.line, got, c.want)
		}
	}
}
