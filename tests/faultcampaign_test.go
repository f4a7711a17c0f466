package tests

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/review/fault"
	"github.com/vfslab/vfslab/vfs"
)

// faultExhaustive makes TestFaultInjectionCampaign fail every allocation
// N of every step, on every configuration with every drawn variant set,
// and with longer sequences.
var faultExhaustive = flag.Bool("faultinject.exhaustive", false, "fault-injection campaign: fail every allocation of every step (slow)")

// fiConfig is one configuration of the fault-injection campaign: a system
// and whether the encrypted directory's key was removed after set-up.
type fiConfig struct {
	cfg   config
	nokey bool
}

func (c fiConfig) String() string {
	s := c.cfg.String()
	if c.nokey {
		s += "+nokey"
	}
	if v := c.cfg.patches.Changed(); v != "" {
		s += "[" + v + "]"
	}
	return s
}

// fiStepKind is a syscall of the campaign.
type fiStepKind int

const (
	fiOp    fiStepKind = iota // an op of the namespace tests (unlink, mkdir, ...)
	fiCreat                   // open(O_CREAT|O_TRUNC), closed after the check of fail-nth
	fiExcl                    // open(O_CREAT|O_EXCL), closed after the check of fail-nth
	fiStat                    // lstat
	fiList                    // open(O_DIRECTORY), getdents64 to the end, close
)

// fiStep is one syscall of a campaign sequence.
type fiStep struct {
	kind fiStepKind
	op   op
	path string
}

func (st fiStep) String() string {
	switch st.kind {
	case fiCreat:
		return fmt.Sprintf("open(%q, O_CREAT|O_TRUNC)", st.path)
	case fiExcl:
		return fmt.Sprintf("open(%q, O_CREAT|O_EXCL)", st.path)
	case fiStat:
		return fmt.Sprintf("lstat(%q)", st.path)
	case fiList:
		return fmt.Sprintf("getdents(%q)", st.path)
	}
	return st.op.String()
}

// run performs the step, one syscall, and returns its error. A file the
// step opens is left open in s.fds for fiRun to close after the check of
// fail-nth: the campaign fails allocations of one syscall at a time.
func (st fiStep) run(s *system, fds *[]int) error {
	switch st.kind {
	case fiCreat, fiExcl:
		flags := vfs.O_RDWR | vfs.O_CREAT | vfs.O_TRUNC
		if st.kind == fiExcl {
			flags = vfs.O_RDWR | vfs.O_CREAT | vfs.O_EXCL
		}
		fd, err := s.p.Open(s.t, st.path, flags, 0o600)
		if err == nil {
			*fds = append(*fds, fd)
		}
		return err
	case fiStat:
		_, err := s.p.Lstat(s.t, st.path)
		return err
	case fiList:
		_, err := s.getdents(st.path)
		return err
	}
	return s.run(st.op)
}

// fiNames is the campaign's name pool: names that casefold alike, so that
// casefolded directories see case-insensitive matches and collisions.
var fiNames = []string{"Alpha", "ALPHA", "alpha", "beta", "Straße", "STRASSE", "sub", "Sub", "gamma"}

