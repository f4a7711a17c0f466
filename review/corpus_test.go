package review

import (
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/review/fault"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite scenarios/review, the sample of generated sequences run on Linux")

// corpusDir holds a sample of the review's generated sequences as `vfslab
// sh` scripts, relative to the repository root. `vfslab linux diff`
// runs them on Linux as it runs the other scenarios (.ci/run includes
// scenarios/*/*.sh), so that what base does on the sequences the review
// compares variants with is itself compared with the kernel.
const corpusDir = "scenarios/review"

// corpusEnvs are the filesystem configurations of the sample: every
// combination a patch is reviewed on that Linux can run (a hardware
// crypto engine cannot be registered there).
var corpusEnvs = []Env{
	{FS: "ext4"},
	{FS: "ext4", Encrypt: true},
	{FS: "ext4", Encrypt: true, V1: true},
	{FS: "ext4", Casefold: true, Encrypt: true},
	{FS: "f2fs", Casefold: true},
	{FS: "f2fs", Encrypt: true},
	{FS: "f2fs", Encrypt: true, V1: true},
	{FS: "f2fs", Casefold: true, Encrypt: true},
}

// corpusSeed is the seed of the i'th configuration's sequence, as the
// review draws the first sequence of its i'th environment with
// Options.Seed 1 (reviewEnv), so that each configuration gets its own.
func corpusSeed(i int) uint64 { return 1*1000003 + uint64(i)*101 }

// corpusName is the script's file name: the environment, '+' as '-'.
func corpusName(env Env) string {
	return strings.ReplaceAll(env.String(), "+", "-") + ".sh"
}

// corpusScript is the script of the i'th configuration's sample
// sequence on base.
func corpusScript(i int, env Env) string {
	seed := corpusSeed(i)
	seq := Generate(rand.New(rand.NewPCG(seed, 0x7265766965770000)), env, SeqLen)
	return "# A sample of vfslab review's generated sequences, compared with Linux by\n" +
		"# vfslab linux diff; go test ./review -run TestCorpusScripts -update-corpus\n" +
		"# writes it again.\n" +
		Script(env, patch.Set{}, seed, seq, -1, fault.Spec{})
}

// TestCorpusScripts checks that scenarios/review holds, for every
// configuration, the script of the sequence the generator draws now: a
// change to the generator or to Script shows here, and the sample is
// then written again (-update-corpus) and recorded on Linux.
func TestCorpusScripts(t *testing.T) {
	dir := filepath.Join("..", corpusDir)
	want := map[string]bool{}
	for i, env := range corpusEnvs {
		name := corpusName(env)
		want[name] = true
		script := corpusScript(i, env)
		p := filepath.Join(dir, name)
		if *updateCorpus {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("%v (go test ./review -run TestCorpusScripts -update-corpus writes it)", err)
			continue
		}
		if string(got) != script {
			t.Errorf("%s is not the script of the sequence the generator draws for %s now; go test ./review -run TestCorpusScripts -update-corpus writes it again", p, env)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".sh") && !want[e.Name()] {
			t.Errorf("%s: no configuration writes it", filepath.Join(dir, e.Name()))
		}
	}
}
