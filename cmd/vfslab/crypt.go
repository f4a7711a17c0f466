package main

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/bits"
	"os"
	"strconv"
	"strings"

	"github.com/vfslab/vfslab/crypto"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/patch"
)

func init() {
	register(&command{
		name:    "crypt",
		summary: "compute what fscrypt writes: encrypted names and contents, keys, key identifiers, no-key names, dirhashes",
		run:     runCrypt,
	})
}

// cryptStdin is where `vfslab crypt contents` reads its data (tests replace
// it).
var cryptStdin io.Reader = os.Stdin

const cryptUsage = `Usage: vfslab crypt SUBCOMMAND [flags] [ARG]

A command-line twin of xfstests' fscrypt-crypt-util that runs the simulator's
fs/crypto code: every value is hex, the result is one hex line on stdout,
errors go to stderr with a non-zero exit status (1: the kernel refused, 2: bad
usage).

Subcommands:
  fname     encrypt (or --decrypt) a filename in a directory with the policy
              vfslab crypt fname POLICY [--dir-inode N] [--decrypt] NAME_HEX
  contents  encrypt (or --decrypt) file contents read as hex from stdin, in
            data units of --data-unit-size bytes starting at --index
              vfslab crypt contents POLICY --data-unit-size N --index N [--inode N] [--decrypt]
  derive    the key the kernel derives for a file's contents (default) or a
            directory's filenames (per-file, DIRECT_KEY or IV_INO_LBLK key)
              vfslab crypt derive POLICY [--for contents|filenames] [--inode N]
  keyid     the v2 key identifier of a master key
              vfslab crypt keyid --master-key HEX
  nokey     the no-key name (as hex bytes) of an on-disk ciphertext name, or
            with --decode the decoded struct fscrypt_nokey_name of a no-key name
              vfslab crypt nokey [--dirhash HEX] CIPHERTEXT_HEX
              vfslab crypt nokey --decode NOKEY_NAME_HEX
  dirhash   the SipHash-2-4 (16 hex digits) of a plaintext name under a
            casefolded directory's dirhash key (v2 policies)
              vfslab crypt dirhash POLICY [--dir-inode N] NAME_HEX

POLICY flags:
  --policy-version 1|2   (default 2)
  --contents-mode M      AES-256-XTS, AES-128-CBC-ESSIV, Adiantum (default AES-256-XTS)
  --filenames-mode M     AES-256-CTS-CBC, AES-128-CTS-CBC, Adiantum, AES-256-HCTR2
                         (default AES-256-CTS-CBC)
  --flags N              policy flags: padding 0-3 | 0x04 DIRECT_KEY |
                         0x08 IV_INO_LBLK_64 | 0x10 IV_INO_LBLK_32 (default 0)
  --master-key HEX       the master key (16-64 bytes)
  --nonce HEX            the file's or directory's 16-byte nonce (required
                         unless an IV_INO_LBLK flag is set)
  --fs-uuid HEX          the filesystem UUID (16 bytes, default zeros)
  --patches SET          patch variants, e.g. fscrypt-v1-kdf=aeslib (all give
                         the same bytes)

Run 'vfslab crypt SUBCOMMAND --help' for a subcommand's flags.
`

// usageError marks a bad command line (exit status 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func runCrypt(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help" {
		if len(args) == 0 {
			fmt.Fprint(stderr, cryptUsage)
			return 2
		}
		fmt.Fprint(stdout, cryptUsage)
		return 0
	}
	sub, rest := args[0], args[1:]
	var run func(c *cryptCmd) (string, error)
	switch sub {
	case "fname":
		run = cryptFname
	case "contents":
		run = cryptContents
	case "derive":
		run = cryptDerive
	case "keyid":
		run = cryptKeyID
	case "nokey":
		run = cryptNokey
	case "dirhash":
		run = cryptDirhash
	default:
		fmt.Fprintf(stderr, "vfslab crypt: unknown subcommand %q\n\n%s", sub, cryptUsage)
		return 2
	}
	c := newCryptCmd(sub, stderr)
	if err := c.parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "vfslab crypt %s: %v\n", sub, err)
		return 2
	}
	set, err := patch.Parse(c.patches)
	if err != nil {
		fmt.Fprintf(stderr, "vfslab crypt %s: %v\n", sub, err)
		return 2
	}
	k := kernel.NewWith(kernel.Config{Patches: set})
	t := k.NewTask("vfslab-crypt")
	defer t.Exit()
	c.t = t
	out, err := runGuarded(t, c, run)
	if err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "vfslab crypt %s: %v\n", sub, err)
			return 2
		}
		fmt.Fprintf(stderr, "vfslab crypt %s: %s\n", sub, describeErr(err))
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
func runGuarded(t *kernel.Task, c *cryptCmd, run func(*cryptCmd) (string, error)) (out string, err error) {
	defer t.Recover(&err)
	return run(c)
}

