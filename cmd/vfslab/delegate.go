package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/vfslab/vfslab/shell"
)

// The commands whose flags, help and statuses their own packages define
// (the package's Main follows the CLI's convention: help on stdout with
// status 0, a usage error as one line with status 2): vfslab sh. Cobra
// hands it its arguments unparsed.

func init() {
	extraCommands = append(extraCommands,
		delegated("sh [flags] [SCRIPT [ARGS...] | -c COMMANDS]",
			"a POSIX shell over one simulated machine: coreutils, xfs_io, fscryptctl, keyctl, mkfs, mount",
			func(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
				return shell.Main(args, stdin, stdout, stderr)
			}),
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
