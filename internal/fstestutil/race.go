//go:build race

package fstestutil

// RaceEnabled reports whether the race detector is on: its
// instrumentation allocates, so tests that pin Go allocations skip.
const RaceEnabled = true
