package main

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/vfslab/vfslab/crypto"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/patch"
)

// cryptStdin is where `vfslab crypt` reads contents and "-" inputs (tests
// replace it).
var cryptStdin io.Reader = os.Stdin

// testRawKey is xfstests' TEST_RAW_KEY (common/encrypt: the 64 bytes
// 0x01, 0x02, ... 0x40), whose v2 key identifier is TEST_KEY_IDENTIFIER
// 69b2f6edeee720cce0577937eb8a6751. The help's examples use it.
const testRawKey = "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f" +
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f40"

// cryptExamples are the examples of `vfslab crypt --help`, each with its
// output (TestCryptHelpExamples runs them).
var cryptExamples = []struct{ cmd, stdin, out string }{
	{cmd: "vfslab crypt keyid --master-key " + testRawKey, out: "69b2f6edeee720cce0577937eb8a6751\n"},
	{cmd: "vfslab crypt fname --master-key " + testRawKey + " --nonce 000102030405060708090a0b0c0d0e0f 666f6f",
		out: "19f5ef064509ac90dcb5f29489bbf701\n"},
	{cmd: "vfslab crypt fname --master-key " + testRawKey + " --nonce 000102030405060708090a0b0c0d0e0f -",
		stdin: "61\n6262\n", out: "8baeca36c4a2f78de21c8cd1c535ca09\nb14f527b419a706febec444dc354f316\n"},
}

// cryptExampleText renders cryptExamples for --help.
func cryptExampleText() string {
	var b strings.Builder
	b.WriteString("  # the key identifier and encrypted names of \"foo\", \"a\" and \"bb\" under xfstests'\n")
	b.WriteString("  # TEST_RAW_KEY (common/encrypt: the 64 bytes 0x01..0x40), v2 policy, AES-256-CTS-CBC\n")
	for _, e := range cryptExamples {
		b.WriteString("  $ ")
		if e.stdin != "" {
			fmt.Fprintf(&b, "printf '%s' | ", strings.ReplaceAll(e.stdin, "\n", "\\n"))
		}
		b.WriteString(e.cmd + "\n")
		b.WriteString(indent(e.out))
	}
	return strings.TrimRight(b.String(), "\n")
}

const cryptLong = `A command-line twin of xfstests' fscrypt-crypt-util that runs the simulator's
fs/crypto code: every value is hex (whitespace and newlines allowed, as xxd -p
prints it), the result is one hex line on stdout. Exit status: 0; 1 when the
kernel refuses, with its reason (a master key outside 16..64 bytes, a policy it
rejects, an inode number or data unit index an IV_INO_LBLK policy cannot hold);
2 for bad usage.

fname, nokey and dirhash take "-" in place of their hex argument: one input
per line of stdin (empty lines skipped), one result per line, with the key set
up once.

POLICY flags (fname, contents, derive, dirhash):
  --policy-version 1|2   (default 2)
  --contents-mode M      AES-256-XTS, AES-128-CBC-ESSIV, Adiantum (default AES-256-XTS)
  --filenames-mode M     AES-256-CTS-CBC, AES-128-CTS-CBC, Adiantum, AES-256-HCTR2
                         (default AES-256-CTS-CBC)
  --flags N              policy flags: padding 0-3 | 0x04 DIRECT_KEY |
                         0x08 IV_INO_LBLK_64 | 0x10 IV_INO_LBLK_32 (default 0)
  --master-key HEX       the master key (required; the kernel accepts 16-64 bytes)
  --nonce HEX            the file's or directory's 16-byte nonce (required
                         unless an IV_INO_LBLK flag is set)
  --fs-uuid HEX          the filesystem UUID (16 bytes, default zeros)
  --patches SET          patch variants, e.g. fscrypt-v1-kdf=aeslib (all give
                         the same bytes)

IV_INO_LBLK_64 and IV_INO_LBLK_32 policies need inode numbers in 1..2^32-1
(supported_iv_ino_lblk_policy wants a filesystem with 32-bit inode numbers;
fscrypt_generate_iv WARNs on i_ino > U32_MAX, fscrypt_hash_inode_number on
i_ino == 0) and data unit indices below 2^32 (fscrypt_generate_iv WARNs on
index > U32_MAX): crypt refuses the rest, as the kernel would.`

func newCryptCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "crypt SUBCOMMAND [flags] [ARG]",
		Short:   "compute what fscrypt writes: encrypted names and contents, keys, key identifiers, no-key names, dirhashes",
		Long:    cryptLong,
		Example: cryptExampleText(),
		Args:    cobra.ArbitraryArgs,
		RunE:    needSubcommand,
	}
	for _, s := range cryptSubs {
		cmd.AddCommand(newCryptSubCmd(s))
	}
	return cmd
}

// cryptSub is one subcommand of crypt.
type cryptSub struct {
	name, args, short string
	policy            bool
	arg               string // the hex argument's name; "" for none
	flags             func(c *cryptCmd, fs *pflag.FlagSet)
	run               func(c *cryptCmd, inputs []hexInput, w io.Writer) error
}

var cryptSubs = []cryptSub{
	{name: "fname", args: "POLICY [--dir-inode N] [--decrypt] NAME_HEX|-", policy: true, arg: "NAME_HEX",
		short: "encrypt (or --decrypt) a filename in a directory with the policy",
		flags: func(c *cryptCmd, fs *pflag.FlagSet) {
			uint64Flag(fs, &c.dirInode, "dir-inode", 2, 0, math.MaxUint64, "the directory's inode number")
			fs.BoolVar(&c.decrypt, "decrypt", false, "decrypt an on-disk name instead")
		}, run: cryptFname},
	{name: "contents", args: "POLICY [--data-unit-size N] [--index N] [--inode N] [--decrypt] < DATA_HEX", policy: true,
		short: "encrypt (or --decrypt) file contents read as hex from stdin, in data units starting at --index",
		flags: func(c *cryptCmd, fs *pflag.FlagSet) {
			c.dataUnitSize = "4096"
			fs.Var(&choiceValue{p: &c.dataUnitSize, choices: []string{"512", "1024", "2048", "4096"}}, "data-unit-size", "data unit size (512|1024|2048|4096)")
			uint64Flag(fs, &c.index, "index", 0, 0, math.MaxUint64, "index of the first data unit")
			uint64Flag(fs, &c.inode, "inode", 12, 0, math.MaxUint64, "the file's inode number")
			fs.BoolVar(&c.decrypt, "decrypt", false, "decrypt instead")
		}, run: cryptContents},
	{name: "derive", args: "POLICY [--for contents|filenames] [--inode N]", policy: true,
		short: "the key the kernel derives for a file's contents (default) or a directory's filenames",
		flags: func(c *cryptCmd, fs *pflag.FlagSet) {
			choiceFlag(fs, &c.forWhat, "for", "contents", []string{"contents", "filenames"}, "a regular file's key or a directory's")
			uint64Flag(fs, &c.inode, "inode", 12, 0, math.MaxUint64, "the inode number")
		}, run: cryptDerive},
	{name: "keyid", args: "--master-key HEX",
		short: "the v2 key identifier of a master key",
		flags: func(c *cryptCmd, fs *pflag.FlagSet) {
			fs.StringVar(&c.masterKey, "master-key", "", "master key, hex (required; the kernel accepts 16-64 bytes)")
		}, run: cryptKeyID},
	{name: "nokey", args: "[--dirhash HEX] CIPHERTEXT_HEX|-  or  --decode NOKEY_NAME_HEX|-", arg: "CIPHERTEXT_HEX",
		short: "the no-key name of an on-disk ciphertext name, or --decode a no-key name",
		flags: func(c *cryptCmd, fs *pflag.FlagSet) {
			fs.StringVar(&c.dirhash, "dirhash", "", "the entry's dirhash: 8 bytes hex, le32 hash || le32 minor_hash (default zeros)")
			fs.BoolVar(&c.decode, "decode", false, "decode a no-key name (hex of its characters)")
		}, run: cryptNokey},
	{name: "dirhash", args: "POLICY [--dir-inode N] NAME_HEX|-", policy: true, arg: "NAME_HEX",
		short: "the SipHash-2-4 (16 hex digits) of a plaintext name under a casefolded directory's dirhash key (v2)",
		flags: func(c *cryptCmd, fs *pflag.FlagSet) {
			uint64Flag(fs, &c.dirInode, "dir-inode", 2, 0, math.MaxUint64, "the directory's inode number")
		}, run: cryptDirhash},
}

