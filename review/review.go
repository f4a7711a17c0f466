// Package review is `vfslab review`: a verdict for every variant of every
// modelled patch, found automatically as a reviewer with a debug kernel
// would find it.
//
// For each patch, on every filesystem it touches (PatchEnvs), generated
// syscall sequences (Generate) run on a machine built with the variant
// and on one built with the base, with the same seed and the same
// sequence; after every step the detectors of a debug kernel run on both
// (detect: KASAN, double free, BUG, WARN, DMA-API, RCU, lockref), and the
// two machines' results are compared step by step: errnos, names,
// contents, and at the end every directory's on-disk blocks. Then every
// allocation site the sequence reached is made to fail once, in the
// first steps that reach it (the fault-injection model of review/fault,
// which the reliability campaign shares), and the outcome is checked
// again. What the variant does and its base does not is the variant's
// finding; what the base does itself is a kernel finding, reported once.
// Each finding's sequence is shrunk (delta debugging over its steps) to
// a minimal one, printed as a `vfslab sh` script. Last, the seed
// workload's headline runs with the production allocator and with
// slub_debug (sim.HeadlineFor), for the performance verdict.
package review

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/review/fault"
	"github.com/vfslab/vfslab/vfs"
)

// Options configure a review.
type Options struct {
	// Patches selects what is reviewed: "ID" (every variant of the patch)
	// or "ID=VARIANT"; empty means every variant of every patch.
	Patches []string
	// Seed seeds the generated sequences and the machines' random
	// sources (file nonces): one seed, one review.
	Seed uint64
	// Steps is the number of steps per environment (0: DefaultSteps),
	// split into sequences of SeqLen.
	Steps int
	// Progress, if not nil, receives one line per patch, environment and
	// variant.
	Progress io.Writer
	// NoPerf skips the performance verdict.
	NoPerf bool
	// NoFaults skips fault injection.
	NoFaults bool
	// Envs, if not empty, replaces PatchEnvs: every selected patch is
	// reviewed on these environments only.
	Envs []Env
}

// DefaultSteps is the default number of steps per environment.
const DefaultSteps = 48

// SeqLen is the length of one generated sequence.
const SeqLen = 24

// MaxSteps bounds Options.Steps.
const MaxSteps = 100000

// PatchEnvs are the environments each patch is reviewed on: every
// filesystem the patch's code is reached from, in the configurations that
// reach it. A patch not listed is reviewed on DefaultEnvs.
var PatchEnvs = map[string][]Env{
	"fscrypt-fname-onstack": {
		{FS: "ext4", Encrypt: true},
		{FS: "ext4", Casefold: true, Encrypt: true},
		{FS: "f2fs", Casefold: true, Encrypt: true},
		{FS: "f2fs", Encrypt: true, EngineReqsize: 256},
		{FS: "f2fs", Encrypt: true, EngineReqsize: 512},
	},
	"f2fs-lookup-prealloc": {
		{FS: "f2fs", Casefold: true, Encrypt: true},
		{FS: "f2fs", Casefold: true},
	},
	"fscrypt-v1-kdf": {
		{FS: "ext4", Encrypt: true, V1: true},
		{FS: "f2fs", Encrypt: true, V1: true},
	},
	"crypto-bio": {
		{FS: "ext4", Encrypt: true},
		{FS: "f2fs", Encrypt: true},
	},
	"fscrypt-file-open": {
		{FS: "ext4"},
		{FS: "ext4", Encrypt: true},
		{FS: "f2fs", Casefold: true, Encrypt: true},
	},
}

// DefaultEnvs are the environments of a patch PatchEnvs does not list.
var DefaultEnvs = []Env{{FS: "ext4", Encrypt: true}, {FS: "f2fs", Casefold: true, Encrypt: true}}

// target is one patch and the variants of it under review.
type target struct {
	p        *patch.Patch
	variants []string
}

// CheckPatches reports whether a selection of Options.Patches names
// patches and (non-base) variants that exist; the error lists the valid
// ones.
func CheckPatches(sel []string) error {
	_, err := targets(sel)
	return err
}

