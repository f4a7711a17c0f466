package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReviewCLI: usage errors are status 2 with one line; a review with
// findings is status 0; --json has the shape in snake_case; the
// text names the finding and a reproducer; the man page exists.
func TestReviewCLI(t *testing.T) {
	for _, args := range [][]string{
		{"review", "--patches", "nosuch"},
		{"review", "--patches", "f2fs-lookup-prealloc=v9"},
		{"review", "--patches", "f2fs-lookup-prealloc=base"},
		{"review", "--steps", "0"},
		{"review", "--seed", "-1"},
		{"review", "extra"},
	} {
		_, stderr, rc := cli(t, "", args...)
		if rc != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "see vfslab review --help") {
			t.Errorf("%v: rc %d, stderr %q; want 2 and one usage line", args, rc, stderr)
		}
	}
	stdout, stderr, rc := cli(t, "", "review", "--patches", "f2fs-lookup-prealloc=v2", "--steps", "24", "--no-perf", "--json")
	if rc != 0 {
		t.Fatalf("rc %d: %s", rc, stderr)
	}
	if !strings.Contains(stderr, "review: f2fs-lookup-prealloc=v2 on ") {
		t.Errorf("no progress on stderr: %q", stderr)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	checkSnakeCase(t, "review --json", v, map[string]bool{"event_deltas": true})
	vs, _ := v["variants"].([]any)
	if len(vs) != 1 {
		t.Fatalf("variants: %v", v["variants"])
	}
	first := vs[0].(map[string]any)
	fs, _ := first["findings"].([]any)
	if first["patch"] != "f2fs-lookup-prealloc" || first["variant"] != "v2" || len(fs) == 0 {
		t.Fatalf("verdict %v", first)
	}
	f := fs[0].(map[string]any)
	for _, k := range []string{"kind", "function", "detail", "reproducer"} {
		if s, _ := f[k].(string); s == "" {
			t.Errorf("finding without %s: %v", k, f)
		}
	}
	if n, _ := f["occurrences"].(float64); n < 1 {
		t.Errorf("finding without occurrences: %v", f)
	}
	if _, ok := f["first_step"].(float64); !ok {
		t.Errorf("finding without first_step: %v", f)
	}
	if _, ok := f["stack"].([]any); !ok {
		t.Errorf("finding without a stack list: %v", f)
	}
	for _, k := range []string{"kernel_findings", "model_findings"} {
		if _, ok := v[k].([]any); !ok {
			t.Errorf("no %s list: %v", k, v[k])
		}
	}
	stdout, _, rc = cli(t, "", "review", "--patches", "f2fs-lookup-prealloc=v2", "--steps", "24", "--no-perf", "-q")
	if rc != 0 || !strings.Contains(stdout, "f2fs-lookup-prealloc=v2  kasan-out-of-bounds in generic_ci_match") ||
		!strings.Contains(stdout, "kernel findings") || !strings.Contains(stdout, "# reproducer: f2fs-lookup-prealloc=v2") {
		t.Errorf("text output:\n%s", stdout)
	}
	dir := t.TempDir()
	if _, stderr, rc := cli(t, "", "man", dir); rc != 0 {
		t.Fatal(stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "vfslab-review.1")); err != nil || !strings.Contains(string(b), "kernel findings") {
		t.Errorf("man page vfslab-review.1: %v", err)
	}
}
