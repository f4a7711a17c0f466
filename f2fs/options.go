package f2fs

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

func init() { vfs.MustRegister(Type) }

// LookupMode is the lookup_mode= mount option of commit 632f0b6c3e32
// ("f2fs: add lookup_mode mount option"; enum f2fs_lookup_mode in
// fs/f2fs/f2fs.h, F2FS_OPTION(sbi).lookup_mode), which decides whether a
// hashed miss in a casefolded directory falls back to the linear search
// (f2fs_should_fallback_to_linear, fs/f2fs/dir.c). The kernel's default
// is perf (default_options in fs/f2fs/super.c; Documentation/filesystems/
// f2fs.rst marks it "(Default)"), and so is the zero value here.
//
// Kernels before that commit (the 6.16 of seed 001 among them) have no
// option and behave as auto does: they fall back unless the superblock
// has the no-compat-fallback flag.
type LookupMode uint8

// Lookup modes, in the kernel's enum order.
const (
	// LookupPerf never falls back (hash-only lookups): LOOKUP_PERF, the
	// default.
	LookupPerf LookupMode = iota
	// LookupCompat always falls back: LOOKUP_COMPAT.
	LookupCompat
	// LookupAuto falls back after a hashed miss in a casefolded directory
	// unless the superblock has EncNoCompatFallbackFL: LOOKUP_AUTO, the
	// behaviour of kernels before the option.
	LookupAuto
)

// String names the mode as the mount option spells it (and as
// f2fs_show_options prints it: lookup_mode=perf|compat|auto).
func (m LookupMode) String() string {
	switch m {
	case LookupPerf:
		return "perf"
	case LookupCompat:
		return "compat"
	case LookupAuto:
		return "auto"
	}
	return fmt.Sprintf("LookupMode(%d)", uint8(m))
}

// ParseLookupMode reads a lookup_mode= value (the option's constant_table
// f2fs_param_lookup_mode: perf, compat, auto). Errors: EINVAL.
func ParseLookupMode(s string) (LookupMode, error) {
	switch s {
	case "perf":
		return LookupPerf, nil
	case "compat":
		return LookupCompat, nil
	case "auto":
		return LookupAuto, nil
	}
	return 0, errno.EINVAL
}

// featureArgs is Type.FeatureArgs (f2fs has no inode count to set: nids
// are allocated as needed).
func featureArgs(f vfs.Features) []string {
	return Options{NoEncrypt: !f.Encrypt, Casefold: f.Casefold, Strict: f.Strict,
		NoCompatFallback: f.NoCompatFallback}.MkfsArgs()
}

// MkfsArgs renders o's features as the arguments of mkfs.f2fs that make
// such a filesystem, which Mkfs parses back.
func (o Options) MkfsArgs() []string {
	var feat []string
	if !o.NoEncrypt {
		feat = append(feat, "encrypt")
	}
	if o.Casefold {
		feat = append(feat, "casefold")
	}
	var args []string
	if len(feat) > 0 {
		args = append(args, "-O", strings.Join(feat, ","))
	}
	if o.Casefold {
		enc := "utf8"
		var flags []string
		if o.Strict {
			flags = append(flags, "strict")
		}
		if o.NoCompatFallback {
			flags = append(flags, "hashonly")
		}
		if len(flags) > 0 {
			enc += ":" + strings.Join(flags, ",")
		}
		args = append(args, "-C", enc)
	}
	return args
}

// MountData renders o's mount options as the mount's option string, which
// fill_super parses back.
func (o Options) MountData() string {
	opts := []string{"lookup_mode=" + o.LookupMode.String()}
	if o.NoInlineDentry {
		opts = append(opts, "noinline_dentry")
	}
	if o.DirLevel != 0 {
		opts = append(opts, fmt.Sprintf("dir_level=%d", o.DirLevel))
	}
	return strings.Join(opts, ",")
}

