package patch

import (
	"encoding/json"
	"strings"
	"testing"
)

var (
	testOpen = Register(&Patch{ID: "zz-test-open", Seed: "900", Variants: []Variant{{Name: "base"}, {Name: "v1"}, {Name: "v2"}}})
	testBio  = Register(&Patch{ID: "zz-test-bio", Seed: "901", Variants: []Variant{{Name: "workqueue"}, {Name: "inline"}, {Name: "bio"}}})
)

type testOpenVariant uint8

const (
	testOpenBase testOpenVariant = iota
	testOpenV1
	testOpenV2
)

type testBioVariant uint8

const (
	testBioWorkqueue testBioVariant = iota
	testBioInline
	testBioWhole
)

var (
	testOpenSel = Bind[testOpenVariant](testOpen)
	testBioSel  = Bind[testBioVariant](testBio)
)

func TestSelector(t *testing.T) {
	s := Set{}.MustWith(testOpen, "v2").MustWith(testBio, "inline")
	if testOpenSel.Of(&s) != testOpenV2 || testBioSel.Of(&s) != testBioInline {
		t.Fatalf("Of: %d %d", testOpenSel.Of(&s), testBioSel.Of(&s))
	}
	var zero Set
	switch testBioSel.Of(&zero) {
	case testBioWorkqueue:
	case testBioInline, testBioWhole:
		t.Fatal("zero Set is not the base")
	}
	if testOpenSel.Patch() != testOpen || testOpen.Enum() != "github.com/vfslab/vfslab/patch.testOpenVariant" {
		t.Fatalf("Patch %v, Enum %q", testOpenSel.Patch(), testOpen.Enum())
	}
	// A patch bound twice panics. (Called through a func value: the
	// source check of exhaustive_test.go rightly rejects a direct call.)
	bind := Bind[testBioVariant]
	defer func() {
		if recover() == nil {
			t.Error("a second Bind did not panic")
		}
	}()
	bind(testOpen)
}

func TestZeroSetIsBase(t *testing.T) {
	var s Set
	if s.Get(testOpen) != 0 || s.Variant(testBio) != "workqueue" || !s.Is(testOpen, "base") || !s.Is(testBio, "base") {
		t.Fatalf("zero Set: %v", s)
	}
	if s.Changed() != "" {
		t.Fatalf("Changed() = %q", s.Changed())
	}
}

func TestParseAndString(t *testing.T) {
	s, err := Parse("zz-test-open=v2, zz-test-bio=bio")
	if err != nil {
		t.Fatal(err)
	}
	if !s.Is(testOpen, "v2") || !s.Is(testBio, "bio") {
		t.Fatalf("parsed %v", s)
	}
	back, err := Parse(s.String())
	if err != nil || back != s {
		t.Fatalf("round trip: %v, %v", back, err)
	}
	if !strings.Contains(s.String(), "zz-test-bio=bio,zz-test-open=v2") {
		t.Fatalf("String() = %q", s.String())
	}
	if s.Changed() != "zz-test-bio=bio,zz-test-open=v2" {
		t.Fatalf("Changed() = %q", s.Changed())
	}
	if b, _ := Parse("zz-test-bio=base"); !b.Is(testBio, "workqueue") {
		t.Fatal("base alias")
	}
}

func TestParseErrorsListValid(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"nope=v1", "valid: "},
		{"zz-test-open=v9", "valid: base, v1, v2"},
		{"zz-test-open", "want id=variant"},
		{"zz-test-open=v1,zz-test-open=v2", "twice"},
	} {
		_, err := Parse(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) err = %v, want it to mention %q", tc.in, err, tc.want)
		}
	}
	_, err := Parse("nope=v1")
	if !strings.Contains(err.Error(), "zz-test-open") {
		t.Errorf("unknown-patch error does not list IDs: %v", err)
	}
}

func TestJSON(t *testing.T) {
	s := Set{}.MustWith(testOpen, "v1")
	b, err := json.Marshal(struct{ Patches Set }{s})
	if err != nil {
		t.Fatal(err)
	}
	var back struct{ Patches Set }
	if err := json.Unmarshal(b, &back); err != nil || back.Patches != s {
		t.Fatalf("json round trip: %s -> %v, %v", b, back.Patches, err)
	}
}

func TestRegisterRejectsDuplicates(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("duplicate Register did not panic")
		}
	}()
	Register(&Patch{ID: "zz-test-open", Variants: []Variant{{Name: "base"}}})
}