func newCryptSubCmd(s cryptSub) *cobra.Command {
	c := &cryptCmd{sub: s.name}
	nargs, what := 0, "none"
	if s.arg != "" {
		nargs, what = 1, s.arg+" (or - for one per line on stdin)"
	}
	cmd := &cobra.Command{
		Use:   s.name + " " + s.args,
		Short: s.short,
		Long:  s.short + ".\n\n" + cryptLong,
		Args:  exactArgs(nargs, what),
		RunE: func(cmd *cobra.Command, args []string) error {
			if s.policy {
				if err := c.parsePolicy(); err != nil {
					return err
				}
			}
			var inputs []hexInput
			if nargs == 1 {
				var err error
				if inputs, err = hexInputs(s.arg, args[0], cryptStdin, false); err != nil {
					return err
				}
			}
			// The variant set belongs to the machine (parsePolicy read
			// --patches before the kernel runs).
			k := kernel.NewWith(kernel.Config{Patches: c.set})
			t := k.NewTask("vfslab-crypt")
			defer t.Exit()
			c.t, c.k = t, k
			err := s.run(c, inputs, cmd.OutOrStdout())
			var ue usageError
			if err != nil && !errors.As(err, &ue) {
				return &kernelError{err, kernelLog(k)}
			}
			return err
		},
	}
	fs := cmd.Flags()
	if s.policy {
		choiceFlag(fs, &c.version, "policy-version", "2", []string{"1", "2"}, "policy version")
		fs.StringVar(&c.contents, "contents-mode", "AES-256-XTS", "contents encryption mode")
		fs.StringVar(&c.filenames, "filenames-mode", "AES-256-CTS-CBC", "filenames encryption mode")
		fs.StringVar(&c.flags, "flags", "0", "policy flags (padding 0-3 | 0x04 DIRECT_KEY | 0x08 IV_INO_LBLK_64 | 0x10 IV_INO_LBLK_32)")
		fs.StringVar(&c.masterKey, "master-key", "", "master key, hex (required; the kernel accepts 16-64 bytes)")
		fs.StringVar(&c.nonce, "nonce", "", "16-byte nonce, hex")
		fs.StringVar(&c.fsUUID, "fs-uuid", "", "filesystem UUID, 16 bytes hex (default zeros)")
		fs.StringVar(&c.patches, "patches", "", "patch variants, id=variant,...")
	}
	s.flags(c, fs)
	return cmd
}

// cryptCmd holds the flags of every subcommand and what parsePolicy made
// of them.
type cryptCmd struct {
	sub  string
	t    *kernel.Task
	k    *kernel.Kernel
	pol  fscrypt.Policy
	key  []byte
	set  patch.Set
	nonc [fscrypt.FileNonceSize]byte
	uuid []byte

	version, contents, filenames, flags string
	masterKey, nonce, fsUUID, patches   string
	dirInode, inode                     uint64
	decrypt, decode                     bool
	dataUnitSize                        string
	index                               uint64
	forWhat, dirhash                    string
}

// parsePolicy reads the POLICY flags: every usage error before the kernel
// runs.
func (c *cryptCmd) parsePolicy() error {
	var err error
	if c.set, err = patch.Parse(c.patches); err != nil {
		return usageError{"--patches: " + err.Error()}
	}
	p := &c.pol
	p.Version = fscrypt.PolicyV2
	if c.version == "1" {
		p.Version = fscrypt.PolicyV1
	}
	cm, err := fscrypt.ParseMode(c.contents)
	if err != nil {
		return usageError{"--contents-mode: " + err.Error()}
	}
	fm, err := fscrypt.ParseMode(c.filenames)
	if err != nil {
		return usageError{"--filenames-mode: " + err.Error()}
	}
	p.ContentsMode, p.FilenamesMode = uint8(cm.Num), uint8(fm.Num)
	f, err := strconv.ParseUint(c.flags, 0, 8)
	if err != nil {
		return usagef("--flags %q: want a byte, 0..0xff (padding 0-3 | 0x04 | 0x08 | 0x10)", c.flags)
	}
	p.Flags = uint8(f)
	if c.key, err = masterKeyFlag(c.masterKey); err != nil {
		return err
	}
	switch {
	case c.nonce != "":
		n, err := parseHex("--nonce", c.nonce, fscrypt.FileNonceSize)
		if err != nil {
			return err
		}
		copy(c.nonc[:], n)
	case !c.lblk():
		return usageError{"--nonce is required (16 bytes hex) unless an IV_INO_LBLK flag is set"}
	}
	if c.fsUUID != "" {
		if c.uuid, err = parseHex("--fs-uuid", c.fsUUID, 16); err != nil {
			return err
		}
	}
	return nil
}

// masterKeyFlag reads --master-key, which is required.
func masterKeyFlag(s string) ([]byte, error) {
	if strings.TrimSpace(s) == "" {
		return nil, usageError{"--master-key is required (hex; the kernel accepts 16 to 64 bytes)"}
	}
	return parseHex("--master-key", s, -1)
}

