package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/vfslab/vfslab/sim"
)

// cli runs vfslab in-process with stdin feeding every "-" input.
func cli(t *testing.T, stdin string, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	oc, oh, od := cryptStdin, hashStdin, dumpStdin
	cryptStdin, hashStdin, dumpStdin = strings.NewReader(stdin), strings.NewReader(stdin), strings.NewReader(stdin)
	defer func() { cryptStdin, hashStdin, dumpStdin = oc, oh, od }()
	var out, errb bytes.Buffer
	status = run(args, &out, &errb)
	return out.String(), errb.String(), status
}

// noStackTrace fails when output looks like a Go panic.
func noStackTrace(t *testing.T, args []string, s string) {
	t.Helper()
	for _, bad := range []string{"goroutine ", "panic:", ".go:"} {
		if strings.Contains(s, bad) {
			t.Errorf("%q: output holds %q:\n%s", args, bad, s)
		}
	}
}

const (
	rawKey   = testRawKey
	nonceHex = "000102030405060708090a0b0c0d0e0f"
)

// usageLine is the one line of a usage error.
var usageLine = regexp.MustCompile(`^(vfslab[a-z0-9 ]*): [^\n]+; see (vfslab[a-z0-9 ]*) --help\n$`)

// TestIssueCases is the list of issue 11's "Why" section: every case with
// its new status and the words its one line of stderr must hold. A usage
// error (status 2) is exactly one line naming the flag or argument and
// ending in "see vfslab CMD --help"; nothing goes to stdout.
func TestIssueCases(t *testing.T) {
	key15, key65 := strings.Repeat("11", 15), strings.Repeat("11", 65)
	cases := []struct {
		args   []string
		stdin  string
		status int
		stderr []string
	}{
		// Stack traces (out of memory) are now refused up front.
		{args: []string{"trace", "read", "/tmp/hello", "100000000000"}, status: 2, stderr: []string{"read N", "0..1048576"}},
		{args: []string{"ab", "--workload", "v1kdf", "--threads", "100000000", "--ops", "1", "--count", "1"}, status: 2, stderr: []string{"--threads", "1..1024"}},
		{args: []string{"ab", "--workload", "fname", "--threads", "5000000"}, status: 2, stderr: []string{"--threads", "1..1024"}},
		{args: []string{"ab", "--workload", "create", "--param", "n=100000000"}, status: 2, stderr: []string{"--param n=100000000", "1..100000"}},
		{args: []string{"ab", "--workload", "lookup", "--param", "entries=100000000"}, status: 2, stderr: []string{"--param entries=100000000", "1..1000000"}},
		{args: []string{"ab", "--workload", "create", "--param", "n=100000", "--threads", "8"}, status: 2, stderr: []string{"--threads 8", "would not fit in memory"}},
		{args: []string{"ab", "--workload", "create", "--param", "n=2000", "--ops", "1000"}, status: 2, stderr: []string{"--ops", "at most 131 operations"}},
		// Bad values are no longer silently replaced.
		{args: []string{"ab", "v1kdf", "--count", "0"}, status: 2, stderr: []string{`"--count"`, "1..1000"}},
		{args: []string{"ab", "v1kdf", "--count", "-5"}, status: 2, stderr: []string{`"--count"`, "1..1000"}},
		{args: []string{"ab", "v1kdf", "--ops", "-5"}, status: 2, stderr: []string{`"--ops"`, "0 (calibrate)"}},
		{args: []string{"ab", "v1kdf", "--runtime", "-1s"}, status: 2, stderr: []string{`"--runtime"`, "1ms..1h0m0s"}},
		{args: []string{"ab", "v1kdf", "--runtime", "0"}, status: 2, stderr: []string{`"--runtime"`}},
		{args: []string{"ab", "v1kdf", "--threads", ""}, status: 2, stderr: []string{`"--threads"`, "distinct worker counts"}},
		{args: []string{"ab", "v1kdf", "--threads", ","}, status: 2, stderr: []string{`"--threads"`}},
		{args: []string{"ab", "v1kdf", "--threads", "1,1"}, status: 2, stderr: []string{"1 given twice"}},
		{args: []string{"ab", "--workload", "open1", "--patch", "fscrypt-v1-kdf"}, status: 2, stderr: []string{"--patch fscrypt-v1-kdf", "does not run the code"}},
		{args: []string{"trace", "stat", "/tmp/hello", "extra"}, status: 2, stderr: []string{"stat takes 1 argument"}},
		{args: []string{"patches", "extra"}, status: 2, stderr: []string{`unexpected argument "extra"`}},
		// crypt refuses what the kernel refuses or warns about.
		{args: []string{"crypt", "fname", "--flags", "0x08", "--master-key", rawKey, "--dir-inode", "4294967296", "61"}, status: 1, stderr: []string{"IV_INO_LBLK_64", "32-bit inode numbers", "EINVAL"}},
		{args: []string{"crypt", "fname", "--flags", "0x08", "--master-key", rawKey, "--dir-inode", "0", "61"}, status: 1, stderr: []string{"IV_INO_LBLK_64", "inode number 0"}},
		{args: []string{"crypt", "contents", "--flags", "0x08", "--master-key", rawKey, "--inode", "0"}, stdin: strings.Repeat("00", 32), status: 1, stderr: []string{"--inode 0"}},
		{args: []string{"crypt", "contents", "--flags", "0x10", "--master-key", rawKey, "--index", "4294967296"}, stdin: strings.Repeat("00", 32), status: 1, stderr: []string{"IV_INO_LBLK_32", "below 2^32"}},
		{args: []string{"crypt", "contents", "--flags", "0x08", "--master-key", rawKey, "--data-unit-size", "512", "--index", "4294967295"}, stdin: strings.Repeat("00", 1024), status: 1, stderr: []string{"4294967295..4294967296", "U32_MAX"}},
		{args: []string{"crypt", "derive", "--flags", "0x10", "--master-key", rawKey, "--inode", "4294967296"}, status: 1, stderr: []string{"IV_INO_LBLK_32"}},
		// Clear errors and exit codes.
		{args: []string{"crypt", "keyid"}, status: 2, stderr: []string{"--master-key is required"}},
		{args: []string{"crypt", "fname", "--nonce", nonceHex, "61"}, status: 2, stderr: []string{"--master-key is required"}},
		{args: []string{"crypt", "keyid", "--master-key", key15}, status: 1, stderr: []string{"15 bytes", "FSCRYPT_MIN_KEY_SIZE (16)", "FSCRYPT_MAX_KEY_SIZE (64)", "EINVAL"}},
		{args: []string{"crypt", "keyid", "--master-key", key65}, status: 1, stderr: []string{"65 bytes", "EINVAL"}},
		{args: []string{"crypt", "fname", "--master-key", key15, "--nonce", nonceHex, "61"}, status: 1, stderr: []string{"FS_IOC_ADD_ENCRYPTION_KEY", "15 bytes"}},
		{args: []string{"crypt", "fname", "--master-key", rawKey, "--nonce", nonceHex, ""}, status: 2, stderr: []string{"NAME_HEX is empty"}},
		{args: []string{"crypt", "nokey", "--decode", "2121"}, status: 1, stderr: []string{"not a no-key name", "ENOENT"}},
		{args: []string{"ab", "open1", "--param", "bogus=1"}, status: 2, stderr: []string{`no parameter "bogus"`, "valid: fs, parent"}},
		{args: []string{"ab", "open1", "--param", "fs=xfs"}, status: 2, stderr: []string{"--param fs=xfs", "ext4|f2fs"}},
		{args: []string{"ab", "open1", "--param", "fs"}, status: 2, stderr: []string{"name=value"}},
		{args: []string{"ab", "open1", "--variants", "nope"}, status: 2, stderr: []string{`no variant "nope"`, "base, v1, v2"}},
		{args: []string{"ab", "open1", "--variants", "base,,v1"}, status: 2, stderr: []string{"--variants"}},
		{args: []string{"ab", "--bogus"}, status: 2, stderr: []string{"unknown flag: --bogus"}},
		{args: []string{"report", "--count", "x"}, status: 2, stderr: []string{`"--count"`}},
		{args: []string{"report", "--patch", "nope"}, status: 2, stderr: []string{"valid: fscrypt-fname-onstack"}},
		{args: []string{"report", "--allocators", "slab"}, status: 2, stderr: []string{"both, production, slub_debug"}},
		{args: []string{"report", "--allocators", "production", "--slub-debug"}, status: 2, stderr: []string{"--slub-debug conflicts with --allocators production"}},
		{args: []string{"report", "--count", "0"}, status: 2, stderr: []string{`"--count"`}},
		{args: []string{"bogus"}, status: 2, stderr: []string{`unknown command "bogus"`}},
		{args: []string{"ab", "--json", "--format", "csv", "v1kdf"}, status: 2, stderr: []string{"exclude each other"}},
		{args: []string{"ab", "v1kdf", "--format", "xml"}, status: 2, stderr: []string{"text, json, csv, benchstat"}},
		{args: []string{"ab", "compare", "a.json"}, status: 2, stderr: []string{"want exactly 2 argument(s)"}},
		{args: []string{"ab", "v1kdf", "--save", "/nonexistent-dir/x.json"}, status: 2, stderr: []string{"--save"}},
		{args: []string{"dump", "ext4", "--count", "2000000"}, status: 2, stderr: []string{"0..1048576"}},
	}
	for _, c := range cases {
		out, errs, status := cli(t, c.stdin, c.args...)
		noStackTrace(t, c.args, out+errs)
		if status != c.status {
			t.Errorf("vfslab %q: status %d, want %d; stderr %q", c.args, status, c.status, errs)
			continue
		}
		if out != "" {
			t.Errorf("vfslab %q: stdout %q, want nothing", c.args, out)
		}
		for _, w := range c.stderr {
			if !strings.Contains(errs, w) {
				t.Errorf("vfslab %q: stderr %q lacks %q", c.args, errs, w)
			}
		}
		if strings.Contains(errs, "using implementation") {
			t.Errorf("vfslab %q: stderr holds the kernel's pr_info chatter: %q", c.args, errs)
		}
		if c.status == 2 {
			m := usageLine.FindStringSubmatch(errs)
			if m == nil || m[1] != m[2] || !strings.HasPrefix(strings.Join(c.args, " ")+" ", strings.TrimPrefix(m[1]+" ", "vfslab ")) {
				t.Errorf("vfslab %q: usage error is not one line 'vfslab CMD: ...; see vfslab CMD --help': %q", c.args, errs)
			}
		}
	}
}

