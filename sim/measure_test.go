package sim

import (
	"strconv"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/patch"
)

// TestReadCountsPathTasks: the read workload's decryption runs on tasks
// the read path starts itself (the block device's completion and the
// decrypt workqueue's workers), and the counting run merges them. With
// requests=base (kmalloc'd requests, seed 003's kernel) every data unit
// costs one request kmalloc in the workqueue and inline variants; with
// requests=upstream (on-stack) none. Every bio also takes ext4's
// bio_post_read_ctx from its mempool (a kmem_cache_alloc).
func TestReadCountsPathTasks(t *testing.T) {
	w, err := Lookup("read")
	if err != nil {
		t.Fatal(err)
	}
	const mib = 1
	units := float64(mib<<20) / block.PageSize // the policy's data units are 4 KiB blocks
	for _, req := range []string{"base", "upstream"} {
		rep, err := Run(Config{Workload: w, Variants: []string{"workqueue", "inline"}, Ops: 1, CountOps: 2, Count: 1,
			Params: map[string]string{"mib": strconv.Itoa(mib), "requests": req}})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range rep.Groups[0].Measurements {
			if m.Errors != 0 {
				t.Fatalf("requests=%s %s: %s", req, m.Variant, m.FirstError)
			}
			if got := m.Events[fscrypt.EvDataUnitCrypt.Name()]; got != units {
				t.Errorf("requests=%s %s: %v data units decrypted per op, want %v", req, m.Variant, got, units)
			}
			want := units
			if req == "upstream" {
				want = 0
			}
			bios := m.Events["submit_bio"]
			if bios != units/64 {
				t.Errorf("requests=%s %s: %v bios per op, want %v (256 KiB each)", req, m.Variant, bios, units/64)
			}
			if m.Kmallocs != want+bios || m.Events["skcipher_request_alloc"] != want {
				t.Errorf("requests=%s %s: %v kmallocs (%v request allocations) per op, want %v + %v post-read contexts",
					req, m.Variant, m.Kmallocs, m.Events["skcipher_request_alloc"], want, bios)
			}
			t.Logf("requests=%s %-9s kmalloc/op %.0f for %.0f data units", req, m.Variant, m.Kmallocs, units)
		}
	}
}

// TestReportedVariantsRan: what a report says a run used is what its
// kernels ran. The read workload's requests parameter is the
// fscrypt-fname-onstack variant: with --patches choosing v2 (a kmalloc'd
// request per data unit, like base) and no requests value, v2 runs and is
// reported, its allocations show it, and the parameter reports v2; a
// requests value that contradicts --patches is an error, not an
// override; and a parameter naming the compared patch's variant is
// refused.
func TestReportedVariantsRan(t *testing.T) {
	w, _ := Lookup("read")
	params := map[string]string{"mib": "1"}
	base := patch.Set{}.MustWith(fscrypt.FnameOnstackPatch, "v2")
	rep, err := Run(Config{Workload: w, Base: base, Variants: []string{"workqueue"}, Ops: 1, CountOps: 1, Count: 1, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Groups[0].Measurements[0]
	if m.Patches != base || rep.Base != "fscrypt-fname-onstack=v2" || rep.Params["requests"] != "v2" {
		t.Errorf("ran %v, reported with %q, requests=%q; want %v", m.Patches, rep.Base, rep.Params["requests"], base)
	}
	if units := float64(1<<20) / block.PageSize; m.Kmallocs != units+m.Events["submit_bio"] {
		t.Errorf("v2 requests: %v kmallocs per op, want one per data unit (%v) and one post-read context per bio (%v)", m.Kmallocs, units, m.Events["submit_bio"])
	}

	_, err = Run(Config{Workload: w, Base: base, Ops: 1, CountOps: 1, Count: 1, Params: map[string]string{"mib": "1", "requests": "base"}})
	if err == nil || !strings.Contains(err.Error(), "requests=base conflicts with fscrypt-fname-onstack=v2") {
		t.Errorf("conflicting requests and --patches: err = %v", err)
	}
	_, err = Run(Config{Workload: w, Base: base, Ops: 1, CountOps: 1, Count: 1, Params: map[string]string{"mib": "1", "requests": "v2"}})
	if err != nil {
		t.Errorf("agreeing requests and --patches: %v", err)
	}
	_, err = Run(Config{Workload: w, Ops: 1, CountOps: 1, Count: 1, Params: map[string]string{"mib": "1", "requests": "nope"}})
	if err == nil || !strings.Contains(err.Error(), "valid: base, v2, upstream") {
		t.Errorf("bad requests: err = %v", err)
	}
	_, err = Run(Config{Workload: w, Patch: fscrypt.FnameOnstackPatch, Ops: 1, CountOps: 1, Count: 1, Params: map[string]string{"mib": "1", "requests": "base"}})
	if err == nil || !strings.Contains(err.Error(), "whose variants this run compares") {
		t.Errorf("requests while comparing fscrypt-fname-onstack: err = %v", err)
	}

	// Comparing the parameter's patch: each variant's kernels run it.
	rep, err = Run(Config{Workload: w, Patch: fscrypt.FnameOnstackPatch, Variants: []string{"base", "upstream"}, Ops: 1, CountOps: 1, Count: 1, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Params["requests"] != "compared" {
		t.Errorf("requests reported as %q while compared", rep.Params["requests"])
	}
	for _, m := range rep.Groups[0].Measurements {
		if got := m.Patches.Variant(fscrypt.FnameOnstackPatch); got != m.Variant {
			t.Errorf("measurement %s ran fscrypt-fname-onstack=%s", m.Variant, got)
		}
	}
}