// ParseMkfsArgs reads the arguments of mkfs.f2fs that the model knows: -O
// with the features encrypt, casefold and extra_attr, and -C encoding[:flags] with
// the utf8 encoding and the flags strict and hashonly (f2fs-tools' -C
// utf8:strict,hashonly), which turns casefold on. Errors name the bad
// argument.
func ParseMkfsArgs(args []string) (Options, error) {
	o := Options{NoEncrypt: true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if (a == "-O" || a == "-C") && i+1 >= len(args) {
			return o, fmt.Errorf("mkfs.f2fs: option requires an argument -- '%s'", a[1:])
		}
		switch a {
		case "-O":
			i++
			for _, f := range strings.Split(args[i], ",") {
				switch f {
				case "encrypt":
					o.NoEncrypt = false
				case "casefold":
					o.Casefold = true
				case "extra_attr":
					// Accepted, as f2fs-tools does (and the image mkfs
					// writes it); the device in the model's own layout
					// keeps its inodes' inline geometry.
				case "":
				default:
					return o, fmt.Errorf("mkfs.f2fs: Error: Wrong features %s", f)
				}
			}
		case "-C":
			i++
			enc, flags, _ := strings.Cut(args[i], ":")
			if enc != "utf8" {
				return o, fmt.Errorf("mkfs.f2fs: Unknown encoding : %s", enc)
			}
			o.Casefold = true
			for _, f := range strings.Split(flags, ",") {
				switch f {
				case "strict":
					o.Strict = true
				case "hashonly":
					o.NoCompatFallback = true
				case "":
				default:
					return o, fmt.Errorf("mkfs.f2fs: Unknown flag : %s", f)
				}
			}
		default:
			return o, fmt.Errorf("mkfs.f2fs: invalid option -- '%s'", strings.TrimPrefix(a, "-"))
		}
	}
	return o, nil
}

// mkfs is Type.Mkfs: mkfs.f2fs with args on dev.
func mkfs(t *kernel.Task, dev *vfs.BlockDevice, args []string) error {
	o, err := ParseMkfsArgs(args)
	if err != nil {
		return err
	}
	dev.SetSuper(vfs.DeviceSuper{FsType: "f2fs", Features: o})
	return nil
}

// parseOptions is f2fs's option parsing (parse_options, fs/f2fs/super.c)
// for the options the model has: lookup_mode=perf|compat|auto (perf when
// not given, as default_options sets it),
// inline_dentry and noinline_dentry, dir_level=N (0 to
// MAX_DIR_HASH_DEPTH). It changes o in place; an unknown option or a bad
// value is EINVAL with the mount API's log line.
func parseOptions(t *kernel.Task, fst *vfs.FileSystemType, o *Options, data string) error {
	for _, opt := range vfs.ParseMountData(data) {
		switch opt.Key {
		case "lookup_mode":
			m, err := ParseLookupMode(opt.Value)
			if err != nil || !opt.HasValue {
				t.Printk("F2FS-fs: invalid lookup mode %q", opt.Value)
				return vfs.BadValue(t, fst, opt)
			}
			o.LookupMode = m
		case "inline_dentry", "noinline_dentry":
			if opt.HasValue {
				return vfs.BadValue(t, fst, opt)
			}
			o.NoInlineDentry = opt.Key == "noinline_dentry"
		case "dir_level":
			n, err := strconv.ParseUint(opt.Value, 10, 32)
			if err != nil || n > MaxDirHashDepth {
				return vfs.BadValue(t, fst, opt)
			}
			o.DirLevel = uint32(n)
		default:
			return vfs.UnknownParameter(t, fst, opt)
		}
	}
	return nil
}

// loadOptions is the start of f2fs_fill_super: the features mkfs wrote on
// the device ("Can't find valid F2FS filesystem" and EINVAL when it holds
// none), then the mount's options.
func loadOptions(t *kernel.Task, vsb *vfs.SuperBlock, data string) (Options, error) {
	s := vsb.Bdev().Super()
	o, ok := s.Features.(Options)
	if s.FsType != vsb.Type.Name || !ok {
		t.Printk("F2FS-fs (%s): Can't find valid F2FS filesystem in 1th superblock", vsb.ID())
		return Options{}, errno.EINVAL
	}
	if err := parseOptions(t, vsb.Type, &o, data); err != nil {
		return Options{}, err
	}
	return o, nil
}

// Remount implements vfs.Remounter (f2fs_reconfigure): the mount options
// are parsed again over the current ones; lookup_mode= takes effect for
// the next lookup, dir_level= and inline_dentry for new directories.
// Errors: EINVAL.
func (sbi *SuperBlock) Remount(t *kernel.Task, vsb *vfs.SuperBlock, data string) error {
	o := sbi.opts
	if err := parseOptions(t, vsb.Type, &o, data); err != nil {
		return err
	}
	sbi.opts = o
	sbi.LookupMode = o.LookupMode
	sbi.InlineDentry = !o.NoInlineDentry
	return nil
}
