package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/vfslab/vfslab/sim"
)

// progress shows sim.Run's phases on stderr: a progress bar when stderr is
// a terminal, one plain line per phase otherwise (a log, a CI job), and
// nothing with --quiet.
type progress struct {
	w     io.Writer
	quiet bool
	tty   bool
	bar   *progressbar.ProgressBar
	label string // prefixed to plain lines and the bar ("vfslab report: fscrypt-v1-kdf")
}

func newProgress(stderr io.Writer, quiet bool) *progress {
	p := &progress{w: stderr, quiet: quiet}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty = true
	}
	return p
}

// event is a sim.Config.OnProgress hook.
func (p *progress) event(e sim.ProgressEvent) {
	if p.quiet {
		return
	}
	if !p.tty {
		if p.label != "" {
			fmt.Fprintf(p.w, "%s: %s\n", p.label, e)
		} else {
			fmt.Fprintln(p.w, e)
		}
		return
	}
	if p.bar == nil || e.Step == 1 {
		p.done()
		p.bar = progressbar.NewOptions(e.Steps,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetWidth(30),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSpinnerType(14),
		)
	}
	desc := e.String()
	if p.label != "" {
		desc = p.label + ": " + desc
	}
	p.bar.Describe(desc)
	// A phase that starts counts as done once the next one begins; a
	// timed run is reported when it ends.
	done := e.Step - 1
	if e.Phase == sim.PhaseRun {
		done = e.Step
	}
	p.bar.Set(done)
}

// done clears the bar of the run that ended.
func (p *progress) done() {
	if p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
}
