package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"

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

// interactive is the prompt: line editing, history (kept in the host's
// state directory, never in the machine: historyPath) and completion of
// command names and of the machine's paths, with statements that continue
// over several lines.
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
	var r *interp.Runner
	histFile, hist := openHistory()
	s.history = hist
	rl, err := readline.NewEx(&readline.Config{
		Prompt:       "vfslab# ",
		AutoComplete: &machineCompleter{s: s, names: names, dir: func() string { return r.Dir }},
		Stdin:        in,
		Stdout:       stdout,
		Stderr:       stderr,
		HistoryLimit: 1000,
		HistoryFile:  histFile,
	})
	if err != nil {
		fmt.Fprintln(stderr, "vfslab sh:", err)
		return 1
	}
	defer rl.Close()
	// Commands write to the terminal directly: readline is not reading
	// while they run, and its wrapped writers race with its prompt redraw.
	r, err = s.newRunner(rootIdent, strings.NewReader(""), stdout, stderr, true)
	if err != nil {
		fmt.Fprintln(stderr, "vfslab sh:", err)
		return 1
	}
	ctx, end := s.watch(context.Background(), s.limits, stderr)
	defer end()
	r.Run(ctx, s.prelude)
	// ^C while a command runs interrupts it (SIGINT to the foreground
	// job) and the prompt comes back with status 130; at the prompt,
	// readline takes it and clears the line.
	sigint := make(chan os.Signal, 1)
	signal.Notify(sigint, os.Interrupt)
	defer signal.Stop(sigint)
	var mu sync.Mutex
	var cancelStmt context.CancelFunc
	go func() {
		for range sigint {
			mu.Lock()
			if cancelStmt != nil {
				s.m.lim.stop(stopReason{status: 130, interrupt: true})
				cancelStmt()
			}
			mu.Unlock()
		}
	}()
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
		if strings.TrimSpace(line) != "" {
			s.history = append(s.history, line)
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
		stmtCtx, cancel := context.WithCancel(ctx)
		mu.Lock()
		cancelStmt = cancel
		mu.Unlock()
		status = runRecovered(stmtCtx, r, f, rl.Stderr())
		mu.Lock()
		cancelStmt = nil
		mu.Unlock()
		cancel()
		if why := s.m.lim.reason(); why != nil {
			if !why.interrupt {
				fmt.Fprintln(rl.Stderr(), why.msg)
				return why.status
			}
			// The interrupted statement's fatal context error is not
			// an exit: the next Run starts afresh.
			fmt.Fprintln(rl.Stdout())
			status = why.status
			s.m.lim.reset()
			setStatus(ctx, r, status)
			continue
		}
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

// setStatus makes $? status, as the shell reports a foreground job that
// a signal ended (130 for SIGINT).
func setStatus(ctx context.Context, r *interp.Runner, status int) {
	f, err := syntax.NewParser().Parse(strings.NewReader(fmt.Sprintf("(exit %d)", status)), "")
	if err == nil && len(f.Stmts) == 1 {
		// A statement, not a file: a file's Run runs the EXIT trap.
		r.Run(ctx, f.Stmts[0])
	}
}
