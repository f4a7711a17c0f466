package shell

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/vfs"
)

// xfstestsPreludeSrc is the part of the prelude that only --xfstests
// loads: what check and common/rc give a test beyond the shared prelude
// (real _require_* checks, _notrun, the post-test checks).
//
//go:embed xfstests.sh
var xfstestsPreludeSrc string

// XfstestsConfig is one `vfslab sh --xfstests` run: the checkout, the
// tests or groups, and where the results go.
type XfstestsConfig struct {
	// Dir is the xfstests checkout (its tests/, common/ and src/).
	Dir string
	// Fstyp is $FSTYP.
	Fstyp string
	// Results is the host directory of the results (.out.bad, .full,
	// .notrun, .dmesg, .hints, check.time); "" makes a temporary one.
	Results string
	// Tests are TEST arguments (patterns under tests/), Groups the -g
	// groups and XGroups the -x groups.
	Tests, Groups, XGroups []string
	// Patches and Seed make each test's machine.
	Patches patch.Set
	Seed    uint64
}

// xfsState is what a shell in --xfstests mode knows besides the machine:
// the checkout's path (the machine's $here, whose src/ holds the test
// programs), where the common/* files define the helpers (to name the
// file of a helper the prelude lacks), and the exit status an EXIT trap
// gave.
type xfsState struct {
	here    string
	helpers map[string]string
	env     []string

	mu sync.Mutex
	// inExitTrap is set while the EXIT trap runs; trapExit is the status
	// of an `exit N` it ran (bash makes that the script's status;
	// mvdan's interpreter keeps the status the script had).
	inExitTrap bool
	trapExit   int
	trapExited bool
}

// XfstestsMain runs the tests of cfg as xfstests' check does, printing
// as check prints, and returns check's exit status: 1 when a test failed,
// 0 otherwise.
func XfstestsMain(cfg XfstestsConfig, stdout, stderr io.Writer) int {
	x, err := newXfstestsRun(cfg, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "vfslab sh:", err)
		return 2
	}
	return x.run()
}

type xfstestsRun struct {
	cfg     XfstestsConfig
	out     io.Writer
	errw    io.Writer
	ts      *testSet
	helpers map[string]string
	namelen int
	// times are check.time's: seqnum -> seconds of its last pass.
	times map[string]int
}

func newXfstestsRun(cfg XfstestsConfig, stdout, stderr io.Writer) (*xfstestsRun, error) {
	root, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(filepath.Join(root, "tests")); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("--xfstests %s: not an xfstests checkout (no tests/ directory)", cfg.Dir)
	}
	cfg.Dir = root
	if cfg.Results == "" {
		d, err := os.MkdirTemp("", "vfslab-xfstests-")
		if err != nil {
			return nil, fmt.Errorf("--results: %w", err)
		}
		cfg.Results = d
	}
	res, err := filepath.Abs(cfg.Results)
	if err != nil {
		return nil, err
	}
	if inside(res, root) {
		return nil, fmt.Errorf("--results %s is inside the checkout %s: the results never go into the checkout", cfg.Results, cfg.Dir)
	}
	if err := os.MkdirAll(res, 0o755); err != nil {
		return nil, fmt.Errorf("--results: %w", err)
	}
	cfg.Results = res
	x := &xfstestsRun{cfg: cfg, out: stdout, errw: stderr, ts: newTestSet(root, cfg.Fstyp), times: map[string]int{}}
	x.helpers = commonHelpers(root)
	x.namelen = maxTestNameLen(root)
	x.readTimes()
	return x, nil
}

// inside reports whether p is dir or below it.
func inside(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

var helperDef = regexp.MustCompile(`(?m)^(?:function\s+)?(_[A-Za-z0-9_]+)\s*\(\)`)

// commonHelpers indexes the functions the checkout's common/* files
// define: name -> "common/FILE".
func commonHelpers(root string) map[string]string {
	out := map[string]string{}
	ents, _ := os.ReadDir(filepath.Join(root, "common"))
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, "common", e.Name()))
		if err != nil {
			continue
		}
		for _, m := range helperDef.FindAllSubmatch(data, -1) {
			if _, ok := out[string(m[1])]; !ok {
				out[string(m[1])] = "common/" + e.Name()
			}
		}
	}
	return out
}