// lblk reports whether the policy has an IV_INO_LBLK flag.
func (c *cryptCmd) lblk() bool {
	return c.pol.Flags&(fscrypt.PolicyFlagIVInoLblk64|fscrypt.PolicyFlagIVInoLblk32) != 0
}

// lblkName names the policy's IV_INO_LBLK flag.
func (c *cryptCmd) lblkName() string {
	if c.pol.Flags&fscrypt.PolicyFlagIVInoLblk64 != 0 {
		return "IV_INO_LBLK_64"
	}
	return "IV_INO_LBLK_32"
}

// checkIno refuses what an IV_INO_LBLK policy cannot have: an inode number
// of 0 or above 2^32-1. supported_iv_ino_lblk_policy (fs/crypto/policy.c)
// accepts such policies only on filesystems whose inode numbers fit in 32
// bits (->has_32bit_inodes), fscrypt_generate_iv (crypto.c) WARNs on
// i_ino > U32_MAX, and fscrypt_hash_inode_number (keysetup.c) on i_ino 0
// (no ext4 or f2fs inode has number 0).
func (c *cryptCmd) checkIno(flag string, ino uint64) error {
	if !c.lblk() {
		return nil
	}
	switch {
	case ino == 0:
		why := "the IV would hold inode number 0, which no ext4 or f2fs inode has"
		if c.pol.Flags&fscrypt.PolicyFlagIVInoLblk64 == 0 {
			why = "fscrypt_hash_inode_number: WARN_ON_ONCE(ci->ci_inode->i_ino == 0); no ext4 or f2fs inode has number 0"
		}
		return fmt.Errorf("%s 0 with an %s policy: %s: %w", flag, c.lblkName(), why, errno.EINVAL)
	case ino > math.MaxUint32:
		return fmt.Errorf("%s %d with an %s policy: the kernel allows these policies only on filesystems with 32-bit inode numbers "+
			"(supported_iv_ino_lblk_policy; fscrypt_generate_iv: WARN_ON_ONCE(ci->ci_inode->i_ino > U32_MAX)): %w",
			flag, ino, c.lblkName(), errno.EINVAL)
	}
	return nil
}

// checkIndex refuses data unit indices an IV_INO_LBLK policy cannot hold:
// above U32_MAX (fscrypt_generate_iv WARNs; such policies need
// fscrypt_max_file_dun_bits <= 32).
func (c *cryptCmd) checkIndex(first uint64, units int) error {
	if !c.lblk() || units == 0 {
		return nil
	}
	last, carry := bits.Add64(first, uint64(units-1), 0)
	if carry != 0 || last > math.MaxUint32 {
		return fmt.Errorf("data units %d..%d with an %s policy: indices must be below 2^32 (fscrypt_generate_iv: WARN_ON_ONCE(index > U32_MAX)): %w",
			first, last, c.lblkName(), errno.EINVAL)
	}
	return nil
}

// cryptEnv is a one-filesystem machine with the command's master key added.
type cryptEnv struct {
	sb     *bare.SB
	policy fscrypt.Policy
}

// addKeyError explains FS_IOC_ADD_ENCRYPTION_KEY refusing a raw key size
// (fscrypt_ioctl_add_key: raw_size outside [FSCRYPT_MIN_KEY_SIZE,
// FSCRYPT_MAX_KEY_SIZE] is EINVAL).
func addKeyError(size int, err error) error {
	if e, ok := errno.Of(err); ok && e == errno.EINVAL && (size < fscrypt.MinKeySize || size > fscrypt.MaxKeySize) {
		return fmt.Errorf("FS_IOC_ADD_ENCRYPTION_KEY refuses a raw key of %d bytes: the kernel accepts FSCRYPT_MIN_KEY_SIZE (%d) to FSCRYPT_MAX_KEY_SIZE (%d) bytes: %w",
			size, fscrypt.MinKeySize, fscrypt.MaxKeySize, err)
	}
	return fmt.Errorf("FS_IOC_ADD_ENCRYPTION_KEY: %w", err)
}

