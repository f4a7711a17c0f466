package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/vfslab/vfslab/libfs"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/vfslab/vfslab/crypto"
	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/fsunicode"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/shell"
	"github.com/vfslab/vfslab/vfs"
)

// dumpStdin is where `--names -` reads (tests replace it).
var dumpStdin io.Reader = os.Stdin

const dumpLong = `Builds one directory of a simulated filesystem with the kernel's directory
code (packages ext4 and f2fs), creating the names in order as creat(2)
would, then prints it block by block in the spirit of debugfs' htree command
and dump.f2fs: each block (ext4: dx root, dx node or leaf with its hash
range; f2fs: page index, level and bucket, or the inode's inline area),
each entry (offset and rec_len, or slot; inode, file type, hash, name), the
checksums, and the verdict of the directory checker (in the spirit of
e2fsck / fsck.f2fs). Names are decrypted when the key is present; with
--no-key they are shown as the kernel shows them without the key (no-key
names, built from the on-disk hash as readdir does).

A name the kernel refuses (EEXIST for a name already there, casefolded
alike included; EINVAL for invalid UTF-8 under --strict, or for a name
holding '/' or NUL, which no path can carry; ENAMETOOLONG) is reported and
skipped.

With --image FILE (vfslab dump --image FILE [--fs TYPE] [--dir DIR]) it
builds nothing: it attaches the ext4 or f2fs image FILE read-only, mounts
it read-only (the type from --fs, or what blkid finds on it) and prints
directory DIR (default /) of it with the checker's verdict, as vfslab sh's
dump does. An image the filesystem cannot mount is the kernel's refusal:
one line with the errno, then the kernel's log.

Names:
  --names FILE        one name per line ("-": standard input); empty lines
                      are skipped
  --count N           the names "0" .. "N-1", like seed 001's workload
                      (default when --names is absent; N defaults to 0)

Directory:
  --casefold          a casefolded directory (utf8-12.1)
  --strict            strict encoding: invalid UTF-8 names are refused
  --encrypt           an fscrypt v2 directory; needs --master-key
  --master-key HEX    the master key (16-64 bytes)
  --filenames-mode M  AES-256-CTS-CBC (default), AES-128-CTS-CBC, Adiantum,
                      AES-256-HCTR2
  --padding N         filename padding 4, 8, 16 or 32 (default 32)
  --nonce HEX         the directory's 16-byte nonce (default 00 01 .. 0f, so
                      the ciphertexts are reproducible)
  --no-key            dump the directory as seen without the key

ext4:
  --hash-version V    legacy, half_md4 (default), tea, or their _unsigned
                      forms (the superblock's unsigned-hash flag); encrypted
                      and casefolded directories always use siphash
  --hash-seed HEX     s_hash_seed, 16 bytes (default zero: the default
                      start values)
  --metadata-csum     leaf checksum tails and dx tails (default true)
  --dir-index         htree directories (default true)
  --large-dir         three htree levels (default false)

f2fs:
  --inline            start with inline dentries (default true, the
                      inline_dentry mount option)
  --dir-level N       i_dir_level (default 0)

Output:
  --json              one JSON document: the directory, the refused names,
                      one object per block with one object per entry, and
                      the checker's verdict

Exit status: 0 when the checker passes, 1 when it fails or the simulated
kernel fails, 2 for bad usage.
`

// dumpCmd holds the flags of `vfslab dump`.
type dumpCmd struct {
	fst *vfs.FileSystemType
	t   *kernel.Task

	namesFile                    string
	count                        int
	casefold, strict, encrypt    bool
	masterKey, filenamesMode     string
	padding                      int
	nonce                        string
	noKey, asJSON                bool
	hashVersion, hashSeed        string
	metadataCsum, dirIndex, huge bool
	inline                       bool
	dirLevel                     uint
}

// defaultDumpNonce is the directory nonce used without --nonce.
const defaultDumpNonce = "000102030405060708090a0b0c0d0e0f"

// dumpFS is what dump knows of one filesystem: its own flags, the inode
// number of the directory it dumps, and how it builds that directory and
// renders what the filesystem's dirent walker decodes of it.
type dumpFS interface {
	flags(c *dumpCmd, fs *pflag.FlagSet)
	dirIno() uint64
	build(c *dumpCmd, names [][]byte, um *fsunicode.Map, crypt *dumpCrypt) (*dumpReport, error)
}

// dumpFilesystems are the filesystems dump builds, by registered type.
var dumpFilesystems = map[*vfs.FileSystemType]dumpFS{ext4.Type: ext4Dump{}, f2fs.Type: f2fsDump{}}

// dumpFsNames names the filesystems dump builds, in registration order.
func dumpFsNames() []string {
	var names []string
	for _, fst := range vfs.Filesystems() {
		if _, ok := dumpFilesystems[fst]; ok {
			names = append(names, fst.Name)
		}
	}
	return names
}

// dumpFsByName is dump's one decision of which filesystem a name means:
// the registered type of that name (get_fs_type), if dump builds it.
func dumpFsByName(name string) (*vfs.FileSystemType, dumpFS, bool) {
	fst, err := vfs.GetFsType(name)
	if err != nil {
		return nil, nil, false
	}
	dfs, ok := dumpFilesystems[fst]
	return fst, dfs, ok
}

func newDumpCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dump ext4|f2fs [flags]",
		Short: "build one ext4 or f2fs directory and dump it block by block (debugfs htree, dump.f2fs)",
		Long:  dumpLong,
		Example: `  vfslab dump ext4 --count 100
  vfslab dump f2fs --count 300 --casefold --encrypt --master-key $(printf '%0128d' 0)
  vfslab dump --image disk.img --dir /d`,
		Args: cobra.ArbitraryArgs,
	}
	img := &dumpImage{}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if img.path == "" {
			if img.fs != "" || img.dir != "/" {
				return usagef("--fs and --dir need --image")
			}
			return needSub("filesystem")(cmd, args)
		}
		if len(args) > 0 {
			return usagef("--image dumps the image's directory; no filesystem argument (%q) is taken, use --fs", args[0])
		}
		return runDumpImage(cmd, img)
	}
	fs := cmd.Flags()
	fs.StringVar(&img.path, "image", "", "dump a directory of the ext4 or f2fs image FILE (attached read-only, never written)")
	fs.StringVar(&img.fs, "fs", "", "with --image: the filesystem type (default: the one blkid finds on the image)")
	fs.StringVar(&img.dir, "dir", "/", "with --image: the directory to dump")
	for _, name := range dumpFsNames() {
		cmd.AddCommand(newDumpFsCmd(name))
	}
	return cmd
}

