package dcache

import (
	"testing"

	"github.com/vfslab/vfslab/fsunicode"
)

// The generic case-insensitive operations over the real encoding: NFD and
// casefolding of Unicode 12.1 as fs/unicode does them.
var _ Encoding = (*fsunicode.Map)(nil)

func TestCaseInsensitiveUnicode(t *testing.T) {
	um, err := fsunicode.Load("12.1.0")
	if err != nil {
		t.Fatal(err)
	}
	for _, strict := range []bool{false, true} {
		e := newEnv(t, Config[tInode]{})
		ops := GenericCIOps(CIConfig[tInode]{
			Encoding:      um,
			Strict:        strict,
			NeedsCasefold: func(dir *tInode) bool { return dir.cf },
		})
		DSetDOp(e.t, e.root, ops)
		cf := e.add(t, e.root, "cf", DirectoryType)
		cf.Inode().cf = true
		cafe := e.create(t, cf, "Caf\u00e9")     // precomposed é
		kelvin := e.create(t, cf, "\u212a-file") // KELVIN SIGN
		for _, c := range []struct {
			name string
			want *Dentry[tInode]
		}{
			{"Caf\u00e9", cafe},
			{"CAFE\u0301", cafe}, // decomposed, upper case
			{"caf\u00c9", cafe},  // precomposed É
			{"cafe", nil},
			{"k-file", kelvin},
			{"K-FILE", kelvin},
			{"\u212a-file", kelvin},
		} {
			got, err := DHashAndLookup(e.t, cf, c.name)
			if err != nil || got != c.want {
				t.Errorf("strict=%v: lookup %+q = %v, %v; want %v", strict, c.name, got, err, c.want)
			}
			Dput(e.t, got)
		}
		_, err := DHashAndLookup(e.t, cf, "caf\xe9")
		if strict != (err != nil) {
			t.Errorf("strict=%v: invalid UTF-8 lookup err = %v", strict, err)
		}
		Dput(e.t, cafe)
		Dput(e.t, kelvin)
	}
}
