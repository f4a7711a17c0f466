package patch

import (
	"strings"
	"testing"
)

// FuzzParse: Parse never panics; an error is one line; an accepted
// selection prints (String and Changed) to text that parses back to it.
func FuzzParse(f *testing.F) {
	f.Add("zz-test-open=v1")
	f.Add("zz-test-open=v2, zz-test-bio=bio")
	f.Add("zz-test-open=v1,zz-test-open=v2")
	f.Add("=,=")
	f.Add(" ")
	f.Add("nope=base")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := Parse(text)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("%q: error spans lines: %q", text, err)
			}
			return
		}
		for _, out := range []string{s.String(), s.Changed()} {
			back, err := Parse(out)
			if err != nil || back != s {
				t.Fatalf("%q parses to %q, which parses to %q (%v)", text, s.String(), back.String(), err)
			}
		}
	})
}
