package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/vfslab/vfslab/patch"
)

func init() {
	register(&command{
		name:    "patches",
		summary: "list the modelled kernel patches, their variants and reported figures",
		run:     runPatches,
	})
}

func runPatches(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("patches", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: vfslab patches [--json]\n\nLists every patch ID with its variants (the first is the base), the seed\nit comes from, its upstream fate and the figures it reported.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	all := patch.All()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(all); err != nil {
			fmt.Fprintln(stderr, "vfslab patches:", err)
			return 1
		}
		return 0
	}
	for _, p := range all {
		fmt.Fprintf(stdout, "%s  (seed %s)\n", p.ID, p.Seed)
		fmt.Fprintf(stdout, "  %s\n  %s, %s; %s\n", p.Subject, p.Author, p.Date, p.Fate)
		for _, v := range p.Variants {
			fmt.Fprintf(stdout, "  - %-10s %s\n", v.Name, v.Summary)
		}
		if len(p.Reported) > 0 {
			fmt.Fprintf(stdout, "  reported:\n%s", indent("  "+strings.Join(p.Reported, "\n  ")))
		}
		fmt.Fprintln(stdout)
	}
	return 0
}