// targets resolves Options.Patches.
func targets(sel []string) ([]target, error) {
	if len(sel) == 0 {
		var out []target
		for _, p := range patch.All() {
			out = append(out, target{p: p, variants: p.VariantNames()[1:]})
		}
		sortTargets(out)
		return out, nil
	}
	byID := map[string]*target{}
	var order []string
	for _, item := range sel {
		id, v, hasV := strings.Cut(strings.TrimSpace(item), "=")
		p, err := patch.Find(id)
		if err != nil {
			return nil, err
		}
		if hasV {
			i, ok := p.VariantIndex(v)
			if !ok {
				return nil, fmt.Errorf("patch %s has no variant %q; valid: %s", p.ID, v, strings.Join(p.VariantNames(), ", "))
			}
			if i == 0 {
				return nil, fmt.Errorf("%s=%s is the base: a review compares a variant with it", p.ID, v)
			}
		}
		t := byID[id]
		if t == nil {
			t = &target{p: p}
			byID[id] = t
			order = append(order, id)
		}
		if hasV {
			if !containsStr(t.variants, v) {
				t.variants = append(t.variants, v)
			}
		} else {
			t.variants = p.VariantNames()[1:]
		}
	}
	var out []target
	for _, id := range order {
		out = append(out, *byID[id])
	}
	sortTargets(out)
	return out, nil
}

func sortTargets(ts []target) {
	sort.SliceStable(ts, func(i, j int) bool {
		if ts[i].p.Seed != ts[j].p.Seed {
			return ts[i].p.Seed < ts[j].p.Seed
		}
		return ts[i].p.ID < ts[j].p.ID
	})
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Run reviews the selected variants. It stops early, with ctx's error,
// when ctx is done.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if opts.Steps < 0 || opts.Steps > MaxSteps {
		return nil, fmt.Errorf("steps %d out of range 0..%d", opts.Steps, MaxSteps)
	}
	if opts.Steps == 0 {
		opts.Steps = DefaultSteps
	}
	ts, err := targets(opts.Patches)
	if err != nil {
		return nil, err
	}
	rv := &reviewer{opts: opts, ctx: ctx, kernel: map[string]Finding{}, model: map[string]Finding{}}
	res := &Result{}
	for _, tg := range ts {
		verdicts := map[string]*VariantVerdict{}
		for _, v := range tg.variants {
			verdicts[v] = &VariantVerdict{Patch: tg.p.ID, Variant: v, Findings: []Finding{}}
		}
		envs := PatchEnvs[tg.p.ID]
		if envs == nil {
			envs = DefaultEnvs
		}
		if len(opts.Envs) > 0 {
			envs = opts.Envs
		}
		// Every (environment, variant) is an independent job on its
		// own machines; the jobs run on every CPU and are merged in
		// order, so that one seed gives one review.
		type job struct {
			env     Env
			ei      int
			variant string
			fs      []Finding
			kf      []kernelRecord
			err     error
		}
		var jobs []*job
		for ei, env := range envs {
			for _, v := range tg.variants {
				jobs = append(jobs, &job{env: env, ei: ei, variant: v})
			}
		}
		work := make(chan *job)
		var wg sync.WaitGroup
		for w := 0; w < min(runtime.GOMAXPROCS(0), len(jobs)); w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range work {
					rv.progress("review: %s=%s on %s", tg.p.ID, j.variant, j.env)
					set := patch.Set{}.MustWith(tg.p, j.variant)
					j.fs, j.kf, j.err = rv.reviewEnv(j.env, uint64(j.ei), set)
				}
			}()
		}
		for _, j := range jobs {
			work <- j
		}
		close(work)
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, j := range jobs {
			if j.err != nil {
				return nil, fmt.Errorf("%s=%s on %s: %w", tg.p.ID, j.variant, j.env, j.err)
			}
			vv := verdicts[j.variant]
			vv.Findings = mergeFindings(vv.Findings, j.fs)
			for _, r := range j.kf {
				rv.kernelFinding(r)
			}
		}
		if !opts.NoPerf {
			rv.progress("review: %s: performance (production allocator and slub_debug)", tg.p.ID)
			perf, err := perfVerdicts(tg.p, tg.variants)
			if err != nil {
				return nil, err
			}
			for v, pf := range perf {
				verdicts[v].Perf = pf
			}
		}
		for _, v := range tg.variants {
			res.Variants = append(res.Variants, *verdicts[v])
		}
	}
	res.KernelFindings = sortedFindings(rv.kernel)
	res.ModelFindings = sortedFindings(rv.model)
	return res, nil
}