func describeErr(err error) string {
	if e, ok := errno.Of(err); ok {
		return fmt.Sprintf("%s (%s)", e.Error(), errno.Name(e))
	}
	return err.Error()
}

// cryptCmd holds the flags of every subcommand; each registers the ones it
// takes.
type cryptCmd struct {
	sub string
	fs  *flag.FlagSet
	t   *kernel.Task
	pos []string

	version, contents, filenames, flags string
	masterKey, nonce, fsUUID, patches   string
	dirInode, inode                     uint64
	decrypt, decode                     bool
	dataUnitSize                        int
	index                               uint64
	forWhat, dirhash                    string
	hasPolicy                           bool
}

func newCryptCmd(sub string, stderr io.Writer) *cryptCmd {
	c := &cryptCmd{sub: sub, fs: flag.NewFlagSet("crypt "+sub, flag.ContinueOnError)}
	fs := c.fs
	fs.SetOutput(stderr)
	policy := func() {
		c.hasPolicy = true
		fs.StringVar(&c.version, "policy-version", "2", "policy version: 1 or 2")
		fs.StringVar(&c.contents, "contents-mode", "AES-256-XTS", "contents encryption mode")
		fs.StringVar(&c.filenames, "filenames-mode", "AES-256-CTS-CBC", "filenames encryption mode")
		fs.StringVar(&c.flags, "flags", "0", "policy flags (padding 0-3 | 0x04 DIRECT_KEY | 0x08 IV_INO_LBLK_64 | 0x10 IV_INO_LBLK_32)")
		fs.StringVar(&c.masterKey, "master-key", "", "master key, hex (16-64 bytes)")
		fs.StringVar(&c.nonce, "nonce", "", "16-byte nonce, hex")
		fs.StringVar(&c.fsUUID, "fs-uuid", "", "filesystem UUID, 16 bytes hex (default zeros)")
		fs.StringVar(&c.patches, "patches", "", "patch variants, id=variant,...")
	}
	switch sub {
	case "fname":
		policy()
		fs.Uint64Var(&c.dirInode, "dir-inode", 2, "the directory's inode number")
		fs.BoolVar(&c.decrypt, "decrypt", false, "decrypt an on-disk name instead")
	case "contents":
		policy()
		fs.IntVar(&c.dataUnitSize, "data-unit-size", 4096, "data unit size: 512, 1024, 2048 or 4096")
		fs.Uint64Var(&c.index, "index", 0, "index of the first data unit")
		fs.Uint64Var(&c.inode, "inode", 12, "the file's inode number")
		fs.BoolVar(&c.decrypt, "decrypt", false, "decrypt instead")
	case "derive":
		policy()
		fs.StringVar(&c.forWhat, "for", "contents", "contents (a regular file's key) or filenames (a directory's)")
		fs.Uint64Var(&c.inode, "inode", 12, "the inode number")
	case "keyid":
		fs.StringVar(&c.masterKey, "master-key", "", "master key, hex (16-64 bytes)")
	case "nokey":
		fs.StringVar(&c.dirhash, "dirhash", "", "the entry's dirhash: 8 bytes hex, le32 hash || le32 minor_hash (default zeros)")
		fs.BoolVar(&c.decode, "decode", false, "decode a no-key name (hex of its characters)")
	case "dirhash":
		policy()
		fs.Uint64Var(&c.dirInode, "dir-inode", 2, "the directory's inode number")
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: vfslab crypt %s [flags] %s\n\nFlags:\n", sub, map[string]string{
			"fname": "NAME_HEX", "nokey": "CIPHERTEXT_HEX", "dirhash": "NAME_HEX", "contents": "< DATA_HEX"}[sub])
		fs.PrintDefaults()
	}
	return c
}

// parse accepts flags before and after the positional arguments.
func (c *cryptCmd) parse(args []string) error {
	for {
		if err := c.fs.Parse(args); err != nil {
			return err
		}
		args = c.fs.Args()
		if len(args) == 0 {
			return nil
		}
		c.pos = append(c.pos, args[0])
		args = args[1:]
	}
}

// onePos returns the single positional argument, hex-decoded.
func (c *cryptCmd) onePos(what string) ([]byte, error) {
	if len(c.pos) != 1 {
		return nil, usageError{fmt.Sprintf("want exactly one %s argument", what)}
	}
	return parseHex(what, c.pos[0], -1)
}