// env builds the filesystem and adds the master key.
func (c *cryptCmd) env() (*cryptEnv, error) {
	e := &cryptEnv{policy: c.pol}
	e.sb = bare.NewSB(newCryptoAPI())
	copy(e.sb.FSUUID[:], c.uuid)
	version := 2
	if c.pol.Version == fscrypt.PolicyV1 {
		version = 1
	}
	id, desc, err := bare.AddKey(c.t, e.sb, version, c.key)
	if err != nil {
		return nil, addKeyError(len(c.key), err)
	}
	if version == 1 {
		e.policy.Descriptor = desc
	}
	e.policy.Identifier = id
	return e, nil
}

// setupInode makes an inode with the policy's context and sets up its key.
// blockBits is the filesystem block size.
func (c *cryptCmd) setupInode(e *cryptEnv, ino uint64, mode uint32, blockBits uint8, casefold bool) (*bare.Inode, error) {
	i := e.sb.NewInode(ino, mode)
	i.BlockBits = blockBits
	i.Casefold = casefold
	ctx := fscrypt.Context{Policy: e.policy, Nonce: c.nonc}
	i.SetRawContext(ctx.Marshal())
	if err := fscrypt.GetEncryptionInfo(c.t, i, false); err != nil {
		return nil, err
	}
	if !fscrypt.HasEncryptionKey(i) {
		return nil, fmt.Errorf("key setup: %w", errno.ENOKEY)
	}
	return i, nil
}

// eachInput runs one per input inside the simulator boundary and prints
// each result on its own line.
func (c *cryptCmd) eachInput(inputs []hexInput, w io.Writer, one func([]byte) (string, error)) error {
	for _, in := range inputs {
		out, err := guarded(c.t, func() (string, error) { return one(in.data) })
		if err != nil {
			return in.wrap(err)
		}
		fmt.Fprintln(w, out)
	}
	return nil
}

// setupDir is the directory inode of fname and dirhash, in the simulator
// boundary.
func (c *cryptCmd) setupDir(casefold bool) (*bare.Inode, error) {
	if err := c.checkIno("--dir-inode", c.dirInode); err != nil {
		return nil, err
	}
	var dir *bare.Inode
	_, err := guarded(c.t, func() (string, error) {
		e, err := c.env()
		if err != nil {
			return "", err
		}
		dir, err = c.setupInode(e, c.dirInode, fscrypt.SIFDIR|0o755, 12, casefold)
		return "", err
	})
	return dir, err
}

func cryptFname(c *cryptCmd, inputs []hexInput, w io.Writer) error {
	for _, in := range inputs {
		if len(in.data) == 0 {
			return in.wrap(usageError{"NAME_HEX is empty: a name is 1 to 255 bytes"})
		}
	}
	dir, err := c.setupDir(false)
	if err != nil {
		return err
	}
	t := c.t
	return c.eachInput(inputs, w, func(name []byte) (string, error) {
		if c.decrypt {
			if len(name) > 255 {
				return "", fmt.Errorf("on-disk name of %d bytes: %w", len(name), errno.ENAMETOOLONG)
			}
			buf, err := fscrypt.FnameAllocBuffer(t, len(name))
			if err != nil {
				return "", err
			}
			defer fscrypt.FnameFreeBuffer(t, buf)
			n, err := fscrypt.FnameDiskToUsr(t, dir, 0, 0, name, buf)
			if err != nil {
				return "", err
			}
			return hex.EncodeToString(buf[:n]), nil
		}
		var fname fscrypt.Name
		if err := fscrypt.SetupFilename(t, dir, name, false, &fname); err != nil {
			return "", err
		}
		defer fscrypt.FreeFilename(t, &fname)
		return hex.EncodeToString(fname.DiskName), nil
	})
}

