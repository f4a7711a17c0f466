package shell

import (
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// modeNames are the encryption modes as xfs_io and fscryptctl name them.
var modeNames = []struct {
	mode uint8
	name string
}{
	{fscrypt.ModeAES256XTS, "AES-256-XTS"}, {fscrypt.ModeAES256CTS, "AES-256-CTS"},
	{fscrypt.ModeAES128CBC, "AES-128-CBC"}, {fscrypt.ModeAES128CTS, "AES-128-CTS"},
	{fscrypt.ModeAdiantum, "Adiantum"}, {fscrypt.ModeAES256HCTR2, "AES-256-HCTR2"},
}

func modeName(m uint8) string {
	for _, n := range modeNames {
		if n.mode == m {
			return n.name
		}
	}
	return fmt.Sprintf("0x%02x", m)
}

func parseMode(s string) (uint8, bool) {
	for _, n := range modeNames {
		if strings.EqualFold(n.name, s) {
			return n.mode, true
		}
	}
	v, err := strconv.ParseUint(s, 0, 8)
	return uint8(v), err == nil
}

// ioctl runs ioctl(2) on an open file as the command.
func (c *cmd) ioctl(f *vfsFile, name string, req uint32, arg any) error {
	_, err := c.sys(fmt.Sprintf("ioctl(%d, %s)", f.fd, name), func(t *kernel.Task, p *vfs.Proc) (int64, error) {
		n, err := f.p.Ioctl(t, f.fd, req, arg)
		return int64(n), err
	})
	return err
}

// openForIoctl opens p as xfs_io and fscryptctl do: read-write, or
// read-only for a directory.
func (c *cmd) openForIoctl(p string, create, readonly bool) (*vfsFile, error) {
	return c.openXfsIo(p, create, readonly, false)
}

// openXfsIo opens xfs_io's file: read-write (-f adds O_CREAT, -t O_TRUNC),
// read-only with -r or when it is a directory.
func (c *cmd) openXfsIo(p string, create, readonly, trunc bool) (*vfsFile, error) {
	if !readonly {
		flags := vfs.O_RDWR
		if create {
			flags |= vfs.O_CREAT
		}
		if trunc {
			flags |= vfs.O_TRUNC
		}
		f, err := c.open(p, flags, 0o600)
		if e, ok := errno.Of(err); !ok || e != errno.EISDIR {
			return f, err
		}
		// xfs_io's openfile: EISDIR on O_RDWR is tried again read-only,
		// with the other flags kept, so that a directory opens for
		// get_encpolicy while -f (O_CREAT) or -t (O_TRUNC) on one is
		// still EISDIR.
		return c.open(p, flags&^vfs.O_RDWR, 0o600)
	}
	return c.open(p, vfs.O_RDONLY, 0)
}

// --- xfs_io ---

// xfsIo is one xfs_io session: the file and the exit code the commands set.
type xfsIo struct {
	c        *cmd
	f        *vfsFile
	name     string
	exitcode int
}

func cmdXfsIo(c *cmd) int {
	var cmds []string
	create, readonly, trunc := false, false, false
	var file string
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		switch {
		case a == "-c" && i+1 < len(c.args):
			cmds = append(cmds, c.args[i+1])
			i++
		case a == "-f":
			create = true
		case a == "-r":
			readonly = true
		case a == "-t":
			trunc = true
		case a == "-x", a == "-T", a == "-d", a == "-s", a == "-a":
		case strings.HasPrefix(a, "-") && a != "-":
			fmt.Fprintf(c.errw, "xfs_io: invalid option -- '%s'\n", strings.TrimPrefix(a, "-"))
			fmt.Fprintf(c.errw, "Usage: xfs_io [-adfinrstVx] [-m mode] [-p prog] [[-c|-C] cmd]... file\n")
			return 1
		default:
			file = a
		}
	}
	x := &xfsIo{c: c, name: file}
	if file != "" {
		f, err := c.openXfsIo(file, create, readonly, trunc)
		if err != nil {
			fmt.Fprintf(c.errw, "%s: %s\n", file, strerror(err))
			return 1
		}
		x.f = f
		defer func() {
			if x.f != nil {
				x.f.Close()
			}
		}()
	}
	for _, line := range cmds {
		args := strings.Fields(line)
		if len(args) == 0 {
			continue
		}
		x.run(args)
	}
	return x.exitcode
}