// sortedFindings lists a map of findings by key.
func sortedFindings(m map[string]Finding) []Finding {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := []Finding{}
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

// mergeFindings adds fs to into, one row per root cause (Key): a finding
// already there counts the other's occurrences.
func mergeFindings(into, fs []Finding) []Finding {
	for _, f := range fs {
		i := slices.IndexFunc(into, func(g Finding) bool { return g.Key() == f.Key() })
		if i >= 0 {
			into[i].Occurrences += f.Occurrences
			continue
		}
		into = append(into, f)
	}
	return into
}

func hasKey(fs []Finding, key string) bool {
	for _, f := range fs {
		if f.key() == key {
			return true
		}
	}
	return false
}

// reviewer holds a review's state: its options and the kernel and model
// findings found so far (by key, once each).
type reviewer struct {
	mu     sync.Mutex // Progress
	opts   Options
	ctx    context.Context
	kernel map[string]Finding
	// model are base's invariant findings: the oracle's reports
	// against the base kernel, bugs of the model to be fixed.
	model map[string]Finding
}

func (rv *reviewer) progress(format string, args ...any) {
	if rv.opts.Progress != nil {
		rv.mu.Lock()
		fmt.Fprintf(rv.opts.Progress, format+"\n", args...)
		rv.mu.Unlock()
	}
}

// kernelRecord is a finding of base itself and where it was made.
type kernelRecord struct {
	env    Env
	seed   uint64
	seq    []Step
	inject int
	spec   fault.Spec
	f      Finding
}

// kernelFinding records what base itself does, once (the first record of
// a kind and function, in the review's order): an invariant the oracle
// checks is a model finding, the rest kernel findings.
func (rv *reviewer) kernelFinding(r kernelRecord) {
	f := r.f
	into := rv.kernel
	if f.Kind == KindInvariant {
		into = rv.model
	}
	if g, ok := into[f.key()]; ok {
		g.Occurrences++
		into[f.key()] = g
		return
	}
	f = rv.shrinkKernel(r)
	f.Detail = fmt.Sprintf("%s (base, %s)", f.Detail, r.env)
	into[f.key()] = f
}

// trace is what one run of a sequence did on one machine.
type trace struct {
	results  []result
	findings []Finding // the detectors', by step
	dumps    string
	live     map[string]int64
	objs     map[string]*kmem.Object
	// sites are the allocation sites each step reached.
	sites [][]string
	// snaps[i] is the namespace under /d after step i (snapshot).
	snaps []string
	// hit reports that the injection happened.
	hit  bool
	hang bool
	// start is the namespace before the first step.
	start string
}

// before returns the namespace before step i.
func (t *trace) before(i int) string {
	if i == 0 {
		return t.start
	}
	return t.snaps[i-1]
}

// plant, set only by tests (and never while a review runs in
// parallel with one), runs on every machine before every step: a test
// plants a bug in base code through it, wrapping an inode's operations,
// to check that the oracle reports it.
var plant func(m *machine, s Step)

// execute runs seq on a fresh machine for env and set, with spec armed for
// step inject (-1: none).
func execute(env Env, set patch.Set, seed uint64, seq []Step, inject int, spec fault.Spec) (*trace, error) {
	m, err := boot(env, set, seed)
	if err != nil {
		return nil, err
	}
	defer m.close()
	start := m.observe()
	tr := &trace{start: start.snap}
	// The base oracle checks the runs without injection (an injected
	// step's outcome is judgeInjected's).
	var or *oracle
	if inject < 0 {
		or = newOracle(env)
		or.inodes = start.inodes
	}
	for i, s := range seq {
		if plant != nil {
			plant(m, s)
		}
		m.k.Tracker.SetStep(i)
		before := m.t.Stats.Clone()
		var r result
		if i == inject && !spec.None() {
			o := fault.Run(m.t, spec, 0, func() error { r = s.run(m); return r.err })
			tr.hit = o.Hit
			if o.Finding != "" {
				tr.findings = append(tr.findings, Finding{Kind: KindBug, Function: s.kernelFunc(), Detail: o.Finding, step: i})
			}
			if o.Hang {
				tr.hang = true
				return tr, nil // the machine is stuck: leave it
			}
		} else {
			r = s.run(m)
		}
		tr.results = append(tr.results, r)
		tr.sites = append(tr.sites, reached(before, m.t.Stats))
		tr.findings = append(tr.findings, detect(m, i)...)
		ob := m.observe()
		tr.snaps = append(tr.snaps, ob.snap)
		if or != nil {
			tr.findings = append(tr.findings, or.check(s, i, r, ob.es, ob.tree, ob.inodes)...)
		}
	}
	m.k.Tracker.SetStep(len(seq))
	tr.dumps = m.dumps()
	// Teardown: the key removed and the caches dropped, so that only
	// what the kernel keeps for the filesystem itself is still live.
	if env.Encrypt {
		m.removeKey()
	}
	if m.key2 {
		m.onRoot(func(fd int) error {
			arg := fscrypt.RemoveKeyArg{KeySpec: fscrypt.IdentifierSpec(m.id2)}
			_, err := m.p.Ioctl(m.t, fd, vfs.FS_IOC_REMOVE_ENCRYPTION_KEY, &arg)
			return err
		})
	}
	m.sys.DropCachesAfterWriteback(m.t, 3)
	tr.findings = append(tr.findings, detect(m, len(seq))...)
	tr.live, tr.objs = liveBySite(m)
	return tr, nil
}

// reached lists the sites whose allocation count (successes and
// failures) grew from before to after.
func reached(before, after *kmem.Stats) []string {
	var out []string
	for _, site := range kmem.Sites() {
		a, b := after.Site(site), before.Site(site)
		if a.Allocs+a.Fails > b.Allocs+b.Fails {
			out = append(out, site.Name())
		}
	}
	return out
}

// compare returns what the variant's trace shows that base's does not:
// detector findings of a kind and function base did not report, the first
// step whose result differs (errno-mismatch or data-mismatch), directory
// blocks that differ, and leaks. refLive is the reference of the leak
// check (base's live objects, or the variant's own without injection).
// Findings base made itself are returned apart.
func compare(seq []Step, v, b *trace, refLive map[string]int64) (vf, bf []Finding) {
	baseKeys := map[string]bool{}
	for _, f := range b.findings {
		baseKeys[f.key()] = true
	}
	for _, f := range v.findings {
		if !baseKeys[f.key()] && !hasKey(vf, f.key()) {
			vf = append(vf, f)
		}
	}
	for _, f := range b.findings {
		if !hasKey(bf, f.key()) {
			bf = append(bf, f)
		}
	}
	// The results, up to the first step where a detector fired on
	// either machine (the states part there).
	stop := len(seq)
	for _, f := range append(append([]Finding(nil), v.findings...), b.findings...) {
		if f.step >= 0 && f.step < stop {
			stop = f.step
		}
	}
	n := min(stop, len(v.results), len(b.results))
	diverged := false
	for i := 0; i < n; i++ {
		vr, br := v.results[i], b.results[i]
		if vr.String() == br.String() {
			continue
		}
		diverged = true
		s := seq[i]
		if isBugRecord(vr.err) || isBugRecord(br.err) {
			break // the detectors' row (the record is the step's "errno")
		}
		if fault.ErrName(vr.err) != fault.ErrName(br.err) {
			vf = append(vf, Finding{Kind: KindErrno, Function: s.kernelFunc(), step: i,
				Detail: fmt.Sprintf("step %d %s returned %s, base %s", i+1, s, fault.ErrName(vr.err), fault.ErrName(br.err))})
			break
		}
		detail := fmt.Sprintf("step %d %s: %s, base %s", i+1, s, vr, br)
		if vr.data != nil && br.data != nil {
			if off := firstDiff(vr.data, br.data); off >= 0 {
				detail = fmt.Sprintf("step %d %s: the data differ from base's from byte %d (page %d)", i+1, s, off, off/4096)
				if vr.show != "" {
					detail += "; " + vr.show
				}
			}
		}
		vf = append(vf, Finding{Kind: KindData, Function: s.kernelFunc(), step: i, Detail: detail})
		break
	}
	if !diverged && stop == len(seq) && v.dumps != b.dumps && !v.hang {
		vf = append(vf, Finding{Kind: KindData, Function: seq[len(seq)-1].kernelFunc() + " (directory blocks)", step: len(seq) - 1,
			Detail: "the directories' on-disk blocks differ from base's after the sequence: " + firstLineDiff(v.dumps, b.dumps)})
	}
	if v.live != nil && refLive != nil && !oopsed(v) {
		vf = append(vf, leakFindings(v.live, refLive, v.objs)...)
	}
	return vf, bf
}

// oopsed reports whether a run hung or raised a BUG or KASAN report:
// what its tasks held then stays allocated (in the kernel too, after an
// oops), so its teardown says nothing about leaks.
func oopsed(t *trace) bool {
	if t.hang {
		return true
	}
	for _, f := range t.findings {
		switch f.Kind {
		case KindBug, KindOOB, KindUAF, KindDoubleFree:
			return true
		}
	}
	return false
}

// firstLineDiff shows the first differing line of two dumps.
func firstLineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < min(len(al), len(bl)); i++ {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d: %q, base %q", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d lines, base %d", len(al), len(bl))
}