// dumpImage holds the flags of `vfslab dump --image FILE [--fs TYPE]
// [--dir DIR]`.
type dumpImage struct {
	path, fs, dir string
}

// runDumpImage attaches the image as a read-only device (vfs.OpenImage),
// mounts it as the root of a fresh machine with MS_RDONLY (the type is
// --fs, or what blkid finds on it), and prints directory --dir as the
// shell's dump does, with the checker's verdict. A filesystem that cannot
// be mounted is the kernel's refusal: one line with the errno, then the
// kernel's log lines.
func runDumpImage(cmd *cobra.Command, img *dumpImage) error {
	dev, err := vfs.OpenImage(img.path, false)
	if err != nil {
		return fmt.Errorf("--image: %w", err)
	}
	name := img.fs
	if name == "" {
		if name = shell.Blkid(dev); name == "" {
			return fmt.Errorf("%s: blkid finds no ext4 or f2fs superblock on it; name the type with --fs", img.path)
		}
	}
	fst, _, ok := dumpFsByName(name)
	if !ok {
		return usagef("--fs %q: want one of %s", name, strings.Join(dumpFsNames(), ", "))
	}
	k := kernel.New()
	k.Log = &kernel.Log{}
	t := k.NewTask("vfslab-dump")
	defer t.Exit()
	_, p, err := vfs.Boot(t, vfs.Config{}, fst, vfs.MountOptions{Source: "vdb", Device: dev, ReadOnly: true})
	if err != nil {
		return &kernelError{fmt.Errorf("%s: cannot mount it as %s: %w", img.path, name, err), kernelLog(k)}
	}
	defer p.Exit(t)
	d, err := p.LookupDentry(t, img.dir, true)
	if err != nil {
		return &kernelError{fmt.Errorf("%s: --dir %s: %w", img.path, img.dir, err), kernelLog(k)}
	}
	out, err := shell.DumpDir(t, d.Inode())
	dcache.Dput(t, d)
	if err != nil {
		return &kernelError{fmt.Errorf("%s: --dir %s: %w", img.path, img.dir, err), kernelLog(k)}
	}
	io.WriteString(cmd.OutOrStdout(), out)
	if strings.Contains(out, "check: FAIL") {
		return &statusError{status: 1, msg: "the directory checker found problems (the check line above)"}
	}
	return nil
}

func newDumpFsCmd(name string) *cobra.Command {
	fst, dfs, _ := dumpFsByName(name)
	c := &dumpCmd{fst: fst}
	cmd := &cobra.Command{
		Use:   name + " [flags]",
		Short: "build and dump one " + name + " directory",
		Long:  dumpLong,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fs := cmd.Flags()
			if err := c.validate(fs.Changed); err != nil {
				return err
			}
			return runDump(cmd, c, dfs)
		},
	}
	defineDumpFlags(c, cmd.Flags(), dfs)
	return cmd
}

// defineDumpFlags defines dump's flags, the filesystem's own among them.
func defineDumpFlags(c *dumpCmd, fs *pflag.FlagSet, dfs dumpFS) {
	fs.StringVar(&c.namesFile, "names", "", "file of names, one per line (-: stdin)")
	intFlag(fs, &c.count, "count", 0, 0, maxDumpNames, "create the names 0 .. N-1")
	fs.BoolVar(&c.casefold, "casefold", false, "casefolded directory")
	fs.BoolVar(&c.strict, "strict", false, "strict encoding")
	fs.BoolVar(&c.encrypt, "encrypt", false, "fscrypt v2 directory")
	fs.StringVar(&c.masterKey, "master-key", "", "master key, hex (16-64 bytes)")
	fs.StringVar(&c.filenamesMode, "filenames-mode", "AES-256-CTS-CBC", "filenames encryption mode")
	fs.IntVar(&c.padding, "padding", 32, "filename padding: 4, 8, 16 or 32")
	fs.StringVar(&c.nonce, "nonce", defaultDumpNonce, "directory nonce, 16 bytes hex")
	fs.BoolVar(&c.noKey, "no-key", false, "dump without the key")
	fs.BoolVar(&c.asJSON, "json", false, "print JSON")
	dfs.flags(c, fs)
}

// parseDump reads a dump command line (the filesystem, then flags) and
// checks it, without running it.
func parseDump(args []string) (*dumpCmd, dumpFS, error) {
	if len(args) == 0 {
		return nil, nil, usagef("want %s", strings.Join(dumpFsNames(), " or "))
	}
	fst, dfs, ok := dumpFsByName(args[0])
	if !ok {
		return nil, nil, usagef("unknown filesystem %q; want one of %s", args[0], strings.Join(dumpFsNames(), ", "))
	}
	c := &dumpCmd{fst: fst}
	fs := pflag.NewFlagSet("dump "+fst.Name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	defineDumpFlags(c, fs, dfs)
	if err := fs.Parse(args[1:]); err != nil {
		return nil, dfs, usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return nil, dfs, usagef("unexpected arguments %q", fs.Args())
	}
	return c, dfs, c.validate(fs.Changed)
}

// maxDumpNames bounds --count.
const maxDumpNames = 1 << 20

func runDump(cmd *cobra.Command, c *dumpCmd, dfs dumpFS) error {
	stdout := cmd.OutOrStdout()
	k := kernel.New()
	t := k.NewTask("vfslab-dump")
	defer t.Exit()
	c.t = t
	rep, err := c.runGuarded(dfs)
	if err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			return err
		}
		return &kernelError{err, kernelLog(k)}
	}
	if c.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = rep.writeText(stdout)
	}
	if err != nil {
		return err
	}
	if !rep.Check.OK {
		return &statusError{status: 1, msg: "the directory checker found problems (the check lines above)"}
	}
	return nil
}