// fiSetup is the state every sequence starts from: /d/Alpha, /d/beta and
// the directory /d/sub holding /d/sub/gamma. With nokey the key is
// removed afterwards, so the sequence runs on no-key names.
func fiSetup(s *system, nokey bool) error {
	for _, f := range []string{"Alpha", "beta"} {
		if err := s.creat(testDir+"/"+f, []byte(f)); err != nil {
			return err
		}
	}
	if err := s.p.Mkdir(s.t, testDir+"/sub", 0o755); err != nil {
		return err
	}
	if err := s.creat(testDir+"/sub/gamma", []byte("g")); err != nil {
		return err
	}
	if nokey {
		if err := s.dropCaches("/"); err != nil {
			return err
		}
		fd, err := s.p.Open(s.t, "/", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		if err != nil {
			return err
		}
		defer s.p.Close(s.t, fd)
		arg := fscrypt.RemoveKeyArg{KeySpec: fscrypt.IdentifierSpec(s.keyID)}
		if _, err := s.p.Ioctl(s.t, fd, vfs.FS_IOC_REMOVE_ENCRYPTION_KEY, &arg); err != nil {
			return err
		}
	}
	return s.dropCaches("/")
}

// fiSequence draws a short sequence of syscalls on the pool's names.
func fiSequence(r *rand.Rand, n int) []fiStep {
	pick := func() string {
		p := testDir
		if r.IntN(4) == 0 {
			p += "/sub"
		}
		return p + "/" + fiNames[r.IntN(len(fiNames))]
	}
	var seq []fiStep
	for i := 0; i < n; i++ {
		var st fiStep
		switch r.IntN(10) {
		case 0:
			st = fiStep{kind: fiCreat, path: pick()}
		case 1:
			st = fiStep{kind: fiExcl, path: pick()}
		case 2:
			st = fiStep{kind: fiStat, path: pick()}
		case 3:
			st = fiStep{kind: fiList, path: []string{testDir, testDir + "/sub"}[r.IntN(2)]}
		case 4:
			st = fiStep{kind: fiOp, op: op{kind: opUnlink, a: pick()}}
		case 5:
			st = fiStep{kind: fiOp, op: op{kind: opMkdir, a: pick()}}
		case 6:
			st = fiStep{kind: fiOp, op: op{kind: opRmdir, a: pick()}}
		case 7:
			st = fiStep{kind: fiOp, op: op{kind: opLink, a: pick(), b: pick()}}
		default:
			flags := []uint32{0, 0, vfs.RENAME_NOREPLACE, vfs.RENAME_EXCHANGE}[r.IntN(4)]
			st = fiStep{kind: fiOp, op: op{kind: opRename, a: pick(), b: pick(), flags: flags}}
		}
		seq = append(seq, st)
	}
	return seq
}

// fiConfigs returns the campaign's configurations: every registered
// filesystem with a directory checker (ext4 and f2fs, found through
// vfs.Filesystems), plain, casefolded, encrypted and both, the encrypted
// ones with the key present and removed; each with the base variants and
// with a variant set drawn from patch.All() (every set in exhaustive mode
// gets two draws).
func fiConfigs(r *rand.Rand) []fiConfig {
	var out []fiConfig
	draws := 1
	if *faultExhaustive {
		draws = 2
	}
	for _, ft := range vfs.Filesystems() {
		var kind fsKind
		switch ft.Name {
		case "ext4":
			kind = kExt4
		case "f2fs":
			kind = kF2fs
		default:
			continue
		}
		for _, cf := range []bool{false, true} {
			for _, enc := range []bool{false, true} {
				for _, nokey := range []bool{false, true} {
					if nokey && !enc {
						continue
					}
					c := config{fs: kind, casefold: cf, encrypt: enc}
					out = append(out, fiConfig{cfg: c, nokey: nokey})
					for d := 0; d < draws; d++ {
						c.patches = fiDrawVariants(r)
						out = append(out, fiConfig{cfg: c, nokey: nokey})
					}
				}
			}
		}
	}
	return out
}

// fiDrawVariants draws a variant of every patch.
func fiDrawVariants(r *rand.Rand) patch.Set {
	var s patch.Set
	for _, p := range patch.All() {
		s = s.MustWith(p, p.Variants[r.IntN(len(p.Variants))].Name)
	}
	return s
}

// fiSnapshot renders the namespace under /d: every path with its type,
// link count, size and (where readable) contents, sorted. Inode numbers
// are left out: they differ between machines.
func fiSnapshot(s *system) (string, error) {
	var lines []string
	var walk func(dir string) error
	walk = func(dir string) error {
		ds, err := s.listDir(dir)
		if err != nil {
			return fmt.Errorf("getdents %q: %w", dir, err)
		}
		for _, d := range ds {
			p := dir + "/" + d.Name
			st, err := s.p.Lstat(s.t, p)
			if err != nil {
				return fmt.Errorf("lstat %q: %w", p, err)
			}
			line := fmt.Sprintf("%s mode=%o nlink=%d size=%d", p, st.Mode&vfs.S_IFMT, st.Nlink, st.Size)
			if st.Mode&vfs.S_IFMT == vfs.S_IFDIR {
				lines = append(lines, line)
				if err := walk(p); err != nil {
					return err
				}
				continue
			}
			if data, err := s.readFile(p); err == nil {
				line += " data=" + strconv.Quote(string(data))
			}
			lines = append(lines, line)
		}
		return nil
	}
	if err := walk(testDir); err != nil {
		return "", err
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n"), nil
}

// fiCheckAll runs the directory checker on every directory under /d.
func fiCheckAll(s *system, snap string) error {
	dirs := []string{testDir}
	for _, l := range strings.Split(snap, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[1] == fmt.Sprintf("mode=%o", vfs.S_IFDIR) {
			dirs = append(dirs, f[0])
		}
	}
	for _, d := range dirs {
		if err := s.checkDir(d); err != nil {
			return fmt.Errorf("CheckDir %q: %w", d, err)
		}
	}
	return nil
}

// fiPrepare boots a system for c, sets it up and replays seq[:i], each
// step after dropping the caches, so that every replay of one prefix
// reaches the same state.
func fiPrepare(c fiConfig, seq []fiStep, i int) (*system, error) {
	s, err := boot(c.cfg)
	if err != nil {
		return nil, err
	}
	if err := fiSetup(s, c.nokey); err != nil {
		s.close()
		return nil, err
	}
	for _, st := range seq[:i] {
		var fds []int
		st.run(s, &fds)
		for _, fd := range fds {
			s.p.Close(s.t, fd)
		}
		if err := s.dropCaches("/"); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// fiOutcome is what one step did on one machine.
type fiOutcome struct {
	snap  string
	stats *kmem.Stats
	bugs  int
}

// fiRun runs the step on s with fail-nth set to nth (0: no injection)
// through the fault-injection model vfslab review uses (review/fault: a
// deadline, so that a hang is a finding, not a stuck test, and a recover,
// so that a Go panic is one). It returns whether the injection happened,
// a finding, and the syscall's result.
func fiRun(s *system, st fiStep, nth int) (hit bool, finding string, err error) {
	var fds []int
	o := fault.Run(s.t, fault.Spec{Nth: nth}, 0, func() error { return st.run(s, &fds) })
	if o.Hang {
		return true, o.Finding, nil
	}
	for _, fd := range fds {
		s.p.Close(s.t, fd)
	}
	return o.Hit, o.Finding, o.Err
}

// fiCall describes the step for the model's kernel rules.
func fiCall(st fiStep) fault.Call {
	switch st.kind {
	case fiStat:
		return fault.Call{Kind: fault.Lookup}
	case fiCreat, fiExcl:
		return fault.Call{Kind: fault.Create}
	case fiOp:
		return fault.Call{Kind: fault.Namespace, PlainRename: st.op.kind == opRename && st.op.flags == 0, A: st.op.a, B: st.op.b}
	}
	return fault.Call{}
}

// fiEnv is the configuration's filesystem for the model's kernel rules.
func fiEnv(c fiConfig) fault.Env {
	return fault.Env{FS: string(c.cfg.fs), Casefold: c.cfg.casefold, Encrypt: c.cfg.encrypt}
}

// fiObserve takes the state after a step: the caches dropped, the
// snapshot, the caches dropped again, the allocator's per-site counts.
func fiObserve(s *system) (fiOutcome, error) {
	var o fiOutcome
	if err := s.dropCaches("/"); err != nil {
		return o, err
	}
	snap, err := fiSnapshot(s)
	if err != nil {
		return o, err
	}
	if err := s.dropCaches("/"); err != nil {
		return o, err
	}
	o.snap, o.stats, o.bugs = snap, s.t.Stats.Clone(), s.k.Bugs.Len()
	return o, nil
}

// fiWithoutPostedLeaks drops from leaks the sites that the configuration's
// variants leak as posted, whose live count grows with every call that
// gets far enough and so depends on where the injection stopped the
// syscall: fscrypt-fname-onstack v2's filename encryption request (one per
// encryption, never freed; pinned by fscrypt's TestFnameOnstackIssue9 and
// found by vfslab review as that variant's leak).
func fiWithoutPostedLeaks(c fiConfig, leaks []string) []string {
	if c.cfg.patches.Variant(fscrypt.FnameOnstackPatch) != "v2" {
		return leaks
	}
	var out []string
	for _, l := range leaks {
		if !strings.HasPrefix(l, "fscrypt_fname_encrypt:skcipher_request:") {
			out = append(out, l)
		}
	}
	return out
}

// TestFaultInjectionCampaign fails allocation N, through the task's
// fail-nth (/proc/self/fail-nth with failslab's ignore-gfp-wait off), for
// every N a step of a short generated sequence reaches (every third N
// past the eighth in the default run), on every configuration (ext4 and
// f2fs; casefold, encrypt, both; key present and removed; the base
// variants and drawn variant sets). After each injection:
//   - the syscall returns ENOMEM or what the reference run (no injection)
//     returned, nothing panics, nothing hangs, no BUG is reported;
//   - the namespace under /d equals the reference's state before or after
//     the step (a partial rename or link is a violation);
//   - CheckDir passes on every directory;
//   - no allocation leaks: with the caches dropped, every kmalloc site's
//     live count equals the reference's at the matching state.
//
// Outcomes explained by a documented kernel rule (fault.KernelRule) are
// counted apart and are not violations. A step whose reference run itself
// reports a BUG (a variant's own bug, as posted) ends its sequence.
func TestFaultInjectionCampaign(t *testing.T) {
	seqLen, stride := 10, 2
	if *faultExhaustive {
		seqLen, stride = 12, 1
	}
	if testing.Short() {
		seqLen = 4
	}
	r := rand.New(rand.NewPCG(13, 0xfa17))
	var total, violations, rules, known int
	for ci, c := range fiConfigs(r) {
		if !*faultExhaustive && c.cfg.patches.Changed() != "" && ci%3 != 0 {
			continue // the default run draws variants for a third of the configurations
		}
		seq := fiSequence(rand.New(rand.NewPCG(uint64(ci), 0x5e9)), seqLen)
		inj, viol, rule, kf, variantBug := 0, 0, 0, 0, ""
		report := func(format string, args ...any) {
			viol++
			if viol <= 5 {
				t.Errorf("%s: "+format, append([]any{c}, args...)...)
			}
		}
	steps:
		for i, st := range seq {
			ref, err := fiPrepare(c, seq, i)
			if err != nil {
				t.Fatalf("%s: set-up: %v", c, err)
			}
			before, err := fiObserve(ref)
			if err != nil {
				t.Fatalf("%s: before %s: %v", c, st, err)
			}
			_, finding, refErr := fiRun(ref, st, 0)
			if finding != "" {
				report("%s with no injection: %s", st, finding)
				break
			}
			after, err := fiObserve(ref)
			ref.close()
			if _, bug := kernel.AsBug(refErr); bug || after.bugs != 0 || err != nil {
				variantBug = fmt.Sprintf("%s: %v %v", st, refErr, err)
				break
			}
			for n := 1; ; n++ {
				if !*faultExhaustive && n > 8 && n%stride != 0 {
					// Still find where the step's injection points end.
					if n > 2000 {
						report("%s still reaches fault %d", st, n)
						break
					}
					continue
				}
				s, err := fiPrepare(c, seq, i)
				if err != nil {
					t.Fatalf("%s: set-up: %v", c, err)
				}
				if _, err := fiObserve(s); err != nil {
					t.Fatalf("%s: before %s: %v", c, st, err)
				}
				hit, finding, gotErr := fiRun(s, st, n)
				if finding != "" {
					inj++
					report("%s, fault %d: %s", st, n, finding)
					if strings.HasPrefix(finding, "hang") {
						break steps // the machine is stuck: leave it
					}
					s.close()
					continue
				}
				if !hit {
					s.close()
					break
				}
				inj++
				if s.k.Bugs.Len() != 0 {
					report("%s, fault %d: BUG: %v", st, n, s.k.Bugs.All())
					s.close()
					continue
				}
				got, err := fiObserve(s)
				if err != nil {
					report("%s, fault %d (returned %v): state unreadable: %v", st, n, gotErr, err)
					s.close()
					continue
				}
				if why := fault.KernelRule(fiEnv(c), fiCall(st), gotErr, refErr, got.snap, before.snap, after.snap); why != "" {
					rules++
					rule++
					if rule == 1 {
						t.Logf("%s: %s, fault %d: %s", c, st, n, why)
					}
					s.close()
					continue
				}
				if why := fault.KnownFinding(fiEnv(c), fiCall(st), gotErr, got.snap); why != "" {
					known++
					kf++
					t.Logf("%s: %s, fault %d: known finding: %s", c, st, n, why)
					s.close()
					continue
				}
				if gotErr != errno.ENOMEM && errName(gotErr) != errName(refErr) {
					report("%s, fault %d: returned %s, want ENOMEM or %s", st, n, errName(gotErr), errName(refErr))
				}
				var match *fiOutcome
				switch got.snap {
				case before.snap:
					match = &before
				case after.snap:
					match = &after
				default:
					report("%s, fault %d (returned %s): namespace is neither the state before nor after:\n%s\nbefore:\n%s\nafter:\n%s",
						st, n, errName(gotErr), got.snap, before.snap, after.snap)
				}
				if err := fiCheckAll(s, got.snap); err != nil {
					report("%s, fault %d (returned %s): %v", st, n, errName(gotErr), err)
				}
				if match != nil {
					if l := fiWithoutPostedLeaks(c, got.stats.Leaks(match.stats)); len(l) != 0 {
						report("%s, fault %d (returned %s): live objects differ from the reference: %v", st, n, errName(gotErr), l)
					}
				}
				s.close()
			}
		}
		total += inj
		violations += viol
		line := fmt.Sprintf("faultinject: %s: %d steps, %d injections, %d violations", c, len(seq), inj, viol)
		if rule > 0 {
			line += fmt.Sprintf(", %d by a documented kernel rule", rule)
		}
		if kf > 0 {
			line += fmt.Sprintf(", %d known findings", kf)
		}
		if variantBug != "" {
			line += "; sequence ended by the variant's own BUG at " + variantBug
		}
		t.Log(line)
	}
	t.Logf("faultinject: %d injections, %d violations (%d outcomes by documented kernel rules, %d known findings)", total, violations, rules, known)
	if total < 1000 && !testing.Short() {
		t.Errorf("faultinject: only %d injections, want at least 1000", total)
	}
}

// TestExt4CasefoldEncryptENOMEMDuplicate pins the kernel rule of
// fault.KernelRule: on ext4 with casefold and encryption, an allocation that
// fails inside the name comparison makes the comparison "no match"
// (fs/ext4/namei.c ext4_match returns false when generic_ci_match fails,
// e.g. with -ENOMEM from kmalloc of the decrypted name), so under
// persistent ENOMEM of that allocation (the task's per-site injector,
// kmem.FailSites) lstat("ALPHA") says ENOENT and open("alpha",
// O_CREAT|O_EXCL) beside "Alpha" succeeds (ext4_find_dest_de's check
// misses too), leaving two names that casefold alike. On f2fs the same
// failure is an error (f2fs_match_ci_name returns it), never a duplicate.
// With one failure only (fail-nth), the lookup misses but
// ext4_find_dest_de then sees the name: EEXIST, as the campaign counts.
func TestExt4CasefoldEncryptENOMEMDuplicate(t *testing.T) {
	sites := map[fsKind]string{kExt4: "ext4/generic_ci_match:decrypted_name", kF2fs: "f2fs/generic_ci_match:decrypted_name"}
	for _, fs := range []fsKind{kExt4, kF2fs} {
		if _, ok := kmem.LookupSite(sites[fs]); !ok {
			t.Fatalf("no allocation site %q", sites[fs])
		}
		s := mustBoot(t, config{fs: fs, casefold: true, encrypt: true})
		if err := s.creat(testDir+"/Alpha", []byte("A")); err != nil {
			t.Fatal(err)
		}
		if err := s.dropCaches("/"); err != nil {
			t.Fatal(err)
		}
		s.t.Fail = kmem.FailSites(sites[fs])
		_, serr := s.p.Lstat(s.t, testDir+"/ALPHA")
		_, finding, err := fiRun(s, fiStep{kind: fiExcl, path: testDir + "/alpha"}, 0)
		s.t.Fail = nil
		if finding != "" {
			t.Fatalf("%s: %s", fs, finding)
		}
		ds, lerr := s.listDir(testDir)
		if lerr != nil {
			t.Fatal(lerr)
		}
		var got []string
		for _, d := range ds {
			got = append(got, d.Name)
		}
		t.Logf("%s, ENOMEM at %s: lstat ALPHA = %s, open(alpha, O_CREAT|O_EXCL) = %s, directory: %v", fs, sites[fs], errName(serr), errName(err), got)
		switch fs {
		case kExt4:
			if serr != errno.ENOENT || err != nil || strings.Join(got, ",") != "Alpha,alpha" {
				t.Errorf("ext4: want ENOENT, success and the case-duplicate [Alpha alpha] (ext4_match's rule)")
			}
		case kF2fs:
			if serr != errno.ENOMEM || err != errno.ENOMEM || strings.Join(got, ",") != "Alpha" {
				t.Errorf("f2fs: want ENOMEM, ENOMEM and [Alpha] (f2fs_match_ci_name returns the error)")
			}
		}
	}
}
