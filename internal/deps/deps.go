//go:build deps

// Package deps pins the module's planned dependencies until code imports them.
package deps

import (
	_ "github.com/dchest/siphash"
	_ "github.com/google/go-cmp/cmp"
	_ "golang.org/x/crypto/xts"
	_ "golang.org/x/crypto/hkdf"
	_ "golang.org/x/crypto/chacha20"
	_ "golang.org/x/perf/benchfmt"
	_ "golang.org/x/perf/benchmath"
	_ "golang.org/x/text/unicode/norm"
	_ "golang.org/x/text/cases"
	_ "lukechampine.com/adiantum"
	_ "pgregory.net/rapid"
	_ "golang.org/x/sys/cpu"
)
