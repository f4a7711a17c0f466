package quiz

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/teach"
	"github.com/vfslab/vfslab/vfs"
)

// fsNames are the filesystems the trace machine runs on with its
// encrypted directories: those with fscrypt (memfs is tmpfs, which has
// none).
var fsNames = []string{"ext4", "f2fs"}

// machineLine describes the trace machine.
func machineLine(m *teach.Machine) string {
	key := "its key present"
	if m.Cfg.NoKey {
		key = "its key REMOVED"
	}
	return fmt.Sprintf("Machine: %s root; /tmp/hello, /tmp/dir/, /tmp/link -> hello; /secret/ encrypted (v2), %s; /secret/note.", m.Cfg.FS, key)
}

// call is a recordable syscall on the trace machine.
type call struct {
	desc string
	// nokey: the call needs /secret's key removed; it may use the no-key
	// name of note, which run substitutes for NOKEYNAME.
	nokey bool
	run   func(t *kernel.Task, p *vfs.Proc, nokeyName string) (int64, error)
}

func openCall(path string, flags int, shown string, nokey bool) call {
	return call{fmt.Sprintf("open(%q, %s)", path, shown), nokey, func(t *kernel.Task, p *vfs.Proc, nk string) (int64, error) {
		fd, err := p.Open(t, strings.ReplaceAll(path, "NOKEYNAME", nk), flags, 0o644)
		if err == nil {
			p.Close(t, fd)
		}
		return int64(fd), err
	}}
}

func errCall(desc string, nokey bool, f func(t *kernel.Task, p *vfs.Proc) error) call {
	return call{desc, nokey, func(t *kernel.Task, p *vfs.Proc, _ string) (int64, error) { return 0, f(t, p) }}
}

// errnoCalls are the errno topic's operations.
var errnoCalls = []call{
	openCall("/secret/note", vfs.O_RDONLY, "O_RDONLY", false),
	openCall("/secret/note", vfs.O_RDONLY, "O_RDONLY", true),
	openCall("/secret/NOKEYNAME", vfs.O_RDONLY, "O_RDONLY", true),
	openCall("/secret/new", vfs.O_CREAT|vfs.O_WRONLY, "O_CREAT|O_WRONLY", true),
	openCall("/secret/new", vfs.O_CREAT|vfs.O_WRONLY, "O_CREAT|O_WRONLY", false),
	openCall("/tmp/hello/x", vfs.O_RDONLY, "O_RDONLY", false),
	openCall("/tmp/link", vfs.O_RDONLY|vfs.O_NOFOLLOW, "O_RDONLY|O_NOFOLLOW", false),
	openCall("/tmp/dir", vfs.O_WRONLY, "O_WRONLY", false),
	openCall("/tmp/hello", vfs.O_RDONLY|vfs.O_DIRECTORY, "O_RDONLY|O_DIRECTORY", false),
	openCall("/tmp/hello", vfs.O_CREAT|vfs.O_EXCL|vfs.O_WRONLY, "O_CREAT|O_EXCL|O_WRONLY", false),
	openCall("/tmp/missing", vfs.O_RDONLY, "O_RDONLY", false),
	errCall(`renameat2("/tmp/hello", "/secret/hello", 0)`, false, func(t *kernel.Task, p *vfs.Proc) error { return p.Rename(t, "/tmp/hello", "/secret/hello", 0) }),
	errCall(`renameat2("/secret/note", "/tmp/note", 0)`, false, func(t *kernel.Task, p *vfs.Proc) error { return p.Rename(t, "/secret/note", "/tmp/note", 0) }),
	errCall(`renameat2("/tmp/hello", "/tmp/link", RENAME_NOREPLACE)`, false, func(t *kernel.Task, p *vfs.Proc) error {
		return p.Rename(t, "/tmp/hello", "/tmp/link", vfs.RENAME_NOREPLACE)
	}),
	errCall(`link("/tmp/hello", "/secret/hello")`, false, func(t *kernel.Task, p *vfs.Proc) error { return p.Link(t, "/tmp/hello", "/secret/hello") }),
	errCall(`link("/tmp/dir", "/tmp/dir2")`, false, func(t *kernel.Task, p *vfs.Proc) error { return p.Link(t, "/tmp/dir", "/tmp/dir2") }),
	errCall(`mkdir("/tmp/dir")`, false, func(t *kernel.Task, p *vfs.Proc) error { return p.Mkdir(t, "/tmp/dir", 0o755) }),
	errCall(`mkdir("/secret/sub")`, true, func(t *kernel.Task, p *vfs.Proc) error { return p.Mkdir(t, "/secret/sub", 0o755) }),
	errCall(`rmdir("/tmp")`, false, func(t *kernel.Task, p *vfs.Proc) error { return p.Rmdir(t, "/tmp") }),
	errCall(`rmdir("/tmp/link")`, false, func(t *kernel.Task, p *vfs.Proc) error { return p.Rmdir(t, "/tmp/link") }),
	errCall(`unlink("/tmp/dir")`, false, func(t *kernel.Task, p *vfs.Proc) error { return p.Unlink(t, "/tmp/dir") }),
	errCall(`stat("/secret/note")`, true, func(t *kernel.Task, p *vfs.Proc) error { _, err := p.Stat(t, "/secret/note"); return err }),
	setPolicyCall("/secret", "another key's identifier", 0x11),
	setPolicyCall("/tmp", "an identifier of no added key", 0x22),
	setPolicyCall("/tmp/dir", "an identifier of no added key", 0x22),
	errCall(`symlink("hello", "/secret/ln")`, true, func(t *kernel.Task, p *vfs.Proc) error { return p.Symlink(t, "hello", "/secret/ln") }),
}