// xfsUsage is each command's argument synopsis (command_usage).
var xfsUsage = map[string]string{
	"set_encpolicy": "[-c mode] [-n mode] [-f flags] [-s log2_dusize] [-v version] [keyspec]",
	"get_encpolicy": "[-1] [-t]", "add_enckey": "[-d descriptor] [-k key_id]",
	"rm_enckey": "[-a] keyspec", "enckey_status": "keyspec",
	"pwrite": "[-i infile [-qAdDwNOW] [-s skip]] [-b bs] [-S seed] [-V N [-F | -B] [-Z N]] off len",
	"pread":  "[-b bs] [-qv] [-i N] [-FBR [-Z N]] off len", "truncate": "off", "fsync": "", "fdatasync": "",
}

func (x *xfsIo) usage(cmd string) {
	fmt.Fprintf(x.c.out, "%s %s -- \n", cmd, xfsUsage[cmd])
	x.exitcode = 1
}

func (x *xfsIo) run(args []string) {
	c := x.c
	name := args[0]
	if x.f == nil && name != "help" && name != "quit" {
		fmt.Fprintf(c.errw, "no files are open, try 'help open'\n")
		x.exitcode = 1
		return
	}
	switch name {
	case "set_encpolicy":
		x.setEncpolicy(args[1:])
	case "get_encpolicy":
		x.getEncpolicy(args[1:])
	case "add_enckey":
		x.addEnckey(args[1:])
	case "rm_enckey":
		x.rmEnckey(args[1:])
	case "enckey_status":
		if len(args) != 2 {
			x.usage(name)
			return
		}
		x.enckeyStatus(args[1])
	case "pwrite":
		x.pwrite(args[1:])
	case "pread":
		x.pread(args[1:])
	case "truncate":
		if len(args) != 2 {
			x.usage(name)
			return
		}
		n, ok := cvtnum(args[1])
		if !ok {
			fmt.Fprintf(c.out, "non-numeric truncate argument -- %s\n", args[1])
			x.exitcode = 1
			return
		}
		_, err := c.sys(fmt.Sprintf("ftruncate(%d, %d)", x.f.fd, n), func(t *kernel.Task, p *vfs.Proc) (int64, error) {
			return 0, x.f.p.Ftruncate(t, x.f.fd, n)
		})
		if err != nil {
			fmt.Fprintf(c.errw, "ftruncate: %s\n", strerror(err))
			x.exitcode = 1
		}
	case "fsync", "fdatasync", "syncfs":
	case "quit":
	case "help":
		x.help(args[1:])
	case "fiemap":
		x.fiemap(args[1:])
	default:
		fmt.Fprintf(c.errw, "command \"%s\" not found\n", name)
		x.exitcode = 1
	}
}

// parseKeyspec is str2keyspec: 16 hex digits are a v1 descriptor, 32 a v2
// identifier; version (-1: from the length) forces one.
func parseKeyspec(s string, version int) (fscrypt.KeySpecifier, int, string) {
	var ks fscrypt.KeySpecifier
	if version < 0 {
		switch len(s) {
		case 2 * fscrypt.KeyDescriptorSize:
			version = fscrypt.PolicyV1
		case 2 * fscrypt.KeyIdentifierSize:
			version = fscrypt.PolicyV2
		default:
			return ks, -1, fmt.Sprintf("invalid key specifier: %s", s)
		}
	}
	b, err := hex.DecodeString(s)
	if version == fscrypt.PolicyV2 {
		if err != nil || len(b) != fscrypt.KeyIdentifierSize {
			return ks, -1, fmt.Sprintf("invalid key identifier: %s", s)
		}
		ks.Type = fscrypt.KeySpecTypeIdentifier
	} else {
		if err != nil || len(b) != fscrypt.KeyDescriptorSize {
			return ks, -1, fmt.Sprintf("invalid key descriptor: %s", s)
		}
		ks.Type = fscrypt.KeySpecTypeDescriptor
	}
	copy(ks.U[:], b)
	return ks, version, ""
}

func keyspecString(ks fscrypt.KeySpecifier) (string, string) {
	if ks.Type == fscrypt.KeySpecTypeDescriptor {
		return "descriptor", hex.EncodeToString(ks.U[:fscrypt.KeyDescriptorSize])
	}
	return "identifier", hex.EncodeToString(ks.U[:fscrypt.KeyIdentifierSize])
}

