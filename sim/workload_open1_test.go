package sim

import (
	"testing"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/hooks"
)

// TestOpen1Workload pins seed 004's count on every filesystem with
// fscrypt: with one worker, base makes 2 atomic read-modify-writes per
// open on the shared directory's lockref (dget_parent + dput), v1 and v2
// none when it is not encrypted, and every variant 2 when it is.
func TestOpen1Workload(t *testing.T) {
	w, err := Lookup("open1")
	if err != nil {
		t.Fatal(err)
	}
	for _, fs := range fsRange(true).Words {
		for _, parent := range []string{"plain", "encrypted"} {
			rep, err := Run(Config{Workload: w, Ops: 50, CountOps: 50, Count: 1, Threads: []int{1},
				Params: map[string]string{"fs": fs, "parent": parent}})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range rep.Groups[0].Measurements {
				want := 2.0
				if m.Variant != "base" && parent == "plain" {
					want = 0
				}
				if m.Errors != 0 {
					t.Errorf("%s %s %s: %s", fs, parent, m.Variant, m.FirstError)
				}
				if got := m.Events[dcache.EvLockrefRMWWatched.Name()]; got != want {
					t.Errorf("%s %s %s: %v lockref RMWs on /tmp per open, want %v", fs, parent, m.Variant, got, want)
				}
				fast := m.Events[hooks.EvFileOpenFast.Name()]
				if (m.Variant != "base" && parent == "plain") != (fast == 1) {
					t.Errorf("%s %s %s: %v RCU fast-path answers per open", fs, parent, m.Variant, fast)
				}
			}
		}
	}
}

// TestOpen1WorkloadThreads: two workers, each its own process and file;
// contention may add retries, never remove the base variant's two RMWs.
func TestOpen1WorkloadThreads(t *testing.T) {
	w, _ := Lookup("open1")
	rep, err := Run(Config{Workload: w, Ops: 200, CountOps: 200, Count: 1, Threads: []int{2}, Params: map[string]string{"fs": "f2fs"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rep.Groups[0].Measurements {
		per := m.Events[dcache.EvLockrefRMWWatched.Name()]
		if m.Errors != 0 || (m.Variant == "base" && per < 2) || (m.Variant != "base" && per != 0) {
			t.Errorf("%s: errors %d, %v RMWs per open", m.Variant, m.Errors, per)
		}
	}
}