// TestIssueCasesThatNowWork: what the issue saw refused or misread now
// runs: a positional workload before flags, --nokey after the path (and
// its new spelling --no-key), hex with whitespace and newlines as xxd -p
// prints it, --no-X for true-by-default flags.
func TestIssueCasesThatNowWork(t *testing.T) {
	out, errs, status := cli(t, "", "ab", "v1kdf", "--ops", "20", "--count", "2", "-q", "--variants", "base,aeslib")
	if status != 0 || !strings.Contains(out, "aeslib") {
		t.Errorf("ab v1kdf ...: status %d, stderr %q", status, errs)
	}
	// Without the key the plaintext name is not found (the directory
	// holds no-key names).
	for _, flag := range []string{"--nokey", "--no-key"} {
		out, errs, status = cli(t, "", "trace", "--no-times", "open", "/secret/note", flag)
		if status != 0 || !strings.HasSuffix(out, `open("/secret/note", O_RDONLY) = -1 ENOENT`+"\n") || errs != "" {
			t.Errorf("trace open /secret/note %s: status %d, stdout %q, stderr %q", flag, status, out, errs)
		}
	}
	one, _, _ := cli(t, "", "crypt", "fname", "--master-key", rawKey, "--nonce", nonceHex, "61")
	wrapped := ""
	for i := 0; i < len(rawKey); i += 30 {
		wrapped += rawKey[i:min(i+30, len(rawKey))] + "\n"
	}
	two, errs, status := cli(t, "", "crypt", "fname", "--master-key", wrapped, "--nonce", " "+nonceHex[:16]+"\n"+nonceHex[16:], "6\n1")
	if status != 0 || one == "" || one != two {
		t.Errorf("hex with newlines: status %d, %q vs %q, stderr %q", status, two, one, errs)
	}
	withTimes, _, _ := cli(t, "", "trace", "stat", "/tmp/hello")
	noTimes, _, status := cli(t, "", "trace", "--no-times", "stat", "/tmp/hello")
	off, _, _ := cli(t, "", "trace", "--times=false", "stat", "/tmp/hello")
	if status != 0 || noTimes != off || noTimes == withTimes {
		t.Errorf("--no-times: status %d; it should equal --times=false and differ from the default", status)
	}
	a, _, s1 := cli(t, "", "dump", "ext4", "--count", "3", "--no-metadata-csum")
	b, _, s2 := cli(t, "", "dump", "ext4", "--count", "3", "--metadata-csum=false")
	if s1 != 0 || s2 != 0 || a != b {
		t.Errorf("--no-metadata-csum: status %d %d, outputs differ", s1, s2)
	}
}

