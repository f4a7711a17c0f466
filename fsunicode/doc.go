// Package fsunicode models Linux's fs/unicode: the UTF-8 normalization and
// casefolding that ext4 and f2fs use for casefolded directories, and that the
// dcache uses for their case-insensitive d_hash and d_compare.
//
// It follows fs/unicode/utf8-core.c (utf8_load, utf8_validate, utf8_strncmp,
// utf8_strncasecmp, utf8_strncasecmp_folded, utf8_casefold,
// utf8_casefold_hash), fs/unicode/utf8-norm.c (utf8nlookup, utf8ncursor,
// utf8byte) and the semantics of the tables that fs/unicode/mkutf8data.c
// generates (fs/unicode/utf8data.c_shipped). Results are byte-for-byte the
// kernel's, including its error cases and the lengths it accepts.
//
// # The two normalizations
//
// The kernel builds two tables from the Unicode Character Database:
//
//   - nfdi: canonical decomposition (NFD; compatibility decompositions are
//     not applied) followed by canonical ordering. Used by utf8_strncmp and the
//     former utf8_normalize (Map.Strncmp, Map.Normalize).
//   - nfdicf: the same, but every character is first replaced by its full case
//     folding (CaseFolding.txt statuses C and F, never S or T), recursively
//     decomposed. Used by utf8_casefold, utf8_casefold_hash and the
//     utf8_strncasecmp family (Map.Casefold, Map.CasefoldHash,
//     Map.Strncasecmp, Map.StrncasecmpFolded). For example "ß" folds to "ss",
//     U+212B ANGSTROM SIGN to "a" U+030A, U+A7AE to U+026A, and the Georgian
//     Mtavruli capitals to Mkhedruli; Cherokee folds to the upper case.
//
// Each character maps to a fixed string of characters, each with its own
// canonical combining class (CCC). The output is the concatenation of those
// strings in which every run of characters with a non-zero CCC is stably
// sorted by CCC (utf8byte's repeated scans). A character with CCC 0 ends a
// run.
//
// # Unicode 12.1 and newer Unicode data
//
// The kernel's tables are Unicode 12.1.0 (UNICODE_AGE(12, 1, 0) = 0x0c0100),
// the only version ext4 and f2fs ask for (their one encoding, utf8-12.1).
// Load accepts only "12.1.0"; for any other version it fails with EINVAL as
// utf8_load does for versions its tables do not have. (The kernel's tables
// also carry the ages 1.1.0 to 12.0.0 for filtering; no filesystem uses them
// and this model does not carry them.)
//
// The tables here are derived when a Map is first loaded from
// golang.org/x/text (unicode/norm for decompositions and combining classes,
// cases.Fold for full case folding), which carries a newer Unicode (15.0.0
// with the Go releases this module builds with, 17.0.0 from Go 1.27 on). The
// 12.1 behaviour is pinned like this:
//
//   - A code point that was unassigned in Unicode 12.1 passes through
//     unchanged with CCC 0, whatever newer Unicode says about it. In the
//     kernel, mkutf8data gives such a code point generation 0 (age 0): it is
//     valid UTF-8 (utf8nlookup finds a leaf for every scalar value except the
//     surrogates), it has no decomposition or case folding because the 12.1
//     data files list none, and its CCC is 0. utf8byte's "too new" test
//     (age > maxage) never fires with the 12.1 table because 12.1 is the
//     newest age in it; unassigned code points are not "too new", they are
//     simply inert. The set of code points assigned in 12.1 is x/text's
//     rangetable.Assigned("12.0.0") plus U+32FF SQUARE ERA NAME REIWA, the one
//     character Unicode 12.1 added (see assigned121).
//   - For code points assigned in 12.1, newer data gives the same answers:
//     the Unicode stability policies freeze canonical decompositions and
//     canonical combining classes of assigned characters (normalization
//     stability), and freeze the case folding of assigned characters (case
//     folding stability: later versions only add foldings for new
//     characters, e.g. U+A7CB in 16.0 folds to the 12.1 letter U+0264, but
//     U+A7CB itself was unassigned in 12.1 and so passes through).
//   - Default_Ignorable_Code_Point is taken from a committed Unicode 12.1 list
//     (ignorable121), not from newer data: it includes reserved code points
//     (U+2065, U+FFF0..U+FFF8, U+E0000..U+E0FFF outside the assigned tags and
//     variation selectors) and excludes later additions such as U+180F
//     MONGOLIAN FREE VARIATION SELECTOR FOUR (Unicode 14.0), which the kernel
//     passes through unchanged.
//
// The tests pin all of this against the kernel: a digest of the kernel's
// nfdi and nfdicf output for every one of the 1,112,064 scalar values, a
// digest of its output for a corpus of random strings, and a table of edge
// cases with the results of every function (see kernel_test.go and
// semantics_test.go). golang.org/x/text gets one thing wrong that the
// derivation corrects: cases.Fold folds the Cherokee capitals to the small
// letters (golang/go#46101), while CaseFolding.txt folds the small letters
// to the capitals.
//
// # Default-ignorable code points
//
// mkutf8data.c gives every code point with the Default_Ignorable_Code_Point
// property (DerivedCoreProperties.txt) an empty decomposition in both tables
// (its ignore_init), so such characters vanish from normalized and casefolded
// names: "a\u200bb" and "ab" compare equal and hash alike. They still end a
// run of combining marks ("a\u0301\u200b\u0316" keeps its mark order, while
// "a\u0301\u0316" is reordered), because utf8byte treats an empty
// decomposition as CCC 0.
//
// Commit 5c26d2f1d3f5 ("unicode: Don't special case ignorable code points",
// merged for Linux 6.12-rc3 in October 2024 and backported to stable trees)
// dropped that special case, so ignorables were kept like any other
// character. Names created under it could not be found by kernels with the
// old tables and vice versa, and Linus Torvalds reverted it in 231825b2e1ff
// (Linux 6.13-rc3, December 2024; the stable trees took the revert too).
// Current Linux (6.13 and later, including 7.x) therefore folds ignorables
// away again, which is what Load models (IgnorablesFolded). ext4 and f2fs
// later added a linear-search fallback for lookups that miss in casefolded
// directories, so that names hashed under the other rule are still found.
// LoadWith(version, IgnorablesKept) models the short-lived behaviour.
//
// # Invalid UTF-8 and strict mode
//
// Every function stops at a NUL byte as at the end of the name, like the
// kernel. Validate (utf8_validate) accepts a name when everything before
// that point is the shortest UTF-8 form of Unicode scalar values (any,
// assigned or not, except the surrogates), and reports EINVAL otherwise.
//
// The normalizing functions follow utf8byte, which is more lenient: it
// fails (and they report EINVAL) on a name that starts with a UTF-8
// continuation byte, and on any byte sequence that starts with another byte
// and is not a valid encoding (overlong forms, surrogates, values above
// U+10FFFF, sequences cut short, bytes 0xF5..0xFF). A continuation byte
// anywhere else, where a character should start, is passed through as it
// is, because utf8byte takes it for the tail of the character it has just
// emitted; inside a run of combining marks it is even emitted once per scan
// of the run. So Casefold("a\x80b") is "a\x80b", and
// Casefold("A\u0301\x80") is "a\x80\u0301\x80". The comparison functions
// stream both names like the kernel and return at the first difference, so
// an invalid sequence after it goes unnoticed, while one right after a run
// of combining marks is found before the run is compared.
//
// What happens with EINVAL is a superblock property that the callers handle,
// not this package: with strict encoding (sb_has_strict_encoding(sb), the
// SB_ENC_STRICT_MODE_FL encoding flag, set with mke2fs -E
// encoding_flags=strict or mkfs.f2fs -C utf8:strict) ext4 and f2fs reject
// creating or looking up a name that utf8_validate rejects, with EINVAL, and
// a directory entry whose comparison fails never matches. Without it, a name
// that cannot be folded is hashed and compared as raw bytes.
//
// Under the current rule Casefold is not quite idempotent: an ignorable
// between two combining marks stops their reordering and then vanishes, so
// folding the result again reorders them ("a\u0301\u200b\u0316" folds to
// "a\u0301\u0316", which folds to "a\u0316\u0301"). For valid names
// without ignorables, and for all valid names when ignorables are kept, it
// is idempotent.
//
// # Zero-allocation use
//
// A Map is immutable and safe for concurrent use. Casefold, Normalize,
// CasefoldHash and the comparison functions do not allocate for names whose
// runs of combining marks are at most 32 characters long (longer runs spill
// to the heap), and do not make their arguments escape; a caller folds into
// its own buffer:
//
//	var buf [fsunicode.MaxNameLen]byte
//	n, err := um.Casefold(buf[:], name)
//
// The comparison functions stream both names and stop at the first byte that
// differs, without materializing either normalized string. All functions
// handle ASCII bytes directly and only set up the kernel-style cursor at the
// first non-ASCII byte.
package fsunicode