// reviewEnv reviews one variant set on one environment: the plain
// differential run of each sequence, then fault injection, each finding
// shrunk to its reproducer.
func (rv *reviewer) reviewEnv(env Env, envIndex uint64, set patch.Set) ([]Finding, []kernelRecord, error) {
	var out []Finding
	var kf []kernelRecord
	seen := map[string]int{} // Key -> index in out
	seqs := (rv.opts.Steps + SeqLen - 1) / SeqLen
	// The generated sequences, then one tree sequence (GenerateTree:
	// directories moved between parents, renames over linked files),
	// whose namespace the base oracle checks; fault injection runs on
	// the first kind only.
	for si := 0; si <= seqs; si++ {
		if err := rv.ctx.Err(); err != nil {
			return nil, nil, err
		}
		seed := rv.opts.Seed*1000003 + envIndex*101 + uint64(si)
		tree := si == seqs
		var seq []Step
		if tree {
			seq = GenerateTree(rand.New(rand.NewPCG(seed, 0x7472656573657100)), env, SeqLen)
		} else {
			seq = Generate(rand.New(rand.NewPCG(seed, 0x7265766965770000)), env, SeqLen)
		}
		vt, err := execute(env, set, seed, seq, -1, fault.Spec{})
		if err != nil {
			return nil, nil, err
		}
		bt, err := execute(env, patch.Set{}, seed, seq, -1, fault.Spec{})
		if err != nil {
			return nil, nil, err
		}
		vf, bf := compare(seq, vt, bt, bt.live)
		for _, f := range bf {
			n := len(seq)
			if f.step >= 0 {
				n = f.step + 1
			}
			kf = append(kf, kernelRecord{env, seed, seq[:n], -1, fault.Spec{}, f})
		}
		// Leaks of base itself, against nothing: none are reported
		// (what base keeps at teardown is the reference).
		for _, f := range vf {
			if j, ok := seen[f.Key()]; ok {
				out[j].Occurrences++
				continue
			}
			seen[f.Key()] = len(out)
			out = append(out, rv.shrink(env, set, seed, seq, -1, fault.Spec{}, f))
		}
		if rv.opts.NoFaults || tree {
			continue
		}
		if err := rv.inject(env, set, seed, seq, vt, bt, seen, &out, &kf); err != nil {
			return nil, nil, err
		}
	}
	return out, kf, nil
}