// TestHelpAndVersion: help goes to stdout with status 0 for every command
// and every way of asking; --version prints the build's version;
// completion comes with cobra.
func TestHelpAndVersion(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"-h"}, {"report", "--help"}, {"ab", "--help"}, {"ab", "compare", "--help"},
		{"trace", "--help"}, {"patches", "--help"}, {"crypt", "--help"}, {"crypt", "fname", "--help"}, {"hash", "--help"},
		{"hash", "ext4", "-h"}, {"dump", "--help"}, {"dump", "f2fs", "--help"}, {"help", "ab"}} {
		out, errs, status := cli(t, "", args...)
		if status != 0 || errs != "" || !strings.Contains(out, "Usage:") {
			t.Errorf("vfslab %q: status %d, stderr %q, stdout %.80q", args, status, errs, out)
		}
	}
	out, _, status := cli(t, "", "--version")
	if status != 0 || !strings.HasPrefix(out, "vfslab ") || !strings.Contains(out, "go1.") {
		t.Errorf("--version: status %d, %q", status, out)
	}
	out, _, status = cli(t, "", "completion", "bash")
	if status != 0 || !strings.Contains(out, "bash completion") {
		t.Errorf("completion bash: status %d, %.100q", status, out)
	}
}

// TestCryptHelpExamples runs the examples `vfslab crypt --help` shows and
// checks that they print what it says.
func TestCryptHelpExamples(t *testing.T) {
	help, _, _ := cli(t, "", "crypt", "--help")
	for _, e := range cryptExamples {
		if !strings.Contains(help, e.cmd) || !strings.Contains(help, indent(e.out)) {
			t.Errorf("crypt --help lacks the example %q", e.cmd)
		}
		out, errs, status := cli(t, e.stdin, strings.Fields(e.cmd)[1:]...)
		if status != 0 || out != e.out {
			t.Errorf("%s: status %d, stdout %q, want %q; stderr %q", e.cmd, status, out, e.out, errs)
		}
	}
}