// validate checks the flag combinations.
func (c *dumpCmd) validate(changed func(string) bool) error {
	given := func(name string) bool { return changed(name) }
	if given("names") && given("count") {
		return usageError{"--names and --count exclude each other"}
	}
	if c.count < 0 || c.count > 1<<20 {
		return usageError{fmt.Sprintf("--count %d: want 0 .. %d", c.count, 1<<20)}
	}
	if c.strict && !c.casefold {
		return usageError{"--strict needs --casefold"}
	}
	if !c.encrypt {
		for _, f := range []string{"master-key", "filenames-mode", "padding", "nonce", "no-key"} {
			if given(f) {
				return usageError{fmt.Sprintf("--%s needs --encrypt", f)}
			}
		}
	} else if c.masterKey == "" {
		return usageError{"--encrypt needs --master-key"}
	}
	switch c.padding {
	case 4, 8, 16, 32:
	default:
		return usageError{fmt.Sprintf("--padding %d: want 4, 8, 16 or 32", c.padding)}
	}
	return nil
}

func (c *dumpCmd) runGuarded(dfs dumpFS) (rep *dumpReport, err error) {
	defer c.t.Recover(&err)
	names, err := c.names()
	if err != nil {
		return nil, err
	}
	var um *fsunicode.Map
	if c.casefold {
		if um, err = fsunicode.Load("12.1.0"); err != nil {
			return nil, fmt.Errorf("utf8_load(12.1.0): %w", err)
		}
	}
	var crypt *dumpCrypt
	if c.encrypt {
		if crypt, err = c.setupCrypt(dfs.dirIno()); err != nil {
			return nil, err
		}
	}
	return dfs.build(c, names, um, crypt)
}

// names returns the names to create.
func (c *dumpCmd) names() ([][]byte, error) {
	if c.namesFile == "" {
		out := make([][]byte, c.count)
		for i := range out {
			out[i] = []byte(strconv.Itoa(i))
		}
		return out, nil
	}
	var raw []byte
	var err error
	if c.namesFile == "-" {
		raw, err = io.ReadAll(dumpStdin)
	} else {
		raw, err = os.ReadFile(c.namesFile)
	}
	if err != nil {
		return nil, usageError{fmt.Sprintf("--names: %v", err)}
	}
	var out [][]byte
	for _, l := range bytes.Split(raw, []byte("\n")) {
		if len(l) > 0 {
			out = append(out, l)
		}
	}
	return out, nil
}

// vfsRefuses is what the VFS answers before the filesystem sees a name:
// no path component is empty, holds '/' or NUL, and "." and ".." exist.
func vfsRefuses(name []byte) error {
	switch {
	case len(name) == 0:
		return errno.ENOENT
	case bytes.IndexByte(name, '/') >= 0 || bytes.IndexByte(name, 0) >= 0:
		return errno.EINVAL
	case string(name) == "." || string(name) == "..":
		return errno.EEXIST
	}
	return nil
}

// dumpCrypt is an encrypted directory's fscrypt side: the directory inode
// with its key set up, and the same inode on a superblock whose keyring
// lacks the key.
type dumpCrypt struct {
	withKey, noKey *bare.Inode
	key            []byte
}

// setupCrypt adds the master key and makes the fscrypt inodes of the
// directory, inode ino (a v2 policy; contents mode paired with the
// filenames mode as the kernel requires).
func (c *dumpCmd) setupCrypt(ino uint64) (*dumpCrypt, error) {
	t := c.t
	key, err := parseHex("--master-key", c.masterKey, -1)
	if err != nil {
		return nil, err
	}
	if len(key) < fscrypt.MinKeySize || len(key) > fscrypt.MaxKeySize {
		return nil, usageError{fmt.Sprintf("--master-key: %d bytes, want %d-%d", len(key), fscrypt.MinKeySize, fscrypt.MaxKeySize)}
	}
	nonce, err := parseHex("--nonce", c.nonce, fscrypt.FileNonceSize)
	if err != nil {
		return nil, err
	}
	fm, err := fscrypt.ParseMode(c.filenamesMode)
	if err != nil {
		return nil, usageError{"--filenames-mode: " + err.Error()}
	}
	var contents int
	switch fm.Num {
	case fscrypt.ModeAES256CTS, fscrypt.ModeAES256HCTR2:
		contents = fscrypt.ModeAES256XTS
	case fscrypt.ModeAES128CTS:
		contents = fscrypt.ModeAES128CBC
	case fscrypt.ModeAdiantum:
		contents = fscrypt.ModeAdiantum
	default:
		return nil, usageError{fmt.Sprintf("--filenames-mode %s is not a filenames mode", fm)}
	}
	pad := map[int]uint8{4: fscrypt.PolicyFlagsPad4, 8: fscrypt.PolicyFlagsPad8, 16: fscrypt.PolicyFlagsPad16, 32: fscrypt.PolicyFlagsPad32}[c.padding]
	fsb := bare.NewSB(crypto.NewAPI())
	id, _, err := bare.AddKey(t, fsb, 2, key)
	if err != nil {
		return nil, fmt.Errorf("FS_IOC_ADD_ENCRYPTION_KEY: %w", err)
	}
	p := fscrypt.Policy{Version: fscrypt.PolicyV2, ContentsMode: uint8(contents), FilenamesMode: uint8(fm.Num), Flags: pad, Identifier: id}
	ctx := fscrypt.Context{Policy: p}
	copy(ctx.Nonce[:], nonce)
	mk := func(sb *bare.SB) *bare.Inode {
		i := sb.NewInode(ino, fscrypt.SIFDIR|0o755)
		i.BlockBits = 12
		i.Casefold = c.casefold
		i.SetRawContext(ctx.Marshal())
		return i
	}
	d := &dumpCrypt{withKey: mk(fsb), noKey: mk(bare.NewSB(crypto.NewAPI())), key: key}
	if err := fscrypt.GetEncryptionInfo(t, d.withKey, false); err != nil {
		return nil, fmt.Errorf("key setup: %w", err)
	}
	if !fscrypt.HasEncryptionKey(d.withKey) {
		return nil, fmt.Errorf("key setup: %w", errno.ENOKEY)
	}
	return d, nil
}