// runCall runs c on a fresh trace machine on fs and returns the machine's
// description, the strace result line and the trace.
func runCall(fs string, c call) (setup, result, explain string, err error) {
	m, err := teach.NewMachine(teach.Config{FS: fs, NoKey: c.nokey})
	if err != nil {
		return "", "", "", err
	}
	defer m.Close()
	nk := ""
	if c.nokey {
		names, err := teach.ReadDir(m.T, m.P, "/secret")
		if err != nil || len(names) != 1 {
			return "", "", "", fmt.Errorf("listing /secret without the key: %v %q", err, names)
		}
		nk = names[0]
	}
	desc := c.desc
	if nk != "" {
		desc = strings.ReplaceAll(desc, "NOKEYNAME", "<no-key name of note>")
	}
	r := m.Record(desc, func(t *kernel.Task, p *vfs.Proc) (int64, error) { return c.run(t, p, nk) })
	explain = traceText(m.Export(r))
	if nk != "" {
		// The no-key name's bytes come from the directory's random nonce:
		// keep the quiz the same on every run.
		explain = strings.ReplaceAll(explain, nk, "<no-key name of note>")
	}
	return machineLine(m), resultOf(r), explain, nil
}

// resultOf is the call's result: 0 or "-1 ENAME".
func resultOf(r *teach.Recording) string {
	if r.Err != nil {
		if e, ok := errno.Of(r.Err); ok {
			return "-1 " + errno.Name(e)
		}
		return "-1 (" + r.Err.Error() + ")"
	}
	if r.Ret > 0 {
		return "a file descriptor"
	}
	return "0"
}

func genErrno(rng *rand.Rand, reverse bool) (*question, error) {
	fs := pick(rng, fsNames)
	if !reverse {
		c := pick(rng, errnoCalls)
		setup, res, explain, err := runCall(fs, c)
		if err != nil {
			return nil, err
		}
		return &question{
			setup:   setup,
			ask:     strings.ReplaceAll(c.desc, "NOKEYNAME", "<no-key name of note>") + " returns? (0, a file descriptor, or -1 and which errno)",
			answer:  res,
			explain: explain,
		}, nil
	}
	// Reverse: four calls with different results; which gave this one?
	perm := rng.Perm(len(errnoCalls))
	var opts []string
	var results []string
	var recs []string
	seen := map[string]bool{}
	nokey := rng.IntN(2) == 1
	for _, i := range perm {
		c := errnoCalls[i]
		if c.nokey != nokey {
			continue
		}
		_, res, tr, err := runCall(fs, c)
		if err != nil {
			return nil, err
		}
		if seen[res] {
			continue
		}
		seen[res] = true
		opts = append(opts, strings.ReplaceAll(c.desc, "NOKEYNAME", "<no-key name of note>"))
		results = append(results, res)
		recs = append(recs, tr)
		if len(opts) == 4 {
			break
		}
	}
	want := rng.IntN(len(opts))
	m, err := teach.NewMachine(teach.Config{FS: fs, NoKey: nokey})
	if err != nil {
		return nil, err
	}
	setup := machineLine(m)
	m.Close()
	return &question{
		setup:   setup,
		ask:     fmt.Sprintf("One of these calls, run on a fresh machine, returned %s. Which?%s", results[want], choices(opts)),
		answer:  fmt.Sprintf("(%c) %s; the others return: %s", letters[want], opts[want], othersLine(opts, results, want)),
		explain: recs[want],
	}, nil
}

