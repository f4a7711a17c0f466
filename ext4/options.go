package ext4

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

func init() { vfs.MustRegister(Type) }

// featureArgs is Type.FeatureArgs.
func featureArgs(f vfs.Features) []string {
	return Options{NoEncrypt: !f.Encrypt, Casefold: f.Casefold, Strict: f.Strict,
		NoCompatFallback: f.NoCompatFallback, InodesCount: f.Inodes}.MkfsArgs()
}

// MkfsArgs renders o as the arguments of mkfs.ext4 (mke2fs) that make
// such a filesystem, which Mkfs parses back.
func (o Options) MkfsArgs() []string {
	var feat, ext []string
	if o.NoMetadataCsum {
		feat = append(feat, "^metadata_csum")
	}
	if o.NoDirIndex {
		feat = append(feat, "^dir_index")
	}
	if o.LargeDir {
		feat = append(feat, "large_dir")
	}
	if !o.NoEncrypt {
		feat = append(feat, "encrypt")
	}
	if o.StableInodes {
		feat = append(feat, "stable_inodes")
	}
	if o.Casefold {
		feat = append(feat, "casefold")
		if o.Strict {
			ext = append(ext, "encoding_flags=strict")
		}
		if o.NoCompatFallback {
			ext = append(ext, "no_compat_fallback")
		}
	}
	if o.Hash != "" {
		ext = append(ext, "hash_alg="+o.Hash)
	}
	if o.UnsignedHash {
		ext = append(ext, "unsigned_hash")
	}
	if o.HashSeed != ([16]byte{}) {
		ext = append(ext, "hash_seed="+hex.EncodeToString(o.HashSeed[:]))
	}
	var args []string
	if len(feat) > 0 {
		args = append(args, "-O", strings.Join(feat, ","))
	}
	if len(ext) > 0 {
		args = append(args, "-E", strings.Join(ext, ","))
	}
	if o.InodesCount != 0 {
		args = append(args, "-N", strconv.FormatUint(uint64(o.InodesCount), 10))
	}
	if o.BlockSize != 0 {
		args = append(args, "-b", strconv.Itoa(o.BlockSize))
	}
	if o.UUID != ([16]byte{}) {
		u := hex.EncodeToString(o.UUID[:])
		args = append(args, "-U", u[0:8]+"-"+u[8:12]+"-"+u[12:16]+"-"+u[16:20]+"-"+u[20:])
	}
	if o.Label != "" {
		args = append(args, "-L", o.Label)
	}
	if o.FsSize != 0 {
		// In 512-byte sectors, the unit every fs-size is a multiple of.
		args = append(args, strconv.FormatInt(o.FsSize/512, 10)+"s")
	}
	return args
}

// ParseMkfsArgs reads the arguments of mkfs.ext4 that the model knows:
// -O with the features metadata_csum, dir_index, large_dir, encrypt,
// stable_inodes and casefold (a leading ^ turns one off), -E with encoding=utf8 (which turns
// casefold on, as in mke2fs), encoding_flags=strict, and -N with the inode
// count, -b with the block size (4096 only) and -U with the UUID (of a
// real image). Three -E settings are the model's own, for what mke2fs takes
// from mke2fs.conf or a host property: hash_alg=legacy|half_md4|tea (the
// [fs_types] hash_alg relation), unsigned_hash (EXT2_FLAGS_UNSIGNED_HASH,
// what mke2fs writes on a host whose char is unsigned), hash_seed=HEX (32
// hex digits, s_hash_seed) and no_compat_fallback (the superblock flag
// that stops casefolded lookups from falling back to a linear search).
// Errors name the bad argument.
func ParseMkfsArgs(args []string) (Options, error) {
	var o Options
	o.NoEncrypt = true
	var sizeArg string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			if sizeArg != "" {
				return o, fmt.Errorf("mkfs.ext4: invalid blocks '%s' on device", a)
			}
			sizeArg = a
			continue
		}
		if (a == "-O" || a == "-E" || a == "-N" || a == "-b" || a == "-U" || a == "-L" || a == "-I" || a == "-t") && i+1 >= len(args) {
			return o, fmt.Errorf("mkfs.ext4: option requires an argument -- '%s'", a[1:])
		}
		switch a {
		case "-O":
			i++
			for _, f := range strings.Split(args[i], ",") {
				off := strings.HasPrefix(f, "^")
				switch strings.TrimPrefix(f, "^") {
				case "metadata_csum":
					o.NoMetadataCsum = off
				case "dir_index":
					o.NoDirIndex = off
				case "large_dir":
					o.LargeDir = !off
				case "encrypt":
					o.NoEncrypt = off
				case "stable_inodes":
					o.StableInodes = !off
				case "casefold":
					o.Casefold = !off
				case "":
				default:
					return o, fmt.Errorf("mkfs.ext4: Invalid filesystem option set: %s", args[i])
				}
			}
		case "-E":
			i++
			for _, e := range strings.Split(args[i], ",") {
				k, v, _ := strings.Cut(e, "=")
				switch k {
				case "encoding":
					if v != "utf8" && v != "utf8-12.1" {
						return o, fmt.Errorf("mkfs.ext4: Invalid encoding: %s", v)
					}
					o.Casefold = true
				case "encoding_flags":
					if v != "strict" {
						return o, fmt.Errorf("mkfs.ext4: error: Invalid encoding flag: %s", v)
					}
					o.Strict = true
				case "no_compat_fallback":
					o.NoCompatFallback = true
				case "hash_alg":
					switch v {
					case "legacy", "half_md4", "tea":
						o.Hash = v
					default:
						return o, fmt.Errorf("mkfs.ext4: Invalid hash algorithm: %s", v)
					}
				case "unsigned_hash":
					o.UnsignedHash = true
				case "hash_seed":
					b, err := hex.DecodeString(strings.ReplaceAll(v, "-", ""))
					if err != nil || len(b) != 16 {
						return o, fmt.Errorf("mkfs.ext4: Invalid hash seed: %s", v)
					}
					copy(o.HashSeed[:], b)
				case "":
				default:
					return o, fmt.Errorf("mkfs.ext4: Bad option(s) specified: %s", e)
				}
			}
		case "-N":
			i++
			n, err := strconv.ParseUint(args[i], 10, 32)
			if err != nil || n < FirstIno {
				return o, fmt.Errorf("mkfs.ext4: invalid inodes count - %s", args[i])
			}
			o.InodesCount = uint32(n)
		case "-b":
			i++
			n, err := strconv.Atoi(args[i])
			if err != nil || n < 1024 || n > 65536 || n&(n-1) != 0 {
				return o, fmt.Errorf("mkfs.ext4: invalid block size - %s", args[i])
			}
			o.BlockSize = n
		case "-U":
			i++
			b, err := hex.DecodeString(strings.ReplaceAll(args[i], "-", ""))
			if err != nil || len(b) != 16 {
				return o, fmt.Errorf("mkfs.ext4: could not parse UUID: %s", args[i])
			}
			copy(o.UUID[:], b)
		case "-t":
			// mke2fs -t: the filesystem type; the model makes ext4.
			i++
			if args[i] != "ext4" {
				return o, fmt.Errorf("mkfs.ext4: the model makes only ext4, not %s", args[i])
			}
		case "-L":
			// mke2fs truncates a label to the 16 bytes of s_volume_name
			// with a warning; the model refuses it instead of writing
			// a warning nobody asked for.
			i++
			if len(args[i]) > 16 {
				return o, fmt.Errorf("mkfs.ext4: volume label too long: %s (16 bytes at most)", args[i])
			}
			o.Label = args[i]
		case "-I":
			// The model's inode tables hold 256-byte inodes (mke2fs's
			// default inode_size); other sizes are refused rather than
			// written wrong.
			i++
			n, err := strconv.Atoi(args[i])
			if err != nil || n < GoodOldInodeSize || n&(n-1) != 0 {
				return o, fmt.Errorf("mkfs.ext4: invalid inode size - %s", args[i])
			}
			if n != 256 {
				return o, fmt.Errorf("mkfs.ext4: the model makes only 256-byte inodes, not %d", n)
			}
		default:
			return o, fmt.Errorf("mkfs.ext4: invalid option -- '%s'", strings.TrimPrefix(a, "-"))
		}
	}
	if sizeArg != "" {
		n, ok := parseNumBlocks(sizeArg, o.BlockSize)
		if !ok {
			return o, fmt.Errorf("mkfs.ext4: invalid blocks '%s' on device", sizeArg)
		}
		o.FsSize = n
	}
	return o, nil
}