// result is one test's outcome in check's terms.
type result int

const (
	resPass result = iota
	resFail
	resNotrun
)

func (x *xfstestsRun) run() int {
	sel, err := x.ts.selectTests(x.cfg.Tests, x.cfg.Groups, x.cfg.XGroups)
	for _, n := range sel.notes {
		fmt.Fprintln(x.out, n)
	}
	var eg errEmptyGroup
	if errors.As(err, &eg) {
		fmt.Fprintln(x.out, eg.Error())
		return 1
	}
	if err != nil {
		fmt.Fprintln(x.errw, "vfslab sh:", err)
		return 2
	}
	fmt.Fprintf(x.out, "FSTYP         -- %s\n", x.cfg.Fstyp)
	fmt.Fprintf(x.out, "PLATFORM      -- Linux/%s %s %s %s\n", unameMachine, unameNode, unameRelease, unameVersion)
	fmt.Fprintf(x.out, "MKFS_OPTIONS  -- %s\n", scratchDevs[0])
	fmt.Fprintf(x.out, "MOUNT_OPTIONS -- %s %s\n\n", scratchDevs[0], "/mnt/scratch")
	var tried, notrun, bad []string
	for _, seqnum := range sel.tests {
		fmt.Fprintf(x.out, "%-*s", x.namelen, seqnum)
		tried = append(tried, seqnum)
		switch x.runTest(seqnum) {
		case resFail:
			bad = append(bad, seqnum)
		case resNotrun:
			notrun = append(notrun, seqnum)
		}
	}
	x.writeTimes()
	if len(tried) > 0 {
		fmt.Fprintf(x.out, "Ran: %s\n", strings.Join(tried, " "))
	}
	if len(notrun) > 0 {
		fmt.Fprintf(x.out, "Not run: %s\n", strings.Join(notrun, " "))
	}
	status := 0
	if len(bad) > 0 {
		fmt.Fprintf(x.out, "Failures: %s\n", strings.Join(bad, " "))
		fmt.Fprintf(x.out, "Failed %d of %d tests\n", len(bad), len(tried))
		status = 1
	} else {
		fmt.Fprintf(x.out, "Passed all %d tests\n", len(tried))
	}
	fmt.Fprintln(x.out)
	return status
}

// resultFiles are the files check keeps per test in the results
// directory, besides .out.bad.
var resultFiles = []string{".full", ".notrun", ".dmesg", ".hints"}

