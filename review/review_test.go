package review

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/shell"

	_ "github.com/vfslab/vfslab/sim" // registers the headlines and the workloads' patches' users
)

// reviewLong runs the seed expectations with campaigns 8 times longer and
// fault injection on every row: minutes, so run it with -timeout 0.
var reviewLong = flag.Bool("review.long", false, "run the seed expectations with longer campaigns and fault injection on every row (use -timeout 0)")

func TestShrink(t *testing.T) {
	var seq []Step
	for i := 0; i < 40; i++ {
		seq = append(seq, Step{Op: OpStat, A: string(rune('a' + i%26))})
	}
	seq[7] = Step{Op: OpCreate, A: "x"}
	seq[29] = Step{Op: OpUnlink, A: "x"}
	// Fails when a create of x comes before an unlink of x, with the
	// kept (injected) step 29.
	runs := 0
	fails := func(s []Step, keep int) bool {
		runs++
		if keep < 0 || s[keep].Op != OpUnlink {
			t.Fatalf("the kept step was lost: %v at %d", s, keep)
		}
		created := false
		for _, st := range s {
			created = created || st.Op == OpCreate
			if st.Op == OpUnlink && created {
				return true
			}
		}
		return false
	}
	got, k := Shrink(seq, 29, 200, fails)
	want := []Step{{Op: OpCreate, A: "x"}, {Op: OpUnlink, A: "x"}}
	if !reflect.DeepEqual(got, want) || k != 1 {
		t.Errorf("Shrink = %v (kept at %d), want %v (kept at 1)", got, k, want)
	}
	if runs > 200 {
		t.Errorf("%d runs, budget 200", runs)
	}
	// The budget is honoured.
	runs = 0
	Shrink(seq, 29, 3, fails)
	if runs > 3 {
		t.Errorf("budget 3: %d runs", runs)
	}
}

