package shell

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ulikunitz/xz"
	"github.com/ulikunitz/xz/lzma"

	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// cmdXz is xz(1) over github.com/ulikunitz/xz: compress (default) or
// -d decompress standard input to standard output, or each FILE to
// FILE.xz (back, with -d; -c to standard output, -k keeps the input).
// --lzma2=dict=SIZE,mf=hc4|bt4 choose the dictionary and the match
// finder (hc4 runs as the library's hash table, bt4 as its binary tree);
// the presets -0..-9 set the dictionary as xz's do; the encoder's mode,
// nice and depth settings and -T are accepted and have no counterpart
// in the library, so the output is a valid .xz stream whose size can
// differ from xz's by a little.
func cmdXz(c *cmd) int {
	decompress, toStdout, keep := c.name == "unxz", c.name == "xzcat", false
	if c.name == "xzcat" {
		decompress = true
	}
	cfg := xz.WriterConfig{DictCap: 8 << 20}
	var files []string
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		switch {
		case a == "--":
			files = append(files, c.args[i+1:]...)
			i = len(c.args)
		case a == "-T" || a == "--threads":
			i++
		case strings.HasPrefix(a, "--threads=") || strings.HasPrefix(a, "-T"):
		case strings.HasPrefix(a, "--lzma2="):
			if msg := xzFilterOpts(&cfg, strings.TrimPrefix(a, "--lzma2=")); msg != "" {
				fmt.Fprintf(c.errw, "xz: %s\n", msg)
				return 1
			}
		case a == "--decompress" || a == "--uncompress":
			decompress = true
		case a == "--compress":
			decompress = false
		case a == "--stdout" || a == "--to-stdout":
			toStdout = true
		case a == "--keep":
			keep = true
		case a == "--force" || a == "--quiet" || a == "--verbose":
		case strings.HasPrefix(a, "-") && len(a) > 1 && !strings.HasPrefix(a, "--"):
			for _, ch := range a[1:] {
				switch {
				case ch == 'd':
					decompress = true
				case ch == 'z':
					decompress = false
				case ch == 'c':
					toStdout = true
				case ch == 'k':
					keep = true
				case ch == 'f' || ch == 'q' || ch == 'v' || ch == 'e':
				case ch >= '0' && ch <= '9':
					// xz's presets: 256 KiB (-0), 1 MiB (-1), 2, 4, 4,
					// 8, 8, 16, 32, 64 MiB (-9).
					caps := []int{256 << 10, 1 << 20, 2 << 20, 4 << 20, 4 << 20, 8 << 20, 8 << 20, 16 << 20, 32 << 20, 64 << 20}
					cfg.DictCap = caps[ch-'0']
				default:
					fmt.Fprintf(c.errw, "xz: invalid option -- '%c'\nxz: Try `xz --help' for more information.\n", ch)
					return 1
				}
			}
		case strings.HasPrefix(a, "--"):
			fmt.Fprintf(c.errw, "xz: unrecognized option '%s'\nxz: Try `xz --help' for more information.\n", a)
			return 1
		default:
			files = append(files, a)
		}
	}
	// A write error (a pipe whose reader is gone) ends xz quietly, as
	// SIGPIPE ends the real one.
	var werr error
	out := writeErr{w: c.out, err: &werr}
	run := func(r io.Reader, w io.Writer) error {
		if decompress {
			xr, err := xz.NewReader(r)
			if err != nil {
				return err
			}
			_, err = io.Copy(w, xr)
			return err
		}
		xw, err := cfg.NewWriter(w)
		if err != nil {
			return err
		}
		if _, err := io.Copy(xw, r); err != nil {
			return err
		}
		return xw.Close()
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	st := 0
	for _, f := range files {
		if f == "-" {
			if err := run(c.in, out); err != nil {
				if werr == nil {
					fmt.Fprintf(c.errw, "xz: (stdin): %v\n", err)
				}
				st = 1
			}
			continue
		}
		in, err := c.openReader(f)
		if err != nil {
			fmt.Fprintf(c.errw, "xz: %s: %s\n", f, strerror(err))
			st = 1
			continue
		}
		if toStdout {
			err = run(in, out)
			in.Close()
			if werr != nil {
				return 1
			}
		} else {
			target := f + ".xz"
			if decompress {
				if !strings.HasSuffix(f, ".xz") {
					in.Close()
					fmt.Fprintf(c.errw, "xz: %s: Filename has an unknown suffix, skipping\n", f)
					st = 1
					continue
				}
				target = strings.TrimSuffix(f, ".xz")
			}
			var out *vfsFile
			out, err = c.open(target, vfs.O_WRONLY|vfs.O_CREAT|vfs.O_EXCL, 0o644)
			if err == nil {
				err = run(in, out)
				if cerr := out.Close(); err == nil {
					err = cerr
				}
			}
			in.Close()
			if err == nil && !keep {
				c.sys(fmt.Sprintf("unlink(%q)", c.abs(f)), func(t *kernel.Task, p *vfs.Proc) (int64, error) {
					return 0, p.Unlink(t, c.abs(f))
				})
			}
		}
		if err != nil {
			fmt.Fprintf(c.errw, "xz: %s: %v\n", f, strerror(err))
			st = 1
		}
	}
	return st
}

// writeErr is a writer that keeps its first error.
type writeErr struct {
	w   io.Writer
	err *error
}

func (w writeErr) Write(b []byte) (int, error) {
	n, err := w.w.Write(b)
	if err != nil && *w.err == nil {
		*w.err = err
	}
	return n, err
}

// xzFilterOpts applies --lzma2=OPTS: dict=SIZE and mf=hc4|bt4 (hc3,
// hc4 and bt2..bt4 as the library's two match finders); preset, mode,
// nice, depth, lc, lp and pb are taken as given.
func xzFilterOpts(cfg *xz.WriterConfig, opts string) string {
	for _, kv := range strings.Split(opts, ",") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "dict":
			n, ok := xzSize(v)
			if !ok || n < 4096 || n > 1536<<20 {
				return fmt.Sprintf("%s: Value out of range", kv)
			}
			cfg.DictCap = n
		case "mf":
			switch v {
			case "hc3", "hc4":
				cfg.Matcher = lzma.HashTable4
			case "bt2", "bt3", "bt4":
				cfg.Matcher = lzma.BinaryTree
			default:
				return fmt.Sprintf("%s: Invalid option value", kv)
			}
		case "preset", "mode", "nice", "depth", "lc", "lp", "pb":
		default:
			return fmt.Sprintf("%s: Invalid option name", kv)
		}
	}
	return ""
}

// xzSize reads a size with xz's KiB, MiB and GiB suffixes (k, M, G).
func xzSize(v string) (int, bool) {
	mult := 1
	for _, s := range []struct {
		suf string
		m   int
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"k", 1 << 10}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}} {
		if strings.HasSuffix(v, s.suf) {
			v, mult = strings.TrimSuffix(v, s.suf), s.m
			break
		}
	}
	n, err := strconv.Atoi(v)
	return n * mult, err == nil
}

func init() {
	for _, n := range []string{"xz", "unxz", "xzcat"} {
		commands[n] = cmdXz
	}
}
