// Command vfslab runs the simulator: A/B benchmarks of kernel patch variants,
// traced syscalls, and tools that compute what the kernel would write
// (fscrypt ciphertexts, directory hashes, directory block dumps).
//
// With no arguments it runs `vfslab report`: every modelled patch's variants
// on the workload its seed measured, beside the seed's figures. Run
// `vfslab --help` for the commands and `vfslab COMMAND --help` for each
// command's flags.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// command is one subcommand of vfslab.
type command struct {
	name    string
	summary string
	// run executes the command with its arguments (after the command
	// name) and returns the process exit status.
	run func(args []string, stdout, stderr io.Writer) int
}

// commands is the table of subcommands; each file that implements one adds
// itself from an init function with register.
var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("vfslab: duplicate command " + c.name)
	}
	commands[c.name] = c
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches args to a subcommand and returns the exit status: 0 on
// success, 1 when the command failed, 2 for a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		// The main job: reproduce every seed's figure.
		fmt.Fprintln(stderr, "vfslab: running 'vfslab report' (every patch's variants on its seed's workload); 'vfslab --help' lists the commands")
		return commands["report"].run(nil, stdout, stderr)
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return c.run([]string{"--help"}, stdout, stderr)
			}
		}
		usage(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "vfslab: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	return c.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprint(w, `vfslab simulates the Linux kernel's filesystem layers (VFS and dcache, fscrypt
and the Crypto API, f2fs and ext4 directories) with real kernel patches as
switchable variants.

Usage:
  vfslab COMMAND [flags] [args]

Commands:
`)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, `
Run 'vfslab COMMAND --help' for a command's flags.
`)
}

// indent prefixes every line of s with two spaces.
func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ") + "\n"
}
