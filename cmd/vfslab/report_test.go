package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vfslab/vfslab/sim"
)

// TestReportOnePatch: fscrypt-v1-kdf's rows are against sync (the code
// its seed's "before" ran), under both allocators, each saying what it ran
// and carrying the seed's ratio where the seed gave one.
func TestReportOnePatch(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := run([]string{"report", "--patch", "fscrypt-v1-kdf", "--count", "2", "--runtime", "5ms", "--quiet", "--json"}, &out, &errb); rc != 0 {
		t.Fatalf("rc=%d stderr=%s", rc, errb.String())
	}
	var rep reportJSON
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.Schema != ReportSchema || rep.Machine == nil || rep.Machine.CPU == "" {
		t.Fatalf("%v\n%s", err, out.String())
	}
	rows := rep.Rows
	if len(rows) != 4 {
		t.Fatalf("rows = %+v", rows)
	}
	for i, r := range rows {
		if r.SlubDebug != (i >= 2) || r.Against != "sync" || r.Variant != []string{"base", "aeslib"}[i%2] || r.Runs != 2 || r.OpsPerRun < 1 {
			t.Fatalf("row %d = %+v", i, r)
		}
	}
	// The AES library variant allocates nothing; the seed's ratio is
	// carried beside the measurement, and the verdict (the test cache's:
	// clean) beside both. No assertion on the measured speed: the test
	// must not depend on the machine's timing.
	if a := rows[1]; a.Kmallocs != 0 || a.SeedRatio == nil || *a.SeedRatio < 4.6 || !a.Verdict.Clean() || a.Broken || a.Conclusion == "" {
		t.Fatalf("aeslib row = %+v", a)
	}
	// Two runs against two can never be significant: every format says so.
	if a := rows[1]; a.CountWarning == "" || a.MinP < 0.05 || len(rep.Warnings) == 0 {
		t.Fatalf("count warning: %+v %v", a, rep.Warnings)
	}
	if rows[0].SeedRatio != nil {
		t.Fatalf("base has no seed figure: %+v", rows[0])
	}
}

// TestReportFixedSizes: without --runtime a report run takes its
// headline's operation counts, and slub_debug's own, which its rows and
// command state.
func TestReportFixedSizes(t *testing.T) {
	h, err := sim.HeadlineFor("fscrypt-v1-kdf")
	if err != nil {
		t.Fatal(err)
	}
	for _, sd := range []bool{false, true} {
		size := h.SizeFor(sd)
		cfg := h.Config(sim.Config{}, sd)
		if cfg.Ops != size.Ops || cfg.Count != size.Count || cfg.SlubDebug != sd || cfg.Ops == 0 {
			t.Fatalf("slub_debug=%v: config %+v, size %+v", sd, cfg, size)
		}
		c := abCommand(h, cfg)
		if !strings.Contains(c, fmt.Sprintf("--ops %d --count %d", size.Ops, size.Count)) || strings.Contains(c, "--slub-debug") != sd {
			t.Fatalf("command %q", c)
		}
	}
	if cfg := h.Config(sim.Config{RunTime: time.Millisecond, Count: 3}, false); cfg.Ops != 0 || cfg.Count != 3 {
		t.Fatalf("--runtime calibrates: %+v", cfg)
	}
}

func TestReportErrors(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := run([]string{"report", "--patch", "nope"}, &out, &errb); rc != 2 || !strings.Contains(errb.String(), "valid: fscrypt-fname-onstack") {
		t.Fatalf("rc=%d stderr=%s", rc, errb.String())
	}
	errb.Reset()
	if rc := run([]string{"report", "extra"}, &out, &errb); rc != 2 {
		t.Fatalf("rc=%d", rc)
	}
}

func TestHelpListsCommands(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := run([]string{"--help"}, &out, &errb); rc != 0 {
		t.Fatal(rc)
	}
	for _, c := range []string{"ab", "report", "patches", "crypt", "hash", "dump", "trace"} {
		if !strings.Contains(out.String(), "\n  "+c+" ") {
			t.Errorf("--help does not list %s:\n%s", c, out.String())
		}
	}
}