func (x *xfsIo) setEncpolicy(args []string) {
	c := x.c
	p := fscrypt.Policy{ContentsMode: fscrypt.ModeAES256XTS, FilenamesMode: fscrypt.ModeAES256CTS, Flags: fscrypt.PolicyFlagsPad16}
	version := -1
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) == 2 && a[0] == '-' && strings.IndexByte("cnfsv", a[1]) >= 0 {
			if i+1 >= len(args) {
				x.usage("set_encpolicy")
				return
			}
			v := args[i+1]
			i++
			switch a[1] {
			case 'c', 'n':
				m, ok := parseMode(v)
				if !ok {
					kind := "contents"
					if a[1] == 'n' {
						kind = "filenames"
					}
					fmt.Fprintf(c.errw, "invalid %s encryption mode: %s\n", kind, v)
					x.exitcode = 1
					return
				}
				if a[1] == 'c' {
					p.ContentsMode = m
				} else {
					p.FilenamesMode = m
				}
			case 'f':
				n, err := strconv.ParseUint(v, 0, 8)
				if err != nil {
					fmt.Fprintf(c.errw, "invalid flags: %s\n", v)
					x.exitcode = 1
					return
				}
				p.Flags = uint8(n)
			case 's':
				n, err := strconv.ParseUint(v, 0, 8)
				if err != nil {
					fmt.Fprintf(c.errw, "invalid log2_dusize: %s\n", v)
					x.exitcode = 1
					return
				}
				p.Log2DataUnitSize = uint8(n)
			case 'v':
				n, err := strconv.ParseUint(v, 0, 8)
				if err != nil {
					fmt.Fprintf(c.errw, "invalid policy version: %s\n", v)
					x.exitcode = 1
					return
				}
				if n == 1 {
					n = fscrypt.PolicyV1
				}
				version = int(n)
			}
			continue
		}
		if strings.HasPrefix(a, "-") {
			x.usage("set_encpolicy")
			return
		}
		rest = append(rest, a)
	}
	if len(rest) > 1 {
		x.usage("set_encpolicy")
		return
	}
	var ks fscrypt.KeySpecifier
	if len(rest) == 1 {
		var msg string
		ks, version, msg = parseKeyspec(rest[0], version)
		if version < 0 {
			fmt.Fprintln(c.errw, msg)
			x.exitcode = 1
			return
		}
	}
	if version < 0 {
		version = fscrypt.PolicyV1
	}
	p.Version = uint8(version)
	copy(p.Descriptor[:], ks.U[:fscrypt.KeyDescriptorSize])
	copy(p.Identifier[:], ks.U[:fscrypt.KeyIdentifierSize])
	var buf []byte
	if version == fscrypt.PolicyV2 {
		buf = p.Marshal()
	} else {
		// xfs_io 6.6's set_encpolicy_f: only v2 carries a data unit size.
		if p.Log2DataUnitSize != 0 {
			fmt.Fprintln(c.errw, "v1 policy does not support selecting the data unit size")
			x.exitcode = 1
			return
		}
		// struct fscrypt_policy_v1 for v1 and unknown versions.
		buf = make([]byte, fscrypt.PolicyV1Size)
		buf[0], buf[1], buf[2], buf[3] = p.Version, p.ContentsMode, p.FilenamesMode, p.Flags
		copy(buf[4:], p.Descriptor[:])
	}
	if err := c.ioctl(x.f, "FS_IOC_SET_ENCRYPTION_POLICY", vfs.FS_IOC_SET_ENCRYPTION_POLICY, buf); err != nil {
		fmt.Fprintf(c.errw, "%s: failed to set encryption policy: %s\n", x.name, strerror(err))
		x.exitcode = 1
	}
}

func (x *xfsIo) getEncpolicy(args []string) {
	c := x.c
	v1only := false
	for _, a := range args {
		switch a {
		case "-1":
			v1only = true
		case "-t":
			buf := make([]byte, 8+fscrypt.PolicyV2Size)
			buf[0] = fscrypt.PolicyV2Size
			err := c.ioctl(x.f, "FS_IOC_GET_ENCRYPTION_POLICY_EX", vfs.FS_IOC_GET_ENCRYPTION_POLICY_EX, buf)
			if e, _ := errno.Of(err); err == nil || e == errno.ENODATA {
				fmt.Fprintln(c.out, "supported")
			} else if e == errno.ENOTTY {
				fmt.Fprintln(c.out, "unsupported")
			} else {
				fmt.Fprintf(c.errw, "%s: unexpected error checking for FS_IOC_GET_ENCRYPTION_POLICY_EX support: %s\n", x.name, strerror(err))
				x.exitcode = 1
			}
			return
		default:
			x.usage("get_encpolicy")
			return
		}
	}
	var p fscrypt.Policy
	var err error
	buf := make([]byte, 8+fscrypt.PolicyV2Size)
	if !v1only {
		buf[0] = fscrypt.PolicyV2Size
		err = c.ioctl(x.f, "FS_IOC_GET_ENCRYPTION_POLICY_EX", vfs.FS_IOC_GET_ENCRYPTION_POLICY_EX, buf)
		if err == nil {
			p, err = fscrypt.ParsePolicy(buf[8 : 8+int(buf[0])])
		}
	}
	if e, _ := errno.Of(err); v1only || e == errno.ENOTTY {
		b := make([]byte, fscrypt.PolicyV1Size)
		err = c.ioctl(x.f, "FS_IOC_GET_ENCRYPTION_POLICY", vfs.FS_IOC_GET_ENCRYPTION_POLICY, b)
		if err == nil {
			p, err = fscrypt.ParsePolicy(b)
		}
	}
	if err != nil {
		fmt.Fprintf(c.errw, "%s: failed to get encryption policy: %s\n", x.name, strerror(err))
		x.exitcode = 1
		return
	}
	fmt.Fprintf(c.out, "Encryption policy for %s:\n", x.name)
	fmt.Fprintf(c.out, "\tPolicy version: %d\n", p.Version)
	if p.Version == fscrypt.PolicyV2 {
		fmt.Fprintf(c.out, "\tMaster key identifier: %s\n", hex.EncodeToString(p.Identifier[:]))
	} else {
		fmt.Fprintf(c.out, "\tMaster key descriptor: %s\n", hex.EncodeToString(p.Descriptor[:]))
	}
	fmt.Fprintf(c.out, "\tContents encryption mode: %d (%s)\n", p.ContentsMode, modeName(p.ContentsMode))
	fmt.Fprintf(c.out, "\tFilenames encryption mode: %d (%s)\n", p.FilenamesMode, modeName(p.FilenamesMode))
	// xfs_io's show_v2_encryption_policy (io/encrypt.c) ends with the
	// flags: no xfsprogs release prints log2_data_unit_size.
	fmt.Fprintf(c.out, "\tFlags: 0x%02x\n", p.Flags)
}

