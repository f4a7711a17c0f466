package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/fsunicode"
	"github.com/vfslab/vfslab/kernel"
)

func init() {
	register(&command{
		name:    "hash",
		summary: "compute the directory hash ext4 or f2fs stores for a name (debugfs dx_hash, f2fs_dentry_hash)",
		run:     runHash,
	})
}

const hashUsage = `Usage:
  vfslab hash ext4 --version V [--seed HEX] [--casefold] [--dirhash-key HEX] NAME_HEX
  vfslab hash f2fs [--casefold] [--dirhash-key HEX] NAME_HEX

Computes the name hash the kernel uses to place NAME_HEX (the name's bytes,
in hex) in a directory, with the simulator's ext4 and f2fs code.

ext4 prints "HASH MINOR", 8 lowercase hex digits each: the major hash of
__ext4fs_dirhash (bit 0 cleared, 0xfffffffe moved to 0xfffffffc, the 32-bit
htree EOF marker) and the minor hash (0 for the legacy versions).
  --version V      legacy, half_md4, tea, legacy_unsigned, half_md4_unsigned,
                   tea_unsigned or siphash (or the DX_HASH_* number 0-6)
  --seed HEX       the 16 bytes of s_hash_seed as stored in the superblock
                   (the UUID that dumpe2fs prints as "Directory Hash Seed"
                   may be given with its dashes); all zero or absent: the
                   default start values
  --dirhash-key HEX  the 16-byte fscrypt dirhash key of an encrypted and
                   casefolded directory; required by siphash, refused by the
                   other versions

f2fs prints the 8-hex-digit hash_code of f2fs_hash_filename ("." and ".."
hash to 0): TEA of the name, or with --dirhash-key the low 32 bits of its
SipHash-2-4, the form of encrypted and casefolded directories.

--casefold folds the name as the kernel folds it in a casefolded directory
(utf8-12.1, package fsunicode), with each filesystem's rules:
  ext4  ext4fs_dirhash folds a non-empty name into a PATH_MAX buffer and
        hashes the raw bytes when folding fails (invalid UTF-8); a name that
        folds to nothing hashes as the empty string.
  f2fs  f2fs_init_casefolded_name folds into a 255-byte buffer and hashes
        the raw bytes when folding fails (invalid UTF-8, a folded form of 255
        bytes or more) or gives nothing; "." and ".." keep hash 0.
Without --casefold the name is hashed as given (for siphash: as already
folded).

Exit status: 0 on success, 2 for bad usage (bad hex, unknown version,
siphash without a key, a key or seed of the wrong length), 1 when the
simulated kernel fails.
`

// hashVersions maps the --version names to DX_HASH_* values.
var hashVersions = map[string]uint8{
	"legacy":            ext4.DxHashLegacy,
	"half_md4":          ext4.DxHashHalfMD4,
	"tea":               ext4.DxHashTEA,
	"legacy_unsigned":   ext4.DxHashLegacyUnsigned,
	"half_md4_unsigned": ext4.DxHashHalfMD4Unsigned,
	"tea_unsigned":      ext4.DxHashTEAUnsigned,
	"siphash":           ext4.DxHashSiphash,
}

// hashVersionNames lists the --version names in DX_HASH_* order.
func hashVersionNames() []string {
	names := make([]string, 0, len(hashVersions))
	for n := range hashVersions {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return hashVersions[names[i]] < hashVersions[names[j]] })
	return names
}

// parseHashVersion reads a --version value: a name or a DX_HASH_* number.
func parseHashVersion(s string) (uint8, error) {
	if v, ok := hashVersions[s]; ok {
		return v, nil
	}
	if n, err := strconv.ParseUint(s, 10, 8); err == nil && uint8(n) <= ext4.DxHashLast {
		return uint8(n), nil
	}
	return 0, usageError{fmt.Sprintf("--version %q: want one of %s", s, strings.Join(hashVersionNames(), ", "))}
}

// hashCmd holds the flags of `vfslab hash`.
type hashCmd struct {
	fsName                string
	fs                    *flag.FlagSet
	version, seed, sipKey string
	casefold              bool
	pos                   []string
}