// injection is one planned fault: spec armed for step step.
type injection struct {
	step int
	spec fault.Spec
}

// maxInjections bounds the injections of one sequence.
const maxInjections = 24

// plan chooses the injections of a sequence: each allocation site the
// variant's run reached, in the first step of each kind (lookup, create,
// namespace change, other) that reaches it, preferring a step that
// succeeded without injection (its success path is the longer one).
// Sites the variant reaches in a step where base does not (the variant's
// own code) come first, then lookups, creates, namespace changes and the
// rest; at most maxInjections.
func plan(seq []Step, vref, bref *trace) []injection {
	type cand struct {
		injection
		own bool
	}
	chosen := map[string]int{} // site/kind -> index in cands
	var cands []cand
	for i, sites := range vref.sites {
		baseSites := map[string]bool{}
		if i < len(bref.sites) {
			for _, s := range bref.sites[i] {
				baseSites[s] = true
			}
		}
		ok := vref.results[i].err == nil
		for _, site := range sites {
			key := fmt.Sprintf("%s/%d", site, seq[i].call().Kind)
			c := cand{injection{i, fault.Spec{Site: site}}, !baseSites[site]}
			j, seen := chosen[key]
			switch {
			case !seen:
				chosen[key] = len(cands)
				cands = append(cands, c)
			case ok && vref.results[cands[j].step].err != nil:
				cands[j] = c // a successful step of the same kind
			}
		}
	}
	// The variant's own sites first, then lookups, creates, namespace
	// changes and the rest, each in step order.
	rank := map[fault.CallKind]int{fault.Lookup: 0, fault.Create: 1, fault.Namespace: 2, fault.Other: 3}
	sort.SliceStable(cands, func(a, b int) bool {
		ca, cb := cands[a], cands[b]
		if ca.own != cb.own {
			return ca.own
		}
		return rank[seq[ca.step].call().Kind] < rank[seq[cb.step].call().Kind]
	})
	var out []injection
	for _, c := range cands {
		if len(out) == maxInjections {
			break
		}
		out = append(out, c.injection)
	}
	return out
}

