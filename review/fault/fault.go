// Package fault is the fault-injection model that vfslab review and the
// reliability campaign (tests/faultcampaign_test.go) share: how one
// allocation of one syscall is made to fail, how the syscall is run so
// that a hang or a Go panic is an outcome rather than a stuck or crashed
// program, and which outcomes are the kernel's own documented rules
// rather than faults of the code under test.
//
// An injection fails either the Nth fault-injection point the task reaches
// during the syscall, through the kernel's interface (/proc/self/fail-nth,
// fs/proc/base.c proc_fail_nth_write, with failslab's ignore-gfp-wait off
// for the call, mm/failslab.c), or every allocation at one named site
// during the syscall, through the task's own injector (kmem.FailSites):
// the first reaches every allocation in call order, the second every site
// a sequence reaches whatever the order of the other allocations, which
// is what a comparison of two kernels (a variant and its base) needs, and
// it is what memory pressure on one cache looks like to a syscall.
package fault

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// Spec is one injection: Nth > 0 fails the Nth fault-injection point of
// the syscall (fail-nth); Site != "" fails every allocation at that site
// during the syscall. The zero Spec injects nothing.
type Spec struct {
	Nth  int
	Site string
}

// None reports whether s injects nothing.
func (s Spec) None() bool { return s.Nth == 0 && s.Site == "" }

// String renders s as "fail-nth=N" or "failslab site=NAME" ("none").
func (s Spec) String() string {
	switch {
	case s.Nth > 0:
		return "fail-nth=" + strconv.Itoa(s.Nth)
	case s.Site != "":
		return "failslab site=" + s.Site
	}
	return "none"
}

// Timeout is how long a syscall may run before it counts as a hang.
const Timeout = 10 * time.Second

// Outcome is what one injected syscall did.
type Outcome struct {
	// Hit reports that the injection happened (for fail-nth: the task's
	// fail_nth reached 0; for a site: the site's allocation failed).
	Hit bool
	// Finding is a Go panic that escaped the syscall or a hang, "" for
	// neither; Hang is set for a hang (the machine is then unusable).
	Finding string
	Hang    bool
	// Err is the syscall's result.
	Err error
}

// Run runs fn, one syscall of task t, with spec armed, under a deadline
// (timeout; 0: Timeout) and a recover, and disarms spec afterwards. A
// syscall that panics past the simulator boundary or does not return is
// reported in Outcome.Finding, never as a crash or a stuck caller.
func Run(t *kernel.Task, spec Spec, timeout time.Duration, fn func() error) Outcome {
	if timeout <= 0 {
		timeout = Timeout
	}
	var o Outcome
	var inj *kmem.Failslab
	switch {
	case spec.Nth > 0:
		t.K.Failslab.SetIgnoreGFPWait(false)
		t.ProcFailNthWrite([]byte(strconv.Itoa(spec.Nth)))
	case spec.Site != "":
		inj = kmem.FailSites(spec.Site)
		t.Fail = inj
	}
	done := make(chan struct{})
	var err error
	var finding string
	go func() {
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				finding = fmt.Sprintf("Go panic: %v", r)
			}
		}()
		err = fn()
	}()
	select {
	case <-done:
	case <-time.After(timeout):
		return Outcome{Hit: true, Hang: true, Finding: fmt.Sprintf("hang: the syscall did not return in %v", timeout)}
	}
	o.Err, o.Finding = err, finding
	switch {
	case spec.Nth > 0:
		o.Hit = t.ProcFailNthRead() == "0\n"
		t.ProcFailNthWrite([]byte("0"))
		t.K.Failslab.SetIgnoreGFPWait(true)
	case spec.Site != "":
		o.Hit = len(inj.Injected) > 0
		t.Fail = nil
	}
	return o
}

// CallKind classifies a syscall for the kernel rules.
type CallKind int

