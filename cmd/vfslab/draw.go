package main

import (
	"io"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/vfslab/vfslab/draw"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/teach"
	"github.com/vfslab/vfslab/vfs"
)

func init() {
	extraCommands = append(extraCommands, newDrawCmd)
}

// maxHtreeName is the longest name an ext4 dirent holds (EXT4_NAME_LEN).
const maxHtreeName = 255

// newDrawCmd is `vfslab draw KIND`: one subcommand per picture, each with
// the flags that picture takes.
func newDrawCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "draw KIND [flags] > picture.svg",
		Short: "draw live state as SVG: dentries, keys, readpath, f2fs buckets, an ext4 htree",
		Long: `Draws an SVG picture from the simulator's live state, on stdout. Each
picture boots a small machine (the one vfslab trace uses: /tmp/hello,
/tmp/dir/, /tmp/link, the encrypted /secret/ with /secret/note) or runs
the code it shows, then reads its state.`,
		Example: `  vfslab draw dentries --hold /tmp/hello --stat /tmp/missing > tree.svg
  vfslab draw keys --fs ext4 --casefold > keys.svg
  vfslab draw readpath --variant bio > readpath.svg
  vfslab draw f2fs --name report.txt --depth 4 > f2fs.svg
  vfslab draw htree --name report.txt > htree.svg`,
		RunE: needSub("picture"),
	}
	cmd.AddCommand(newDrawDentriesCmd(), newDrawKeysCmd(), newDrawReadpathCmd(), newDrawF2fsCmd(), newDrawHtreeCmd())
	return cmd
}

// drawRun wraps a picture's drawing: the SVG goes to stdout; an error is
// the simulator's (status 1).
func drawRun(draw func() (string, error)) func(cmd *cobra.Command, args []string) error {
	return func(cmd *cobra.Command, args []string) error {
		out, err := draw()
		if err != nil {
			return err
		}
		_, err = io.WriteString(cmd.OutOrStdout(), out)
		return err
	}
}

// checkDrawName refuses a --name the filesystem could not hold: empty, or
// longer than its limit (named by the kernel's constant).
func checkDrawName(name string, limit int, limitName string) error {
	if name == "" || len(name) > limit {
		return usagef("--name %q: want 1 to %d bytes (%s)", name, limit, limitName)
	}
	return nil
}

// drawFSFlags are the flags of the pictures drawn from the trace machine.
type drawFSFlags struct {
	fs   string
	cold bool
}

func (f *drawFSFlags) define(fs *pflag.FlagSet, what string) {
	choiceFlag(fs, &f.fs, "fs", teach.DefaultFS, vfs.FilesystemNames(), "the machine's root filesystem"+what)
	fs.BoolVar(&f.cold, "cold", false, "drop the unused dentries (and their inodes' keys) first, as drop_caches 3")
}

func newDrawDentriesCmd() *cobra.Command {
	var f drawFSFlags
	var noKey bool
	var hold, stat []string
	cmd := &cobra.Command{
		Use:   "dentries [flags]",
		Short: "the dentry tree of the trace machine: d_parent arrows, d_lockref counts, types (fs/dcache.c)",
		Args:  noArgs,
		RunE: drawRun(func() (string, error) {
			return draw.Dentries(teach.Config{FS: f.fs, NoKey: noKey}, f.cold, stat, hold)
		}),
	}
	fs := cmd.Flags()
	f.define(fs, "")
	fs.BoolVar(&noKey, "no-key", false, "remove /secret's key first (its names become no-key names)")
	fs.BoolVar(&noKey, "nokey", false, "the old spelling of --no-key")
	fs.MarkHidden("nokey")
	fs.StringSliceVar(&hold, "hold", nil, "paths kept open while drawing (comma-separated or repeated)")
	fs.StringSliceVar(&stat, "stat", nil, "paths to stat first: missing names leave negative dentries")
	return cmd
}

func newDrawKeysCmd() *cobra.Command {
	var f drawFSFlags
	var casefold bool
	cmd := &cobra.Command{
		Use:   "keys [flags]",
		Short: "the fscrypt key hierarchy of /secret's master key: the HKDF contexts and the keys derived for inodes set up now",
		Args:  noArgs,
		RunE:  drawRun(func() (string, error) { return draw.Keys(f.fs, f.cold, casefold) }),
	}
	fs := cmd.Flags()
	f.define(fs, " (one with fscrypt: memfs, as tmpfs, has no keys)")
	fs.BoolVar(&casefold, "casefold", false, "add a casefolded subdirectory /secret/cf (which derives a dirhash key)")
	return cmd
}

func newDrawReadpathCmd() *cobra.Command {
	var variant string
	var pages int
	variants := fscrypt.CryptoBioPatch.VariantNames()
	cmd := &cobra.Command{
		Use:   "readpath [flags]",
		Short: "the read pipeline of each crypto-bio variant (seed 003), labelled with what a real read through it counted",
		Args:  noArgs,
		RunE: drawRun(func() (string, error) {
			vs := []string{variant}
			if variant == "all" {
				vs = variants
			}
			return draw.ReadPaths(vs, pages)
		}),
	}
	fs := cmd.Flags()
	choiceFlag(fs, &variant, "variant", "all", append(slices.Clone(variants), "all"), "the crypto-bio variant to draw, or every one")
	intFlag(fs, &pages, "pages", 16, 1, 64, "4 KiB pages in the read (one bio of at most 256 KiB)")
	return cmd
}

func newDrawF2fsCmd() *cobra.Command {
	var name string
	var depth, dirLevel int
	cmd := &cobra.Command{
		Use:   "f2fs [flags]",
		Short: "an f2fs directory's bucket map and the buckets one name's lookup visits (fs/f2fs/dir.c)",
		Args:  noArgs,
		RunE: drawRun(func() (string, error) {
			if err := checkDrawName(name, f2fs.NameLen, "F2FS_NAME_LEN"); err != nil {
				return "", err
			}
			return draw.F2fsBuckets(name, uint32(depth), uint32(dirLevel)), nil
		}),
	}
	fs := cmd.Flags()
	fs.StringVar(&name, "name", "report.txt", "the name to place")
	intFlag(fs, &depth, "depth", 4, 1, 12, "the directory's current_depth (levels 0..depth-1)")
	intFlag(fs, &dirLevel, "dir-level", 0, 0, 8, "the directory's i_dir_level")
	return cmd
}

func newDrawHtreeCmd() *cobra.Command {
	var name string
	var names, perLeaf int
	cmd := &cobra.Command{
		Use:   "htree [flags]",
		Short: "an ext4 htree outline (root, leaves with hash ranges) with dx_probe's path for one name, drawn from the names' hashes",
		Args:  noArgs,
		RunE: drawRun(func() (string, error) {
			if err := checkDrawName(name, maxHtreeName, "EXT4_NAME_LEN"); err != nil {
				return "", err
			}
			return draw.Htree(name, names, perLeaf)
		}),
	}
	fs := cmd.Flags()
	fs.StringVar(&name, "name", "report.txt", "the name to place")
	intFlag(fs, &names, "names", 23, 0, 200, "other names in the directory (file000, file001, ...)")
	intFlag(fs, &perLeaf, "per-leaf", 6, 1, 50, "entries per leaf block")
	return cmd
}
