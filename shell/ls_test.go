package shell

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/vfs"
)

// TestLsTotal: ls -l's total is the entries' st_blocks summed, then
// halved rounding up, as GNU ls prints it (not each entry halved).
func TestLsTotal(t *testing.T) {
	list := []lsEntry{{st: vfs.Stat{Blocks: 1}}, {st: vfs.Stat{Blocks: 1}}, {st: vfs.Stat{Blocks: 8}}, {st: vfs.Stat{Blocks: 3}}}
	if got := lsTotal(list); got != 7 {
		t.Errorf("total of 1+1+8+3 sectors: %d, want 7", got)
	}
	// On the machine: the total agrees with stat's %b of the same entries.
	out, st := runScript(t, "", "-c", `mkfs.ext4 -q /dev/vdb && mount /dev/vdb /mnt/scratch && cd /mnt/scratch &&
echo hi > f && mkdir d && ln -s f l && ls -la && stat -c %b . .. d f l lost+found`)
	if st != 0 {
		t.Fatalf("status %d:\n%s", st, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var total, sum int64
	if _, err := fmt.Sscanf(lines[0], "total %d", &total); err != nil {
		t.Fatalf("first line %q", lines[0])
	}
	for _, l := range lines[len(lines)-6:] {
		n, err := strconv.ParseInt(l, 10, 64)
		if err != nil {
			t.Fatalf("stat line %q", l)
		}
		sum += n
	}
	if total != (sum+1)/2 {
		t.Errorf("ls -la says total %d; the entries hold %d sectors:\n%s", total, sum, out)
	}
}