func othersLine(opts, results []string, skip int) string {
	var parts []string
	for i := range opts {
		if i != skip {
			parts = append(parts, fmt.Sprintf("(%c) %s", letters[i], results[i]))
		}
	}
	return strings.Join(parts, ", ")
}

// walkPaths are the walk topic's paths.
var walkPaths = []string{"/tmp/hello", "/tmp/dir", "/tmp/link", "/secret/note", "/tmp/dir/missing", "/tmp/link/x"}

// walkOutcome runs stat(path) warm or cold and returns what the walk did.
func walkOutcome(fs, path string, cold bool) (outcome string, r *teach.Recording, m *teach.Machine, err error) {
	m, err = teach.NewMachine(teach.Config{FS: fs})
	if err != nil {
		return "", nil, nil, err
	}
	m.P.Stat(m.T, path) // warm: the walk has run once
	if cold {
		m.DropCaches()
	}
	r = m.Record(teach.Stat(path))
	ev := r.Events.Map()
	var why []string
	if n := ev["lookup_slow"]; n > 0 {
		why = append(why, fmt.Sprintf("%d dcache miss(es) went to the filesystem (lookup_slow)", n))
	}
	if n := ev["symlink_follow"]; n > 0 {
		why = append(why, fmt.Sprintf("%d symlink(s) followed", n))
	}
	// complete_walk always ends a successful RCU-walk with one unlazy
	// (the references on the result); a dcache miss unlazies mid-walk
	// and continues in ref-walk (lookup_slow under i_rwsem); a failed
	// RCU-walk (-ECHILD) restarts from the start in ref-walk.
	var mode string
	switch {
	case ev["path_walk_ref_fallback"] > 0:
		mode = "RCU-walk failed (-ECHILD) and the walk restarted in ref-walk"
	case ev["lookup_slow"] > 0:
		mode = "left RCU-walk at the first dcache miss (try_to_unlazy) and finished in ref-walk"
	default:
		mode = "stayed in RCU-walk to the end (complete_walk took the references)"
	}
	outcome = fmt.Sprintf("%s; stat = %s", mode, resultOf(r))
	if len(why) > 0 {
		outcome += " (" + strings.Join(why, "; ") + ")"
	}
	return outcome, r, m, nil
}

func walkEvents(r *teach.Recording) string {
	ev := r.Events.Map()
	var parts []string
	for _, k := range []string{"path_walk_rcu", "path_walk_ref_fallback", "path_walk_unlazy", "lookup_slow", "d_lookup_rcu", "d_lookup", "symlink_follow"} {
		if ev[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, ev[k]))
		}
	}
	return "events: " + strings.Join(parts, " ")
}

func genWalk(rng *rand.Rand, reverse bool) (*question, error) {
	fs := pick(rng, fsNames)
	path := pick(rng, walkPaths)
	cold := rng.IntN(2) == 1
	state := "after a first stat of the same path (warm dcache)"
	if cold {
		state = "after a first stat and then drop_caches (the unused dentries freed)"
	}
	outcome, r, m, err := walkOutcome(fs, path, cold)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	setup := machineLine(m)
	if !reverse {
		return &question{
			setup:   setup,
			ask:     fmt.Sprintf("stat(%q) runs %s. Does the path walk stay in RCU-walk or drop to ref-walk, and why?", path, state),
			answer:  outcome,
			explain: walkEvents(r) + "\n" + traceText(m.Export(r)),
		}, nil
	}
	return &question{
		setup:   setup,
		ask:     fmt.Sprintf("stat(%q) counted %s. Was the dcache warm (a first stat just ran) or cold (drop_caches after it)?", path, walkEvents(r)),
		answer:  map[bool]string{false: "warm", true: "cold"}[cold] + ": " + outcome,
		explain: traceText(m.Export(r)),
	}, nil
}