// inject fails the planned allocation sites of seq (plan) and judges the
// outcomes (judgeInjected). vref and bref are the uninjected runs of the
// variant and of base.
func (rv *reviewer) inject(env Env, set patch.Set, seed uint64, seq []Step, vref, bref *trace, seen map[string]int, all *[]Finding, kf *[]kernelRecord) error {
	for _, in := range plan(seq, vref, bref) {
		if err := rv.ctx.Err(); err != nil {
			return err
		}
		vf, bf, err := injectedFindings(env, set, seed, seq, in.step, in.spec, vref, bref)
		if err != nil {
			return err
		}
		for _, f := range bf {
			*kf = append(*kf, kernelRecord{env, seed, seq, in.step, in.spec, f})
		}
		for _, f := range vf {
			if j, ok := seen[f.Key()]; ok {
				(*all)[j].Occurrences++
				continue
			}
			seen[f.Key()] = len(*all)
			*all = append(*all, rv.shrink(env, set, seed, seq, in.step, in.spec, f))
		}
	}
	return nil
}

// injectedFindings runs seq on the variant and on base with spec armed
// for step i and returns what the variant does that base does not, and
// what base does itself. vref and bref are the two uninjected runs (nil:
// run them).
func injectedFindings(env Env, set patch.Set, seed uint64, seq []Step, i int, spec fault.Spec, vref, bref *trace) (vf, bf []Finding, err error) {
	if vref == nil {
		if vref, err = execute(env, set, seed, seq, -1, fault.Spec{}); err != nil {
			return nil, nil, err
		}
	}
	vt, err := execute(env, set, seed, seq, i, spec)
	if err != nil || !vt.hit {
		return nil, nil, err
	}
	vAll := judgeInjected(env, seq, i, vt, vref)
	bt, err := execute(env, patch.Set{}, seed, seq, i, spec)
	if err != nil {
		return nil, nil, err
	}
	if !bt.hit {
		for _, f := range vAll {
			f.Detail += fmt.Sprintf(" [under fault injection: %s at step %d; base does not reach the site]", spec, i+1)
			vf = append(vf, f)
		}
		return vf, nil, nil
	}
	if bref == nil {
		if bref, err = execute(env, patch.Set{}, seed, seq, -1, fault.Spec{}); err != nil {
			return nil, nil, err
		}
	}
	bAll := judgeInjected(env, seq, i, bt, bref)
	baseKeys := map[string]bool{}
	for _, f := range bAll {
		baseKeys[f.key()] = true
		f.Detail += fmt.Sprintf(" [under fault injection: %s at step %d]", spec, i+1)
		bf = append(bf, f)
	}
	for _, f := range vAll {
		if !baseKeys[f.key()] {
			f.Detail += fmt.Sprintf(" [under fault injection: %s at step %d]", spec, i+1)
			vf = append(vf, f)
		}
	}
	return vf, bf, nil
}