// TestStdinInputs: "-" reads one input per line, and every line gives the
// same result as the argument would.
func TestStdinInputs(t *testing.T) {
	names := []string{"61", "6262", "666f6f", "53747261c39f65"}
	for _, cmd := range [][]string{
		{"hash", "f2fs", "--casefold"},
		{"hash", "ext4", "--version", "half_md4", "--casefold"},
		{"crypt", "fname", "--master-key", rawKey, "--nonce", nonceHex},
		{"crypt", "dirhash", "--master-key", rawKey, "--nonce", nonceHex},
	} {
		var want string
		for _, n := range names {
			out, errs, status := cli(t, "", append(append([]string(nil), cmd...), n)...)
			if status != 0 {
				t.Fatalf("%q %s: status %d: %s", cmd, n, status, errs)
			}
			want += out
		}
		got, errs, status := cli(t, strings.Join(names, "\n")+"\n\n", append(append([]string(nil), cmd...), "-")...)
		if status != 0 || got != want {
			t.Errorf("%q -: status %d, %q, want %q; stderr %q", cmd, status, got, want, errs)
		}
	}
	_, errs, status := cli(t, "61\nxyz\n", "hash", "f2fs", "-")
	if status != 2 || !strings.Contains(errs, "stdin line 2") {
		t.Errorf("bad line: status %d, %q", status, errs)
	}
	_, errs, status = cli(t, "", "crypt", "fname", "--nonce", nonceHex, "-")
	if status != 2 || !strings.Contains(errs, "--master-key is required") {
		t.Errorf("- without --master-key: status %d, %q", status, errs)
	}
}

