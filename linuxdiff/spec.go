// Package linuxdiff compares what a `vfslab sh` script does on vfslab's
// simulated machine with what it does on the real Linux kernel
// (package linuxvm): standard output, standard error, exit status and
// the kernel log, each normalised for what must differ (Normalisers),
// diffed, and every difference either matched by a known difference
// (known.json, described in docs/LINUX-DIFFERENCES.md, keyed by kernel
// version) or reported as unexplained. It is `vfslab linux diff`.
package linuxdiff

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/vfslab/vfslab/linuxvm"
	"github.com/vfslab/vfslab/shell"
)

// Spec is one script and how it runs on both sides. A script says how it
// runs in its leading comment lines:
//
//	# vfslab sh --fs f2fs --seed 3 --device vdb:256M
//	# kernel: 6.12
//
// The first gives vfslab sh's options that matter to both sides ($FSTYP,
// the seed of $RANDOM and of vfslab's random source, the scratch devices'
// sizes); the second names the kernel version whose behaviour the script
// assumes, and the diff notes a run on another one.
type Spec struct {
	Path    string // as given: the script's name in every report
	Source  []byte
	Fs      string            // $FSTYP (default ext4)
	Seed    uint64            // --seed
	Devices map[string]int64  // --device DEV:SIZE ("vdb" -> bytes)
	Args    []string          // vfslab sh's options from the header, as written
	Kernel  string            // the kernel version the script assumes ("" for any)
	Params  []string          // the script's positional parameters
	extra   map[string]string // other header keys (for messages)
}

// Load reads a script and its header.
func Load(path string) (*Spec, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, src)
}

// Parse reads a script's header from its source.
func Parse(path string, src []byte) (*Spec, error) {
	s := &Spec{Path: path, Source: src, Fs: "ext4", Devices: map[string]int64{}, extra: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#!") {
			continue
		}
		if !strings.HasPrefix(line, "#") {
			break
		}
		body := strings.TrimSpace(strings.TrimPrefix(line, "#"))
		switch {
		case strings.HasPrefix(body, "vfslab sh ") || body == "vfslab sh":
			args := strings.Fields(strings.TrimPrefix(body, "vfslab sh"))
			if err := s.parseArgs(args); err != nil {
				return nil, fmt.Errorf("%s: header %q: %v", path, line, err)
			}
			s.Args = append(s.Args, args...)
		case strings.HasPrefix(body, "kernel:"):
			s.Kernel = strings.TrimSpace(strings.TrimPrefix(body, "kernel:"))
		}
	}
	return s, nil
}

// parseArgs takes vfslab sh's options from a header.
func (s *Spec) parseArgs(args []string) error {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		if !hasVal && i+1 < len(args) && (name == "--fs" || name == "--seed" || name == "--device" || name == "--patches") {
			i++
			val = args[i]
		}
		switch name {
		case "--fs":
			s.Fs = val
		case "--seed":
			n, err := strconv.ParseUint(val, 0, 64)
			if err != nil {
				return fmt.Errorf("--seed %q: %v", val, err)
			}
			s.Seed = n
		case "--device":
			dev, size, ok := strings.Cut(val, ":")
			if !ok {
				return fmt.Errorf("--device %q: want DEV:SIZE (vdb:256M)", val)
			}
			n, err := ParseSize(size)
			if err != nil {
				return fmt.Errorf("--device %q: %v", val, err)
			}
			s.Devices[strings.TrimPrefix(dev, "/dev/")] = n
		case "--patches":
			// vfslab's variants: Linux runs its own code.
		default:
			return fmt.Errorf("option %s is not one the Linux side can follow (--fs, --seed, --device, --patches)", a)
		}
	}
	return nil
}

// ParseSize reads 256M, 8G, 4096 (bytes; K, M, G, T are powers of 1024).
func ParseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"), strings.HasSuffix(s, "k"):
		mult = 1 << 10
	case strings.HasSuffix(s, "M"):
		mult = 1 << 20
	case strings.HasSuffix(s, "G"):
		mult = 1 << 30
	case strings.HasSuffix(s, "T"):
		mult = 1 << 40
	}
	num := s
	if mult != 1 {
		num = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<50)/mult {
		return 0, fmt.Errorf("size %q: want a positive number with an optional K, M, G or T", s)
	}
	return n * mult, nil
}

// Output is what one side did.
type Output struct {
	Stdout, Stderr string
	Status         int
	Dmesg          string
	// Err: the side gave no result (the guest died, the script could not
	// be read).
	Err error
}

// VfslabArgs are the vfslab sh arguments that run the script as the
// diff compares it.
func (s *Spec) VfslabArgs() []string {
	args := []string{"--as-linux"}
	args = append(args, s.Args...)
	if !hasFs(s.Args) {
		args = append(args, "--fs", s.Fs)
	}
	return append(append(args, "--", s.Path), s.Params...)
}

func hasFs(args []string) bool {
	for _, a := range args {
		if a == "--fs" || strings.HasPrefix(a, "--fs=") {
			return true
		}
	}
	return false
}

// RunVfslab runs the script in vfslab sh.
func (s *Spec) RunVfslab() Output {
	var out, errb bytes.Buffer
	st, klog := shell.Run(s.VfslabArgs(), strings.NewReader(""), &out, &errb)
	dm := strings.Join(klog, "\n")
	if dm != "" {
		dm += "\n"
	}
	return Output{Stdout: out.String(), Stderr: errb.String(), Status: st, Dmesg: dm}
}

// LinuxScript is the script as linuxvm runs it: the same environment as
// vfslab sh's (with the real /tmp), vfslab's own commands skipped.
func (s *Spec) LinuxScript() linuxvm.Script {
	env := append(shell.ScriptEnv(s.Fs, s.Seed), "TMPDIR=/tmp", "VFSLAB_OWN_SKIP=1")
	return linuxvm.Script{Name: s.Path, Source: s.Source, Args: s.Params, Env: env, Disks: s.Devices}
}

// FromLinux converts a linuxvm result.
func FromLinux(r linuxvm.Result) Output {
	return Output{Stdout: string(r.Stdout), Stderr: string(r.Stderr), Status: r.Status, Dmesg: string(r.Dmesg), Err: r.Err}
}