// judgeInjected lists what one injected run t shows against the same
// kernel's uninjected run ref: the detectors' reports, a result of step i
// that is neither ENOMEM nor ref's (or, when a documented kernel rule
// explains it, the rule, as a finding of the function that has it), and
// objects still live at teardown beyond ref's.
func judgeInjected(env Env, seq []Step, i int, t, ref *trace) []Finding {
	fs := append([]Finding(nil), t.findings...)
	if i < len(t.results) && i < len(ref.results) && i < len(t.snaps) && i < len(ref.snaps) {
		s := seq[i]
		err, refErr := t.results[i].err, ref.results[i].err
		got, before, after := t.snaps[i], ref.before(i), ref.snaps[i]
		// A step that oopsed returns the BUG or KASAN record as its
		// error: the detectors report it (one root cause, one row), so
		// its "errno" is not a finding of its own.
		badErr := !fault.Acceptable(err, refErr) && !isBugRecord(err)
		// A write step is open(O_CREAT) and pwrite: a failed pwrite
		// after a successful create is a state of its own.
		badState := got != before && got != after && s.Op != OpWrite
		if badErr || badState {
			detail := fmt.Sprintf("step %d %s returned %s under injection, want ENOMEM or %s", i+1, s, fault.ErrName(err), fault.ErrName(refErr))
			kind := KindErrno
			if badState {
				kind = KindData
				detail += "; the namespace is neither the state before the step nor after it: " + firstLineDiff(got, after)
			}
			switch why, known := fault.KernelRule(env.fault(), s.call(), err, refErr, got, before, after), fault.KnownFinding(env.fault(), s.call(), err, got); {
			case why != "":
				fs = append(fs, Finding{Kind: kind, Function: "ext4_match", step: i, Detail: why + ": " + detail})
			case known != "":
				fs = append(fs, Finding{Kind: kind, Function: "ext4_rename", step: i, Detail: "known finding of the model: " + known + ": " + detail})
			default:
				fs = append(fs, Finding{Kind: kind, Function: s.kernelFunc(), step: i, Detail: detail})
			}
		}
	}
	if t.live != nil && !oopsed(t) {
		fs = append(fs, leakFindings(t.live, ref.live, t.objs)...)
	}
	return dedup(fs)
}

// isBugRecord reports whether a step's error is a BUG or KASAN record
// (kernel.Bug) that the step raised, which the detectors report.
func isBugRecord(err error) bool {
	var b *kernel.Bug
	return errors.As(err, &b)
}

func dedup(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if !hasKey(out, f.key()) {
			out = append(out, f)
		}
	}
	return out
}
