package fsunicode

import "testing"

// load returns the 12.1.0 Map with the current kernel's policy.
func load(t testing.TB) *Map {
	t.Helper()
	um, err := Load("12.1.0")
	if err != nil {
		t.Fatalf("Load(12.1.0): %v", err)
	}
	return um
}

// loadKept returns the 12.1.0 Map of commit 5c26d2f1d3f5.
func loadKept(t testing.TB) *Map {
	t.Helper()
	um, err := LoadWith("12.1.0", IgnorablesKept)
	if err != nil {
		t.Fatalf("LoadWith(12.1.0, kept): %v", err)
	}
	return um
}