func (x *xfsIo) addEnckey(args []string) {
	c := x.c
	arg := &fscrypt.AddKeyArg{}
	arg.KeySpec.Type = fscrypt.KeySpecTypeIdentifier
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-d":
			if i+1 >= len(args) {
				x.usage("add_enckey")
				return
			}
			ks, v, msg := parseKeyspec(args[i+1], fscrypt.PolicyV1)
			if v < 0 {
				fmt.Fprintln(c.errw, msg)
				return
			}
			arg.KeySpec = ks
			i++
		case "-k":
			if i+1 >= len(args) {
				x.usage("add_enckey")
				return
			}
			n, err := strconv.ParseInt(args[i+1], 0, 32)
			if err != nil || n <= 0 {
				fmt.Fprintf(c.errw, "invalid key ID: %s\n", args[i+1])
				return
			}
			arg.KeyID = uint32(n)
			i++
		default:
			x.usage("add_enckey")
			return
		}
	}
	if arg.KeyID == 0 {
		raw, err := io.ReadAll(io.LimitReader(c.in, 64+1))
		if err != nil {
			fmt.Fprintf(c.errw, "Error reading key from stdin: %s\n", strerror(err))
			x.exitcode = 1
			return
		}
		if len(raw) > 64 {
			fmt.Fprintf(c.errw, "Invalid key; got > FSCRYPT_MAX_KEY_SIZE (64) bytes on stdin!\n")
			x.exitcode = 1
			return
		}
		arg.Raw, arg.RawSize = raw, uint32(len(raw))
	}
	if err := c.ioctl(x.f, "FS_IOC_ADD_ENCRYPTION_KEY", vfs.FS_IOC_ADD_ENCRYPTION_KEY, arg); err != nil {
		fmt.Fprintf(c.errw, "Error adding encryption key: %s\n", strerror(err))
		x.exitcode = 1
		return
	}
	kind, s := keyspecString(arg.KeySpec)
	fmt.Fprintf(c.out, "Added encryption key with %s %s\n", kind, s)
}

func (x *xfsIo) rmEnckey(args []string) {
	c := x.c
	req, name := uint32(vfs.FS_IOC_REMOVE_ENCRYPTION_KEY), "FS_IOC_REMOVE_ENCRYPTION_KEY"
	var rest []string
	for _, a := range args {
		switch {
		case a == "-a":
			req, name = vfs.FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS, "FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS"
		case strings.HasPrefix(a, "-"):
			x.usage("rm_enckey")
			return
		default:
			rest = append(rest, a)
		}
	}
	if len(rest) != 1 {
		x.usage("rm_enckey")
		return
	}
	ks, v, msg := parseKeyspec(rest[0], -1)
	if v < 0 {
		fmt.Fprintln(c.errw, msg)
		x.exitcode = 1
		return
	}
	arg := &fscrypt.RemoveKeyArg{KeySpec: ks}
	if err := c.ioctl(x.f, name, req, arg); err != nil {
		fmt.Fprintf(c.errw, "Error removing encryption key: %s\n", strerror(err))
		x.exitcode = 1
		return
	}
	kind, s := keyspecString(ks)
	switch {
	case arg.RemovalStatusFlags&fscrypt.KeyRemovalStatusFlagOtherUser != 0:
		fmt.Fprintf(c.out, "Removed user's claim to encryption key with %s %s\n", kind, s)
	case arg.RemovalStatusFlags&fscrypt.KeyRemovalStatusFlagFilesBusy != 0:
		fmt.Fprintf(c.out, "Removed encryption key with %s %s, but files still busy\n", kind, s)
	default:
		fmt.Fprintf(c.out, "Removed encryption key with %s %s\n", kind, s)
	}
}