// Inode numbers of the dumped directories: ext4's directory is inode 12
// under the root (2); f2fs's is inode 4 under its root (3, which mkfs
// makes). Created names get the following numbers.
const (
	ext4DumpIno, ext4RootIno = 12, 2
	f2fsDumpIno              = 4
)

// dumpReport is the dump of one directory; it is the JSON form.
type dumpReport struct {
	FS      string        `json:"fs"`
	Dir     dumpDir       `json:"dir"`
	Created int           `json:"created"`
	Refused []dumpRefusal `json:"refused"`
	Blocks  []dumpBlock   `json:"blocks"`
	Check   dumpCheck     `json:"check"`

	// unit is what the text form calls a block ("block", "dentry
	// block").
	unit string
	// dir is the directory dumped, *ext4.Inode or *f2fs.Inode (for
	// tests).
	dir any
}

// dumpDir describes the directory inode.
type dumpDir struct {
	Ino       uint32 `json:"ino"`
	Size      int64  `json:"size"`
	Blocks    int    `json:"blocks"`
	Casefold  bool   `json:"casefold"`
	Strict    bool   `json:"strict,omitempty"`
	Encrypt   bool   `json:"encrypt"`
	Key       bool   `json:"key,omitempty"`
	Filenames string `json:"filenames_mode,omitempty"`
	Padding   int    `json:"padding,omitempty"`
	// ext4
	Htree        *bool  `json:"htree,omitempty"`
	HashVersion  string `json:"hash_version,omitempty"`
	HashSeed     string `json:"hash_seed,omitempty"`
	MetadataCsum *bool  `json:"metadata_csum,omitempty"`
	// f2fs
	Inline   *bool   `json:"inline,omitempty"`
	Depth    *uint32 `json:"depth,omitempty"`
	DirLevel *uint32 `json:"dir_level,omitempty"`
	// Line is the package's canonical one-line dump of the inode.
	Line string `json:"line"`
}

// dumpRefusal is a name the kernel refused to create.
type dumpRefusal struct {
	Name    string `json:"name,omitempty"` // when valid UTF-8
	NameHex string `json:"name_hex"`
	Error   string `json:"error"`

	raw []byte
}

// dumpBlock is one directory block (or f2fs's inline area).
type dumpBlock struct {
	// Block is the logical block (ext4) or page index (f2fs); -1 for the
	// inline area.
	Block int64 `json:"block"`
	// Phys is the device block.
	Phys uint32 `json:"phys,omitempty"`
	// Kind: ext4 "dx_root", "dx_node", "leaf" or "hole"; f2fs "inline" or
	// "dentry".
	Kind string `json:"kind"`

	// ext4 dx blocks.
	Dot            *uint32       `json:"dot,omitempty"`
	DotDot         *uint32       `json:"dotdot,omitempty"`
	HashVersion    *uint8        `json:"hash_version,omitempty"`
	InfoLength     *uint8        `json:"info_length,omitempty"`
	IndirectLevels *uint8        `json:"indirect_levels,omitempty"`
	Limit          int           `json:"limit,omitempty"`
	Count          int           `json:"count,omitempty"`
	Index          []dumpDxEntry `json:"index,omitempty"`
	DxCsum         string        `json:"dx_csum,omitempty"`
	// ext4 dx nodes and leaves in an htree: the range of hashes their
	// index entry gives them ([lo, hi); hi "" for the last one).
	HashLo string `json:"hash_lo,omitempty"`
	HashHi string `json:"hash_hi,omitempty"`
	// Csum is the leaf's checksum tail (metadata_csum).
	Csum string `json:"csum,omitempty"`

	// f2fs: level and bucket of the block, bucket count of its level, and
	// the slots in use.
	Level    *uint32 `json:"level,omitempty"`
	Bucket   *uint64 `json:"bucket,omitempty"`
	Buckets  uint64  `json:"buckets,omitempty"`
	Slots    int     `json:"slots,omitempty"`
	MaxSlots int     `json:"max_slots,omitempty"`

	Entries []dumpEntry `json:"entries"`
	// Problem says where the walk of a malformed block stopped.
	Problem string `json:"problem,omitempty"`
}

// dumpDxEntry is one dx_entry: the lowest hash of the child and its block
// (the first entry has no hash).
type dumpDxEntry struct {
	Hash  string `json:"hash"`
	Block uint32 `json:"block"`
}

// dumpEntry is one directory entry.
type dumpEntry struct {
	Offset   *int   `json:"offset,omitempty"` // ext4
	Slot     *int   `json:"slot,omitempty"`   // f2fs
	SlotsFor int    `json:"name_slots,omitempty"`
	Ino      uint32 `json:"ino"`
	RecLen   int    `json:"rec_len,omitempty"` // ext4
	NameLen  int    `json:"name_len"`
	FileType uint8  `json:"file_type"`
	Unused   bool   `json:"unused,omitempty"`
	// Hash and Minor: f2fs's hash_code, ext4's stored hashes
	// (HashStored) or the htree hash the kernel computes for the name.
	Hash       string `json:"hash,omitempty"`
	Minor      string `json:"minor,omitempty"`
	HashStored bool   `json:"hash_stored,omitempty"`
	// Name is the name as shown (plaintext, no-key name or the on-disk
	// bytes) when it is valid UTF-8, NameHex its bytes; DiskHex is the
	// on-disk bytes of an encrypted name; NoKey marks a no-key name.
	Name    string `json:"name,omitempty"`
	NameHex string `json:"name_hex,omitempty"`
	DiskHex string `json:"disk_hex,omitempty"`
	NoKey   bool   `json:"nokey,omitempty"`
	// Error is fscrypt's answer when the name could not be shown.
	Error string `json:"error,omitempty"`

	shown []byte
}

