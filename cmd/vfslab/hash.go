package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/fsunicode"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// hashStdin is where `vfslab hash ... -` reads its names (tests replace
// it).
var hashStdin io.Reader = os.Stdin

const hashLong = `  vfslab hash ext4 --version V [--seed HEX] [--casefold] [--dirhash-key HEX] NAME_HEX|-
  vfslab hash f2fs [--casefold] [--dirhash-key HEX] NAME_HEX|-

Computes the name hash the kernel uses to place NAME_HEX (the name's bytes,
in hex) in a directory, with the simulator's ext4 and f2fs code. With "-"
in place of NAME_HEX, reads one NAME_HEX per line from stdin (empty lines
skipped) and prints one result per line, building the Unicode tables once.

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
siphash without a key, a key or seed of the wrong length; with "-", the
first bad line, named by its number), 1 when the simulated kernel fails.
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
	version, seed, sipKey string
	casefold              bool
}

// hashFS is what hash knows of one filesystem: its own flags and the
// function that hashes one name as that filesystem does.
type hashFS struct {
	flags func(c *hashCmd, fs *pflag.FlagSet)
	hash  func(c *hashCmd, t *kernel.Task, name []byte, key *[2]uint64, um *fsunicode.Map) (string, error)
	check func(c *hashCmd, key *[2]uint64) error // the flags, before any name is hashed
}

// hashFilesystems are the registered filesystems whose directory hashes
// hash computes, keyed by their type: what hash knows of each.
var hashFilesystems = map[*vfs.FileSystemType]hashFS{
	ext4.Type: {flags: func(c *hashCmd, fs *pflag.FlagSet) {
		fs.StringVar(&c.version, "version", "", "hash version (required): "+strings.Join(hashVersionNames(), ", ")+" or 0-6")
		fs.StringVar(&c.seed, "seed", "", "s_hash_seed, 16 bytes hex (a UUID's dashes allowed)")
	}, hash: (*hashCmd).ext4, check: (*hashCmd).checkExt4},
	f2fs.Type: {flags: func(*hashCmd, *pflag.FlagSet) {}, hash: (*hashCmd).f2fs,
		check: func(*hashCmd, *[2]uint64) error { return nil }},
}

// hashFsNames are the names of the filesystems hash knows, in
// registration order.
func hashFsNames() []string {
	var names []string
	for _, f := range vfs.Filesystems() {
		if _, ok := hashFilesystems[f]; ok {
			names = append(names, f.Name)
		}
	}
	return names
}

// hashFsByName is hash's one decision of which filesystem a name means: a
// registered type whose hash it knows.
func hashFsByName(name string) (hashFS, bool) {
	fst, err := vfs.GetFsType(name)
	if err != nil {
		return hashFS{}, false
	}
	h, ok := hashFilesystems[fst]
	return h, ok
}

func newHashCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hash ext4|f2fs [flags] NAME_HEX|-",
		Short: "compute the directory hash ext4 or f2fs stores for a name (debugfs dx_hash, f2fs_dentry_hash)",
		Long:  hashLong,
		Example: `  vfslab hash ext4 --version half_md4 --casefold 53747261c39f65
  vfslab hash f2fs 666f6f
  printf '61\n62\n' | vfslab hash f2fs --casefold -`,
		Args: cobra.ArbitraryArgs,
		RunE: needSub("filesystem"),
	}
	for _, name := range hashFsNames() {
		cmd.AddCommand(newHashFsCmd(name))
	}
	return cmd
}

func newHashFsCmd(fsName string) *cobra.Command {
	c := &hashCmd{fsName: fsName}
	hfs, _ := hashFsByName(fsName)
	cmd := &cobra.Command{
		Use:   fsName + " [flags] NAME_HEX|-",
		Short: "the " + fsName + " directory hash of a name",
		Long:  hashLong,
		Args:  exactArgs(1, "NAME_HEX (or - for one per line on stdin)"),
		RunE:  func(cmd *cobra.Command, args []string) error { return c.run(cmd, args[0], hfs) },
	}
	fs := cmd.Flags()
	hfs.flags(c, fs)
	fs.BoolVar(&c.casefold, "casefold", false, "fold the name as a casefolded directory does")
	fs.StringVar(&c.sipKey, "dirhash-key", "", "fscrypt dirhash key, 16 bytes hex")
	if fs.Lookup("version") != nil {
		cmd.RegisterFlagCompletionFunc("version", completeHashVersions)
	}
	return cmd
}

// run checks the flags, then hashes the name (or every line of stdin)
// inside the simulator boundary.
func (c *hashCmd) run(cmd *cobra.Command, arg string, hfs hashFS) error {
	stdout := cmd.OutOrStdout()
	var key *[2]uint64
	if c.sipKey != "" {
		kb, err := parseHex("--dirhash-key", c.sipKey, 16)
		if err != nil {
			return err
		}
		key = &[2]uint64{binary.LittleEndian.Uint64(kb), binary.LittleEndian.Uint64(kb[8:])}
	}
	if err := hfs.check(c, key); err != nil {
		return err
	}
	inputs, err := hexInputs("NAME_HEX", arg, hashStdin, true)
	if err != nil {
		return err
	}
	k := kernel.New()
	t := k.NewTask("vfslab-hash")
	defer t.Exit()
	var um *fsunicode.Map
	if c.casefold {
		if um, err = fsunicode.Load("12.1.0"); err != nil {
			return &kernelError{fmt.Errorf("utf8_load(12.1.0): %w", err), kernelLog(k)}
		}
	}
	for _, in := range inputs {
		out, err := guarded(t, func() (string, error) { return hfs.hash(c, t, in.data, key, um) })
		if err != nil {
			return in.wrap(&kernelError{err, kernelLog(k)})
		}
		fmt.Fprintln(stdout, out)
	}
	return nil
}

// checkExt4 checks the ext4 flags before any name is hashed.
func (c *hashCmd) checkExt4(key *[2]uint64) error {
	if c.version == "" {
		return usageError{"--version is required; want one of " + strings.Join(hashVersionNames(), ", ")}
	}
	ver, err := parseHashVersion(c.version)
	if err != nil {
		return err
	}
	switch {
	case ver == ext4.DxHashSiphash && key == nil:
		return usageError{"--version siphash needs --dirhash-key (the kernel refuses: \"Siphash requires key\")"}
	case ver != ext4.DxHashSiphash && key != nil:
		return usageError{"--dirhash-key applies only to --version siphash"}
	}
	if c.seed != "" {
		if _, err := parseHex("--seed", strings.ReplaceAll(c.seed, "-", ""), 16); err != nil {
			return err
		}
	}
	return nil
}

// ext4 computes ext4fs_dirhash of name: through ext4.Dirhash in a
// casefolded directory with --casefold (its fold step is the kernel's),
// else ext4.Ext4fsDirhash on the bytes as given.
func (c *hashCmd) ext4(t *kernel.Task, name []byte, key *[2]uint64, um *fsunicode.Map) (string, error) {
	ver, err := parseHashVersion(c.version)
	if err != nil {
		return "", err
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
// its dirhash key, when --dirhash-key is given), else TEA or SipHash of
// the bytes as given.
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