func (x *xfsIo) enckeyStatus(spec string) {
	c := x.c
	ks, v, msg := parseKeyspec(spec, -1)
	if v < 0 {
		fmt.Fprintln(c.errw, msg)
		x.exitcode = 1
		return
	}
	arg := &fscrypt.GetKeyStatusArg{KeySpec: ks}
	if err := c.ioctl(x.f, "FS_IOC_GET_ENCRYPTION_KEY_STATUS", vfs.FS_IOC_GET_ENCRYPTION_KEY_STATUS, arg); err != nil {
		fmt.Fprintf(c.errw, "Error getting encryption key status: %s\n", strerror(err))
		x.exitcode = 1
		return
	}
	switch arg.Status {
	case fscrypt.KeyStatusPresent:
		s := "Present"
		if arg.UserCount != 0 || arg.StatusFlags != 0 {
			s += fmt.Sprintf(" (user_count=%d", arg.UserCount)
			if arg.StatusFlags&fscrypt.KeyStatusFlagAddedBySelf != 0 {
				s += ", added_by_self"
			}
			if f := arg.StatusFlags &^ fscrypt.KeyStatusFlagAddedBySelf; f != 0 {
				s += fmt.Sprintf(", unknown_flags=0x%08x", f)
			}
			s += ")"
		}
		fmt.Fprintln(c.out, s)
	case fscrypt.KeyStatusAbsent:
		fmt.Fprintln(c.out, "Absent")
	case fscrypt.KeyStatusIncompletelyRemoved:
		fmt.Fprintln(c.out, "Incompletely removed")
	default:
		fmt.Fprintf(c.out, "Unknown status (%d)\n", arg.Status)
	}
}

// ioReport is xfs_io's summary line; the model's clock does not move, so
// the time and rates are zero.
// ioReport is xfs_io's report of a pread or pwrite (io/pread.c,
// io/pwrite.c): the bytes done of those asked for, and the size in
// cvtstr's units (KiB, MiB, ... with printf's %.f rounding).
func ioReport(w io.Writer, verb string, done, want, off int64, ops int) {
	fmt.Fprintf(w, "%s %d/%d bytes at offset %d\n", verb, done, want, off)
	fmt.Fprintf(w, "%s, %d ops; 0.0000 sec (0 bytes/sec and 0.0000 ops/sec)\n", humanBytes(done), ops)
}