// dumpCheck is the directory checker's verdict.
type dumpCheck struct {
	OK       bool     `json:"ok"`
	Problems []string `json:"problems,omitempty"`
}

func verdict(err error) dumpCheck {
	if err == nil {
		return dumpCheck{OK: true}
	}
	var ce *libfs.CheckError
	switch {
	case errors.As(err, &ce):
		return dumpCheck{Problems: ce.Problems}
	}
	return dumpCheck{Problems: []string{describeErr(err)}}
}

// nameOf fills the name fields of e from the on-disk bytes disk and, in
// an encrypted directory, what the walker says readdir shows for them
// (fscrypt_fname_disk_to_usr's answer: the plaintext with the key, a
// no-key name without it, or its error).
func nameOf(e *dumpEntry, disk []byte, encrypted, hasKey bool, user []byte, userErr error) {
	shown := disk
	if encrypted && !(string(disk) == "." || string(disk) == "..") {
		e.DiskHex = hex.EncodeToString(disk)
		if userErr != nil {
			e.Error = describeErr(userErr)
			return
		}
		shown = user
		e.NoKey = !hasKey
	}
	e.shown = shown
	if utf8.Valid(shown) {
		e.Name = string(shown)
	}
	e.NameHex = hex.EncodeToString(shown)
}

func (c *dumpCmd) create(add func(name []byte, ino uint32) error, names [][]byte, firstIno uint32, rep *dumpReport) {
	ino := firstIno
	for _, n := range names {
		err := vfsRefuses(n)
		if err == nil {
			err = add(n, ino)
		}
		if err != nil {
			f := dumpRefusal{NameHex: hex.EncodeToString(n), Error: describeErr(err), raw: n}
			if utf8.Valid(n) {
				f.Name = string(n)
			}
			rep.Refused = append(rep.Refused, f)
			continue
		}
		rep.Created++
		ino++
	}
}

func (c *dumpCmd) fillDirCommon(d *dumpDir, crypt *dumpCrypt) {
	d.Casefold, d.Strict, d.Encrypt = c.casefold, c.strict, c.encrypt
	if crypt != nil {
		d.Key = !c.noKey
		m, _ := fscrypt.ParseMode(c.filenamesMode)
		d.Filenames = m.FriendlyName
		d.Padding = c.padding
	}
}

// ---- ext4 ----

// ext4Dump dumps an ext4 directory: inode 12, made on the superblock of a
// booted ext4 whose features and hash settings the flags set.
type ext4Dump struct{}

func (ext4Dump) flags(c *dumpCmd, fs *pflag.FlagSet) {
	fs.StringVar(&c.hashVersion, "hash-version", "half_md4", "default hash version: legacy, half_md4, tea or their _unsigned forms")
	fs.StringVar(&c.hashSeed, "hash-seed", "", "s_hash_seed, 16 bytes hex")
	boolFlagNo(fs, &c.metadataCsum, "metadata-csum", true, "metadata_csum feature")
	boolFlagNo(fs, &c.dirIndex, "dir-index", true, "dir_index feature")
	fs.BoolVar(&c.huge, "large-dir", false, "large_dir feature")
}

func (ext4Dump) dirIno() uint64 { return ext4DumpIno }

func (ext4Dump) build(c *dumpCmd, names [][]byte, um *fsunicode.Map, crypt *dumpCrypt) (*dumpReport, error) {
	t := c.t
	sys, _, err := ext4.Boot(t, vfs.Config{}, nil)
	if err != nil {
		return nil, err
	}
	sb := ext4.EXT4_SB(sys.RootMount().SB)
	sb.Dev = ext4.NewDevice() // the dumped directory's blocks are numbered from 1
	sb.MetadataCsum, sb.DirIndex, sb.LargeDir = c.metadataCsum, c.dirIndex, c.huge
	ver, err := parseHashVersion(c.hashVersion)
	if err != nil || ver == ext4.DxHashSiphash {
		return nil, usageError{fmt.Sprintf("--hash-version %q: want legacy, half_md4, tea or their _unsigned forms", c.hashVersion)}
	}
	sb.DefHashVersion, sb.HashUnsigned = ver, 0
	if ver > ext4.DxHashTEA {
		// s_def_hash_version keeps the signed number; EXT2_FLAGS_UNSIGNED_HASH
		// selects the unsigned forms (s_hash_unsigned = 3).
		sb.DefHashVersion, sb.HashUnsigned = ver-3, 3
	}
	var seed [16]byte
	if c.hashSeed != "" {
		s, err := parseHex("--hash-seed", strings.ReplaceAll(c.hashSeed, "-", ""), 16)
		if err != nil {
			return nil, err
		}
		copy(seed[:], s)
	}
	sb.HashSeed = ext4.HashSeedWords(&seed)
	if need := uint32(ext4DumpIno + 1 + len(names)); need > sb.InodesCount {
		sb.InodesCount = need
	}
	if um != nil {
		sb.Encoding = um
		if c.strict {
			sb.EncodingFlags |= ext4.EncStrictModeFL
		}
	}
	dir, err := sb.NewDirInode(t, ext4DumpIno, 0, 0o755)
	if err != nil {
		return nil, err
	}
	if c.casefold {
		dir.Flags |= ext4.CasefoldFL
		dir.SetInodeFlags()
	}
	if crypt != nil {
		// The directory's own policy and key: the key in the
		// superblock's keyring, ext4_set_context, then
		// fscrypt_get_encryption_info.
		if _, _, err := bare.AddKey(t, sb.VFS(), 2, crypt.key); err != nil {
			return nil, err
		}
		if err := sb.SetContext(t, &dir.Inode, crypt.withKey.RawContext(), nil); err != nil {
			return nil, err
		}
		if err := fscrypt.GetEncryptionInfo(t, &dir.Inode, false); err != nil {
			return nil, err
		}
	}
	if err := ext4.InitNewDir(t, dir, ext4RootIno); err != nil {
		return nil, err
	}
	rep := &dumpReport{FS: c.fst.Name, unit: "block", Refused: []dumpRefusal{}, dir: dir}
	c.create(func(n []byte, ino uint32) error { return ext4.AddEntry(t, dir, n, ino, ext4.SIfreg|0o644) }, names, ext4DumpIno+1, rep)
	if crypt != nil && c.noKey {
		// Without the key: FS_IOC_REMOVE_ENCRYPTION_KEY, and the inode's
		// key gone with it.
		p, _ := fscrypt.GetPolicy(t, &dir.Inode)
		fscrypt.PutEncryptionInfo(t, &dir.Inode)
		arg := &fscrypt.RemoveKeyArg{KeySpec: fscrypt.IdentifierSpec(p.Identifier)}
		if err := fscrypt.IoctlRemoveKey(t, kernel.RootCred, sb.VFS(), arg); err != nil {
			return nil, err
		}
	}

	l := ext4.WalkDirents(t, dir)
	d := &rep.Dir
	d.Ino, d.Size, d.Blocks = uint32(l.Ino), l.Size, len(l.Blocks)
	c.fillDirCommon(d, crypt)
	d.Htree, d.MetadataCsum = &l.Htree, &l.MetadataCsum
	d.HashVersion = versionName(l.HashVersion)
	d.HashSeed = hex.EncodeToString(seed[:])
	d.Line = dir.String()
	for i := range l.Blocks {
		rep.Blocks = append(rep.Blocks, ext4Block(l, &l.Blocks[i]))
	}
	rep.Check = verdict(ext4.CheckDir(t, dir))
	return rep, nil
}

