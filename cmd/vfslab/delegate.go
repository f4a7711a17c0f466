package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/vfslab/vfslab/draw"
	"github.com/vfslab/vfslab/quiz"
	"github.com/vfslab/vfslab/shell"
)

// The commands whose flags, help and statuses their own packages define
// (each package's Main follows the CLI's convention: help on stdout with
// status 0, a usage error as one line with status 2): vfslab sh, quiz and
// draw. Cobra hands them their arguments unparsed.

func init() {
	extraCommands = append(extraCommands,
		delegated("sh [flags] [SCRIPT [ARGS...] | -c COMMANDS]",
			"a POSIX shell over one simulated machine: coreutils, xfs_io, fscryptctl, keyctl, mkfs, mount",
			func(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
				return shell.Main(args, stdin, stdout, stderr)
			}),
		delegated("quiz [flags]",
			"OSTEP-style exercises: predict a syscall's result, the walk, the atomics, where a name lands",
			func(args []string, _ io.Reader, stdout, stderr io.Writer) int { return quiz.Main(args, stdout, stderr) }),
		delegated("draw KIND [flags]",
			"draw live state as SVG: dentries, keys, readpath, f2fs buckets, an ext4 htree",
			func(args []string, _ io.Reader, stdout, stderr io.Writer) int { return draw.Main(args, stdout, stderr) }),
	)
}

// delegated makes a command that runs main with its arguments and ends
// with main's status.
func delegated(use, short string, main func(args []string, stdin io.Reader, stdout, stderr io.Writer) int) func() *cobra.Command {
	return func() *cobra.Command {
		return &cobra.Command{
			Use:                use,
			Short:              short,
			DisableFlagParsing: true,
			RunE: func(cmd *cobra.Command, args []string) error {
				if st := main(args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()); st != 0 {
					return &statusError{status: st}
				}
				return nil
			},
		}
	}
}