// checkSnakeCase fails on any JSON object key that is not snake_case,
// except inside the maps named in free (their keys are data).
func checkSnakeCase(t *testing.T, what string, v any, free map[string]bool) {
	t.Helper()
	snake := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if !snake.MatchString(k) {
					t.Errorf("%s: key %q at %s is not snake_case", what, k, path)
				}
				if free[k] {
					continue
				}
				walk(e, path+"."+k)
			}
		case []any:
			for _, e := range x {
				walk(e, path+"[]")
			}
		}
	}
	walk(v, "")
}

// TestJSONSchema: ab's JSON has snake_case keys and every variant carries
// variant, threads, ns_per_op, ops_per_sec and events with kmalloc; the
// patches list is snake_case too.
func TestJSONSchema(t *testing.T) {
	out, errs, status := cli(t, "", "ab", "v1kdf", "--ops", "20", "--count", "3", "-q", "--json")
	if status != 0 {
		t.Fatalf("ab --json: %d %s", status, errs)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	checkSnakeCase(t, "ab --json", doc, map[string]bool{"params": true})
	if doc["schema"] != sim.JSONSchema {
		t.Errorf("schema %v", doc["schema"])
	}
	groups := doc["groups"].([]any)
	vs := groups[0].(map[string]any)["variants"].([]any)
	if len(vs) != 3 {
		t.Fatalf("%d variants", len(vs))
	}
	for _, v := range vs {
		m := v.(map[string]any)
		for _, k := range []string{"variant", "threads", "ns_per_op", "ops_per_sec", "events"} {
			if _, ok := m[k]; !ok {
				t.Errorf("variant %v lacks %q", m["variant"], k)
			}
		}
		ev := m["events"].(map[string]any)
		if _, ok := ev["kmalloc"]; !ok {
			t.Errorf("variant %v: events lack kmalloc", m["variant"])
		}
		ns, ops := m["ns_per_op"].(float64), m["ops_per_sec"].(float64)
		if ns <= 0 || ops <= 0 {
			t.Errorf("variant %v: ns_per_op %v ops_per_sec %v", m["variant"], ns, ops)
		}
	}
	if base := vs[0].(map[string]any)["events"].(map[string]any); base["kmalloc"].(float64) != 3 {
		t.Errorf("v1kdf base: %v kmalloc per op, want 3 (the ecb(aes) request, tfm and key)", base["kmalloc"])
	}
	out, _, status = cli(t, "", "patches", "--json")
	var ps any
	if err := json.Unmarshal([]byte(out), &ps); status != 0 || err != nil {
		t.Fatalf("patches --json: %d %v", status, err)
	}
	checkSnakeCase(t, "patches --json", ps, nil)
}

// TestFormats: csv has a header and one row per variant; benchstat lines
// are Go benchmark lines; --save and compare round-trip.
func TestFormats(t *testing.T) {
	args := []string{"ab", "v1kdf", "--ops", "20", "--count", "3", "-q"}
	out, _, status := cli(t, "", append(args, "--format", "csv")...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if status != 0 || len(lines) != 4 || !strings.HasPrefix(lines[0], "workload,patch,slub_debug,threads,variant,") {
		t.Errorf("csv: status %d:\n%s", status, out)
	}
	out, _, status = cli(t, "", append(args, "--format", "benchstat")...)
	re := regexp.MustCompile(`^BenchmarkV1kdf/variant=(base|sync|aeslib)/threads=1-\d+\t20\t\S+ ns/op\t\S+ ops/s\t.* kmalloc/op`)
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Benchmark") {
			n++
			if !re.MatchString(l) {
				t.Errorf("benchstat line %q", l)
			}
		}
	}
	if status != 0 || n != 9 {
		t.Errorf("benchstat: status %d, %d lines, want 9", status, n)
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	if _, errs, status := cli(t, "", append(args, "--save", a)...); status != 0 {
		t.Fatalf("--save: %d %s", status, errs)
	}
	if _, errs, status := cli(t, "", append(args, "--save", b, "--variants", "base,aeslib")...); status != 0 {
		t.Fatalf("--save: %d %s", status, errs)
	}
	out, errs, status := cli(t, "", "ab", "compare", a, b)
	if status != 0 || !strings.Contains(out, "old ns/op") || !strings.Contains(out, "aeslib") || strings.Contains(out, "sync ") ||
		!strings.Contains(out, "geomean") || !strings.Contains(out, "old machine:") {
		t.Errorf("compare: status %d, stderr %q:\n%s", status, errs, out)
	}
	// Different workloads are refused unless forced.
	c := filepath.Join(dir, "c.json")
	if _, errs, status := cli(t, "", "ab", "open1", "--ops", "20", "--count", "2", "-q", "--profile", "0", "--save", c); status != 0 {
		t.Fatalf("--save: %d %s", status, errs)
	}
	if _, errs, status := cli(t, "", "ab", "compare", a, c); status != 2 || !strings.Contains(errs, "workloads differ") || !strings.Contains(errs, "--force") {
		t.Errorf("compare across workloads: status %d, %q", status, errs)
	}
	if out, errs, status := cli(t, "", "ab", "compare", "--force", a, c); status == 2 || !strings.Contains(out, "note: workloads differ") {
		t.Errorf("compare --force: status %d, %q:\n%s", status, errs, out)
	}
	os.WriteFile(b, []byte("{}"), 0o644)
	if _, errs, status := cli(t, "", "ab", "compare", a, b); status != 2 || !strings.Contains(errs, "schema") {
		t.Errorf("compare with a bad file: status %d, %q", status, errs)
	}
}

// TestProgressPlainLines: with stderr not a terminal, every phase is a
// plain line; --quiet prints none.
func TestProgressPlainLines(t *testing.T) {
	_, errs, status := cli(t, "", "ab", "v1kdf", "--ops", "10", "--count", "2", "--variants", "base,aeslib")
	for _, w := range []string{"base T=1: setting up", "aeslib T=1 run 2/2:", "aeslib T=1: counting run"} {
		if status != 0 || !strings.Contains(errs, w) {
			t.Errorf("progress lacks %q:\n%s", w, errs)
		}
	}
	_, errs, _ = cli(t, "", "ab", "v1kdf", "--ops", "10", "--count", "2", "-q")
	if errs != "" {
		t.Errorf("--quiet printed %q", errs)
	}
}

// TestProgressNeverSilent: a phase that lasts is followed by "still
// running" lines (every 30 s; here every 20 ms, during the setup of a
// directory of 5000 names).
func TestProgressNeverSilent(t *testing.T) {
	old := stillEvery
	stillEvery = 20 * time.Millisecond
	defer func() { stillEvery = old }()
	_, errs, status := cli(t, "", "ab", "lookup", "--param", "entries=5000", "--variants", "base", "--ops", "1", "--count", "1")
	if status != 0 || !regexp.MustCompile(`lookup f2fs-lookup-prealloc=base T=1: setting up: still running after \d+s`).MatchString(errs) {
		t.Errorf("status %d, progress:\n%s", status, errs)
	}
}

// TestInterruptPrintsWhatWasMeasured: a run stopped (Ctrl-C cancels the
// command's context) prints the runs measured so far and exits 130, for ab
// and for report.
func TestInterruptPrintsWhatWasMeasured(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"ab", "v1kdf", "--count", "1000", "--runtime", "2ms"}, []string{"INTERRUPTED", "base"}},
		{[]string{"report", "--patch", "fscrypt-v1-kdf", "--count", "1000", "--runtime", "2ms"}, []string{"each variant against", "fscrypt-v1-kdf on v1kdf"}},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		pr, pw, _ := os.Pipe()
		// Cancel once the fourth timed run has been reported.
		go func() {
			buf := make([]byte, 1<<16)
			seen := ""
			for {
				n, err := pr.Read(buf)
				seen += string(buf[:n])
				if strings.Count(seen, " run ") >= 4 || err != nil {
					cancel()
					return
				}
			}
		}()
		var out bytes.Buffer
		done := make(chan int)
		go func() { done <- runContext(ctx, c.args, &out, pw) }()
		var status int
		select {
		case status = <-done:
		case <-time.After(60 * time.Second):
			t.Fatalf("%q did not stop after the interrupt", c.args)
		}
		pw.Close()
		pr.Close()
		cancel()
		if status != interrupted {
			t.Errorf("%q: status %d, want %d", c.args, status, interrupted)
		}
		for _, w := range c.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%q: stdout lacks %q:\n%s", c.args, w, out.String())
			}
		}
	}
}