// versionName names a DX_HASH_* value as --version spells it.
func versionName(v uint8) string {
	for n, x := range hashVersions {
		if x == v {
			return n
		}
	}
	return strconv.Itoa(int(v))
}

// hashHex renders a hash or checksum as the dumps show it.
func hashHex(v uint32) string { return fmt.Sprintf("%08x", v) }

// ext4Block renders one block of the directory as the walker decoded it.
func ext4Block(l *ext4.DirLayout, db *ext4.DirBlock) dumpBlock {
	blk := dumpBlock{Block: int64(db.Lblk), Kind: db.Kind, Entries: []dumpEntry{}}
	if db.Kind == ext4.KindHole {
		return blk
	}
	blk.Phys = db.Phys
	if db.InTree && db.Kind != ext4.KindDxRoot {
		blk.HashLo = hashHex(db.HashLo)
		if db.HasHi {
			blk.HashHi = hashHex(db.HashHi)
		}
	}
	blk.Problem = db.Problem
	if db.Kind == ext4.KindDxRoot || db.Kind == ext4.KindDxNode {
		if db.Kind == ext4.KindDxRoot {
			blk.Dot, blk.DotDot = &db.Dot, &db.DotDot
			blk.HashVersion, blk.InfoLength, blk.IndirectLevels = &db.HashVersion, &db.InfoLength, &db.IndirectLevels
		}
		if db.Problem != "" {
			return blk
		}
		blk.Limit, blk.Count = db.Limit, db.Count
		for i, e := range db.Index {
			x := dumpDxEntry{Block: e.Block}
			if i > 0 {
				x.Hash = hashHex(e.Hash)
			}
			blk.Index = append(blk.Index, x)
		}
		if db.HasDxCsum {
			blk.DxCsum = hashHex(db.DxCsum)
		}
		return blk
	}
	if db.HasCsum {
		blk.Csum = hashHex(db.Csum)
	}
	for i := range db.Entries {
		de := &db.Entries[i]
		e := dumpEntry{Offset: &de.Off, Ino: de.Inode, RecLen: de.RecLen, NameLen: de.NameLen, FileType: de.FileType}
		if de.Unused() {
			e.Unused = true
			blk.Entries = append(blk.Entries, e)
			continue
		}
		if de.HashStored || de.HashComputed {
			e.Hash, e.Minor, e.HashStored = hashHex(de.Hash), hashHex(de.MinorHash), de.HashStored
		}
		nameOf(&e, de.Name, l.Encrypt, l.HasKey, de.User, de.UserErr)
		blk.Entries = append(blk.Entries, e)
	}
	return blk
}

// ---- f2fs ----

// f2fsDump dumps an f2fs directory: /d, inode 4, on a formatted and
// mounted f2fs whose mount options the flags set.
type f2fsDump struct{}

func (f2fsDump) flags(c *dumpCmd, fs *pflag.FlagSet) {
	boolFlagNo(fs, &c.inline, "inline", true, "inline dentries")
	fs.UintVar(&c.dirLevel, "dir-level", 0, "i_dir_level")
}

func (f2fsDump) dirIno() uint64 { return f2fsDumpIno }

