package main

import (
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/sim"
	"github.com/vfslab/vfslab/vfs"
)

// Shell completion of values (vfslab completion bash|zsh|fish|powershell):
// every flag with a fixed set of values completes them, and the
// positional arguments that name a registered thing (a workload, a
// syscall) complete its names. The values come from the registries that
// check them (the flag's own choices, vfs's filesystems, patch's patches,
// sim's workloads, trace's syscall table), never from a list kept here.

// flagCompletions are the completions of flags known by name wherever
// they appear, for the flags that take a registered thing as text.
var flagCompletions = map[string]cobra.CompletionFunc{
	"fs": func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return filesystemCompletions()
	},
	"patch":    completePatchIDs,
	"patches":  completePatchSet,
	"diff":     completePatchSet,
	"variants": completeVariants,
	"workload": completeWorkloadFlag,
	"param":    completeParam,
	// The modes fscrypt.ParseMode accepts; the kernel checks the pair.
	"contents-mode":  completeModes,
	"filenames-mode": completeModes,
	"hash-version":   completeHashVersions,
}

// completeModes completes an fscrypt encryption mode's name.
func completeModes(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, m := range fscrypt.Modes() {
		out = append(out, m.FriendlyName)
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeHashVersions completes an ext4 hash version's name.
func completeHashVersions(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return hashVersionNames(), cobra.ShellCompDirectiveNoFileComp
}

// registerCompletions gives every flag of every command below root its
// value completion: a choice flag its choices, the flags of
// flagCompletions theirs; the others (files, numbers, hex) keep the
// shell's default.
func registerCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if _, ok := c.GetFlagCompletionFunc(f.Name); ok {
				return
			}
			if fn := valueCompletion(f); fn != nil {
				c.RegisterFlagCompletionFunc(f.Name, fn)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// valueCompletion is the completion of flag f's values, nil for none.
func valueCompletion(f *pflag.Flag) cobra.CompletionFunc {
	switch v := f.Value.(type) {
	case *choiceValue:
		return cobra.FixedCompletions(v.choices, cobra.ShellCompDirectiveNoFileComp)
	case *negBool:
		return nil
	}
	return flagCompletions[f.Name]
}

// filesystemCompletions are the registered filesystems' names.
func filesystemCompletions() ([]cobra.Completion, cobra.ShellCompDirective) {
	return vfs.FilesystemNames(), cobra.ShellCompDirectiveNoFileComp
}

// completePatchIDs completes a patch ID, each with its subject.
func completePatchIDs(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, p := range patch.All() {
		out = append(out, cobra.CompletionWithDesc(p.ID, p.Subject))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completePatchSet completes the last element of a comma-separated
// id=variant list (--patches, --diff): a patch ID with its '=', or after
// the '=' the patch's variants; "base" names no change.
func completePatchSet(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	head, last := "", toComplete
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		head, last = toComplete[:i+1], toComplete[i+1:]
	}
	var out []cobra.Completion
	if id, _, ok := strings.Cut(last, "="); ok {
		if p, found := patch.Lookup(id); found {
			for _, v := range p.Variants {
				out = append(out, cobra.CompletionWithDesc(head+id+"="+v.Name, v.Summary))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
	if head == "" {
		out = append(out, cobra.CompletionWithDesc("base", "every patch at its base variant"))
	}
	for _, p := range patch.All() {
		if strings.HasPrefix(head, p.ID+"=") || strings.Contains(head, ","+p.ID+"=") {
			continue // given already
		}
		out = append(out, cobra.CompletionWithDesc(head+p.ID+"=", p.Subject))
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// completeVariants completes the last element of --variants: a variant of
// the patch --patch names or, without it, of the workload's patch (every
// patch's variants when neither is known yet).
func completeVariants(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	head := ""
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		head = toComplete[:i+1]
	}
	var ps []*patch.Patch
	if f := cmd.Flag("patch"); f != nil && f.Value.String() != "" {
		if p, ok := patch.Lookup(f.Value.String()); ok {
			ps = []*patch.Patch{p}
		}
	} else if w := workloadOf(cmd, args); w != nil && w.Patch != nil {
		ps = []*patch.Patch{w.Patch}
	}
	if ps == nil {
		ps = patch.All()
	}
	var out []cobra.Completion
	for _, p := range ps {
		for _, v := range p.Variants {
			c := cobra.CompletionWithDesc(head+v.Name, p.ID+": "+v.Summary)
			if !slices.ContainsFunc(out, func(o cobra.Completion) bool { return strings.HasPrefix(o, head+v.Name+"\t") }) {
				out = append(out, c)
			}
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// workloadOf is the workload a command line names so far (--workload or
// the first argument), nil when none or an unknown one.
func workloadOf(cmd *cobra.Command, args []string) *sim.Workload {
	name := ""
	if f := cmd.Flag("workload"); f != nil {
		name = f.Value.String()
	}
	if name == "" && len(args) > 0 {
		name = args[0]
	}
	if name == "" {
		return nil
	}
	w, err := sim.Lookup(name)
	if err != nil {
		return nil
	}
	return w
}

// workloadCompletions are the registered workloads, each with its summary.
func workloadCompletions() ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, w := range sim.Workloads() {
		out = append(out, cobra.CompletionWithDesc(w.Name, w.Summary))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

func completeWorkloadFlag(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return workloadCompletions()
}

// completeWorkloadArg is ab's positional argument: a workload, unless
// --workload named it already.
func completeWorkloadArg(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 || (cmd.Flag("workload") != nil && cmd.Flag("workload").Changed) {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return workloadCompletions()
}

// completeParam completes --param name=value: the workload's parameter
// names, then the words a parameter accepts.
func completeParam(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	w := workloadOf(cmd, args)
	if w == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	if name, _, ok := strings.Cut(toComplete, "="); ok {
		for _, p := range w.Params {
			if p.Name == name {
				for _, word := range p.Range.Words {
					out = append(out, name+"="+word)
				}
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	for _, p := range w.Params {
		out = append(out, cobra.CompletionWithDesc(p.Name+"=", p.Help))
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// traceSyscalls are the syscalls trace runs, from its table.
func traceSyscalls() []string {
	names := make([]string, 0, len(traceArity))
	for n := range traceArity {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// completeTraceArgs is trace's positional arguments: the syscall first
// (after --diff A, the variant set B first), then the shell's default
// (the paths are the trace machine's, which the help lists).
func completeTraceArgs(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if f := cmd.Flag("diff"); f != nil && f.Changed {
		if len(args) == 0 {
			return completePatchSet(cmd, args, toComplete)
		}
		args = args[1:]
	}
	if len(args) == 0 {
		return traceSyscalls(), cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}