// TestReportHTML: the HTML report is one page with inline SVG charts,
// the commands that made them, and nothing fetched from elsewhere.
func TestReportHTML(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.html")
	out, errs, status := cli(t, "", "report", "--patch", "fscrypt-v1-kdf", "--count", "2", "--runtime", "2ms", "-q", "--html", path)
	if status != 0 {
		t.Fatalf("report --html: %d %s", status, errs)
	}
	if !strings.Contains(out, "aeslib") {
		t.Errorf("stdout lacks the text report:\n%s", out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if n := strings.Count(page, "<svg"); n < 2 {
		t.Errorf("%d SVG charts, want the ratios and the events", n)
	}
	for _, w := range []string{"vfslab ab --workload v1kdf --patch fscrypt-v1-kdf --runtime 2ms --count 2 --seed 1 --slub-debug --variants sync,base,aeslib", "kmalloc", "seed&#39;s figure"} {
		if !strings.Contains(page, w) {
			t.Errorf("page lacks %q", w)
		}
	}
	for _, bad := range []string{"<script", "src=", "href=", "<?xml", "<!DOCTYPE svg"} {
		if strings.Contains(page, bad) {
			t.Errorf("page holds %q", bad)
		}
	}
}

// TestReportText: the text table fits 120 columns; non-significant
// ratios carry "~", noisy ones "?", broken ones "!" with the seed's figure
// in parentheses; each variant's ratio under both allocators sits on one
// line; the header names each column once, empty columns are dropped,
// counts print as counts, and the legend explains every symbol.
func TestReportText(t *testing.T) {
	seed := 2.0
	lo, hi := 1.8, 2.2
	broken := &sim.Verdict{Reviewed: true, Findings: []sim.Finding{{Kind: "leak", Function: "fscrypt_fname_encrypt", Text: "leak in fscrypt_fname_encrypt: kmemleak"}}}
	clean := &sim.Verdict{Reviewed: true, Findings: []sim.Finding{}}
	rows := []sim.ReportRow{
		{Patch: "p", Workload: "create", Threads: 1, Variant: "v2", Against: "base", Metric: "ops/s", Base: 1.5, Value: 3, Ratio: 2, P: 0.01, Significant: true,
			RatioLo: &lo, RatioHi: &hi, SeedRatio: &seed, Kmallocs: 513517, BaseKmalloc: 1027034, Runs: 5, OpsPerRun: 1, PerOp: 1000, Unit: "creates", Params: "n=1000",
			Verdict: broken, Broken: true, Conclusion: "v2 is x2.00 faster than base and leaks memory as posted: not a speed-up to take",
			Deltas: []sim.EventDelta{{Event: "kmalloc", Against: 1027034, Variant: 513517}}},
		{Patch: "p", Workload: "create", Threads: 1, Variant: "v4", Against: "base", Metric: "ops/s", Base: 1.5, Value: 1.6, Ratio: 1.07, P: 0.4, Noisy: true,
			Runs: 5, OpsPerRun: 1, PerOp: 1000, Unit: "creates", Params: "n=1000", Verdict: clean, Conclusion: "v4 is x1.07 against base, not significant"},
		{Patch: "p", Workload: "create", SlubDebug: true, Threads: 1, Variant: "v2", Against: "base", Metric: "ops/s", Ratio: 3.5, P: 0.03, Significant: true,
			SeedRatio: &seed, Runs: 4, OpsPerRun: 1, PerOp: 100, Unit: "creates", Params: "n=100", Verdict: broken, Broken: true, Conclusion: "v2 is x3.50 faster"},
	}
	var b bytes.Buffer
	writeReportText(&b, &reportOut{runs: nil, machine: &sim.Machine{CPU: "test"}, review: "verdicts: test"}, rows)
	s := b.String()
	for _, w := range []string{"!x2.00", "~x1.07?", "(x2.00)", "x1.80-x2.20", "0.010", "BROKEN", "clean", "create: 1 op = ",
		"production ran 5x1x1000 creates", "slub_debug ran 4x1x100 creates", "!x3.50", "slub_debug: n=100", "kmalloc 1.03M -> 514k",
		"leak in fscrypt_fname_encrypt", "not a speed-up to take", "legend:", "T = worker threads", "? = noisy", "! = broken"} {
		if !strings.Contains(s, w) {
			t.Errorf("report lacks %q:\n%s", w, s)
		}
	}
	if strings.Contains(s, "513517.00") {
		t.Errorf("counts print with decimals:\n%s", s)
	}
	lines := strings.Split(s, "\n")
	var v2, v4, head string
	for _, l := range lines {
		if len([]rune(l)) > sim.TextWidth {
			t.Errorf("line of %d columns: %q", len([]rune(l)), l)
		}
		switch {
		case strings.HasPrefix(l, "v2 "):
			v2 += l
		case strings.HasPrefix(l, "v4 "):
			v4 += l
		case strings.HasPrefix(l, "variant "):
			head = l
		}
	}
	// One line per variant: v2's two allocators share a line, and v4,
	// which has no slub_debug row, shows "-" there.
	if !strings.Contains(v2, "x2.00") || !strings.Contains(v2, "x3.50") || !strings.Contains(v4, " - ") {
		t.Errorf("v2 %q, v4 %q", v2, v4)
	}
	if head == "" {
		t.Fatalf("no header:\n%s", s)
	}
	cols := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(head), -1)
	if !slices.Contains(cols, "seed") || !slices.Contains(cols, "verdict") {
		t.Errorf("header %q", head)
	}
	// Without a seed figure or slub_debug rows, those columns go.
	var b2 bytes.Buffer
	writeReportText(&b2, &reportOut{machine: &sim.Machine{}}, rows[1:2])
	for _, l := range strings.Split(b2.String(), "\n") {
		if strings.HasPrefix(l, "variant ") && (strings.Contains(l, "seed") || strings.Contains(l, "slub_debug")) {
			t.Errorf("empty columns kept: %q", l)
		}
	}
}

// TestPanicIsOneLine: a Go panic that escaped every simulator boundary is
// one line on stderr and status 1, not a stack trace.
func TestPanicIsOneLine(t *testing.T) {
	extraCommands = append(extraCommands, func() *cobra.Command {
		return &cobra.Command{Use: "zz-panic", Hidden: true, RunE: func(*cobra.Command, []string) error {
			var s []int
			_ = s[len(s)+2] // index out of range
			return nil
		}}
	})
	defer func() { extraCommands = extraCommands[:len(extraCommands)-1] }()
	out, errs, status := cli(t, "", "zz-panic")
	noStackTrace(t, []string{"zz-panic"}, out+errs)
	if status != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "internal error:") || !strings.Contains(errs, "index out of range") {
		t.Errorf("status %d, stderr %q", status, errs)
	}
}

// TestManPages: vfslab man writes a page per command from the commands'
// own help, titled by the command (VFSLAB-TRACE(1)).
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if rc := run([]string{"man", dir}, &out, &errb); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb.String())
	}
	for page, title := range map[string]string{"vfslab.1": `"VFSLAB"`, "vfslab-trace.1": `"VFSLAB-TRACE"`, "vfslab-sh.1": `"VFSLAB-SH"`,
		"vfslab-crypt-fname.1": `"VFSLAB-CRYPT-FNAME"`, "vfslab-draw-dentries.1": `"VFSLAB-DRAW-DENTRIES"`, "vfslab-quiz.1": `"VFSLAB-QUIZ"`} {
		b, err := os.ReadFile(filepath.Join(dir, page))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(".SH NAME")) {
			t.Errorf("%s has no NAME section", page)
		}
		// Each page is titled by its own command.
		if !bytes.Contains(b, []byte(".TH "+title+" \"1\"")) {
			t.Errorf("%s is not titled %s(1): %.80q", page, title, b)
		}
	}
	if rc := run([]string{"man"}, &out, &errb); rc != 2 {
		t.Errorf("man without DIR: rc %d", rc)
	}
}