// The kinds of syscall the rules tell apart.
const (
	// Other is any syscall the rules say nothing about.
	Other CallKind = iota
	// Lookup is stat/lstat of a name.
	Lookup
	// Create is open with O_CREAT (with or without O_EXCL).
	Create
	// Namespace is unlink, mkdir, rmdir, link or rename.
	Namespace
)

// Call is the syscall an outcome belongs to: its kind and, for a rename
// with no flags, the two paths.
type Call struct {
	Kind CallKind
	// PlainRename marks rename(A, B) with flags 0.
	PlainRename bool
	A, B        string
}

// Env is the filesystem a syscall ran on.
type Env struct {
	FS                string // "ext4", "f2fs"
	Casefold, Encrypt bool
}

// KernelRule names the documented kernel rule that explains an outcome
// under injection that is neither the state before nor after the
// syscall, or "". err is the injected syscall's result, refErr the
// result without injection; got, before and after are renderings of the
// namespace after the injected call and before and after the reference.
//
// ext4_match (fs/ext4/namei.c): in a casefolded directory ext4 compares
// names with ext4_ci_compare / generic_ci_match, and for an encrypted
// casefolded directory the name is first decrypted; when the comparison
// fails (ENOMEM from the folding buffer or the decryption), ext4_match
// returns false, "no match", instead of the error. So under ENOMEM a
// lookup of ALPHA can miss Alpha (ENOENT) and open(alpha, O_CREAT|O_EXCL)
// or creat(alpha) can add a case-duplicate entry beside Alpha. f2fs
// returns the error instead (f2fs_match_ci_name), so only ext4 with
// casefold and encryption has the rule.
func KernelRule(env Env, c Call, err, refErr error, got, before, after string) string {
	// ext4_rename_delete returns nothing: when the old entry's removal
	// fails (ENOMEM in ext4_find_delete_entry's lookup), it logs
	// "Deleting old file" and the rename succeeds with both names linked.
	if env.FS == "ext4" && c.PlainRename && err == nil && got != after &&
		strings.Contains(got, c.A+" ") && strings.Contains(got, c.B+" ") {
		return "ext4_rename_delete: a failed removal of the old entry only warns (both names stay linked)"
	}
	if env.FS != "ext4" || !env.Casefold || !env.Encrypt {
		return ""
	}
	switch {
	case c.Kind == Lookup && err == errno.ENOENT && refErr == nil:
		return "ext4_match: failed comparison is no match (lookup misses)"
	case (c.Kind == Create || c.Kind == Namespace) && err != errno.ENOMEM && got != before && got != after:
		return "ext4_match: failed comparison is no match (case-duplicate created)"
	case err == errno.ENOENT && refErr != errno.ENOENT:
		return "ext4_match: failed comparison is no match (lookup misses)"
	case err == errno.EEXIST && refErr != errno.EEXIST && got == before:
		return "ext4_match: failed comparison is no match (the lookup missed, ext4_find_dest_de then found the name: EEXIST)"
	}
	return ""
}

// KnownFinding names an open finding of the model that is reported
// without failing, or "": a deviation from the kernel that the owners of
// the code have to fix, listed in docs/KERNEL-FINDINGS.md. got renders
// the namespace after the injected call, one "PATH ..." line per entry.
// There is none open (ext4's rename now removes the old entry as
// ext4_rename_delete does, a kernel rule above).
func KnownFinding(env Env, c Call, err error, got string) string {
	return ""
}

// Acceptable reports whether an injected syscall's result is one the
// kernel may give: the injected ENOMEM, or what the call returns without
// injection.
func Acceptable(err, refErr error) bool {
	return err == errno.ENOMEM || ErrName(err) == ErrName(refErr)
}

// ErrName renders a syscall's result for comparisons: "ok" for nil, the
// errno's name ("ENOENT"), or the error's text.
func ErrName(err error) string {
	if err == nil {
		return "ok"
	}
	if e, ok := errno.Of(err); ok {
		return errno.Name(e)
	}
	return err.Error()
}
