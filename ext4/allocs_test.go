package ext4

import (
	"fmt"
	"testing"

	"github.com/vfslab/vfslab/internal/fstestutil"
	"github.com/vfslab/vfslab/kernel"
)

// TestLookupAllocsPerKmalloc pins the Go heap allocations of
// __ext4_find_entry in a casefolded, encrypted htree directory against its
// modelled kmallocs. Every lookup makes one Go allocation more, the
// struct ext4_filename that SetupFilename (ext4/crypto.go) returns on the
// heap where the kernel's ext4_find_entry declares it on its stack; an
// htree hit one more, the found entry's DentryRef (the kernel returns a
// pointer into the buffer head). The dx_probe frames stay on the stack.
func TestLookupAllocsPerKmalloc(t *testing.T) {
	if fstestutil.RaceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	dir := benchDir(t, 1000)
	for _, hit := range []bool{true, false} {
		name := []byte("FILE-000417")
		extra := 2.0
		if !hit {
			name = []byte("absent-000417")
			extra = 1
		}
		tk := kernel.New().NewTask("allocs")
		tk.EnableCounting()
		const runs = 10
		var err error
		found := 0
		goAllocs := testing.AllocsPerRun(runs, func() {
			r, e := FindEntry(tk, dir, name)
			if e != nil {
				err = e
			}
			if r != nil {
				found++
			}
		})
		tk.Exit()
		if err != nil || (found > 0) != hit {
			t.Fatalf("hit=%v: %d found, %v", hit, found, err)
		}
		kmallocs := float64(tk.Stats.Totals().Allocs) / (runs + 1)
		desc := fmt.Sprintf("hit=%v", hit)
		if goAllocs != kmallocs+extra {
			t.Errorf("%s: %.2f Go allocations per lookup for %.2f modelled kmallocs, want %.0f more", desc, goAllocs, kmallocs, extra)
		}
		t.Logf("%s: allocs/op %.1f kmallocs/op %.1f", desc, goAllocs, kmallocs)
	}
}