// runTest runs one test on a machine of its own, as check runs each test
// in a process of its own: the test's output (stdout and stderr) is
// compared with TEST.out after the test and the post-test checks
// (_check_filesystems, _check_dmesg) have run; what the test left in the
// machine's $RESULT_DIR is copied to the host's.
func (x *xfstestsRun) runTest(seqnum string) result {
	dir, name, _ := strings.Cut(seqnum, "/")
	hostRes := filepath.Join(x.cfg.Results, dir)
	hostSeqres := filepath.Join(hostRes, name)
	if err := os.MkdirAll(hostRes, 0o755); err != nil {
		fmt.Fprintf(x.out, " - %v\n", err)
		return resFail
	}
	for _, suf := range append([]string{".out.bad"}, resultFiles...) {
		os.Remove(hostSeqres + suf)
	}
	if t, ok := x.times[seqnum]; ok {
		fmt.Fprintf(x.out, " %ds ... ", t)
	} else {
		fmt.Fprint(x.out, "       ")
	}
	// A test of another filesystem's directory (f2fs/NNN under ext4),
	// named on the command line: check's group runs never collect it,
	// and it would run against the wrong filesystem.
	if !contains(x.ts.fsDirs(), dir) {
		why := "not suitable for this filesystem type: " + x.cfg.Fstyp + "\n"
		fmt.Fprint(x.out, "[not run] "+why)
		os.WriteFile(hostSeqres+".notrun", []byte(why), 0o644)
		return resNotrun
	}
	testFile := filepath.Join(x.cfg.Dir, "tests", dir, name)
	src, err := readInside(x.cfg.Dir, testFile)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(x.out, " - %v\n", err)
			return resFail
		}
		fmt.Fprintln(x.out, " - no such test?")
		return resPass
	}
	m, err := NewMachine(x.cfg.Patches, x.cfg.Seed)
	if err != nil {
		fmt.Fprintf(x.out, "booting the machine: %v\n", err)
		return resFail
	}
	defer m.close()
	resultDir := path.Join(filepath.ToSlash(x.cfg.Results), dir)
	if err := m.mkdirAll(resultDir); err != nil {
		fmt.Fprintf(x.out, "%s: %v\n", resultDir, err)
		return resFail
	}
	st := &xfsState{here: filepath.ToSlash(x.cfg.Dir), helpers: x.helpers}
	st.env = []string{
		"RESULT_BASE=" + filepath.ToSlash(x.cfg.Results),
		"RESULT_DIR=" + resultDir,
		"seqnum=" + seqnum,
		"VFSLAB_XFSTESTS_HERE=" + st.here,
		"date_time=" + m.dateTime(),
	}
	m.here = st.here
	s := &Shell{m: m, fstyp: x.cfg.Fstyp, xfs: st}
	// check writes this line to /dev/kmsg; _check_dmesg reads the log
	// from it on.
	m.printk(fmt.Sprintf("run fstests %s at %s", seqnum, m.dateTime()))

	if s.runCheckScript(`_vfslab_prepare_test_dev`, seqnum, x.out) != 0 {
		return resFail
	}
	start := time.Now()
	var tmpOut lockedBuffer
	sts := s.runXfstestScript(testFile, src, &tmpOut)

	status := resPass
	seqres := path.Join(resultDir, name)
	if notrun, ok := m.readMachineFile(seqres + ".notrun"); ok {
		fmt.Fprint(x.out, "[not run] ")
		x.out.Write(notrun)
		s.runCheckScript(`_scratch_unmount 2> /dev/null`, seqnum, x.out)
		x.copyResults(m, seqres, hostSeqres)
		return resNotrun
	}
	if sts != 0 {
		fmt.Fprintf(x.out, "[failed, exit status %d]", sts)
		s.runCheckScript(`_test_unmount 2> /dev/null
_scratch_unmount 2> /dev/null
rm -f ${RESULT_DIR}/require_scratch*
_check_filesystems || exit 1`, seqnum, x.out)
		s.runCheckScript(`_check_dmesg`, seqnum, x.out)
		status = resFail
	} else {
		if s.runCheckScript(`_check_filesystems`, seqnum, x.out) != 0 {
			status = resFail
		}
		if s.runCheckScript(`_check_dmesg`, seqnum, x.out) != 0 {
			status = resFail
		}
	}
	secs := int(time.Since(start) / time.Second)
	x.copyResults(m, seqres, hostSeqres)

	want, err := readInside(x.cfg.Dir, testFile+".out")
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(x.out, "%v: ", err)
		}
		fmt.Fprintln(x.out, "no qualified output")
		return resFail
	}
	// check: coreutils 8.16+ quotes 'foo' where older ones wrote `foo'.
	got := bytes.ReplaceAll(tmpOut.Bytes(), []byte("`"), []byte("'"))
	if bytes.Equal(got, want) {
		if status != resFail {
			x.times[seqnum] = secs
			fmt.Fprintf(x.out, " %ds", secs)
		}
		fmt.Fprintln(x.out)
	} else {
		bad := hostSeqres + ".out.bad"
		fmt.Fprintf(x.out, "- output mismatch (see %s)\n", bad)
		if err := os.WriteFile(bad, got, 0o644); err != nil {
			fmt.Fprintf(x.out, "    %v\n", err)
		}
		x.printDiff(seqnum, testFile+".out", bad, want, got)
		status = resFail
	}
	if hints, err := os.ReadFile(hostSeqres + ".hints"); err == nil {
		if status == resFail {
			fmt.Fprintln(x.out)
			x.out.Write(hints)
		} else {
			os.Remove(hostSeqres + ".hints")
		}
	}
	return status
}

// diffLength is check's DIFF_LENGTH: the lines of a mismatch's diff shown.
const diffLength = 10

