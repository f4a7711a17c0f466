package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vfslab/vfslab/patch"
)

// jsonPatch is a patch as `vfslab patches --json` prints it: snake_case
// keys, as every JSON output of vfslab.
type jsonPatch struct {
	ID       string        `json:"id"`
	Seed     string        `json:"seed"`
	Subject  string        `json:"subject"`
	Author   string        `json:"author"`
	Date     string        `json:"date"`
	Fate     string        `json:"fate"`
	Files    []string      `json:"files"`
	Reported []string      `json:"reported"`
	Variants []jsonVariant `json:"variants"`
}

type jsonVariant struct {
	Name    string `json:"name"`
	Summary string `json:"summary"`
}

func newPatchesCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "patches [--json]",
		Short: "list the modelled kernel patches, their variants and reported figures",
		Long: `Lists every patch ID with its variants (the first is the base), the seed
it comes from, its upstream fate and the figures it reported.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			stdout := cmd.OutOrStdout()
			all := patch.All()
			if asJSON {
				out := []jsonPatch{}
				for _, p := range all {
					jp := jsonPatch{ID: p.ID, Seed: p.Seed, Subject: p.Subject, Author: p.Author, Date: p.Date,
						Fate: p.Fate, Files: p.Files, Reported: p.Reported, Variants: []jsonVariant{}}
					for _, v := range p.Variants {
						jp.Variants = append(jp.Variants, jsonVariant{v.Name, v.Summary})
					}
					out = append(out, jp)
				}
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
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
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (snake_case keys) instead of text")
	return cmd
}