// humanBytes is xfsprogs' cvtstr for a whole number of bytes: the largest
// unit it reaches, rounded to a whole number ("55 MiB" for 57311232).
func humanBytes(n int64) string {
	units := []string{"EiB", "PiB", "TiB", "GiB", "MiB", "KiB"}
	for i, u := range units {
		if shift := uint(60 - 10*i); n >= 1<<shift {
			return fmt.Sprintf("%.f %s", float64(n)/float64(int64(1)<<shift), u)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// xfsBlocksize and xfsSectsize are what xfs_io's init_cvtnum (io/init.c)
// gives a file on a filesystem other than XFS (IO_FOREIGN): the default
// buffer of pread and pwrite and the units of cvtnum's "b" and "s".
const (
	xfsBlocksize = 4096
	xfsSectsize  = 512
)

// cvtnum is xfsprogs' number parser (libfrog/convert.c cvtnum): strtoll
// with base 0 (so 0x and leading-0 octal), then at most one suffix, case
// ignored: b (blocks of xfsBlocksize), s (sectors of xfsSectsize), k, m,
// g, t, p, e (powers of 1024). Anything else, or a negative number, is
// not a number. It is not coreutils' parseSize: there "b" is 512 bytes
// and "KB" is 1000.
func cvtnum(s string) (int64, bool) {
	num := s
	var suffix byte
	if n := len(s); n > 0 && strings.IndexByte("bsBSkKmMgGtTpPeE", s[n-1]) >= 0 &&
		!(strings.HasPrefix(strings.ToLower(s), "0x") && strings.IndexByte("bBeE", s[n-1]) >= 0) {
		num, suffix = s[:n-1], s[n-1]|0x20
	}
	v, err := strconv.ParseInt(num, 0, 64)
	if err != nil || v < 0 {
		return 0, false
	}
	switch suffix {
	case 0:
		return v, true
	case 'b':
		return v * xfsBlocksize, true
	case 's':
		return v * xfsSectsize, true
	}
	return v << (10 * uint(strings.IndexByte("kmgtpe", suffix)+1)), true
}

// offLen reads the options and operands of xfs_io's pread and pwrite
// (io/pread.c pread_f, io/pwrite.c pwrite_f): -b the buffer size
// (default init_cvtnum's block size), -S the fill byte, -v dump what is
// read, then OFFSET and LENGTH, each through cvtnum, with the tools'
// "non-numeric" messages.
func (x *xfsIo) offLen(cmd string, args []string) (int64, int64, int64, byte, bool, bool) {
	bs := int64(xfsBlocksize)
	pat := byte(0xcd)
	verbose := false
	bad := func(what, arg string) (int64, int64, int64, byte, bool, bool) {
		fmt.Fprintf(x.c.out, "non-numeric %s -- %s\n", what, arg)
		x.exitcode = 1
		return 0, 0, 0, 0, false, false
	}
	var rest []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-b", "-S":
			if i+1 >= len(args) {
				x.usage(cmd)
				return 0, 0, 0, 0, false, false
			}
			if args[i] == "-b" {
				// pwrite_f takes a zero size too: its
				// first write is then of no bytes and
				// ends the loop.
				v, ok := cvtnum(args[i+1])
				if !ok {
					return bad("bsize", args[i+1])
				}
				bs = v
			} else {
				// pwrite_f: strtoul, then alloc_buffer's memset
				// keeps the low byte.
				v, err := strconv.ParseUint(args[i+1], 0, 32)
				if err != nil {
					return bad("seed", args[i+1])
				}
				pat = byte(v)
			}
			i++
		case "-v":
			verbose = true
		case "-q", "-W", "-w":
		default:
			rest = append(rest, args[i])
		}
	}
	if len(rest) != 2 {
		x.usage(cmd)
		return 0, 0, 0, 0, false, false
	}
	off, ok := cvtnum(rest[0])
	if !ok {
		return bad("offset argument", rest[0])
	}
	n, ok := cvtnum(rest[1])
	if !ok {
		return bad("length argument", rest[1])
	}
	return off, n, bs, pat, verbose, true
}

func (x *xfsIo) pwrite(args []string) {
	c := x.c
	off, n, bs, pat, _, ok := x.offLen("pwrite", args)
	if !ok {
		return
	}
	buf := make([]byte, min(bs, max(n, 1)))
	for i := range buf {
		buf[i] = pat
	}
	var done int64
	ops := 0
	for done < n {
		chunk := buf[:min(int64(len(buf)), n-done)]
		pos := off + done
		w, err := c.sys(fmt.Sprintf("pwrite64(%d, %d, %d)", x.f.fd, len(chunk), pos), func(t *kernel.Task, p *vfs.Proc) (int64, error) {
			w, err := x.f.p.Pwrite(t, x.f.fd, chunk, pos)
			return int64(w), err
		})
		if err != nil {
			fmt.Fprintf(c.errw, "pwrite: %s\n", strerror(err))
			x.exitcode = 1
			return
		}
		if w == 0 {
			break
		}
		done += w
		ops++
		// write_buffer: a short write ends the command, with no error
		// (the next write would be the one to fail).
		if w < int64(len(chunk)) {
			break
		}
	}
	ioReport(c.out, "wrote", done, n, off, ops)
}

func (x *xfsIo) pread(args []string) {
	c := x.c
	off, n, bs, _, verbose, ok := x.offLen("pread", args)
	if !ok {
		return
	}
	buf := make([]byte, min(bs, max(n, 1)))
	var done int64
	ops := 0
	for done < n {
		chunk := buf[:min(int64(len(buf)), n-done)]
		pos := off + done
		r, err := c.sys(fmt.Sprintf("pread64(%d, %d, %d)", x.f.fd, len(chunk), pos), func(t *kernel.Task, p *vfs.Proc) (int64, error) {
			r, err := x.f.p.Pread(t, x.f.fd, chunk, pos)
			return int64(r), err
		})
		if err != nil {
			fmt.Fprintf(c.errw, "pread: %s\n", strerror(err))
			x.exitcode = 1
			return
		}
		if r == 0 {
			break
		}
		if verbose {
			// Each buffer is dumped as it is read (dump_buffer).
			dumpBuffer(c.out, chunk[:r], pos)
		}
		done += r
		ops++
	}
	ioReport(c.out, "read", done, n, off, ops)
}

// dumpBuffer is xfs_io's dump_buffer: b, read at offset off, as rows of
// 16 bytes in hex and ASCII.
func dumpBuffer(w io.Writer, all []byte, off int64) {
	for i := 0; i < len(all); i += 16 {
		row := all[i:min(i+16, len(all))]
		var b strings.Builder
		fmt.Fprintf(&b, "%08x: ", off+int64(i))
		for _, ch := range row {
			fmt.Fprintf(&b, " %02x", ch)
		}
		b.WriteString(strings.Repeat("   ", 16-len(row)))
		b.WriteString("  ")
		writePrintable(&b, row)
		fmt.Fprintln(w, b.String())
	}
}

// --- fscryptctl ---

const fscryptctlUsage = `Usage: fscryptctl <command> [arguments] [options]

Commands:
  fscryptctl add_key <mountpoint>
  fscryptctl remove_key [--all-users] <key identifier> <mountpoint>
  fscryptctl key_status <key identifier> <mountpoint>
  fscryptctl get_policy <file or directory>
  fscryptctl set_policy [<options>] <key identifier> <directory>
`

func cmdFscryptctl(c *cmd) int {
	if len(c.args) == 0 {
		io.WriteString(c.errw, fscryptctlUsage)
		return 1
	}
	sub, args := c.args[0], c.args[1:]
	var opts []string
	var rest []string
	for _, a := range args {
		if strings.HasPrefix(a, "--") {
			opts = append(opts, a)
		} else {
			rest = append(rest, a)
		}
	}
	bad := func() int {
		io.WriteString(c.errw, fscryptctlUsage)
		return 1
	}
	errf := func(format string, a ...any) int {
		fmt.Fprintf(c.errw, "fscryptctl: "+format+"\n", a...)
		return 1
	}
	switch sub {
	case "--help", "-h", "help":
		io.WriteString(c.out, fscryptctlUsage)
		return 0
	case "add_key":
		if len(rest) != 1 {
			return bad()
		}
		raw, _ := io.ReadAll(io.LimitReader(c.in, 65))
		if len(raw) > 64 {
			return errf("key is too long (max 64 bytes)")
		}
		f, err := c.openForIoctl(rest[0], false, true)
		if err != nil {
			return errf("error opening %s: %s", rest[0], strerror(err))
		}
		defer f.Close()
		arg := &fscrypt.AddKeyArg{RawSize: uint32(len(raw)), Raw: raw}
		arg.KeySpec.Type = fscrypt.KeySpecTypeIdentifier
		if err := c.ioctl(f, "FS_IOC_ADD_ENCRYPTION_KEY", vfs.FS_IOC_ADD_ENCRYPTION_KEY, arg); err != nil {
			return errf("error adding key to filesystem: %s", strerror(err))
		}
		fmt.Fprintln(c.out, hex.EncodeToString(arg.KeySpec.U[:fscrypt.KeyIdentifierSize]))
		return 0
	case "remove_key", "key_status":
		if len(rest) != 2 {
			return bad()
		}
		ks, v, _ := parseKeyspec(rest[0], fscrypt.PolicyV2)
		if v < 0 {
			return errf("invalid key identifier: %s", rest[0])
		}
		f, err := c.openForIoctl(rest[1], false, true)
		if err != nil {
			return errf("error opening %s: %s", rest[1], strerror(err))
		}
		defer f.Close()
		if sub == "key_status" {
			arg := &fscrypt.GetKeyStatusArg{KeySpec: ks}
			if err := c.ioctl(f, "FS_IOC_GET_ENCRYPTION_KEY_STATUS", vfs.FS_IOC_GET_ENCRYPTION_KEY_STATUS, arg); err != nil {
				return errf("error getting key status: %s", strerror(err))
			}
			switch arg.Status {
			case fscrypt.KeyStatusPresent:
				fmt.Fprintf(c.out, "Present (user_count=%d", arg.UserCount)
				if arg.StatusFlags&fscrypt.KeyStatusFlagAddedBySelf != 0 {
					fmt.Fprint(c.out, ", added_by_self")
				}
				fmt.Fprintln(c.out, ")")
			case fscrypt.KeyStatusAbsent:
				fmt.Fprintln(c.out, "Absent")
			case fscrypt.KeyStatusIncompletelyRemoved:
				fmt.Fprintln(c.out, "Incompletely removed")
			}
			return 0
		}
		req, name := uint32(vfs.FS_IOC_REMOVE_ENCRYPTION_KEY), "FS_IOC_REMOVE_ENCRYPTION_KEY"
		for _, o := range opts {
			if o == "--all-users" {
				req, name = vfs.FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS, "FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS"
			} else {
				return bad()
			}
		}
		arg := &fscrypt.RemoveKeyArg{KeySpec: ks}
		if err := c.ioctl(f, name, req, arg); err != nil {
			return errf("error removing key: %s", strerror(err))
		}
		switch {
		case arg.RemovalStatusFlags&fscrypt.KeyRemovalStatusFlagOtherUser != 0:
			fmt.Fprintln(c.errw, "warning: other users still have this key added")
		case arg.RemovalStatusFlags&fscrypt.KeyRemovalStatusFlagFilesBusy != 0:
			fmt.Fprintln(c.errw, "warning: some files using this key are still in-use")
		}
		return 0
	case "get_policy":
		if len(rest) != 1 {
			return bad()
		}
		f, err := c.openForIoctl(rest[0], false, true)
		if err != nil {
			return errf("error opening %s: %s", rest[0], strerror(err))
		}
		defer f.Close()
		buf := make([]byte, 8+fscrypt.PolicyV2Size)
		buf[0] = fscrypt.PolicyV2Size
		if err := c.ioctl(f, "FS_IOC_GET_ENCRYPTION_POLICY_EX", vfs.FS_IOC_GET_ENCRYPTION_POLICY_EX, buf); err != nil {
			if e, _ := errno.Of(err); e == errno.ENODATA {
				return errf("error getting policy for %s: file or directory not encrypted", rest[0])
			}
			return errf("error getting policy for %s: %s", rest[0], strerror(err))
		}
		p, err := fscrypt.ParsePolicy(buf[8 : 8+int(buf[0])])
		if err != nil {
			return errf("error getting policy for %s: %s", rest[0], strerror(err))
		}
		if p.Version == fscrypt.PolicyV2 {
			fmt.Fprintf(c.out, "Encryption policy for %s:\n\tPolicy version: 2\n\tMaster key identifier: %s\n", rest[0], hex.EncodeToString(p.Identifier[:]))
		} else {
			fmt.Fprintf(c.out, "Encryption policy for %s:\n\tPolicy version: 1\n\tMaster key descriptor: %s\n", rest[0], hex.EncodeToString(p.Descriptor[:]))
		}
		fmt.Fprintf(c.out, "\tContents encryption mode: %s\n\tFilenames encryption mode: %s\n\tFlags: PAD_%d\n", modeName(p.ContentsMode), modeName(p.FilenamesMode), 4<<(p.Flags&fscrypt.PolicyFlagsPadMask))
		return 0
	case "set_policy":
		if len(rest) != 2 {
			return bad()
		}
		p := fscrypt.Policy{Version: fscrypt.PolicyV2, ContentsMode: fscrypt.ModeAES256XTS, FilenamesMode: fscrypt.ModeAES256CTS, Flags: fscrypt.PolicyFlagsPad32}
		for _, o := range opts {
			k, v, _ := strings.Cut(o, "=")
			switch k {
			case "--contents":
				m, ok := parseMode(v)
				if !ok {
					return errf("invalid contents mode: %s", v)
				}
				p.ContentsMode = m
			case "--filenames":
				m, ok := parseMode(v)
				if !ok {
					return errf("invalid filenames mode: %s", v)
				}
				p.FilenamesMode = m
			case "--padding":
				n, _ := strconv.Atoi(v)
				switch n {
				case 4:
					p.Flags = fscrypt.PolicyFlagsPad4
				case 8:
					p.Flags = fscrypt.PolicyFlagsPad8
				case 16:
					p.Flags = fscrypt.PolicyFlagsPad16
				case 32:
					p.Flags = fscrypt.PolicyFlagsPad32
				default:
					return errf("invalid padding: %s", v)
				}
			case "--direct-key":
				p.Flags |= fscrypt.PolicyFlagDirectKey
			case "--iv-ino-lblk-64":
				p.Flags |= fscrypt.PolicyFlagIVInoLblk64
			case "--iv-ino-lblk-32":
				p.Flags |= fscrypt.PolicyFlagIVInoLblk32
			default:
				return bad()
			}
		}
		ks, v, _ := parseKeyspec(rest[0], -1)
		if v < 0 {
			return errf("invalid key specifier: %s", rest[0])
		}
		p.Version = uint8(v)
		copy(p.Descriptor[:], ks.U[:fscrypt.KeyDescriptorSize])
		copy(p.Identifier[:], ks.U[:fscrypt.KeyIdentifierSize])
		f, err := c.openForIoctl(rest[1], false, true)
		if err != nil {
			return errf("error opening %s: %s", rest[1], strerror(err))
		}
		defer f.Close()
		if err := c.ioctl(f, "FS_IOC_SET_ENCRYPTION_POLICY", vfs.FS_IOC_SET_ENCRYPTION_POLICY, p.Marshal()); err != nil {
			return errf("error setting policy for %s: %s", rest[1], strerror(err))
		}
		return 0
	}
	fmt.Fprintf(c.errw, "fscryptctl: invalid command: %s\n", sub)
	io.WriteString(c.errw, fscryptctlUsage)
	return 1
}