// printDiff prints the head of `diff -u TEST.out TEST.out.bad`, indented,
// as check does.
func (x *xfstestsRun) printDiff(seqnum, wantFile, badFile string, want, got []byte) {
	var b bytes.Buffer
	rel := "tests/" + seqnum + ".out"
	fmt.Fprintf(&b, "--- %s\t%s\n+++ %s\t%s\n", rel, diffStamp(wantFile), badFile, diffStamp(badFile))
	unifiedDiff(&b, splitLines(want), splitLines(got))
	lines := strings.SplitAfter(b.String(), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > diffLength {
		lines = lines[:diffLength]
	}
	lines = append(lines, "...\n", fmt.Sprintf("(Run 'diff -u %s %s'  to see the entire diff)\n", wantFile, badFile))
	for _, l := range lines {
		fmt.Fprint(x.out, "    "+l)
	}
}

// diffStamp is a file's modification time as diff -u prints it.
func diffStamp(p string) string {
	fi, err := os.Stat(p)
	if err != nil {
		return ""
	}
	return fi.ModTime().Format("2006-01-02 15:04:05.000000000 -0700")
}

// copyResults copies what the test left in the machine's results
// directory to the host's.
func (x *xfstestsRun) copyResults(m *Machine, seqres, host string) {
	for _, suf := range resultFiles {
		if data, ok := m.readMachineFile(seqres + suf); ok {
			os.WriteFile(host+suf, data, 0o644)
		}
	}
}

// readTimes reads check.time (lines "SEQNUM SECONDS") of the results.
func (x *xfstestsRun) readTimes() {
	data, err := os.ReadFile(filepath.Join(x.cfg.Results, "check.time"))
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) == 2 {
			if n, err := strconv.Atoi(f[1]); err == nil {
				x.times[f[0]] = n
			}
		}
	}
}

// writeTimes writes check.time back with this run's passes.
func (x *xfstestsRun) writeTimes() {
	var keys []string
	for k := range x.times {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %d\n", k, x.times[k])
	}
	os.WriteFile(filepath.Join(x.cfg.Results, "check.time"), []byte(b.String()), 0o644)
}

// lockedBuffer is a test's output: its background jobs write to it from
// goroutines of their own. It keeps at most maxTestOutput bytes.
type lockedBuffer struct {
	mu        sync.Mutex
	b         bytes.Buffer
	truncated bool
}

// maxTestOutput bounds what one test's output may take in memory.
const maxTestOutput = 64 << 20

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := maxTestOutput - l.b.Len(); len(p) > room {
		if room > 0 {
			l.b.Write(p[:room])
		}
		if !l.truncated {
			l.truncated = true
			l.b.WriteString("\n[vfslab sh: the test's output passed 64 MiB; the rest is dropped]\n")
		}
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.b.Bytes()...)
}

// runXfstestScript runs a test's script after the prelude with its
// output (stdout and stderr together, as check's `./$seq >$tmp.out 2>&1`)
// going to out, and returns its exit status: an `exit N` of its EXIT
// trap (common/preamble's `_cleanup; exit $status`) decides it, as in
// bash.
func (s *Shell) runXfstestScript(name string, src []byte, out io.Writer) int {
	sts := s.run(bytes.NewReader(src), name, strings.NewReader(""), out, out, nil)
	// The test's process is gone: the descriptors its shell opened with
	// `exec N<FILE` (in subshells too) close with it.
	s.m.closeShellFds()
	s.xfs.mu.Lock()
	defer s.xfs.mu.Unlock()
	if s.xfs.trapExited {
		return s.xfs.trapExit
	}
	return sts
}

// runCheckScript runs one of check's own steps (after the prelude, in a
// shell of its own on the test's machine, as check runs them in its own
// process) with check's stdout, and returns its status.
func (s *Shell) runCheckScript(script, seqnum string, out io.Writer) int {
	s.xfs.mu.Lock()
	s.xfs.trapExited, s.xfs.inExitTrap = false, false
	s.xfs.mu.Unlock()
	return s.run(strings.NewReader(script), "check", strings.NewReader(""), out, out, nil)
}

// xfstestsEnv is the environment check gives a test: $RESULT_DIR,
// $seqnum, $VFSLAB_XFSTESTS_HERE (the checkout's path, the prelude's
// $here: the machine's $here/src holds the test programs) and check's
// date_time.
func (s *Shell) xfstestsEnv() []string {
	if s.xfs == nil {
		return nil
	}
	return s.xfs.env
}

