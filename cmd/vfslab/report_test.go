package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/sim"
)

func TestReportOnePatch(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := run([]string{"report", "--patch", "fscrypt-v1-kdf", "--count", "2", "--runtime", "5ms", "--quiet", "--json"}, &out, &errb); rc != 0 {
		t.Fatalf("rc=%d stderr=%s", rc, errb.String())
	}
	var rows []sim.ReportRow
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(rows) != 2 || rows[0].Variant != "sync" || rows[1].Variant != "aeslib" {
		t.Fatalf("rows = %+v", rows)
	}
	// The AES library variant allocates nothing; the seed's ratio is
	// carried beside the measurement.
	if rows[1].Kmallocs != 0 || rows[1].SeedRatio == nil || *rows[1].SeedRatio < 4.6 || rows[1].Ratio <= 1 {
		t.Fatalf("aeslib row = %+v", rows[1])
	}
	if rows[0].SeedRatio != nil {
		t.Fatalf("sync has no seed figure: %+v", rows[0])
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