func TestFindingString(t *testing.T) {
	f := Finding{Kind: KindLeak, Function: "fscrypt_fname_encrypt", Detail: "kmemleak: one\n  two"}
	if got, want := f.String(), "leak in fscrypt_fname_encrypt: kmemleak: one two"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

func TestJSONShape(t *testing.T) {
	res := &Result{
		Variants: []VariantVerdict{{Patch: "p", Variant: "v", Findings: []Finding{{Kind: KindBug, Function: "f", Detail: "d", Reproducer: "r"}},
			Perf: &Perf{Workload: "w", EventDeltas: map[string]float64{"kmalloc": -1}}}},
		KernelFindings: []Finding{{Kind: KindErrno, Function: "ext4_match", Detail: "d", Reproducer: "r"}},
		ModelFindings:  []Finding{},
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	keys := func(v any) []string {
		var ks []string
		for k := range v.(map[string]any) {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	if got := keys(m); !reflect.DeepEqual(got, []string{"kernel_findings", "model_findings", "variants"}) {
		t.Errorf("top-level keys %v", got)
	}
	v := m["variants"].([]any)[0]
	if got := keys(v); !reflect.DeepEqual(got, []string{"findings", "patch", "perf", "variant"}) {
		t.Errorf("variant keys %v", got)
	}
	f := v.(map[string]any)["findings"].([]any)[0]
	findingKeys := []string{"detail", "first_step", "function", "kind", "occurrences", "reproducer", "stack"}
	if got := keys(f); !reflect.DeepEqual(got, findingKeys) {
		t.Errorf("finding keys %v", got)
	}
	kf := m["kernel_findings"].([]any)[0]
	if got := keys(kf); !reflect.DeepEqual(got, findingKeys) {
		t.Errorf("kernel finding keys %v", got)
	}
	// A clean variant has an empty list, not null.
	b, _ = json.Marshal(VariantVerdict{Patch: "p", Variant: "v", Findings: []Finding{}})
	if !bytes.Contains(b, []byte(`"findings":[]`)) {
		t.Errorf("clean verdict: %s", b)
	}
}

// TestGenerateCoversTheOps: the generator draws every operation the
// review promises, names up to 255 bytes, and multi-page writes.
func TestGenerateCoversTheOps(t *testing.T) {
	env := Env{FS: "f2fs", Casefold: true, Encrypt: true}
	seen := map[Op]bool{}
	longest, biggest := 0, int64(0)
	for i := 0; i < 20; i++ {
		for _, s := range Generate(rand.New(rand.NewPCG(uint64(i), 1)), env, SeqLen) {
			seen[s.Op] = true
			for _, p := range []string{s.A, s.B} {
				longest = max(longest, len(p[strings.LastIndexByte(p, '/')+1:]))
			}
			biggest = max(biggest, s.Off+s.Len)
		}
	}
	for _, op := range []Op{OpCreate, OpWrite, OpTruncate, OpRead, OpReadBio, OpStat, OpGetdents, OpMkdir, OpRmdir,
		OpUnlink, OpLink, OpRename, OpAddKey, OpRemoveKey, OpDropCaches} {
		if !seen[op] {
			t.Errorf("no %s drawn", op)
		}
	}
	if longest != 255 || biggest < 3*4096 {
		t.Errorf("longest name %d, largest write end %d: want 255 and several pages", longest, biggest)
	}
}

// TestReproducerRunsInShell: the reproducer of seed 001 v2's KASAN
// report, pasted into vfslab sh, makes the same report.
func TestReproducerRunsInShell(t *testing.T) {
	res, err := Run(context.Background(), Options{Patches: []string{"f2fs-lookup-prealloc=v2"}, Seed: 1, Steps: SeqLen, NoPerf: true, NoFaults: true,
		Envs: []Env{{FS: "f2fs", Casefold: true, Encrypt: true}}})
	if err != nil {
		t.Fatal(err)
	}
	var f *Finding
	for i, g := range res.Variants[0].Findings {
		if g.Kind == KindOOB {
			f = &res.Variants[0].Findings[i]
		}
	}
	if f == nil {
		t.Fatalf("no %s finding: %v", KindOOB, res.Variants[0].Findings)
	}
	if n := strings.Count(f.Reproducer, "\n"); n > 14 {
		t.Errorf("reproducer of %d lines is not shrunk:\n%s", n, f.Reproducer)
	}
	script := filepath.Join(t.TempDir(), "repro.sh")
	if err := os.WriteFile(script, []byte(f.Reproducer), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	shell.Main([]string{"--seed", "1", script}, strings.NewReader(""), &out, &errb)
	if !strings.Contains(out.String()+errb.String(), "KASAN: slab-out-of-bounds") {
		t.Errorf("the reproducer does not reproduce in vfslab sh:\n%s\nstdout:\n%s\nstderr:\n%s", f.Reproducer, out.String(), errb.String())
	}
}

// expectation is one row of the expectations for the seeds'
// variants: the findings' kinds a variant's verdict must hold (none:
// clean) on the environments given (nil: the patch's PatchEnvs).
type expectation struct {
	patch, variant string
	envs           []Env
	// kinds are "KIND" or "KIND in FUNCTION" entries the verdict must
	// have, and nothing else; onlyInjected allows findings made under
	// fault injection only; faults runs the fault injection in the
	// default run (every row runs it with -review.long).
	kinds        []string
	allow        []string // findings the verdict may also have
	onlyInjected bool
	wantInjected bool // at least one finding under fault injection
	faults       bool
	// pending marks a row whose model is not there yet: the test skips
	// it with its reason.
	pending string
}

var expectations = []expectation{
	{patch: "fscrypt-fname-onstack", variant: "v2", envs: []Env{{FS: "ext4", Encrypt: true}, {FS: "f2fs", Casefold: true, Encrypt: true}},
		kinds: []string{KindLeak + " in fscrypt_fname_encrypt"},
		// As posted v2 still kmallocs the encryption request and never
		// frees it (only decryption is on the stack).
	},
	{patch: "fscrypt-fname-onstack", variant: "v2", envs: []Env{{FS: "f2fs", Encrypt: true, EngineReqsize: 256}},
		kinds: []string{KindDMAStack}, allow: []string{KindLeak + " in fscrypt_fname_encrypt"},
		// The 6.6 kernel hands the on-stack request to the driver
		// (DMA-API WARN), where later kernels answer EAGAIN.
	},
	// As posted, encryption overwrites the on-stack request with a
	// kmalloc'd one (and leaks it): the leak may come with the BUG.
	{patch: "fscrypt-fname-onstack", variant: "v2", envs: []Env{{FS: "f2fs", Encrypt: true, EngineReqsize: 512}},
		kinds: []string{KindBug}, allow: []string{KindLeak + " in fscrypt_fname_encrypt"}},
	{patch: "fscrypt-fname-onstack", variant: "upstream"},
	{patch: "f2fs-lookup-prealloc", variant: "v2", envs: []Env{{FS: "f2fs", Casefold: true, Encrypt: true}},
		kinds: []string{KindOOB + " in generic_ci_match"}},
	{patch: "f2fs-lookup-prealloc", variant: "v4", faults: true, onlyInjected: true},
	// As posted, v4's error paths (generic_ci_match's kfree of the
	// prealloc buffer, then __f2fs_find_entry's) carry what they carry:
	// a finding under fault injection, a use-after-free or double free.
	{patch: "f2fs-lookup-prealloc", variant: "v4", envs: []Env{{FS: "f2fs", Casefold: true, Encrypt: true}}, faults: true,
		onlyInjected: true, wantInjected: true,
	},
	{patch: "fscrypt-v1-kdf", variant: "sync"},
	{patch: "fscrypt-v1-kdf", variant: "aeslib"},
	// The mismatch shows in fscrypt_decrypt_bio (the review's read bios)
	// and, once reads go through the read path of bios, in filemap_read.
	{patch: "crypto-bio", variant: "bio", kinds: []string{KindData}}, // The model copies the IV per data unit; as posted the AES-NI XTS
	// glue increments the tweak, not the IV, from the second unit on.

	{patch: "crypto-bio", variant: "inline"},
	{patch: "crypto-bio", variant: "chain"},
	{patch: "fscrypt-file-open", variant: "v1"},
	{patch: "fscrypt-file-open", variant: "v2"},
}

// TestSeedExpectations pins the expectation for every seed
// variant: the verdict holds the expected kinds (and functions) and
// nothing else. Rows marked pending need the as-posted models of other
// engineers and are skipped with their reason. -review.long runs longer
// campaigns with fault injection on every row.
func TestSeedExpectations(t *testing.T) {
	steps := SeqLen
	if *reviewLong {
		steps = 8 * SeqLen
	}
	for _, e := range expectations {
		t.Run(e.patch+"="+e.variant+envNames(e.envs), func(t *testing.T) {
			if e.pending != "" {
				t.Skip("pending: " + e.pending)
			}
			t.Parallel()
			if _, ok := patch.Lookup(e.patch); !ok {
				t.Fatalf("no patch %s", e.patch)
			}
			res, err := Run(context.Background(), Options{Patches: []string{e.patch + "=" + e.variant}, Seed: 1, Steps: steps,
				NoPerf: true, NoFaults: !e.faults && !*reviewLong, Envs: e.envs})
			if err != nil {
				t.Fatal(err)
			}
			fs := res.Variants[0].Findings
			matched := map[string]bool{}
			for _, f := range fs {
				ok := false
				for _, k := range e.kinds {
					if k == f.Kind || k == f.Kind+" in "+f.Function {
						ok, matched[k] = true, true
					}
				}
				if e.onlyInjected && strings.Contains(f.Detail, "under fault injection") {
					ok = true
				}
				for _, k := range e.allow {
					ok = ok || k == f.Kind || k == f.Kind+" in "+f.Function
				}
				if !ok {
					t.Errorf("unexpected finding: %s\n%s", f, f.Reproducer)
				}
			}
			for _, k := range e.kinds {
				if !matched[k] {
					t.Errorf("no %s finding; got %v", k, fs)
				}
			}
			if e.wantInjected {
				n := 0
				for _, f := range fs {
					if strings.Contains(f.Detail, "under fault injection") {
						n++
					}
				}
				if n == 0 {
					t.Errorf("no finding under fault injection; got %v", fs)
				}
			}
		})
	}
}

func envNames(envs []Env) string {
	if len(envs) == 0 {
		return ""
	}
	var s []string
	for _, e := range envs {
		s = append(s, e.String())
	}
	return "/" + strings.Join(s, ",")
}

// TestFaultInjectionFindsAFakeErrorPath: an injected failure whose
// result is neither ENOMEM nor the uninjected one is a finding, and a
// documented kernel rule is not (judgeInjected).
func TestJudgeInjected(t *testing.T) {
	seq := []Step{{Op: OpStat, A: "Alpha"}}
	ref := &trace{results: []result{{}}, start: "/d/Alpha\n", snaps: []string{"/d/Alpha\n"}}
	bad := &trace{results: []result{{err: errENOENTForTest}}, snaps: []string{"/d/Alpha\n"}}
	if fs := judgeInjected(Env{FS: "f2fs", Casefold: true, Encrypt: true}, seq, 0, bad, ref); len(fs) != 1 || fs[0].Kind != KindErrno || fs[0].Function != "vfs_statx" {
		t.Errorf("f2fs: lookup ENOENT under injection: %v, want one errno-mismatch in vfs_statx", fs)
	}
	fs := judgeInjected(Env{FS: "ext4", Casefold: true, Encrypt: true}, seq, 0, bad, ref)
	if len(fs) != 1 || fs[0].Function != "ext4_match" {
		t.Errorf("ext4 casefold+encrypt: %v, want the ext4_match rule", fs)
	}
	if fs := judgeInjected(Env{FS: "f2fs"}, seq, 0, &trace{results: []result{{err: errENOMEMForTest}}, snaps: []string{"/d/Alpha\n"}}, ref); len(fs) != 0 {
		t.Errorf("ENOMEM under injection: %v, want nothing", fs)
	}
	partial := &trace{results: []result{{err: errENOMEMForTest}}, snaps: []string{"/d/Alpha\n/d/half\n"}}
	if fs := judgeInjected(Env{FS: "f2fs"}, seq, 0, partial, ref); len(fs) != 1 || fs[0].Kind != KindData {
		t.Errorf("a state neither before nor after: %v, want a data-mismatch", fs)
	}
}

var (
	errENOENTForTest = errno.ENOENT
	errENOMEMForTest = errno.ENOMEM
)

// TestCompareFindsDataMismatch: the differential check reports the first
// step whose data differ from base's, where they differ, and only that.
func TestCompareFindsDataMismatch(t *testing.T) {
	seq := []Step{{Op: OpWrite, A: "f", Len: 3 * 4096}, {Op: OpReadBio, A: "f"}, {Op: OpRead, A: "f"}}
	good := bytes.Repeat([]byte{'A'}, 3*4096)
	bad := append([]byte(nil), good...)
	bad[4096+5] ^= 1
	b := &trace{results: []result{{}, {data: good}, {data: good}}, dumps: "d"}
	v := &trace{results: []result{{}, {data: bad, show: "decrypted data differ"}, {data: good}}, dumps: "d"}
	vf, bf := compare(seq, v, b, nil)
	if len(bf) != 0 || len(vf) != 1 || vf[0].Kind != KindData || vf[0].Function != "fscrypt_decrypt_bio" || !strings.Contains(vf[0].Detail, "from byte 4101 (page 1)") {
		t.Errorf("compare: %v (base %v), want one data-mismatch in fscrypt_decrypt_bio from byte 4101", vf, bf)
	}
	if vf, _ := compare(seq, b, b, nil); len(vf) != 0 {
		t.Errorf("base against itself: %v", vf)
	}
	v.dumps = "e"
	v.results[1] = result{data: good}
	if vf, _ := compare(seq, v, b, nil); len(vf) != 1 || !strings.Contains(vf[0].Function, "directory blocks") {
		t.Errorf("different directory blocks: %v", vf)
	}
}

// TestMergeFindingsOneRowPerRootCause: findings of the same kind,
// function and allocation stack are one row with their occurrences
// summed; another stack is another row.
func TestMergeFindingsOneRowPerRootCause(t *testing.T) {
	a := Finding{Kind: KindLeak, Function: "fscrypt_file_open", Stack: []string{"d_alloc", "lookup_slow"}, Occurrences: 1}
	b := a
	b.Detail, b.Occurrences = "another sequence", 2
	c := a
	c.Stack = []string{"d_alloc", "lookup_open"}
	got := mergeFindings(nil, []Finding{a, b, c})
	if len(got) != 2 || got[0].Occurrences != 3 || got[1].Occurrences != 1 {
		t.Errorf("merge: %+v, want two rows with 3 and 1 occurrences", got)
	}
	if a.Key() == c.Key() || a.key() != c.key() {
		t.Errorf("Key %q vs %q: the stack must tell root causes apart; key (base comparison) must not", a.Key(), c.Key())
	}
}