func cryptContents(c *cryptCmd, _ []hexInput, w io.Writer) error {
	du, _ := strconv.Atoi(c.dataUnitSize)
	raw, err := io.ReadAll(cryptStdin)
	if err != nil {
		return usagef("stdin: %v", err)
	}
	data, err := parseHex("stdin", string(bytes.TrimSpace(raw)), -1)
	if err != nil {
		return err
	}
	if len(data) == 0 || len(data)%16 != 0 {
		return usagef("stdin: %d bytes of data, want a positive multiple of 16 (FSCRYPT_CONTENTS_ALIGNMENT)", len(data))
	}
	if err := c.checkIno("--inode", c.inode); err != nil {
		return err
	}
	if err := c.checkIndex(c.index, (len(data)+du-1)/du); err != nil {
		return err
	}
	out, err := guarded(c.t, func() (string, error) {
		e, err := c.env()
		if err != nil {
			return "", err
		}
		// The file system's blocks are the data units, so that any unit
		// size works with every policy; s_maxbytes lets IV_INO_LBLK_*
		// policies have 32-bit data unit indexes.
		duBits := uint8(bits.TrailingZeros(uint(du)))
		e.sb.MaxBytesLimit = 1 << (32 + int(duBits))
		file, err := c.setupInode(e, c.inode, fscrypt.SIFREG|0o644, duBits, false)
		if err != nil {
			return "", err
		}
		for off, idx := 0, c.index; off < len(data); off, idx = off+du, idx+1 {
			unit := data[off:min(off+du, len(data))]
			if c.decrypt {
				err = fscrypt.DecryptBlockInplace(c.t, file, unit, idx)
			} else {
				err = fscrypt.EncryptBlockInplace(c.t, file, unit, idx)
			}
			if err != nil {
				return "", err
			}
		}
		return hex.EncodeToString(data), nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(w, out)
	return nil
}

func cryptDerive(c *cryptCmd, _ []hexInput, w io.Writer) error {
	mode := uint32(fscrypt.SIFREG | 0o644)
	if c.forWhat == "filenames" {
		mode = fscrypt.SIFDIR | 0o755
	}
	if err := c.checkIno("--inode", c.inode); err != nil {
		return err
	}
	out, err := guarded(c.t, func() (string, error) {
		e, err := c.env()
		if err != nil {
			return "", err
		}
		i, err := c.setupInode(e, c.inode, mode, 12, false)
		if err != nil {
			return "", err
		}
		key, err := fscrypt.DerivedKey(c.t, i)
		if err != nil {
			return "", err
		}
		return hex.EncodeToString(key), nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(w, out)
	return nil
}

func cryptKeyID(c *cryptCmd, _ []hexInput, w io.Writer) error {
	key, err := masterKeyFlag(c.masterKey)
	if err != nil {
		return err
	}
	if len(key) < fscrypt.MinKeySize || len(key) > fscrypt.MaxKeySize {
		// The identifier is what FS_IOC_ADD_ENCRYPTION_KEY returns; it
		// refuses such a key.
		return addKeyError(len(key), errno.EINVAL)
	}
	id := fscrypt.KeyIdentifier(key)
	fmt.Fprintln(w, hex.EncodeToString(id[:]))
	return nil
}

func cryptNokey(c *cryptCmd, inputs []hexInput, w io.Writer) error {
	var hash, minor uint32
	if c.dirhash != "" {
		if c.decode {
			return usageError{"--dirhash and --decode exclude each other (a no-key name carries its dirhash)"}
		}
		d, err := parseHex("--dirhash", c.dirhash, 8)
		if err != nil {
			return err
		}
		hash, minor = binary.LittleEndian.Uint32(d), binary.LittleEndian.Uint32(d[4:])
	}
	return c.eachInput(inputs, w, func(in []byte) (string, error) {
		if c.decode {
			nk, err := fscrypt.DecodeNokeyName(in)
			if err != nil {
				return "", fmt.Errorf("%q is not a no-key name the kernel would decode (base64url of a struct fscrypt_nokey_name); "+
					"fscrypt_setup_filename answers a lookup of it with %w", in, err)
			}
			var b []byte
			b = binary.LittleEndian.AppendUint32(b, nk.Hash)
			b = binary.LittleEndian.AppendUint32(b, nk.MinorHash)
			b = append(b, nk.Bytes...)
			if nk.Digested {
				b = append(b, nk.SHA256[:]...)
			}
			return hex.EncodeToString(b), nil
		}
		if len(in) < 16 {
			// fscrypt_fname_disk_to_usr refuses on-disk names shorter
			// than the minimum message length.
			return "", fmt.Errorf("ciphertext of %d bytes: %w", len(in), errno.EUCLEAN)
		}
		if len(in) > 255 {
			return "", fmt.Errorf("ciphertext of %d bytes: %w", len(in), errno.ENAMETOOLONG)
		}
		return hex.EncodeToString(fscrypt.EncodeNokeyName(nil, hash, minor, in)), nil
	})
}

func cryptDirhash(c *cryptCmd, inputs []hexInput, w io.Writer) error {
	dir, err := c.setupDir(true)
	if err != nil {
		return err
	}
	return c.eachInput(inputs, w, func(name []byte) (string, error) {
		return fmt.Sprintf("%016x", fscrypt.FnameSiphash(c.t, dir, name)), nil
	})
}

// newCryptoAPI returns the Crypto API the crypt command's machine uses.
func newCryptoAPI() fscrypt.CryptoAPI { return crypto.NewAPI() }
