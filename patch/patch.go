// Package patch is the registry of the kernel patches vfslab models and of
// their variants, and the Set type that chooses one variant per patch for a
// simulated system.
//
// A patch is declared next to the code it changes, in that package's
// patch_<id>.go file, by a package-level call to Register, with a variant
// enum (a uint8 type whose constants follow Variants) bound to it by Bind;
// the code then asks the simulated kernel's Set (kernel.Kernel.Patches)
// which variant to run, and switches over every constant of the enum:
//
//	type FileOpenVariant uint8
//	const (FileOpenBase FileOpenVariant = iota; FileOpenV1; FileOpenV2)
//	var FileOpenPatch = patch.Register(&patch.Patch{ID: "fscrypt-file-open", ...,
//		Variants: []patch.Variant{{Name: "base"}, {Name: "v1"}, {Name: "v2"}}})
//	var fileOpen = patch.Bind[FileOpenVariant](FileOpenPatch)
//	...
//	switch fileOpen.Of(t.K.Patches()) { case FileOpenBase: ...; case FileOpenV1, FileOpenV2: ... }
//
// A test (exhaustive_test.go) checks over the module's source that every
// registered patch has an enum with one constant per variant and that every
// switch over an enum lists all its constants.
//
// Variant 0 is always the code before the patch ("base"; crypto-bio calls it
// "workqueue", and "base" is accepted as its alias). The zero Set selects
// variant 0 of every patch. See docs/ADDING-A-PATCH.md.
package patch

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// MaxPatches bounds the registry; it sizes a Set.
const MaxPatches = 32

// Variant is one version of a patched piece of code.
type Variant struct {
	// Name is the variant's stable ID ("base", "v2", "upstream", ...).
	Name string
	// Summary says in one line what the variant's code does.
	Summary string
}

// Patch describes a kernel patch and the variants the simulator models.
// Everything but index is data from the patch's mailing-list text
// (../shared/seeds) and patches.md.
type Patch struct {
	// ID is the stable identifier used in CLI flags, JSON and benchmarks.
	ID string
	// Seed is the seed file number ("000".."004").
	Seed string
	// Subject, Author and Date are those of the posted patch.
	Subject string
	Author  string
	Date    string
	// Fate says what became of it upstream.
	Fate string
	// Files lists the kernel files the patch touches.
	Files []string
	// Reported holds the figures the patch reported, one line each.
	Reported []string
	// Variants lists the modelled variants; Variants[0] is the base.
	Variants []Variant

	index int
	// enum is the package path and name of the variant enum type bound
	// by Bind ("" before).
	enum string
}

// Enum returns the package-qualified name of p's variant enum type
// ("github.com/vfslab/vfslab/hooks.FileOpenVariant"), or "" when Bind has
// not been called for p.
func (p *Patch) Enum() string {
	mu.RLock()
	defer mu.RUnlock()
	return p.enum
}

// VariantEnum is the constraint of a patch's variant enum: a uint8 type whose
// constants, in Variants order starting at 0, name the variants.
type VariantEnum interface{ ~uint8 }

// Selector reads one patch's variant from a Set as the patch's enum type
// V. It is what Bind returns; the zero Selector is not usable.
type Selector[V VariantEnum] struct{ p *Patch }

// Bind ties the variant enum type V to p and returns the typed accessor of
// p's variant. It is called once per patch, from a package-level var
// declaration beside Register; binding a patch twice, or V to a second
// patch, panics (a programming error found at start-up).
func Bind[V VariantEnum](p *Patch) Selector[V] {
	t := reflect.TypeFor[V]()
	name := t.PkgPath() + "." + t.Name()
	mu.Lock()
	defer mu.Unlock()
	if p.enum != "" {
		panic("patch: " + p.ID + " already bound to " + p.enum)
	}
	for _, q := range patches {
		if q.enum == name {
			panic("patch: " + name + " already bound to " + q.ID)
		}
	}
	p.enum = name
	return Selector[V]{p}
}

// Of returns the variant of the patch that s selects: one array load, for
// hot paths.
func (sel Selector[V]) Of(s *Set) V { return V(s.v[sel.p.index]) }

// Patch returns the patch sel reads.
func (sel Selector[V]) Patch() *Patch { return sel.p }

// VariantIndex returns the index of the variant named name, accepting
// "base" for variant 0.
func (p *Patch) VariantIndex(name string) (int, bool) {
	for i, v := range p.Variants {
		if v.Name == name {
			return i, true
		}
	}
	if name == "base" {
		return 0, true
	}
	return 0, false
}

// VariantNames returns the names of p's variants in order.
func (p *Patch) VariantNames() []string {
	names := make([]string, len(p.Variants))
	for i, v := range p.Variants {
		names[i] = v.Name
	}
	return names
}

var (
	mu      sync.RWMutex
	patches []*Patch
	byID    = map[string]*Patch{}
)