// parseNumBlocks is mke2fs's reading of its fs-size operand
// (lib/e2p/parse_num.c e2p_parse_num_blocks2, and PRS's scaling): a number
// with a K, M, G or T suffix is that many bytes' worth (binary units), s
// is 512-byte sectors, and a bare number counts blocks of the -b size, or
// KiB when -b is not given. It returns bytes.
func parseNumBlocks(arg string, blockSize int) (int64, bool) {
	num := arg
	unit := int64(1024)
	if blockSize != 0 {
		unit = int64(blockSize)
	}
	if k := len(arg) - 1; k > 0 {
		switch arg[k] {
		case 'T', 't':
			unit, num = 1<<40, arg[:k]
		case 'G', 'g':
			unit, num = 1<<30, arg[:k]
		case 'M', 'm':
			unit, num = 1<<20, arg[:k]
		case 'K', 'k':
			unit, num = 1<<10, arg[:k]
		case 's':
			unit, num = 512, arg[:k]
		}
	}
	n, err := strconv.ParseUint(num, 10, 63)
	if err != nil || n == 0 || n > uint64(1<<62)/uint64(unit) {
		return 0, false
	}
	return int64(n) * unit, true
}

// mkfs is Type.Mkfs: mkfs.ext4 with args on dev. The options are checked
// as fill_super would check the superblock, so that a bad hash algorithm
// fails here.
func mkfs(t *kernel.Task, dev *vfs.BlockDevice, args []string) error {
	o, err := ParseMkfsArgs(args)
	if err != nil {
		return err
	}
	if dev.Fixed() {
		// A real image: the layout mke2fs writes (mkfs_image.go).
		if err := mkfsImage(dev, o); err != nil {
			return err
		}
	} else if o.BlockSize != 0 && o.BlockSize != BlockSize {
		return fmt.Errorf("mkfs.ext4: the model makes only %d-byte blocks, not %d", BlockSize, o.BlockSize)
	}
	dev.SetSuper(vfs.DeviceSuper{FsType: "ext4", Features: o})
	return nil
}

// loadOptions is the start of ext4_fill_super: the features mkfs wrote on
// the device ("VFS: Can't find ext4 filesystem" and EINVAL when it holds
// none) and the mount's options (ext4_parse_param: the model's ext4 knows
// none of its own, so any option is an unknown parameter).
func loadOptions(t *kernel.Task, vsb *vfs.SuperBlock, data string) (Options, error) {
	s := vsb.Bdev().Super()
	o, ok := s.Features.(Options)
	if s.FsType != vsb.Type.Name || !ok {
		t.Printk("EXT4-fs (%s): VFS: Can't find ext4 filesystem", vsb.ID())
		return Options{}, errno.EINVAL
	}
	for _, opt := range vfs.ParseMountData(data) {
		return Options{}, vfs.UnknownParameter(t, vsb.Type, opt)
	}
	return o, nil
}