func (f2fsDump) build(c *dumpCmd, names [][]byte, um *fsunicode.Map, crypt *dumpCrypt) (*dumpReport, error) {
	t := c.t
	if c.dirLevel > f2fs.MaxDirHashDepth {
		return nil, usageError{fmt.Sprintf("--dir-level %d: want 0 .. %d", c.dirLevel, f2fs.MaxDirHashDepth)}
	}
	dir, removeKey, err := c.f2fsDir(um, crypt)
	if err != nil {
		return nil, err
	}
	rep := &dumpReport{FS: c.fst.Name, unit: "dentry block", Refused: []dumpRefusal{}, dir: dir}
	c.create(func(n []byte, ino uint32) error { return f2fs.AddLink(t, dir, n, ino, f2fs.SIfreg|0o644) }, names, f2fsDumpIno+1, rep)
	if crypt != nil && c.noKey {
		if err := removeKey(); err != nil {
			return nil, err
		}
	}

	l := f2fs.WalkDirents(t, dir)
	d := &rep.Dir
	d.Ino, d.Size = uint32(l.Ino), l.Size
	c.fillDirCommon(d, crypt)
	d.Inline, d.Depth, d.DirLevel = &l.Inline, &l.Depth, &l.DirLevel
	d.Line = dir.String()
	for i := range l.Areas {
		a := &l.Areas[i]
		blk := dumpBlock{Block: -1, Kind: a.Kind.String()}
		if a.Kind == f2fs.AreaDentryBlock {
			d.Blocks++
			blk.Block = int64(a.Page)
			if a.InTable {
				blk.Level, blk.Bucket, blk.Buckets = &a.Level, &a.Bucket, a.Buckets
			}
		}
		f2fsArea(l, a, &blk)
		rep.Blocks = append(rep.Blocks, blk)
	}
	rep.Check = verdict(f2fs.CheckDir(t, dir))
	return rep, nil
}

