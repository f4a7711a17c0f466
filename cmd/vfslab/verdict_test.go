package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/review"
	"github.com/vfslab/vfslab/sim"
)

// TestMain points the user cache at a temporary directory holding a
// review of every patch for this test binary, so that no test of report
// or ab runs the minutes-long review: every variant is clean there except
// crypto-bio's bio, with the data-mismatch the real review finds.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "vfslab-cache")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	os.Setenv("HOME", dir)
	seedVerdictCache()
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// seedVerdictCache writes a review of every patch for this build.
func seedVerdictCache() {
	cache, err := verdictCacheDir()
	if err != nil {
		panic(err)
	}
	for _, p := range patch.All() {
		res := &review.Result{KernelFindings: []review.Finding{}}
		for _, v := range p.VariantNames()[1:] {
			vv := review.VariantVerdict{Patch: p.ID, Variant: v, Findings: []review.Finding{}}
			if p.ID == "crypto-bio" && v == "bio" {
				vv.Findings = append(vv.Findings, review.Finding{Kind: review.KindData, Function: "fscrypt_decrypt_bio",
					Detail: "the data differ from base's from byte 4096 (page 1)"})
			}
			res.Variants = append(res.Variants, vv)
		}
		writeVerdictCache(cache, &verdictCacheEntry{BuildID: sim.BuildID(), Patch: p.ID, Seed: reviewSeed, Steps: review.DefaultSteps,
			Took: 42, When: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC), Result: res})
	}
}

// TestVerdictCache: a cached review is read back for this build only,
// and a headline over several patches gets the union of its patches'
// verdicts.
func TestVerdictCache(t *testing.T) {
	cache, _ := verdictCacheDir()
	if e := readVerdictCache(cache, "crypto-bio"); e == nil || e.Took != 42 {
		t.Fatalf("cached crypto-bio review: %+v", e)
	}
	vs, err := loadVerdicts(t.Context(), []string{"crypto-bio", "fscrypt-v1-kdf"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if vs.ran != 0 || vs.cold != 84*time.Second {
		t.Fatalf("ran %v cold %v: want the cache only", vs.ran, vs.cold)
	}
	if v := vs.byPatch["crypto-bio"]["bio"]; !v.Broken() || !strings.Contains(v.Short(), "data-mismatch in fscrypt_decrypt_bio") {
		t.Fatalf("bio verdict %+v", v)
	}
	if v := vs.byPatch["crypto-bio"]["workqueue"]; !v.Clean() {
		t.Fatalf("the base's verdict %+v", v)
	}
	if !strings.Contains(vs.summary(), "a cold cache adds 1m24s") {
		t.Fatalf("summary %q", vs.summary())
	}
	// Another build's cache is not this build's.
	b, _ := os.ReadFile(cachePath(cache, "crypto-bio"))
	var e verdictCacheEntry
	json.Unmarshal(b, &e)
	e.BuildID = "other"
	other := t.TempDir()
	writeVerdictCache(other, &e)
	if readVerdictCache(other, "crypto-bio") != nil {
		t.Fatal("another build's review was taken")
	}
}

// TestABVerdicts: ab's rows carry the verdict in every format, and a
// broken variant's ratio is marked.
func TestABVerdicts(t *testing.T) {
	args := []string{"ab", "read", "--param", "mib=1", "--variants", "workqueue,bio", "--ops", "1", "--count", "2", "--profile", "0", "-q"}
	out, errs, status := cli(t, "", args...)
	if status != 0 {
		t.Fatalf("ab: %d %s", status, errs)
	}
	for _, w := range []string{"bio: verdict data-mismatch in fscrypt_decrypt_bio", "not a speed-up to take", "legend:", "WARNING: 2 runs against 2 can never be significant"} {
		if !strings.Contains(out, w) {
			t.Errorf("text lacks %q:\n%s", w, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "bio ") && !strings.Contains(l, "!") {
			t.Errorf("bio's row is not marked broken: %q", l)
		}
	}
	js, _, _ := cli(t, "", append(args, "--format", "json")...)
	var rep struct {
		Machine  *sim.Machine `json:"machine"`
		Warnings []string     `json:"warnings"`
		Groups   []struct {
			Variants []struct {
				Variant string       `json:"variant"`
				Verdict *sim.Verdict `json:"verdict"`
			} `json:"variants"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Machine == nil || rep.Machine.CPU == "" || len(rep.Warnings) == 0 {
		t.Fatalf("json machine %+v warnings %v", rep.Machine, rep.Warnings)
	}
	if v := rep.Groups[0].Variants[1]; v.Variant != "bio" || !v.Verdict.Broken() {
		t.Fatalf("json bio %+v", v)
	}
	for _, f := range []string{"csv", "benchstat"} {
		o, _, _ := cli(t, "", append(args, "--format", f)...)
		if !strings.Contains(o, "data-mismatch in fscrypt_decrypt_bio") || !strings.Contains(o, "AMD") && !strings.Contains(o, "cpu") {
			t.Errorf("%s lacks the verdict or the machine:\n%s", f, o)
		}
	}
}

// TestStability: saved reports compare row by row; a judged row that
// changes significance is unstable on a quiet machine, and nothing is
// judged on a noisy one.
func TestStability(t *testing.T) {
	quiet := &sim.Machine{CPU: "test", ProbeBefore: &sim.Probe{CV: 0.01}, ProbeAfter: &sim.Probe{CV: 0.01}}
	noisy := &sim.Machine{CPU: "test", ProbeBefore: &sim.Probe{CV: 0.2}, ProbeAfter: &sim.Probe{CV: 0.2}}
	run := func(m *sim.Machine, ratio float64, sig bool) *reportJSON {
		return &reportJSON{Schema: ReportSchema, Machine: m, Rows: []sim.ReportRow{
			{Patch: "fscrypt-v1-kdf", Variant: "aeslib", Threads: 1, Ratio: ratio, Significant: sig},
			{Patch: "fscrypt-v1-kdf", Variant: "base", Threads: 1, Ratio: 0.9}}}
	}
	var b strings.Builder
	if !writeStability(&b, []*reportJSON{run(quiet, 5, true), run(quiet, 5.2, true), run(quiet, 4.9, true)}) || !strings.Contains(b.String(), "stable:") {
		t.Errorf("stable runs:\n%s", b.String())
	}
	b.Reset()
	if writeStability(&b, []*reportJSON{run(quiet, 5, true), run(quiet, 5.2, false), run(quiet, 4.9, true)}) || !strings.Contains(b.String(), "UNSTABLE p") {
		t.Errorf("a row that changes significance:\n%s", b.String())
	}
	b.Reset()
	if writeStability(&b, []*reportJSON{run(quiet, 5, true), run(quiet, 8, true), run(quiet, 4.9, true)}) || !strings.Contains(b.String(), "UNSTABLE band") {
		t.Errorf("a row out of the band:\n%s", b.String())
	}
	b.Reset()
	if !writeStability(&b, []*reportJSON{run(noisy, 5, true), run(quiet, 8, false)}) || !strings.Contains(b.String(), "not judged") {
		t.Errorf("noisy runs:\n%s", b.String())
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if len([]rune(l)) > sim.TextWidth {
			t.Errorf("line of %d columns: %q", len([]rune(l)), l)
		}
	}
}
