package review

import (
	"context"
	"flag"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/review/fault"
	"github.com/vfslab/vfslab/vfs"
)

// lostLinkOps is a directory's inode operations with a planted base bug:
// ext4_rename as if it forgot every link-count update (the overwritten
// target's drop_nlink, and a moved directory's parents' drop_nlink and
// inc_nlink), the kind of bug a patch to ext4_rename could bring.
type lostLinkOps struct{ vfs.InodeOperations }

func (o lostLinkOps) Rename(t *kernel.Task, oldDir *vfs.Inode, oldD *vfs.Dentry, newDir *vfs.Inode, newD *vfs.Dentry, flags uint32) error {
	target := newD.Inode()
	var tn uint32
	if target != nil {
		tn = target.Nlink()
	}
	on, nn := oldDir.Nlink(), newDir.Nlink()
	err := o.InodeOperations.Rename(t, oldDir, oldD, newDir, newD, flags)
	if err == nil {
		if target != nil && !target.IsDir() {
			target.SetNlink(tn)
		}
		oldDir.SetNlink(on)
		newDir.SetNlink(nn)
	}
	return err
}

// plantLostLink plants lostLinkOps on the directories a rename step
// starts from (their inodes are in the cache for the step: the plant
// looks them up just before it).
func plantLostLink(m *machine, s Step) {
	if s.Op != OpRename || m.env.FS != "ext4" {
		return
	}
	for _, rel := range []string{s.A, s.B} {
		dir := workDir
		if i := strings.LastIndexByte(rel, '/'); i >= 0 {
			dir = path(rel[:i])
		}
		d, err := m.p.LookupDentry(m.t, dir, false)
		if err != nil {
			continue
		}
		if inode := d.Inode(); inode != nil && inode.IsDir() {
			if _, done := inode.Op.(lostLinkOps); !done {
				inode.Op = lostLinkOps{inode.Op}
			}
		}
		dput(m.t, d)
	}
}

// TestOracleFindsPlantedBaseBug: with a bug planted in base's
// ext4_rename (through the test-only plant hook), the review reports a
// model finding in ext4_rename, whichever variant it reviews, and the
// variant stays clean (its base has the same bug); without the plant the
// same review has no model finding.
func TestOracleFindsPlantedBaseBug(t *testing.T) {
	opts := Options{Patches: []string{"fscrypt-file-open=v1"}, Seed: 1, Steps: 4 * SeqLen, NoPerf: true, NoFaults: true,
		Envs: []Env{{FS: "ext4"}, {FS: "ext4", Encrypt: true}}}
	clean, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(clean.ModelFindings) != 0 {
		t.Fatalf("model findings without a planted bug: %v", clean.ModelFindings)
	}
	plant = plantLostLink
	defer func() { plant = nil }()
	res, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	var found *Finding
	for i, f := range res.ModelFindings {
		if f.Kind == KindInvariant && f.Function == "ext4_rename" {
			found = &res.ModelFindings[i]
		}
	}
	if found == nil {
		t.Fatalf("the planted ext4_rename bug is not reported: model findings %v, kernel findings %v", res.ModelFindings, res.KernelFindings)
	}
	t.Logf("%s\n%s", found, found.Reproducer)
	if !strings.Contains(found.Detail, "nlink") || !strings.Contains(found.Reproducer, "mv -T") {
		t.Errorf("the finding does not say which link count, or its reproducer has no rename: %s\n%s", found, found.Reproducer)
	}
	if v := res.Variants[0]; !v.Clean() {
		t.Errorf("the variant is blamed for base's bug: %v", v.Findings)
	}
}

var oracleSeqs = flag.Int("review.oracleseqs", 4, "generated sequences per environment for TestOracleCleanOnBase")

// TestOracleCleanOnBase: base passes the oracle on generated sequences
// of every environment the review uses, but for the model findings the
// review reports (listed here with their reason).
func TestOracleCleanOnBase(t *testing.T) {
	known := map[string]string{
		// Two spellings of a 255-byte name that casefold alike get two
		// entries and two inodes in a casefolded f2fs directory, as on
		// Linux 6.12 (f2fs_init_casefolded_name cannot fold them into
		// its 255-byte buffer; docs/KERNEL-FINDINGS.md,
		// scenarios/f2fs/casefold-long-names.sh).
		"f2fs": "casefold",
	}
	envs := []Env{{FS: "ext4"}, {FS: "ext4", Encrypt: true}, {FS: "ext4", Casefold: true, Encrypt: true}, {FS: "ext4", Encrypt: true, V1: true},
		{FS: "f2fs", Encrypt: true}, {FS: "f2fs", Casefold: true, Encrypt: true}, {FS: "f2fs", Casefold: true}}
	n := *oracleSeqs
	if testing.Short() {
		n = 1
	}
	for _, env := range envs {
		for seed := uint64(0); seed < uint64(n); seed++ {
			seq := Generate(rand.New(rand.NewPCG(seed, 0x7265766965770000)), env, 2*SeqLen)
			tr, err := execute(env, patch.Set{}, seed, seq, -1, fault.Spec{})
			if err != nil {
				t.Fatal(err)
			}
			tree := GenerateTree(rand.New(rand.NewPCG(seed, 1)), env, 2*SeqLen)
			tt, err := execute(env, patch.Set{}, seed, tree, -1, fault.Spec{})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range append(tr.findings, tt.findings...) {
				if f.Kind != KindInvariant {
					continue
				}
				if why := known[env.FS]; why != "" && env.Casefold && strings.Contains(f.Detail, "names") {
					t.Logf("%s seed %d (known: %s): %s", env, seed, why, f)
					continue
				}
				t.Errorf("%s seed %d: %s", env, seed, f)
			}
		}
	}
}