func (c *cryptCmd) noPos() error {
	if len(c.pos) != 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", c.pos[0])}
	}
	return nil
}

func parseHex(what, s string, want int) ([]byte, error) {
	b, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, usageError{fmt.Sprintf("%s: not hex: %v", what, err)}
	}
	if want >= 0 && len(b) != want {
		return nil, usageError{fmt.Sprintf("%s: %d bytes, want %d", what, len(b), want)}
	}
	return b, nil
}

// cryptEnv is a one-filesystem machine with the command's master key added.
type cryptEnv struct {
	sb     *bare.SB
	policy fscrypt.Policy
	nonce  [fscrypt.FileNonceSize]byte
}

// env builds the filesystem and policy from the POLICY flags.
func (c *cryptCmd) env() (*cryptEnv, error) {
	e := &cryptEnv{}
	p := &e.policy
	switch c.version {
	case "1":
		p.Version = fscrypt.PolicyV1
	case "2":
		p.Version = fscrypt.PolicyV2
	default:
		return nil, usageError{fmt.Sprintf("--policy-version %q: want 1 or 2", c.version)}
	}
	cm, err := fscrypt.ParseMode(c.contents)
	if err != nil {
		return nil, usageError{"--contents-mode: " + err.Error()}
	}
	fm, err := fscrypt.ParseMode(c.filenames)
	if err != nil {
		return nil, usageError{"--filenames-mode: " + err.Error()}
	}
	p.ContentsMode, p.FilenamesMode = uint8(cm.Num), uint8(fm.Num)
	f, err := strconv.ParseUint(c.flags, 0, 8)
	if err != nil {
		return nil, usageError{fmt.Sprintf("--flags %q: %v", c.flags, err)}
	}
	p.Flags = uint8(f)
	if c.masterKey == "" {
		return nil, usageError{"--master-key is required"}
	}
	key, err := parseHex("--master-key", c.masterKey, -1)
	if err != nil {
		return nil, err
	}
	lblk := p.Flags&(fscrypt.PolicyFlagIVInoLblk64|fscrypt.PolicyFlagIVInoLblk32) != 0
	switch {
	case c.nonce != "":
		n, err := parseHex("--nonce", c.nonce, fscrypt.FileNonceSize)
		if err != nil {
			return nil, err
		}
		copy(e.nonce[:], n)
	case !lblk:
		return nil, usageError{"--nonce is required"}
	}
	e.sb = bare.NewSB(newCryptoAPI())
	if c.fsUUID != "" {
		u, err := parseHex("--fs-uuid", c.fsUUID, 16)
		if err != nil {
			return nil, err
		}
		copy(e.sb.FSUUID[:], u)
	}
	version := 2
	if p.Version == fscrypt.PolicyV1 {
		version = 1
	}
	id, desc, err := bare.AddKey(c.t, e.sb, version, key)
	if err != nil {
		return nil, fmt.Errorf("FS_IOC_ADD_ENCRYPTION_KEY: %w", err)
	}
	if version == 1 {
		p.Descriptor = desc
	}
	p.Identifier = id
	return e, nil
}

// setupInode makes an inode with the policy's context and sets up its key.
// blockBits is the filesystem block size.
func (c *cryptCmd) setupInode(e *cryptEnv, ino uint64, mode uint32, blockBits uint8, casefold bool) (*bare.Inode, error) {
	i := e.sb.NewInode(ino, mode)
	i.BlockBits = blockBits
	i.Casefold = casefold
	ctx := fscrypt.Context{Policy: e.policy, Nonce: e.nonce}
	i.SetRawContext(ctx.Marshal())
	if err := fscrypt.GetEncryptionInfo(c.t, i, false); err != nil {
		return nil, err
	}
	if !fscrypt.HasEncryptionKey(i) {
		return nil, fmt.Errorf("key setup: %w", errno.ENOKEY)
	}
	return i, nil
}