// f2fsDir formats an f2fs with the dump's features and mount options and
// makes the dumped directory, inode 4 under the root (mkdir), casefolded
// with FS_IOC_SETFLAGS, and encrypted with the dump's context
// (f2fs_set_context) whose key is added to the filesystem. removeKey
// takes the key away again (fscrypt_put_encryption_info, then
// FS_IOC_REMOVE_ENCRYPTION_KEY), for a dump without it.
func (c *dumpCmd) f2fsDir(um *fsunicode.Map, crypt *dumpCrypt) (dir *f2fs.Inode, removeKey func() error, err error) {
	t := c.t
	opts := &f2fs.Options{Casefold: c.casefold, Strict: c.strict, NoInlineDentry: !c.inline, DirLevel: uint32(c.dirLevel)}
	mo, err := vfs.FormatNew(t, f2fs.Type, opts.MkfsArgs(), opts.MountData())
	if err != nil {
		return nil, nil, err
	}
	mo.Encoding, mo.Strict = um, c.strict
	_, p, err := vfs.Boot(t, vfs.Config{}, f2fs.Type, mo)
	if err != nil {
		return nil, nil, err
	}
	if err := p.Mkdir(t, "/d", 0o755); err != nil {
		return nil, nil, err
	}
	if c.casefold {
		fd, err := p.Open(t, "/d", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		if err != nil {
			return nil, nil, err
		}
		fl := uint32(vfs.FS_CASEFOLD_FL)
		_, err = p.Ioctl(t, fd, vfs.FS_IOC_SETFLAGS, &fl)
		p.Close(t, fd)
		if err != nil {
			return nil, nil, fmt.Errorf("FS_IOC_SETFLAGS: %w", err)
		}
	}
	// The dump holds the directory's dentry (and so its inode) to the end.
	d, err := p.LookupDentry(t, "/d", true)
	if err != nil {
		return nil, nil, err
	}
	dir = f2fs.F2FS_I(d.Inode())
	if dir.Ino() != f2fsDumpIno {
		return nil, nil, fmt.Errorf("mkdir made inode %d", dir.Ino())
	}
	if crypt == nil {
		return dir, nil, nil
	}
	fd, err := p.Open(t, "/", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		return nil, nil, err
	}
	id, err := p.AddEncryptionKey(t, fd, crypt.key)
	if err != nil {
		return nil, nil, fmt.Errorf("FS_IOC_ADD_ENCRYPTION_KEY: %w", err)
	}
	if err := dir.SB.SetContext(t, &dir.Inode, crypt.withKey.RawContext(), nil); err != nil {
		return nil, nil, fmt.Errorf("f2fs_set_context: %w", err)
	}
	if err := fscrypt.GetEncryptionInfo(t, &dir.Inode, false); err != nil || !fscrypt.HasEncryptionKey(&dir.Inode) {
		return nil, nil, fmt.Errorf("key setup: %w", errors.Join(err, errno.ENOKEY))
	}
	removeKey = func() error {
		defer p.Close(t, fd)
		fscrypt.PutEncryptionInfo(t, &dir.Inode)
		if _, err := p.RemoveEncryptionKey(t, fd, id); err != nil {
			return fmt.Errorf("FS_IOC_REMOVE_ENCRYPTION_KEY: %w", err)
		}
		return nil
	}
	return dir, removeKey, nil
}

// f2fsArea renders one dentry area as the walker decoded it.
func f2fsArea(l *f2fs.DirLayout, a *f2fs.DentryArea, blk *dumpBlock) {
	blk.Entries = []dumpEntry{}
	blk.MaxSlots, blk.Slots = a.Max, a.Used
	for i := range a.Dirents {
		de := &a.Dirents[i]
		e := dumpEntry{Slot: &de.Slot, Ino: de.Entry.Ino, NameLen: int(de.Entry.NameLen), FileType: de.Entry.FileType, Hash: hashHex(de.Entry.HashCode)}
		if de.Slots == 0 {
			e.Unused = true
			blk.Entries = append(blk.Entries, e)
			continue
		}
		e.SlotsFor = de.Slots
		nameOf(&e, de.Name, l.Encrypt, l.HasKey, de.User, de.UserErr)
		blk.Entries = append(blk.Entries, e)
	}
	if a.BadSlot >= 0 {
		blk.Problem = fmt.Sprintf("slot %d: bad name_len %d", a.BadSlot, a.BadNameLen)
	}
}

// ---- text ----

func (r *dumpReport) writeText(w io.Writer) error {
	var b strings.Builder
	d := &r.Dir
	var feats []string
	if d.Htree != nil && *d.Htree {
		feats = append(feats, "htree")
	}
	if d.HashVersion != "" {
		feats = append(feats, "hash "+d.HashVersion)
	}
	if d.HashSeed != "" && strings.Trim(d.HashSeed, "0") != "" {
		feats = append(feats, "seed "+d.HashSeed)
	}
	if d.MetadataCsum != nil && *d.MetadataCsum {
		feats = append(feats, "metadata_csum")
	}
	if d.Inline != nil {
		if *d.Inline {
			feats = append(feats, "inline")
		}
		feats = append(feats, fmt.Sprintf("depth %d", *d.Depth), fmt.Sprintf("dir_level %d", *d.DirLevel))
	}
	if d.Casefold {
		cf := "casefold"
		if d.Strict {
			cf += " (strict)"
		}
		feats = append(feats, cf)
	}
	if d.Encrypt {
		key := "key present"
		if !d.Key {
			key = "no key"
		}
		feats = append(feats, fmt.Sprintf("encrypt (%s, pad %d, %s)", d.Filenames, d.Padding, key))
	}
	unit := r.unit
	if d.Blocks != 1 {
		unit += "s"
	}
	fmt.Fprintf(&b, "%s directory ino %d: size %d, %d %s", r.FS, d.Ino, d.Size, d.Blocks, unit)
	if len(feats) > 0 {
		fmt.Fprintf(&b, ", %s", strings.Join(feats, ", "))
	}
	fmt.Fprintf(&b, "\ncreated %d, refused %d\n", r.Created, len(r.Refused))
	for _, f := range r.Refused {
		fmt.Fprintf(&b, "  refused %s: %s\n", libfs.QuoteName(f.raw), f.Error)
	}
	for i := range r.Blocks {
		r.blockText(&b, &r.Blocks[i])
	}
	if r.Check.OK {
		b.WriteString("check: ok\n")
	} else {
		fmt.Fprintf(&b, "check: %d problems\n", len(r.Check.Problems))
		for _, p := range r.Check.Problems {
			fmt.Fprintf(&b, "  %s\n", p)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (r *dumpReport) blockText(b *strings.Builder, blk *dumpBlock) {
	switch blk.Kind {
	case "hole":
		fmt.Fprintf(b, "block %d: hole\n", blk.Block)
		return
	case "dx_root", "dx_node":
		fmt.Fprintf(b, "block %d (phys %d): %s", blk.Block, blk.Phys, blk.Kind)
		if blk.Kind == "dx_root" {
			fmt.Fprintf(b, ", \".\" %d, \"..\" %d, hash_version %d, info_length %d, indirect_levels %d",
				*blk.Dot, *blk.DotDot, *blk.HashVersion, *blk.InfoLength, *blk.IndirectLevels)
		}
		if blk.HashLo != "" {
			fmt.Fprintf(b, ", hashes %s", hashRange(blk))
		}
		fmt.Fprintf(b, ", limit %d, count %d", blk.Limit, blk.Count)
		if blk.DxCsum != "" {
			fmt.Fprintf(b, ", csum %s", blk.DxCsum)
		}
		b.WriteString("\n")
		for i, e := range blk.Index {
			h := e.Hash
			if i == 0 {
				h = "--------"
			}
			fmt.Fprintf(b, "  entry %d: hash %s -> block %d\n", i, h, e.Block)
		}
	case "leaf":
		fmt.Fprintf(b, "block %d (phys %d): leaf", blk.Block, blk.Phys)
		if blk.HashLo != "" {
			fmt.Fprintf(b, ", hashes %s", hashRange(blk))
		}
		if blk.Csum != "" {
			fmt.Fprintf(b, ", csum %s", blk.Csum)
		}
		b.WriteString("\n")
		for _, e := range blk.Entries {
			if e.Unused {
				fmt.Fprintf(b, "  %4d  unused  rec_len %d\n", *e.Offset, e.RecLen)
				continue
			}
			fmt.Fprintf(b, "  %4d  ino %-6d rec_len %-4d type %d", *e.Offset, e.Ino, e.RecLen, e.FileType)
			if e.Hash != "" {
				stored := ""
				if e.HashStored {
					stored = " (stored)"
				}
				fmt.Fprintf(b, "  hash %s:%s%s", e.Hash, e.Minor, stored)
			}
			fmt.Fprintf(b, "  %s%s\n", entryName(&e), diskSuffix(&e))
		}
	case "inline", "dentry":
		if blk.Kind == "inline" {
			b.WriteString("inline dentries")
		} else {
			fmt.Fprintf(b, "page %d", blk.Block)
			if blk.Level != nil {
				fmt.Fprintf(b, ": level %d, bucket %d of %d", *blk.Level, *blk.Bucket, blk.Buckets)
			} else {
				b.WriteString(": beyond i_current_depth")
			}
		}
		fmt.Fprintf(b, ", slots %d/%d\n", blk.Slots, blk.MaxSlots)
		for _, e := range blk.Entries {
			if e.Unused {
				fmt.Fprintf(b, "  slot %3d  empty (name_len 0) hash %s ino %d\n", *e.Slot, e.Hash, e.Ino)
				continue
			}
			fmt.Fprintf(b, "  slot %3d  +%d  hash %s  ino %-6d type %d  %s%s\n", *e.Slot, e.SlotsFor, e.Hash, e.Ino, e.FileType, entryName(&e), diskSuffix(&e))
		}
	}
	if blk.Problem != "" {
		fmt.Fprintf(b, "  ! %s\n", blk.Problem)
	}
}

// hashRange renders an htree block's hash range as lo..hi ("end" for
// the last one).
func hashRange(blk *dumpBlock) string {
	hi := "end"
	if blk.HashHi != "" {
		hi = blk.HashHi
	}
	return blk.HashLo + ".." + hi
}

// entryName renders an entry's name for the text form.
func entryName(e *dumpEntry) string {
	if e.Error != "" {
		return "!" + e.Error
	}
	return libfs.QuoteName(e.shown)
}

// diskSuffix shows the on-disk bytes of an encrypted name.
func diskSuffix(e *dumpEntry) string {
	if e.DiskHex == "" {
		return ""
	}
	s := "  disk " + e.DiskHex
	if e.NoKey {
		s = "  (no-key name)" + s
	}
	return s
}