// permissiveOpen is a file's operations with a planted variant bug: an
// open fscrypt_file_open refuses with EPERM (an inconsistent context)
// succeeds, as a fast path that answers 0 for an encrypted parent would.
type permissiveOpen struct{ vfs.FileOperations }

func (o permissiveOpen) Open(t *kernel.Task, inode *vfs.Inode, f *vfs.File) error {
	if err := o.FileOperations.Open(t, inode, f); err != errno.EPERM {
		return err
	}
	return nil
}

// TestInconsistentContextReached: tree sequences give a file a context
// its encrypted parent does not permit; base refuses its open with
// EPERM, and a variant planted to return 0 there is an errno-mismatch
// finding of that variant.
func TestInconsistentContextReached(t *testing.T) {
	env := Env{FS: "ext4", Encrypt: true}
	eperm := 0
	for seed := uint64(0); seed < 8 && eperm == 0; seed++ {
		seq := GenerateTree(rand.New(rand.NewPCG(seed, 0x7472656573657100)), env, SeqLen)
		tr, err := execute(env, patch.Set{}, seed, seq, -1, fault.Spec{})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range tr.results {
			if seq[i].Op == OpRead && i > 0 && seq[i-1].Op == OpCorruptContext && tr.results[i-1].err == nil {
				if r.err != errno.EPERM {
					t.Errorf("seed %d: open after %s returned %v, want EPERM", seed, seq[i-1], r.err)
				}
				eperm++
			}
		}
		for _, f := range tr.findings {
			if f.Kind == KindInvariant {
				t.Errorf("seed %d: %s", seed, f)
			}
		}
	}
	if eperm == 0 {
		t.Fatal("no tree sequence made an inconsistent context")
	}
	plant = func(m *machine, s Step) {
		if m.k.Patches().Changed() == "" || s.Op != OpRead {
			return
		}
		d, err := m.p.LookupDentry(m.t, path(s.A), false)
		if err != nil {
			return
		}
		if inode := d.Inode(); inode != nil && inode.IsReg() {
			if _, done := inode.Fop.(permissiveOpen); !done {
				inode.Fop = permissiveOpen{inode.Fop}
			}
		}
		dput(m.t, d)
	}
	defer func() { plant = nil }()
	res, err := Run(context.Background(), Options{Patches: []string{"fscrypt-file-open=v2"}, Seed: 1, Steps: 2 * SeqLen, NoPerf: true, NoFaults: true,
		Envs: []Env{env}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range res.Variants[0].Findings {
		if f.Kind == KindErrno && strings.Contains(f.Detail, "base EPERM") {
			found = true
			t.Logf("%s\n%s", f, f.Reproducer)
		}
	}
	if !found {
		t.Errorf("the planted fscrypt_file_open bug is not reported: %v", res.Variants[0].Findings)
	}
}

// TestBugRecordIsNotAnErrno: a step that oopsed returns its KASAN record
// as its error; the detectors' row reports it, and judgeInjected adds no
// errno-mismatch row for the same root cause.
func TestBugRecordIsNotAnErrno(t *testing.T) {
	seq := []Step{{Op: OpStat, A: "alpha"}}
	ref := &trace{results: []result{{err: errno.ENOENT}}, start: "", snaps: []string{""}}
	bug := &kernel.Bug{Kind: "KASAN: double-free", Func: "kfree", Msg: "freed twice"}
	got := &trace{results: []result{{err: bug}}, snaps: []string{""},
		findings: []Finding{{Kind: KindDoubleFree, Function: "kfree", step: 0}}}
	fs := judgeInjected(Env{FS: "f2fs", Casefold: true, Encrypt: true}, seq, 0, got, ref)
	if len(fs) != 1 || fs[0].Kind != KindDoubleFree {
		t.Errorf("judgeInjected = %v, want the double-free row alone", fs)
	}
}