// lockrefVariants are seed 004's variants.
var lockrefVariants = []string{"base", "v1", "v2"}

// lockrefRun opens file (warm) under variant and returns the atomics on
// its parent's lockref and the fscrypt_file_open events.
func lockrefRun(fs, variant, file string) (summary string, r *teach.Recording, m *teach.Machine, err error) {
	set, err := patch.Parse("fscrypt-file-open=" + variant)
	if err != nil {
		return "", nil, nil, err
	}
	m, err = teach.NewMachine(teach.Config{FS: fs, Patches: set})
	if err != nil {
		return "", nil, nil, err
	}
	parent := file[:strings.LastIndexByte(file, '/')]
	d, err := m.P.LookupDentry(m.T, parent, true)
	if err != nil {
		m.Close()
		return "", nil, nil, err
	}
	defer func() {
		d.Watch(false)
		dcache.Dput(m.T, d)
	}()
	desc, open := teach.Open(file, vfs.O_RDONLY)
	open(m.T, m.P) // warm the dentries and the file's key
	d.Watch(true)
	r = m.Record(desc, open)
	ev := r.Events.Map()
	summary = fmt.Sprintf("%d atomic operations on %s's lockref (lockref_rmw_watched); fscrypt_file_open_fast=%d fscrypt_file_open_dget_parent=%d",
		ev["lockref_rmw_watched"], parent, ev["fscrypt_file_open_fast"], ev["fscrypt_file_open_dget_parent"])
	return summary, r, m, nil
}

func genLockref(rng *rand.Rand, reverse bool) (*question, error) {
	fs := pick(rng, fsNames)
	file := pick(rng, []string{"/tmp/hello", "/secret/note"})
	variant := pick(rng, lockrefVariants)
	summary, r, m, err := lockrefRun(fs, variant, file)
	if err != nil {
		return nil, err
	}
	setup := machineLine(m) + "\nPatch: fscrypt-file-open=" + variant
	explain := traceText(m.Export(r))
	m.Close()
	if !reverse {
		return &question{
			setup:   setup,
			ask:     fmt.Sprintf("open(%q, O_RDONLY) + close, with the dentries warm. How many atomic read-modify-writes does it make on the parent directory's lockref, and does fscrypt_file_open take the fast path?", file),
			answer:  summary,
			explain: explain,
		}, nil
	}
	// Which variants give the same counts?
	var same []string
	for _, v := range lockrefVariants {
		s, _, m2, err := lockrefRun(fs, v, file)
		if err != nil {
			return nil, err
		}
		m2.Close()
		if s == summary {
			same = append(same, v)
		}
	}
	return &question{
		setup:   machineLine(m),
		ask:     fmt.Sprintf("open(%q, O_RDONLY) + close made %s. Under which fscrypt-file-open variants (base, v1, v2) can that be?", file, summary),
		answer:  strings.Join(same, ", "),
		explain: "ran under " + variant + ":\n" + explain,
	}, nil
}

// setPolicyCall is FS_IOC_SET_ENCRYPTION_POLICY on dir with a v2 policy
// (AES-256-XTS, AES-256-CTS, padding 32) whose identifier is 16 bytes of
// fill (fscrypt_ioctl_set_policy).
func setPolicyCall(dir, what string, fill byte) call {
	desc := fmt.Sprintf("ioctl(open(%q), FS_IOC_SET_ENCRYPTION_POLICY, v2 policy with %s)", dir, what)
	return errCall(desc, false, func(t *kernel.Task, p *vfs.Proc) error {
		fd, err := p.Open(t, dir, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		if err != nil {
			return err
		}
		defer p.Close(t, fd)
		pol := fscrypt.Policy{Version: fscrypt.PolicyV2, ContentsMode: fscrypt.ModeAES256XTS,
			FilenamesMode: fscrypt.ModeAES256CTS, Flags: fscrypt.PolicyFlagsPad32}
		for i := range pol.Identifier {
			pol.Identifier[i] = fill
		}
		return p.SetEncryptionPolicy(t, fd, pol)
	})
}