// Register adds p to the registry and returns it. It is called from
// package-level var declarations; a duplicate ID, a patch without variants
// or too many patches panic, since each is a programming error found at
// start-up.
func Register(p *Patch) *Patch {
	mu.Lock()
	defer mu.Unlock()
	switch {
	case p.ID == "":
		panic("patch: empty ID")
	case byID[p.ID] != nil:
		panic("patch: duplicate ID " + p.ID)
	case len(p.Variants) == 0:
		panic("patch: " + p.ID + " has no variants")
	case len(p.Variants) > 255:
		panic("patch: " + p.ID + " has too many variants")
	case len(patches) >= MaxPatches:
		panic("patch: too many patches; raise MaxPatches")
	}
	p.index = len(patches)
	patches = append(patches, p)
	byID[p.ID] = p
	return p
}

// Lookup returns the patch registered under id.
func Lookup(id string) (*Patch, bool) {
	mu.RLock()
	defer mu.RUnlock()
	p, ok := byID[id]
	return p, ok
}

// All returns every registered patch, sorted by ID.
func All() []*Patch {
	mu.RLock()
	out := append([]*Patch(nil), patches...)
	mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Find returns the patch registered under id, or an error that lists the
// valid IDs, for command-line input.
func Find(id string) (*Patch, error) {
	if p, ok := Lookup(id); ok {
		return p, nil
	}
	var s []string
	for _, p := range All() {
		s = append(s, p.ID)
	}
	return nil, fmt.Errorf("unknown patch %q; valid: %s", id, strings.Join(s, ", "))
}

// Set chooses one variant of every patch. The zero value selects every
// patch's base variant. A Set is a small value: copy it freely.
type Set struct {
	v [MaxPatches]uint8
}

// Get returns the index of the variant of p that s selects, for tools that
// handle every patch alike; the model's code reads its patch through the
// typed Selector that Bind returns instead.
func (s *Set) Get(p *Patch) int { return int(s.v[p.index]) }

// Is reports whether s selects the variant of p named name, for tests and
// tools (it compares strings: the model's code switches over a Selector's
// enum instead). It panics if p has no such variant: a typo, not user
// input.
func (s *Set) Is(p *Patch, name string) bool {
	i, ok := p.VariantIndex(name)
	if !ok {
		panic(fmt.Sprintf("patch: %s has no variant %q", p.ID, name))
	}
	return s.Get(p) == i
}

// Variant returns the name of the variant of p that s selects.
func (s *Set) Variant(p *Patch) string { return p.Variants[s.Get(p)].Name }

// With returns a copy of s that selects the variant of p named name.
// Errors name the valid variants.
func (s Set) With(p *Patch, name string) (Set, error) {
	i, ok := p.VariantIndex(name)
	if !ok {
		return s, fmt.Errorf("patch %s has no variant %q; valid: %s", p.ID, name, strings.Join(p.VariantNames(), ", "))
	}
	s.v[p.index] = uint8(i)
	return s, nil
}

// MustWith is With for variants known to exist (tests, built-in tables); it
// panics on an unknown name.
func (s Set) MustWith(p *Patch, name string) Set {
	s, err := s.With(p, name)
	if err != nil {
		panic(err)
	}
	return s
}

// Parse reads a Set written as "id=variant,id=variant". Patches not named
// keep their base variant; an empty string is the default Set. Unknown
// patches or variants are errors that list the valid ones.
func Parse(text string) (Set, error) {
	var s Set
	text = strings.TrimSpace(text)
	if text == "" {
		return s, nil
	}
	seen := map[string]bool{}
	for _, item := range strings.Split(text, ",") {
		item = strings.TrimSpace(item)
		id, name, ok := strings.Cut(item, "=")
		if !ok || id == "" || name == "" {
			return s, fmt.Errorf("bad patch selection %q: want id=variant", item)
		}
		p, err := Find(id)
		if err != nil {
			return s, err
		}
		if seen[id] {
			return s, fmt.Errorf("patch %s selected twice", id)
		}
		seen[id] = true
		if s, err = s.With(p, name); err != nil {
			return s, err
		}
	}
	return s, nil
}

// String prints every registered patch's selected variant as
// "id=variant,id=variant", sorted by ID; Parse reads it back.
func (s Set) String() string {
	var parts []string
	for _, p := range All() {
		parts = append(parts, p.ID+"="+s.Variant(p))
	}
	return strings.Join(parts, ",")
}

// Changed prints only the patches that are not at their base variant, in the
// same form ("" when all are base).
func (s Set) Changed() string {
	var parts []string
	for _, p := range All() {
		if s.Get(p) != 0 {
			parts = append(parts, p.ID+"="+s.Variant(p))
		}
	}
	return strings.Join(parts, ",")
}

// MarshalText implements encoding.TextMarshaler with String's form.
func (s Set) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with Parse.
func (s *Set) UnmarshalText(b []byte) error {
	v, err := Parse(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}
