package fsunicode

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// MaxNameLen is the length of the buffers ext4 and f2fs casefold names into
// (EXT4_NAME_LEN, F2FS_NAME_LEN; NAME_MAX). Because utf8_casefold also
// stores the terminating NUL, a folded name must be at most MaxNameLen-1
// bytes long to fit.
const MaxNameLen = 255

// errInvalid is the kernel's -EINVAL.
const errInvalid = syscall.EINVAL

// UnicodeAge packs a Unicode version the way the kernel does
// (UNICODE_AGE in fs/unicode/utf8n.h): major<<16 | minor<<8 | revision.
func UnicodeAge(major, minor, revision uint8) uint32 {
	return uint32(major)<<16 | uint32(minor)<<8 | uint32(revision)
}

// Latest is UTF8_LATEST (include/linux/unicode.h), UNICODE_AGE(12, 1, 0): the
// version of the kernel's tables and the only one Load accepts.
const Latest uint32 = unicode121

// ParseVersion parses a version string "major.minor.revision" in decimal into
// its UNICODE_AGE, as utf8_parse_version (fs/unicode/utf8-core.c) does for
// version strings such as tmpfs's casefold=utf8-12.1.0 mount option. It fails
// with EINVAL when the string is not of that form; unlike the kernel, which
// packs whatever integers it parsed, it also rejects signs and components
// above 255.
func ParseVersion(version string) (uint32, error) {
	parts := strings.Split(version, ".")
	if len(parts) != 3 {
		return 0, errInvalid
	}
	var v [3]uint8
	for i, p := range parts {
		if p == "" || p[0] == '+' || p[0] == '-' {
			return 0, errInvalid
		}
		n, err := strconv.ParseUint(p, 10, 8)
		if err != nil {
			return 0, errInvalid
		}
		v[i] = uint8(n)
	}
	return UnicodeAge(v[0], v[1], v[2]), nil
}

// IgnorablePolicy selects how characters with the Unicode property
// Default_Ignorable_Code_Point are normalized. See the package documentation.
type IgnorablePolicy int

const (
	// IgnorablesFolded: ignorables normalize and casefold to nothing
	// (mkutf8data.c's ignore_init). Linux from fs/unicode's introduction to
	// 6.12-rc2, and again from 6.13-rc3 (revert 231825b2e1ff): current Linux.
	IgnorablesFolded IgnorablePolicy = iota
	// IgnorablesKept: ignorables are ordinary characters that map to
	// themselves (commit 5c26d2f1d3f5, Linux 6.12-rc3 to its revert, and the
	// stable releases that carried it).
	IgnorablesKept
)

// String returns "folded" or "kept".
func (p IgnorablePolicy) String() string {
	switch p {
	case IgnorablesFolded:
		return "folded"
	case IgnorablesKept:
		return "kept"
	}
	return fmt.Sprintf("IgnorablePolicy(%d)", int(p))
}

// Map is a loaded encoding, the model of struct unicode_map
// (include/linux/unicode.h): the version and the nfdi and nfdicf tables
// (um->ntab[UTF8_NFDI], um->ntab[UTF8_NFDICF]). A Map is immutable and safe
// for concurrent use; all Maps of a policy share one set of tables.
type Map struct {
	version uint32
	policy  IgnorablePolicy
	t       *tables
}

var (
	tablesOnce [2]sync.Once
	tablesByP  [2]*tables
)

func loadTables(p IgnorablePolicy) *tables {
	tablesOnce[p].Do(func() { tablesByP[p] = buildTables(p) })
	return tablesByP[p]
}

// Load returns the encoding for a Unicode version given as
// "major.minor.revision", with the current kernel's treatment of ignorable
// code points. It models utf8_load (fs/unicode/utf8-core.c) as ext4 and
// f2fs call it for their utf8-12.1 encoding: "12.1.0" is the only version
// it knows; any other, or a malformed string, fails with EINVAL.
//
// The first Load derives the tables from golang.org/x/text, which takes a
// few hundred milliseconds; later calls share them.
func Load(version string) (*Map, error) {
	return LoadWith(version, IgnorablesFolded)
}

// LoadWith is Load with an explicit IgnorablePolicy, for modelling the
// kernels that carried commit 5c26d2f1d3f5 (IgnorablesKept).
func LoadWith(version string, policy IgnorablePolicy) (*Map, error) {
	age, err := ParseVersion(version)
	if err != nil {
		return nil, err
	}
	return LoadAge(age, policy)
}

// LoadAge is LoadWith for a version already packed with UnicodeAge, the
// argument current Linux's utf8_load takes.
func LoadAge(age uint32, policy IgnorablePolicy) (*Map, error) {
	if age != Latest {
		return nil, errInvalid
	}
	if policy != IgnorablesFolded && policy != IgnorablesKept {
		return nil, errInvalid
	}
	return &Map{version: age, policy: policy, t: loadTables(policy)}, nil
}

// Version returns the loaded Unicode version as UNICODE_AGE
// (um->version), 0x0c0100 for 12.1.0.
func (um *Map) Version() uint32 { return um.version }

// VersionString returns the loaded Unicode version as "12.1.0".
func (um *Map) VersionString() string {
	return fmt.Sprintf("%d.%d.%d", um.version>>16, um.version>>8&0xff, um.version&0xff)
}

// Policy returns the IgnorablePolicy the Map was loaded with.
func (um *Map) Policy() IgnorablePolicy { return um.policy }
