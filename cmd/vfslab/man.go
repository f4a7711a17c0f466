package main

import (
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

func init() {
	extraCommands = append(extraCommands, newManCmd)
}

// newManCmd is `vfslab man DIR`: the man pages of every command (section
// 1), written by cobra's doc package from the same help the commands
// print.
func newManCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "man DIR",
		Short:   "write the man pages of every command into DIR (vfslab.1, vfslab-ab.1, ...)",
		Example: `  vfslab man /tmp/man && man -l /tmp/man/vfslab-trace.1`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("want one argument, the directory to write the pages into")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return usageError{err.Error()}
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true
			// No title: each page is titled by its command's path
			// (VFSLAB-TRACE(1)), as git's pages are.
			return doc.GenManTree(root, &doc.GenManHeader{Section: "1", Source: "vfslab"}, args[0])
		},
	}
}
