// Command vfslab runs the simulator: A/B benchmarks of kernel patch variants,
// traced syscalls, and tools that compute what the kernel would write
// (fscrypt ciphertexts, directory hashes, directory block dumps).
//
// With no arguments it runs `vfslab report`: every modelled patch's variants
// on the workload its seed measured, beside the seed's figures. Run
// `vfslab --help` for the commands and `vfslab COMMAND --help` for each
// command's flags.
//
// Every command follows one convention: help (--help, -h, `vfslab help
// CMD`) goes to stdout with status 0; a usage error (a bad flag, value,
// range or argument count, a missing required input, a size that cannot
// fit) is one line on stderr naming the flag and what it accepts, plus
// "see vfslab CMD --help", with status 2; the simulated kernel refusing
// something is status 1 with the kernel's reason; an interrupted run
// (Ctrl-C) prints what it measured and exits 130.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vfslab/vfslab/sim"

	// The filesystems the commands find by name register themselves (as
	// built-in filesystems call register_filesystem at boot).
	_ "github.com/vfslab/vfslab/ext4"
	_ "github.com/vfslab/vfslab/f2fs"
	_ "github.com/vfslab/vfslab/memfs"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(runContext(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args and returns the exit status: 0 on
// success, 1 when the simulated kernel refused or the command failed, 2
// for a usage error, 130 when interrupted.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// usageError is a bad command line (exit status 2): its message names the
// flag or argument and what it accepts.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// usagef returns a usageError.
func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// kernelError is the simulated kernel refusing (exit status 1), with the
// lines it logged on the way (fscrypt_warn and the like).
type kernelError struct {
	err error
	log []string
}

func (e *kernelError) Error() string { return e.err.Error() }
func (e *kernelError) Unwrap() error { return e.err }

// statusError ends a command with a status after it printed its output
// (a directory the checker rejects, an interrupted run).
type statusError struct {
	status int
	msg    string // printed on stderr when not empty
}

func (e *statusError) Error() string { return e.msg }

// interrupted is the status of a run stopped by Ctrl-C (128 + SIGINT).
const interrupted = 130

func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) (status int) {
	if len(args) == 0 {
		// The main job: reproduce every seed's figure.
		fmt.Fprintln(stderr, "vfslab: running 'vfslab report' (every patch's variants on its seed's workload); 'vfslab --help' lists the commands")
		args = []string{"report"}
	}
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	name := "vfslab"
	defer func() {
		// The last line of defence: a Go panic that escaped every
		// simulator boundary is one line, not a stack trace.
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "%s: internal error: %v (a bug in vfslab; please report it with the command line)\n", name, r)
			status = 1
		}
	}()
	cmd, err := root.ExecuteContextC(ctx)
	if cmd != nil {
		name = cmd.CommandPath()
	}
	return exitStatus(name, err, stderr)
}

// exitStatus prints err as the convention says and returns the status.
func exitStatus(name string, err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ue usageError
	var ce *sim.ConfigError
	var ke *kernelError
	var se *statusError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%s: %s; see %s --help\n", name, oneLine(ue.msg), name)
		return 2
	case errors.As(err, &ce):
		fmt.Fprintf(stderr, "%s: %s; see %s --help\n", name, oneLine(ce.Error()), name)
		return 2
	case errors.As(err, &se):
		if se.msg != "" {
			fmt.Fprintf(stderr, "%s: %s\n", name, se.msg)
		}
		return se.status
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(stderr, "%s: interrupted\n", name)
		return interrupted
	case errors.As(err, &ke):
		fmt.Fprintf(stderr, "%s: %s\n", name, describeErr(ke.err))
		for _, l := range ke.log {
			fmt.Fprintf(stderr, "  kernel: %s\n", l)
		}
		return 1
	}
	fmt.Fprintf(stderr, "%s: %s\n", name, describeErr(err))
	return 1
}

// oneLine keeps a message on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// newRoot builds the command tree; every run gets a fresh one, so that
// flag values never leak from one run to the next.
func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "vfslab",
		Short: "simulate the Linux kernel's filesystem layers with kernel patches as switchable variants",
		Long: `vfslab simulates the Linux kernel's filesystem layers (VFS and dcache, fscrypt
and the Crypto API, f2fs and ext4 directories) with real kernel patches as
switchable variants. With no command it runs 'vfslab report'.

Exit status: 0 on success; 1 when the simulated kernel refuses (with its
reason) or a check fails; 2 for a usage error (one line on stderr naming
the flag and what it accepts); 130 when interrupted with Ctrl-C (after
printing what was measured).`,
		Version:           version(),
		SilenceUsage:      true,
		SilenceErrors:     true,
		Args:              noArgs,
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: false},
		RunE:              func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err.Error()} })
	root.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	root.AddCommand(newReportCmd(), newABCmd(), newTraceCmd(), newCryptCmd(), newHashCmd(), newDumpCmd(), newPatchesCmd(), newLinuxCmd())
	for _, c := range extraCommands {
		root.AddCommand(c())
	}
	registerCompletions(root)
	return root
}

// extraCommands are added to the tree after the real ones (tests add a
// command that panics, to check the last line of defence).
var extraCommands []func() *cobra.Command

// version is the module's build information: its version (or "(devel)"),
// the VCS revision and time the binary was built from, and the Go
// toolchain.
func version() string {
	v := "(unknown)"
	var rev, when, modified string
	if bi, ok := debug.ReadBuildInfo(); ok {
		v = bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = ", modified"
				}
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += fmt.Sprintf(" rev %s (%s%s)", rev, when, modified)
	}
	return fmt.Sprintf("%s %s %s/%s", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// noArgs refuses positional arguments (and names the commands when the
// argument looks like a mistyped one).
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.HasSubCommands() {
		var names []string
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				names = append(names, c.Name())
			}
		}
		return usagef("unknown command %q; commands: %s", args[0], strings.Join(names, ", "))
	}
	return usagef("unexpected argument %q: %s takes none", args[0], cmd.CommandPath())
}

// exactArgs wants n positional arguments, named by what.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("want exactly %d argument(s), %s; got %d", n, what, len(args))
		}
		return nil
	}
}

// needSubcommand is the RunE of a command that only groups others.
func needSubcommand(cmd *cobra.Command, args []string) error { return needSub("subcommand")(cmd, args) }

// needSub is needSubcommand naming the subcommands as noun ("filesystem").
func needSub(noun string) func(cmd *cobra.Command, args []string) error {
	return func(cmd *cobra.Command, args []string) error {
		var names []string
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				names = append(names, c.Name())
			}
		}
		if len(args) > 0 {
			return usagef("unknown %s %q; want one of %s", noun, args[0], strings.Join(names, ", "))
		}
		return usagef("a %s is required: one of %s", noun, strings.Join(names, ", "))
	}
}

// indent prefixes every line of s with two spaces.
func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ") + "\n"
}
