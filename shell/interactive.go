package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/chzyer/readline"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// interpExit reports the status of an exit status error.
func interpExit(err error) (uint8, bool) {
	var es interp.ExitStatus
	ok := errors.As(err, &es)
	return uint8(es), ok
}

// interactive is the prompt: line editing, history (in memory: nothing is
// written to the host) and completion of command names, with statements
// that continue over several lines.
func (s *Shell) interactive(in *os.File, stdout, stderr io.Writer) int {
	if err := s.loadPrelude(); err != nil {
		fmt.Fprintln(stderr, "vfslab sh: prelude:", err)
		return 1
	}
	var names []string
	for n := range commands {
		if !strings.HasPrefix(n, "__") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var items []readline.PrefixCompleterInterface
	for _, n := range names {
		items = append(items, readline.PcItem(n))
	}
	rl, err := readline.NewEx(&readline.Config{
		Prompt:       "vfslab# ",
		AutoComplete: readline.NewPrefixCompleter(items...),
		Stdin:        in,
		Stdout:       stdout,
		Stderr:       stderr,
		HistoryLimit: 1000,
	})
	if err != nil {
		fmt.Fprintln(stderr, "vfslab sh:", err)
		return 1
	}
	defer rl.Close()
	// Commands write to the terminal directly: readline is not reading
	// while they run, and its wrapped writers race with its prompt redraw.
	r, err := s.newRunner(strings.NewReader(""), stdout, stderr, true)
	if err != nil {
		fmt.Fprintln(stderr, "vfslab sh:", err)
		return 1
	}
	ctx := context.Background()
	r.Run(ctx, s.prelude)
	fmt.Fprintln(rl.Stdout(), "vfslab sh: a shell on one simulated machine; 'help' lists the commands, 'exit' leaves.")
	var buf strings.Builder
	status := 0
	for {
		line, err := rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			buf.Reset()
			rl.SetPrompt("vfslab# ")
			continue
		}
		if err != nil {
			return status
		}
		buf.WriteString(line)
		buf.WriteString("\n")
		f, perr := syntax.NewParser().Parse(strings.NewReader(buf.String()), "")
		if perr != nil && syntax.IsIncomplete(perr) {
			rl.SetPrompt("> ")
			continue
		}
		buf.Reset()
		rl.SetPrompt("vfslab# ")
		if perr != nil {
			fmt.Fprintln(rl.Stderr(), perr)
			status = 2
			continue
		}
		if err := rewrite(f); err != nil {
			fmt.Fprintln(rl.Stderr(), err)
			status = 2
			continue
		}
		status = runRecovered(ctx, r, f, rl.Stderr())
		if r.Exited() {
			return status
		}
	}
}

// runRecovered runs one statement of the prompt; a panic in the
// interpreter is reported and the prompt goes on.
func runRecovered(ctx context.Context, r *interp.Runner, f *syntax.File, stderr io.Writer) (status int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "vfslab sh: internal error: %v\n", p)
			status = 70
		}
	}()
	return exitCode(r.Run(ctx, f), stderr)
}
