package shell

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// hostPackages are the packages whose calls reach the host.
var hostPackages = map[string]bool{"os": true, "os/user": true, "syscall": true, "golang.org/x/sys/unix": true}

// hostCalls lists the calls into hostPackages of the non-test Go files of
// dir, as "FILE FUNC PKG.NAME".
func hostCalls(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	calls := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		af, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if !buildsOnLinux(af) {
			continue
		}
		imports := map[string]string{}
		for _, im := range af.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			name := filepath.Base(p)
			if im.Name != nil {
				name = im.Name.Name
			}
			imports[name] = p
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			ast.Inspect(fd, func(n ast.Node) bool {
				ce, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				se, ok := ce.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				id, ok := se.X.(*ast.Ident)
				if !ok || !hostPackages[imports[id.Name]] {
					return true
				}
				calls[fmt.Sprintf("%s %s %s.%s", filepath.Base(f), fd.Name.Name, imports[id.Name], se.Sel.Name)] = true
				return true
			})
		}
	}
	return calls
}

// buildsOnLinux reads a file's //go:build line as far as it matters here:
// the files for other systems are left out.
func buildsOnLinux(f *ast.File) bool {
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if line, ok := strings.CutPrefix(c.Text, "//go:build "); ok {
				return !strings.Contains(line, "windows") && !strings.Contains(line, "js") && !strings.Contains(line, "plan9") ||
					strings.Contains(line, "!windows") || strings.Contains(line, "!js")
			}
		}
	}
	return true
}

// checkAllowlist fails for a host call not in allow and for an entry of
// allow that no longer names a call.
func checkAllowlist(t *testing.T, where string, calls map[string]bool, allow map[string]string) {
	t.Helper()
	var names []string
	for c := range calls {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		if why, ok := allow[c]; ok {
			t.Logf("%s: %s: %s", where, c, why)
			continue
		}
		t.Errorf("%s: host call %s is in no allowlist: a script could reach the host through it", where, c)
	}
	for c := range allow {
		if !calls[c] {
			t.Errorf("%s: allowlist entry %q names no call (stale)", where, c)
		}
	}
}

