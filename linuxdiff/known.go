package linuxdiff

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"strings"
)

//go:embed known.json
var knownJSON []byte

// Known is one known difference: a hunk of one script's normalised diff
// that is explained. docs/LINUX-DIFFERENCES.md describes each by its ID.
type Known struct {
	ID     string `json:"id"`
	Kernel string `json:"kernel"` // a release prefix: "6.12" matches 6.12.95+deb12-amd64
	// Script is the script's path as the diff is given it, or a
	// path.Match pattern for a family of scripts that share the cause
	// (scenarios/review/f2fs-*.sh).
	Script string `json:"script"`
	// Hunk is the hunk's changed lines, "-" for vfslab's and "+" for
	// Linux's, without context.
	Hunk []string `json:"hunk"`
	// Right is the side that is right: "linux", "vfslab", or "both" when
	// the two follow different kernel versions or the difference is the
	// harness's.
	Right string `json:"right"`
	// Cause is why the model does not follow: "nonce" (the kernel's own
	// randomness, which the model cannot reproduce), "version" (the
	// kernel version the model follows differs, with the commit), "harness"
	// (the machines differ, not the kernels), "linux-bug".
	Cause string `json:"cause"`
	Why   string `json:"why"`
}

// causes are the accepted causes, and the side each allows to be wrong.
var causes = map[string]string{
	"nonce":     "linux", // vfslab cannot follow the kernel's random bytes
	"version":   "both",
	"harness":   "both",
	"linux-bug": "vfslab",
}

// LoadKnown reads the known differences: the built-in list, or file when
// it is not "".
func LoadKnown(file string) ([]Known, error) {
	data := knownJSON
	name := "known.json"
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		data, name = b, file
	}
	var ks []Known
	if err := json.Unmarshal(data, &ks); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	for i, k := range ks {
		if err := k.check(); err != nil {
			return nil, fmt.Errorf("%s: entry %d (%s): %v", name, i, k.ID, err)
		}
	}
	return ks, nil
}

// check validates an entry: an ID, a kernel, a script, a hunk of - and +
// lines, a cause, and the side its cause allows to be right. A
// difference where vfslab is wrong is a known one only when the model
// cannot follow (the kernel's nonces); every other is a bug to fix.
func (k Known) check() error {
	switch {
	case k.ID == "" || k.Kernel == "" || k.Script == "" || k.Why == "":
		return fmt.Errorf("id, kernel, script and why are required")
	case len(k.Hunk) == 0:
		return fmt.Errorf("no hunk")
	}
	if _, err := path.Match(k.Script, ""); err != nil {
		return fmt.Errorf("script pattern %q: %v", k.Script, err)
	}
	for _, l := range k.Hunk {
		if !strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "+") {
			return fmt.Errorf("hunk line %q starts with neither - (vfslab) nor + (linux)", l)
		}
	}
	right, ok := causes[k.Cause]
	if !ok {
		return fmt.Errorf("cause %q: want nonce, version, harness or linux-bug", k.Cause)
	}
	if k.Right != right {
		return fmt.Errorf("cause %s allows right=%s, not %q (a difference where vfslab is wrong for another reason is fixed in the model)", k.Cause, right, k.Right)
	}
	return nil
}

// covers says whether k is about script: its path, or a script its
// pattern matches.
func (k Known) covers(script string) bool {
	if k.Script == script {
		return true
	}
	ok, err := path.Match(k.Script, script)
	return err == nil && ok
}

// matches says whether k explains hunk h of script on release.
func (k Known) matches(release, script string, changed []string) bool {
	if !strings.HasPrefix(release, k.Kernel) || !k.covers(script) || len(k.Hunk) != len(changed) {
		return false
	}
	for i := range changed {
		if changed[i] != k.Hunk[i] {
			return false
		}
	}
	return true
}