// trapHook marks the start of an EXIT trap: the callHandler puts it in
// front of the trap's commands (see callHandler).
const trapHook = "__vfslab_exit_trap"

func init() { commands[trapHook] = cmdExitTrap }

func cmdExitTrap(c *cmd) int {
	if x := c.s.xfs; x != nil {
		x.mu.Lock()
		x.inExitTrap = true
		x.mu.Unlock()
	}
	return 0
}

// xfstestsCall is the callHandler's part for --xfstests: `trap CMD EXIT`
// (or 0) gets trapHook in front of CMD, and an `exit N` run inside the
// trap records N as the script's status.
func (s *Shell) xfstestsCall(args []string) []string {
	if s.xfs == nil {
		return args
	}
	switch args[0] {
	case "trap":
		if len(args) >= 3 && args[1] != "-p" && args[1] != "-l" {
			for _, sig := range args[2:] {
				if sig == "EXIT" || sig == "0" {
					if args[1] != "" && args[1] != "-" {
						out := append([]string(nil), args...)
						out[1] = trapHook + "; " + args[1]
						return out
					}
				}
			}
		}
	case "exit":
		s.xfs.mu.Lock()
		if s.xfs.inExitTrap && len(args) > 1 {
			if n, err := strconv.Atoi(args[1]); err == nil {
				s.xfs.trapExit, s.xfs.trapExited = n&0xff, true
			}
		}
		s.xfs.mu.Unlock()
	}
	return args
}

// missingHelper is the error that stops a test calling an xfstests
// helper the prelude does not have: the interpreter ends the script on
// it, where bash would print "command not found" and go on.
type missingHelper struct {
	name, file string
}

func (e missingHelper) Error() string {
	where := "not defined by xfstests' common/* files either"
	if e.file != "" {
		where = "xfstests defines it in " + e.file
	}
	return fmt.Sprintf("%s: xfstests helper missing from vfslab sh's prelude (%s); the test stops here", e.name, where)
}

// missingHelperErr returns the error for a command name that is not the
// machine's: in --xfstests mode a name starting with "_" is a helper of
// common/* the prelude lacks.
func (s *Shell) missingHelperErr(name string) error {
	if s.xfs == nil || !strings.HasPrefix(name, "_") || strings.HasPrefix(name, "__") {
		return nil
	}
	return missingHelper{name: name, file: s.xfs.helpers[name]}
}

// closeShellFds closes the descriptors the shell opened above 2.
func (m *Machine) closeShellFds() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for n, fd := range m.fds {
		m.root.Close(m.t, fd)
		delete(m.fds, n)
	}
}

// dateTime is check's date_time: the machine's clock as `date +"%F %T"`.
func (m *Machine) dateTime() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return stamp(m.sys.Now()).Format("2006-01-02 15:04:05")
}

// printk adds a line to the kernel log, as a write to /dev/kmsg does.
func (m *Machine) printk(line string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.t.Printk("%s", line)
}

// mkdirAll makes p and its parents on the machine as root.
func (m *Machine) mkdirAll(p string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := ""
	for _, part := range strings.Split(strings.Trim(p, "/"), "/") {
		if part == "" {
			continue
		}
		cur += "/" + part
		if err := m.root.Mkdir(m.t, cur, 0o755); err != nil {
			if st, serr := m.root.Stat(m.t, cur); serr != nil || st.Mode&vfs.S_IFMT != vfs.S_IFDIR {
				return fmt.Errorf("mkdir %s: %w", cur, err)
			}
		}
	}
	return nil
}

// readMachineFile reads a whole file of the machine as root (false when
// it cannot be read).
func (m *Machine) readMachineFile(p string) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fd, err := m.root.Open(m.t, p, vfs.O_RDONLY, 0)
	if err != nil {
		return nil, false
	}
	defer m.root.Close(m.t, fd)
	var out []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := m.root.Read(m.t, fd, buf)
		if err != nil {
			return nil, false
		}
		if n == 0 {
			return out, true
		}
		out = append(out, buf[:n]...)
	}
}
