package linuxdiff

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Recorded is one script's Linux output kept on disk (`vfslab linux diff
// --record DIR`), so that a later diff, and the tests, compare vfslab with
// Linux without booting it. SHA256 is the script's: a recording of another
// version of the script is stale.
type Recorded struct {
	Script     string `json:"script"`
	SHA256     string `json:"sha256"`
	Release    string `json:"release"`
	ConfigHash string `json:"config_hash"`
	Stdout     string `json:"stdout"`
	Stderr     string `json:"stderr"`
	Status     int    `json:"status"`
	Dmesg      string `json:"dmesg"`
}

// ScriptHash is the first 16 hex digits of the SHA-256 of a script.
func ScriptHash(src []byte) string {
	s := sha256.Sum256(src)
	return hex.EncodeToString(s[:8])
}

// RecordPath is where a script's recording lives under dir:
// DIR/RELEASE/SCRIPT.json.
func RecordPath(dir, release, script string) string {
	clean := filepath.ToSlash(filepath.Clean(script))
	clean = strings.TrimPrefix(strings.ReplaceAll(clean, "../", ""), "/")
	return filepath.Join(dir, release, filepath.FromSlash(clean)+".json")
}

// Save writes a recording.
func Save(dir string, r Recorded) error {
	p := RecordPath(dir, r.Release, r.Script)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(p, append(b, '\n'), 0o644)
}

// LoadRecorded reads the recording of spec for release; a missing or
// stale one is an error saying so.
func LoadRecorded(dir, release string, spec *Spec) (Recorded, error) {
	var r Recorded
	p := RecordPath(dir, release, spec.Path)
	b, err := os.ReadFile(p)
	if err != nil {
		return r, fmt.Errorf("no recording of %s for %s in %s", spec.Path, release, dir)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %v", p, err)
	}
	if r.SHA256 != ScriptHash(spec.Source) {
		return r, fmt.Errorf("the recording %s is of another version of %s (record it again with vfslab linux diff --record %s)", p, spec.Path, dir)
	}
	return r, nil
}

// Releases lists the releases recorded under dir.
func Releases(dir string) []string {
	es, _ := os.ReadDir(dir)
	var out []string
	for _, e := range es {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// Output is the recording as one side's output.
func (r Recorded) Output() Output {
	return Output{Stdout: r.Stdout, Stderr: r.Stderr, Status: r.Status, Dmesg: r.Dmesg}
}