func runHash(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, hashUsage)
		return 2
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		fmt.Fprint(stdout, hashUsage)
		return 0
	case "ext4", "f2fs":
	default:
		fmt.Fprintf(stderr, "vfslab hash: unknown filesystem %q: want ext4 or f2fs\n\n%s", args[0], hashUsage)
		return 2
	}
	c := &hashCmd{fsName: args[0], fs: flag.NewFlagSet("hash "+args[0], flag.ContinueOnError)}
	fs := c.fs
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, hashUsage) }
	if c.fsName == "ext4" {
		fs.StringVar(&c.version, "version", "", "hash version (required)")
		fs.StringVar(&c.seed, "seed", "", "s_hash_seed, 16 bytes hex")
	}
	fs.BoolVar(&c.casefold, "casefold", false, "fold the name as a casefolded directory does")
	fs.StringVar(&c.sipKey, "dirhash-key", "", "fscrypt dirhash key, 16 bytes hex")
	// Flags may come before and after the name.
	rest := args[1:]
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		c.pos = append(c.pos, rest[0])
		rest = rest[1:]
	}

	k := kernel.New()
	t := k.NewTask("vfslab-hash")
	defer t.Exit()
	out, err := c.runGuarded(t)
	if err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "vfslab hash %s: %v\n", c.fsName, err)
			return 2
		}
		fmt.Fprintf(stderr, "vfslab hash %s: %s\n", c.fsName, describeErr(err))
		for _, l := range k.Log.Lines() {
			fmt.Fprintf(stderr, "  kernel: %s\n", l)
		}
		return 1
	}
	fmt.Fprintln(stdout, out)
	return 0
}

// runGuarded is the command's simulator boundary: a kernel BUG becomes an
// error.
func (c *hashCmd) runGuarded(t *kernel.Task) (out string, err error) {
	defer t.Recover(&err)
	if len(c.pos) != 1 {
		return "", usageError{"want exactly one NAME_HEX argument"}
	}
	name, err := parseHex("NAME_HEX", c.pos[0], -1)
	if err != nil {
		return "", err
	}
	var key *[2]uint64
	if c.sipKey != "" {
		kb, err := parseHex("--dirhash-key", c.sipKey, 16)
		if err != nil {
			return "", err
		}
		key = &[2]uint64{binary.LittleEndian.Uint64(kb), binary.LittleEndian.Uint64(kb[8:])}
	}
	var um *fsunicode.Map
	if c.casefold {
		if um, err = fsunicode.Load("12.1.0"); err != nil {
			return "", fmt.Errorf("utf8_load(12.1.0): %w", err)
		}
	}
	if c.fsName == "ext4" {
		return c.ext4(t, name, key, um)
	}
	return c.f2fs(t, name, key, um)
}

// ext4 computes ext4fs_dirhash of name: through ext4.Dirhash in a
// casefolded directory with --casefold (its fold step is the kernel's),
// else ext4.Ext4fsDirhash on the bytes as given.
func (c *hashCmd) ext4(t *kernel.Task, name []byte, key *[2]uint64, um *fsunicode.Map) (string, error) {
	if c.version == "" {
		return "", usageError{"--version is required; want one of " + strings.Join(hashVersionNames(), ", ")}
	}
	ver, err := parseHashVersion(c.version)
	if err != nil {
		return "", err
	}
	switch {
	case ver == ext4.DxHashSiphash && key == nil:
		return "", usageError{"--version siphash needs --dirhash-key (the kernel refuses: \"Siphash requires key\")"}
	case ver != ext4.DxHashSiphash && key != nil:
		return "", usageError{"--dirhash-key applies only to --version siphash"}
	}
	hinfo := ext4.DxHashInfo{HashVersion: ver}
	if c.seed != "" {
		sb, err := parseHex("--seed", strings.ReplaceAll(c.seed, "-", ""), 16)
		if err != nil {
			return "", err
		}
		w := ext4.HashSeedWords((*[16]byte)(sb))
		hinfo.Seed = &w
	}
	if um != nil {
		// A casefolded directory; ext4 hashes with SipHash exactly in
		// encrypted and casefolded directories whose key is set up.
		err = ext4.FoldDirhash(t, um, name, &hinfo, key)
	} else {
		err = ext4.Ext4fsDirhash(name, &hinfo, key)
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%08x %08x", hinfo.Hash, hinfo.MinorHash), nil
}

// f2fs computes f2fs_hash_filename of name: with --casefold through
// f2fs.CasefoldedHash, as in a casefolded directory (encrypted, with only
// its dirhash key, when --dirhash-key is given), else
// TEA or SipHash of the bytes as given.
func (c *hashCmd) f2fs(t *kernel.Task, name []byte, key *[2]uint64, um *fsunicode.Map) (string, error) {
	if um == nil {
		if key != nil {
			return fmt.Sprintf("%08x", f2fs.F2fsDentryHashSiphash(name, *key)), nil
		}
		return fmt.Sprintf("%08x", f2fs.F2fsDentryHash(name)), nil
	}
	h, err := f2fs.CasefoldedHash(t, um, false, name, key)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%08x", h), nil
}