func cryptFname(c *cryptCmd) (string, error) {
	name, err := c.onePos("NAME_HEX")
	if err != nil {
		return "", err
	}
	e, err := c.env()
	if err != nil {
		return "", err
	}
	dir, err := c.setupInode(e, c.dirInode, fscrypt.SIFDIR|0o755, 12, false)
	if err != nil {
		return "", err
	}
	t := c.t
	if c.decrypt {
		if len(name) == 0 || len(name) > 255 {
			return "", errno.EINVAL
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
	if len(name) == 0 {
		return "", errno.EINVAL
	}
	var fname fscrypt.Name
	if err := fscrypt.SetupFilename(t, dir, name, false, &fname); err != nil {
		return "", err
	}
	defer fscrypt.FreeFilename(t, &fname)
	return hex.EncodeToString(fname.DiskName), nil
}

func cryptContents(c *cryptCmd) (string, error) {
	if err := c.noPos(); err != nil {
		return "", err
	}
	du := c.dataUnitSize
	if du < 512 || du > 4096 || du&(du-1) != 0 {
		return "", usageError{fmt.Sprintf("--data-unit-size %d: want 512, 1024, 2048 or 4096", du)}
	}
	raw, err := io.ReadAll(cryptStdin)
	if err != nil {
		return "", err
	}
	data, err := parseHex("stdin", string(bytes.TrimSpace(raw)), -1)
	if err != nil {
		return "", err
	}
	if len(data) == 0 || len(data)%16 != 0 {
		return "", usageError{fmt.Sprintf("data: %d bytes, want a positive multiple of 16", len(data))}
	}
	e, err := c.env()
	if err != nil {
		return "", err
	}
	// The file system's blocks are the data units, so that any unit size
	// works with every policy; s_maxbytes lets IV_INO_LBLK_* policies have
	// 32-bit data unit indexes.
	duBits := uint8(bits.TrailingZeros(uint(du)))
	e.sb.MaxBytesLimit = 1 << (32 + int(duBits))
	file, err := c.setupInode(e, c.inode, fscrypt.SIFREG|0o644, duBits, false)
	if err != nil {
		return "", err
	}
	t := c.t
	for off, idx := 0, c.index; off < len(data); off, idx = off+du, idx+1 {
		unit := data[off:min(off+du, len(data))]
		if c.decrypt {
			err = fscrypt.DecryptBlockInplace(t, file, unit, idx)
		} else {
			err = fscrypt.EncryptBlockInplace(t, file, unit, idx)
		}
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(data), nil
}

func cryptDerive(c *cryptCmd) (string, error) {
	if err := c.noPos(); err != nil {
		return "", err
	}
	var mode uint32
	switch c.forWhat {
	case "contents":
		mode = fscrypt.SIFREG | 0o644
	case "filenames":
		mode = fscrypt.SIFDIR | 0o755
	default:
		return "", usageError{fmt.Sprintf("--for %q: want contents or filenames", c.forWhat)}
	}
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
}

func cryptKeyID(c *cryptCmd) (string, error) {
	if err := c.noPos(); err != nil {
		return "", err
	}
	key, err := parseHex("--master-key", c.masterKey, -1)
	if err != nil {
		return "", err
	}
	if len(key) < fscrypt.MinKeySize || len(key) > fscrypt.MaxKeySize {
		return "", fmt.Errorf("master key of %d bytes: %w", len(key), errno.EINVAL)
	}
	id := fscrypt.KeyIdentifier(key)
	return hex.EncodeToString(id[:]), nil
}

func cryptNokey(c *cryptCmd) (string, error) {
	in, err := c.onePos("hex")
	if err != nil {
		return "", err
	}
	if c.decode {
		nk, err := fscrypt.DecodeNokeyName(in)
		if err != nil {
			return "", err
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
	var hash, minor uint32
	if c.dirhash != "" {
		d, err := parseHex("--dirhash", c.dirhash, 8)
		if err != nil {
			return "", err
		}
		hash, minor = binary.LittleEndian.Uint32(d), binary.LittleEndian.Uint32(d[4:])
	}
	if len(in) < 16 {
		// fscrypt_fname_disk_to_usr refuses on-disk names shorter than
		// the minimum message length.
		return "", fmt.Errorf("ciphertext of %d bytes: %w", len(in), errno.EUCLEAN)
	}
	if len(in) > 255 {
		return "", fmt.Errorf("ciphertext of %d bytes: %w", len(in), errno.ENAMETOOLONG)
	}
	return hex.EncodeToString(fscrypt.EncodeNokeyName(nil, hash, minor, in)), nil
}

func cryptDirhash(c *cryptCmd) (string, error) {
	name, err := c.onePos("NAME_HEX")
	if err != nil {
		return "", err
	}
	e, err := c.env()
	if err != nil {
		return "", err
	}
	dir, err := c.setupInode(e, c.dirInode, fscrypt.SIFDIR|0o755, 12, true)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%016x", fscrypt.FnameSiphash(c.t, dir, name)), nil
}

// newCryptoAPI returns the Crypto API the crypt command's machine uses.
func newCryptoAPI() fscrypt.CryptoAPI { return crypto.NewAPI() }
