package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/vfslab/vfslab/sim"
)

// progress shows sim.Run's phases on stderr: a progress bar when stderr is
// a terminal, one plain line per phase otherwise (a log, a CI job), and
// nothing with --quiet. A phase that lasts (the setup of a large lookup
// directory, a long timed run) is never silent: the bar's clock ticks
// every second, and a plain "still ..." line follows every stillEvery.
type progress struct {
	w     io.Writer
	quiet bool
	tty   bool
	label string // prefixed to plain lines and the bar ("vfslab report: fscrypt-v1-kdf")

	mu    sync.Mutex
	bar   *progressbar.ProgressBar
	cur   string    // the phase in progress, as shown
	since time.Time // when it started
	stop  chan struct{}
}

// stillEvery is how long a phase runs before a plain line says it still
// does (tests shorten it).
var stillEvery = 30 * time.Second

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
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stop == nil {
		p.stop = make(chan struct{})
		go p.tick(p.stop)
	}
	desc := e.String()
	if p.label != "" {
		desc = p.label + ": " + desc
	}
	p.cur, p.since = desc, time.Now()
	if !p.tty {
		fmt.Fprintln(p.w, desc)
		return
	}
	if p.bar == nil || e.Step == 1 {
		if p.bar != nil {
			p.bar.Finish()
		}
		p.bar = progressbar.NewOptions(e.Steps,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetWidth(30),
			progressbar.OptionClearOnFinish(),
		)
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

// tick keeps a long phase visible until stop is closed.
func (p *progress) tick(stop chan struct{}) {
	every := time.Second
	if !p.tty {
		every = stillEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			p.mu.Lock()
			switch {
			case p.tty && p.bar != nil:
				p.bar.Add(0) // redraw: the clock moves
			case !p.tty && p.cur != "" && time.Since(p.since) >= stillEvery:
				fmt.Fprintf(p.w, "%s: still running after %s\n", p.cur, time.Since(p.since).Round(time.Second))
			}
			p.mu.Unlock()
		}
	}
}

// done clears the bar of the run that ended and stops the ticker.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stop != nil {
		close(p.stop)
		p.stop = nil
	}
	if p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
	p.cur = ""
}