// TestHostCallsAllowlisted lists every call into os, os/user, syscall and
// x/sys/unix in package shell and in mvdan's interpreter (interp, expand)
// and checks each against the host accesses the user asks for (the
// script, the images through vfs, --xfstests DIR and --results DIR) or
// the handler, variable or rewrite that keeps the interpreter's call from
// running on a script's behalf.
func TestHostCallsAllowlisted(t *testing.T) {
	shellAllow := map[string]string{
		"complete.go historyPath os.Getenv":                     "the history file's place ($XDG_STATE_HOME), read by the prompt, never by a script",
		"complete.go historyPath os.UserHomeDir":                "the history file's place (~/.local/state), read by the prompt, never by a script",
		"complete.go openHistory os.MkdirAll":                   "the history file's directory, made by the interactive prompt",
		"complete.go openHistory os.ReadFile":                   "the history file, read by the interactive prompt",
		"bounds.go defaultMemory golang.org/x/sys/unix.Sysinfo": "sizes the default --memory from the host's RAM",
		"bounds.go pipeBroken golang.org/x/sys/unix.Poll":       "polls a pipeline's own in-process pipe",
		"bounds.go watch os.Exit":                               "ends a stopped run that did not unwind",
		"machine.go strerror syscall.Errno":                     "a conversion, no call",
		"main.go mainLog os.ReadFile":                           "the SCRIPT the user names",
		"xfstests.go commonHelpers os.ReadDir":                  "--xfstests DIR's common/",
		"xfstests.go commonHelpers os.ReadFile":                 "--xfstests DIR's common/ files",
		"xfstests.go copyResults os.WriteFile":                  "--results DIR",
		"xfstests.go diffStamp os.Stat":                         "--xfstests DIR's .out file",
		"xfstests.go newXfstestsRun os.MkdirAll":                "--results DIR",
		"xfstests.go newXfstestsRun os.MkdirTemp":               "the default --results DIR",
		"xfstests.go newXfstestsRun os.Stat":                    "--xfstests DIR's tests/",
		"xfstests.go readTimes os.ReadFile":                     "--results DIR's check.time",
		"xfstests.go runTest os.MkdirAll":                       "--results DIR",
		"xfstests.go runTest os.ReadFile":                       "--xfstests DIR's test (via readInside) and --results DIR's .hints",
		"xfstests.go runTest os.Remove":                         "--results DIR's old results",
		"xfstests.go runTest os.WriteFile":                      "--results DIR",
		"xfstests.go writeTimes os.WriteFile":                   "--results DIR's check.time",
		"xfstests_list.go beginFstestGroups os.Open":            "a test under --xfstests DIR (resolveInside first)",
		"xfstests_list.go group os.Stat":                        "--xfstests DIR's tests/",
		"xfstests_list.go maxTestNameLen os.ReadDir":            "--xfstests DIR's tests/",
		"xfstests_list.go readGroupList os.ReadDir":             "--xfstests DIR's tests/",
		"xfstests_list.go readGroupList os.Stat":                "--xfstests DIR's tests/",
		"xfstests_list.go readInside os.ReadFile":               "a file of --xfstests DIR that resolves inside it",
	}
	checkAllowlist(t, "shell", hostCalls(t, "."), shellAllow)

	interpAllow := map[string]string{
		"api.go Dir os.Getwd":                                   "not called: newRunner sets the runner's Dir itself",
		"api.go Dir os.Stat":                                    "not called: newRunner sets the runner's Dir itself",
		"api.go Env os.Environ":                                 "not called: newRunner gives machineEnv",
		"api.go Reset os.Geteuid":                               "not reached: machineEnv sets EUID",
		"api.go Reset os.Getgid":                                "not reached: machineEnv sets GID",
		"api.go Reset os.Getuid":                                "not reached: machineEnv sets UID",
		"api.go Reset os.TempDir":                               "not reached: $TMPDIR is set (noFifoDir)",
		"api.go Reset os.UserHomeDir":                           "not reached: $HOME is set",
		"handler.go DefaultOpenHandler os.OpenFile":             "replaced by Shell.openHandler",
		"handler.go DefaultReadDirHandler os.ReadDir":           "replaced by Shell.readDirHandler",
		"handler.go DefaultReadDirHandler2 os.ReadDir":          "replaced by Shell.readDirHandler",
		"handler.go DefaultStatHandler os.Lstat":                "replaced by Shell.statHandler",
		"handler.go DefaultStatHandler os.Stat":                 "replaced by Shell.statHandler",
		"handler.go checkStat os.Stat":                          "LookPathDir: type, command -v/-V go to __vfslab_which, exec to execHandler; source's search gets a machine path (sourcePath), whose host stat changes nothing",
		"handler.go runScriptENOEXEC os.ReadFile":               "DefaultExecHandler only: replaced by Shell.execHandler",
		"os_unix.go defaultAccess golang.org/x/sys/unix.Access": "replaced by Shell.accessHandler",
		"os_unix.go mkfifo golang.org/x/sys/unix.Mkfifo":        "process substitution only: refused by rewrite",
		"os_unix.go unTestOwnOrGrp os/user.Current":             "-O and -G: answered by classicTest and rewriteTests",
		"runner.go fillExpandConfig os.IsExist":                 "process substitution only: refused by rewrite",
		"runner.go fillExpandConfig os.OpenFile":                "process substitution only: refused by rewrite",
		"runner.go fillExpandConfig os.Remove":                  "process substitution only: refused by rewrite",
		"runner.go open os.OpenFile":                            "FIFOs of process substitution in $TMPDIR only (refused; noFifoDir)",
		"stdin_os.go newPipe os.Pipe":                           "a pipeline's in-process pipe",
		"stdin_os.go newStdinFile os.Pipe":                      "an in-process pipe feeding a non-file stdin",
		"test.go binTest os.SameFile":                           "-ef: answered by classicTest and rewriteTests",
		"vars.go lookupVar os.Getpid":                           "$$: renamed by rewritePids",
		"vars.go lookupVar os.Getppid":                          "$PPID: renamed by rewritePids",
		"expand.go expandUser os/user.Lookup":                   "not reached: machineEnv answers every \"HOME name\"",
	}
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "mvdan.cc/sh/v3/interp", "mvdan.cc/sh/v3/expand").Output()
	if err != nil {
		t.Skipf("go list of the interpreter: %v", err)
	}
	calls := map[string]bool{}
	for _, dir := range strings.Fields(string(out)) {
		for c := range hostCalls(t, dir) {
			calls[c] = true
		}
	}
	checkAllowlist(t, "interpreter", calls, interpAllow)
}
